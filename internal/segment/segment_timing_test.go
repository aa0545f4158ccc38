package segment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// benchLines returns about size bytes of 100-byte NDJSON lines, seeded.
func benchLines(size int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b []byte
	for len(b)+100 <= size {
		start := len(b)
		b = fmt.Appendf(b, `{"ts":%d,"level":"info","user":%d,"msg":"`, 1_790_000_000_000+rng.IntN(1e6), rng.IntN(1e5))
		b = append(b, strings.Repeat("m", 100-3-(len(b)-start))...)
		b = append(b, "\"}\n"...)
	}
	return b
}

func TestBenchLines(t *testing.T) {
	b := benchLines(64 << 10)
	for i, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" && (len(line) != 100 || !strings.HasSuffix(line, "\"}\n")) {
			t.Fatalf("line %d: %q", i, line)
		}
	}
}

// BenchmarkAppend measures Append throughput with 64 KiB requests of
// 100-byte lines, from 1 and 8 goroutines, without and with fsync, and
// with checkpoints (each request marked, as spate consume marks them:
// one more record and fsync per batch). With SyncBatch, reqs/batch shows
// how many requests share one fsync.
func BenchmarkAppend(b *testing.B) {
	lines := benchLines(64 << 10)
	for _, mode := range []string{"never", "batch", "batch+checkpoint"} {
		for _, workers := range []int{1, 8} {
			b.Run(fmt.Sprintf("sync=%s/goroutines=%d", mode, workers), func(b *testing.B) {
				logger, _ := testLogger()
				sm, _ := ParseSyncMode(strings.TrimSuffix(mode, "+checkpoint"))
				ckpt := strings.HasSuffix(mode, "+checkpoint")
				s, err := Open(b.TempDir(), Options{Sync: sm, Logger: logger, NoCompress: true, Checkpoint: ckpt})
				if err != nil {
					b.Fatal(err)
				}
				recs := []Group{{Day: "2026-11-22", Lines: lines}}
				b.SetBytes(int64(len(lines)))
				b.ReportAllocs()
				b.ResetTimer()
				var next atomic.Int64
				var wg sync.WaitGroup
				for w := range workers {
					wg.Go(func() {
						key := fmt.Sprint("topic/", w)
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							var marks []Mark
							if ckpt {
								marks = []Mark{{key, i}}
							}
							p, err := s.EnqueueMarked(context.Background(), recs, marks, true)
							if err == nil {
								err = p.Wait(context.Background())
							}
							if err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				st := s.Stats()
				b.ReportMetric(float64(b.N)/float64(st.Batches), "reqs/batch")
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				if st.BytesWritten != int64(b.N)*int64(len(lines)) {
					b.Fatalf("wrote %d bytes, want %d", st.BytesWritten, int64(b.N)*int64(len(lines)))
				}
			})
		}
	}
}
