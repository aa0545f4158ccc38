package query_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
)

// BenchmarkMergePartial measures the front of a fan-out: merging one
// node's partial stats state (many groups; a large count_uniq set), per
// byte of state.
func BenchmarkMergePartial(b *testing.B) {
	path := writeGen(b, 13, 16<<20)
	for _, text := range []string{
		`* | stats by (trace_id) count() n, sum(bytes) s`,
		`* | stats count_uniq(trace_id) u`,
	} {
		b.Run(text, func(b *testing.B) {
			q, err := query.Parse(text, diffNow)
			if err != nil {
				b.Fatal(err)
			}
			rp := query.PlanRemote(q)
			var state bytes.Buffer
			if _, err := query.Run(context.Background(), rp.Remote, []string{path}, fileread.Config{}, query.Options{Partial: &state}, nil); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(state.Len()))
			b.ReportAllocs()
			for b.Loop() {
				var out rowsSink
				m, err := rp.NewMerger(query.Options{}, &out)
				if err != nil {
					b.Fatal(err)
				}
				if err := m.AddPartial(bytes.NewReader(state.Bytes())); err != nil {
					b.Fatal(err)
				}
				if _, err := m.Finish(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
