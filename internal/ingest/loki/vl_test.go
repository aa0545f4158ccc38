package loki

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/segment"
)

// With -vl=host:port naming a VictoriaLogs v1.52.1 started with a large
// -retentionPeriod (say 100y), TestVLGolden rewrites the golden files
// from it and TestVLStatus checks the status of the bodies of
// errors_test.go against it:
//
//	victoria-logs -httpListenAddr=127.0.0.1:19428 -storageDataPath=$(mktemp -d) -retentionPeriod=100y &
//	go test ./internal/ingest/loki -run VL -args -vl=127.0.0.1:19428
//
// Each case goes to a tenant of its own, so the server must be fresh.
var vlAddr = flag.String("vl", "", "host:port of a VictoriaLogs v1.52.1 to check against and rewrite testdata/*.vl.ndjson from")

const vlMissingMsg = "missing _msg field; see https://docs.victoriametrics.com/victorialogs/keyconcepts/#message-field"

// goldenPB is the protobuf golden body.
var goldenPB = []tStream{
	{promLabels: " {job=\"api\", level=\"info\", q=\"a\\\"b\\\\c\\n\\u00e9\\x41\", empty=\"\", raw=`r\\n`}\n", entries: []tEntry{
		tAt(1764115300000000000, "plain pb"),
		{sec: 1764115301, nanos: 123456789, line: `{"msg":"hello","a":{"b":1,"c":null},"arr":[1, "x"],"":"emptykey"}`, meta: fs("trace_id", "abc", "n", "5", "skipped", "")},
		tAt(0, "now entry"),
		tAt(1764115302000000000, "", f("only", "meta")),
		tAt(1764115303000000000, ` {"message":"m","msg":"","keep":{"x":1,"y\u0041":{"z" : 2}}} `, f("msg", "meta msg")),
		tAt(1764115303500000000, "{\"deep\":{\"x\":{\"y\":\"v\"}},\"s\":\"tab\\there\",\"n\":-1.5e3}"),
	}},
	{promLabels: `{}`, entries: []tEntry{tAt(1764115304000000000, "no labels")}},
	{promLabels: `{job="other",}`, entries: []tEntry{tAt(1764115305000000000, "trailing comma", f("k", "v"))}},
	{promLabels: `{job="api", level="info"}`},
}

type goldenCase struct {
	name   string
	tenant uint32
	json   bool
	params string
	o      Options
}

var vlOptions = Options{ParseMessage: true, MessageFieldsPrefix: "m.", MsgFields: []string{"msg", "message"}, PreserveKeys: []string{"keep"}}

var goldenCases = []goldenCase{
	{"json", 1, true, "", parse},
	{"json-options", 2, true, "_msg_field=msg,message&message_fields_prefix=m.&preserve_json_keys=keep", vlOptions},
	{"json-raw", 3, true, "disable_message_parsing=true", Options{}},
	{"pb", 4, false, "", parse},
	{"pb-options", 5, false, "_msg_field=msg,message&message_fields_prefix=m.&preserve_json_keys=keep", vlOptions},
	{"pb-raw", 6, false, "disable_message_parsing=1", Options{}},
}

func goldenBody(t *testing.T, json bool) []byte {
	if !json {
		return encodeProtobuf(goldenPB)
	}
	b, err := os.ReadFile("testdata/push.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// vlPost posts a push body (protobuf: snappy-compressed) to tenant
// account and returns the status and the response text.
func vlPost(t *testing.T, account uint32, json bool, params string, body []byte) (int, string) {
	t.Helper()
	ct := "application/json"
	if !json {
		ct = "application/x-protobuf"
		body = snappyEncode(body)
	}
	req, err := http.NewRequest("POST", "http://"+*vlAddr+"/insert/loki/api/v1/push?"+params, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("AccountID", strconv.FormatUint(uint64(account), 10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(text)
}

// vlQuery flushes VictoriaLogs and returns the lines of `query` in tenant
// account.
func vlQuery(t *testing.T, account uint32, query string) []string {
	t.Helper()
	resp, err := http.Get("http://" + *vlAddr + "/internal/force_flush")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	req, _ := http.NewRequest("POST", "http://"+*vlAddr+"/select/logsql/query", strings.NewReader("query="+query))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("AccountID", strconv.FormatUint(uint64(account), 10))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("query: %d %s", resp.StatusCode, text)
	}
	return strings.Split(strings.TrimSpace(string(text)), "\n")
}

// pairs parses a JSON object line into its string members in order,
// duplicates kept.
func pairs(t *testing.T, line string) []ingest.Field {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(line))
	var out []ingest.Field
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: %v", line, err)
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		v, err := d.Token()
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		vs, ok := v.(string)
		if !ok {
			t.Fatalf("%s: a value that is not a string", line)
		}
		out = append(out, ingest.Field{Name: k.(string), Value: vs})
	}
	return out
}

// vlRow is one stored row: its time (MaxInt64 for none) and its other
// fields sorted by name, duplicates in order.
type vlRow struct {
	time   int64
	fields []ingest.Field
}

func toVLRow(t *testing.T, line string) vlRow {
	r := vlRow{time: 1<<63 - 1}
	for _, f := range pairs(t, line) {
		if f.Name == "_time" {
			tm, err := time.Parse(time.RFC3339Nano, f.Value)
			if err != nil {
				t.Fatal(err)
			}
			r.time = tm.UnixNano()
			continue
		}
		r.fields = append(r.fields, f)
	}
	sort.SliceStable(r.fields, func(i, j int) bool { return r.fields[i].Name < r.fields[j].Name })
	return r
}

func sortRows(rows []vlRow) {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].time < rows[j].time })
}

