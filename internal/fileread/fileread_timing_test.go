package fileread

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// benchFile is a 64 MiB NDJSON-like file shared by the benchmarks, made once
// per test binary run.
var benchFile = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "spate-fileread-bench")
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	for i := 0; b.Len() < 64<<20; i++ {
		fmt.Fprintf(&b, `{"ts":"2026-01-01T00:00:%02d.%03dZ","level":"info","service":"svc-%d","msg":"request %d done in %d ms","status":%d}`+"\n",
			i%60, i%1000, i%20, i, i%997, 200+i%5)
	}
	p := filepath.Join(dir, "bench.ndjson")
	return p, os.WriteFile(p, b.Bytes(), 0o644)
})

func mustBenchFile(b *testing.B) (string, int64) {
	b.Helper()
	p, err := benchFile()
	if err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	return p, fi.Size()
}

var sinkLines atomic.Int64

// BenchmarkScan counts lines (touching every byte) with each strategy and
// worker count, on a warm page cache.
func BenchmarkScan(b *testing.B) {
	p, size := mustBenchFile(b)
	for _, s := range []Strategy{Mmap, Pread, Bufio, Stream} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("strategy=%s/workers=%d", s, workers), func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					var lines atomic.Int64
					_, err := Scan(context.Background(), []string{p}, Config{Strategy: s, Workers: workers}, func(_ int, c *Chunk) error {
						lines.Add(int64(CountLines(c.Data)))
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
					sinkLines.Store(lines.Load())
				}
			})
		}
	}
}

// BenchmarkLinesSliceVsCopy compares handing each line on as a slice of the
// chunk (zero-copy) with copying it into a reused buffer and with allocating
// a copy per line, as the write-ups' zero-copy section does.
func BenchmarkLinesSliceVsCopy(b *testing.B) {
	p, size := mustBenchFile(b)
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	consume := func(line []byte) int { return len(line) + int(line[len(line)-1]) }
	b.Run("slice", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for rest := data; len(rest) > 0; {
				var line []byte
				line, rest = NextLine(rest)
				n += consume(line)
			}
			sinkLines.Store(int64(n))
		}
	})
	b.Run("copy-reused-buffer", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			n := 0
			for rest := data; len(rest) > 0; {
				var line []byte
				line, rest = NextLine(rest)
				buf = append(buf[:0], line...)
				n += consume(buf)
			}
			sinkLines.Store(int64(n))
		}
	})
	b.Run("copy-alloc-per-line", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for rest := data; len(rest) > 0; {
				var line []byte
				line, rest = NextLine(rest)
				n += consume(bytes.Clone(line))
			}
			sinkLines.Store(int64(n))
		}
	})
}

// newlineCounter is a writer without ReadFrom, so io.Copy must use a buffer;
// it touches every byte it is given.
type newlineCounter struct{ n int }

func (w *newlineCounter) Write(p []byte) (int, error) {
	w.n += bytes.Count(p, newline)
	return len(p), nil
}

// BenchmarkCopyBuffer compares io.Copy (a new 32 KiB buffer per call) with
// io.CopyBuffer reusing one buffer, copying the file in 1 MiB sections as a
// download handler serving many small ranges would.
func BenchmarkCopyBuffer(b *testing.B) {
	p, size := mustBenchFile(b)
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	const section = 1 << 20
	run := func(b *testing.B, copyFn func(w io.Writer, r io.Reader) error) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			w := &newlineCounter{}
			for off := int64(0); off < size; off += section {
				if err := copyFn(w, io.NewSectionReader(f, off, section)); err != nil {
					b.Fatal(err)
				}
			}
			sinkLines.Store(int64(w.n))
		}
	}
	b.Run("io.Copy", func(b *testing.B) {
		run(b, func(w io.Writer, r io.Reader) error { _, err := io.Copy(w, r); return err })
	})
	for _, bufSize := range []int{32 << 10, 256 << 10, 1 << 20} {
		buf := make([]byte, bufSize)
		b.Run(fmt.Sprintf("io.CopyBuffer/buf=%dKiB", bufSize>>10), func(b *testing.B) {
			run(b, func(w io.Writer, r io.Reader) error { _, err := io.CopyBuffer(w, r, buf); return err })
		})
	}
}

// BenchmarkReadAt compares ReadAt from a mapping (a memcpy from the page
// cache, no syscall) with os.File.ReadAt (a pread syscall per call) and with
// slicing the mapping (no copy at all), for several read sizes.
func BenchmarkReadAt(b *testing.B) {
	p, size := mustBenchFile(b)
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	m, err := MapFile(p, false)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	mr := bytes.NewReader(m.Bytes)
	for _, rs := range []int{4 << 10, 64 << 10, 1 << 20} {
		buf := make([]byte, rs)
		read := func(b *testing.B, readAt func(p []byte, off int64) []byte) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for off := int64(0); off < size; off += int64(rs) {
					n += bytes.Count(readAt(buf[:min(int64(rs), size-off)], off), newline)
				}
				sinkLines.Store(int64(n))
			}
		}
		b.Run(fmt.Sprintf("mmap-ReadAt/size=%dKiB", rs>>10), func(b *testing.B) {
			read(b, func(p []byte, off int64) []byte { n, _ := mr.ReadAt(p, off); return p[:n] })
		})
		b.Run(fmt.Sprintf("file-ReadAt/size=%dKiB", rs>>10), func(b *testing.B) {
			read(b, func(p []byte, off int64) []byte { n, _ := f.ReadAt(p, off); return p[:n] })
		})
		b.Run(fmt.Sprintf("mmap-slice/size=%dKiB", rs>>10), func(b *testing.B) {
			read(b, func(p []byte, off int64) []byte { return m.Bytes[off : off+int64(len(p))] })
		})
	}
}
