package query

import (
	"bytes"
	"testing"
)

// BenchmarkFinder compares the pair-probe finder with bytes.Index for
// literals whose first byte is common in log text, over generated logs,
// counting every occurrence.
func BenchmarkFinder(b *testing.B) {
	data := benchData(b, 4<<20)
	for _, lit := range []string{"error", "timeout", `"level":"error"`, "cache miss"} {
		f := newFinder([]byte(lit))
		b.Run("finder/"+lit, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				d, n := data, 0
				for {
					i := f.index(d)
					if i < 0 {
						break
					}
					n++
					d = d[i+1:]
				}
				benchSink = n
			}
		})
		b.Run("bytes.Index/"+lit, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				d, n := data, 0
				for {
					i := bytes.Index(d, []byte(lit))
					if i < 0 {
						break
					}
					n++
					d = d[i+1:]
				}
				benchSink = n
			}
		})
	}
}

var benchSink int
