package naive

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/query"
)

// pipeTestLines is a small log used by the pipe tests.
var pipeTestLines = []string{
	`{"ts":"2026-01-01T00:00:00Z","msg":"GET /a ok","level":"info","svc":"api","lat":"10","tags":["a","b"]}`,
	`{"ts":"2026-01-01T00:00:01Z","msg":"GET /b error","level":"error","svc":"api","lat":"30","tags":["c"]}`,
	`{"ts":"2026-01-01T00:00:02Z","msg":"POST /c ok","level":"info","svc":"db","lat":"20"}`,
	`{"ts":"2026-01-01T00:01:00Z","msg":"user=\"bob smith\" n=2","level":"info","svc":"db","payload":"{\"u\":\"x\",\"n\":1}"}`,
}

// runPipes runs a filter-all query with the given pipes over pipeTestLines
// and returns the rows as sorted-key JSON lines (in row order unless
// unordered is set, then sorted).
func runPipes(t *testing.T, unordered bool, pipes ...query.Pipe) string {
	t.Helper()
	q := &query.Query{Filter: &query.FilterAll{}, Pipes: pipes}
	rows, err := Run(q, pipeTestLines, Options{MsgField: "msg", TimeField: "ts", Now: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatalf("Run: %s", err)
	}
	lines := make([]string, len(rows))
	for i, r := range rows {
		b, _ := json.Marshal(r)
		lines[i] = string(b)
	}
	if unordered {
		sort.Strings(lines)
	}
	return strings.Join(lines, "\n")
}

func TestPipes(t *testing.T) {
	f := func(want string, unordered bool, pipes ...query.Pipe) {
		t.Helper()
		if got := runPipes(t, unordered, pipes...); got != want {
			t.Errorf("pipes %v\n got:\n%s\nwant:\n%s", pipes, got, want)
		}
	}
	fields := func(names ...string) query.Pipe { return &query.PipeFields{Fields: names} }
	stats := func(by []query.ByField, funcs ...query.StatsFunc) query.Pipe {
		return &query.PipeStats{By: by, Funcs: funcs}
	}

	// top: hits desc, ties by value; rank.
	f(`{"hits":"2","rank":"1","svc":"api"}`+"\n"+`{"hits":"2","rank":"2","svc":"db"}`, false,
		&query.PipeTop{N: 5, By: []string{"svc"}, HitsName: "hits", Rank: "rank"})
	f(`{"hits":"3","level":"info"}`, false, &query.PipeTop{N: 1, By: []string{"level"}, HitsName: "hits"})
	// uniq keeps first-appearance order.
	f(`{"hits":"2","svc":"api"}`+"\n"+`{"hits":"2","svc":"db"}`, false, &query.PipeUniq{By: []string{"svc"}, WithHits: true})
	// uniq and field_values over a limit: hits are zeroed; field_values then
	// keeps the first values in natural order.
	f(`{"hits":"0","svc":"api"}`, false, &query.PipeUniq{By: []string{"svc"}, WithHits: true, Limit: 1})
	f(`{"hits":"0","svc":"api"}`, false, &query.PipeFieldValues{Field: "svc", Limit: 1})
	f(`{"hits":"3","level":"info"}`+"\n"+`{"hits":"1","level":"error"}`, false, &query.PipeFieldValues{Field: "level", Limit: 2})
	// field_values counts the empty value too (the row without it is "{hits}").
	f(`{"hits":"1","lat":"10"}`+"\n"+`{"hits":"1","lat":"20"}`+"\n"+`{"hits":"1","lat":"30"}`+"\n"+`{"hits":"1"}`, true,
		&query.PipeFieldValues{Field: "lat"})
	// unroll: one row per element, non-arrays give one row with the field empty.
	f(`{"tags":"a"}`+"\n"+`{"tags":"b"}`+"\n"+`{"tags":"c"}`, false,
		&query.PipeUnroll{Fields: []string{"tags"}}, fields("tags"))
	// rename and copy with wildcards; a missing source clears the target.
	f(`{"lel":"info","v":"info"}`, false,
		&query.PipeLimit{N: 1}, &query.PipeCopy{Pairs: []query.RenamePair{{Src: "level", Dst: "v"}}},
		&query.PipeRename{Pairs: []query.RenamePair{{Src: "lev*", Dst: "l*"}, {Src: "nothing", Dst: "svc"}}},
		fields("lel", "v", "svc", "level"))
	// sort with offset and limit; desc.
	f(`{"lat":"20"}`+"\n"+`{"lat":"10"}`, false,
		&query.PipeSort{By: []query.SortField{{Name: "lat", Desc: true}}, Offset: 1, Limit: 2}, fields("lat"))
	// offset/limit.
	f(`{"lat":"30"}`, false, &query.PipeOffset{N: 1}, &query.PipeLimit{N: 1}, fields("lat"))
	// len counts bytes.
	f(`{"l":"9"}`, false, &query.PipeLimit{N: 1}, &query.PipeLen{Field: "_msg", Result: "l"}, fields("l"))
	// format: missing fields are "", options, if-filter keeps the old value.
	f(`{"x":"INFO:api:\"GET /a ok\":"}`, false, &query.PipeLimit{N: 1},
		&query.PipeFormat{Pattern: "<uc:level>:<svc>:<q:_msg>:<nothing>", Result: "x"}, fields("x"))
	f(`{"x":"kept"}`+"\n"+`{"x":"error"}`, false, &query.PipeLimit{N: 2},
		&query.PipeFormat{Pattern: "kept", Result: "x"},
		&query.PipeFormat{If: &query.FilterExact{Field: "level", Value: "error"}, Pattern: "<level>", Result: "x"}, fields("x"))
	// extract: keep_original_fields and skip_empty_results.
	f(`{"svc":"api"}`, false, &query.PipeLimit{N: 1},
		&query.PipeExtract{Pattern: "GET <svc> ", KeepOriginalFields: true}, fields("svc"))
	f(`{"svc":"api"}`, false, &query.PipeLimit{N: 1},
		&query.PipeExtract{Pattern: "nomatch=<svc>", SkipEmptyResults: true}, fields("svc"))
	f(``, false, &query.PipeLimit{N: 1},
		&query.PipeExtract{Pattern: "nomatch=<svc>"}, fields("svc"))
	// extract_regexp.
	f(`{"m":"GET","p":"/a"}`, false, &query.PipeLimit{N: 1},
		&query.PipeExtractRegexp{Expr: `^(?P<m>[A-Z]+) (?P<p>\S+)`}, fields("m", "p"))
	// unpack_json with fields and a prefix; unpack_logfmt.
	f(`{"j.n":"1"}`, false, &query.PipeOffset{N: 3},
		&query.PipeUnpack{Format: "json", From: "payload", Fields: []string{"n", "missing"}, ResultPrefix: "j."}, fields("j.*"))
	f(`{"n":"2","user":"bob smith"}`, false, &query.PipeOffset{N: 3},
		&query.PipeUnpack{Format: "logfmt"}, fields("user", "n"))
	// math: field arithmetic, NaN for a missing field, default, %, round to a step.
	num := func(x float64) *query.MathExpr { return &query.MathExpr{Op: "num", Num: x} }
	fld := func(n string) *query.MathExpr { return &query.MathExpr{Op: "field", Field: n} }
	op := func(o string, args ...*query.MathExpr) *query.MathExpr { return &query.MathExpr{Op: o, Args: args} }
	f(`{"a":"20","b":"NaN","c":"-1","d":"3","e":"10"}`, false, &query.PipeLimit{N: 1},
		&query.PipeMath{Assigns: []query.MathAssign{
			{Expr: op("*", fld("lat"), num(2)), Result: "a"},
			{Expr: op("+", fld("nothing"), num(1)), Result: "b"},
			{Expr: op("default", fld("nothing"), op("neg", num(1))), Result: "c"},
			{Expr: op("%", fld("a"), num(17)), Result: "d"},
			{Expr: op("round", num(12.5), num(10)), Result: "e"},
		}}, fields("a", "b", "c", "d", "e"))

	// stats: by with an empty key, count(f), count_uniq, min/max with empty,
	// values with empty values, uniq_values sorted, row_min/row_max.
	f(`{"c":"3","mx":"30","n":"4","u":"2","uv":"[\"api\",\"db\"]","v":"[\"10\",\"30\",\"20\",\"\"]"}`, false, stats(nil,
		query.StatsFunc{Name: "count", Result: "n"},
		query.StatsFunc{Name: "count", Fields: []string{"lat"}, Result: "c"},
		query.StatsFunc{Name: "count_uniq", Fields: []string{"svc"}, Result: "u"},
		query.StatsFunc{Name: "min", Fields: []string{"lat"}, Result: "mn"},
		query.StatsFunc{Name: "max", Fields: []string{"lat"}, Result: "mx"},
		query.StatsFunc{Name: "values", Fields: []string{"lat"}, Result: "v"},
		query.StatsFunc{Name: "uniq_values", Fields: []string{"svc"}, Result: "uv"},
	))
	f(`{"hi":"{\"lat\":\"30\",\"level\":\"error\"}","lo":"{\"svc\":\"api\",\"nothing\":\"\"}"}`, false, stats(nil,
		query.StatsFunc{Name: "row_min", Fields: []string{"lat", "svc", "nothing"}, Result: "lo"},
		query.StatsFunc{Name: "row_max", Fields: []string{"lat", "lat", "level"}, Result: "hi"},
	))
	f(`{"_time":"2026-01-01T00:00:00Z","n":"3","s":"60"}`+"\n"+`{"_time":"2026-01-01T00:01:00Z","n":"1","s":"NaN"}`, false, stats(
		[]query.ByField{{Name: "_time", Bucket: "1m", BucketNs: int64(time.Minute)}},
		query.StatsFunc{Name: "count", Result: "n"},
		query.StatsFunc{Name: "sum", Fields: []string{"lat"}, Result: "s"},
	))
	f(`{"e":"1","n":"0","svc":"api"}`+"\n"+`{"e":"0","n":"2","svc":"db"}`, false, stats(
		[]query.ByField{{Name: "svc"}},
		query.StatsFunc{Name: "count", If: &query.FilterExact{Field: "level", Value: "error"}, Result: "e"},
		query.StatsFunc{Name: "count", If: &query.FilterExact{Field: "svc", Value: "db"}, Result: "n"},
	))
	// rate over a _time bucket.
	f(`{"_time":"2026-01-01T00:00:00Z","r":"0.05"}`+"\n"+`{"_time":"2026-01-01T00:01:00Z","r":"0.016666666666666666"}`, false, stats(
		[]query.ByField{{Name: "_time", Bucket: "1m", BucketNs: int64(time.Minute)}},
		query.StatsFunc{Name: "rate", Result: "r"},
	))
	// stats over no rows still gives one row without by-fields.
	f(`{"n":"0","s":"NaN"}`, false, &query.PipeFilter{Filter: &query.FilterExact{Field: "svc", Value: "none"}}, stats(nil,
		query.StatsFunc{Name: "count", Result: "n"},
		query.StatsFunc{Name: "sum", Fields: []string{"lat"}, Result: "s"},
	))
	// field_names as the first pipe lists _stream and _stream_id too.
	f(`{"hits":"4","name":"_msg"}`+"\n"+`{"hits":"4","name":"_stream"}`, false,
		&query.PipeFieldNames{ResultName: "name"}, &query.PipeLimit{N: 2})
	// facets: a constant field is skipped, and so is one with a too long value.
	f(`{"field_name":"level","field_value":"info","hits":"2"}`+"\n"+`{"field_name":"level","field_value":"error","hits":"1"}`, false,
		&query.PipeLimit{N: 3}, fields("level", "svc", "_msg"),
		&query.PipeFormat{Pattern: "same", Result: "svc"},
		&query.PipeFacets{N: 10, MaxValueLen: 8})
}

func TestRunErrors(t *testing.T) {
	f := func(q *query.Query) {
		t.Helper()
		if _, err := Run(q, pipeTestLines, Options{MsgField: "msg", TimeField: "ts"}); err == nil {
			t.Errorf("Run(%v): expected an error", q)
		}
	}
	all := &query.FilterAll{}
	f(&query.Query{Filter: &query.FilterRegexp{Field: "_msg", Expr: "("}})
	f(&query.Query{Filter: all, Pipes: []query.Pipe{&query.PipeStats{Funcs: []query.StatsFunc{{Name: "rate", Result: "r"}}}}})
	f(&query.Query{Filter: all, Pipes: []query.Pipe{&query.PipeExtract{Pattern: "no placeholder"}}})
	f(&query.Query{Filter: all, Pipes: []query.Pipe{&query.PipeExtractRegexp{Expr: "[a-z]+"}}})
	f(&query.Query{Filter: all, Pipes: []query.Pipe{&query.PipeStats{Funcs: []query.StatsFunc{{Name: "nope", Result: "x"}}}}})
}

func TestFormatOption(t *testing.T) {
	f := func(opt, v, want string) {
		t.Helper()
		if got := formatOption(opt, v); got != want {
			t.Errorf("formatOption(%q, %q) = %q; want %q", opt, v, got, want)
		}
	}
	f("", "x", "x")
	f("unknown", "x", "x")
	f("q", `a "b" <c>`, `"a \"b\" \u003cc>"`) // quicktemplate: < as \u003c
	f("uc", "école", "ÉCOLE")
	f("lc", "ÉCOLE", "école")
	f("base64encode", "hi", "aGk=")
	f("base64decode", "aGk=", "hi")
	f("base64decode", "%%%", "%%%")
	f("hexencode", "hi", "6869")
	f("hexdecode", "6869zz7", "hizz7")
	f("hexnumencode", "255", "00000000000000FF")
	f("hexnumdecode", "FF", "255")
	f("ipv4", "3232235777", "192.168.1.1")
	f("ipv4", "x", "x")
	f("time", "1767398400", "2026-01-03T00:00:00Z")
	f("urlencode", "a b&c/ü", "a+b%26c%2F%C3%BC")
	f("urldecode", "a+b%26c%2F%C3%BC%zz%", "a b&c/ü%zz%")
}
