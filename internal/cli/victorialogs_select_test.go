package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/conformance"
)

// knownSelectDiffs lists the requests of TestVictoriaLogsSelectOracle that
// spate answers differently from VictoriaLogs v1.52.1, keyed by check name,
// with the reason. The test fails if one of them starts to agree, so the
// list stays honest.
var knownSelectDiffs = map[string]string{
	"query/by-sum-exponent": "VictoriaLogs v1.52.1 is not consistent with itself: `stats sum(latency_ms)` reads the value \"1.5e2\" as 150, " +
		"`stats by (level) sum(latency_ms)` skips it (NaN on that row alone); spate reads 150 in both",
}

// oddNumberLines have values VictoriaLogs reads as numbers though they are
// not decimals (v), text it orders naturally (w), and numbers it prints
// without an exponent (x, y); count_uniq counts 1_000 and 1000 (v) as one,
// -0 and 0 (a) as two.
const oddNumberLines = `{"_time":"2026-01-02T00:00:01Z","_msg":"a","v":"0x1F","w":"file10","x":"0.00000001","y":"1e22"}
{"_time":"2026-01-02T00:00:02Z","_msg":"b","v":"100ns","w":"file9","x":"0.00000002","y":"2e22"}
{"_time":"2026-01-02T00:00:03Z","_msg":"c","v":"1.5s","w":"/api"}
{"_time":"2026-01-02T00:00:04Z","_msg":"d","v":"2KB","w":"200"}
{"_time":"2026-01-02T00:00:05Z","_msg":"e","v":"10.0.0.1","w":"x-1"}
{"_time":"2026-01-02T00:00:06Z","_msg":"f","v":"2026-01-02T03:04:05Z","w":"x1"}
{"_time":"2026-01-02T00:00:07Z","_msg":"g","v":"2026-01-02 03:04:05"}
{"_time":"2026-01-02T00:00:08Z","_msg":"h","v":"1_000"}
{"_time":"2026-01-02T00:00:09Z","_msg":"i","v":"1e3"}
{"_time":"2026-01-02T00:00:10Z","_msg":"j","v":"-5"}
{"_time":"2026-01-02T00:00:11Z","_msg":"k","v":"1h30m"}
{"_time":"2026-01-02T00:00:12Z","_msg":"l","v":"1.5MiB"}
{"_time":"2026-01-02T00:00:13Z","_msg":"m","v":"5us"}
{"_time":"2026-01-02T00:00:14Z","_msg":"n","n":"inf","a":"-0","b":"-7","c":"-0.0"}
{"_time":"2026-01-02T00:00:15Z","_msg":"o","n":"-inf"}
{"_time":"2026-01-02T00:00:16Z","_msg":"p","n":"Inf"}
{"_time":"2026-01-02T00:00:17Z","_msg":"q","n":"1e400"}
{"_time":"2026-01-02T00:00:18Z","_msg":"r","n":"5"}
{"_time":"2026-01-02T00:00:19Z","_msg":"s","ip6":"2001:db8::1"}
{"_time":"2026-01-02T00:00:20Z","_msg":"t","ip6":"2001:db9::1"}
{"_time":"2026-01-02T00:00:21Z","_msg":"u","ip6":"::1"}
{"_time":"2026-01-02T00:00:22Z","_msg":"v","cc":"Error happened","arr":["a","b c",1,null],"pm":"took 123ms at 2025-12-20"}
{"_time":"2026-01-02T00:00:23Z","_msg":"w","cc":"eRROR x","arr":"[\"\\u00e9\", 1.2.3, true]","pm":"ip 10.0.0.1 uuid 2edfed59-3e98-4073-bbb2-28d321ca71a7"}
{"_time":"2026-01-02T00:00:24Z","_msg":"x","cc":"ERRORS","arr":"[\"é\",]","pm":"dt 2025-10-20T10:20:30Z end 10:20:30,5"}
{"_time":"2026-01-02T00:00:25Z","_msg":"y","cc":"foo-Error-bar","arr":"[\"é\", {\"a\":[1]}]","pm":"email: foo@bar.com, 'q' x"}
{"_time":"2026-01-02T00:00:26Z","_msg":"z","v":"1000","a":"0"}
`

// rowPipeLines (tenant 7:1) are for the pipes that change rows one by one:
// color sequences, JSON arrays in strings as fastjson reads them (lenient
// numbers and escapes, null as "null", a trailing comma refused), fields
// that share a prefix, bytes VictoriaLogs escapes its own way in the JSON
// it builds (quicktemplate: < and ' as \u003c and \u0027), two rows alike
// but for their other fields (a sort without fields tells them apart).
// streamContextLines are two streams (_stream_fields=app), with two
// errors of app a at 00:00:10 and b's error a second later (streams whose
// first matches share a time come in no set order from VictoriaLogs).
const streamContextLines = `{"_time":"2026-01-02T00:00:01Z","app":"a","level":"info","_msg":"a1"}
{"_time":"2026-01-02T00:00:05Z","app":"a","level":"info","_msg":"a2"}
{"_time":"2026-01-02T00:00:10Z","app":"a","level":"error","_msg":"a3 first"}
{"_time":"2026-01-02T00:00:10Z","app":"a","level":"error","_msg":"a3 second"}
{"_time":"2026-01-02T00:00:12Z","app":"a","level":"info","_msg":"a4"}
{"_time":"2026-01-02T00:00:12.500Z","app":"a","level":"info","_msg":"a4 half"}
{"_time":"2026-01-02T00:00:20Z","app":"a","level":"error","_msg":"a5"}
{"_time":"2026-01-02T00:00:21Z","app":"a","level":"info","_msg":"a6"}
{"_time":"2026-01-02T02:00:00Z","app":"a","level":"info","_msg":"a7 two hours on"}
{"_time":"2026-01-02T00:00:05Z","app":"b","level":"info","_msg":"b1"}
{"_time":"2026-01-02T00:00:11Z","app":"b","level":"error","_msg":"b2"}
{"_time":"2026-01-02T00:00:30Z","app":"b","level":"info","_msg":"b3"}
`

const rowPipeLines = `{"_time":"2026-01-02T00:00:22Z","_msg":"\u001b[31mred\u001b[0m v","arr":"[\"x\", null, 1.50, {\"k\" : \"v\\\"\"}, [1, 2], true]","za":"a1","zb":"b1"}
{"_time":"2026-01-02T00:00:23Z","_msg":"w","arr":"[+1, 1.2.3, -Inf, nan, \"a\\q\\u0041\\ud83d\"]","zb":"b2"}
{"_time":"2026-01-02T00:00:24Z","_msg":"x","arr":"[1,2,]","za":"a3"}
{"_time":"2026-01-02T00:00:25Z","_msg":"req 1234 took 45ms from 10.0.0.1 at 2024-12-25T10:20:30.123+05:00 id 550e8400-e29b-41d4-a716-446655440000 v1.2.3 0xdeadbeef abc 1a ЫВА123 foo123_456","t2":"2026-01-01 10:00:00.5Z","t3":"bad","words":"Hello, wörld! hello_1 héllo Hello <x> 'q'","csv":"a,<b>,,'c',"}
{"_time":"2026-01-02T00:00:26Z","_msg":"2024/12/25 10:20:30,555 done 3h5m6s43ms 12:30:45 1.23.45.67 ab12 abcdef1","t2":"2026-01-01T10:00:00+0200","words":"x x x","csv":"é,\u0001\t"}
{"_time":"2026-01-02T00:00:27Z","_msg":"quoting <a'b>","q":"<a'b>\b\f\u0001\"\\é","r":"x y"}
{"_time":"2026-01-02T00:00:28Z","_msg":"tie","zb":"b9"}
{"_time":"2026-01-02T00:00:28Z","_msg":"tie","za":"a9"}
`

// syslogLines (tenant 7:2) are syslog messages for unpack_syslog: RFC
// 5424 with structured data, CEF and CEE messages; RFC 3164 with a stamp
// (in the year and local zone of both servers' clocks) or an RFC 3339 time
// (one without a zone); a bad priority; duplicate structured data names.
const syslogLines = `{"_time":"2026-01-02T00:00:01Z","_msg":"<165>1 2023-06-03T17:42:32.123456789Z mymachine.example.com appname 12345 ID47 [exampleSDID@32473 iut=\"3\" eventSource=\"Application\" eventID=\"1011\"][examplePriority@32473 class=\"high\"] This is a test message"}
{"_time":"2026-01-02T00:00:02Z","_msg":"  <34>Oct 11 22:14:15 mymachine su[99]: 'su root' failed for lonvick","level":"app"}
{"_time":"2026-01-02T00:00:03Z","_msg":"<13>2024-05-06T07:08:09.5+02:00 web nginx: GET /","hostname":"orig"}
{"_time":"2026-01-02T00:00:04Z","_msg":"<13>2024-05-06T07:08:09 web nginx[1]: no zone"}
{"_time":"2026-01-02T00:00:05Z","_msg":"<x>1 bad"}
{"_time":"2026-01-02T00:00:06Z","_msg":"<191>1 2024-01-01T00:00:00Z h a p m -"}
{"_time":"2026-01-02T00:00:07Z","_msg":"<0>Jan  2 03:04:05 host: x"}
{"_time":"2026-01-02T00:00:08Z","_msg":"<14>1 2024-01-01T00:00:00Z h a p m - CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1 dst=2.1.2.2 msg=a b\\=c"}
{"_time":"2026-01-02T00:00:09Z","_msg":"<14>1 2024-01-01T00:00:00Z h a p m - @cee:{\"a\":{\"b\":1},\"c\":[1,2],\"d\":null}"}
{"_time":"2026-01-02T00:00:10Z","_msg":"<14>Dec 31 23:59:59 h CEF: not cef"}
{"_time":"2026-01-02T00:00:11Z","_msg":"plain text, no header","sl":"<999>1 - - - - - [id a=\"1\" a=\"2\"][k=v] m"}
{"_time":"2026-01-02T00:00:12Z","_msg":"<13>1 2024-01-01T00:00:00Z h a p m [x@1 q=\"a\\]b\"] tail","level":"keep"}
`