// TestVLGolden compares the rows of the golden bodies, as RowWriter
// writes them, with what VictoriaLogs stored for them
// (testdata/<case>.vl.ndjson): the same fields and values, _stream and
// _stream_id included, and the same times but for the entry without a
// timestamp (VictoriaLogs gives it the ingestion time, we give none).
// VictoriaLogs stores a default _msg where a row has none (or an empty
// one); we leave that to the caller.
func TestVLGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			body := goldenBody(t, c.json)
			path := filepath.Join("testdata", c.name+".vl.ndjson")
			if *vlAddr != "" {
				if code, text := vlPost(t, c.tenant, c.json, c.params, body); code != 204 {
					t.Fatalf("VictoriaLogs: %d %s", code, text)
				}
				lines := vlQuery(t, c.tenant, "*")
				sort.Strings(lines)
				if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var want []vlRow
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				want = append(want, toVLRow(t, line))
			}
			sortRows(want)

			rows, err := decodeRows(t, c.json, body, c.o)
			if err != nil {
				t.Fatal(err)
			}
			w := ingest.RowWriter{Tenant: segment.Tenant{AccountID: c.tenant}}
			var got []vlRow
			for _, r := range rows {
				row := ingest.Row{Time: r.Time, Fields: r.Fields, Stream: r.Stream}
				got = append(got, toVLRow(t, string(w.Append(nil, &row))))
			}
			sortRows(got)
			if len(got) != len(want) {
				t.Fatalf("%d rows, VictoriaLogs has %d", len(got), len(want))
			}
			for i := range got {
				g, v := got[i], want[i]
				if g.time != 1<<63-1 && g.time != v.time {
					t.Errorf("row %d: time %d, VictoriaLogs %d", i, g.time, v.time)
				}
				if !hasField(g.fields, "_msg") {
					g.fields = append(g.fields, ingest.Field{Name: "_msg", Value: vlMissingMsg})
					sort.SliceStable(g.fields, func(i, j int) bool { return g.fields[i].Name < g.fields[j].Name })
				}
				if fmt.Sprint(g.fields) != fmt.Sprint(v.fields) {
					t.Errorf("row %d:\ngot           %q\nVictoriaLogs  %q", i, g.fields, v.fields)
				}
			}
		})
	}
}

func hasField(fs []ingest.Field, name string) bool {
	for _, f := range fs {
		if f.Name == name {
			return true
		}
	}
	return false
}

// TestVLStatus checks the bodies of errors_test.go against
// VictoriaLogs: 204 for those we take, with as many rows as entries, 400
// for those we refuse.
func TestVLStatus(t *testing.T) {
	if *vlAddr == "" {
		t.Skip("no -vl")
	}
	type sent struct {
		name    string
		account uint32
		entries int
	}
	var ok []sent
	check := func(name string, account uint32, json bool, body []byte, wantOK bool, entries int) {
		code, text := vlPost(t, account, json, "", body)
		if (code == 204) != wantOK || code != 204 && code != 400 {
			t.Errorf("%s: VictoriaLogs %d %s; want ok=%v", name, code, text, wantOK)
		}
		if code == 204 {
			ok = append(ok, sent{name, account, entries})
		}
	}
	for i, c := range jsonCases {
		check(fmt.Sprintf("json %.80q", c.body), uint32(100+i), true, []byte(c.body), c.ok, c.entries)
	}
	for i, c := range pbCases() {
		check("protobuf "+c.name, uint32(200+i), false, c.body, c.ok, c.entries)
	}
	for _, s := range ok {
		lines := vlQuery(t, s.account, "* | count() n")
		if want := fmt.Sprintf(`{"n":"%d"}`, s.entries); len(lines) != 1 || lines[0] != want {
			t.Errorf("%s: VictoriaLogs stored %q, want %s", s.name, lines, want)
		}
	}
}
