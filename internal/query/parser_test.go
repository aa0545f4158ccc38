package query

import (
	"bufio"
	"encoding/json"
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testNow is the "now" of the parser tests.
var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// checkRoundTrip fails the test unless parsing q.String() gives a tree equal
// to q with the same String().
func checkRoundTrip(t *testing.T, in string, q *Query) {
	t.Helper()
	s := q.String()
	q2, err := Parse(s, testNow)
	if err != nil {
		t.Fatalf("Parse(%q): cannot parse String() of %q: %s", s, in, err)
	}
	if !reflect.DeepEqual(q, q2) {
		t.Fatalf("Parse(String()) differs for %q\nString(): %s\nfirst:  %#v\nsecond: %#v", in, s, q, q2)
	}
	if s2 := q2.String(); s2 != s {
		t.Fatalf("String() is not stable for %q\nfirst:  %s\nsecond: %s", in, s, s2)
	}
}

func TestParseSuccess(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		q, err := Parse(in, testNow)
		if err != nil {
			t.Fatalf("Parse(%q): unexpected error: %s", in, err)
		}
		if got := q.String(); got != want {
			t.Fatalf("Parse(%q).String()\ngot:  %s\nwant: %s", in, got, want)
		}
		checkRoundTrip(t, in, q)
	}

	// Stream filters.
	f(`{app="api"}`, `{app="api"}`)
	f(`_stream:{app="api"}`, `{app="api"}`)
	f(`{app=api, env!="prod"}`, `{app="api",env!="prod"}`)
	f(`{app=~"api|web" or zone!~'eu-.*'}`, `{app=~"api|web" or zone!~"eu-.*"}`)
	f(`{kubernetes.pod="p-1", "odd name"="v"}`, `{kubernetes.pod="p-1","odd name"="v"}`)
	f(`{app in (api, "web x")}`, `{app in(api, "web x")}`)
	f(`{app not_in(a) , b=c}`, `{app not_in(a),b="c"}`)
	f(`{app in(*)}`, `{app in(*)}`)
	f(`{}`, `{}`)
	f(`{a="1"} error -{b="2"}`, `{a="1"} error !{b="2"}`)
	f(`_stream_id:0000000000000000e934a84adb05276890d7f7bfcadabe92`, `_stream_id:0000000000000000e934a84adb05276890d7f7bfcadabe92`)
	f(`_stream_id:in(a1, b2)`, `_stream_id:in(a1, b2)`)
	f(`_stream_id:in(*)`, `*`)
	f(`* | filter {a="b"}`, `* | filter {a="b"}`)

	// Pipes VictoriaLogs spells differently: first and last are sorts.
	f(`* | math a & b xor c or d + 1, (a or b) & c as x, now() - _time as age, rand() r`,
		`* | math a & b xor c or d + 1 as "a & b xor c or d + 1", (a or b) & c as x, now() - _time as age, rand() as r`)
	f(`* | uniq by (a) filter "x y" hits limit 3`, `* | uniq by (a) filter "x y" with hits limit 3`)
	f(`* | uniq (a) filter x`, `* | uniq by (a) filter x`)
	f(`_stream_id:in(app:x | fields _stream_id) a`, `_stream_id:in(app:x | fields _stream_id) a`)
	f(`* | stats by (_time:month offset 3h, _time:year) count() n`, `* | stats by (_time:month offset 3h, _time:year) count(*) as n`)
	f(`* | top 2 by (u) rank as u`, `* | top 2 by (u) rank as us`)
	f(`* | top by (rank, hits) hits x rank`, `* | top 10 by ("rank", "hits") hits as x rank as ranks`)
	f(`* | top by (hits) hits hits`, `* | top 10 by ("hits") hits as hitss`)
	f(`* | sort by (a) limit 2 rank offset`, `* | sort by (a) limit 2 rank as "offset"`)
	f(`options(concurrency=2,ignore_global_time_filter=true) error`, `options(concurrency=2, ignore_global_time_filter=true) error`)
	f(`options(parallel_readers=3, allow_partial_response=false) *`, `options(parallel_readers=3, allow_partial_response=false) *`)
	f(`* | join by (a) (options(ignore_global_time_filter=1) x | fields a)`, `* | join by (a) (options(ignore_global_time_filter=true) x | fields a)`)
	f(`options`, `"options"`)
	f(`* | first`, `* | sort limit 1`)
	f(`* | first 3 by (a desc, b)`, `* | sort by (a desc, b) limit 3`)
	f(`* | last 2 (_time)`, `* | sort by (_time) desc limit 2`)
	f(`* | first 2 by (a) partition by (b, c) rank`, `* | sort by (a) partition by (b, c) limit 2 rank`)
	f(`* | last by (a) partition (b) rank as r`, `* | sort by (a) desc partition by (b) limit 1 rank as r`)
	f(`* | sort by (a) limit 3 partition by (b) offset 1 rank x`, `* | sort by (a) partition by (b) offset 1 limit 3 rank as x`)
	f(`* | sort (a) desc rank limit 5`, `* | sort by (a) desc limit 5 rank`)
	f(`* | running_stats count() n, sum(x) as s`, `* | running_stats count(*) as n, sum(x) as s`)
	f(`* | running_stats by (a, b) min(x), max(y*), first(z) offset 2, last(z)`,
		`* | running_stats by (a, b) min(x) as "min(x)", max(y*) as "max(y*)", first(z) offset 2 as "first(z) offset 2", last(z) as "last(z)"`)
	f(`* | total_stats (a) count(x, y) c`, `* | total_stats by (a) count(x, y) as c`)
	f(`* | join by (a) (x:1 | fields a, b)`, `* | join by (a) (x:1 | fields a, b)`)
	f(`* | join on (a, b) rows({a:1, b="x y"}, {"c":2}) inner prefix p_`, `* | join by (a, b) rows({"a":"1","b":"x y"},{"c":"2"}) inner prefix p_`)
	f(`* | join (a) rows() prefix "p " inner`, `* | join by (a) rows() inner prefix "p "`)
	f(`* | union (error | stats count() n) | limit 2`, `* | union (error | stats count(*) as n) | limit 2`)
	f(`* | union rows({a:"\u0001"})`, `* | union rows({"a":"\u0001"})`)
	f(`error | stream_context before 5`, `error | stream_context before 5`)
	f(`error | stream_context before 1.5 after 1K`, `error | stream_context before 1 after 1000`)
	f(`options(global_filter=(level:error or x)) *`, `options(global_filter=(level:error or x)) *`)
	f(`options(time_offset=1h) _time:5m error`, `options(time_offset=1h) _time:5m error`)
	f(`options(global_filter=(a:in(b | fields a))) *`, `options(global_filter=(a:in(b | fields a))) *`)
	f(`options(time_offset=-30m, concurrency=1) *`, `options(concurrency=1, time_offset=-30m) *`)
	f(`options(concurrency=2, global_filter=({app="a"})) a | join by (b) (c | fields b)`, `options(concurrency=2, global_filter=({app="a"})) a | join by (b) (c | fields b)`)
	f(`error | stream_context after 3 before 2 time_window 30m`, `error | stream_context before 2 after 3 time_window 30m`)
	f(`error | stream_context before 0 after 0`, `error | stream_context after 0`)
	f(`error | STREAM_CONTEXT AFTER 1 | fields _msg`, `error | stream_context after 1 | fields _msg`)
	f(`a:in(* | fields b) b:contains_any(x | uniq by (y)) contains_all(c:d | fields e)`, `a:in(* | fields b) b:contains_any(x | uniq by (y)) contains_all(c:d | fields e)`)
	f(`a:in(* | join by (b) (c:in(d | fields b) | fields b) | fields b)`, `a:in(* | join by (b) (c:in(d | fields b) | fields b) | fields b)`)
	f(`* | replace ("a b", "c") at f limit 2`, `* | replace ("a b", "c") at f limit 2`)
	f(`* | replace if (x:1) (a, "")`, `* | replace if (x:1) ("a", "")`)
	f(`* | replace_regexp ("([0-9]+)", "<$1>")`, `* | replace_regexp ("([0-9]+)", "<$1>")`)
	f(`* | replace_regexp ("\\d+", x)`, `* | replace_regexp ("\\d+", "x")`)
	f(`* | drop_empty_fields`, `* | drop_empty_fields`)
	f(`* | pack_json`, `* | pack_json as _msg`)
	f(`* | pack_logfmt fields (a, b*) as x`, `* | pack_logfmt fields (a, b*) as x`)
	f(`* | pack_json fields (*) x`, `* | pack_json as x`)
	f(`* | coalesce(a, b*) default "n/a" as c`, `* | coalesce(a, b*) default "n/a" as c`)
	f(`* | coalesce (a)`, `* | coalesce(a) as _msg`)
	f(`* | coalesce(a, "b c") default x`, `* | coalesce(a, "b c") default x as _msg`)
	f(`* | decolorize`, `* | decolorize`)
	f(`* | decolorize "my field"`, `* | decolorize "my field"`)
	f(`* | hash(user_id) as h`, `* | hash(user_id) as h`)
	f(`* | hash user_id h`, `* | hash(user_id) as h`)
	f(`* | hash(_msg)`, `* | hash(_msg) as _msg`)
	f(`* | json_array_len(tags) n`, `* | json_array_len(tags) as n`)
	f(`* | json_array_len tags`, `* | json_array_len(tags) as _msg`)
	f(`* | json_array_concat`, `* | json_array_concat`)
	f(`* | json_array_concat ", "`, `* | json_array_concat ", "`)
	f(`* | json_array_concat from tags`, `* | json_array_concat from tags`)
	f(`* | json_array_concat tags`, `* | json_array_concat tags`)
	f(`* | json_array_concat "|" tags t`, `* | json_array_concat "|" from tags as t`)
	f(`* | json_array_concat as t`, `* | json_array_concat as t`)
	f(`* | json_array_concat "from" from tags`, `* | json_array_concat "from" from tags`)
	f(`* | collapse_nums`, `* | collapse_nums`)
	f(`* | collapse_nums if (error) at x prettify`, `* | collapse_nums if (error) at x prettify`)
	f(`* | collapse_nums prettify`, `* | collapse_nums prettify`)
	f(`* | time_add 1h`, `* | time_add 1h`)
	f(`* | time_add -1h30m at ts`, `* | time_add -1h30m at ts`)
	f(`* | split ","`, `* | split ","`)
	f(`* | split ", " from tags as list`, `* | split ", " from tags as list`)
	f(`* | split "from" "from"`, `* | split "from" from "from"`)
	f(`* | split x tags t`, `* | split x from tags as t`)
	f(`* | split "" as t`, `* | split "" as t`)
	f(`* | unpack_words`, `* | unpack_words`)
	f(`* | unpack_words from x as y drop_duplicates`, `* | unpack_words from x as y drop_duplicates`)
	f(`* | unpack_words x drop_duplicates`, `* | unpack_words from x drop_duplicates`)
	f(`* | unpack_words as y`, `* | unpack_words as y`)
	f(`* | sample 10`, `* | sample 10`)
	f(`* | set_stream_fields a`, `* | set_stream_fields a`)
	f(`* | set_stream_fields if (x:y) a, b*, "c d"`, `* | set_stream_fields if (x:y) a, b*, "c d"`)
	f(`* | set_stream_fields *`, `* | set_stream_fields *`)
	f(`* | generate_sequence 10`, `* | generate_sequence 10`)
	f(`* | generate_sequence 2.7`, `* | generate_sequence 2`)
	f(`* | generate_sequence 1K | limit 3`, `* | generate_sequence 1000 | limit 3`)
	f(`* | generate_sequence inf`, `* | generate_sequence 18446744073709551615`)
	f(`* | sample 1K | limit 3`, `* | sample 1000 | limit 3`)
	f(`* | unpack_syslog`, `* | unpack_syslog`)
	f(`* | unpack_syslog from _msg`, `* | unpack_syslog`)
	f(`* | unpack_syslog x`, `* | unpack_syslog from x`)
	f(`* | unpack_syslog offset -6h30m keep_original_fields`, `* | unpack_syslog offset -6h30m keep_original_fields`)
	f(`* | unpack_syslog if (a:x) from x offset 2h result_prefix "a b" keep_original_fields`, `* | unpack_syslog if (a:x) from x offset 2h result_prefix "a b" keep_original_fields`)
	f(`* | unpack_syslog result_prefix abc`, `* | unpack_syslog result_prefix abc`)

	// Filters of a length, a string range, an IPv4 range, another field.
	f(`len_range(1, 5)`, `len_range(1, 5)`)
	f(`f:len_range(0, inf)`, `f:len_range(0, inf)`)
	f(`f:string_range(a, "m n")`, `f:string_range(a, "m n")`)
	f(`ip:ipv4_range(10.0.0.0/8)`, `ip:ipv4_range(10.0.0.0/8)`)
	f(`ip:ipv6_range(2001:db8::/32)`, `ip:ipv6_range("2001:db8::/32")`)
	f(`ip:ipv6_range(::1, "::ff")`, `ip:ipv6_range("::1", "::ff")`)
	f(`contains_common_case(Error, "foo bar")`, `contains_common_case(Error, "foo bar")`)
	f(`f:equals_common_case("")`, `f:equals_common_case("")`)
	f(`contains_common_case()`, `contains_common_case()`)
	f(`f:json_array_contains_any(a, "1", "*")`, `f:json_array_contains_any(a, 1, "*")`)
	f(`pattern_match("<N> ms")`, `pattern_match("<N> ms")`)
	f(`f:PATTERN_MATCH_FULL(<IP4>:<N>)`, `f:pattern_match_full("<IP4>:<N>")`)
	f(`f:pattern_match_prefix(abc) f:pattern_match_suffix("")`, `f:pattern_match_prefix(abc) f:pattern_match_suffix("")`)
	f(`_time:day_range[08:00, 18:00)`, `_time:day_range[08:00, 18:00)`)
	f(`_time:DAY_RANGE(0800, 2400] offset -1.5h`, `_time:day_range(0800, 2400] offset -1.5h`)
	f(`_time:week_range[Mon, fri] offset 2h error`, `_time:week_range[Mon, fri] offset 2h error`)
	f(`* | filter _time:week_range(sun, Saturday)`, `* | filter _time:week_range(sun, Saturday)`)
	f(`ip:ipv4_range(10.0.0.1, "10.0.0.9")`, `ip:ipv4_range(10.0.0.1, 10.0.0.9)`)
	f(`a:eq_field(b) c:le_field("d e") NOT f:lt_field(g)`, `a:eq_field(b) c:le_field("d e") !f:lt_field(g)`)

	// Words, phrases, prefixes.
	f("*", "*")
	f("error", "error")
	f("ERROR", "ERROR")
	f(`"cache miss"`, `"cache miss"`)
	f(`'cache miss'`, `"cache miss"`)
	f("`cache miss`", `"cache miss"`)
	f(`'"redis-main"'`, `"\"redis-main\""`)
	f(`"C:\\temp\\x"`, `"C:\\temp\\x"`)
	f(`"tab\there"`, `"tab\there"`)
	f(`"\u00e9cole"`, "école")
	f("café", "café")
	f("用户", "用户")
	f("ÉCOLE", "ÉCOLE")
	f("/api/v1", `"/api/v1"`)
	f("worker-010", `"worker-010"`)
	f("10.0.0.1", "10.0.0.1")
	f("host:foo:8080", `host:"foo:8080"`)
	f("path:/api/v2/users", `path:"/api/v2/users"`)
	f("don't", `"don't"`)
	f("err*", "err*")
	f(`"cache mi"*`, `"cache mi"*`)
	f("level:warn*", "level:warn*")
	f("f:*", "f:*")
	f("_msg:*", "_msg:*")
	f(`f:""`, `f:""`)
	f(`_msg:""`, `""`)
	f("*foo*", `~"foo"`)
	f("f:*a.b*", `f:~"a\\.b"`)
	f("error # a comment\n timeout", "error timeout")
	f(`"and"`, `"and"`)
	f(`"in"`, `"in"`)
	f("in", `"in"`)
	f("i", `"i"`)
	f("range", `"range"`)
	f("in-progress", `"in-progress"`)
	f("seq.x", "seq.x")
	f("top-level", `"top-level"`)
	f("limit:5", `"limit":5`)
	f("limit*", `"limit"*`)

	// Field names.
	f("http.ua:curl", "http.ua:curl")
	f(`"my field":value`, `"my field":value`)
	f(`"":x`, "x")
	f(`"_time":x`, `"_time":x`)
	f(`some-field:x`, `"some-field":x`)
	f(`level:error`, "level:error")
	f(`"level":"error"`, "level:error")

	// Exact and regexp filters.
	f("level:=error", "level:=error")
	f(`level:="ERROR"`, "level:=ERROR")
	f(`="health check ok"`, `="health check ok"`)
	f(`="cache hit"*`, `="cache hit"*`)
	f(`path:="/api/v2/orders"*`, `path:="/api/v2/orders"*`)
	f(`level:!="info"`, "!level:=info")
	f(`f:=""`, `f:=""`)
	f(`f:=`, `f:=""`)
	f(`exact("a b")`, `="a b"`)
	f(`f:exact(pre*)`, "f:=pre*")
	f(`~"timeout"`, `~"timeout"`)
	f(`~"\\.v3"`, `~"\\.v3"`)
	f(`path:~"^/api/v2/(users|orders)/[0-9]+$"`, `path:~"^/api/v2/(users|orders)/[0-9]+$"`)
	f(`f:!~"x+"`, `!f:~"x+"`)
	f(`re("a.c")`, `~"a.c"`)
	f(`~foo.*bar`, `~"foo.*bar"`)

	// Function filters.
	f("level:in(error, warn)", "level:in(error, warn)")
	f(`level:in("ERROR", "Error")`, "level:in(ERROR, Error)")
	f(`status:in(500, 502, 503)`, "status:in(500, 502, 503)")
	f(`f:in()`, "f:in()")
	f(`f:in(a,)`, "f:in(a)")
	f(`f:in(*)`, "*")
	f(`f:in("*", "a b")`, `f:in("*", "a b")`)
	f(`contains_any(timeout, refused)`, "contains_any(timeout, refused)")
	f(`_msg:contains_any("cache hit", "cache miss")`, `contains_any("cache hit", "cache miss")`)
	f(`contains_all(timeout, upstream)`, "contains_all(timeout, upstream)")
	f(`seq("upstream", "timeout")`, "seq(upstream, timeout)")
	f(`seq(user, "logged in")`, `seq(user, "logged in")`)
	f(`i(error)`, "i(error)")
	f(`level:i(error)`, "level:i(error)")
	f(`i(err*)`, "i(err*)")
	f(`i("cache mi"*)`, `i("cache mi"*)`)
	f(`i(*)`, "i(*)")
	f(`i(école)`, "i(école)")
	f(`IN(a)`, "in(a)")

	// Comparisons and ranges.
	f("status:>=500", "status:>=500")
	f("status:<300", "status:<300")
	f("status:>499", "status:>499")
	f("latency_ms:<=0.5", "latency_ms:<=0.5")
	f("latency_ms:>1e3", "latency_ms:>1e3")
	f("bytes:>10KiB", "bytes:>10KiB")
	f("retry:>=1_000", "retry:>=1_000")
	f("bytes:<0", "bytes:<0")
	f("bytes:<-5", "bytes:<-5")
	f("d:>1.5s", "d:>1.5s")
	f("x:>0x1F", "x:>0x1F")
	f(`level:<"error"`, "level:<error")
	f(`level:>abc`, "level:>abc")
	f(`x:>"5"`, "x:>5")
	f(`t:>"2026-01-01 00:00:00Z"`, `t:>"2026-01-01 00:00:00Z"`)
	f("latency_ms:range(100, 200)", "latency_ms:range(100, 200)")
	f("latency_ms:range[0.5, 1.5e2]", "latency_ms:range[0.5, 1.5e2]")
	f("bytes:range(-inf, 0]", "bytes:range(-inf, 0]")
	f("x:range[-20, inf)", "x:range[-20, inf)")
	f(">5", ">5")

	// Logic.
	f("error AND timeout", "error timeout")
	f("error timeout", "error timeout")
	f("error and timeout", "error timeout")
	f("NOT level:info", "!level:info")
	f("not level:info", "!level:info")
	f("-level:info", "!level:info")
	f("!level:info AND !level:warn", "!level:info !level:warn")
	f("NOT NOT a", "a")
	f("-level:!=info", "level:=info")
	f("(timeout OR refused) AND -level:error", "(timeout or refused) !level:error")
	f("service:(auth OR billing) AND NOT status:200", "(service:auth or service:billing) !status:200")
	f("NOT timeout OR refused", "!timeout or refused")
	f("NOT (timeout OR refused)", "!(timeout or refused)")
	f("a OR b c", "a or b c")
	f("(a OR b) OR c", "a or b or c")
	f("(a b) c", "a b c")
	f("((a))", "a")
	f("a or b", "a or b")
	f("f:(a b)", "f:a f:b")
	f("f:(-a OR =b)", "!f:a or f:=b")
	f("* error", "* error")
	f("!*", "!*")
	f("-(a b)", "!(a b)")
	f("NOT(a)", "!a")
	f("a -b", "a !b")
	f("f:-5", "!f:5")
	f("a and or", `a "or"`)
	f(strings.Repeat("(", 500)+"a"+strings.Repeat(")", 500), "a")
	f(strings.Repeat("!", 501)+"a", "!a")

	// Time filters.
	f("_time:5m", "_time:5m")
	f("_time:1h30m", "_time:1h30m")
	f("_time:[2026-01-01T00:00:00Z, 2026-01-01T00:01:00Z)", "_time:[2026-01-01T00:00:00Z, 2026-01-01T00:01:00Z)")
	f("_time:[2026-01-01T00:00:00Z,2026-01-01T00:01:00Z]", "_time:[2026-01-01T00:00:00Z, 2026-01-01T00:01:00Z]")
	f("_time:>=2026-01-02T00:00:00Z", "_time:>=2026-01-02T00:00:00Z")
	f("_time:2026-01-02Z", "_time:2026-01-02Z")
	f("_time:[now-1h, now]", "_time:[now-1h, now]")
	f("_time:5m offset 1h", "_time:5m offset 1h")
	f("_time:offset 1h", "_time:offset 1h")
	f("_time:<5m", "_time:<5m")
	f("_time:2026", "_time:2026")
	f("-_time:5m", "!_time:5m")
	f("_time:5m error", "_time:5m error")
	f("(_time:5m)", "_time:5m")

	// Pipes.
	f("* | fields _time, service", "* | fields _time, service")
	f("* | keep a", "* | fields a")
	f("* | fields _time, http*", "* | fields _time, http*")
	f(`* | fields "my field", "x y"*`, `* | fields "my field", "x y"*`)
	f("* | fields *", "* | fields *")
	f("* | delete _msg", "* | delete _msg")
	f("* | rm level, service", "* | delete level, service")
	f("* | del a | drop b", "* | delete a | delete b")
	f("* | rename level as severity", "* | rename level as severity")
	f("* | mv a b", "* | rename a as b")
	f("* | rename http* as h*", "* | rename http* as h*")
	f("* | copy level as lvl, service as svc", "* | copy level as lvl, service as svc")
	f("* | cp _time as t", "* | copy _time as t")
	f("* | filter n:>1000", "* | filter n:>1000")
	f(`* | where level:~"(?i)err"`, `* | filter level:~"(?i)err"`)
	f("* | level:error", "* | filter level:error")
	f(`* | "foo"`, "* | filter foo")
	f("* | -level:info", "* | filter !level:info")
	f("* | limit 5", "* | limit 5")
	f("* | head 3", "* | limit 3")
	f("* | head", "* | limit 10")
	f("* | limit", "* | limit 10")
	f("* | limit 0", "* | limit 0")
	f("* | limit 1K", "* | limit 1000")
	f("* | offset 40", "* | offset 40")
	f("* | skip 15867", "* | offset 15867")
	f("* | sort by (latency_ms desc, _time) limit 5", "* | sort by (latency_ms desc, _time) limit 5")
	f("* | sort (service, _time) desc limit 3", "* | sort by (service, _time) desc limit 3")
	f("* | sort by (_time) offset 1 limit 2", "* | sort by (_time) offset 1 limit 2")
	f("* | order by (a asc)", "* | sort by (a)")
	f("* | sort", "* | sort")
	f("* | sort desc", "* | sort desc")
	f("* | sort by (a) limit 2 offset 1", "* | sort by (a) offset 1 limit 2")
	f("* | top 5 by (service)", "* | top 5 by (service)")
	f("* | top by (service)", "* | top 10 by (service)")
	f("* | top 4 by (http.proto) rank", "* | top 4 by (http.proto) rank")
	f("* | top 4 by (a) hits as n rank as r", "* | top 4 by (a) hits as n rank as r")
	f("* | top 3 by level, method", "* | top 3 by (level, method)")
	f("* | top by (hits)", `* | top 10 by ("hits") hits as hitss`)
	f("* | uniq by (level)", "* | uniq by (level)")
	f("* | uniq by (level) with hits", "* | uniq by (level) with hits")
	f("* | uniq (a, b) limit 10", "* | uniq by (a, b) limit 10")
	f("* | uniq a, b hits", "* | uniq by (a, b) with hits")
	f("* | top 2 a hits as n", "* | top 2 by (a) hits as n")
	f("* | top", "* | top 10")
	f("* | top 3 by (*)", "* | top 3")
	f(`* | extract "method=<m> path=<p> "`, `* | extract "method=<m> path=<p> "`)
	f(`* | extract if (level:error) "err=<e> "`, `* | extract if (level:error) "err=<e> "`)
	f(`* | extract "<ip> " from host keep_original_fields skip_empty_results`, `* | extract "<ip> " from host keep_original_fields skip_empty_results`)
	f(`* | extract from host "<ip> "`, `* | extract "<ip> " from host`)
	f(`* | extract_regexp "tcp (?P<ip>[0-9.]+):(?P<port>[0-9]+)"`, `* | extract_regexp "tcp (?P<ip>[0-9.]+):(?P<port>[0-9]+)"`)
	f(`* | unpack_json from payload`, "* | unpack_json from payload")
	f(`* | unpack_json from payload fields (user)`, "* | unpack_json from payload fields (user)")
	f(`* | unpack_json`, "* | unpack_json")
	f(`* | unpack_logfmt if (level:error) result_prefix "p_" keep_original_fields`, `* | unpack_logfmt if (level:error) result_prefix "p_" keep_original_fields`)
	f(`* | unpack_logfmt fields (status)`, "* | unpack_logfmt fields (status)")
	f(`* | format "<level>:<service>" as ls`, `* | format "<level>:<service>" as ls`)
	f(`* | format 'status=<status> ms=<latency_ms>' as f`, `* | format "status=<status> ms=<latency_ms>" as f`)
	f(`* | format if (status:*) "code <status>" as c skip_empty_results`, `* | format if (status:*) "code <status>" as c skip_empty_results`)
	f(`* | format "<uc:level>-<lc:method>"`, `* | format "<uc:level>-<lc:method>"`)
	f("* | len(_msg) as l", "* | len(_msg) as l")
	f("* | len(_msg)", "* | len(_msg) as _msg")
	f("* | len x y", "* | len(x) as y")
	f("* | field_names", "* | field_names as name")
	f("* | field_names as n", "* | field_names as n")
	f("* | field_values level", "* | field_values level")
	f("* | field_values (level) limit 5", "* | field_values level limit 5")
	f("* | facets", "* | facets 10")
	f("* | facets 3", "* | facets 3")
	f("* | facets 3 max_values_per_field 5 max_value_len 100 keep_const_fields", "* | facets 3 max_values_per_field 5 max_value_len 100 keep_const_fields")
	f("* | unroll (v)", "* | unroll (v)")
	f("* | unroll by (a, b)", "* | unroll (a, b)")
	f("* | unroll a", "* | unroll (a)")

	// Stats.
	f("* | stats count() as n", "* | stats count(*) as n")
	f("* | stats count(user_id) as n", "* | stats count(user_id) as n")
	f("* | count() as n", "* | stats count(*) as n")
	f("* | count()", `* | stats count(*) as "count(*)"`)
	f("* | stats count() n", "* | stats count(*) as n")
	f("* | stats count() if (level:error) as errors, count() as total", "* | stats count(*) if (level:error) as errors, count(*) as total")
	f("* | stats count() if (level:error)", `* | stats count(*) if (level:error) as "count(*) if (level:error)"`)
	f("* | stats count() if (error or -warn)", `* | stats count(*) if (error or !warn) as "count(*) if (error or !warn)"`)
	f("* | stats count_empty(host) as n, count_empty(bytes) as b", "* | stats count_empty(host) as n, count_empty(bytes) as b")
	f("* | stats count_uniq(service, level) as n", "* | stats count_uniq(service, level) as n")
	f("* | stats count_uniq(service) limit 10", `* | stats count_uniq(service) limit 10 as "count_uniq(service) limit 10"`)
	f("* | stats sum(bytes) as s, avg(bytes) as a", "* | stats sum(bytes) as s, avg(bytes) as a")
	f("* | stats min(bytes), max(bytes)", `* | stats min(bytes) as "min(bytes)", max(bytes) as "max(bytes)"`)
	f("* | stats median(latency_ms) as m", "* | stats median(latency_ms) as m")
	f("* | stats quantile(0.9, latency_ms) as p90", "* | stats quantile(0.9, latency_ms) as p90")
	f("* | stats quantile(0, x), quantile(1)", `* | stats quantile(0, x) as "quantile(0, x)", quantile(1) as "quantile(1)"`)
	f("* | stats values(level) as v", "* | stats values(level) as v")
	f("* | stats uniq_values(level) limit 5 as v", "* | stats uniq_values(level) limit 5 as v")
	f("* | stats row_min(latency_ms, _time, service, latency_ms) as r", "* | stats row_min(latency_ms, _time, service, latency_ms) as r")
	f("* | stats row_max(bytes) as r", "* | stats row_max(bytes) as r")
	f("* | stats row_max(bytes, *) as r", "* | stats row_max(bytes) as r")
	f("* | stats rate() as r", "* | stats rate() as r")
	f("* | stats histogram(latency), histogram(x) if (a:b) h", `* | stats histogram(latency) as "histogram(latency)", histogram(x) if (a:b) as h`)
	f("* | stats json_values(), json_values(a, b*) sort by (a desc, _time) limit 5 j, json_values(x) order (y) z, json_values(x) order by (y asc) limit 2 if (a:b) w, json_values(*) limit 1 v",
		`* | stats json_values(*) as "json_values(*)", json_values(a, b*) sort by (a desc, _time) limit 5 as j, json_values(x) sort by (y) as z, json_values(x) sort by (y) limit 2 if (a:b) as w, json_values(*) limit 1 as v`)
	f("* | stats json_values(a) sort by (limit) limit 3", `* | stats json_values(a) sort by ("limit") limit 3 as "json_values(a) sort by (\"limit\") limit 3"`)
	f("* | stats count_uniq_hash(a), count_uniq_hash(a, b) limit 5 n", `* | stats count_uniq_hash(a) as "count_uniq_hash(a)", count_uniq_hash(a, b) limit 5 as n`)
	f("* | stats stddev(latency), stddev(*) s, stddev(a, http*) t", `* | stats stddev(latency) as "stddev(latency)", stddev(*) as s, stddev(a, http*) as t`)
	f("* | stats rate_sum(bytes), rate_sum(b*) r", `* | stats rate_sum(bytes) as "rate_sum(bytes)", rate_sum(b*) as r`)
	f("* | stats any(host), any(_msg) as m", `* | stats any(host) as "any(host)", any(_msg) as m`)
	f("* | stats row_any(), row_any(*) a, row_any(host, http*) b", `* | stats row_any(*) as "row_any(*)", row_any(*) as a, row_any(host, http*) as b`)
	f("* | stats field_min(latency, host), field_max(_time, _msg) if (level:error) m", `* | stats field_min(latency, host) as "field_min(latency, host)", field_max(_time, _msg) if (level:error) as m`)
	f("* | stats sum_len(service, level) as n", "* | stats sum_len(service, level) as n")
	f("* | stats sum(*) as n", "* | stats sum(*) as n")
	f("* | stats count(http*) as n", "* | stats count(http*) as n")
	f("* | stats by (service, level) count() as n", "* | stats by (service, level) count(*) as n")
	f("* | stats (level) count() as n", "* | stats by (level) count(*) as n")
	f("* | by (level) count() as n", "* | stats by (level) count(*) as n")
	f("* | stats by (_time:1m) count() as n", "* | stats by (_time:1m) count(*) as n")
	f("* | stats by (_time:1d offset 3h) count() as n", "* | stats by (_time:1d offset 3h) count(*) as n")
	f("* | stats by (_time:1d offset -3h) count() as n", "* | stats by (_time:1d offset -3h) count(*) as n")
	f("* | stats by (x:0.5 offset 0.25) count() as n", "* | stats by (x:0.5 offset 0.25) count(*) as n")
	f("* | stats by (_time:hour, num:10, ip:/24) count() as n", "* | stats by (_time:hour, num:10, ip:/24) count(*) as n")
	f("* | stats by () count() as n", "* | stats count(*) as n")
	f(`* | stats count() as "n m"`, `* | stats count(*) as "n m"`)
	f(`* | STATS Count() AS n`, "* | stats count(*) as n")

	// Math.
	f("* | math bytes * 2 as b2, bytes / 1024 as kib", "* | math bytes * 2 as b2, bytes / 1024 as kib")
	f("* | eval abs(latency_ms) as a, max(bytes, 1) as mb", "* | math abs(latency_ms) as a, max(bytes, 1) as mb")
	f("* | math round(duration, 10) as r10, latency_ms % 7 as m", "* | math round(duration, 10) as r10, latency_ms % 7 as m")
	f("* | math floor(latency_ms / 1000) as s", "* | math floor(latency_ms / 1000) as s")
	f("* | math a + b * c as x", "* | math a + b * c as x")
	f("* | math (a + b) * c as x", "* | math (a + b) * c as x")
	f("* | math a - (b - c) as x", "* | math a - (b - c) as x")
	f("* | math (a - b) - c as x", "* | math a - b - c as x")
	f("* | math 2 ^ 3 ^ 2 as x", "* | math 2 ^ 3 ^ 2 as x")
	f("* | math 2 ^ (3 ^ 2) as x", "* | math 2 ^ (3 ^ 2) as x")
	f("* | math -x ^ 2 as y", "* | math -x ^ 2 as y")
	f("* | math -(x ^ 2) as y", "* | math -(x ^ 2) as y")
	f("* | math x default -1 as y", "* | math x default -1 as y")
	f("* | math a + b default 0 as y", "* | math a + b default 0 as y")
	f("* | math a + (b default 0) as y", "* | math a + (b default 0) as y")
	f("* | math a*2 as y", "* | math a * 2 as y")
	f("* | math a-b as y", "* | math a - b as y")
	f("* | math 10KiB + 1.5s as y", "* | math 10KiB + 1.5s as y")
	f(`* | math "abs" + 1 as y`, `* | math "abs" + 1 as y`)
	f(`* | math "5" + 1 as y`, `* | math "5" + 1 as y`)
	f("* | math x + 1", `* | math x + 1 as "x + 1"`)
	f("* | math +x as y", "* | math x as y")
	f("* | math --x as y", "* | math --x as y")
	f("* | math x y", "* | math x as y")
	f("* | math min(a, b, c) as y", "* | math min(a, b, c) as y")

	// Case-insensitive keywords.
	f("a AnD b Or c", "a b or c")
	f("* | SORT BY (a DESC)", "* | sort by (a desc)")
}