// selectOracle sends the same request to VictoriaLogs and to spate serve.
type selectOracle struct {
	vl, sp string
	n      int // requests compared
}

// selectReq is one request: GET with the args in the URL, or POST with
// them as a form; hdr holds header name, value pairs.
type selectReq struct {
	method string
	path   string
	args   url.Values
	hdr    []string
}

func (r selectReq) String() string {
	return r.method + " " + r.path + "?" + r.args.Encode()
}

// selectAnswer is the status and body of one answer.
type selectAnswer struct {
	code int
	body []byte
}

func (a selectAnswer) String() string {
	b := a.body
	if len(b) > 3000 {
		b = append(b[:3000:3000], "…"...)
	}
	return fmt.Sprintf("%d %s", a.code, b)
}

func fetchSelect(t *testing.T, base string, r selectReq) selectAnswer {
	t.Helper()
	var req *http.Request
	if r.method == http.MethodPost {
		req, _ = http.NewRequest(http.MethodPost, base+r.path, strings.NewReader(r.args.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req, _ = http.NewRequest(http.MethodGet, base+r.path+"?"+r.args.Encode(), nil)
	}
	for i := 0; i+1 < len(r.hdr); i += 2 {
		req.Header.Set(r.hdr[i], r.hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", base, r, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", base, r, err)
	}
	return selectAnswer{resp.StatusCode, body}
}

// check sends r to both servers and compares the answers: the status
// codes must be equal and, when both are 200, cmp(vl, spate) must return
// nil. A difference fails t unless knownSelectDiffs holds name.
func (o *selectOracle) check(t *testing.T, name string, r selectReq, cmp func(vl, sp []byte) error) (vl, sp selectAnswer) {
	t.Helper()
	o.n++
	vl = fetchSelect(t, o.vl, r)
	sp = fetchSelect(t, o.sp, r)
	var err error
	switch {
	case vl.code != sp.code:
		err = fmt.Errorf("status %d, VictoriaLogs %d", sp.code, vl.code)
	case vl.code == http.StatusOK && cmp != nil:
		err = cmp(vl.body, sp.body)
	}
	reason, known := knownSelectDiffs[name]
	switch {
	case err != nil && known:
		t.Logf("%s: known difference (%s): %v", name, reason, err)
	case err != nil:
		t.Errorf("%s: %s: %v\n  spate:         %s\n  VictoriaLogs:  %s", name, r, err, sp, vl)
	case known:
		t.Errorf("%s now agrees; remove it from knownSelectDiffs (%s)", name, reason)
	}
	return vl, sp
}

// sameRows compares NDJSON rows under the conformance corpus's rules
// (missing and "" alike, numbers and times normalised), as a multiset
// unless ordered.
func sameRows(ordered bool, approx *string) func(vl, sp []byte) error {
	return func(vl, sp []byte) error {
		want, err := conformance.ParseNDJSONRows(vl)
		if err != nil {
			return fmt.Errorf("VictoriaLogs: %w", err)
		}
		got, err := conformance.ParseNDJSONRows(sp)
		if err != nil {
			return fmt.Errorf("spate: %w", err)
		}
		return conformance.Compare(conformance.Case{Expected: want, Ordered: ordered, Approx: approx}, got)
	}
}

// sameJSON compares two JSON documents after decoding, each passed through
// norm first if it is not nil. Numbers, and strings that are numbers,
// agree within a relative 1e-9: VictoriaLogs' float sums depend on the
// order its workers add them in, and so do spate's.
func sameJSON(norm func(any) any) func(vl, sp []byte) error {
	return func(vl, sp []byte) error {
		w, err := decodeJSON(vl)
		if err != nil {
			return fmt.Errorf("VictoriaLogs: %w", err)
		}
		g, err := decodeJSON(sp)
		if err != nil {
			return fmt.Errorf("spate: %w", err)
		}
		if norm != nil {
			w, g = norm(w), norm(g)
		}
		if !nearlyEqual(w, g) {
			wj, _ := json.Marshal(w)
			gj, _ := json.Marshal(g)
			return fmt.Errorf("different JSON:\n  spate:        %s\n  VictoriaLogs: %s", gj, wj)
		}
		return nil
	}
}

// nearlyEqual is reflect.DeepEqual on decoded JSON, except that two
// numbers (or numeric strings) are equal within a relative 1e-9.
func nearlyEqual(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !nearlyEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !nearlyEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	if reflect.DeepEqual(a, b) {
		return true
	}
	x, okx := jsonFloat(a)
	y, oky := jsonFloat(b)
	return okx && oky && math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y))
}

func jsonFloat(v any) (float64, bool) {
	var s string
	switch v := v.(type) {
	case json.Number:
		s = v.String()
	case string:
		s = v
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON document")
	}
	return v, nil
}

// jsonPath walks v by object keys.
func jsonPath(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// sortByJSON sorts a JSON array by the JSON text of key(element).
func sortByJSON(a []any, key func(any) any) {
	slices.SortFunc(a, func(x, y any) int {
		xj, _ := json.Marshal(key(x))
		yj, _ := json.Marshal(key(y))
		return bytes.Compare(xj, yj)
	})
}

// valueNames is the set of "value" strings of a {"values":[...]} answer.
func valueNames(v any) any {
	var names []string
	for _, e := range jsonPath(v, "values").([]any) {
		names = append(names, jsonPath(e, "value").(string))
	}
	slices.Sort(names)
	return names
}

// promVector sorts a stats_query answer's samples by metric and drops
// their timestamps unless keepTime is set.
func promVector(keepTime bool) func(any) any {
	return func(v any) any {
		res, _ := jsonPath(v, "data", "result").([]any)
		sortByJSON(res, func(e any) any { return jsonPath(e, "metric") })
		if !keepTime {
			for _, e := range res {
				if val, ok := jsonPath(e, "value").([]any); ok && len(val) == 2 {
					val[0] = nil
				}
			}
		}
		return v
	}
}

// facetsTies makes a /facets answer independent of which values tied at
// the cut-off of limit values per field were kept (VictoriaLogs keeps any
// of them): per field, the number of values, their hits, and the values
// whose hits are above the smallest kept, or all when fewer than limit.
func facetsTies(limit int) func(any) any {
	return func(v any) any {
		facets, _ := jsonPath(v, "facets").([]any)
		var out []any
		for _, f := range facets {
			vals, _ := jsonPath(f, "values").([]any)
			var hits []float64
			for _, e := range vals {
				h, _ := jsonFloat(jsonPath(e, "hits"))
				hits = append(hits, h)
			}
			low := slices.Min(append(hits, math.Inf(1)))
			var sure []string
			for i, e := range vals {
				if len(vals) < limit || hits[i] > low {
					sure = append(sure, fmt.Sprintf("%v=%v", jsonPath(e, "field_value"), hits[i]))
				}
			}
			slices.Sort(hits)
			slices.Sort(sure)
			out = append(out, []any{jsonPath(f, "field_name"), hits, sure})
		}
		return out
	}
}

// promMatrix sorts a stats_query_range answer's series by metric.
func promMatrix(v any) any {
	if res, ok := jsonPath(v, "data", "result").([]any); ok {
		sortByJSON(res, func(e any) any { return jsonPath(e, "metric") })
	}
	return v
}

// sortedLines compares two texts as their first line and the multiset of
// the others (CSV answers).
func sortedLines(vl, sp []byte) error {
	split := func(b []byte) (string, []string) {
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		rest := slices.Clone(lines[1:])
		slices.Sort(rest)
		return lines[0], rest
	}
	wh, w := split(vl)
	gh, g := split(sp)
	if wh != gh {
		return fmt.Errorf("header %q, VictoriaLogs %q", gh, wh)
	}
	if !slices.Equal(w, g) {
		return fmt.Errorf("%d lines, VictoriaLogs %d; they differ", len(g), len(w))
	}
	return nil
}

// sampledCount checks the answers of "... | sample N | stats count() n":
// n is from lo to hi in both.
func sampledCount(lo, hi int) func(vl, sp []byte) error {
	return func(vl, sp []byte) error {
		for _, b := range [][]byte{vl, sp} {
			var r map[string]string
			if err := json.Unmarshal(bytes.TrimSpace(b), &r); err != nil {
				return err
			}
			if n, err := strconv.Atoi(r["n"]); err != nil || n < lo || n > hi {
				return fmt.Errorf("sampled count %q, want %d to %d (spate %s, VictoriaLogs %s)", r["n"], lo, hi, sp, vl)
			}
		}
		return nil
	}
}

// sampledGenerated checks the answers of "generated | sample N | fields
// _time, _msg, n": from lo to hi rows in both, each a line of
// oracleGenLines, none twice.
func sampledGenerated(lo, hi int) func(vl, sp []byte) error {
	return func(vl, sp []byte) error {
		for _, b := range [][]byte{vl, sp} {
			seen := map[string]bool{}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			for _, line := range lines {
				var r map[string]string
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					return err
				}
				i, err := strconv.Atoi(r["n"])
				want := time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 37 * time.Second).Format(time.RFC3339)
				if err != nil || r["_msg"] != fmt.Sprintf("generated line %d of the select oracle", i) || r["_time"] != want || seen[r["n"]] {
					return fmt.Errorf("row %s is no generated line, or comes twice", line)
				}
				seen[r["n"]] = true
			}
			if len(lines) < lo || len(lines) > hi {
				return fmt.Errorf("%d sampled rows, want %d to %d", len(lines), lo, hi)
			}
		}
		return nil
	}
}

