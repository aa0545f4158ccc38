package gen

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"testing"
	"time"
)

// BenchmarkWrite measures end-to-end throughput of Write into io.Discard
// with the default number of workers (GOMAXPROCS) and with one worker.
func BenchmarkWrite(b *testing.B) {
	const size = 64 << 20
	for _, format := range Formats() {
		for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%s/workers=%d", format, workers), func(b *testing.B) {
				cfg := Config{Seed: 1, Size: size, Format: format, Workers: workers}
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					st, err := Write(context.Background(), io.Discard, cfg)
					if err != nil {
						b.Fatal(err)
					}
					sinkStats = st
				}
			})
		}
	}
}

var (
	sinkStats Stats
	sinkBytes []byte
)

// BenchmarkAppendBlock measures one worker filling one block, without the
// pipeline: the per-core cost of drawing and formatting records.
func BenchmarkAppendBlock(b *testing.B) {
	for _, format := range Formats() {
		b.Run(format, func(b *testing.B) {
			f, err := parseFormat(format)
			if err != nil {
				b.Fatal(err)
			}
			g := &blockGen{seed: 1, format: f}
			buf := g.appendBlock(nil, 1, math.MaxInt64)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			blk := int64(1)
			for b.Loop() {
				buf = g.appendBlock(buf[:0], blk, math.MaxInt64)
				blk = blk%100 + 1
			}
			sinkBytes = buf
		})
	}
}

// BenchmarkAppendTS compares appendTS with time.Time.AppendFormat.
func BenchmarkAppendTS(b *testing.B) {
	ms := baseMillis + 123_456_789
	buf := make([]byte, 0, 64)
	b.Run("appendTS", func(b *testing.B) {
		for b.Loop() {
			buf = appendTS(buf[:0], ms)
			ms += 7
		}
	})
	b.Run("AppendFormat", func(b *testing.B) {
		for b.Loop() {
			buf = time.UnixMilli(ms).UTC().AppendFormat(buf[:0], "2006-01-02T15:04:05.000Z")
			ms += 7
		}
	})
	sinkBytes = buf
}
