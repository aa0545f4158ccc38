package ingest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/segment"
)

var testNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).UnixNano()

func TestProcessKeep(t *testing.T) {
	f := func(line, want string, wantTS time.Time) {
		t.Helper()
		pr := NewProcessor(Params{}, segment.Tenant{})
		out, ts, err := pr.Process([]byte(line), testNow)
		if err != nil {
			t.Fatalf("Process(%q): %v", line, err)
		}
		if string(out) != want {
			t.Fatalf("Process(%q) = %q, want %q", line, out, want)
		}
		if ts != wantTS.UnixNano() {
			t.Fatalf("Process(%q) time = %v, want %v", line, time.Unix(0, ts).UTC(), wantTS)
		}
	}
	day := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := time.Unix(0, testNow).UTC()
	// Lines with a time field are stored byte for byte.
	f(`{"ts":"2026-01-02T03:04:05Z","msg":"a"}`, `{"ts":"2026-01-02T03:04:05Z","msg":"a"}`, day)
	f(`{"msg":"a", "time": 1767323045}`, `{"msg":"a", "time": 1767323045}`, day)
	f(`{"_time":"2026-01-02T04:04:05+01:00"}`+"\r", `{"_time":"2026-01-02T04:04:05+01:00"}`, day)
	f(` { "@timestamp" : "2026-01-02T03:04:05Z" } `, ` { "@timestamp" : "2026-01-02T03:04:05Z" } `, day)
	// _time is preferred over ts wherever it is.
	f(`{"ts":"2020-01-01T00:00:00Z","_time":"2026-01-02T03:04:05Z"}`, `{"ts":"2020-01-01T00:00:00Z","_time":"2026-01-02T03:04:05Z"}`, day)
	// A nested ts is not the time field.
	f(`{"a":{"ts":"2020-01-01T00:00:00Z"}}`, `{"_time":"2026-11-22T10:00:00Z","a":{"ts":"2020-01-01T00:00:00Z"}}`, now)
	// No time field, or an empty one: _time is added first.
	f(`{"msg":"a"}`, `{"_time":"2026-11-22T10:00:00Z","msg":"a"}`, now)
	f(`{}`, `{"_time":"2026-11-22T10:00:00Z"}`, now)
	f(` {  } `, ` {"_time":"2026-11-22T10:00:00Z"  } `, now)
	f(`{"ts":null,"msg":"a"}`, `{"_time":"2026-11-22T10:00:00Z","ts":null,"msg":"a"}`, now)
	f(`{"ts":"","msg":"a"}`, `{"_time":"2026-11-22T10:00:00Z","ts":"","msg":"a"}`, now)
	f(`{"msg":"é ü \u00e9"}`, `{"_time":"2026-11-22T10:00:00Z","msg":"é ü \u00e9"}`, now)
	// "0", 0, "" and "-" mean the ingestion time, as in VictoriaLogs; a
	// _time holding one gets the time in its place (no second _time).
	f(`{"_time":"0","msg":"a"}`, `{"_time":"2026-11-22T10:00:00Z","msg":"a"}`, now)
	f(`{"_time":0,"msg":"a"}`, `{"_time":"2026-11-22T10:00:00Z","msg":"a"}`, now)
	f(`{"msg":"a","_time": "-" }`, `{"msg":"a","_time": "2026-11-22T10:00:00Z" }`, now)
	f(`{"_time":"","msg":"a"}`, `{"_time":"2026-11-22T10:00:00Z","msg":"a"}`, now)
	f(`{"_time":null}`, `{"_time":"2026-11-22T10:00:00Z"}`, now)
	f(`{"ts":"0","msg":"a"}`, `{"_time":"2026-11-22T10:00:00Z","ts":"0","msg":"a"}`, now)
	f(`{"ts":"-"}`, `{"_time":"2026-11-22T10:00:00Z","ts":"-"}`, now)
	// Another time field's time wins over such a _time, and replaces it.
	f(`{"_time":"0","ts":"2026-01-02T03:04:05Z"}`, `{"_time":"2026-01-02T03:04:05Z","ts":"2026-01-02T03:04:05Z"}`, day)
	f(`{"ts":"0","time":1767323045}`, `{"ts":"0","time":1767323045}`, day)
	// A time of 0 means the ingestion time too, as in VictoriaLogs;
	// "-1" is a time (Unix seconds).
	f(`{"_time":"00"}`, `{"_time":"2026-11-22T10:00:00Z"}`, now)
	f(`{"_time":"1970-01-01T00:00:00Z","msg":"a"}`, `{"_time":"2026-11-22T10:00:00Z","msg":"a"}`, now)
	f(`{"ts":0.0,"msg":"a"}`, `{"_time":"2026-11-22T10:00:00Z","ts":0.0,"msg":"a"}`, now)
	f(`{"_time":-1}`, `{"_time":-1}`, time.Unix(-1, 0).UTC())
	// Without a named time field, ts, time, timestamp and @timestamp
	// holding no time are ordinary fields (VictoriaLogs reads only _time).
	f(`{"ts":"yesterday","msg":"a"}`, `{"_time":"2026-11-22T10:00:00Z","ts":"yesterday","msg":"a"}`, now)
	f(`{"time":"12ms","ts":"2026-01-02T03:04:05Z"}`, `{"time":"12ms","ts":"2026-01-02T03:04:05Z"}`, day)
	f(`{"_time":-1}`, `{"_time":-1}`, time.Unix(-1, 0).UTC())
}

