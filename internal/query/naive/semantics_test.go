package naive

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/query"
)

func TestQuantile(t *testing.T) {
	f := func(vals []string, phi float64, want string) {
		t.Helper()
		if got := quantile(vals, phi); got != want {
			t.Errorf("quantile(%q, %v) = %q; want %q", vals, phi, got, want)
		}
	}
	// Discrete sorted[int(phi*n)], no interpolation.
	f([]string{"1", "2", "3", "4"}, 0.5, "3")
	f([]string{"4", "3", "2", "1"}, 0.5, "3")
	f([]string{"1", "2", "3", "4"}, 0.9, "4")
	f([]string{"1", "2", "3", "4"}, 0.25, "2")
	f([]string{"10", "9", "100"}, 0.5, "10") // numerically, not as text
	// Empty values count and sort lowest: v = 1, 2, 3, missing, null, "", "x".
	f([]string{"1", "2", "3", "", "", "", "x"}, 0.5, "1")
	f([]string{"", "", "5"}, 0.5, "")
	// phi 0 and 1 are the minimum and the maximum.
	f([]string{"12.5", "", "slow", "-12.5"}, 0, "")
	f([]string{"12.5", "", "slow", "-12.5"}, 1, "slow")
	f([]string{"7"}, 0.3, "7")
	f(nil, 0.5, "")
}

func TestBucketValue(t *testing.T) {
	day := int64(24 * time.Hour)
	f := func(bf query.ByField, v, want string) {
		t.Helper()
		got, err := bucketValue(bf, v)
		if err != nil {
			t.Fatalf("bucketValue(%+v, %q): %s", bf, v, err)
		}
		if got != want {
			t.Errorf("bucketValue(%+v, %q) = %q; want %q", bf, v, got, want)
		}
	}
	minute := query.ByField{Name: "_time", Bucket: "1m", BucketNs: int64(time.Minute)}
	f(minute, "2026-01-01T00:01:59.999Z", "2026-01-01T00:01:00Z")
	f(minute, "2025-12-31T23:59:59.5Z", "2025-12-31T23:59:00Z")
	f(minute, "", "")
	// The offset is a time zone: days with offset 3h (UTC+3) start at
	// 21:00 UTC, with offset -3h at 03:00 UTC.
	dayOff := query.ByField{Name: "_time", Bucket: "1d", BucketNs: day, Offset: int64(3 * time.Hour), OffsetText: "3h"}
	f(dayOff, "2026-01-01T00:02:00Z", "2025-12-31T21:00:00Z")
	f(dayOff, "2026-01-01T20:59:59Z", "2025-12-31T21:00:00Z")
	f(dayOff, "2026-01-01T21:00:00Z", "2026-01-01T21:00:00Z")
	dayNeg := query.ByField{Name: "_time", Bucket: "1d", BucketNs: day, Offset: -int64(3 * time.Hour), OffsetText: "-3h"}
	f(dayNeg, "2026-01-01T00:02:00Z", "2025-12-31T03:00:00Z")
	f(dayNeg, "2026-01-01T03:00:00Z", "2026-01-01T03:00:00Z")
	f(dayNeg, "2026-01-02T02:59:59Z", "2026-01-01T03:00:00Z")
	// Before 1970 too.
	f(query.ByField{Name: "_time", Bucket: "1h", BucketNs: int64(time.Hour)}, "1969-12-31T23:30:00Z", "1969-12-31T23:00:00Z")
	// Numeric buckets round down; non-numbers stay.
	num := query.ByField{Name: "latency_ms", Bucket: "10", BucketNum: 10}
	f(num, "12.5", "10")
	f(num, "-12.5", "-20")
	f(num, "slow", "slow")
	f(num, "1.5e2", "1.5e2") // VictoriaLogs rounds only plain numbers
	f(num, "+15", "+15")
	f(num, "10KiB", "10KiB")
	numOff := query.ByField{Name: "status", Bucket: "100", BucketNum: 100, Offset: 30, OffsetNum: 30, OffsetText: "30"}
	f(numOff, "200", "170")
	f(numOff, "269", "170")
	f(numOff, "270", "270")
	f(numOff, "-31", "-130")
	half := query.ByField{Name: "x", Bucket: "0.5", BucketNum: 0.5, OffsetNum: 0.25, OffsetText: "0.25"}
	f(half, "1.25", "1.25")
	f(half, "1.2", "0.75")
	// Integers are rounded by integers: step 0.5 becomes 1, offset 0.25 0.
	f(half, "1", "1")
	f(query.ByField{Name: "x", Bucket: "2.5", BucketNum: 2.5}, "12", "12")
	f(query.ByField{Name: "x", Bucket: "10", BucketNum: 10, Offset: 2, OffsetNum: 2.5}, "200", "198")
}

