package query_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
)

// BenchmarkRunWorkers runs whole queries over a 128 MiB file with one
// worker and with two: on two free cores the second should come near
// twice the first. Shared state that workers write per line (a counter,
// a cache line two workers' states share) shows up here as a second
// worker that adds much less than a core's worth.
func BenchmarkRunWorkers(b *testing.B) {
	path := writeGen(b, 5, 128<<20)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, text := range []string{
		`* | stats by (service) count()`,
		`status:>=500 | stats by (service) count(), avg(latency_ms)`,
	} {
		q, err := query.Parse(text, diffNow)
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", text, w), func(b *testing.B) {
				b.SetBytes(st.Size())
				b.ReportAllocs()
				for b.Loop() {
					var out rowsSink
					if _, err := query.Run(context.Background(), q, []string{path}, fileread.Config{Workers: w}, query.Options{}, &out); err != nil {
						b.Fatal(err)
					}
					if len(out.rows) == 0 {
						b.Fatal("no rows")
					}
				}
			})
		}
	}
}

// BenchmarkStreamContext runs stream_context over a 16 MiB file: the scan
// for the matches, then the second scan for the logs around them (all in
// one stream: the lines have no _stream). The bytes are those of the file,
// read twice.
func BenchmarkStreamContext(b *testing.B) {
	path := writeGen(b, 7, 16<<20)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	q, err := query.Parse(`level:error status:500 | stream_context before 2 after 2`, diffNow)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		var out rowsSink
		if _, err := query.Run(context.Background(), q, []string{path}, fileread.Config{}, query.Options{}, &out); err != nil {
			b.Fatal(err)
		}
		if len(out.rows) == 0 {
			b.Fatal("no rows")
		}
	}
}
