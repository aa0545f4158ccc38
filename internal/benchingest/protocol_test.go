package benchingest

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/gen"
	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/ingest/esbulk"
	"github.com/spate-io/spate/internal/ingest/loki"
	"github.com/spate-io/spate/internal/ingest/otlp"
	"github.com/spate-io/spate/internal/ingest/syslog"
	"github.com/spate-io/spate/internal/timeparse"
)

// TestProtocolBodies decodes each protocol's body with the server's own
// decoder: one row per generated line, with the line's message and time.
func TestProtocolBodies(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Seed: 5, Size: 64 << 10, Format: "ndjson"}); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()[:bytes.LastIndexByte(buf.Bytes(), '\n')+1]
	lines, err := parseLines(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[rowKey]bool{}
	for _, l := range lines {
		want[rowKey{l.msg, l.time}] = true
	}
	check := func(name string, rows int, msgs map[rowKey]bool) {
		t.Helper()
		if rows != len(lines) || len(msgs) != len(want) {
			t.Errorf("%s: %d rows (%d distinct) for %d lines (%d distinct)", name, rows, len(msgs), len(lines), len(want))
		}
		for k := range msgs {
			if !want[k] {
				t.Errorf("%s: row %+v is no line's", name, k)
				return
			}
		}
	}
	collect := func(msgs map[rowKey]bool, n *int) func(r *ingest.Row) error {
		return func(r *ingest.Row) error {
			*n++
			for _, f := range r.Fields {
				if f.Name == "_msg" || f.Name == "msg" { // loki: the line's own msg
					msgs[rowKey{strings.Clone(f.Value), r.Time}] = true // Rows reuses its strings
				}
			}
			return nil
		}
	}

	body, err := Elasticsearch.encode(raw)
	if err != nil {
		t.Fatal(err)
	}
	br := esbulk.NewReader(bytes.NewReader(body))
	var docs bytes.Buffer
	docs.ReadFrom(br)
	if docs.String() != string(raw) || len(br.Items()) != len(lines) {
		t.Errorf("elasticsearch: the documents are not the lines")
	}

	body, err = OTLP.encode(raw)
	if err != nil {
		t.Fatal(err)
	}
	req, err := otlp.DecodeProtobuf(body)
	if err != nil {
		t.Fatal(err)
	}
	n, msgs := 0, map[rowKey]bool{}
	req.Rows(collect(msgs, &n))
	check("otlp", n, msgs)

	body, err = Loki.encode(raw)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := loki.Snappy(nil, body, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := loki.DecodeProtobuf(pb)
	if err != nil {
		t.Fatal(err)
	}
	n, msgs = 0, map[rowKey]bool{}
	lr.Rows(loki.Options{ParseMessage: true}, collect(msgs, &n))
	check("loki", n, msgs)

	body, err = Syslog.encode(raw)
	if err != nil {
		t.Fatal(err)
	}
	enc := syslog.NewEncoder(syslog.Config{Location: time.UTC})
	got, msgs := 0, map[rowKey]bool{}
	for len(body) > 0 {
		sp := bytes.IndexByte(body, ' ')
		var size int
		for _, c := range body[:sp] {
			size = size*10 + int(c-'0')
		}
		msg := body[sp+1 : sp+1+size]
		body = body[sp+1+size:]
		line, err := enc.Append(nil, msg, time.Now())
		if err != nil {
			t.Fatalf("syslog: %v: %s", err, msg)
		}
		var row map[string]string
		if err := json.Unmarshal(line, &row); err != nil {
			t.Fatalf("syslog: %v: %s", err, line)
		}
		ts, _ := timeparse.ParseRFC3339(row["_time"])
		msgs[rowKey{row["_msg"], ts}] = true
		got++
	}
	check("syslog", got, msgs)
}

// rowKey is a row's message and time.
type rowKey struct {
	msg  string
	time int64
}

// TestOTLPRejected reads the server's partial success back.
func TestOTLPRejected(t *testing.T) {
	for _, c := range []struct {
		body []byte
		want int64
	}{
		{nil, 0},
		{otlp.AppendResponse(nil, false, 7, "seven bad"), 7},
		{otlp.AppendResponse(nil, false, 0, "only a message"), 0},
	} {
		if got, err := otlpRejected(c.body); err != nil || got != c.want {
			t.Errorf("%x: %d, %v; want %d", c.body, got, err, c.want)
		}
	}
	if _, err := otlpRejected([]byte{0x0a, 0x05, 0x08}); err == nil {
		t.Error("a truncated response read without error")
	}
}
