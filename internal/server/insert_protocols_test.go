package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/spate-io/spate/internal/ingest/otlp"
	"google.golang.org/protobuf/encoding/protowire"
)

func send(t *testing.T, method, url string, body []byte, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp := do(t, req, hdr...)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, data
}

func fieldsOf(t *testing.T, lines []string) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, l := range lines {
		var m map[string]string
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		out = append(out, m)
	}
	return out
}

// lokiProtobuf builds a snappy-compressed PushRequest of one stream.
func lokiProtobuf(labels string, lines ...string) []byte {
	var stream []byte
	stream = protowire.AppendTag(stream, 1, protowire.BytesType)
	stream = protowire.AppendString(stream, labels)
	for i, l := range lines {
		var ts, e []byte
		ts = protowire.AppendTag(ts, 1, protowire.VarintType)
		ts = protowire.AppendVarint(ts, uint64(1795600000+i))
		e = protowire.AppendTag(e, 1, protowire.BytesType)
		e = protowire.AppendBytes(e, ts)
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		e = protowire.AppendString(e, l)
		stream = protowire.AppendTag(stream, 2, protowire.BytesType)
		stream = protowire.AppendBytes(stream, e)
	}
	req := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), stream)
	return snappy.Encode(nil, req)
}

func TestLokiPush(t *testing.T) {
	s, ts := newTestServer(t, Config{})
	u := ts.URL + "/insert/loki/api/v1/push"
	body := `{"streams":[{"stream":{"job":"api","env":"prod"},"values":[["1795600000000000000","plain text"],["1795600001000000000","{\"level\":\"error\",\"req\":{\"id\":7}}",{"trace":"t1"}]]}]}`
	code, _, msg := send(t, "POST", u, []byte(body), "Content-Type", "application/json")
	if code != 204 {
		t.Fatalf("%d %s", code, msg)
	}
	code, _, msg = send(t, "POST", u, lokiProtobuf(`{job="worker"}`, "from protobuf"), "Content-Type", "application/x-protobuf", "X-Scope-OrgID", "7:1")
	if code != 204 {
		t.Fatalf("protobuf: %d %s", code, msg)
	}
	// Bad bodies: 400, nothing stored.
	for name, c := range map[string]struct{ ct, body string }{
		"json":      {"application/json", `{"streams":[{"stream":{"a":"b"},"values":[["1","x"],["bad"]]}]}`},
		"no snappy": {"application/x-protobuf", "not snappy"},
		"truncated": {"application/x-protobuf", string(snappy.Encode(nil, []byte{0x0a, 0x10, 0x0a}))},
		"csv":       {"text/csv", "a,b\n"},
	} {
		if code, _, msg := send(t, "POST", u, []byte(c.body), "Content-Type", c.ct); code != 400 || len(msg) == 0 {
			t.Errorf("%s: %d %s", name, code, msg)
		}
	}
	if code, _, _ := send(t, "POST", u, []byte(`{"streams":[]}`), "Content-Type", "application/json"); code != 204 {
		t.Errorf("no streams: %d", code)
	}
	if code, _, _ := send(t, "POST", u, []byte("x"), "Content-Type", "application/json", "X-Scope-OrgID", "tenant-a"); code != 400 {
		t.Errorf("bad org id: %d", code)
	}
	rows := fieldsOf(t, storedLines(t, s))
	if len(rows) != 3 {
		t.Fatalf("%d rows: %v", len(rows), rows)
	}
	byMsg := map[string]map[string]string{}
	for _, r := range rows {
		byMsg[r["_msg"]+r["level"]] = r
	}
	if r := byMsg["plain text"]; r["_stream"] != `{env="prod",job="api"}` || r["job"] != "api" || r["_time"] != "2026-11-25T09:46:40Z" {
		t.Errorf("%v", r)
	}
	if r := byMsg["error"]; r["req.id"] != "7" || r["trace"] != "t1" {
		t.Errorf("%v", r)
	}
	if r := byMsg["from protobuf"]; r["_stream"] != `{job="worker"}` || !strings.HasPrefix(r["_stream_id"], "0000000700000001") {
		t.Errorf("%v", r)
	}
}

// otlpProtobuf builds an ExportLogsServiceRequest with one resource
// (service.name) and one record per message.
func otlpProtobuf(service string, msgs ...string) []byte {
	kv := func(k, v string) []byte {
		any := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), v)
		p := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), k)
		return protowire.AppendBytes(protowire.AppendTag(p, 2, protowire.BytesType), any)
	}
	res := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), kv("service.name", service))
	var sl []byte
	for i, m := range msgs {
		var rec []byte
		rec = protowire.AppendTag(rec, 1, protowire.Fixed64Type)
		rec = protowire.AppendFixed64(rec, uint64(1795600000000000000+i))
		rec = protowire.AppendTag(rec, 3, protowire.BytesType)
		rec = protowire.AppendString(rec, "INFO")
		rec = protowire.AppendTag(rec, 5, protowire.BytesType)
		rec = protowire.AppendBytes(rec, protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), m))
		rec = protowire.AppendTag(rec, 6, protowire.BytesType)
		rec = protowire.AppendBytes(rec, kv("user", "u1"))
		sl = protowire.AppendTag(sl, 2, protowire.BytesType)
		sl = protowire.AppendBytes(sl, rec)
	}
	var rl []byte
	rl = protowire.AppendTag(rl, 1, protowire.BytesType)
	rl = protowire.AppendBytes(rl, res)
	rl = protowire.AppendTag(rl, 2, protowire.BytesType)
	rl = protowire.AppendBytes(rl, sl)
	return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), rl)
}