func TestParseFailure(t *testing.T) {
	f := func(in string, col int, wantMsg string) {
		t.Helper()
		q, err := Parse(in, testNow)
		if err == nil {
			t.Fatalf("Parse(%q): expected error; got %s", in, q)
		}
		if !errors.Is(err, ErrParse) {
			t.Fatalf("Parse(%q): error %v does not match ErrParse", in, err)
		}
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("Parse(%q): error %T is not *ParseError", in, err)
		}
		if !strings.Contains(pe.Msg, wantMsg) {
			t.Fatalf("Parse(%q): error %q does not contain %q", in, pe.Msg, wantMsg)
		}
		if col > 0 && pe.Column() != col {
			t.Fatalf("Parse(%q): error %q at column %d; want column %d\n%s", in, pe.Msg, pe.Column(), col, pe.Caret())
		}
	}

	// Empty and broken queries.
	f("", 1, "empty query")
	f("   ", 4, "empty query")
	f("| count()", 1, "missing filter before '|'")
	f("(error | stats count() as n", 8, "missing ')'")
	f("(a OR b", 8, "missing ')'")
	f("a)", 2, "unexpected ')'")
	f("a | ", 5, "missing pipe")
	f("a OR", 3, "missing filter after 'or'")
	f("a AND", 3, "missing filter after 'and'")
	f("NOT", 4, "missing filter")
	f("()", 2, "unexpected \")\"")
	f(`"abc`, 1, "missing closing quote")
	f(`"a\qb"`, 1, "invalid escape sequence")
	f(`foo(bar)`, 4, "missing whitespace")
	f(`"a"b`, 4, "missing whitespace")
	f(`err*foo`, 5, "missing whitespace")
	f(`f:`, 3, "missing filter after field name f")
	f(`foo*:bar`, 1, "field name prefix filter")
	f(`*foo`, 5, "missing '*'")
	f(`a , b`, 3, "unexpected \",\"")
	f(`fields a`, 1, `the query cannot start with pipe name "fields"`)
	f(`stats count()`, 1, `pipe name "stats"`)
	f(`sort`, 1, `pipe name "sort"`)

	// Nesting is bounded.
	f(strings.Repeat("(", 2000)+"a"+strings.Repeat(")", 2000), 1001, "nested too deeply")
	f(strings.Repeat("!", 5000)+"a", 1001, "nested too deeply")
	f("* | math "+strings.Repeat("-", 5000)+"a", 1010, "nested too deeply")

	// Unsupported filters.
	f(`ip:ipv6_range(::1, x)`, 4, `cannot read the arguments of ipv6_range()`)
	f(`ip:ipv6_range(::1/129)`, 4, `cannot read the arguments of ipv6_range()`)
	f(`f:value_type(string)`, 3, `filter "value_type"`)
	// Filter functions with bad arguments.
	f(`ip:ipv4_range(1.2.3.0, x)`, 4, `the bounds of ipv4_range() are IPv4 addresses`)
	f(`ip:ipv4_range(1.2.3.0/33)`, 4, `as an IPv4 address or CIDR`)
	f(`len_range(1)`, 1, `len_range() needs two arguments`)
	f(`len_range(a, 5)`, 1, `the bounds of len_range()`)
	f(`string_range(a)`, 1, `string_range() needs two arguments`)
	f(`f:eq_field()`, 3, `eq_field() needs the name of the other field`)
	f(`contains_common_case(ABCDEFGHIJK)`, 1, `too many common_case combinations for "ABCDEFGHIJK"`)
	f(`equals_common_case(a, *)`, 1, `equals_common_case() takes no unquoted '*'`)
	f(`json_array_contains_any(*)`, 1, `json_array_contains_any() takes no unquoted '*'`)
	f(`pattern_match("<N>", x)`, 1, `pattern_match() needs exactly one argument, the pattern; got 2`)
	f(`pattern_match_full()`, 1, `pattern_match_full() needs exactly one argument`)
	f(`pattern_match_suffix(*)`, 1, `takes no unquoted '*'`)
	f(`_stream_id:in(* | stats count() n)`, 12, `cannot take the values of _stream_id:in`)

	// Stream filters.
	f(`{a="b"`, 7, "missing '}' at the end of the stream filter")
	f(`{a="b",}`, 8, "missing stream tag filter after ','")
	f(`{a="b" or}`, 10, "missing stream tag filter after 'or'")
	f(`{a}`, 3, `unsupported operation "}" after stream tag a`)
	f(`{a:"b"}`, 4, "unsupported operation")
	f(`{="b"}`, 2, "missing stream tag name")
	f(`{a=}`, 4, "missing value of stream tag a")
	f(`{a="b" c="d"}`, 8, "want ',', 'or' or '}'")
	f(`{a=~"(x"}`, 3, "invalid regexp")
	f(`{a in (x}`, 10, "missing ')' at the end of in()")
	f(`_stream:a`, 9, "missing '{' after _stream:")
	f(`_stream_id:`, 1, "missing stream ID")
	f(`f:{a="b"}`, 3, "a stream filter {...} cannot apply to field f")
	f(`_time:day_range 08:00`, 17, `missing '[' or '(' after day_range; got "08"`)
	f(`_time:day_range[8:00, 18:00)`, 17, `cannot parse start "8:00" of day_range as hh:mm`)
	f(`_time:day_range[08:00, 18:61)`, 24, `cannot parse end "18:61" of day_range as hh:mm`)
	f(`_time:day_range[08:0a, 18:00)`, 17, `cannot parse start "08:0a"`)
	f(`_time:day_range[08:00 18:00)`, 23, `missing ','`)
	f(`_time:day_range[08:00, 18:00`, 29, `day_range must end with ']' or ')'`)
	f(`_time:day_range[08:00, 18:00] offset x`, 38, `cannot parse offset "x" as duration`)
	f(`_time:week_range[mo, fr]`, 18, `cannot parse start "mo" of week_range as a weekday`)
	f(`_time:week_range[mon, x]`, 23, `cannot parse end "x" of week_range`)
	f(`*:foo`, 1, `filter "*:..."`)
	f(`options(time_offset=abc) *`, 21, `cannot parse 'time_offset=abc' as a duration`)
	f(`options(global_filter=(x | limit 1)) *`, 23, `global_filter in options(...) takes a filter, not pipes`)
	f(`options(global_filter=x) *`, 23, `missing '(' before the query of global_filter`)
	f(`* | stream_context after -1`, 26, `cannot parse "-1" as the number for 'after'`)
	f(`options(foo=1) *`, 9, `unknown query option "foo"`)
	f(`options(concurrency=x) *`, 21, `cannot parse 'concurrency=x' as an unsigned integer`)
	f(`options(ignore_global_time_filter=maybe) *`, 35, `as a boolean`)

	// Filter values.
	f(`~"(a"`, 2, "invalid regexp")
	f(`f:~"[z-a]"`, 4, "invalid regexp")
	f(`re("(")`, 1, "invalid regexp")
	f(`level:in(error`, 15, "missing ')' at the end of in()")
	f(`level:in(a b)`, 12, "missing ',' or ')'")
	f(`f:range(a, 5)`, 9, `cannot parse lower bound "a"`)
	f(`f:range(1, 5`, 13, "range() must end with ')' or ']'")
	f(`f:range[1 5]`, 11, "missing ','")
	f(`i(a`, 4, "missing ')'")
	f(`f:>`, 4, "missing value after '>'")

	// Time filters.
	f(`_time:`, 7, "missing value after '_time:'")
	f(`_time:abc`, 7, `cannot parse "abc" as duration or time`)
	f(`_time:[2026-01-01Z 2026-01-02Z]`, 20, "missing ','")
	f(`_time:[2026-01-01Z, 2026-01-02Z`, 32, "must end with ']' or ')'")
	f(`_time:[2026-13-01Z, now]`, 8, "cannot parse time")
	f(`_time:5m offset abc`, 17, "cannot parse offset")
	f(`_time:>2026-01-01T25:00:00Z`, 8, "cannot parse time")

	// Pipes.
	f(`* | foo`, 5, `unknown pipe "foo"`)
	f(`* | sort by (x) partition by (y)`, 33, `missing 'limit' for 'partition by'`)
	f(`* | sort by (x) limit 2 partition by (y*)`, 39, `cannot be a '*' pattern`)
	f(`* | sort by (x) limit 2 partition (y) partition (z)`, 39, `duplicate 'partition by'`)
	f(`* | sort by (x) rank as`, 24, `missing rank field name`)
	f(`* | join by () (*)`, 13, `join needs at least one field`)
	f(`* | join by (a)`, 16, `missing '(' before the query of join`)
	f(`* | join by (a) (* | fields a`, 30, `missing ')' at the end of the query of join`)
	f(`* | union ()`, 12, `empty query in union`)
	f(`* | union rows({a b})`, 19, `missing ':' or '=' after a`)
	f(`* | stream_context`, 5, `missing 'before N' or 'after N' in 'stream_context'`)
	f(`* | stream_context before x`, 27, `cannot parse "x" as the number for 'before'`)
	f(`* | stream_context after 1 time_window abc`, 40, `cannot parse "abc" as the duration of time_window`)
	f(`a:in(* | stats count() n)`, 3, `must end with '| fields x' or '| uniq by (x)'`)
	f(`a:in(* | fields b, c)`, 3, `must name one field`)
	f(`* | running_stats`, 18, `missing running_stats function`)
	f(`* | running_stats avg(x)`, 19, `missing running_stats function`)
	f(`* | total_stats count() a, sum(x) a`, 28, `two functions have the result name a`)
	f(`* | running_stats first(a, b)`, 24, `first() takes one field`)
	f(`* | running_stats last(a) offset -1`, 34, `cannot parse "-1"`)
	f(`* | collapse_nums foo`, 19, `unexpected "foo"`)
	f(`* | collapse_nums prettify at x`, 28, `unexpected "at"`)
	f(`* | time_add`, 13, "missing duration")
	f(`* | time_add abc`, 14, "cannot parse \"abc\" as the duration")
	f(`* | split`, 10, "missing split separator")
	f(`* | split as x`, 11, "missing split separator")
	f(`* | split " " from x*`, 20, "cannot be a '*' pattern")
	f(`* | unpack_words from`, 22, "missing field")
	f(`* | unpack_syslog foo,`, 22, `unexpected ","`)
	f(`* | unpack_syslog offset`, 25, "missing duration after 'offset'")
	f(`* | unpack_syslog offset abc`, 26, `cannot parse "abc" as the offset`)
	f(`* | unpack_syslog from x*`, 24, "cannot be a '*' pattern")
	f(`* | unpack_syslog from x y`, 26, `unexpected "y"`)
	f(`* | unpack_syslog result_prefix`, 32, "missing prefix")
	f(`* | unpack_syslog keep_original_fields offset 1h`, 40, `unexpected "offset"`)
	f(`* | last 0`, 11, `at least 1`)
	f(`* | replace ("a")`, 17, `missing ','`)
	f(`* | replace_regexp ("(", "x")`, 21, `cannot compile the regexp`)
	f(`* | block_stats`, 5, `pipe "block_stats" is not supported by spate`)
	f(`* | sample 0`, 12, `sample must be bigger than 0`)
	f(`* | set_stream_fields`, 22, "missing field name")
	f(`* | set_stream_fields a b`, 25, `unexpected "b"`)
	f(`* | set_stream_fields if (a)`, 29, "missing field name")
	f(`* | generate_sequence`, 22, `missing the number of rows after 'generate_sequence'`)
	f(`* | generate_sequence 0.5`, 23, `must be 1 or more`)
	f(`* | generate_sequence x`, 23, `missing the number of rows`)
	f(`* | generate_sequence 1x`, 23, `cannot parse "1x"`)
	f(`* | sample`, 11, `missing number after 'sample'`)
	f(`* | sample x`, 12, `cannot parse "x" as the number for 'sample'`)
	f(`* | limit abc`, 11, `cannot parse "abc" as the number for 'limit'`)
	f(`* | limit -1`, 11, `cannot parse "-1"`)
	f(`* | offset`, 11, "missing number after 'offset'")
	f(`* | sort by (`, 14, "missing sort field")
	f(`* | sort by (a`, 15, "missing ',' or ')'")
	f(`* | sort by a`, 13, "missing '('")
	f(`* | sort by (a) limit 1 limit 2`, 25, "duplicate 'limit'")
	f(`* | fields a b`, 14, `unexpected "b" after pipe "fields a"`)
	f(`* | fields`, 11, "missing field name")
	f(`* | rename a* as b`, 18, "must end with '*'")
	f(`* | top 0 by (a)`, 9, "must be an integer bigger than 0")
	f(`* | uniq by (a) with`, 21, "missing 'hits'")
	f(`* | uniq`, 9, "missing fields in uniq pipe")
	f(`* | uniq by`, 12, "missing fields after 'by'")
	f(`* | uniq by (*)`, 10, "missing fields in uniq pipe")
	f(`* | unroll`, 11, "missing fields in unroll pipe")
	f(`* | top by`, 11, "missing fields after 'by'")
	f(`* | extract "abc"`, 13, "at least one named placeholder")
	f(`* | extract "<_> x"`, 13, "at least one named placeholder")
	f(`* | extract_regexp "(a"`, 20, "invalid regexp")
	f(`* | extract_regexp "(a)"`, 20, "has no named group")
	f(`* | unpack_json fields (a*)`, 25, "cannot be a '*' pattern")
	f(`* | format "<a*>"`, 12, "cannot use a '*' pattern")
	f(`* | unroll if (a) by (b)`, 12, "'if' in unroll")
	f(`* | filter`, 11, "missing filter after")
	f(`* | where (a`, 13, "missing ')'")
	f(`* | len() as x`, 9, "missing field name")
	f(`* | coalesce()`, 13, "coalesce needs at least one field")
	f(`* | coalesce a`, 14, "missing '('")
	f(`* | coalesce(a) as b*`, 20, "cannot be a '*' pattern")
	f(`* | hash() as x`, 10, "missing field name")
	f(`* | json_array_concat from`, 27, "missing field")

	// Stats.
	f(`* | stats foo()`, 11, `unknown stats function "foo"`)
	f(`* | stats coutn()`, 11, `unknown stats function "coutn"`)
	f(`* | stats`, 10, "missing stats function")
	f(`* | stats by (a)`, 17, "missing stats function")
	f(`* | stats count`, 16, "missing '(' after stats function")
	f(`* | stats count() as n, count() as n`, 25, `duplicate result name "n"`)
	f(`* | stats by (n) count() as n`, 18, `also a 'by' field`)
	f(`* | stats count() as n sum(x)`, 24, `unexpected "sum"`)
	f(`* | stats quantile(x) as q`, 19, "phi argument of quantile()")
	f(`* | stats quantile(1.5, x) as q`, 19, "phi argument of quantile()")
	f(`* | stats quantile() as q`, 19, "missing phi")
	f(`* | stats row_min() as r`, 18, "first argument of row_min()")
	f(`* | stats row_min(a*) as r`, 18, "first argument of row_min()")
	f(`* | stats rate(x) as r`, 15, "rate() takes no arguments")
	f(`* | stats histogram() as r`, 20, "histogram() takes exactly one field name")
	f(`* | stats histogram(*) as r`, 20, "histogram() takes exactly one field name")
	f(`* | stats histogram(a*) as r`, 20, "histogram() takes exactly one field name")
	f(`* | stats histogram(a, b) as r`, 20, "histogram() takes exactly one field name")
	f(`* | stats json_values(a) sort by a`, 34, "missing '('")
	f(`* | stats json_values(a) sort by (a`, 36, "missing ',' or ')'")
	f(`* | stats json_values(a) limit x`, 32, "limit")
	f(`* | stats count_uniq_hash() as r`, 26, "count_uniq_hash() needs at least one field")
	f(`* | stats count_uniq_hash(*) as r`, 26, "takes no field pattern")
	f(`* | stats any() as r`, 14, "any() takes exactly one field name")
	f(`* | stats any(a, b) as r`, 14, "any() takes exactly one field name")
	f(`* | stats any(a*) as r`, 14, "any() takes exactly one field name")
	f(`* | stats field_min(a) as r`, 20, "field_min() takes two field names")
	f(`* | stats field_max(a, b, c) as r`, 20, "field_max() takes two field names")
	f(`* | stats count_uniq() as r`, 21, "count_uniq() needs at least one field")
	f(`* | stats count_uniq(*) as r`, 21, "takes no field pattern")
	f(`* | stats count_uniq(a, b*) as r`, 21, "takes no field pattern")
	f(`* | stats by (_time:abc) count()`, 21, `cannot parse bucket size "abc"`)
	f(`* | stats by (_time:1d offset x) count()`, 31, `cannot parse bucket offset "x"`)
	f(`* | stats count() switch (case (a) as x)`, 19, "'switch' in stats")
	f(`* | stats count() if level:x`, 22, "missing '(' after 'if'")

	// Math.
	f(`* | math`, 9, "missing math expression")
	f(`* | math a +`, 12, "missing operand after \"+\"")
	f(`* | math now(1) as r`, 10, "now() takes 0 arguments; got 1")
	f(`* | sort by (rid) rank offset 3 limit 2`, 31, "unexpected")
	f(`* | uniq by (a, b) filter x`, 20, "'filter' in uniq pipe takes one field; got 2")
	f(`* | math a xor`, 12, `missing operand after "xor"`)
	f(`* | math abs(a, b) as r`, 10, "abs() takes 1 arguments; got 2")
	f(`* | math max(a) as r`, 10, "max() takes at least 2 arguments")
	f(`* | math round(a, b, c) as r`, 10, "round() takes 1 or 2 arguments")
	f(`* | math abs as r`, 14, "missing '(' after math function")
	f(`* | math 5x as r`, 10, `cannot parse "5x" as a number`)
	f(`* | math (a as r`, 13, "missing ')'")
	f(`* | math a as r b`, 17, `unexpected "b" after math expression`)
}

