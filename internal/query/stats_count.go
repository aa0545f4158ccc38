package query

// This file holds countColumn, the one column of count, count_empty,
// sum_len and rate (whose parsing and compiling are in stats_rate.go): the
// four differ only in what a row adds, so they share one flat column of
// int64s. Its spill encoding is in pipe_stats_spill.go, beside sumColumn's.

// newCountColumn compiles count.
func newCountColumn(_ *plan, _ *PipeStats, _ StatsFunc, fields []string, _ *memTracker) (statsColumn, error) {
	return &countColumn{fields: fields}, nil
}

// newCountEmptyColumn compiles count_empty.
func newCountEmptyColumn(_ *plan, _ *PipeStats, _ StatsFunc, fields []string, _ *memTracker) (statsColumn, error) {
	return &countColumn{fields: fields, empty: true}, nil
}

// newSumLenColumn compiles sum_len.
func newSumLenColumn(_ *plan, _ *PipeStats, _ StatsFunc, fields []string, _ *memTracker) (statsColumn, error) {
	return &countColumn{fields: fields, sumLen: true}, nil
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
	c.n = growZero(c.n, n)
}

func (c *countColumn) update(g int, r *Row) {
	switch {
	case c.sumLen:
		eachValue(r, c.fields, func(v string) { c.n[g] += int64(len(v)) })
	case c.empty:
		if !anyValue(r, c.fields) {
			c.n[g]++
		}
	case len(c.fields) == 0:
		c.n[g]++
	default:
		if anyValue(r, c.fields) {
			c.n[g]++
		}
	}
}

func (c *countColumn) addRows(g int, n int64) {
	if !c.sumLen && (len(c.fields) == 0 || c.empty) {
		c.n[g] += n
	}
}

func (c *countColumn) merge(g int, o statsColumn, og int) { c.n[g] += o.(*countColumn).n[og] }

// number is result's value before formatting (numericColumn).
func (c *countColumn) number(g int) (float64, bool) {
	if c.rate > 0 {
		return float64(c.n[g]) / c.rate, true
	}
	return float64(c.n[g]), true
}

func (c *countColumn) result(g int) string {
	if c.rate > 0 {
		return formatNumber(float64(c.n[g]) / c.rate)
	}
	return formatNumber(float64(c.n[g]))
}
