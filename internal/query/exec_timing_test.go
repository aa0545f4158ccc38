package query

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/gen"
)

// benchQueries are the standard queries.
var benchQueries = []struct{ name, q string }{
	{"count", `* | stats count()`},
	{"level_error", `level:error | stats count()`},
	{"timeout", `~"timeout" | stats count()`},
	{"by_service", `* | stats by (service) count()`},
	{"status_5xx", `status:>=500 | stats by (service) count(), avg(latency_ms), quantile(0.95, latency_ms)`},
	{"path_bytes", `* | stats by (path) sum(bytes) s | sort by (s desc) | limit 10`},
	// Many distinct values in a few sets (count_uniq's table per group).
	{"uniq_paths", `* | stats by (service) count_uniq(path)`},
	// What the query API runs for limit=100 (the last 100 logs).
	{"last_100", `* | sort by (_time) desc limit 100`},
	// A join with rows written out (what a subquery becomes), row by row.
	{"join_rows", `* | join by (service) rows({service:auth, team:id}, {service:cart, team:shop}, {service:search, team:find}) | stats by (team) count()`},
	// Top 3 per partition.
	{"sort_partition", `* | sort by (latency_ms desc) partition by (service) limit 3`},
}

func benchData(b *testing.B, size int64) []byte {
	b.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Seed: 1, Size: size, Format: "ndjson"}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

type discardSink struct{}

func (discardSink) WriteRow(*Row) error { return nil }

// BenchmarkQueryChunk measures one worker's per-chunk work (prefilter,
// parse, filter, aggregate) over 16 MiB of generated logs held in memory,
// without reading files: the engine's hot loop. After the first iteration
// it must not allocate.
func BenchmarkQueryChunk(b *testing.B) {
	data := benchData(b, 16<<20)
	now := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	for _, bq := range benchQueries {
		b.Run(bq.name, func(b *testing.B) {
			q, err := Parse(bq.q, now)
			if err != nil {
				b.Fatal(err)
			}
			p, err := newPlan(q, Options{})
			if err != nil {
				b.Fatal(err)
			}
			e, err := newExecutor(p, fileread.Config{Workers: 1}, discardSink{})
			if err != nil {
				b.Fatal(err)
			}
			c := &fileread.Chunk{Data: data}
			if err := e.chunk(0, c); err != nil { // warm up: groups, buffers
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := e.chunk(0, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