// anyMember checks the answers of "stats by (level) any(service) a,
// uniq_values(service) u, row_any(service) r": in both, a is one of u and
// r is {"service":a'} for one a' of u; and both have the same groups and u.
func anyMember(vl, sp []byte) error {
	rows := func(b []byte) (map[string]string, error) {
		out := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var r map[string]string
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return nil, err
			}
			var u []string
			if err := json.Unmarshal([]byte(r["u"]), &u); err != nil {
				return nil, err
			}
			var ra map[string]string
			if err := json.Unmarshal([]byte(r["r"]), &ra); err != nil {
				return nil, err
			}
			none := len(u) == 0 && r["a"] == "" && len(ra) == 0
			if !none && (!slices.Contains(u, r["a"]) || len(ra) != 1 || !slices.Contains(u, ra["service"])) {
				return nil, fmt.Errorf("any or row_any not of the group: %s", line)
			}
			out[r["level"]] = r["u"]
		}
		return out, nil
	}
	w, err := rows(vl)
	if err != nil {
		return fmt.Errorf("VictoriaLogs: %w", err)
	}
	g, err := rows(sp)
	if err != nil {
		return fmt.Errorf("spate: %w", err)
	}
	if !maps.Equal(w, g) {
		return fmt.Errorf("groups differ: %v, VictoriaLogs %v", g, w)
	}
	return nil
}

// oracleGenLines makes n lines for the stream tests, with _stream_fields
// app and env, one every 37 seconds from 2026-01-04T00:00:00Z, after the
// corpus's last line (so that sorts by _time have no ties).
func oracleGenLines(n int, apps []string, word string) []byte {
	var b bytes.Buffer
	t0 := time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC)
	levels := []string{"info", "info", "warn", "error"}
	envs := []string{"prod", "staging"}
	for i := range n {
		ts := t0.Add(time.Duration(i) * 37 * time.Second)
		fmt.Fprintf(&b, `{"ts":%q,"app":%q,"env":%q,"level":%q,"n":%d,"msg":"%s line %d of the select oracle"}`+"\n",
			ts.Format(time.RFC3339), apps[i%len(apps)], envs[i/len(apps)%len(envs)], levels[i%len(levels)], i, word, i)
	}
	return b.Bytes()
}