func TestParseErrorFormat(t *testing.T) {
	_, err := Parse("* | stats  foo()", testNow)
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("unexpected error type %T", err)
	}
	if got, want := err.Error(), `cannot parse query at column 12: unknown stats function "foo"`; got != want {
		t.Fatalf("Error()\ngot:  %s\nwant: %s", got, want)
	}
	_, err = Parse("用户 | stats\tfoo()", testNow)
	if !errors.As(err, &pe) {
		t.Fatalf("unexpected error type %T", err)
	}
	if got, want := pe.Column(), 12; got != want {
		t.Fatalf("Column() = %d; want %d", got, want)
	}
	want := "用户 | stats foo()\n             ^"
	if got := pe.Caret(); got != want {
		t.Fatalf("Caret()\ngot:\n%s\nwant:\n%s", got, want)
	}
	_, err = Parse("* | stats cuont()", testNow)
	if !errors.As(err, &pe) {
		t.Fatalf("unexpected error type %T", err)
	}
	want = "* | stats cuont()\n          ^\nhint: did you mean \"count\"?"
	if got := pe.Caret(); got != want {
		t.Fatalf("Caret()\ngot:\n%s\nwant:\n%s", got, want)
	}
	_, err = Parse("a\nb )", testNow)
	if !errors.As(err, &pe) {
		t.Fatalf("unexpected error type %T", err)
	}
	if got, want := pe.Caret(), "a b )\n    ^"; got != want {
		t.Fatalf("Caret()\ngot:\n%s\nwant:\n%s", got, want)
	}
}