func TestProcessBad(t *testing.T) {
	f := func(line, wantErr string) {
		t.Helper()
		pr := NewProcessor(Params{}, segment.Tenant{})
		out, _, err := pr.Process([]byte(line), testNow)
		if err == nil {
			t.Fatalf("Process(%q) = %q, want error", line, out)
		}
		if !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("Process(%q) error %q, want it to contain %q", line, err, wantErr)
		}
	}
	f(`{"msg":"a"`, "invalid JSON: unexpected end of line")
	f(`not json`, "invalid JSON")
	f(`[1,2,3]`, "invalid JSON")
	f(`"str"`, "invalid JSON")
	f("{\"msg\":\"\xff\"}", "invalid UTF-8")
	f(`{"msg":"a",}`, "column 12")
	f(`{"_time":"yesterday","msg":"a"}`, `cannot parse time field "_time": "yesterday"`)
	f(``, "invalid JSON")
}

func TestProcessRewrite(t *testing.T) {
	f := func(query, line, want string) {
		t.Helper()
		q, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParseParams(q, http.Header{})
		if err != nil {
			t.Fatalf("ParseParams(%q): %v", query, err)
		}
		pr := NewProcessor(p, segment.Tenant{})
		out, _, err := pr.Process([]byte(line), testNow)
		if err != nil {
			t.Fatalf("Process(%q): %v", line, err)
		}
		if string(out) != want {
			t.Fatalf("%s: Process(%q) =\n%s\nwant\n%s", query, line, out, want)
		}
		if !json.Valid(out) {
			t.Fatalf("output is not valid JSON: %s", out)
		}
	}
	f(`_time_field=date&_msg_field=log`, `{"date":"2026-01-02T04:04:05+01:00","log":"hello","n":1}`,
		`{"_time":"2026-01-02T03:04:05Z","_msg":"hello","n":1}`)
	// The first non-empty message field wins; the old _msg goes.
	f(`_msg_field=message,log`, `{"_msg":"old","message":"","log":"x \"q\""}`,
		`{"_time":"2026-11-22T10:00:00Z","message":"","_msg":"x \"q\""}`)
	// Without _time_field, a ts that is not a time stays a field.
	f(`_msg_field=msg`, `{"ts":"12ms","msg":"a"}`, `{"_time":"2026-11-22T10:00:00Z","ts":"12ms","_msg":"a"}`)
	// A top-level empty key is _msg: decolorized as _msg, replaced by the
	// _msg_field's value.
	f(`decolorize_fields=_msg`, `{"":"\u001b[31mred\u001b[0m","a":{"":"x"}}`, `{"_time":"2026-11-22T10:00:00Z","_msg":"red","a.":"x"}`)
	f(`_msg_field=m`, `{"":"old","m":"new"}`, `{"_time":"2026-11-22T10:00:00Z","_msg":"new"}`)
	// Nested objects are flattened; ignore_fields take prefixes.
	f(`ignore_fields=http.*,trace_id`, `{"http":{"ua":"curl","code":200},"trace_id":"t","user":{"id":7,"tags":[1, 2]}}`,
		`{"_time":"2026-11-22T10:00:00Z","user.id":7,"user.tags":[1, 2]}`)
	f(`extra_fields=env=prod,level=info`, `{"level":"debug","a":true,"b":null}`,
		`{"_time":"2026-11-22T10:00:00Z","a":true,"b":null,"env":"prod","level":"info"}`)
	f(`_stream_fields=service,host`, `{"host":"h1","service":"api \"x\""}`,
		`{"_time":"2026-11-22T10:00:00Z","_stream":"{host=\"h1\",service=\"api \\\"x\\\"\"}","_stream_id":"0000000000000000aa751eed2fe763400d2ca9233b935c37","host":"h1","service":"api \"x\""}`)
	// A _stream or _stream_id in the line is made anew (both IDs above are
	// the ones VictoriaLogs v1.52.1 gave the same lines).
	f(`_stream_fields=a`, `{"_stream":"{x=\"y\"}","_stream_id":"bad","a":"1"}`,
		`{"_time":"2026-11-22T10:00:00Z","_stream":"{a=\"1\"}","_stream_id":"0000000000000000c3801b9d5f989c910fdd9ecc3ff969c1","a":"1"}`)
	f(`decolorize_fields=msg`, `{"msg":"\u001b[31mred\u001b[0m plain"}`,
		`{"_time":"2026-11-22T10:00:00Z","msg":"red plain"}`)
	// A time field meaning "now" is consumed too.
	f(`_time_field=date`, `{"date":"0","a":1}`, `{"_time":"2026-11-22T10:00:00Z","a":1}`)
	f(`_time_field=date`, `{"date":"-","_time":"x","a":1}`, `{"_time":"2026-11-22T10:00:00Z","a":1}`)
	f(`_msg_field=log`, `{"_time":0,"log":"x"}`, `{"_time":"2026-11-22T10:00:00Z","_msg":"x"}`)
	// The default time fields are consumed too when rewriting.
	f(`_msg_field=log`, `{"ts":1767323045000,"log":"x"}`,
		`{"_time":"2026-01-02T03:04:05Z","_msg":"x"}`)
}

