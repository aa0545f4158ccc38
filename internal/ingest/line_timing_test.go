package ingest

import (
	"bytes"
	"context"
	"fmt"
	"io"
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

// BenchmarkIngestRows measures rows from a RowReader through the pipeline
// into a sink that keeps nothing: taken directly (the path Ingest takes
// when the Params do not rewrite lines), and as text (a goroutine, a pipe
// and the validating scan), the path before. 10,000 rows of 12 fields,
// a stream of 2 labels per 1,000 rows; bytes are the lines' as text.
func BenchmarkIngestRows(b *testing.B) {
	rows := make([]Row, 10000)
	for i := range rows {
		rows[i] = Row{Time: 1764115200000000000 + int64(i)*1e6, Stream: 2, Fields: []Field{
			{"job", "checkout"}, {"instance", fmt.Sprintf("node-%d", i/1000)},
			{"_msg", fmt.Sprintf("GET /api/v1/users/%d/orders?limit=50 HTTP/1.1 200 1532 %dms", i, i%300)},
			{"level", "info"}, {"status", "200"}, {"method", "GET"}, {"path", "/api/v1/users/{id}/orders"},
			{"latency_ms", fmt.Sprint(i % 300)}, {"bytes", "1532"}, {"user", fmt.Sprintf("u-%06d", i)},
			{"trace_id", fmt.Sprintf("%032x", i)}, {"region", "eu-west-1"},
		}}
	}
	decode := func(emit func(*Row) error) error {
		for i := range rows {
			if err := emit(&rows[i]); err != nil {
				return err
			}
		}
		return nil
	}
	var w RowWriter
	size := 0
	for i := range rows {
		size += len(w.Append(nil, &rows[i]))
	}
	p, err := NewPipeline(Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, direct := range []bool{true, false} {
		b.Run(fmt.Sprintf("direct=%v", direct), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				rr := RowReader(segment.Tenant{}, decode)
				var body io.Reader = rr
				if !direct {
					body = onlyReader{rr}
				}
				tk, ok := p.Admit(-1)
				if !ok {
					b.Fatal("not admitted")
				}
				res := p.Ingest(context.Background(), tk, &Request{Body: body, Sink: discardSink{}})
				rr.Close()
				if res.Err != nil || res.Accepted != int64(len(rows)) {
					b.Fatalf("%+v", res)
				}
			}
		})
	}
}

// BenchmarkIngestWritten measures lines RowWriter wrote (as syslog's are)
// through the pipeline with Request.Written, which reads their time and
// stream from their first fields, against the validating scan.
func BenchmarkIngestWritten(b *testing.B) {
	var w RowWriter
	var body []byte
	for i := range 20000 {
		body = w.Append(body, &Row{Time: 1764115200000000000 + int64(i)*1e6, Stream: 2, Fields: []Field{
			{"hostname", fmt.Sprintf("node-%d", i%7)}, {"app_name", "checkout"},
			{"_msg", fmt.Sprintf("GET /api/v1/users/%d/orders?limit=50 HTTP/1.1 200 1532 %dms", i, i%300)},
			{"facility", "local0"}, {"severity", "info"}, {"priority", "134"}, {"proc_id", fmt.Sprint(1000 + i%50)},
			{"status", "200"}, {"latency_ms", fmt.Sprint(i % 300)}, {"user", fmt.Sprintf("u-%06d", i)},
		}})
	}
	p, err := NewPipeline(Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, written := range []bool{true, false} {
		b.Run(fmt.Sprintf("written=%v", written), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				tk, ok := p.Admit(-1)
				if !ok {
					b.Fatal("not admitted")
				}
				res := p.Ingest(context.Background(), tk, &Request{Body: bytes.NewReader(body), Sink: discardSink{}, Written: written})
				if res.Err != nil || res.Accepted != 20000 {
					b.Fatalf("%+v", res)
				}
			}
		})
	}
}
