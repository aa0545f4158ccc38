package query_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/conformance"
	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/query/naive"
)

// edgeLines exercise the raw-byte prefilter and the line model: literals
// hidden behind JSON escapes, plain text, invalid JSON, CRLF, empty lines,
// missing messages and nesting.
var edgeLines = []string{
	`{"ts":"2026-01-01T00:00:00Z","level":"error","msg":"disk error"}`,
	`{"ts":"2026-01-01T00:00:01Z","level":"\u0065rror","msg":"\u0065rror hidden by an escape"}`,
	`{"ts":"2026-01-01T00:00:02Z","level":"info","msg":"quote \"error\" inside"}`,
	`plain text error line without json`,
	`{"ts":"2026-01-01T00:00:03Z","level":"warn","msg":"truncated json error`,
	`{"ts":"2026-01-01T00:00:04Z","level":"info","msg":"crlf line"}` + "\r",
	``,
	`{"ts":"2026-01-01T00:00:05Z","level":"error"}`,
	`{"ts":1767225606000,"level":"debug","msg":"epoch millis","http":{"status":500,"ua":"curl/8"}}`,
	`{"ts":"2026-01-01T02:00:07+02:00","msg":"caf\u00e9 timeout","tags":["a","b"]}`,
	`   `,
	`{"ts":"2026-01-01T00:00:08Z","msg":"bad utf8 ` + "\xff" + ` error"}`,
	// Message and time candidates that lose to better ones are ordinary
	// fields; the winners are only _msg and _time.
	`{"message":"second","time":"later","ts":"2026-01-01T00:00:09Z","msg":"first","level":"info"}`,
	`{"message":"only message","timestamp":"2026-01-01T00:00:10Z","time":"2026-01-01T00:00:11Z"}`,
	// Arrays and objects are values in compact text; the line spells them
	// with spaces.
	`{"ts":"2026-01-01T00:00:12Z","msg":"spaced array","b":[1, 2, 3],"o":{"k" : [1, {"z": 2}]}}`,
	`{"ts":"2026-01-01T00:00:13Z","msg":"spaced strings","b":[ "x" , "y" ]}`,
	// Values VictoriaLogs reads as numbers though they are not decimals.
	`{"ts":"2026-01-01T00:00:14Z","msg":"n1","v":"0x1F","w":"file10"}`,
	`{"ts":"2026-01-01T00:00:15Z","msg":"n2","v":"100ns","w":"file9"}`,
	`{"ts":"2026-01-01T00:00:16Z","msg":"n3","v":"1.5s","w":"/api"}`,
	`{"ts":"2026-01-01T00:00:17Z","msg":"n4","v":"2KB","w":"200"}`,
	`{"ts":"2026-01-01T00:00:18Z","msg":"n5","v":"10.0.0.1","w":"x-1"}`,
	`{"ts":"2026-01-01T00:00:19Z","msg":"n6","v":"2026-01-02T03:04:05Z","w":"x1"}`,
	`{"ts":"2026-01-01T00:00:20Z","msg":"n7","v":"1_000","w":"01"}`,
	`{"ts":"2026-01-01T00:00:21Z","msg":"n8","v":"1e3","w":"1"}`,
	`{"ts":"2026-01-01T00:00:22Z","msg":"n9","v":"-5","w":"inf"}`,
	`{"ts":"2026-01-01T00:00:23Z","msg":"n10","v":"1h30m","w":"-inf"}`,
	`{"ts":"2026-01-01T00:00:24Z","msg":"n11","v":"5us","w":"5µs"}`,
	`{"ts":"2026-01-01T00:00:25Z","msg":"n12","v":"2001:db8::1","w":"::1"}`,
	// Case spellings, JSON arrays (nested and as text, fastjson's lenient
	// numbers), collapse_nums patterns (one behind an escape), times of day
	// and weekdays (one before 1970).
	`{"ts":"2026-01-03T08:30:00Z","msg":"c1 Error ERROR","cc":"eRROR x","arr":["a","b c",1,null,{"k":"a"}],"pm":"took 123ms at 2025-12-20"}`,
	`{"ts":"2026-01-04T18:00:00Z","msg":"c2","cc":"Errors","arr":"[\"\\u00e9\", 1.2.3, \"x\\ny\"]","pm":"ip 10.0.0.1 uuid 2edfed59-3e98-4073-bbb2-28d321ca71a7"}`,
	`{"ts":"1969-12-31T00:00:00Z","msg":"c3","cc":"ϴ","arr":"[\"é\",]","pm":"dt 2025-10-20T10:20:30Z end 10:20:30,5"}`,
	`{"ts":"2026-01-05T23:59:59.5Z","msg":"c4","cc":"ERRORS","arr":"[\"é\"]","pm":"t\u006fok 5ms"}`,
	// Color sequences; JSON arrays in strings, as fastjson reads them
	// (lenient numbers and escapes, null as "null").
	`{"ts":"2026-01-01T00:00:26Z","msg":"\u001b[31mred\u001b[0m and \u001b[1;32mbold\u001b[","za":"a1","zb":"b1","arr":"[\"x\", null, 1.50, {\"k\" : \"v\\\"\"}, [1, 2], true]"}`,
	`{"ts":"2026-01-01T00:00:27Z","msg":"lenient","zb":"b2","arr":"[+1, 1.2.3, nan, -Inf, \"a\\q\\u0041\\ud83d\\ude00\\ud83d\"]"}`,
	`{"ts":"2026-01-01T00:00:28Z","msg":"not arrays","za":"","arr":"[1,2,]","arr2":"[1] x","arr3":" [ ] "}`,
	// Numbers to collapse, times to shift, words and pieces.
	`{"ts":"2026-01-01T00:00:29Z","msg":"req 1234 took 45ms from 10.0.0.1 at 2024-12-25T10:20:30.123+05:00 id 550e8400-e29b-41d4-a716-446655440000 v1.2.3 0xdeadbeef abc 1a ЫВА123 foo123_456","t2":"2026-01-01 10:00:00.5Z","t3":"bad","words":"Hello, wörld! hello_1 héllo Hello <x> 'q'","csv":"a,<b>,,'c',"}`,
	`{"ts":"2026-01-01T00:00:30Z","msg":"2024/12/25 10:20:30,555 done 3h5m6s43ms 12:30:45 1.23.45.67 ab12 abcdef1","t2":"2026-01-01T10:00:00+0200","words":"x x x","csv":"é,\u0001\t"}`,
	// count_uniq_hash of one field: "1000" is "1_000"; "-0" is not "0".
	`{"ts":"2026-01-01T00:00:26Z","msg":"n13","v":"1000","w":"-0","x":"0"}`,
	// Bytes VictoriaLogs escapes its own way in the JSON it builds
	// (quicktemplate: < and ' as \u003c and \u0027, \b and \f by name).
	// Alike but for their other fields: a sort without fields tells them
	// apart by the field one lacks ("" first).
	`{"ts":"2026-01-01T00:00:32Z","msg":"tie","zb":"b9"}`,
	`{"ts":"2026-01-01T00:00:32Z","msg":"tie","za":"a9"}`,
	`{"ts":"2026-01-01T00:00:31Z","msg":"quoting <a'b>","q":"<a'b>\b\f\u0001\"\\é","r":"x y"}`,
	// Syslog messages: RFC 5424 with structured data, RFC 3164 with a
	// stamp (after spaces) or an RFC 3339 time, a bad priority, no header.
	`{"ts":"2026-01-01T00:00:31Z","msg":"sys1","sl":"<165>1 2023-06-03T17:42:32.123Z host app 123 ID47 [ex@1 iut=\"3\" src=\"a\\\"b\\]c\"][meta x=y][none] hello world"}`,
	`{"ts":"2026-01-01T00:00:32Z","msg":"sys2","level":"app","sl":"  <34>Oct 11 22:14:15 mymachine su[99]: 'su root' failed"}`,
	`{"ts":"2026-01-01T00:00:33Z","msg":"sys3","hostname":"orig","sl":"<13>2024-05-06T07:08:09.5+02:00 web nginx: GET /"}`,
	`{"ts":"2026-01-01T00:00:34Z","msg":"sys4","sl":"<x>1 bad","sl2":"<191>1 2024-01-01T00:00:00Z h a p m -"}`,
	`{"ts":"2026-01-01T00:00:35Z","msg":"sys5","sl":"no header at all","sl2":"<0>Jan  2 03:04:05 host: x"}`,
}