// TestProcessStreamVictoriaLogs: _stream and _stream_id of lines rebuilt
// with _stream_fields equal what VictoriaLogs v1.52.1 stored for the same
// lines in tenant 7:8 (see logstream.TestVictoriaLogs).
func TestProcessStreamVictoriaLogs(t *testing.T) {
	q, _ := url.ParseQuery("_stream_fields=service,host,kubernetes.pod")
	p, err := ParseParams(q, http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	pr := NewProcessor(p, segment.Tenant{AccountID: 7, ProjectID: 8})
	f := func(line, wantStream, wantID string) {
		t.Helper()
		out, _, err := pr.Process([]byte(line), testNow)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Stream string `json:"_stream"`
			ID     string `json:"_stream_id"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if v.Stream != wantStream || v.ID != wantID {
			t.Fatalf("Process(%s): _stream %s _stream_id %s, want %s %s", line, v.Stream, v.ID, wantStream, wantID)
		}
	}
	f(`{"_msg":"a","service":"api","host":"h1"}`, `{host="h1",service="api"}`, "0000000700000008b1806a4354a4ec2201d6268e4991f762")
	f(`{"_msg":"c"}`, `{}`, "0000000700000008e934a84adb05276890d7f7bfcadabe92")
	f(`{"_msg":"d","service":"web \"quoted\" é\u0001\t","host":"h2","kubernetes":{"pod":"p-1"}}`,
		`{host="h2",kubernetes.pod="p-1",service="web \"quoted\" é\x01\t"}`, "0000000700000008b64c220a09a4e4dcf340ccdb71e0a1d3")
	f(`{"_msg":"e","service":"","host":"h3"}`, `{host="h3"}`, "0000000700000008e1b869a3c303f27c7bfd977afb79b48e")
	f(`{"_msg":"f","service":123,"host":true}`, `{host="true",service="123"}`, "0000000700000008088c4138b2da5a7149a5fd6d8d2c17ff")
	f(`{"_msg":"g","host":"h1","service":"api","zone":"z"}`, `{host="h1",service="api"}`, "0000000700000008b1806a4354a4ec2201d6268e4991f762")
}

// TestProcessStream: Stream is the _stream a stored line carries.
func TestProcessStream(t *testing.T) {
	f := func(query, line, want string) {
		t.Helper()
		q, _ := url.ParseQuery(query)
		p, err := ParseParams(q, http.Header{})
		if err != nil {
			t.Fatal(err)
		}
		pr := NewProcessor(p, segment.Tenant{})
		if _, _, err := pr.Process([]byte(line), testNow); err != nil {
			t.Fatal(err)
		}
		if got := pr.Stream(); string(got) != want || (want == "" && got != nil) {
			t.Fatalf("%s %s: Stream() = %q, want %q", query, line, got, want)
		}
	}
	f("", `{"a":1}`, "")
	f("", `{"_stream":"{a=\"1\"}","a":1}`, `{a="1"}`)
	f("", `{"x":{"_stream":"{a=\"1\"}"}}`, "")
	f("", `{"_stream":""}`, "")
	f("_msg_field=a", `{"_stream":"{b=\"2\"}","a":"x"}`, `{b="2"}`)
	f("_stream_fields=a", `{"_stream":"{b=\"2\"}","a":"x"}`, `{a="x"}`)
	f("_stream_fields=a", `{"b":"x"}`, `{}`)
	// VictoriaLogs' GetLogRows leaves ignored names out of the stream
	// fields; an extra field of a stream field's name is its value.
	f("_stream_fields=a,b&ignore_fields=a", `{"a":"x","b":"y"}`, `{b="y"}`)
	// The field renamed _msg is no stream field any more (VictoriaLogs
	// renames it first), a later occurrence of its name still is.
	f("_stream_fields=a,b&_msg_field=a", `{"a":"x","b":"y"}`, `{b="y"}`)
	f("_stream_fields=a&_msg_field=a", `{"a":"","a":"x","a":"z"}`, `{a="z"}`)
	f("_stream_fields=a,b&ignore_fields=a*", `{"a":"x","ab":"z","b":"y"}`, `{b="y"}`)
	f("_stream_fields=a&extra_fields=a=e&ignore_fields=a", `{"a":"x"}`, `{a="e"}`)
}

func TestParseParams(t *testing.T) {
	q := url.Values{"_msg_field": {"log"}, "extra_fields": {"a=1"}}
	h := http.Header{"Vl-Msg-Field": {"message"}, "Vl-Time-Field": {"date"}, "Vl-Stream-Fields": {"app, host"}}
	p, err := ParseParams(q, h)
	if err != nil {
		t.Fatal(err)
	}
	if p.TimeField != "date" || len(p.MsgFields) != 1 || p.MsgFields[0] != "log" ||
		len(p.StreamFields) != 2 || p.StreamFields[1] != "host" || p.ExtraFields[0] != (Field{"a", "1"}) {
		t.Fatalf("ParseParams = %+v", p)
	}
	bad := func(q url.Values, h http.Header, want string) {
		t.Helper()
		if _, err := ParseParams(q, h); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("ParseParams(%v, %v) error %v, want %q", q, h, err, want)
		}
	}
	bad(url.Values{"extra_fields": {"novalue"}}, http.Header{}, "name=value")
	bad(url.Values{"_time_field": {"a,b"}}, http.Header{}, "one field")
	bad(url.Values{"debug": {"yes"}}, http.Header{}, "debug")
	if p, _ := ParseParams(url.Values{"_time_field": {"_time"}, "_msg_field": {"_msg"}}, http.Header{}); p.Rewrites() {
		t.Fatal("_time and _msg must not force a rewrite")
	}
}

func TestBatchDays(t *testing.T) {
	var b Batch
	d1 := time.Date(2026, 1, 2, 23, 59, 59, 0, time.UTC).UnixNano()
	d2 := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC).UnixNano()
	old := time.Date(1969, 12, 31, 12, 0, 0, 0, time.UTC).UnixNano()
	b.Add([]byte("a"), d1, nil)
	b.Add([]byte("b"), d2, nil)
	b.Add([]byte("c"), d1, nil)
	b.Add([]byte("d"), old, nil)
	g := b.Groups()
	if len(g) != 3 || g[0].Day != "2026-01-02" || string(g[0].Lines) != "a\nc\n" ||
		g[1].Day != "2026-01-03" || string(g[1].Lines) != "b\n" || g[2].Day != "1969-12-31" {
		t.Fatalf("groups = %+v", g)
	}
	if b.Lines != 4 || b.Bytes != 8 {
		t.Fatalf("Lines %d Bytes %d", b.Lines, b.Bytes)
	}
	if g[0].MinTime != d1 || g[0].MaxTime != d1 || !g[0].HasTime || fmt.Sprint(g[0].Streams) != "[{}]" {
		t.Fatalf("summary of day 1: %+v", g[0])
	}
	b.Add([]byte("f"), d2-1, []byte(`{a="1"}`))
	b.Add([]byte("g"), d2-5, []byte(`{a="1"}`))
	b.Add([]byte("h"), d2-3, []byte(`{a="2"}`))
	g = b.Groups()
	streams := append([]string(nil), g[0].Streams...)
	slices.Sort(streams)
	if g[0].MinTime != d1 || g[0].MaxTime != d2-1 || fmt.Sprint(streams) != `[{a="1"} {a="2"} {}]` {
		t.Fatalf("summary of day 1: %+v", g[0])
	}
	b.Reset()
	b.Add([]byte("e"), d2, nil)
	if g := b.Groups(); len(g) != 1 || g[0].Day != "2026-01-03" || string(g[0].Lines) != "e\n" {
		t.Fatalf("after Reset: %+v", g)
	}
}
