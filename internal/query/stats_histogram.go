package query

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"sync"
)

// This file holds histogram, VictoriaLogs' counts of a field's numbers in
// the log-scale buckets of VictoriaMetrics' metrics.Histogram (module
// github.com/VictoriaMetrics/metrics v1.44.0, which VictoriaLogs v1.52.1
// uses): 18 buckets per decade from 1e-9 to 1e18, one bucket below
// ("0...1.000e-09": zero and smaller numbers) and one above
// ("1.000e+18...+Inf").

const (
	histMinExp        = -9 // the first bucket starts at 10^histMinExp
	histMaxExp        = 18 // the last one ends at 10^histMaxExp
	histPerDecade     = 18
	histDecades       = histMaxExp - histMinExp
	histBuckets       = histDecades * histPerDecade
	histLowerRange    = "0...1.000e-09"
	histUpperRange    = "1.000e+18...+Inf"
	histLowerIndex    = -1          // bucketIndex of the bucket below
	histUpperIndex    = histBuckets // bucketIndex of the bucket above
	histMaxEncodedIdx = histBuckets + 1
)

// parseHistogramArgs parses the one field of histogram (VictoriaLogs
// refuses none, several, "*" and patterns).
func (p *parser) parseHistogramArgs(sf *StatsFunc, args []string, argsPos int) error {
	if len(args) != 1 || isPattern(args[0]) {
		return p.errorHint(argsPos, "for example: histogram(duration)", "histogram() takes exactly one field name")
	}
	sf.Fields = args
	return nil
}

// newHistogramColumn compiles histogram.
func newHistogramColumn(_ *plan, _ *PipeStats, f StatsFunc, _ []string, _ *memTracker) (statsColumn, error) {
	return &stateColumn{newFunc: func() statsState { return &histogramState{field: f.Fields[0]} }}, nil
}

// histogramState counts the numbers (anyNumber: decimals, durations, byte
// sizes, hex, ...) of one field per bucket; negative numbers and NaN are
// not counted. Decades are allocated when first hit.
type histogramState struct {
	field        string
	lower, upper uint64
	decades      [histDecades]*[histPerDecade]uint64
}

// histBucket returns the bucket of the non-negative, non-NaN number v, as
// metrics.Histogram.Update picks it: histLowerIndex, histUpperIndex or
// the index of a log-scale bucket; a power of ten ends the bucket below
// it (the bounds are "le", as in Prometheus).
func histBucket(v float64) int {
	x := (math.Log10(v) - histMinExp) * histPerDecade
	switch {
	case x < 0:
		return histLowerIndex
	case x >= histBuckets:
		return histUpperIndex
	}
	i := uint(x)
	if x == float64(i) && i > 0 {
		i--
	}
	return int(i)
}

func (s *histogramState) update(r *Row) {
	v, ok := anyNumber(r.Get(s.field))
	if !ok || math.IsNaN(v) || v < 0 {
		return
	}
	s.add(histBucket(v), 1)
}

// add adds n hits to bucket i (histBucket's numbering).
func (s *histogramState) add(i int, n uint64) {
	switch i {
	case histLowerIndex:
		s.lower += n
	case histUpperIndex:
		s.upper += n
	default:
		d := s.decades[i/histPerDecade]
		if d == nil {
			d = new([histPerDecade]uint64)
			s.decades[i/histPerDecade] = d
		}
		d[i%histPerDecade] += n
	}
}

// each calls fn with every bucket that has hits, in index order.
func (s *histogramState) each(fn func(i int, n uint64)) {
	if s.lower > 0 {
		fn(histLowerIndex, s.lower)
	}
	for di, d := range s.decades {
		if d == nil {
			continue
		}
		for j, n := range d {
			if n > 0 {
				fn(di*histPerDecade+j, n)
			}
		}
	}
	if s.upper > 0 {
		fn(histUpperIndex, s.upper)
	}
}

func (s *histogramState) merge(o statsState) {
	o.(*histogramState).each(s.add)
}

// result prints the buckets with hits as VictoriaLogs does:
// [{"vmrange":"1.896e+00...2.154e+00","hits":2},...], ordered by their
// vmrange text compared naturally (so "e+" sorts before "e-"); "[]" when
// no number was seen.
func (s *histogramState) result() string {
	type hit struct {
		vmrange string
		n       uint64
	}
	var hits []hit
	s.each(func(i int, n uint64) { hits = append(hits, hit{histRange(i), n}) })
	slices.SortFunc(hits, func(a, b hit) int { return naturalCompare(a.vmrange, b.vmrange) })
	b := []byte{'['}
	for i, h := range hits {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"vmrange":"`...)
		b = append(b, h.vmrange...)
		b = append(b, `","hits":`...)
		b = strconv.AppendUint(b, h.n, 10)
		b = append(b, '}')
	}
	return string(append(b, ']'))
}

var (
	histRanges     [histBuckets]string
	histRangesOnce sync.Once
)

// histRange returns the "start...end" text of bucket i. The bounds are
// those of metrics.Histogram: 1e-9 multiplied by 10^(1/18) once per
// bucket (so they carry its rounding), printed as %.3e.
func histRange(i int) string {
	switch i {
	case histLowerIndex:
		return histLowerRange
	case histUpperIndex:
		return histUpperRange
	}
	histRangesOnce.Do(func() {
		mul := math.Pow(10, 1.0/histPerDecade)
		v := math.Pow10(histMinExp)
		start := strconv.FormatFloat(v, 'e', 3, 64)
		for j := range histRanges {
			v *= mul
			end := strconv.FormatFloat(v, 'e', 3, 64)
			histRanges[j] = start + "..." + end
			start = end
		}
	})
	return histRanges[i]
}

// appendState writes the buckets with hits: their count, then each
// bucket's index+1 (0: below, histBuckets+1: above) and hits.
func (s *histogramState) appendState(dst []byte) []byte {
	n := 0
	s.each(func(int, uint64) { n++ })
	dst = binary.AppendUvarint(dst, uint64(n))
	s.each(func(i int, c uint64) {
		dst = binary.AppendUvarint(binary.AppendUvarint(dst, uint64(i+1)), c)
	})
	return dst
}

func (s *histogramState) decodeState(src []byte) error {
	r := stateReader{b: src}
	n := r.count()
	for range n {
		i, c := r.uvarint(), r.uvarint()
		if r.err != nil {
			break
		}
		if i > histMaxEncodedIdx {
			return errPartialFormat
		}
		s.add(int(i)-1, c)
	}
	return r.end()
}
