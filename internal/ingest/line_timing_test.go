package ingest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"testing"

	"github.com/spate-io/spate/internal/gen"
	"github.com/spate-io/spate/internal/segment"
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
		{"stream", "_msg_field=msg&_time_field=ts&_stream_fields=service,host"},
	} {
		q, _ := url.ParseQuery(bc.query)
		p, err := ParseParams(q, http.Header{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			pr := NewProcessor(p, segment.Tenant{})
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
					batch.Add(out, ts, pr.Stream())
				}
			}
		})
	}
}

// discardSink acknowledges everything at once, keeping nothing.
type discardSink struct{}

func (discardSink) Enqueue(context.Context, []segment.Group) (Ack, error) { return memAck{}, nil }

// BenchmarkIngest measures the pipeline on one 16 MiB body of generated
// logs: chunking, validation on all workers, ordered commit into a sink
// that keeps nothing. Compare with BenchmarkProcess (one goroutine).
func BenchmarkIngest(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Seed: 1, Size: 16 << 20, Format: "ndjson"}); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			p, err := NewPipeline(Config{Workers: workers})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				tk, ok := p.Admit(-1)
				if !ok {
					b.Fatal("not admitted")
				}
				res := p.Ingest(context.Background(), tk, &Request{Body: bytes.NewReader(data), Sink: discardSink{}})
				if res.Err != nil || res.Rejected != 0 {
					b.Fatalf("%+v", res)
				}
			}
		})
	}
}