func TestFilterTimeStringWithoutText(t *testing.T) {
	f := func(ft *FilterTime, want string) {
		t.Helper()
		if got := ft.String(); got != want {
			t.Fatalf("String() = %s; want %s", got, want)
		}
		if want == "*" {
			return
		}
		got, err := ParseFilter(want, testNow)
		if err != nil {
			t.Fatalf("ParseFilter(%q): %s", want, err)
		}
		ft.Text = want[len("_time:"):]
		if !reflect.DeepEqual(got, ft) {
			t.Fatalf("ParseFilter(%q) = %#v; want %#v", want, got, ft)
		}
	}
	f(&FilterTime{Min: 1767225600123456789, Max: 1767225601000000000},
		"_time:[2026-01-01T00:00:00.123456789Z, 2026-01-01T00:00:01.000000000Z]")
	f(&FilterTime{Min: math.MinInt64, Max: 5}, "_time:<=1970-01-01T00:00:00.000000005Z")
	f(&FilterTime{Min: 5, Max: math.MaxInt64}, "_time:>=1970-01-01T00:00:00.000000005Z")
	f(&FilterTime{Min: math.MinInt64, Max: math.MaxInt64}, "*")
}

func TestParseFilter(t *testing.T) {
	f, err := ParseFilter("level:error status:>=500", testNow)
	if err != nil {
		t.Fatalf("unexpected error: %s", err)
	}
	want := &FilterAnd{Filters: []Filter{
		&FilterPhrase{Field: "level", Phrase: "error"},
		&FilterCompare{Field: "status", Op: ">=", Num: 500, Text: "500"},
	}}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("got %#v\nwant %#v", f, want)
	}
	if _, err := ParseFilter("a | limit 1", testNow); !errors.Is(err, ErrParse) {
		t.Fatalf("expected a parse error for pipes; got %v", err)
	}
}