// TestVictoriaLogsSelectOracle ingests the same lines into VictoriaLogs
// v1.52.1 and spate serve and compares the answers of every endpoint of
// the query API, /select/logsql/tail included, and drives vlogscli
// against both. It runs when SPATE_VICTORIALOGS names the victoria-logs
// binary; the vlogscli part needs SPATE_VLOGSCLI too (.ci/run installs
// both).
func TestVictoriaLogsSelectOracle(t *testing.T) {
	vlBin := victoriaLogsBin(t)
	casesPath := filepath.Join(conformanceDir, "cases.jsonl")
	logs, err := os.ReadFile(filepath.Join(conformanceDir, "logs.ndjson"))
	if err != nil {
		t.Skipf("no conformance corpus at %s: %v", conformanceDir, err)
	}
	cases, err := conformance.LoadCases(casesPath)
	if err != nil {
		t.Fatal(err)
	}
	o := &selectOracle{vl: startVictoriaLogs(t, vlBin)}
	spDir := t.TempDir()
	srv := startServe(t, spDir)
	t.Cleanup(func() { srv.stop(t, syscall.SIGTERM) })
	o.sp = srv.url

	for _, base := range []string{o.vl, o.sp} {
		vlPost(t, base, "_time_field=ts&_msg_field=msg", logs)
		streams := "_time_field=ts&_msg_field=msg&_stream_fields=app,env"
		vlPost(t, base, streams, oracleGenLines(300, []string{"api", "web", "worker"}, "generated"))
		vlPost(t, base, streams, oracleGenLines(7, []string{"solo"}, "tenanted"), "AccountID", "3", "ProjectID", "4")
		vlPost(t, base, "", []byte(oddNumberLines), "AccountID", "7", "ProjectID", "0")
		vlPost(t, base, "", []byte(rowPipeLines), "AccountID", "7", "ProjectID", "1")
		vlPost(t, base, "_stream_fields=app", []byte(streamContextLines), "AccountID", "7", "ProjectID", "3")
		vlPost(t, base, "", []byte(syslogLines), "AccountID", "7", "ProjectID", "2")
	}
	forceFlush(t, o.vl)

	get := func(path string, kv ...string) selectReq { return selectReq{http.MethodGet, path, argsOf(kv...), nil} }
	post := func(path string, kv ...string) selectReq { return selectReq{http.MethodPost, path, argsOf(kv...), nil} }
	tenant34 := func(r selectReq) selectReq { r.hdr = []string{"AccountID", "3", "ProjectID", "4"}; return r }
	tenant70 := func(r selectReq) selectReq { r.hdr = []string{"AccountID", "7", "ProjectID", "0"}; return r }
	tenant71 := func(r selectReq) selectReq { r.hdr = []string{"AccountID", "7", "ProjectID", "1"}; return r }
	tenant72 := func(r selectReq) selectReq { r.hdr = []string{"AccountID", "7", "ProjectID", "2"}; return r }
	tenant73 := func(r selectReq) selectReq { r.hdr = []string{"AccountID", "7", "ProjectID", "3"}; return r }

	// Every comparison runs twice: on the segments as written (plain,
	// read line by line), then after a restart has sealed, compressed and
	// indexed them all, so that queries read hot columns, skip blocks by
	// time and token blooms, and decode frames in parallel (package
	// segindex): both must give VictoriaLogs' answers.
	checks := func(t *testing.T) {
		t.Run("query", func(t *testing.T) {
			for _, c := range cases {
				r := post("/select/logsql/query", "query", c.Query)
				if c.Error != nil {
					vl, sp := o.check(t, "query/"+c.ID, r, nil)
					if vl.code != http.StatusBadRequest || sp.code != http.StatusBadRequest {
						t.Errorf("query/%s: %s: want 400 from both, spate %d, VictoriaLogs %d", c.ID, r, sp.code, vl.code)
					}
					continue
				}
				o.check(t, "query/"+c.ID, r, sameRows(c.Ordered, c.Approx))
			}
			// limit=N keeps the N newest rows when the query keeps _time.
			for _, kv := range [][]string{
				{"query", "error | fields _time, _msg, service", "limit", "5"},
				{"query", "error | fields _time, _msg, service", "limit", "5", "offset", "3"},
				{"query", "level:warn", "limit", "7"},
				{"query", "generated", "limit", "4", "offset", "290"},
				{"query", "* | stats count() n", "start", "2026-01-01T00:10:00Z", "end", "2026-01-01T00:20:00Z"},
				{"query", "* | stats count() n", "start", "2026-01-02"},
				{"query", "* | stats count() n", "end", "2026-01-02"},
				{"query", "* | stats count() n", "start", "2026-01-03", "end", "2026-01-04T01:00:00Z"},
				{"query", "* | stats count() n", "start", "1767225600", "end", "1767226200"},
				{"query", "* | stats count() n", "start", "1767225600.5", "end", "1767226200123"},
				{"query", "_time:[2026-01-01T00:00:00Z, 2026-01-01T00:05:00Z) | stats count() n", "start", "2026-01-01T00:03:00Z"},
				{"query", "level:error | fields _time, service", "start", "2026-01-01T00:00:00Z", "end", "2026-01-01T00:01:00Z"},
				{"query", "level:error | join by (service) (* | stats by (service) count() n) | fields _time, service, n", "start", "2026-01-01T00:00:00Z", "end", "2026-01-01T00:01:00Z"},
				{"query", "service:in(level:error | fields service) | stats count() n", "start", "2026-01-01T00:00:00Z", "end", "2026-01-01T00:00:10Z"},
				// Query options: the time range off the query, or off one
				// subquery; a cap on workers changes no answer.
				{"query", "options(ignore_global_time_filter=true) * | stats count() n", "start", "2026-01-01T00:00:00Z", "end", "2026-01-01T00:00:10Z"},
				{"query", "options(ignore_global_time_filter=true) level:error | join by (service) (options(ignore_global_time_filter=false) * | stats by (service) count() n) | stats by (service, n) count() e", "start", "2026-01-01T00:00:00Z", "end", "2026-01-01T00:01:00Z"},
				{"query", "level:error | join by (service) (options(ignore_global_time_filter=true) * | stats by (service) count() n) | fields _time, service, n", "start", "2026-01-01T00:00:00Z", "end", "2026-01-01T00:01:00Z"},
				{"query", "options(concurrency=1, parallel_readers=1) level:error | stats by (service) count() n"},
			} {
				r := get("/select/logsql/query", kv...)
				o.check(t, "query/"+r.args.Encode(), r, sameRows(false, nil))
			}
			// The row of the corpus with latency_ms "1.5e2", summed without and
			// with a by clause.
			for name, q := range map[string]string{
				// Found by differential runs against VictoriaLogs: the tuple
				// of empty values in uniq, empty values in values(), row_min
				// of no row, field patterns in stats functions.
				"query/uniq-empty-tuple":   `* | uniq by (cause) with hits`,
				"query/uniq-count":         `* | uniq by (cause, nosuch) | stats count() n`,
				"query/values-empty":       `level:error | stats by (service) values(cause) v | len(v) as l | fields service, l`, // values in storage order: compare their length
				"query/row-min-nothing":    `nosuch:x | stats row_min(status) a, row_max(status, http*) b, count() c`,
				"query/stats-patterns":     `* | stats by (level) count(http*) c, count_empty(http*) e, max(http*) mx, sum_len(http*) l, uniq_values(http*) u`,
				"query/stats-pattern-row":  `level:error | stats by (service) row_max(latency_ms, http*) r`,
				"query/row-max-all":        `level:error | stats by (service) row_max(latency_ms) r, row_min(latency_ms) m`,
				"query/replace":            `level:error | replace ("cache", "CACHE") | replace ("o", "0") at host limit 2 | fields _time, _msg, host`,
				"query/replace-if":         `* | replace if (level:warn) ("a", "4") at service | stats by (service) count() n`,
				"query/replace-regexp":     `level:error | replace_regexp ("([a-z]+)-([0-9]+)", "$2.$1") at host | replace_regexp ("[aeiou]", "*") limit 3 | fields _time, _msg, host`,
				"query/drop-empty-fields":  `* | fields cause, nosuch | drop_empty_fields | uniq by (cause) with hits`,
				"query/first":              `level:error | first 3 by (_time desc) | fields _time, service`,
				"query/pack-json":          `level:error | pack_json | fields _time, _msg`,
				"query/pack-json-fields":   `level:error | pack_json fields (service, http*, cause) as p | fields _time, p`,
				"query/pack-logfmt":        `level:error | pack_logfmt fields (level, service, _msg) as p | fields _time, p`,
				"query/last":               `level:error | last 2 by (latency_ms) | fields latency_ms`,
				"query/coalesce":           `* | coalesce(cause, http.ua, service) default none as c | stats by (c) count() n`,
				"query/coalesce-msg":       `level:error | coalesce(cause, nosuch) | fields _time, _msg`,
				"query/hash":               `level:error | hash(trace_id) as h | fields _time, h`,
				"query/hash-stats":         `* | hash(user_id) h | stats count_uniq(h) n, max(h) m`,
				"query/collapse-nums":      `* | collapse_nums prettify | stats by (_msg) count() n`,
				"query/collapse-nums-if":   `* | collapse_nums if (level:error) at host | stats by (host) count() n`,
				"query/time-add":           `level:error | time_add -1h | fields _time, _msg`,
				"query/split":              `level:error | split "." from host as parts | fields _time, parts`,
				"query/unpack-words":       `level:error | unpack_words drop_duplicates | fields _time, _msg`,
				"query/sum-exponent":       `level:info latency_ms:~"e" | stats sum(latency_ms) s`,
				"query/by-sum-exponent":    `level:info latency_ms:~"e" | stats by (level) sum(latency_ms) s`,
				"query/first-partition":    `level:warn | first 1 by (latency_ms) partition by (service, method) rank | fields rank, service, method, latency_ms`,
				"query/running-stats":      `level:error | running_stats by (service) count() n, sum(latency_ms) s, max(status) mx, first(host) f, last(host) offset 1 l | fields _time, service, n, s, mx, f, l`,
				"query/running-stats-all":  `level:warn | running_stats count(cause) c, min(latency_ms) m, first(_msg) offset 3 f | fields _time, c, m, f`,
				"query/total-stats":        `level:warn | total_stats by (service) count() n, sum(bytes) b, min(latency_ms) m, last(_msg) l | fields _time, service, n, b, m, l`,
				"query/total-after-stats":  `* | stats by (service) count() c | total_stats sum(c) total, max(c) mx | fields service, c, total, mx`,
				"query/month-bucket":       `* | stats by (_time:month) count() n`,
				"query/year-bucket":        `* | stats by (_time:year offset 1h, level) count() n`,
				"query/month-offset":       `generated | stats by (_time:month offset -2d) count() n`,
				"query/time-in-pipe":       `* | filter _time:>2026-01-02T00:00:00Z | stats count() c`,
				"query/time-in-if":         `* | stats count() if (_time:day_range[10:00, 20:00)) c, count() if (-_time:>2026-01-02T00:00:00Z) d`,
				"query/time-in-format":     `level:error | format if (_time:week_range[Sat, Sun]) "weekend" as f | stats by (f) count() n`,
				"query/top-rank-name":      `* | top 3 by (level, service) rank as service hits level`,
				"query/uniq-filter":        `* | uniq by (service) filter "art" with hits`,
				"query/uniq-hits-name":     `* | rename level as hits | uniq by (hits) with hits`,
				"query/math-bits":          `* | math status & 7 as a, status xor 255 as b, status or 1024 as c, (status or 1) & 3 xor 2 as d | stats by (a, b, c, d) count() n`,
				"query/join":               `level:error | join by (service) (level:warn | stats by (service) count() warns) | fields _time, service, warns`,
				"query/join-inner-prefix":  `level:error | join by (service, method) (level:info | stats by (service, method) count() c, max(latency_ms) m) inner prefix info_ | fields _time, service, method, info_c, info_m`,
				"query/join-rows":          `level:error | join by (service) rows({service:auth, team:id}, {service:cart, team:shop}, {team:none}) | fields _time, service, team`,
				"query/union":              `level:error | stats count() errors | union (level:warn | stats count() warns)`,
				"query/union-rows":         `level:error | stats by (service) count() n | union rows({service:total, n:0})`,
				"query/in-subquery":        `service:in(status:>=500 | fields service) level:info | stats by (service) count() n`,
				"query/in-subquery-empty":  `cause:in(level:error | fields cause) | stats by (level) count() n`,
				"query/contains-subquery":  `_msg:contains_any(level:error cause:* | uniq by (cause)) | stats by (level) count() n`,
				"query/stream-id-subquery": `_stream_id:in(generated app:web | fields _stream_id) | stats by (app, env) count() n`,
				"query/nested-subquery":    `level:warn | join by (service) (service:in(level:error | fields service) | stats by (service) count() all) inner | stats by (service) count() n, max(all) a`,
				// The corpus spans Wednesday 2025-12-31 to Sunday 2026-01-04.
				"query/day-range":         `_time:day_range[01:00, 12:00) | stats count() n`,
				"query/day-range-offset":  `_time:day_range[23:30, 23:59] offset -30m | stats by (level) count() n`,
				"query/day-range-pipe":    `* | fields _time, level | filter _time:day_range[00:00, 01:00] | stats count() n`,
				"query/week-range":        `_time:week_range[Mon, Fri] | stats by (level) count() n`,
				"query/week-range-offset": `_time:week_range(Fri, Sat] offset -3h | stats count() n`,
				"query/week-range-sunday": `_time:week_range[Sun, Sun] | stats count() n`,
				// One possible answer per group for any and row_any.
				"query/any-by-self":     `* | stats by (service) any(service) a, row_any(service, level) if (level:error) r, row_any(nosuch) n`,
				"query/field-min":       `level:error | stats by (service) field_min(latency_ms, host) a, field_max(latency_ms, host) b, field_min(nosuch, host) c`,
				"query/count-uniq-by":   `* | stats by (level) count_uniq(status) a, count_uniq(_time) b, count_uniq(service, host) c, count_uniq(latency_ms) limit 5 d`,
				"query/count-uniq-hash": `* | stats by (level) count_uniq_hash(service) a, count_uniq_hash(service, host) b, count_uniq_hash(_time) c, count_uniq_hash(status) limit 2 d`,
				"query/field-time":      `generated | stats by (app) field_min(_time, n) a, field_max(_time, _msg) b, field_max(n, env) c`,
				"query/histogram":       `* | stats by (level) histogram(latency_ms) l, histogram(bytes) b, histogram(status) if (status:>=500) s, histogram(_time) t, histogram(nosuch) n`,
				"query/histogram-gen":   `generated | stats by (app) histogram(n) h`,
				"query/json-values":     `level:error | stats by (service) json_values(host, status, latency_ms) sort by (_time desc, host) limit 3 j, json_values(_msg) sort by (latency_ms, _time) limit 2 if (status:>=500) m`,
				"query/json-values-all": `level:warn | stats by (service) json_values(*) sort by (_time) limit 2 a, json_values() order by (_time desc) limit 1 b`,
				"query/json-values-gen": `generated | stats by (app) json_values(n, env, nosuch) sort by (_time) limit 4 j, json_values(e*) sort by (n desc, _time) limit 3 k`,
				// Without a sort the rows kept are any: count them.
				"query/json-values-len": `* | stats by (level) json_values(service) a, json_values(host) limit 2 b, json_values(nosuch) c | json_array_len(a) as na | json_array_len(b) as nb | json_array_len(c) as nc | fields level, na, nb, nc`,
			} {
				o.check(t, name, post("/select/logsql/query", "query", q), sameRows(false, nil))
			}
			floatSum := "rel=1e-9: float summation order"
			for name, q := range map[string]string{
				"query/stddev":       `* | stats by (level) stddev(latency_ms) s, stddev(bytes) b, stddev(status, latency_ms) sl`,
				"query/stddev-all":   `generated | stats stddev(n) s, stddev(*) a, stddev(nosuch) z`,
				"query/rate-sum":     `generated _time:[2026-01-04T00:00:00Z, 2026-01-04T02:00:00Z) | stats by (app) rate_sum(n) r`,
				"query/rate-sum-bkt": `generated | stats by (_time:1h) rate_sum(n) r, stddev(n) if (level:error) s`,
			} {
				o.check(t, name, post("/select/logsql/query", "query", q), sameRows(false, &floatSum))
			}
			// any and row_any return some row's values: VictoriaLogs' choice
			// depends on its storage blocks, so check that each answer is
			// one of the group's values.
			o.check(t, "query/any-member", post("/select/logsql/query", "query",
				`* | stats by (level) any(service) a, uniq_values(service) u, row_any(service) r`), anyMember)
			// A sort with partition by: each partition's rows in order, the
			// partitions in VictoriaLogs' order of their keys, and ranks.
			o.check(t, "query/sort-partition", post("/select/logsql/query", "query",
				`level:error | sort by (_time desc) partition by (service) limit 2 rank as r | fields r, service, _time`), sameRows(true, nil))
			o.check(t, "query/sort-partition-offset", post("/select/logsql/query", "query",
				`* | sort by (_time) partition by (level) offset 2 limit 3 | fields level, _time`), sameRows(true, nil))
			o.check(t, "query/sort-rank", post("/select/logsql/query", "query",
				`level:error | sort by (_time) offset 5 limit 4 rank | fields rank, _time`), sameRows(true, nil))
			// Values VictoriaLogs reads as numbers though they are not
			// decimals, and text it orders naturally (tenant 7:0).
			for i, q := range []string{
				`v:range(1, 500) | fields _msg, v`,
				`v:>0 | fields _msg`,
				`v:>1KB | fields _msg`,
				`v:<"192.168.0.1" | fields _msg`,
				`v:>"2026-01-01T00:00:00Z" | fields _msg`,
				`v:<NaN | fields _msg`,
				`v:range[NaN, 5] | fields _msg`,
				`* | math v*1 as m | fields _msg, m`,
				`v:* | stats sum(v) s, avg(v) a`,
				`v:* NOT v:~"[.:]|us" | stats min(v) mn, max(v) mx`, // one kind: the order across kinds is not transitive
				`* | stats min(w) mn, max(w) mx`,
				`* | sort by (w) | fields w`,
				`* | stats avg(x) a, sum(y) s`,
				`v:len_range(3, 5) | fields _msg`,
				`w:len_range(0, 2) | fields _msg`,
				`v:ipv4_range(10.0.0.0/8) | fields _msg`,
				`v:ipv4_range(10.0.0.0, 10.0.0.5) | fields _msg`,
				`ip6:ipv6_range(2001:db8::/32) | fields _msg`,
				`ip6:ipv6_range("2001:db8::", "2001:db9::ffff") OR v:ipv6_range(::ffff:10.0.0.0/104) | fields _msg`,
				`ip6:ipv6_range(::1) | fields _msg`,
				`w:string_range(a, y) | fields _msg`,
				`v:eq_field(w) | fields _msg`,
				`w:le_field(v) | fields _msg`,
				`w:lt_field(v) | fields _msg`,
				`_msg:eq_field(_msg) | stats count() n`,
				`* | last 2 | fields _msg`,
				`* | sort desc limit 3 | fields _msg`,
				`* | first | fields _msg`,
				`n:<inf | fields _msg`,
				`_msg:in(f, g, j, z, a) | stats by (v:1h) count() n`, // not h: 1_000 (a documented difference)
				`_msg:in(f, g, j, z) | stats by (v:month, w:week offset 1d) count() n`,
				`n:>-inf | fields _msg`,
				`n:range(-inf, inf) | fields _msg`,
				`n:>0 | fields _msg`,
				`_msg:n | math a % 7 as m, b % 7 as m2, c % 7 as m4, 7 % 0 as z | fields m, m2, m4, z`,
				`cc:contains_common_case(Error) | fields _msg`,
				`cc:equals_common_case(ERRORS, "Error happened") | fields _msg`,
				`contains_common_case("") | stats count() n`,
				`cc:contains_any("") | stats count() n`,
				`cc:contains_any("", zzz) | fields _msg`,
				`cc:contains_all("") | stats count() n`,
				`cc:contains_all("", ERRORS) | fields _msg`,
				`* | stats count() if (cc:contains_any("")) a, count() if (cc:contains_all("")) b, count() if (cc:in("")) c, count() if (cc:in("", ERRORS)) d`,
				`arr:json_array_contains_any("b c", "1.2.3") | fields _msg`,
				`arr:json_array_contains_any(é, null, true) | fields _msg`,
				`pm:pattern_match("<N>ms at <DATE>") | fields _msg`,
				`pm:pattern_match_full("ip <IP4> uuid <UUID>") OR pm:pattern_match_suffix("end <TIME>") | fields _msg`,
				`pm:pattern_match_prefix("dt <DATETIME>") OR pm:pattern_match("<W>@<W>.<W>") | fields _msg`,
				`NOT pm:pattern_match("<N>") | fields _msg`,
				`* | stats stddev(v) a, stddev(x) b, stddev(y) c, stddev(n) d, stddev(w) e`,
				`* | stats field_min(v, _msg) a, field_max(w, _msg) b, field_min(n, _msg) c`,
				`* | stats count_uniq_hash(v) a, count_uniq_hash(w) b, count_uniq_hash(n) c, count_uniq_hash(a, b) d`,
				`* | stats histogram(v) a, histogram(w) b, histogram(x) c, histogram(y) d, histogram(n) e`,
				`* | stats json_values(v, w, n) sort by (_msg desc) a, json_values(x, y, ip6) sort by (_time) limit 3 b`,
				`* | stats count_uniq(v) a, count_uniq(w) b, count_uniq(n) c, count_uniq(a) d, count_uniq(a, b) e, count_uniq(_time) f`,
			} {
				o.check(t, fmt.Sprintf("query/numbers-%d", i), tenant70(post("/select/logsql/query", "query", q)), sameRows(strings.Contains(q, "sort"), nil))
			}
			// Pipes that change rows one by one (tenant 7:1).
			for i, q := range []string{
				`* | coalesce(z*, nosuch) default none as c | fields _msg, c`,
				`* | decolorize | json_array_len(arr) as n | json_array_concat ", " from arr as c | fields _msg, n, c`,
				`* | unroll (arr) | fields _msg, arr`,
				`* | json_array_concat from arr as arr | hash(arr) as h | fields _msg, h`,
				`* | collapse_nums prettify | fields _time, _msg`,
				`* | collapse_nums if (_msg:w) at arr | fields _time, arr`,
				`* | time_add -1.5h at t2 | time_add 1d at t3 | time_add 1h | fields _time, t2, t3`,
				`* | split "," from csv as c | split "" from za | fields _time, c, za`,
				`* | unpack_words from words as ws | unpack_words from csv drop_duplicates | fields _time, ws, csv`,
				`q:* | stats values(q) v, uniq_values(q) u, row_min(q, q, r) a, row_max(q) b, row_any(q) c`,
				`q:* | pack_json fields (q, r) as p | pack_logfmt fields (q, r) as l | format "<q:q>" as f | fields p, l, f`,
				`q:* | pack_json as p | fields p`,
				`* | sort | fields _time, _msg, za, zb`,
				`* | sort desc limit 3 | fields _msg, za, zb`,
				`* | first 2 | fields _msg`,
				`* | last 3 | fields _msg, za, zb`,
			} {
				o.check(t, fmt.Sprintf("query/row-pipes-%d", i), tenant71(post("/select/logsql/query", "query", q)), sameRows(strings.Contains(q, "sort"), nil))
			}
			// sample keeps random rows: their number, within many standard
			// deviations, and that each is a generated line, once.
			o.check(t, "query/sample-1", post("/select/logsql/query", "query", `generated | sample 1 | stats count() n`), sameRows(false, nil))
			o.check(t, "query/sample-count", post("/select/logsql/query", "query", `generated | sample 3 | stats count() n`), sampledCount(50, 150))
			o.check(t, "query/sample-rows", post("/select/logsql/query", "query", `generated | sample 2 | fields _time, _msg, n`), sampledGenerated(90, 210))
			// generate_sequence drops its input and counts from 0.
			for i, q := range []string{
				`* | generate_sequence 5`,
				`nosuch | generate_sequence 2.7 | stats count() n, max(_msg) m`,
				`* | generate_sequence 1K | stats count() n, sum(_msg) s`,
				`* | stats count() n | generate_sequence 3 | limit 2`,
				`* | generate_sequence 0x10 | generate_sequence 3 | field_names`,
			} {
				o.check(t, fmt.Sprintf("query/generate-sequence-%d", i), post("/select/logsql/query", "query", q), sameRows(false, nil))
			}
			o.check(t, "query/generate-sequence-limit", get("/select/logsql/query", "query", `* | generate_sequence 10`, "limit", "3"), sameRows(false, nil))
			// options(global_filter=(...)): the query and its subqueries
			// without options of their own match it too.
			for i, q := range []string{
				`options(global_filter=(level:error)) * | stats by (service) count() n`,
				`options(global_filter=(app:web)) generated | stats by (app, env) count() n`,
				`options(global_filter=(level:error)) service:in(level:error or level:warn | fields service) | stats count() n`,
				`options(global_filter=(level:error)) * | filter level:info | stats count() n`,
				`options(global_filter=(level:warn or status:>=500), concurrency=1) * | stats by (level) count() n`,
				`options(global_filter=(service:in(status:>=500 | fields service))) * | stats by (service) count() n`,
			} {
				o.check(t, fmt.Sprintf("query/global-filter-%d", i), post("/select/logsql/query", "query", q), sameRows(false, nil))
			}
			// options(time_offset=D): time filters and the request's range
			// select logs D earlier, and their _time reaches the pipes D
			// later.
			for i, q := range []string{
				`options(time_offset=1d) _time:[2026-01-03T00:00:00Z, 2026-01-04T00:00:00Z) | stats count() n`,
				`options(time_offset=1h) * | stats by (_time:1d) count() n`,
				`options(time_offset=2h30m) level:error | fields _time, _msg`,
				`options(time_offset=1h) _time:day_range[10:00, 12:00) | stats count() n`,
				`options(time_offset=-1d) _time:<2026-01-02T00:00:00Z | stats by (level) count() n, min(_time) t`,
				`options(time_offset=1d) level:error | join by (service) (_time:>=2026-01-03T00:00:00Z | stats by (service) count() c) | stats by (service, c) count() n`,
				// Filter pipes right after the filter see the logs' own times
				// (VictoriaLogs merges them into the filter); later ones, the
				// shifted times.
				`options(time_offset=30m) _time:[2026-01-01T00:30:00Z, 2026-01-01T00:35:00Z] | filter _time:>=2026-01-01T00:02:00Z | stats count() c, min(_time) t`,
				`options(time_offset=30m) _time:[2026-01-01T00:30:00Z, 2026-01-01T00:35:00Z] | fields _time | filter _time:>=2026-01-01T00:32:00Z | stats count() c, min(_time) t`,
				// An open end stays open, however far the offset.
				`options(time_offset=250y) _time:>2262-01-01T00:00:00Z | stats count() c`,
				// A subquery with options of its own takes the others from
				// the query around it.
				`options(time_offset=1d) * | join by (service) (options(concurrency=1) * | stats by (service) max(_time) m) | stats by (service, m) count() x`,
				`options(global_filter=(level:info)) * | join by (service) (options(concurrency=1) * | stats by (service) count() c) | stats by (service, c) count() x`,
				// A subquery of in() whose filter holds a range closed by ')'.
				`level:in(status:range[500, 600) | fields level) | stats by (level) count() n`,
			} {
				o.check(t, fmt.Sprintf("query/time-offset-%d", i), post("/select/logsql/query", "query", q), sameRows(false, nil))
			}
			o.check(t, "query/time-offset-range", post("/select/logsql/query", "query", `options(time_offset=1d) * | stats count() n, min(_time) a, max(_time) b`,
				"start", "2026-01-03T00:00:00Z", "end", "2026-01-03T12:00:00Z"), sameRows(false, nil))
			// stream_context over the stored streams (app, env): the logs
			// around each match, in VictoriaLogs' order, with its "---"
			// rows between groups; and its refusals.
			for i, q := range []string{
				`generated level:error | stream_context before 2 after 1`,
				`generated app:web level:warn | stream_context after 3 | fields _time, _msg, app`,
				`generated n:<5 | stream_context before 3 after 3 time_window 2m`,
				`generated | filter n:150 | stream_context before 4 after 4`,
				`generated app:api env:prod | stream_context before 1`,
				`generated level:error | stream_context before 0 after 0 | stats by (app) count() n`,
				`generated level:error | stream_context before 5 after 5 | limit 7`,
				`generated | fields _time, _stream_id | stream_context after 1`,
				`generated | stream_context after 1`,
			} {
				// In order, but for the stats' groups.
				o.check(t, fmt.Sprintf("query/stream-context-%d", i), post("/select/logsql/query", "query", q), sameRows(!strings.Contains(q, "stats"), nil))
			}
			o.check(t, "tail/stream-context", get("/select/logsql/tail", "query", `generated | stream_context after 1`), nil)
			// Matches that share a time, within and across streams, and a
			// log outside the window.
			for i, q := range []string{
				`level:error | stream_context before 1 after 1`,
				`level:error app:a | stream_context before 2 after 2`,
				`"a3 first" | stream_context before 5 after 5`,
				`level:error | stream_context after 10 time_window 3h`,
				`level:error | stream_context after 10`,
				// The window's end on a whole second (00:00:12) takes in
				// that second (a4 half), as VictoriaLogs' re-read does.
				`"a3 first" | stream_context after 5 time_window 2s`,
				`level:error | stream_context before 1 after 1 time_window -1h`,
				`level:error | stream_context before 0.5 after 1.5`,
			} {
				o.check(t, fmt.Sprintf("query/stream-context-ties-%d", i), tenant73(post("/select/logsql/query", "query", q)), sameRows(true, nil))
			}
			// set_stream_fields over stored streams (app, env) and none.
			for i, q := range []string{
				`generated | set_stream_fields level, app | fields _time, _stream, _stream_id`,
				`generated | set_stream_fields if (level:error) n | fields _time, _stream, _stream_id`,
				`generated | set_stream_fields * | fields _time, _stream`,
				`generated | set_stream_fields * | fields _time, _stream, _stream_id, level`,
				`generated | set_stream_fields _s*, env | stats by (_stream) count() n`,
				`* | set_stream_fields level, nosuch | stats by (_stream) count() n`,
				`generated | set_stream_fields level | filter {level="error"} | stats count() n`,
				`generated | set_stream_fields if (app:web) level, _msg | stats by (_stream, _stream_id) count() n`,
			} {
				o.check(t, fmt.Sprintf("query/set-stream-fields-%d", i), post("/select/logsql/query", "query", q), sameRows(false, nil))
			}
			// Syslog messages (tenant 7:2).
			for i, q := range []string{
				`* | unpack_syslog`,
				`* | unpack_syslog from sl`,
				`* | unpack_syslog from sl keep_original_fields`,
				`* | unpack_syslog offset 5h30m result_prefix s. keep_original_fields`,
				`* | unpack_syslog if (level:app) offset -2h | fields _time, level, timestamp`,
				`* | unpack_syslog _msg keep_original_fields | fields _time, level, hostname`,
				`* | unpack_syslog | stats by (format, level) count() n`,
			} {
				o.check(t, fmt.Sprintf("query/syslog-%d", i), tenant72(post("/select/logsql/query", "query", q)), sameRows(false, nil))
			}
			// Without _time the rows limit keeps are any: count them only.
			r := get("/select/logsql/query", "query", "level:error | stats by (service) count() n", "limit", "3")
			o.check(t, "query/limit-stats", r, func(vl, sp []byte) error {
				if w, g := bytes.Count(vl, []byte("\n")), bytes.Count(sp, []byte("\n")); w != g || w != 3 {
					return fmt.Errorf("%d rows, VictoriaLogs %d, want 3", g, w)
				}
				return nil
			})
			for _, kv := range [][]string{
				{"query", "level:error | fields level, service", "format", "csv"},
				{"query", "\"cache miss\" | fields _time, _msg, status", "format", "csv"},
			} {
				r := post("/select/logsql/query", kv...)
				o.check(t, "query/"+r.args.Encode(), r, sortedLines)
			}
		})

		t.Run("hits", func(t *testing.T) {
			for _, kv := range [][]string{
				{"query", "*", "step", "1d"},
				{"query", "*", "step", "1h"},
				{"query", "level:error", "step", "1h", "offset", "30m"},
				{"query", "*", "step", "1d", "offset", "3h"},
				{"query", "*", "step", "1d", "field", "level"},
				{"query", "*", "step", "1d", "field", "level", "fields_limit", "2"},
				{"query", "generated", "step", "1h", "field", "app", "field", "env"},
				{"query", "*", "step", "10m", "start", "2026-01-01T00:00:00Z", "end", "2026-01-01T01:00:00Z"},
				{"query", "generated", "step", "30m", "start", "2026-01-04T00:10:00Z", "end", "2026-01-04T02:00:00Z", "field", "level"},
			} {
				r := get("/select/logsql/hits", kv...)
				o.check(t, "hits/"+r.args.Encode(), r, sameJSON(nil))
			}
		})

		t.Run("stats_query", func(t *testing.T) {
			for _, kv := range [][]string{
				{"query", "* | stats count() n"},
				{"query", "* | stats by (level) count() n, avg(bytes) b, avg(status) st, max(latency_ms) mx", "time", "2026-01-02T00:00:00Z"},
				{"query", "generated | stats by (app, env) count() n, max(n) hi", "time", "2026-01-05"},
				{"query", "_time:1d | stats by (level) count() n", "time", "2026-01-02T00:00:00Z"},
				{"query", "* | stats by (service) count() n | sort by (n desc) | limit 3", "time", "1767312000"},
			} {
				r := post("/select/logsql/stats_query", kv...)
				o.check(t, "stats_query/"+r.args.Encode(), r, sameJSON(promVector(r.args.Has("time"))))
			}
			for _, kv := range [][]string{
				{"query", "* | stats by (level) count() n", "step", "1h", "start", "2026-01-01T00:00:00Z", "end", "2026-01-01T06:00:00Z"},
				{"query", "generated | stats by (app) count() n, sum(n) s", "step", "30m", "start", "2026-01-04T00:00:00Z", "end", "2026-01-04T04:00:00Z"},
				{"query", "* | stats count() n", "step", "1d", "start", "2025-12-31", "end", "2026-01-05"},
			} {
				r := post("/select/logsql/stats_query_range", kv...)
				o.check(t, "stats_query_range/"+r.args.Encode(), r, sameJSON(promMatrix))
			}
		})

		t.Run("values", func(t *testing.T) {
			for _, kv := range [][]string{
				{"query", "*", "field", "level"},
				{"query", "*", "field", "level", "limit", "100"},
				{"query", "level:error", "field", "service", "limit", "1000"},
				{"query", "generated", "field", "app"},
				{"query", "*", "field", "no_such_field"},
			} {
				r := get("/select/logsql/field_values", kv...)
				o.check(t, "field_values/"+r.args.Encode(), r, sameJSON(nil))
			}
			// A limit below the number of values: VictoriaLogs picks any
			// values and zeroes their hits.
			r := get("/select/logsql/field_values", "query", "*", "field", "service", "limit", "3")
			o.check(t, "field_values/limit-3", r, func(vl, sp []byte) error {
				for _, b := range [][]byte{vl, sp} {
					v, err := decodeJSON(b)
					if err != nil {
						return err
					}
					vals, _ := jsonPath(v, "values").([]any)
					if len(vals) != 3 {
						return fmt.Errorf("want 3 values: %s", b)
					}
					for _, e := range vals {
						if h := fmt.Sprint(jsonPath(e, "hits")); h != "0" {
							return fmt.Errorf("want hits 0: %s", b)
						}
					}
				}
				return nil
			})
			for _, kv := range [][]string{
				{"query", "*"},
				{"query", "level:error", "limit", "3"},
				{"query", "generated", "max_values_per_field", "4"},
				{"query", "generated", "keep_const_fields", "1"},
			} {
				r := get("/select/logsql/facets", kv...)
				limit := 10 // VictoriaLogs' default
				if v := r.args.Get("limit"); v != "" {
					limit, _ = strconv.Atoi(v)
				}
				o.check(t, "facets/"+r.args.Encode(), r, sameJSON(facetsTies(limit)))
			}
			for _, path := range []string{"/select/logsql/streams", "/select/logsql/stream_ids", "/select/logsql/stream_field_names"} {
				for _, kv := range [][]string{
					{"query", "*"},
					{"query", "level:error"},
					{"query", "generated", "start", "2026-01-04T01:00:00Z", "end", "2026-01-04T02:00:00Z"},
				} {
					r := get(path, kv...)
					o.check(t, path+"/"+r.args.Encode(), r, sameJSON(nil))
				}
			}
			for _, kv := range [][]string{
				{"query", "*", "field", "app"},
				{"query", "level:error", "field", "env"},
				{"query", "*", "field", "app", "limit", "10"},
			} {
				r := get("/select/logsql/stream_field_values", kv...)
				o.check(t, "stream_field_values/"+r.args.Encode(), r, sameJSON(nil))
			}
			// Only the names: VictoriaLogs counts the hits of field_names per
			// storage block that holds the field, spate per row.
			for _, kv := range [][]string{
				{"query", "*"},
				{"query", "generated"},
				{"query", "*", "start", "2026-01-04"},
				// Rows a pipe made are not logs: no _stream, no _stream_id.
				{"query", "* | fields level, app"},
				{"query", "* | stats by (level) count() n"},
			} {
				r := get("/select/logsql/field_names", kv...)
				o.check(t, "field_names/"+r.args.Encode(), r, sameJSON(valueNames))
			}
			for _, kv := range [][]string{
				{"query", "*"},
				{"query", "_time:[2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z)"},
				{"query", "_time:>2026-01-01T10:00:00Z"},
				{"query", "*", "start", "2026-01-01T00:00:00Z", "end", "2026-01-02T00:00:00Z"},
				{"query", "_time:<2026-01-02Z", "start", "2025-12-01T00:00:00Z"},
			} {
				r := get("/select/logsql/query_time_range", kv...)
				o.check(t, "query_time_range/"+r.args.Encode(), r, sameJSON(nil))
			}
			tenants := func(v any) any {
				a, _ := v.([]any)
				sortByJSON(a, func(e any) any { return e })
				return a
			}
			for _, kv := range [][]string{
				{},
				{"start", "2026-01-01T00:00:00Z", "end", "2026-01-02T00:00:00Z"},
			} {
				r := get("/select/tenant_ids", kv...)
				o.check(t, "tenant_ids/"+r.args.Encode(), r, sameJSON(tenants))
			}
		})

		t.Run("tenant", func(t *testing.T) {
			for _, r := range []selectReq{
				post("/select/logsql/query", "query", "* | stats count() n"),
				post("/select/logsql/query", "query", "* | fields _time, _msg, _stream, _stream_id, app, env, n"),
				get("/select/logsql/hits", "query", "*", "step", "1h"),
				get("/select/logsql/field_values", "query", "*", "field", "env"),
				get("/select/logsql/streams", "query", "*"),
				get("/select/logsql/stream_ids", "query", "*"),
				get("/select/logsql/facets", "query", "*"),
				post("/select/logsql/stats_query", "query", "* | stats by (app) count() n", "time", "2026-01-05"),
			} {
				r = tenant34(r)
				cmp := sameJSON(nil)
				switch r.path {
				case "/select/logsql/query":
					cmp = sameRows(false, nil)
				case "/select/logsql/stats_query":
					cmp = sameJSON(promVector(true))
				case "/select/logsql/facets":
					cmp = sameJSON(facetsTies(10))
				}
				_, sp := o.check(t, "tenant/"+r.path+"?"+r.args.Encode(), r, cmp)
				if bytes.Contains(sp.body, []byte("generated")) || bytes.Contains(sp.body, []byte("longtailmarker")) {
					t.Errorf("tenant 3:4 sees tenant 0:0's logs: %s", sp.body)
				}
			}
			r := tenant34(get("/select/logsql/field_names", "query", "*"))
			o.check(t, "tenant/field_names", r, sameJSON(valueNames))
		})

		t.Run("grafana", func(t *testing.T) {
			// The datasource's health check.
			vl, sp := o.check(t, "grafana/health", get("/select/logsql/query", "query", "*", "limit", "1", "start", "-5m"), nil)
			if vl.code != http.StatusOK || sp.code != http.StatusOK {
				t.Errorf("health check: spate %s, VictoriaLogs %s", sp, vl)
			}
			start, end := strconv.FormatInt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), 10), strconv.FormatInt(time.Date(2026, 1, 1, 6, 0, 0, 0, time.UTC).Unix(), 10)
			r := get("/select/logsql/hits", "query", "level:error", "start", start, "end", end, "step", "1800s")
			o.check(t, "grafana/hits", r, sameJSON(nil))
			r = get("/select/logsql/hits", "query", "*", "start", start, "end", end, "step", "3600s", "field", "level")
			o.check(t, "grafana/hits-level", r, sameJSON(nil))
			r = post("/select/logsql/stats_query_range", "query", "* | stats by (level) count()", "start", start, "end", end, "step", "900s")
			o.check(t, "grafana/stats_query_range", r, sameJSON(promMatrix))
			r = post("/select/logsql/query", "query", "level:error | fields _time, _msg, service", "start", start, "end", end, "limit", "20")
			o.check(t, "grafana/query", r, sameRows(false, nil))
		})

		t.Run("errors", func(t *testing.T) {
			for _, tc := range []struct {
				name string
				r    selectReq
				code int
			}{
				{"bad-logsql", get("/select/logsql/query", "query", "* | stats foo()"), 400},
				{"bad-logsql-hits", get("/select/logsql/hits", "query", "foo(", "step", "1h"), 400},
				{"bad-start", get("/select/logsql/query", "query", "*", "start", "yesterday"), 400},
				{"bad-end-hits", get("/select/logsql/hits", "query", "*", "end", "2026-13-01"), 400},
				{"no-query", get("/select/logsql/query"), 400},
				{"stats-without-stats", post("/select/logsql/stats_query", "query", "error"), 422},
				{"stats-range-without-stats", post("/select/logsql/stats_query_range", "query", "error | fields _msg", "step", "1h"), 422},
			} {
				vl, sp := o.check(t, "errors/"+tc.name, tc.r, nil)
				if vl.code != tc.code || sp.code != tc.code {
					t.Errorf("errors/%s: %s: want %d from both: spate %s; VictoriaLogs %s", tc.name, tc.r, tc.code, sp, vl)
				}
				if tc.code == 422 {
					for _, a := range []selectAnswer{vl, sp} {
						var v struct{ Status string }
						if err := json.Unmarshal(a.body, &v); err != nil || v.Status != "error" {
							t.Errorf("errors/%s: want JSON with status error, got %s", tc.name, a)
						}
					}
				}
			}
		})

		t.Run("vlogscli", func(t *testing.T) {
			cli := os.Getenv("SPATE_VLOGSCLI")
			if cli == "" {
				t.Skip("set SPATE_VLOGSCLI to a vlogscli v1.52.1 binary")
			}
			input := strings.Join([]string{
				`* | stats count() n;`,
				`error | sort by (_time) | limit 3 | fields _time, _msg, service;`,
				`\s`,
				`level:error | stats by (service) count() n | sort by (service);`,
				`generated | stats by (app, env) count() n | sort by (app, env);`,
			}, "\n") + "\n"
			for _, tenant := range [][]string{nil, {"-accountID=3", "-projectID=4"}} {
				want := runVlogscli(t, cli, o.vl, input, tenant...)
				got := runVlogscli(t, cli, o.sp, input, tenant...)
				if want != got {
					t.Errorf("vlogscli %v: spate:\n%s\nVictoriaLogs:\n%s", tenant, got, want)
				}
				n := map[bool]string{true: "16171", false: "7"}[tenant == nil]
				if !strings.Contains(got, `"n": "`+n+`"`) {
					t.Errorf("vlogscli %v: want a count of %s lines:\n%s", tenant, n, got)
				}
			}
		})
	}
	t.Run("live", checks)
	srv.stop(t, syscall.SIGTERM)
	srv = startServe(t, spDir, "--compress-delay", "0s")
	o.sp = srv.url
	if err := waitSealed(context.Background(), spDir, time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Run("indexed", checks)
	// The indexed pass read columns, decoded frames alone and skipped
	// blocks by tokens (the metrics say how queries read blocks).
	metrics := string(fetchSelect(t, o.sp, selectReq{http.MethodGet, "/metrics", nil, nil}).body)
	for _, how := range []string{"columns", "lines", "skipped_tokens"} {
		if !regexp.MustCompile(`spate_select_index_blocks_total\{how="` + how + `"\} [1-9]`).MatchString(metrics) {
			t.Errorf("no block read as %s in the indexed pass:\n%s", how, regexp.MustCompile(`(?m)^spate_select_index.*$`).FindAllString(metrics, -1))
		}
	}

	t.Logf("%d requests compared", o.n)

	// Last: it adds lines to tenant 0:0.
	t.Run("tail", func(t *testing.T) {
		word := fmt.Sprintf("tailword%d", time.Now().UnixNano())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		vlc := openTail(ctx, o.vl, word)
		spc := openTail(ctx, o.sp, word)
		time.Sleep(500 * time.Millisecond) // let both tails start before the lines arrive
		var body bytes.Buffer
		now := time.Now().UTC()
		for i := range 10 {
			w := word
			if i%2 == 1 {
				w = "other" + word[len("tail"):]
			}
			fmt.Fprintf(&body, `{"ts":%q,"msg":"%s %d","i":"%d"}`+"\n", now.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), w, i, i)
		}
		sent := time.Now()
		vlPost(t, o.vl, "_time_field=ts&_msg_field=msg", body.Bytes())
		vlPost(t, o.sp, "_time_field=ts&_msg_field=msg", body.Bytes())
		got := collectTail(spc, 5, sent.Add(3*time.Second))
		t.Logf("tail: spate delivered %d lines in %v", len(got), time.Since(sent).Round(time.Millisecond))
		want := collectTail(vlc, 5, sent.Add(10*time.Second))
		t.Logf("tail: VictoriaLogs delivered %d lines in %v", len(want), time.Since(sent).Round(time.Millisecond))
		if len(got) != 5 || len(want) != 5 {
			t.Fatalf("tail: want 5 lines from both within 3 s (spate) and 10 s (VictoriaLogs):\n  spate:        %q\n  VictoriaLogs: %q", got, want)
		}
		if err := sameRows(false, nil)([]byte(strings.Join(want, "")), []byte(strings.Join(got, ""))); err != nil {
			t.Errorf("tail: %v\n  spate:        %q\n  VictoriaLogs: %q", err, got, want)
		}
		// Nothing more arrives (the other lines do not match).
		if extra := collectTail(spc, 1, time.Now().Add(1500*time.Millisecond)); len(extra) > 0 {
			t.Errorf("tail: spate sent more lines: %q", extra)
		}

		// Grafana's health check again, now that there are recent lines.
		forceFlush(t, o.vl)
		r := get("/select/logsql/query", "query", "*", "limit", "1", "start", "-5m")
		vl, sp := o.check(t, "grafana/health-recent", r, sameRows(false, nil))
		if bytes.Count(vl.body, []byte("\n")) != 1 || bytes.Count(sp.body, []byte("\n")) != 1 {
			t.Errorf("health check: want one recent line: spate %s; VictoriaLogs %s", sp, vl)
		}
	})
}

