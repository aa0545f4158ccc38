package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestVictoriaLogsLines is a randomized differential test of line
// ingestion: generated NDJSON lines (nested and empty objects, arrays,
// every number form, escapes, odd keys, time fields in several forms) go
// to VictoriaLogs v1.52.1 and to spate serve over /insert/jsonline with
// random ingestion parameters, each request in a tenant of its own; then
// `*` over /select/logsql/query must give the same rows and statuses on
// both, and `spate query '*' FILE` over the same lines the same rows too.
// The lines keep to what the two must store alike: none of the documented
// differences (docs/serve.md, docs/query.md) is generated, such as non-JSON
// lines, msg/message/log without _msg_field, ts/time without _time_field,
// duplicate names, lone surrogates, times that do not parse or fall outside
// VictoriaLogs' retention. The seed is fixed and the count bounded;
// SPATE_LINEDIFF_REQUESTS and SPATE_LINEDIFF_SEED change them for a larger
// run. SPATE_LINEDIFF_EXPLORE=1 generates everything, the documented
// differences included, and logs the differences instead of failing on
// them (to look for new ones by hand). It runs when SPATE_VICTORIALOGS
// names the binary.
func TestVictoriaLogsLines(t *testing.T) {
	vlBin := victoriaLogsBin(t)
	requests := envInt("SPATE_LINEDIFF_REQUESTS", 150)
	seed := uint64(envInt("SPATE_LINEDIFF_SEED", 1))
	explore := os.Getenv("SPATE_LINEDIFF_EXPLORE") == "1"
	// Times up to 2125 are kept (the default keeps 2 days ahead; 100y is the most it takes).
	vl := startVictoriaLogsArgs(t, vlBin, "-futureRetention=99y")
	srv := startServe(t, t.TempDir())
	g := &lineGen{r: rand.New(rand.NewPCG(seed, 7)), strict: !explore}
	report := func(what string, rq *lineReq, d []string) {
		t.Helper()
		if len(d) == 0 {
			return
		}
		msg := fmt.Sprintf("%s, args %s (header %v), status VictoriaLogs %d spate %d:\n  %s", what, rq.args.Encode(), rq.header, rq.vlCode, rq.spCode, strings.Join(d, "\n  "))
		if explore {
			t.Log(msg)
		} else {
			t.Error(msg)
		}
	}
	reqs := make([]*lineReq, requests)
	for i := range reqs {
		reqs[i] = g.request()
	}
	t0 := time.Now()
	for i, rq := range reqs {
		account := strconv.Itoa(i + 1)
		rq.vlCode = postLines(t, vl, rq, account)
		rq.spCode = postLines(t, srv.url, rq, account)
	}
	forceFlush(t, vl)
	t1 := time.Now()
	now := func(ts string) bool {
		tm, err := time.Parse(time.RFC3339Nano, ts)
		return err == nil && !tm.Before(t0.Add(-time.Second)) && !tm.After(t1.Add(time.Second))
	}
	fileDir := t.TempDir()
	var lines, rowsEqual, files, filesEqual int
	for i, rq := range reqs {
		account := strconv.Itoa(i + 1)
		lines += len(rq.lines)
		want := selectAll(t, vl, account)
		got := selectAll(t, srv.url, account)
		d := compareLineRows(rq, want, got, now, false)
		if rq.vlCode != rq.spCode {
			d = append(d, fmt.Sprintf("status: spate %d, VictoriaLogs %d; body:\n%s", rq.spCode, rq.vlCode, rq.body()))
		}
		rowsEqual += len(rq.lines) - len(d)
		report("serve", rq, d)

		// spate query over a file of the same lines, when the request's
		// parameters have flags.
		flags, ok := rq.queryFlags()
		if !ok {
			continue
		}
		files++
		path := filepath.Join(fileDir, account+".ndjson")
		if err := os.WriteFile(path, rq.body(), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runCLI(t, append(append([]string{"query", "--input-format", "json", "--binary"}, flags...), "*", path)...)
		if code != ExitOK {
			t.Errorf("spate query %v: exit %d: %s", flags, code, stderr)
			continue
		}
		d = compareLineRows(rq, want, decodeRows(t, out), now, true)
		if len(d) == 0 {
			filesEqual++
		}
		report("query", rq, d)
	}
	t.Logf("%d requests, %d lines; serve: %d lines without a difference; query: %d files, %d equal", len(reqs), lines, rowsEqual, files, filesEqual)
}

// lineReq is one generated /insert/jsonline request.
type lineReq struct {
	args   url.Values // ingestion parameters
	header bool       // sent as VL-* headers rather than query args
	lines  []string   // without their '\n'
	// Results.
	vlCode, spCode int
}

func (rq *lineReq) body() []byte {
	var b bytes.Buffer
	for _, l := range rq.lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// lineParamHeaders are the headers of the ingestion parameters.
var lineParamHeaders = map[string]string{
	"_msg_field":         "VL-Msg-Field",
	"_time_field":        "VL-Time-Field",
	"_stream_fields":     "VL-Stream-Fields",
	"ignore_fields":      "VL-Ignore-Fields",
	"decolorize_fields":  "VL-Decolorize-Fields",
	"extra_fields":       "VL-Extra-Fields",
	"preserve_json_keys": "VL-Preserve-JSON-Keys",
}

// queryFlags returns the flags of spate query that read the lines as
// VictoriaLogs does with rq's parameters, and false if rq has parameters
// spate query has no flag for.
func (rq *lineReq) queryFlags() ([]string, bool) {
	msg, tf := "_msg", "_time"
	for k, v := range rq.args {
		switch k {
		case "_msg_field":
			msg = v[0]
		case "_time_field":
			tf = v[0]
		default:
			return nil, false
		}
	}
	if strings.Contains(msg, ",") || strings.Contains(tf, ",") {
		return nil, false
	}
	return []string{"--msg-field", msg, "--time-field", tf}, true
}

func postLines(t *testing.T, base string, rq *lineReq, account string) int {
	t.Helper()
	u := base + "/insert/jsonline"
	if !rq.header {
		u += "?" + rq.args.Encode()
	}
	req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(rq.body()))
	req.Header.Set("Content-Type", "application/stream+json")
	req.Header.Set("AccountID", account)
	if rq.header {
		for k, v := range rq.args {
			req.Header.Set(lineParamHeaders[k], v[0])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%v; args %s (header %v), body:\n%q", err, rq.args.Encode(), rq.header, rq.body())
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// selectAll returns every row of a tenant.
func selectAll(t *testing.T, base, account string) []map[string]string {
	t.Helper()
	r := selectReq{http.MethodPost, "/select/logsql/query", argsOf("query", "*", "start", "1700-01-01T00:00:00Z", "end", "2250-01-01T00:00:00Z"), []string{"AccountID", account}}
	a := fetchSelect(t, base, r)
	if a.code != http.StatusOK {
		t.Fatalf("%s %s: %s", base, r, a)
	}
	return decodeRows(t, a.body)
}

func decodeRows(t *testing.T, b []byte) []map[string]string {
	t.Helper()
	var rows []map[string]string
	for line := range bytes.Lines(b) {
		var r map[string]string
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		rows = append(rows, r)
	}
	return rows
}

// compareLineRows compares VictoriaLogs' rows (want) with spate's (got) for
// the lines of rq and returns the differences, at most one per line: rows
// that carry a line id (lid) are matched by it, the others as a multiset.
// Times within the run count as the ingestion time. file says that got
// comes from spate query over a file.
func compareLineRows(rq *lineReq, want, got []map[string]string, now func(string) bool, file bool) []string {
	norm := func(rows []map[string]string) (map[string]string, []string) {
		byID := map[string]string{}
		var rest []string
		for _, r := range rows {
			if _, ok := rq.args["_stream_fields"]; !ok {
				delete(r, "_stream")
				delete(r, "_stream_id")
			}
			if now(r["_time"]) {
				r["_time"] = "NOW"
			}
			b, _ := json.Marshal(r) // keys sorted
			if id, ok := r["lid"]; ok {
				byID[id] = string(b)
			} else {
				rest = append(rest, string(b))
			}
		}
		slices.Sort(rest)
		return byID, rest
	}
	w, wr := norm(want)
	if file {
		// spate query gives a line without a time no _time, where
		// VictoriaLogs stamps the ingestion time.
		for _, r := range got {
			if _, ok := r["_time"]; !ok {
				r["_time"] = "NOW"
			}
		}
	}
	g, gr := norm(got)
	var d []string
	ids := slices.Sorted(maps.Keys(w))
	for k := range g {
		if _, ok := w[k]; !ok {
			ids = append(ids, k)
		}
	}
	for _, k := range ids {
		if w[k] == g[k] {
			continue
		}
		line := ""
		if id, err := strconv.Atoi(k); err == nil && id < len(rq.lines) {
			line = rq.lines[id]
		}
		d = append(d, fmt.Sprintf("line %s %.300q\n    VictoriaLogs %.600s\n    spate        %.600s", k, line, w[k], g[k]))
	}
	if !slices.Equal(wr, gr) {
		d = append(d, fmt.Sprintf("rows without lid:\n    VictoriaLogs %.1500q\n    spate        %.1500q", wr, gr))
	}
	return d
}

// lineGen makes random requests. A strict one keeps to the lines and
// parameters VictoriaLogs and spate must store alike (see
// TestVictoriaLogsLines).
type lineGen struct {
	r      *rand.Rand
	strict bool
}

func (g *lineGen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

func (g *lineGen) request() *lineReq {
	rq := &lineReq{args: url.Values{}, header: g.r.IntN(4) == 0}
	set := func(k string, p float64, v ...string) {
		if g.r.Float64() < p {
			rq.args.Set(k, g.pick(v...))
		}
	}
	if g.strict {
		// No msg, message or log: spate reads them as _msg without
		// _msg_field; no list of time fields, which spate refuses; no
		// message field that nested objects could make (a.b) beside a
		// _msg of the line: both would be _msg.
		set("_msg_field", 0.5, "m", "nosuch", "_msg", "m,nosuch")
		set("_time_field", 0.5, "ts", "a.t", "_time", "@timestamp", "t")
		set("_stream_fields", 0.25, "host", "host,app", "a.b", "level,host")
		set("ignore_fields", 0.2, "b", "x*", "secret,tok*", "a.b")
		set("decolorize_fields", 0.2, "m", "_msg,a", "c")
	} else {
		set("_msg_field", 0.5, "msg", "message,msg", "a.b", "nosuch", "_msg", "m", "msg,log")
		set("_time_field", 0.5, "ts", "time", "a.t", "_time", "@timestamp", "ts,time", "t")
		set("_stream_fields", 0.25, "host", "host,app", "a.b", "level,host", "msg")
		set("ignore_fields", 0.2, "b", "x*", "secret,tok*", "a.b", "ts")
		set("decolorize_fields", 0.2, "msg", "_msg,a", "c")
	}
	set("extra_fields", 0.2, "env=prod", "a=1,b=2", "host=h9", "z=x y")
	tf := rq.args.Get("_time_field")
	mf := rq.args.Get("_msg_field")
	streams := strings.Split(rq.args.Get("_stream_fields"), ",")
	n := 1 + g.r.IntN(12)
	for i := range n {
		rq.lines = append(rq.lines, g.line(i, tf, mf, streams))
	}
	return rq
}

// line returns line number id of a request whose time and message fields
// are tf and mf ("" when not set). A stream field occurs at most once:
// VictoriaLogs v1.52.1 panics on a stream with a name twice, and then
// answers no more requests.
func (g *lineGen) line(id int, tf, mf string, streams []string) string {
	k := g.r.IntN(40)
	if g.strict {
		k = 4 + g.r.IntN(36) // JSON objects only
	}
	switch k {
	case 0:
		return g.pick("plain text line", "  ", "", "\t", "x=1 y=2", `level=info msg="hi"`, "2026-01-02T03:04:05Z plain with a time")
	case 1:
		return g.pick(`{"a":1`, `{"a":`, `{"a"`, `{`, `{"a":"x}`, `{"a":1}}`, `{"a":1} x`, `{"a":1,}`, `{'a':1}`, `{a:1}`, `{"a":01}`, `{"a":.5}`, `{"a":1.}`, `{"a":+1}`, `{"a":NaN}`, `{"a":-Inf}`, `{"a":1e}`, `{"a":tru}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"tab	in"}`, `{"a":1}{"b":2}`)
	case 2:
		return g.pick(`[1,2]`, `[]`, `[{"a":1}]`, `"str"`, `12`, `true`, `null`, `{}`, ` {"lid":"x"} `, `{"":""}`, `{"_msg":""}`, `{"_msg":null}`)
	case 3:
		return g.pick("{\"a\":\"\xff\xfe\"}", "\xff plain", "{\"a\":\"\xc3\"}", "{\"\xe2\x82\":1}", "{\"a\":\"ok\"}\xff", "{\"a\":\"\xed\xa0\x80\"}")
	}
	var b strings.Builder
	b.WriteByte('{')
	first := true
	seen := map[string]bool{}
	field := func(k, v string) {
		name, _ := strconv.Unquote(k)
		if g.strict {
			// No name twice.
			if seen["="+name] {
				return
			}
			seen["="+name] = true
		}
		for _, f := range streams {
			if before, _, _ := strings.Cut(f, "."); name == f || name == before {
				if seen[f] {
					return
				}
				seen[f] = true
			}
		}
		if !first {
			b.WriteByte(',')
			if g.r.IntN(8) == 0 {
				b.WriteString(g.pick(" ", "\t"))
			}
		}
		first = false
		b.WriteString(k)
		b.WriteString(g.pick(":", ":", ":", " : "))
		b.WriteString(v)
	}
	lidAt := g.r.IntN(3)
	if lidAt == 0 {
		field(`"lid"`, strconv.Quote(strconv.Itoa(id)))
	}
	// The time.
	tkey := tf
	switch {
	case g.strict && tkey == "":
		tkey = "_time"
	case g.strict:
	case tkey == "" || g.r.IntN(6) == 0:
		tkey = g.pick("_time", "_time", "ts", "time", "timestamp", "@timestamp", "t")
	}
	if strings.Contains(tkey, ",") {
		tkey = strings.Split(tkey, ",")[g.r.IntN(2)]
	}
	if g.r.IntN(5) > 0 {
		if a, b, ok := strings.Cut(tkey, "."); ok && g.r.IntN(2) == 0 {
			field(strconv.Quote(a), "{"+strconv.Quote(b)+":"+g.timeValue()+"}")
		} else {
			field(strconv.Quote(tkey), g.timeValue())
		}
	}
	// The message.
	mkey := mf
	switch {
	case g.strict && (mkey == "" || g.r.IntN(4) == 0):
		mkey = g.pick("_msg", "_msg", "", "m")
	case g.strict:
	case mkey == "" || g.r.IntN(4) == 0:
		mkey = g.pick("_msg", "_msg", "msg", "message", "log", "m")
	}
	if strings.Contains(mkey, ",") {
		mkey = strings.Split(mkey, ",")[g.r.IntN(2)]
	}
	if g.r.IntN(6) > 0 {
		field(strconv.Quote(mkey), g.msgValue())
	}
	for range g.r.IntN(6) {
		field(g.key(), g.value(0))
	}
	if lidAt == 1 {
		field(`"lid"`, strconv.Quote(strconv.Itoa(id)))
	}
	if !g.strict && g.r.IntN(8) == 0 {
		// A duplicate key.
		field(g.pick(`"a"`, `"msg"`, `"_msg"`, `"host"`), g.value(1))
	}
	if lidAt == 2 {
		field(`"lid"`, strconv.Quote(strconv.Itoa(id)))
	}
	b.WriteByte('}')
	return b.String()
}

func (g *lineGen) key() string {
	if g.strict {
		// Not "", _msg and its candidates, stream names or dotted names
		// (which nested objects could make twice).
		if g.r.IntN(15) == 0 {
			return g.pick(`"k\u00e9y\"q"`, `"a\/b"`)
		}
		return strconv.Quote(g.pick("a", "b", "c", "host", "app", "level", "x", "xa", "secret", "token", "ключ", "键", "e😀"))
	}
	switch g.r.IntN(30) {
	case 0:
		return `""`
	case 1:
		return strconv.Quote(strings.Repeat("k", 120+g.r.IntN(20)))
	case 2:
		return `"k\u00e9y\"q"`
	case 3:
		return `"a\/b"`
	}
	return strconv.Quote(g.pick("a", "b", "c", "host", "app", "level", "x.y", "x", "xa", "secret", "token", "ключ", "键", "a.b", "msg", "_msg", "_stream", "_stream_id", "m", "log", "e😀"))
}

func (g *lineGen) value(depth int) string {
	n := 9
	if depth > 4 {
		n = 6
	}
	switch g.r.IntN(n) {
	case 0, 1:
		return g.str()
	case 2:
		return g.number()
	case 3:
		return g.pick("true", "false", "null")
	case 4:
		return g.pick(`"0"`, `""`, `"-"`, `" "`)
	case 5:
		return g.str()
	case 6, 7:
		// An object.
		var b strings.Builder
		b.WriteByte('{')
		keys := map[string]bool{}
		for range g.r.IntN(4) {
			k := g.key()
			if g.strict && keys[k] {
				continue // no name twice
			}
			keys[k] = true
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			b.WriteString(k)
			b.WriteByte(':')
			b.WriteString(g.value(depth + 1))
		}
		b.WriteByte('}')
		return b.String()
	default:
		// An array.
		var b strings.Builder
		b.WriteByte('[')
		for i := range g.r.IntN(4) {
			if i > 0 {
				b.WriteString(g.pick(",", ", "))
			}
			b.WriteString(g.value(depth + 1))
		}
		b.WriteByte(']')
		return b.String()
	}
}

func (g *lineGen) number() string {
	return g.pick("0", "-0", "1", "-1", "42", "3.14", "-2.50", "1e3", "1E+3", "2.5e-7", "1e400", "-1e400", "1e-400",
		"123456789012345678901234567890", "18446744073709551616", "9223372036854775807", "-9223372036854775808",
		"9007199254740993", "0.1000000000000000055511151231257827", "0.0", "-0.0e0", "1.000")
}

func (g *lineGen) str() string {
	switch g.r.IntN(12) {
	case 0:
		return `"` + strings.Repeat("long ", 100+g.r.IntN(4000)) + `"`
	case 1:
		if g.strict { // no lone surrogates, no raw control characters
			return g.pick(`"\u0000nul"`, `"\ud83d\ude00"`, `"a\/b"`, `"\b\f\n\r\t"`, `"\"q\\"`, `"\u001b[31mred\u001b[0m"`)
		}
		return g.pick(`"\u0000nul"`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`, `"a\/b"`, `"\b\f\n\r\t"`, `"\"q\\"`, `"\u001b[31mred\u001b[0m"`, "\"\x1b[1mbold\x1b[0m\"")
	case 2:
		return g.pick(`"é用户😀"`, `"ключ"`, `"\u00e9"`)
	}
	return strconv.Quote(g.pick("hello", "error", "a b c", "x", "GET /", "h1", "h2", "auth", "web", "1.5s", "2KB", "192.168.0.1"))
}

func (g *lineGen) msgValue() string {
	switch g.r.IntN(6) {
	case 0:
		return g.value(1)
	case 1:
		return g.number()
	}
	return g.str()
}

// timeValue returns a time field's value in one of many forms.
func (g *lineGen) timeValue() string {
	if g.strict {
		// Times that parse, inside VictoriaLogs' retention, with a zone.
		date := fmt.Sprintf("%s-%02d-%02d", g.pick("2024", "2026", "2100"), 1+g.r.IntN(12), 1+g.r.IntN(28))
		clock := fmt.Sprintf("%02d:%02d:%02d", g.r.IntN(24), g.r.IntN(60), g.r.IntN(60))
		switch g.r.IntN(4) {
		case 0:
			return g.pick("1709618828", "1709618828123", "1709618828123456", "1709618828123456789", `"1709618828"`, `"1709618828123"`, `"1709618828.5"`)
		case 1:
			return g.pick(`""`, `null`, `"0"`, `"-"`)
		}
		return `"` + date + "T" + clock + g.pick("", ".1", ".123", ".123456", ".123456789") + g.pick("Z", "+05:30", "-08:00") + `"`
	}
	year := g.pick("2024", "2026", "1999", "2100", "1900", "1970", "0001", "9999", "2199")
	date := fmt.Sprintf("%s-%02d-%02d", year, 1+g.r.IntN(12), 1+g.r.IntN(28))
	clock := fmt.Sprintf("%02d:%02d:%02d", g.r.IntN(24), g.r.IntN(60), g.r.IntN(60))
	frac := g.pick("", "", ".1", ".123", ".123456", ".123456789", ".1234567891234", ",5", ".")
	zone := g.pick("Z", "Z", "+05:30", "-08:00", "", "+0530", "+05", "z", "+25:00")
	sep := g.pick("T", "T", " ", "t")
	unix := g.pick("1709618828", "1709618828123", "1709618828123456", "1709618828123456789", "1709618828.5", "1709618828.123456789123",
		"1.709618828e9", "1.709618828123e12", "-1", "0.0", "00", "1", "99999999999999999999", "1e30", "17096188281234567890", "1709618828.", ".5", "0x10", "1_709_618_828", "+1709618828")
	switch g.r.IntN(10) {
	case 0, 1, 2, 3:
		return `"` + date + sep + clock + frac + zone + `"`
	case 4:
		return unix
	case 5:
		return `"` + unix + `"`
	case 6:
		return g.pick(`"yesterday"`, `""`, `null`, `"0"`, `"-"`, `true`, `{"x":1}`, `[1]`, `"2024-13-45T00:00:00Z"`, `"2024-02-30T00:00:00Z"`, `"2024-01-01"`, `"2024-01-01T25:00:00Z"`, `"1970-01-01T00:00:00Z"`, `" 2024-01-01T00:00:00Z"`, `"10/Oct/2024:13:55:36 -0700"`, `"Oct 11 22:14:15"`)
	}
	return `"2026-01-02T03:04:05Z"`
}