// TestParseTree checks the trees of queries whose fields String() does not
// show, such as default result names and numbers.
func TestParseTree(t *testing.T) {
	f := func(in string, want *Query) {
		t.Helper()
		q, err := Parse(in, testNow)
		if err != nil {
			t.Fatalf("Parse(%q): unexpected error: %s", in, err)
		}
		if !reflect.DeepEqual(q, want) {
			t.Fatalf("Parse(%q)\ngot:  %#v\nwant: %#v", in, q, want)
		}
	}
	all := &FilterAll{}
	f("service:(auth OR billing)", &Query{Filter: &FilterOr{Filters: []Filter{
		&FilterPhrase{Field: "service", Phrase: "auth"},
		&FilterPhrase{Field: "service", Phrase: "billing"},
	}}})
	f(`f:!="v"`, &Query{Filter: &FilterNot{Filter: &FilterExact{Field: "f", Value: "v"}}})
	f(`i("Cache Mi"*)`, &Query{Filter: &FilterPrefix{Field: "_msg", Prefix: "Cache Mi", CaseInsensitive: true}})
	f(`bytes:>10KiB`, &Query{Filter: &FilterCompare{Field: "bytes", Op: ">", Num: 10240, Text: "10KiB"}})
	f(`level:<"error"`, &Query{Filter: &FilterCompare{Field: "level", Op: "<", IsString: true, Value: "error"}})
	f(`x:range(-inf, 0]`, &Query{Filter: &FilterRange{Field: "x", Lo: math.Inf(-1), Hi: 0, HiInc: true, LoText: "-inf", HiText: "0"}})
	f(`f:in(a, "b", 500)`, &Query{Filter: &FilterIn{Field: "f", Values: []string{"a", "b", "500"}}})
	f(`* | stats by (_time:1d offset 3h, n:10) count() if (a) as x, quantile(0.5, v)`, &Query{Filter: all, Pipes: []Pipe{&PipeStats{
		By: []ByField{
			{Name: "_time", Bucket: "1d", BucketNs: 86400e9, BucketNum: 86400e9, Offset: 3 * 3600e9, OffsetNum: 3 * 3600e9, OffsetText: "3h"},
			{Name: "n", Bucket: "10", BucketNum: 10},
		},
		Funcs: []StatsFunc{
			{Name: "count", If: &FilterPhrase{Field: "_msg", Phrase: "a"}, Result: "x"},
			{Name: "quantile", Fields: []string{"v"}, Phi: 0.5, PhiText: "0.5", Result: "quantile(0.5, v)"},
		},
	}}})
	f(`* | stats row_min(a, b, c) r, count(*), count_uniq(x) limit 3`, &Query{Filter: all, Pipes: []Pipe{&PipeStats{
		Funcs: []StatsFunc{
			{Name: "row_min", Fields: []string{"a", "b", "c"}, Result: "r"},
			{Name: "count", Result: "count(*)"},
			{Name: "count_uniq", Fields: []string{"x"}, Limit: 3, Result: "count_uniq(x) limit 3"},
		},
	}}})
	f(`* | math x default -1 as y, round(a / 2, 0.5) as r`, &Query{Filter: all, Pipes: []Pipe{&PipeMath{Assigns: []MathAssign{
		{Expr: &MathExpr{Op: "default", Args: []*MathExpr{
			{Op: "field", Field: "x"},
			{Op: "neg", Args: []*MathExpr{{Op: "num", Num: 1, Text: "1"}}},
		}}, Result: "y"},
		{Expr: &MathExpr{Op: "round", Args: []*MathExpr{
			{Op: "/", Args: []*MathExpr{{Op: "field", Field: "a"}, {Op: "num", Num: 2, Text: "2"}}},
			{Op: "num", Num: 0.5, Text: "0.5"},
		}}, Result: "r"},
	}}}})
	f(`* | extract "<a>" | unpack_json | format "<a>" | top 5 by (a) | field_names | facets`, &Query{Filter: all, Pipes: []Pipe{
		&PipeExtract{Pattern: "<a>", From: "_msg"},
		&PipeUnpack{Format: "json", From: "_msg"},
		&PipeFormat{Pattern: "<a>", Result: "_msg"},
		&PipeTop{N: 5, By: []string{"a"}, HitsName: "hits"},
		&PipeFieldNames{ResultName: "name"},
		&PipeFacets{N: 10},
	}})
}