var edgeQueries = []string{
	`error | stats count() n`,
	`level:error | stats count() n`,
	`~"rror" | stats count() n`,
	`"missing _msg" | stats count() n`,
	`café | fields _time, _msg`,
	`http.status:>=500 | fields _time, http.ua`,
	`* | stats by (level) count() n`,
	`* | fields _time, level, _msg`,
	`tags:* | unroll (tags) | fields tags`,
	`timeout | fields _time`,
	`* | stats by (message) count() n`,
	`* | stats by (time, timestamp) count() n`,
	`message:second | stats count() n`,
	`b:="[1,2,3]" | fields _time`,
	`b:"[1,2,3]" | fields _time`,
	`b:="[1,2,"* | fields _time`,
	`b:~"^\\[1,2" | fields _time`,
	`b:="[\"x\",\"y\"]" | fields _time`,
	`o.k:="[1,{\"z\":2}]" | fields _time`,
	`"1,2,3" | stats count() n`,
	// Field patterns in stats functions; tuples of empty values in uniq.
	`* | stats count(http*) c, count_empty(http*) e, sum(http*) s, avg(http*) a, min(http*) mn, max(http*) mx, sum_len(http*) l, uniq_values(http*) u, values(http*) v`,
	`* | stats by (level) row_max(_time, http*) r, row_min(http.status) m`,
	`* | uniq by (level) with hits`,
	`* | uniq by (level, nosuch) with hits`,
	`* | uniq by (level) | stats count() n`,
	`* | stats values(level) v, count_uniq(level) u`,
	`nosuch:x | stats row_min(level) a, row_max(level) b, count() c`,
	`* | unroll (tags) | stats count() n`,
	`* | unroll (tags, level) | fields _time, tags, level`,
	`v:range(1, 500) | fields _time, v`,
	`v:>0 | fields _time, v`,
	`v:>1KB | fields _time`,
	`v:<"192.168.0.1" | fields _time`,
	`v:>"2026-01-01T00:00:00Z" | fields _time`,
	`v:<NaN | fields _time`,
	`v:range[NaN, 5] | fields _time`,
	`v:* | math v*2 as m | fields _time, m`,
	`v:* | stats sum(v) s, avg(v) a, count() n`,
	// min and max over numbers only: VictoriaLogs' order is not transitive
	// across kinds (an IP sorts naturally before "-5", which is less than
	// "0x1F", which sorts naturally before the IP), so workers could differ.
	`v:* NOT v:~"[.:]|us" | stats min(v) mn, max(v) mx`,
	`w:* | stats min(w) mn, max(w) mx`,
	`w:* | sort by (w) | fields w`,
	`w:* | sort by (w desc) | fields w`,
	`w:* | stats row_min(w) r`,
	`w:* | stats sum(w) s, avg(w) a`,
	`v:* | math v + 0 as m | fields _time, m`,
	`w:<inf | fields _time`,
	`w:>-inf | fields _time`,
	`w:range(-inf, inf) | fields _time`,
	`v:* | math v % 7 as a, v % 0 as b, -4 % 2 as c | fields _time, a, b, c`,
	`v:len_range(3, 5) | fields _time, v`,
	`w:len_range(0, 2) | fields _time`,
	`v:ipv4_range(10.0.0.0/8) | fields _time`,
	`v:ipv6_range(2001:db8::/32) OR w:ipv6_range(::1) | fields _time`,
	`v:ipv6_range(::ffff:10.0.0.0/104) | fields _time`,
	`v:ipv6_range("2001:db8::", "2001:db9::") | fields _time`,
	`v:ipv4_range(10.0.0.0, 10.0.0.5) OR v:ipv4_range(10.0.0.1) | fields _time`,
	`cc:contains_common_case(Error) | fields _time`,
	`contains_common_case(error, ϴ) | fields _time`,
	`cc:equals_common_case(ϴ) OR cc:equals_common_case(Errors) | fields _time`,
	`cc:contains_common_case("") | stats count() n`,
	`arr:json_array_contains_any(a, "1.2.3") | fields _time`,
	`arr:json_array_contains_any(null, "x\ny", é) | fields _time`,
	`pm:pattern_match("took <N>ms") | fields _time`,
	`pm:pattern_match_full("ip <IP4> uuid <UUID>") OR pm:pattern_match_suffix("end <TIME>") | fields _time`,
	`pm:pattern_match_prefix("dt <DATETIME>") | fields _time`,
	`NOT pm:pattern_match("<N>") | fields _time`,
	`_time:day_range[08:00, 18:00) | fields _time`,
	`_time:day_range[00:00, 08:30] offset 1h | fields _time`,
	`_time:day_range[00:00, 24:00] | stats count() n`,
	`_time:week_range[Sat, Sun) | stats count() n`,
	`_time:week_range[Sun, Sat] | stats count() n`,
	`_time:week_range[Mon, Wed] offset -1h | fields _time`,
	`* | filter _time:week_range[Thu, Sun] | fields _time`,
	`w:string_range(a, y) | fields _time, w`,
	`v:eq_field(w) | fields _time`,
	`msg:eq_field(msg) | stats count() n`,
	`w:le_field(v) | fields _time, w, v`,
	`w:lt_field(v) | fields _time, w, v`,
	`NOT w:lt_field(v) w:* | fields _time`,
	`* | replace ("error", "E") | fields _time, _msg`,
	`* | replace ("r", "") at level limit 1 | fields _time, level`,
	`* | replace if (level:error) ("o", "0") | fields _time, _msg`,
	`* | replace_regexp ("([a-z]+) ([a-z]+)", "$2 $1") | fields _time, _msg`,
	`* | replace_regexp ("[aeiou]", "_") limit 2 | fields _time, _msg`,
	`* | drop_empty_fields | stats count() n`,
	`* | fields nosuch | drop_empty_fields | stats count() n`,
	`* | first 2 by (_time desc) | fields _time`,
	`* | last 3 by (level) | fields level`,
	`* | first by (_time) | fields _time`,
	`* | first | fields _time, _msg`,
	`* | last 2 | fields _time, _msg`,
	`* | sort desc | fields _time, level`,
	`* | sort desc limit 3 | fields _time, level`,
	`* | pack_json | fields _time, _msg`,
	`* | pack_json fields (level, http*) as p | fields _time, p`,
	`* | pack_logfmt fields (msg, level, _msg) as p | fields _time, p`,
	`* | pack_logfmt | stats count() n`,
	`* | stats by (level) row_max(_time) r, row_min(_time) m`,
	`* | sort by (_msg) partition by (level) limit 1 | fields level, _msg`,
	`* | sort by (_time desc) partition by (level, http.status) offset 1 limit 2 rank as r | fields r, level, _time`,
	`* | first by (v) partition by (w) rank | fields rank, v, w`,
	`* | last 2 by (_time) partition (level) | fields _time, level`,
	`* | sort by (_time desc, _msg) rank | fields rank, _time, _msg`,
	`* | running_stats count() n, count(level) nl, sum(v) s, min(w) mn, max(w) mx | fields _time, n, nl, s, mn, mx`,
	`* | running_stats by (level) first(_msg) f, first(v) offset 2 f2, last(_msg) l, last(v) offset 1 l1, count(*) c | fields _time, level, f, f2, l, l1, c`,
	`* | total_stats by (level) count() n, sum(v) s, max(v), min(http*) | fields _time, level, n, s, "max(v)", "min(http*)"`,
	`* | total_stats count(v, w) c, sum(*) s | fields _msg, c, s`,
	`* | stats by (level) count() c | total_stats sum(c) s | fields level, s`,
	`* | total_stats count() _time | fields _msg, _time`,
	`* | uniq by (level) filter "rr" with hits`,
	`* | uniq by (level) filter o`,
	`* | top 2 by (level) rank as level`,
	`* | top 2 by (level) hits level rank`,
	`* | filter _time:>2026-01-01T00:00:10Z | stats count() c`,
	`* | filter -_time:>2026-01-01T00:00:10Z | stats count() c`,
	`* | filter _time:day_range[00:00, 00:01) | fields _msg`,
	`* | stats count() if (_time:week_range[Mon, Fri]) c, count() if (_time:<2026-01-01T00:00:05Z) d`,
	`* | format if (_time:>2026-01-01T00:00:20Z) "new" as f | fields _msg, f`,
	`* | fields _msg | filter _time:>2026-01-01T00:00:10Z | stats count() c`,
	`* | stats by (_time:month) count() n`,
	`* | stats by (_time:year offset 2h, level) count() n`,
	`* | stats by (_time:month offset -30m) count() n`,
	`* | stats by (v:1h, w:month) count() n`,
	`* | stats by (v:1d offset 2h) count() n`,
	`* | stats by (v:week) count() n`,
	`* | fields level | rename level as hits | uniq by (hits) with hits`,
	`* | math v & 6 as a, v xor 3 as b, v or 8 as c, v + 1 & 7 as d, v & 3 xor 1 or 8 as e, (v or 1) & 3 as f | fields _msg, a, b, c, d, e, f`,
	`* | math now() - now() as z, rand() * 0 as r | fields _msg, z, r`,
	`* | join by (level) (level:error | stats by (level) count() n) | fields _msg, level, n`,
	`level:info | join by (level) rows({level:info, tag:x}, {level:info, tag:y}, {tag:z}) inner prefix p_ | fields _msg, p_tag`,
	`* | join by (level) rows({tag:none, _msg:"not kept"}) | fields _msg, tag`,
	`* | union (level:error | fields level) | fields _msg, level`,
	`* | union rows({a:1}, {b:2}) | limit 30 | fields _msg, a, b`,
	`level:error | stream_context before 1 after 1`,
	`level:error | stream_context after 2 | fields _msg, level, _time`,
	`* | filter level:warn | stream_context before 2 time_window 1h`,
	`level:error | stream_context before 3 after 0 | limit 4`,
	`level:* | stream_context before 1 after 1 time_window 1s | stats count() n`,
	`level:error | stream_context before 1 after 1 time_window -1h`,
	`options(global_filter=(level:error)) * | stats count() n`,
	`options(global_filter=(level:in(level:error | fields level))) * | stats by (level) count() n`,
	`options(time_offset=1h) * | stats by (_time:1h) count() n`,
	`options(time_offset=90m) level:error | fields _time, _msg`,
	`options(time_offset=1d) _time:>2026-01-01T00:00:00Z | stats count() n, max(_time) t`,
	`options(time_offset=12h) * | filter _time:<2026-01-01T12:00:00Z | fields _time | filter _time:<2026-01-02T00:00:00Z | stats count() n`,
	`options(global_filter=(level:warn or level:error)) * | join by (level) (* | stats by (level) count() n) | fields _msg, level, n`,
	`level:in(* | fields level) | stats count() n`,
	`_stream_id:in(level:error | fields _stream_id) | stats count() n`,
	`_stream_id:in(nosuch:x | uniq by (_stream_id)) | stats count() n`,
	`level:in(level:e* | fields level) | stats count() n`,
	`_msg:contains_any(level:error | fields level) | fields _msg`,
	`_msg:contains_all(level:error | uniq by (level)) | fields _msg`,
	`level:in(http.status:500 | uniq by (level)) | fields _msg`,
	`* | stats by (level) count() n | join by (level) (* | stats by (level) count_uniq(_msg) u) | fields level, n, u`,
	`* | coalesce(zb, za) default none as c | fields _time, c`,
	`* | coalesce(z*, level, za) as c | fields _time, c`,
	`* | coalesce(nosuch) | fields _time, _msg`,
	`* | decolorize | fields _time, _msg`,
	`* | decolorize level | fields _time, level`,
	`* | hash(_msg) as h | fields _time, h`,
	`* | hash(nosuch) h | stats count_uniq(h) n`,
	`* | json_array_len(arr) as n | json_array_len(tags) t | fields _time, n, t`,
	`* | json_array_len(arr2) as a | json_array_len(arr3) as b | fields _time, a, b`,
	`* | json_array_concat ", " from arr as c | fields _time, c`,
	`* | json_array_concat from tags | fields _time, tags`,
	`* | unroll (arr) | fields _time, arr`,
	`* | collapse_nums | fields _time, _msg`,
	`* | collapse_nums prettify | fields _time, _msg`,
	`* | collapse_nums if (level:error) at level | fields _time, level`,
	`* | time_add 1h | fields _time`,
	`* | time_add -1.5h at t2 | time_add 1d at t3 | fields _time, t2, t3`,
	`* | split "," from csv as c | fields _time, c`,
	`* | split "" from csv | fields _time, csv`,
	`* | split " " | fields _time, _msg`,
	`* | unpack_words from words as ws | fields _time, ws`,
	`* | unpack_words from words drop_duplicates | fields _time, words`,
	`* | unpack_words | fields _time, _msg`,
	`* | set_stream_fields level, http*, _msg | fields _time, _stream, _stream_id`,
	`* | copy _msg as _stream_id, v as _stream | set_stream_fields if (v:*) w, _stream* | fields _time, _stream, _stream_id`,
	`* | set_stream_fields if (level:info) nosuch, v | stats by (_stream) count() n`,
	`* | generate_sequence 5`,
	`nosuch | generate_sequence 2.7 | stats count() n, max(_msg) m`,
	`* | stats count() n | generate_sequence 3 | limit 2`,
	`* | fields _msg | generate_sequence 1e1 | stats sum(_msg) s`,
	`sl:* | unpack_syslog from sl`,
	`sl:* | unpack_syslog from sl2 offset 2h | fields _time, timestamp, level, hostname, app_name, message`,
	`sl:* | unpack_syslog if (level:app) from sl offset -5h30m result_prefix s_ keep_original_fields`,
	`* | unpack_syslog sl keep_original_fields | fields _time, level, hostname, timestamp`,
	`* | unpack_syslog | fields _time, format, message, timestamp, hostname`,
	// any and row_any keep the earliest qualifying row.
	`* | stats by (level) any(_msg) a, any(v) b, any(nosuch) c, row_any(w, http*) r, row_any() all, row_any(nosuch) n`,
	`* | stats any(v) if (w:x*) a, row_any(v, _msg) if (level:info) r`,
	`* | stats field_min(w, _msg) a, field_max(w, _msg) b, field_min(nosuch, _msg) c, field_max(v, nosuch) d`,
	`* | stats stddev(v) a, stddev(w) b, stddev(*) c, stddev(nosuch) d, stddev(v, w) e`,
	`* | stats by (level) stddev(http.status) a, stddev(_time) b`,
	`_time:[2026-01-01T00:00:00Z, 2026-01-01T00:01:00Z) | stats rate_sum(v) a, rate_sum(w) b, rate_sum(*) c, rate_sum(nosuch) d`,
	`* | stats by (_time:10s) rate_sum(w) a, stddev(w) if (w:~"^[0-9]") b`,
	`* | stats count_uniq_hash(v) a, count_uniq_hash(w) b, count_uniq_hash(v, w) c, count_uniq_hash(nosuch) d, count_uniq_hash(_time) e, count_uniq_hash(v) limit 3 f`,
	`* | stats count_uniq_hash(w) a, count_uniq_hash(x) b, count_uniq_hash(w, x) c, count_uniq(v) d`,
	`* | stats count_uniq(v) a, count_uniq(w) b, count_uniq(x) c, count_uniq(v, w) d, count_uniq(_time) e, count_uniq(v) limit 3 f, count_uniq(w) if (w:~"^-?[0-9]") g`,
	`* | stats by (level) count_uniq_hash(_msg) a, count_uniq_hash(http.status) if (http.status:*) b`,
	`* | stats histogram(v) a, histogram(w) b, histogram(nosuch) c, histogram(_time) d, histogram(http.status) e, histogram(_msg) f`,
	`* | stats by (level) histogram(v) a, histogram(w) if (w:~"^[0-9]") b`,
	`* | stats json_values(v, w) a, json_values(nosuch) b, json_values(v) limit 3 c, json_values(words, csv, arr*) d`,
	`* | stats by (level) json_values(http*, level) sort by (_time desc) limit 2 a, json_values(_msg, v) sort by (v, _time) if (v:~"^-?[0-9_]+$") b, json_values(*) sort by (w desc, _msg) limit 4 if (v:*) c`,
	`* | stats json_values(v, w) sort by (_time, _msg) a, json_values(w, _msg) sort by (_time desc, _msg desc) limit 5 b`,
	`* | stats by (level) field_min(_time, _msg) a, field_max(_time, _msg) b, field_max(_msg, _time) c`,
	`q:* | stats values(q) v, uniq_values(q) u, row_min(q) a, row_max(q, q, r) b, row_any(q) c`,
	`cc:contains_any("") | stats count() n`,
	`cc:contains_any("", zzz) | fields _msg`,
	`cc:contains_all("", ERRORS) | fields _msg`,
	`* | stats count() if (cc:contains_any("")) a, count() if (cc:contains_all("")) b, count() if (cc:in("")) c, count() if (cc:in("", ERRORS)) d`,
	`* | sort | fields _time, _msg`,
	`* | sort desc limit 5 | fields _time, _msg, za, zb`,
	`* | first 3 | fields _msg`,
	`* | last 2 | fields _msg`,
	`* | fields _msg, za, zb | sort`,
	`q:* | pack_json fields (q, r) as p | pack_logfmt fields (q, r) as l | format "<q:q>" as f | fields p, l, f`,
}

func TestEdgeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "edge.log")
	if err := os.WriteFile(path, []byte(strings.Join(edgeLines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, text := range edgeQueries {
		compareNaive(t, path, text, 64, func(workers int, st query.Stats) {
			if text == `* | stats by (level) count() n` {
				// Every line was parsed: the counts are exact.
				if st.BadLines != 2 || st.PlainLines != 2 || st.Lines != 45 {
					t.Errorf("stats: %d bad, %d plain, %d lines; want 2 bad (truncated, invalid UTF-8), 2 plain (text, spaces), 45 lines", st.BadLines, st.PlainLines, st.Lines)
				}
			}
		})
	}
}

// compareNaive runs the query text over path with the engine (1 and 3
// workers, chunks of chunk bytes) and with the naive evaluator, fails on
// any difference, and hands each engine run's stats to check.
func compareNaive(t *testing.T, path, text string, chunk int, check func(workers int, st query.Stats)) {
	t.Helper()
	q, err := query.Parse(text, diffNow)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	want, err := naive.Run(q, readLines(t, path), naive.Options{Now: diffNow})
	if err != nil {
		t.Fatalf("%s: naive: %v", text, err)
	}
	for _, workers := range []int{1, 3} {
		got, st, err := runEngine(t, text, path, fileread.Config{Workers: workers, ChunkSize: chunk}, query.Options{})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if err := conformance.Compare(conformance.Case{ID: text, Expected: want, Approx: &floatTolerance}, got); err != nil {
			t.Errorf("%s (workers=%d): engine and naive differ: %v", text, workers, err)
		}
		check(workers, st)
	}
}

// TestShortLines runs the engine over many short lines: JSON, plain text,
// CRLF, empty and "\r" lines, and lines that start with a CR before their
// JSON (JSON whitespace: the line is still an object).
func TestShortLines(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	pieces := []string{"a\n", "\n", "\r\n", "b\r\n", "\r", `{"k":1}` + "\n", `{"msg":"m"}` + "\r\n", "word word\n", `{"msg":"x`}
	var b strings.Builder
	for b.Len() < 20000 {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	path := filepath.Join(t.TempDir(), "short.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{`* | stats count() n`, `* | stats by (_msg, k) count() n`} {
		compareNaive(t, path, text, 4096, func(int, query.Stats) {})
	}
}