func TestApplyPattern(t *testing.T) {
	f := func(pattern, s string, want map[string]string) {
		t.Helper()
		steps, err := parseExtractPattern(pattern)
		if err != nil {
			t.Fatalf("parseExtractPattern(%q): %s", pattern, err)
		}
		matches := applyPattern(steps, s)
		got := make(map[string]string)
		for i, st := range steps {
			if st.field != "" && matches[i] != "" {
				got[st.field] = matches[i]
			}
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Errorf("extract %q from %q = %s; want %s", pattern, s, gb, wb)
		}
	}
	f("ip=<ip> ", "from ip=1.2.3.4 port=5", map[string]string{"ip": "1.2.3.4"})
	// Not anchored at the start; the last placeholder runs to the end.
	f("for order <order>: <reason>", "payment declined for order 42: café", map[string]string{"order": "42", "reason": "café"})
	// A quoted match is unquoted, and the next literal must follow it.
	f("err=<e> ", `method=DELETE err="db timeout" empty=`, map[string]string{"e": "db timeout"})
	f("user=<u>", `user="bob \"the\" smith" x`, map[string]string{"u": `bob "the" smith`})
	f("user=<plain:u> ", `user="bob smith" x`, map[string]string{"u": `"bob`})
	// A mismatch keeps what matched before it.
	f("method=<m> path=<p> ", "method=GET path=/a", map[string]string{"m": "GET"})
	f("method=<m> path=<p> ", "flag_only method=PUT status=204", map[string]string{})
	f("a=<_> b=<b>", "a=1 b=2", map[string]string{"b": "2"})
	f("&lt;<x>&gt;", "<tag>", map[string]string{"x": "tag"})

	for _, bad := range []string{"no placeholders", "<a><b>", "<a", "<_>"} {
		if _, err := parseExtractPattern(bad); err == nil {
			t.Errorf("parseExtractPattern(%q): expected an error", bad)
		}
	}
}

func TestUnpackLogfmt(t *testing.T) {
	f := func(s, want string) {
		t.Helper()
		var parts []string
		for _, fl := range unpackLogfmt(s) {
			parts = append(parts, fl.name+"="+fl.value)
		}
		if got := strings.Join(parts, "|"); got != want {
			t.Errorf("unpackLogfmt(%q) = %q; want %q", s, got, want)
		}
	}
	f(`method=GET path=/api status=200 duration=12.5 user="bob smith"`, "method=GET|path=/api|status=200|duration=12.5|user=bob smith")
	f(`flag_only method=PUT status=204`, "flag_only=|method=PUT|status=204")
	f(`err="db timeout" empty=`, "err=db timeout|empty=")
	f(`a="x"b=1`, "a=x")
	f(``, "")
	f(`  a=1  `, "a=1")
}

func TestParseLogLine(t *testing.T) {
	f := func(line string, opts Options, want map[string]string) {
		t.Helper()
		got := parseLogLine(line, opts)
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Errorf("parseLogLine(%q)\n got %s\nwant %s", line, gb, wb)
		}
	}
	o := Options{MsgField: "msg", TimeField: "ts"}
	f(`{"ts":"2026-01-01T00:03:00Z","msg":"hi","status":404,"latency_ms":12.50,"ok":true,"no":false,"z":null}`, o,
		map[string]string{"_time": "2026-01-01T00:03:00Z", "_msg": "hi", "status": "404", "latency_ms": "12.50", "ok": "true", "no": "false"})
	// Nested objects flatten with dots, empty objects vanish, arrays stay compact JSON.
	f(`{"ts":1767312060123,"http":{"ua":"x","tls":{"v":"1.3"}},"meta":{},"list":[],"ids":[1, 2,3],"objs":[{"a":1},{"b":"x"}],"msg":"m"}`, o,
		map[string]string{"_time": "2026-01-02T00:01:00.123Z", "_msg": "m", "http.ua": "x", "http.tls.v": "1.3", "list": "[]", "ids": "[1,2,3]", "objs": `[{"a":1},{"b":"x"}]`})
	// The last duplicate wins, also across nesting and dotted keys.
	f(`{"dup":"one","dup":"two","http":{"ua":"a"},"http.ua":"b","msg":"m"}`, o,
		map[string]string{"_msg": "m", "dup": "two", "http.ua": "b"})
	// Missing or empty msg; escapes decoded.
	f(`{"msg":"","note":"caf\u00e9 \ud83d\ude00\t\"q\""}`, o, map[string]string{"_msg": missingMsg, "note": "café 😀\t\"q\""})
	f(`{"note":"x"}`, o, map[string]string{"_msg": missingMsg, "note": "x"})
	// Unparsable time: kept under its own name, no _time.
	f(`{"ts":"not-a-time","msg":"m"}`, o, map[string]string{"_msg": "m", "ts": "not-a-time"})
	// Not a JSON object: plain text.
	f(`not json at all`, o, map[string]string{"_msg": "not json at all"})
	f(`[1,2,3]`, o, map[string]string{"_msg": "[1,2,3]"})
	f(`{"a":1} trailing`, o, map[string]string{"_msg": `{"a":1} trailing`})
	f("{\"msg\":\"\xff\"}", o, map[string]string{"_msg": "{\"msg\":\"\xff\"}"})
	// Auto-detected fields.
	f(`{"time":"2026-01-01T00:00:00Z","message":"hello","msg":""}`, Options{}, map[string]string{"_time": "2026-01-01T00:00:00Z", "_msg": "hello"})
	f(`{"@timestamp":"1767398400","log":"l"}`, Options{}, map[string]string{"_time": "2026-01-03T00:00:00Z", "_msg": "l"})
}

