package query

import "testing"

// BenchmarkAppendNumber formats stats results: integer sums and counts
// (the AppendInt fast path) and fractional averages (strconv's shortest
// formatting).
func BenchmarkAppendNumber(b *testing.B) {
	for _, bc := range []struct {
		name string
		f    float64
	}{{"integer", 1234567890123}, {"fraction", 1234.5678901}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf = appendNumber(buf[:0], bc.f)
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

// BenchmarkFormatNumber is appendNumber as a string: one allocation for
// the result.
func BenchmarkFormatNumber(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		benchString = formatNumber(1234567890123)
	}
	b.SetBytes(int64(len(benchString)))
}

var benchString string