func argsOf(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// forceFlush makes VictoriaLogs' recent lines searchable.
func forceFlush(t *testing.T, vl string) {
	t.Helper()
	resp, err := http.Get(vl + "/internal/force_flush")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// openTail opens /select/logsql/tail for query q and returns a channel of
// the lines it sends; the channel closes when the answer ends. It does not
// wait for the answer's headers: VictoriaLogs sends them with its first
// lines.
func openTail(ctx context.Context, base, q string) <-chan string {
	ch := make(chan string, 100)
	go func() {
		defer close(ch)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/select/logsql/tail?"+argsOf("query", q).Encode(), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				ch <- fmt.Sprintf("tail request failed: %v\n", err)
			}
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			msg, _ := io.ReadAll(resp.Body)
			ch <- fmt.Sprintf("tail answered %d %s\n", resp.StatusCode, msg)
			return
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" {
				ch <- line + "\n"
			}
		}
	}()
	return ch
}

// collectTail reads up to n lines from ch until deadline.
func collectTail(ch <-chan string, n int, deadline time.Time) []string {
	var lines []string
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for len(lines) < n {
		select {
		case l, ok := <-ch:
			if !ok {
				return lines
			}
			lines = append(lines, l)
		case <-timer.C:
			return lines
		}
	}
	return lines
}

