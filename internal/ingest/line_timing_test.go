package ingest

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/spate-io/spate/internal/gen"
)

// BenchmarkProcess measures the per-line check of ingestion over 4 MiB of
// generated logs: lines kept as received (they have "ts"), and rebuilt
// with VictoriaLogs parameters. After warm-up it must not allocate.
func BenchmarkProcess(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Seed: 1, Size: 4 << 20, Format: "ndjson"}); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	for _, bc := range []struct{ name, query string }{
		{"keep", ""},
		{"rewrite", "_msg_field=msg&_time_field=ts&ignore_fields=trace_id"},
	} {
		q, _ := url.ParseQuery(bc.query)
		p, err := ParseParams(q, http.Header{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			pr := NewProcessor(p)
			var batch Batch
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				batch.Reset()
				for line := range bytes.Lines(data) {
					out, ts, err := pr.Process(bytes.TrimSuffix(line, []byte{'\n'}), testNow)
					if err != nil {
						b.Fatal(err)
					}
					batch.Add(out, ts)
				}
			}
		})
	}
}