func TestRunWithSyntaxTree(t *testing.T) {
	lines := []string{
		`{"ts":"2026-01-01T00:00:01Z","msg":"GET /a error","level":"error","status":"500","lat":"1.5"}`,
		`{"ts":"2026-01-01T00:00:02Z","msg":"GET /b ok","level":"info","status":200,"lat":2.5}`,
		``,
		`{"ts":"2026-01-01T00:00:03Z","msg":"errors happened","level":"warn"}` + "\r",
		`plain text line with error`,
	}
	opts := Options{MsgField: "msg", TimeField: "ts"}
	f := func(q *query.Query, want string) {
		t.Helper()
		rows, err := Run(q, lines, opts)
		if err != nil {
			t.Fatalf("Run: %s", err)
		}
		var parts []string
		for _, r := range rows {
			b, _ := json.Marshal(r)
			parts = append(parts, string(b))
		}
		if got := strings.Join(parts, "\n"); got != want {
			t.Errorf("Run\n got %s\nwant %s", got, want)
		}
	}
	word := func(w string) query.Filter { return &query.FilterPhrase{Field: "_msg", Phrase: w} }
	fields := func(names ...string) query.Pipe { return &query.PipeFields{Fields: names} }

	f(&query.Query{Filter: word("error"), Pipes: []query.Pipe{fields("_msg")}},
		`{"_msg":"GET /a error"}`+"\n"+`{"_msg":"plain text line with error"}`)
	f(&query.Query{Filter: &query.FilterExact{Field: "status", Value: "500.0"}, Pipes: []query.Pipe{fields("level")}},
		`{"level":"error"}`)
	f(&query.Query{Filter: &query.FilterCompare{Field: "status", Op: ">=", Num: 300}, Pipes: []query.Pipe{fields("level")}},
		`{"level":"error"}`)
	f(&query.Query{Filter: &query.FilterAll{}, Pipes: []query.Pipe{
		&query.PipeStats{Funcs: []query.StatsFunc{
			{Name: "count", Result: "n"},
			{Name: "sum", Fields: []string{"lat"}, Result: "s"},
			{Name: "min", Fields: []string{"lat"}, Result: "mn"},
			{Name: "max", Fields: []string{"lat"}, Result: "mx"},
			{Name: "count", Fields: []string{"status"}, Result: "c"},
		}},
	}}, `{"c":"2","mx":"2.5","n":"4","s":"4"}`)
	f(&query.Query{Filter: &query.FilterAll{}, Pipes: []query.Pipe{
		&query.PipeSort{By: []query.SortField{{Name: "_time", Desc: true}}, Limit: 2},
		fields("_time"),
	}}, `{"_time":"2026-01-01T00:00:03Z"}`+"\n"+`{"_time":"2026-01-01T00:00:02Z"}`)
	f(&query.Query{Filter: &query.FilterAll{}, Pipes: []query.Pipe{
		&query.PipeStats{By: []query.ByField{{Name: "level"}}, Funcs: []query.StatsFunc{{Name: "count", Result: "n"}}},
	}}, `{"level":"error","n":"1"}`+"\n"+`{"level":"info","n":"1"}`+"\n"+`{"level":"warn","n":"1"}`+"\n"+`{"n":"1"}`)
}
