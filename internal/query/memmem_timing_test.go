package query

import (
	"bytes"
	"fmt"
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

// BenchmarkCandScan walks every prefilter candidate of generated logs, as
// scanLiteral does, with the kernel this CPU selects; sizes in and out of
// cache.
func BenchmarkCandScan(b *testing.B) {
	for _, size := range []int{256 << 10, 16 << 20} {
		data := benchData(b, int64(size))
		for _, lit := range []string{"error", "timeout", "errorq", "timeoutq"} {
			c := newCandFinder([]byte(lit), []byte(`\u`))
			b.Run(fmt.Sprintf("%s/%dKiB", lit, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				var s candScan
				for b.Loop() {
					s.reset(c, data)
					n := 0
					for pos := 0; ; {
						q := s.find(pos)
						if q < 0 {
							break
						}
						n++
						pos = q + 1
					}
					benchSink = n
				}
			})
		}
	}
}

// BenchmarkCountLines compares the line count of the count-only fast path,
// with each kernel, against bytes.Count of newlines (the baseline `spate
// bench io` uses, which cannot tell empty lines apart).
func BenchmarkCountLines(b *testing.B) {
	data := benchData(b, 16<<20)
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	for _, vec := range []bool{false, true} {
		if vec && !saved {
			continue
		}
		name := map[bool]string{false: "portable", true: "avx2"}[vec]
		b.Run(name, func(b *testing.B) {
			useAVX2 = vec
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				benchSink = int(countLogLines(data))
			}
		})
	}
	if saved {
		// The exact kernel alone over the whole input: what countLinesVec
		// falls back to for blocks with empty lines or CRLF.
		b.Run("avx2-exact", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			k := (len(data) - 64) &^ 63
			for b.Loop() {
				benchSink = countLinesAVX2(&data[64], k)
			}
		})
		// CRLF line ends flag every block: both passes, the worst case.
		crlf := bytes.ReplaceAll(data, []byte{'\n'}, []byte("\r\n"))
		b.Run("avx2-crlf", func(b *testing.B) {
			b.SetBytes(int64(len(crlf)))
			b.ReportAllocs()
			for b.Loop() {
				benchSink = int(countLogLines(crlf))
			}
		})
	}
	b.Run("bytes.Count", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			benchSink = bytes.Count(data, []byte{'\n'})
		}
	})
}
