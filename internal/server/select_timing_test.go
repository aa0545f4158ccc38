package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/gen"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/segment"
)

// BenchmarkSelectQuery measures /select/logsql/query end to end over a
// 32 MiB store of generated logs, its segments sealed and compressed (zst,
// as most of a server's data is) or left plain: snapshot, pruning, zstd
// decoding, scan, answer. Bytes are the logs' uncompressed size.
func BenchmarkSelectQuery(b *testing.B) {
	var data bytes.Buffer
	if _, err := gen.Write(context.Background(), &data, gen.Config{Seed: 1, Size: 32 << 20, Format: "ndjson"}); err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"zst", "plain"} {
		b.Run(kind, func(b *testing.B) { benchSelect(b, data.Bytes(), kind == "plain") })
	}
}

func benchSelect(b *testing.B, data []byte, plain bool) {
	s, err := New(Config{DataDir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Segment: segment.Options{MaxSegmentBytes: 4 << 20, CompressDelay: -1, NoCompress: plain}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/insert/jsonline?_time_field=ts&_msg_field=msg", "application/stream+json", bytes.NewReader(data))
	if err != nil || resp.StatusCode != 200 {
		b.Fatal(err, resp)
	}
	resp.Body.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		files, _ := segment.List(s.cfg.DataDir)
		zst := 0
		for _, f := range files {
			if f.Compressed {
				zst++
			}
		}
		if plain || zst >= len(files)-1 || time.Now().After(deadline) {
			break
		}
	}
	for _, bq := range []struct{ name, q, limit string }{
		{"count", "* | stats count()", ""},
		{"by_service", "* | stats by (service) count()", ""},
		{"error_rows", "level:error", ""},
		{"last_100", "*", "100"},
	} {
		b.Run(bq.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				args := q("query", bq.q)
				if bq.limit != "" {
					args.Set("limit", bq.limit)
				}
				resp, err := http.PostForm(ts.URL+"/select/logsql/query", args)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || n == 0 {
					b.Fatal(resp.StatusCode, n)
				}
			}
		})
	}
}

// BenchmarkAppendJSONRow measures writing one result row of the query API.
func BenchmarkAppendJSONRow(b *testing.B) {
	fields := []query.Field{
		{Name: "_msg", Value: `GET /api/v1/products/42 "quoted" 200`}, {Name: "_stream", Value: `{app="shop"}`},
		{Name: "_stream_id", Value: "0000000000000000e934a84adb05276890d7f7bfcadabe92"},
		{Name: "_time", Value: "2026-01-02T03:04:05.123456789Z"}, {Name: "level", Value: "info"},
		{Name: "latency_ms", Value: "12.5"}, {Name: "service", Value: "checkout"}, {Name: "empty", Value: ""},
	}
	var buf []byte
	buf = appendJSONRow(buf, fields)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = appendJSONRow(buf[:0], fields)
	}
}