// conformanceCase is one line of shared/conformance/cases.jsonl.
type conformanceCase struct {
	ID    string `json:"id"`
	Query string `json:"query"`
	Error any    `json:"error"`
}

// loadConformanceCases reads the shared conformance cases, or skips the test
// if the file is absent.
func loadConformanceCases(tb testing.TB) []conformanceCase {
	tb.Helper()
	fh, err := os.Open("../../../shared/conformance/cases.jsonl")
	if errors.Is(err, os.ErrNotExist) {
		tb.Skip("shared/conformance/cases.jsonl is absent")
	}
	if err != nil {
		tb.Fatalf("cannot open conformance cases: %s", err)
	}
	defer fh.Close()
	var cases []conformanceCase
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c conformanceCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatalf("cannot parse conformance case %q: %s", sc.Text(), err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("cannot read conformance cases: %s", err)
	}
	return cases
}

func TestParseConformance(t *testing.T) {
	for _, c := range loadConformanceCases(t) {
		q, err := Parse(c.Query, testNow)
		if c.Error != nil {
			if err == nil {
				t.Errorf("%s: Parse(%q) must fail; got %s", c.ID, c.Query, q)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: Parse(%q): unexpected error: %s", c.ID, c.Query, err)
			continue
		}
		checkRoundTrip(t, c.Query, q)
	}
}

// TestPipeNames pins the pipe names and aliases of the parse table
// (getPipeParsers): the names spate has accepted since before the table,
// and those added since (drop_empty_fields, first, last, replace,
// replace_regexp).
func TestPipeNames(t *testing.T) {
	want := []string{
		"coalesce", "collapse_nums", "copy", "cp", "decolorize", "del", "delete", "drop", "drop_empty_fields", "eval", "extract", "extract_regexp", "facets",
		"field_names", "field_values", "fields", "filter", "first", "format", "generate_sequence", "hash", "head", "join", "json_array_concat", "json_array_len", "keep", "last", "len",
		"limit", "math", "mv", "offset", "order", "pack_json", "pack_logfmt", "rename", "replace", "replace_regexp", "rm", "running_stats", "sample", "set_stream_fields", "skip", "sort", "split", "stats", "stream_context",
		"time_add", "top", "total_stats", "union", "uniq", "unpack_json", "unpack_logfmt", "unpack_syslog", "unpack_words", "unroll", "where",
	}
	if got := supportedPipeNames(); !reflect.DeepEqual(got, want) {
		t.Fatalf("pipe names:\ngot  %q\nwant %q", got, want)
	}
	for _, name := range want {
		if !isPipeName(strings.ToUpper(name)) || !isReservedWord(name) {
			t.Errorf("%q: not a pipe name or not a reserved word", name)
		}
	}
}

// TestStatsFuncNames pins the names of the stats function table
// (getStatsFuncDefs) and the functions that take "limit N".
func TestStatsFuncNames(t *testing.T) {
	want := []string{
		"any", "avg", "count", "count_empty", "count_uniq", "count_uniq_hash", "field_max", "field_min", "histogram", "json_values", "max", "median", "min", "quantile",
		"rate", "rate_sum", "row_any", "row_max", "row_min", "stddev", "sum", "sum_len", "uniq_values", "values",
	}
	if got := supportedStatsFuncNames(); !reflect.DeepEqual(got, want) {
		t.Fatalf("stats function names:\ngot  %q\nwant %q", got, want)
	}
	for _, name := range want {
		if !isStatsFuncName(strings.ToUpper(name)) || !isReservedWord(name) {
			t.Errorf("%q: not a stats function name or not a reserved word", name)
		}
		wantLimit := name == "count_uniq" || name == "count_uniq_hash" || name == "json_values" || name == "uniq_values" || name == "values"
		if got := getStatsFuncDefs()[name].limit; got != wantLimit {
			t.Errorf("%q takes limit: %v, want %v", name, got, wantLimit)
		}
	}
}