var vlogscliNoise = regexp.MustCompile(`(duration: server )[0-9.]+m?s|-datasource\.url=\S+`)

// runVlogscli feeds input to vlogscli pointed at base and returns its
// stdout with the server URL and durations blanked. vlogscli exits 0 even
// when a query fails, so error text in the output fails the test.
func runVlogscli(t *testing.T, cli, base, input string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args = append([]string{"-datasource.url=" + base + "/select/logsql/query", "-historyFile=" + filepath.Join(t.TempDir(), "history"), "-loggerLevel=WARN"}, args...)
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Stdin = strings.NewReader(input)
	// A file, not a pipe: vlogscli fsyncs its stdout after each answer,
	// which fails on a pipe ("sync /dev/stdout: invalid argument").
	stdout, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("vlogscli against %s: %v\n%s", base, err, stderr.String())
	}
	b, err := os.ReadFile(stdout.Name())
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	// Rows are JSON ({, } and indented lines); anything else is vlogscli's own.
	for line := range strings.Lines(out + stderr.String()) {
		if strings.HasPrefix(line, "{") || strings.HasPrefix(line, "}") || strings.HasPrefix(line, " ") {
			continue
		}
		if strings.HasPrefix(line, "executing [") {
			continue
		}
		for _, bad := range []string{"cannot ", "unexpected", "error"} {
			if strings.Contains(line, bad) {
				t.Errorf("vlogscli against %s printed %q:\n%s%s", base, bad, out, stderr.String())
			}
		}
	}
	if !strings.Contains(out, "executing [") {
		t.Errorf("vlogscli against %s ran no query:\n%s%s", base, out, stderr.String())
	}
	return vlogscliNoise.ReplaceAllString(out, "$1")
}
