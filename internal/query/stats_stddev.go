package query

import (
	"encoding/binary"
	"math"
)

// newStddevColumn compiles stddev.
func newStddevColumn(_ *plan, _ *PipeStats, _ StatsFunc, fields []string, _ *memTracker) (statsColumn, error) {
	return &stddevColumn{fields: fields}, nil
}

// stddevColumn implements stddev, the population standard deviation of the
// values that are plain decimals (VictoriaLogs' tryParseFloat64: "1_000",
// "-0.5", not "1e3", "1.5s" or "0x1F", unlike sum), kept as a running mean
// and sum of squared deviations (Welford; groups merge as ClickHouse's
// varPop does, as VictoriaLogs does). A group without numbers is NaN.
type stddevColumn struct {
	fields []string
	avg    []float64
	q      []float64 // sum of squared deviations from avg
	n      []float64 // numbers seen
}

func (c *stddevColumn) grow(n int) {
	c.avg = growZero(c.avg, n)
	c.q = growZero(c.q, n)
	c.n = growZero(c.n, n)
}

func (c *stddevColumn) add(g int, f float64) {
	delta := f - c.avg[g]
	n := c.n[g] + 1
	avg := c.avg[g] + delta/n
	c.q[g] += delta * (f - avg)
	c.avg[g], c.n[g] = avg, n
}

func (c *stddevColumn) update(g int, r *Row) {
	if len(c.fields) == 1 && !isPattern(c.fields[0]) {
		// Fast path: one field, no closure.
		if f, ok := parseDecimalLit(r.Get(c.fields[0])); ok {
			c.add(g, f)
		}
		return
	}
	eachValue(r, c.fields, func(s string) {
		if f, ok := parseDecimalLit(s); ok {
			c.add(g, f)
		}
	})
}

func (c *stddevColumn) addRows(int, int64) {}

// mergeParts folds the state (avg, q, n) of other rows into group g.
func (c *stddevColumn) mergeParts(g int, avg, q, n float64) {
	total := c.n[g] + n
	if total == 0 {
		return
	}
	delta := avg - c.avg[g]
	c.q[g] += q + delta*delta*(c.n[g]*n)/total
	c.avg[g] = (c.n[g]*c.avg[g] + n*avg) / total
	c.n[g] = total
}

func (c *stddevColumn) merge(g int, o statsColumn, og int) {
	oc := o.(*stddevColumn)
	c.mergeParts(g, oc.avg[og], oc.q[og], oc.n[og])
}

// number is result's value before formatting (numericColumn); NaN, for a
// group without numbers, is not one.
func (c *stddevColumn) number(g int) (float64, bool) {
	if c.n[g] == 0 {
		return 0, false
	}
	return math.Sqrt(c.q[g] / c.n[g]), true
}

func (c *stddevColumn) result(g int) string {
	if c.n[g] == 0 {
		return "NaN"
	}
	return formatNumber(math.Sqrt(c.q[g] / c.n[g]))
}

// The spill and partial encoding of a group: the float64 bits of avg, q
// and n.

func (c *stddevColumn) appendSpill(dst []byte, g int) []byte {
	dst = appendFloat(dst, c.avg[g])
	dst = appendFloat(dst, c.q[g])
	return appendFloat(dst, c.n[g])
}

func (c *stddevColumn) readSpill(g int, src []byte) ([]byte, error) {
	if len(src) < 24 {
		return nil, errSpillFormat
	}
	f := func(i int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:])) }
	avg, q, n := f(0), f(1), f(2)
	if !(n >= 0) {
		return nil, errSpillFormat
	}
	c.mergeParts(g, avg, q, n)
	return src[24:], nil
}

func (c *stddevColumn) appendState(dst []byte, g int) []byte { return c.appendSpill(dst, g) }
func (c *stddevColumn) mergeState(g int, src []byte) error {
	rest, err := c.readSpill(g, src)
	if err == nil && len(rest) > 0 {
		err = errPartialFormat
	}
	return err
}

func (c *stddevColumn) reset()          { c.avg, c.q, c.n = c.avg[:0], c.q[:0], c.n[:0] }
func (c *stddevColumn) memBytes() int64 { return 24 * int64(len(c.n)) }
