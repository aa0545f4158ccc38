package query

// This file holds sum, avg and rate_sum, which share sumColumn. Its spill encoding is
// in pipe_stats_spill.go, beside countColumn's.

// newSumColumn compiles sum and avg.
func newSumColumn(_ *plan, _ *PipeStats, f StatsFunc, fields []string, _ *memTracker) (statsColumn, error) {
	return &sumColumn{fields: fields, avg: f.Name == "avg"}, nil
}

// sumColumn implements sum, avg and rate_sum over the values that parse
// as numbers.
type sumColumn struct {
	fields []string
	avg    bool
	rate   float64 // rate_sum: seconds of the _time bucket or the query's time range
	sum    []float64
	n      []int64 // numbers seen
}

func (c *sumColumn) grow(n int) {
	c.sum = growZero(c.sum, n)
	c.n = growZero(c.n, n)
}

func (c *sumColumn) update(g int, r *Row) {
	if len(c.fields) == 1 && !isPattern(c.fields[0]) {
		// Fast path: one field, no closure.
		if v, ok := anyNumber(r.Get(c.fields[0])); ok {
			c.sum[g] += v
			c.n[g]++
		}
		return
	}
	eachValue(r, c.fields, func(s string) {
		if v, ok := anyNumber(s); ok {
			c.sum[g] += v
			c.n[g]++
		}
	})
}

func (c *sumColumn) addRows(int, int64) {}

func (c *sumColumn) merge(g int, o statsColumn, og int) {
	oc := o.(*sumColumn)
	c.sum[g] += oc.sum[og]
	c.n[g] += oc.n[og]
}

// number is result's value before formatting (numericColumn); NaN, for a
// group without numbers, is not one.
func (c *sumColumn) number(g int) (float64, bool) {
	if c.n[g] == 0 {
		return 0, false
	}
	if c.avg {
		return c.sum[g] / float64(c.n[g]), true
	}
	if c.rate > 0 {
		return c.sum[g] / c.rate, true
	}
	return c.sum[g], true
}

func (c *sumColumn) result(g int) string {
	if c.n[g] == 0 {
		return "NaN"
	}
	f, _ := c.number(g)
	return formatNumber(f)
}
