package loki

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/gen"
	"github.com/spate-io/spate/internal/ingest"
)

// checkRows runs Rows with a few options and checks what every Row must
// satisfy.
func checkRows(t *testing.T, r *Request) {
	for _, o := range []Options{{}, parse, vlOptions, {ParseMessage: true, HasStreamFields: true}} {
		n := 0
		err := r.Rows(o, func(row *ingest.Row) error {
			n++
			if row.Stream > len(row.Fields) || row.Stream < -1 || o.HasStreamFields && row.Stream != -1 {
				t.Fatalf("stream %d of %d fields", row.Stream, len(row.Fields))
			}
			for _, f := range row.Fields {
				if f.Name == "" {
					t.Fatalf("empty name in %q", row.Fields)
				}
			}
			return nil
		})
		if err != nil || n != r.Entries() {
			t.Fatalf("%v: %d rows of %d entries", err, n, r.Entries())
		}
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, c := range jsonCases {
		f.Add([]byte(c.body))
	}
	f.Add(encodeJSON(sample))
	if b, err := os.ReadFile("testdata/push.json"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeJSON(body)
		if err != nil {
			return
		}
		checkRows(t, r)
	})
}

func FuzzDecodeProtobuf(f *testing.F) {
	for _, c := range pbCases() {
		f.Add(c.body)
	}
	f.Add(encodeProtobuf(sample))
	f.Add(encodeProtobuf(goldenPB))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeProtobuf(body)
		if err != nil {
			return
		}
		checkRows(t, r)
	})
}

// FuzzSnappy checks that no block decodes past the limit or panics, and
// that Snappy refuses and decodes blocks as klauspost's DecodeStrict does.
func FuzzSnappy(f *testing.F) {
	f.Add(snappyEncode(encodeProtobuf(sample)))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	for _, in := range snappyInputs(rand.New(rand.NewPCG(8, 8)))[:200] {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		b, err := Snappy(nil, body, 1<<16)
		if err == nil && len(b) > 1<<16 {
			t.Fatalf("%d bytes decoded", len(b))
		}
		if err == nil || strings.Contains(err.Error(), "corrupt") {
			checkSnappy(t, body)
		}
	})
}

// benchStreams is a push of 1000 entries in 4 streams, a third of the
// lines JSON objects, some with metadata.
func benchStreams() []tStream {
	var streams []tStream
	for s := range 4 {
		st := tStream{labels: fs("job", "api", "instance", fmt.Sprintf("10.0.0.%d:8080", s), "level", "info")}
		for i := range 250 {
			ns := int64(1764115200000000000 + (s*250+i)*1000003)
			switch i % 3 {
			case 0:
				st.entries = append(st.entries, tAt(ns, fmt.Sprintf(`{"level":"info","ts":"2026-11-26T00:00:%02d.123Z","caller":"server/handler.go:%d","msg":"request served","method":"GET","path":"/api/v1/items/%d","status":200,"duration_ms":%d.25,"user":{"id":%d,"name":"user%d"}}`, i%60, 100+i, i, i%97, i, i)))
			case 1:
				st.entries = append(st.entries, tAt(ns, fmt.Sprintf(`10.1.2.%d - - [26/Nov/2026:00:00:%02d +0000] "GET /api/v1/items/%d HTTP/1.1" 200 %d "-" "Mozilla/5.0 (X11; Linux x86_64)"`, i%256, i%60, i, 1000+i),
					f("trace_id", fmt.Sprintf("4bf92f3577b34da6a3ce929d0e0e%04x", i)), f("span_id", fmt.Sprintf("00f067aa0ba9%04x", i))))
			default:
				st.entries = append(st.entries, tAt(ns, fmt.Sprintf("level=info msg=\"cache refreshed\" entries=%d took=%dms", i*7, i%13)))
			}
		}
		streams = append(streams, st)
	}
	return streams
}

func benchDecode(b *testing.B, json bool, body []byte) {
	decode := DecodeProtobuf
	if json {
		decode = DecodeJSON
	}
	emit := func(*ingest.Row) error { return nil }
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decode(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct {
		name string
		o    Options
	}{{"rows", Options{}}, {"rows-parse", parse}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := decode(body)
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Rows(c.o, emit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeProtobuf(b *testing.B) {
	body := encodeProtobuf(benchStreams())
	benchDecode(b, false, body)
	benchSnappy := func(name string, body []byte) {
		comp := snappyEncode(body)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				var err error
				if buf, err = Snappy(buf, comp, 64<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	benchSnappy("snappy", body)
	logs := encodeProtobuf(genStreams(b))
	benchSnappy("snappy_logs", logs)
	b.Run("logs", func(b *testing.B) { benchDecode(b, false, logs) })
}

// genStreams is a push of 1 MiB of generated JSON logs (spate gen's) in
// one stream: less repetitive than benchStreams, and every message a
// JSON object with a nested one, as in spate bench ingest --protocol loki.
func genStreams(b *testing.B) []tStream {
	var logs bytes.Buffer
	if _, err := gen.Write(context.Background(), &logs, gen.Config{Size: 1 << 20, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	st := tStream{labels: fs("job", "api")}
	for i, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		st.entries = append(st.entries, tAt(1764115200000000000+int64(i)*1000003, line))
	}
	return []tStream{st}
}

func BenchmarkDecodeJSON(b *testing.B) {
	benchDecode(b, true, encodeJSON(benchStreams()))
}
