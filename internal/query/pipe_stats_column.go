package query

import (
	"fmt"
	"math"
)

// statsColumn is one stats function's state for every group of a statsProc,
// indexed by group.
type statsColumn interface {
	// grow makes room for groups [0, n).
	grow(n int)
	update(g int, r *Row)
	// merge folds group og of o (the same function of another worker)
	// into group g.
	merge(g int, o statsColumn, og int)
	result(g int) string
	// addRows adds n rows that have no fields (the count-only fast path).
	addRows(g int, n int64)
}

// newStatsColumn compiles f, a function of st, into a column: flat numeric
// slices for the simple functions, state objects per group for the rest.
// The newColumn of f's entry in getStatsFuncDefs builds it.
func newStatsColumn(p *plan, st *PipeStats, f StatsFunc, mem *memTracker) (statsColumn, error) {
	fields := f.Fields
	if len(fields) == 1 && fields[0] == "*" {
		fields = nil
	}
	def, ok := getStatsFuncDefs()[f.Name]
	if !ok {
		return nil, fmt.Errorf("stats function %q is not supported by spate", f.Name)
	}
	return def.newColumn(p, st, f, fields, mem)
}

func newCountColumn(_ *plan, _ *PipeStats, _ StatsFunc, fields []string, _ *memTracker) (statsColumn, error) {
	return &countColumn{fields: fields}, nil
}

func newCountEmptyColumn(_ *plan, _ *PipeStats, _ StatsFunc, fields []string, _ *memTracker) (statsColumn, error) {
	return &countColumn{fields: fields, empty: true}, nil
}

func newRateColumn(p *plan, st *PipeStats, f StatsFunc, _ []string, _ *memTracker) (statsColumn, error) {
	// Per second of a _time bucket, else of the query's time range (as
	// VictoriaLogs' initRateFuncsFromTimeBucket).
	for _, b := range st.By {
		if b.Name == "_time" && b.BucketNs > 0 {
			return &countColumn{rate: float64(b.BucketNs) / 1e9}, nil
		}
	}
	secs := float64(p.timeMax-p.timeMin+1) / 1e9
	if !p.hasTimeRange || p.timeMax == math.MaxInt64 || p.timeMin == math.MinInt64 || secs <= 0 {
		return nil, fmt.Errorf("cannot compute %s: the query's _time filter must have both bounds", f.Result)
	}
	return &countColumn{rate: secs}, nil
}

func newSumLenColumn(_ *plan, _ *PipeStats, _ StatsFunc, fields []string, _ *memTracker) (statsColumn, error) {
	return &countColumn{fields: fields, sumLen: true}, nil
}

// newSumColumn compiles sum and avg.
func newSumColumn(_ *plan, _ *PipeStats, f StatsFunc, fields []string, _ *memTracker) (statsColumn, error) {
	return &sumColumn{fields: fields, avg: f.Name == "avg"}, nil
}

// countColumn implements count, count_empty, rate and sum_len.
type countColumn struct {
	fields []string
	empty  bool    // count_empty: rows where every field is empty
	rate   float64 // rate: seconds of the _time bucket or the query's time range
	sumLen bool    // sum_len: total bytes of the values
	n      []int64
}

func (c *countColumn) grow(n int) {
	for len(c.n) < n {
		c.n = append(c.n, 0)
	}
}

func (c *countColumn) update(g int, r *Row) {
	switch {
	case c.sumLen:
		eachValue(r, c.fields, func(v string) { c.n[g] += int64(len(v)) })
	case c.empty:
		for _, f := range c.fields {
			if r.Get(f) != "" {
				return
			}
		}
		c.n[g]++
	case len(c.fields) == 0:
		c.n[g]++
	default:
		for _, f := range c.fields {
			if r.Get(f) != "" {
				c.n[g]++
				return
			}
		}
	}
}

func (c *countColumn) addRows(g int, n int64) {
	if !c.sumLen && (len(c.fields) == 0 || c.empty) {
		c.n[g] += n
	}
}

func (c *countColumn) merge(g int, o statsColumn, og int) { c.n[g] += o.(*countColumn).n[og] }

func (c *countColumn) result(g int) string {
	if c.rate > 0 {
		return formatNumber(float64(c.n[g]) / c.rate)
	}
	return formatNumber(float64(c.n[g]))
}

// sumColumn implements sum and avg over the values that parse as numbers.
type sumColumn struct {
	fields []string
	avg    bool
	sum    []float64
	n      []int64 // numbers seen
}

func (c *sumColumn) grow(n int) {
	for len(c.sum) < n {
		c.sum = append(c.sum, 0)
		c.n = append(c.n, 0)
	}
}

func (c *sumColumn) update(g int, r *Row) {
	if len(c.fields) == 1 {
		// Fast path: one field, no closure.
		if v, ok := parseNumber(r.Get(c.fields[0])); ok {
			c.sum[g] += v
			c.n[g]++
		}
		return
	}
	eachValue(r, c.fields, func(s string) {
		if v, ok := parseNumber(s); ok {
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

func (c *sumColumn) result(g int) string {
	if c.n[g] == 0 {
		return "NaN"
	}
	if c.avg {
		return formatNumber(c.sum[g] / float64(c.n[g]))
	}
	return formatNumber(c.sum[g])
}

// stateColumn keeps one state object per group.
type stateColumn struct {
	newFunc func() statsState
	states  []statsState
}

func (c *stateColumn) grow(n int) {
	for len(c.states) < n {
		c.states = append(c.states, c.newFunc())
	}
}

func (c *stateColumn) update(g int, r *Row) { c.states[g].update(r) }
func (c *stateColumn) addRows(int, int64)   {}
func (c *stateColumn) merge(g int, o statsColumn, og int) {
	c.states[g].merge(o.(*stateColumn).states[og])
}
func (c *stateColumn) result(g int) string { return c.states[g].result() }