func TestOTLPLogs(t *testing.T) {
	s, ts := newTestServer(t, Config{MaxRequestBytes: 4096})
	u := ts.URL + "/insert/opentelemetry/v1/logs"
	code, h, body := send(t, "POST", u, otlpProtobuf("checkout", "one", "two"), "Content-Type", "application/x-protobuf")
	if code != 200 || len(body) != 0 || h.Get("Content-Type") != "application/x-protobuf" {
		t.Fatalf("%d %q %v", code, body, h)
	}
	js := `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"cart"}}]},"scopeLogs":[{"logRecords":[{"timeUnixNano":"1795600000000000000","body":{"stringValue":"three"},"traceId":"5b8efff798038103d269b633813fc60c"}]}]}]}`
	code, h, body = send(t, "POST", u, []byte(js), "Content-Type", "application/json")
	if code != 200 || string(body) != "{}" || h.Get("Content-Type") != "application/json" {
		t.Fatalf("json: %d %s", code, body)
	}
	// Bad requests: 400 with a google.rpc.Status, nothing stored.
	code, _, body = send(t, "POST", u, []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":1}}]}]}]}`), "Content-Type", "application/json")
	if code != 400 || !bytes.Contains(body, []byte(`"code":3`)) {
		t.Errorf("bad json: %d %s", code, body)
	}
	full := otlpProtobuf("x", "y")
	code, _, body = send(t, "POST", u, full[:len(full)-3], "Content-Type", "application/x-protobuf")
	if code != 400 || len(body) == 0 {
		t.Errorf("truncated: %d %q", code, body)
	}
	// Any Content-Type but JSON is read as protobuf, as VictoriaLogs
	// reads it: a good body is stored, a bad one is a 400.
	if code, _, _ := send(t, "POST", u, []byte("a,b\n1,2\n"), "Content-Type", "text/csv"); code != 400 {
		t.Errorf("content type: %d", code)
	}
	if code, _, _ := send(t, "POST", u, otlpProtobuf("big", strings.Repeat("m", 5000)), "Content-Type", "application/x-protobuf"); code != 413 {
		t.Errorf("too large: %d", code)
	}
	rows := fieldsOf(t, storedLines(t, s))
	if len(rows) != 3 {
		t.Fatalf("%d rows: %v", len(rows), rows)
	}
	for _, r := range rows {
		if r["_msg"] == "y" {
			t.Errorf("a truncated request was stored: %v", r)
		}
		switch r["_msg"] {
		case "one", "two":
			if r["service.name"] != "checkout" || r["_stream"] != `{service.name="checkout"}` || r["user"] != "u1" || r["severity_text"] != "INFO" {
				t.Errorf("%v", r)
			}
		case "three":
			if r["trace_id"] != "5b8efff798038103d269b633813fc60c" || r["_time"] != "2026-11-25T09:46:40Z" {
				t.Errorf("%v", r)
			}
		default:
			t.Errorf("%v", r)
		}
	}
}

// TestOTLPBadRecordLast sends OTLP protobuf requests whose last record is
// malformed, after good ones: decoded before they are checked, they are
// refused whole all the same, with the error the check gives, whether
// their rows fit in the chunks held back (small), pass them (large), or
// are rewritten as text (ignore_fields).
func TestOTLPBadRecordLast(t *testing.T) {
	s, ts := newTestServer(t, Config{})
	u := ts.URL + "/insert/opentelemetry/v1/logs"
	bad := []byte{0x0a, 0x02, 0x12, 0x05} // resource_logs{scope_logs: 5 bytes of 0}
	small := append(otlpProtobuf("small", "one", "two"), bad...)
	var msgs []string
	for i := range 3000 {
		msgs = append(msgs, fmt.Sprintf("%04d %s", i, strings.Repeat("m", 2000)))
	}
	large := append(otlpProtobuf("large", msgs...), bad...)
	_, err := otlp.DecodeProtobuf(small)
	if err == nil {
		t.Fatal("the bad request decodes")
	}
	want := "cannot read the OTLP logs request: " + err.Error()
	for _, c := range []struct {
		name  string
		query string
		body  []byte
	}{
		{"small", "", small},
		{"large", "", large},
		{"small as text", "?ignore_fields=user", small},
		{"large as text", "?ignore_fields=user", large},
	} {
		code, _, body := send(t, "POST", u+c.query, c.body, "Content-Type", "application/x-protobuf")
		if code != 400 || !bytes.Contains(body, []byte(want)) {
			t.Errorf("%s: %d %q, want 400 with %q", c.name, code, body, want)
		}
	}
	// A good request afterwards is stored, and only it.
	if code, _, body := send(t, "POST", u, otlpProtobuf("good", "ok"), "Content-Type", "application/x-protobuf"); code != 200 {
		t.Fatalf("good: %d %q", code, body)
	}
	rows := fieldsOf(t, storedLines(t, s))
	if len(rows) != 1 || rows[0]["_msg"] != "ok" {
		t.Fatalf("%d rows stored, want the good one: %v", len(rows), rows)
	}
}
