package otlp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/ingest"
)

// The oracle: testdata/victorialogs.jsonl is what VictoriaLogs v1.52.1
// stored for goldenRequest(), posted to /insert/opentelemetry/v1/logs
// (Content-Type application/x-protobuf) and read back with
// `* | sort by (_time)` from /select/logsql/query. To make it again, run
// a VictoriaLogs with an empty -storageDataPath and -retentionPeriod=100y
// (the records are from 2023) and
//
//	go test -run TestVictoriaLogsGolden -vl-url=http://127.0.0.1:PORT ./internal/ingest/otlp/
var vlURL = flag.String("vl-url", "", "regenerate testdata/victorialogs.jsonl from the VictoriaLogs at this URL")

const goldenFile = "testdata/victorialogs.jsonl"

// goldenRequest covers what the mapping decides: every value kind, nested
// and in arrays, resource (stream) and scope fields, severities, ids,
// event names, times, unknown fields. Its records have distinct times in
// order (the last has none: VictoriaLogs stamps it last) and no field
// name twice.
func goldenRequest() pb {
	const t0 = 1700000000000000000
	trace := []byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	span := []byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	arr := av(sv(`q"uote`), sv("ctl\x01\ttab"), sv("é\u2028"), sv(`back\slash`), iv(-7), dv(1e21), dv(0.1),
		dv(math.NaN()), dv(math.Inf(-1)), bv(false), pb{}, byv([]byte("hi")), av(), av(iv(1), av(sv("x"))),
		kvl(kv("a", iv(1)), kv("b", sv("x")), kv("a", iv(2)), kv("e", kvl()), kv("n", pb{}), pb(nil).msg(2, iv(9))))
	return request(
		junk(resourceLogs(attrs(1, kv("service.name", sv("api")), kv("host", kvl(kv("name", sv("h1")), kv("id", iv(7)))),
			kv("tags", av(sv("a"), sv("b"))), kv("empty", sv("")), kv("ratio", dv(0.5))),
			scopeLogs(pb(nil).str(1, "lib").str(2, "1.2").msg(3, kv("team", sv("core"))),
				rec(t0+1, sv("hello"), kv("i", iv(-3)), kv("big", dv(1e21)), kv("small", dv(1.5e-7)), kv("nan", dv(math.NaN())),
					kv("inf", dv(math.Inf(1))), kv("bytes", byv([]byte{0, 1, 2, 0xfe, 0xff})), kv("ok", bv(true)), kv("arr", arr),
					kv("m", kvl(kv("x", iv(1)), kv("y", kvl(kv("z", sv("deep")))), kv("l", av(sv("w")))))).
					varint(2, 9).bytes(9, trace).bytes(10, span).fixed32(8, 1).varint(7, 3),
				rec(t0+2, iv(42)).varint(2, 17).str(3, "custom").str(12, "login"),
				rec(t0+3, kvl(kv("foo", sv("bar")), kv("n", kvl(kv("x", iv(1)))))).varint(2, 25),
				rec(t0+4, av(sv("a"), iv(1))).varint(2, math.MaxUint32),
			),
			scopeLogs(pb{}, rec(t0+5, byv([]byte("foo bar")))),
			scopeLogs(nil, pb(nil).fixed64(11, t0+6).msg(6, kv("", sv("from an empty key")))),
		)),
		resourceLogs(nil, junk(scopeLogs(junk(pb(nil).str(1, "other")), junk(rec(t0+7, bv(false), kv("k", junk(sv("v")))))))),
		resourceLogs(attrs(1, kv("r", sv("last"))), scopeLogs(nil, rec(0, sv("no time")))),
	)
}

func TestVictoriaLogsGolden(t *testing.T) {
	body := goldenRequest()
	if *vlURL != "" {
		regenerateGolden(t, body)
	}
	golden, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	req, err := DecodeProtobuf(body)
	if err != nil {
		t.Fatal(err)
	}
	var rows []ingest.Row
	if err := req.Rows(func(r *ingest.Row) error {
		// Copy the strings too: Rows reuses those it makes.
		fields := make([]ingest.Field, len(r.Fields))
		for i, f := range r.Fields {
			fields[i] = ingest.Field{Name: strings.Clone(f.Name), Value: strings.Clone(f.Value)}
		}
		rows = append(rows, ingest.Row{Time: r.Time, Fields: fields, Stream: r.Stream})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(golden)), "\n") {
		lines = append(lines, l)
	}
	if len(lines) != len(rows) {
		t.Fatalf("%d rows, VictoriaLogs stored %d", len(rows), len(lines))
	}
	for i, line := range lines {
		var vl map[string]string
		if err := json.Unmarshal([]byte(line), &vl); err != nil {
			t.Fatalf("golden line %d: %v", i, err)
		}
		r := &rows[i]

		vt, err := time.Parse(time.RFC3339Nano, vl["_time"])
		if err != nil {
			t.Fatalf("golden line %d: _time: %v", i, err)
		}
		if r.Time == 0 {
			if vt.Before(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("row %d: no time, but VictoriaLogs stamped %v", i, vt)
			}
		} else if vt.UnixNano() != r.Time {
			t.Errorf("row %d: time %d, VictoriaLogs %d", i, r.Time, vt.UnixNano())
		}

		var stream []string
		for _, f := range r.Fields[:r.Stream] {
			if f.Value != "" {
				stream = append(stream, f.Name+"="+strconv.Quote(f.Value))
			}
		}
		slices.Sort(stream)
		if got, want := "{"+strings.Join(stream, ",")+"}", vl["_stream"]; got != want {
			t.Errorf("row %d: stream %s, VictoriaLogs %s", i, got, want)
		}

		got := map[string]string{}
		for _, f := range r.Fields {
			if _, dup := got[f.Name]; dup {
				t.Fatalf("row %d: field %s twice", i, f.Name)
			}
			if f.Value != "" {
				got[f.Name] = f.Value
			}
		}
		// VictoriaLogs' storage gives a row without a message its
		// -defaultMsgValue; the caller's pipeline decides that.
		if _, ok := got["_msg"]; !ok && strings.HasPrefix(vl["_msg"], "missing _msg field") {
			delete(vl, "_msg")
		}
		delete(vl, "_time")
		delete(vl, "_stream")
		delete(vl, "_stream_id")
		if !maps.Equal(got, vl) {
			t.Errorf("row %d:\n got %v\nwant %v (VictoriaLogs)", i, got, vl)
		}
	}
}

// regenerateGolden posts body to the VictoriaLogs at *vlURL and writes
// what it stored to goldenFile.
func regenerateGolden(t *testing.T, body []byte) {
	resp, err := http.Post(*vlURL+"/insert/opentelemetry/v1/logs", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("insert: %s: %s", resp.Status, msg)
	}
	resp, err = http.Get(*vlURL + "/internal/force_flush")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = http.PostForm(*vlURL+"/select/logsql/query", url.Values{"query": {"* | sort by (_time)"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			fmt.Fprintf(&out, "%s\n", sc.Bytes())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenFile, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
