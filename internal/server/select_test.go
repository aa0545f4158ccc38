package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/segment"
)

// get sends a /select request (GET, or POST with a form when post is set)
// and returns the status and body.
func get(t *testing.T, base, path string, args url.Values, post bool, hdr ...string) (int, string) {
	t.Helper()
	var req *http.Request
	var err error
	if post {
		req, err = http.NewRequest(http.MethodPost, base+path, strings.NewReader(args.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	} else {
		req, err = http.NewRequest(http.MethodGet, base+path+"?"+args.Encode(), nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	resp := do(t, req, hdr...)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// selectData ingests a small fixed data set: 6 lines in two streams of
// tenant 0:0 and 2 lines of tenant 3:4.
func selectData(t *testing.T, base string) {
	t.Helper()
	lines := `{"ts":"2026-11-22T08:00:00Z","msg":"boot ok","app":"api","level":"info","n":1}
{"ts":"2026-11-22T08:30:00Z","msg":"disk error","app":"api","level":"error","n":2}
{"ts":"2026-11-22T09:10:00Z","msg":"request ok","app":"web","level":"info","n":3}
{"ts":"2026-11-22T09:20:00Z","msg":"timeout error","app":"web","level":"error","n":4}
{"ts":"2026-11-22T09:40:00Z","msg":"request ok","app":"web","level":"info","n":5}
{"ts":"2026-11-22T09:50:00Z","msg":"shutdown","app":"api","level":"warn","n":6}
`
	if r := post(t, base+"/insert/jsonline?_time_field=ts&_msg_field=msg&_stream_fields=app", []byte(lines)); r.code != 200 {
		t.Fatalf("ingest: %d %+v", r.code, r.rep)
	}
	other := `{"ts":"2026-11-22T09:00:00Z","msg":"secret error","app":"billing","level":"error","n":7}
{"ts":"2026-11-22T09:05:00Z","msg":"secret ok","app":"billing","level":"info","n":8}
`
	if r := post(t, base+"/insert/jsonline?_time_field=ts&_msg_field=msg&_stream_fields=app", []byte(other), "AccountID", "3", "ProjectID", "4"); r.code != 200 {
		t.Fatalf("ingest 3:4: %d %+v", r.code, r.rep)
	}
}

// noLeak checks that the goroutines started by a test end.
func noLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			t.Errorf("%d goroutines left running (%d before):\n%s", n-before, before, buf[:runtime.Stack(buf, true)])
		}
	})
}

func TestSelectEndpoints(t *testing.T) {
	_, ts := newTestServer(t, Config{})
	selectData(t, ts.URL)
	tenant := []string{"AccountID", "3", "ProjectID", "4"}
	cases := []struct {
		path string
		args url.Values
		hdr  []string
		want string
	}{
		{"/select/logsql/query", q("query", "error | fields _time, _msg, n"), nil,
			`{"_time":"2026-11-22T08:30:00Z","_msg":"disk error","n":"2"}` + "\n" +
				`{"_time":"2026-11-22T09:20:00Z","_msg":"timeout error","n":"4"}` + "\n"},
		// limit: the newest, fields sorted by name, _stream and _stream_id included.
		{"/select/logsql/query", q("query", "app:api", "limit", "1"), nil,
			`{"_msg":"shutdown","_stream":"{app=\"api\"}","_stream_id":"0000000000000000b229f2d1af9fff8980a49eec4250ada3","_time":"2026-11-22T09:50:00Z","app":"api","level":"warn","n":"6"}` + "\n"},
		{"/select/logsql/query", q("query", "*", "limit", "2", "offset", "1", "start", "2026-11-22T09Z", "end", "2026-11-22T09:50:00Z"), nil, ""},
		{"/select/logsql/query", q("query", "* | fields n", "format", "csv", "start", "1795338000", "end", "1795339800"), nil,
			"n\n3\n4\n"},
		{"/select/logsql/query", q("query", "*| stats count() n"), tenant, `{"n":"2"}` + "\n"},
		{"/select/logsql/hits", q("query", "*", "step", "1h", "start", "2026-11-22T07:00:00Z", "end", "2026-11-22T10:00:00Z"), nil,
			`{"hits":[{"fields":{},"timestamps":["2026-11-22T07:00:00Z","2026-11-22T08:00:00Z","2026-11-22T09:00:00Z"],"values":[0,2,4],"total":6}]}`},
		{"/select/logsql/hits", q("query", "*", "step", "1h", "field", "level", "fields_limit", "1"), nil,
			`{"hits":[{"fields":{"level":"info"},"timestamps":["2026-11-22T08:00:00Z","2026-11-22T09:00:00Z"],"values":[1,2],"total":3},{"fields":{},"timestamps":["2026-11-22T08:00:00Z","2026-11-22T09:00:00Z"],"values":[1,2],"total":3}]}`},
		{"/select/logsql/stats_query", q("query", "* | stats by (level) count() n | sort by (level)", "time", "2026-11-22T10:00:00Z"), nil,
			`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"n","level":"error"},"value":[1795341600,"2"]},{"metric":{"__name__":"n","level":"info"},"value":[1795341600,"3"]},{"metric":{"__name__":"n","level":"warn"},"value":[1795341600,"1"]}]}}`},
		{"/select/logsql/stats_query_range", q("query", "error | stats count() n", "step", "1h", "start", "2026-11-22T08:00:00Z", "end", "2026-11-22T10:00:00Z"), nil,
			`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"n"},"values":[[1795334400,"1"],[1795338000,"1"]]}]}}`},
		{"/select/logsql/field_values", q("query", "*", "field", "level"), nil,
			`{"values":[{"value":"info","hits":3},{"value":"error","hits":2},{"value":"warn","hits":1}]}`},
		{"/select/logsql/field_values", q("query", "*", "field", "level", "limit", "1"), nil,
			`{"values":[{"value":"error","hits":0}]}`},
		{"/select/logsql/field_values", q("query", "*", "field", "level"), tenant,
			`{"values":[{"value":"error","hits":1},{"value":"info","hits":1}]}`},
		{"/select/logsql/field_names", q("query", "app:web", "filter", "e"), nil,
			`{"values":[{"value":"_stream","hits":3},{"value":"_stream_id","hits":3},{"value":"_time","hits":3},{"value":"level","hits":3}]}`},
		{"/select/logsql/streams", q("query", "*"), nil,
			`{"values":[{"value":"{app=\"api\"}","hits":3},{"value":"{app=\"web\"}","hits":3}]}`},
		{"/select/logsql/streams", q("query", "*"), tenant,
			`{"values":[{"value":"{app=\"billing\"}","hits":2}]}`},
		{"/select/logsql/stream_ids", q("query", "{app=\"api\"}"), nil,
			`{"values":[{"value":"0000000000000000b229f2d1af9fff8980a49eec4250ada3","hits":3}]}`},
		{"/select/logsql/stream_field_names", q("query", "*"), nil,
			`{"values":[{"value":"app","hits":6}]}`},
		{"/select/logsql/stream_field_values", q("query", "*", "field", "app"), nil,
			`{"values":[{"value":"api","hits":3},{"value":"web","hits":3}]}`},
		{"/select/logsql/facets", q("query", "app:web", "limit", "1"), nil,
			`{"facets":[{"field_name":"_msg","values":[{"field_value":"request ok","hits":2}]},{"field_name":"_time","values":[{"field_value":"2026-11-22T09:10:00Z","hits":1}]},{"field_name":"level","values":[{"field_value":"info","hits":2}]},{"field_name":"n","values":[{"field_value":"3","hits":1}]}]}`},
		{"/select/logsql/query_time_range", q("query", "_time:[2026-11-22T08:00:00Z, 2026-11-22T09:00:00Z) error"), nil,
			`{"start":"2026-11-22T08:00:00Z","end":"2026-11-22T08:59:59.999999999Z","hasTimeFilter":true}`},
		{"/select/tenant_ids", nil, nil,
			`[{"account_id":0,"project_id":0},{"account_id":3,"project_id":4}]`},
		{"/select/buildinfo", nil, nil, `{"status":"success","data":{"version":"v1.52.1"}}`},
	}
	for i, c := range cases {
		for _, post := range []bool{false, true} {
			if post && c.path == "/select/buildinfo" {
				continue
			}
			code, body := get(t, ts.URL, c.path, c.args, post, c.hdr...)
			if c.want == "" && c.path == "/select/logsql/query" {
				// limit 2 offset 1 over [09:00, 09:50): 09:20, 09:10.
				lines := strings.Split(strings.TrimSpace(body), "\n")
				if code != 200 || len(lines) != 2 || !strings.Contains(lines[0], `"n":"4"`) || !strings.Contains(lines[1], `"n":"3"`) {
					t.Errorf("case %d %s %v: %d %s", i, c.path, c.args, code, body)
				}
				continue
			}
			if code != 200 || body != c.want {
				t.Errorf("case %d %s %v (post %v): %d\n got  %s\n want %s", i, c.path, c.args, post, code, body, c.want)
			}
		}
	}
}

func TestSelectTenantIsolation(t *testing.T) {
	_, ts := newTestServer(t, Config{})
	selectData(t, ts.URL)
	// Tenant 5:6 has nothing; 3:4 never sees 0:0's lines and 0:0 never
	// sees "secret".
	for _, path := range []string{"query", "hits", "facets", "field_names", "field_values", "streams", "stream_ids", "stream_field_names", "stream_field_values", "stats_query", "stats_query_range"} {
		args := q("query", "*", "step", "1h", "field", "_msg")
		if strings.HasPrefix(path, "stats") {
			args.Set("query", "* | stats by (_msg) count()")
		}
		if path == "stream_field_values" {
			args.Set("field", "app")
		}
		_, body0 := get(t, ts.URL, "/select/logsql/"+path, args, false)
		_, body34 := get(t, ts.URL, "/select/logsql/"+path, args, false, "AccountID", "3", "ProjectID", "4")
		code, body56 := get(t, ts.URL, "/select/logsql/"+path, args, false, "AccountID", "5", "ProjectID", "6")
		if strings.Contains(body0, "secret") || strings.Contains(body0, "billing") {
			t.Errorf("%s: tenant 0:0 sees 3:4's lines: %s", path, body0)
		}
		if strings.Contains(body34, "request") || strings.Contains(body34, `api`) {
			t.Errorf("%s: tenant 3:4 sees 0:0's lines: %s", path, body34)
		}
		if code != 200 || strings.Contains(body56, "secret") || strings.Contains(body56, "request") {
			t.Errorf("%s: empty tenant 5:6: %d %s", path, code, body56)
		}
	}
}

func TestSelectErrors(t *testing.T) {
	noLeak(t)
	s, ts := newTestServer(t, Config{MaxQueueDuration: 50 * time.Millisecond})
	selectData(t, ts.URL)
	cases := []struct {
		path string
		args url.Values
		hdr  []string
		code int
		want string
	}{
		{"/select/logsql/query", q("query", "foo | bad"), nil, 400, `cannot parse ` + "`query`" + ` arg [foo | bad]: cannot parse query at column 7: unknown pipe "bad"`},
		{"/select/logsql/query", q(), nil, 400, "`query` arg cannot be empty"},
		{"/select/logsql/query", q("query", "*", "start", "yesterday"), nil, 400, "cannot parse start=yesterday"},
		{"/select/logsql/query", q("query", "*", "limit", "-1"), nil, 400, `"limit" cannot be smaller than 0`},
		{"/select/logsql/query", q("query", "*", "limit", "x"), nil, 400, `cannot parse limit="x"`},
		{"/select/logsql/query", q("query", "*", "format", "xml"), nil, 400, `unexpected format="xml"`},
		{"/select/logsql/query", q("query", "*", "timeout", "soon"), nil, 400, "cannot parse duration at 'timeout=soon' arg"},
		{"/select/logsql/query", q("query", "*"), []string{"AccountID", "x"}, 400, "AccountID"},
		{"/select/logsql/query", q("query", strings.Repeat("a", MaxQueryLen+1)), nil, 400, "cannot exceed"},
		{"/select/logsql/hits", q("query", "*"), nil, 400, "cannot parse duration from the arg 'step='"},
		{"/select/logsql/hits", q("query", "*", "step", "0s"), nil, 400, "'step' must be bigger than zero"},
		{"/select/logsql/hits", q("query", "*", "step", "1ms", "start", "2026-01-01Z", "end", "2026-12-01Z"), nil, 400, "use a bigger step"},
		{"/select/logsql/hits", q("query", "nothing-matches-this", "step", "1ms", "start", "2026-01-01Z", "end", "2026-12-01Z"), nil, 200, `{"hits":[]}`},
		{"/select/logsql/field_values", q("query", "*"), nil, 400, "missing 'field' query arg"},
		{"/select/logsql/stats_query", q("query", "error"), nil, 422, `{"status":"error","errorType":"422","error":"missing ` + "`| stats ...`" + ` pipe in the query [error]"}`},
		{"/select/logsql/stats_query_range", q("query", "* | stats count() | limit 1", "step", "1h"), nil, 422, "isn't allowed in range queries"},
		{"/select/logsql/tail", q("query", "* | stats count()"), nil, 400, "cannot be used in live tailing"},
		{"/select/logsql/tail", q("query", "* | union (x | fields a)"), nil, 400, "cannot be used in live tailing"},
		{"/select/tenant_ids", q(), []string{"AccountID", "1"}, 403, "cannot be requested with non-empty AccountID"},
	}
	for i, c := range cases {
		code, body := get(t, ts.URL, c.path, c.args, i%2 == 1, c.hdr...)
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("case %d %s %v: %d %q, want %d with %q", i, c.path, c.args, code, body, c.code, c.want)
		}
	}

	// Oversized limits and offsets are fine, and an unknown tenant is empty.
	for _, args := range []url.Values{
		q("query", "*", "limit", "9223372036854775807"),
		q("query", "*", "limit", "9223372036854775807", "offset", "9223372036854775807"),
		q("query", "* | fields n", "limit", "1000000000000", "offset", "5"),
	} {
		if code, body := get(t, ts.URL, "/select/logsql/query", args, false); code != 200 || strings.Count(body, "\n") > 6 {
			t.Errorf("%v: %d %s", args, code, body)
		}
	}
	if code, body := get(t, ts.URL, "/select/logsql/query", q("query", "*"), false, "AccountID", "99"); code != 200 || body != "" {
		t.Errorf("unknown tenant: %d %q", code, body)
	}

	// A query past its timeout gets 503.
	code, body := get(t, ts.URL, "/select/logsql/query", q("query", "*", "timeout", "1ns"), false)
	if code != 503 || !strings.Contains(body, "couldn't be executed") {
		t.Errorf("timeout: %d %q", code, body)
	}
	// With every query slot taken, a query waits MaxQueueDuration, then 503.
	for range cap(s.querySlots) {
		s.querySlots <- struct{}{}
	}
	code, body = get(t, ts.URL, "/select/logsql/query", q("query", "*"), false)
	for range cap(s.querySlots) {
		<-s.querySlots
	}
	if code != 503 || !strings.Contains(body, "concurrent queries") {
		t.Errorf("busy: %d %q", code, body)
	}
	if code, _ := get(t, ts.URL, "/select/logsql/query", q("query", "*"), false); code != 200 {
		t.Errorf("after the slots are freed: %d", code)
	}
}

// TestSelectSortMemory: a sort that would keep more than QueryMemory of
// rows fails with 422 instead of growing without bound.
func TestSelectSortMemory(t *testing.T) {
	_, ts := newTestServer(t, Config{QueryMemory: 64 << 10})
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, `{"n":%d,"pad":"%s"}`+"\n", i, strings.Repeat("p", 40))
	}
	if r := post(t, ts.URL+"/insert/jsonline", []byte(b.String())); r.code != 200 {
		t.Fatal(r.code)
	}
	code, body := get(t, ts.URL, "/select/logsql/query", q("query", "* | sort by (n)"), false)
	if code != 422 || !strings.Contains(body, "over the 0 MiB a query may use") {
		t.Errorf("sort over memory: %d %.300s", code, body)
	}
	// With a limit the sort keeps only the best rows.
	code, body = get(t, ts.URL, "/select/logsql/query", q("query", "* | sort by (n) desc | limit 2 | fields n"), false)
	if code != 200 || body != `{"n":"4999"}`+"\n"+`{"n":"4998"}`+"\n" {
		t.Errorf("sort with limit: %d %s", code, body)
	}
}

// bigStore fills a server with n generated lines (about 150 bytes each).
func bigStore(t *testing.T, base string, n int) {
	t.Helper()
	const per = 50000
	for i := 0; i < n; i += per {
		if r := post(t, base+"/insert/jsonline", genLines("row", i, min(per, n-i))); r.code != 200 {
			t.Fatal(r.code, r.rep)
		}
	}
}

// TestSelectClientGone: a client that goes away stops its query (the scan
// ends long before it would have read the store) and leaves no goroutine.
func TestSelectClientGone(t *testing.T) {
	noLeak(t)
	s, ts := newTestServer(t, Config{QueryWorkers: 1})
	bigStore(t, ts.URL, 400000)
	for _, mode := range []string{"rows", "stats"} {
		qs := `* | filter id:~"row-.*9$"`
		if mode == "stats" {
			qs = `* | stats by (id) count()`
		}
		before := readMetric(t, s, "spate_select_read_bytes_total")
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/select/logsql/query?"+q("query", qs).Encode(), nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				// Read a little, then stop reading.
				io.CopyN(io.Discard, resp.Body, 100)
				<-ctx.Done()
				resp.Body.Close()
			}
		}()
		time.Sleep(30 * time.Millisecond)
		start := time.Now()
		cancel()
		<-done
		// The handler counts the bytes its query read when it returns.
		waitFor(t, "the query to stop", func() bool { return readMetric(t, s, "spate_select_read_bytes_total") > before })
		read := readMetric(t, s, "spate_select_read_bytes_total") - before
		t.Logf("%s: stopped %v after the client went away, having read %.1f MB", mode, time.Since(start), read/1e6)
	}
}

func readMetric(t *testing.T, s *Server, name string) float64 {
	t.Helper()
	mfs, err := s.m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			v := 0.0
			for _, m := range mf.GetMetric() {
				v += m.GetCounter().GetValue()
			}
			return v
		}
	}
	return math.NaN()
}

// TestTail: a tail sends the recent lines, then each matching line once
// as it is acknowledged, in _time order within a refresh, held back by
// offset when asked.
// openTail opens /select/logsql/tail at ts with the args (name, value
// pairs) for as long as ctx lasts, checks that it answers 200 with NDJSON,
// and returns its body, closed when the test ends.
func openTail(t *testing.T, ctx context.Context, ts *httptest.Server, kv ...string) *bufio.Reader {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/select/logsql/tail?"+q(kv...).Encode(), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("tail: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return bufio.NewReader(resp.Body)
}

func TestTail(t *testing.T) {
	noLeak(t)
	_, ts := newTestServer(t, Config{})
	// Lines without a time get the server's (fixed) now.
	post(t, ts.URL+"/insert/jsonline", []byte(`{"msg":"tailme before"}`+"\n"+`{"msg":"other"}`+"\n"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	br := openTail(t, ctx, ts, "query", "tailme | fields _msg", "refresh_interval", "50ms")
	want := []string{`{"_msg":"tailme before"}`}
	for i := range 20 {
		post(t, ts.URL+"/insert/jsonline", []byte(fmt.Sprintf(`{"msg":"tailme %d"}`+"\n"+`{"msg":"skip %d"}`+"\n", i, i)))
		want = append(want, fmt.Sprintf(`{"_msg":"tailme %d"}`, i))
	}
	for _, w := range want {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("tail: %v after %q", err, line)
		}
		if strings.TrimSpace(line) != w {
			t.Fatalf("tail: got %q, want %q", line, w)
		}
	}
	cancel()
}

// TestTailJoin: a join's subquery and an in(...) subquery run once when the
// tail starts, and every new line is joined and filtered with their rows.
func TestTailJoin(t *testing.T) {
	noLeak(t)
	_, ts := newTestServer(t, Config{})
	post(t, ts.URL+"/insert/jsonline", []byte(`{"msg":"user","u":"1","name":"ann"}`+"\n"+`{"msg":"vip","u":"2"}`+"\n"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	br := openTail(t, ctx, ts, "query", "buy | join by (u) (_msg:user | fields u, name) | fields _msg, name",
		"refresh_interval", "50ms")
	br2 := openTail(t, ctx, ts, "query", "buy u:in(_msg:vip | fields u) | fields _msg", "refresh_interval", "50ms")
	expect := func(br *bufio.Reader, want string) {
		t.Helper()
		line, err := br.ReadString('\n')
		if err != nil || strings.TrimSpace(line) != want {
			t.Fatalf("tail: got %q (%v), want %q", line, err, want)
		}
	}
	post(t, ts.URL+"/insert/jsonline", []byte(`{"msg":"buy 1","u":"1"}`+"\n"))
	expect(br, `{"_msg":"buy 1","name":"ann"}`)
	post(t, ts.URL+"/insert/jsonline", []byte(`{"msg":"buy 2","u":"2"}`+"\n"))
	expect(br, `{"_msg":"buy 2"}`)
	expect(br2, `{"_msg":"buy 2"}`)
	cancel()
}

// TestTailAheadOfNow: a line already stored when a tail starts, stamped
// after the server's now (a clock ahead, or a line stored between the tail
// reading now and taking its snapshot), is in the first answer: the tail
// goes on past it, so an answer that dropped it would never show it.
func TestTailAheadOfNow(t *testing.T) {
	noLeak(t)
	s, ts := newTestServer(t, Config{})
	ahead := time.Unix(0, s.cfg.Now().UnixNano()).Add(time.Minute).UTC().Format(time.RFC3339Nano)
	post(t, ts.URL+"/insert/jsonline", []byte(fmt.Sprintf(`{"_time":%q,"msg":"tailme ahead"}`+"\n", ahead)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	line, err := openTail(t, ctx, ts, "query", "tailme | fields _msg", "refresh_interval", "50ms").ReadString('\n')
	if strings.TrimSpace(line) != `{"_msg":"tailme ahead"}` {
		t.Fatalf("tail: %q, %v; want the line stamped ahead of now", line, err)
	}
}

// TestTailSlowReader: a tail client that stops reading is disconnected
// once its writes stall for tailWriteTimeout, and its goroutine ends.
func TestTailSlowReader(t *testing.T) {
	noLeak(t)
	old := tailWriteTimeoutVar
	tailWriteTimeoutVar = 200 * time.Millisecond
	defer func() { tailWriteTimeoutVar = old }()
	s, ts := newTestServer(t, Config{})
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /select/logsql/tail?query=*&refresh_interval=20ms HTTP/1.1\r\nHost: x\r\n\r\n")
	// Never read; ingest far more than the socket buffers hold.
	for i := range 20 {
		post(t, ts.URL+"/insert/jsonline", genLines(fmt.Sprintf("slow%d-", i), 0, 20000))
	}
	waitFor(t, "the tail to give up on its reader", func() bool {
		return readMetric(t, s, "spate_select_tail_dropped_total") >= 1
	})
}

// TestSelectWhileWriting: counts over HTTP never go down and never pass
// the acknowledged lines while requests are stored, segments sealed (every
// 64 KiB) and compressed at once; once writing stops they equal the lines
// stored, and hits and stats agree.
func TestSelectWhileWriting(t *testing.T) {
	noLeak(t)
	s, ts := newTestServer(t, Config{Segment: segment.Options{MaxSegmentBytes: 64 << 10, CompressDelay: -1}})
	var acked atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 60 {
			r := post(t, ts.URL+"/insert/jsonline", genLines(fmt.Sprintf("w%d", i), 0, 1000))
			if r.code != 200 {
				t.Errorf("ingest %d: %d", i, r.code)
				return
			}
			acked.Add(int64(r.rep.Accepted))
		}
	}()
	last := int64(-1)
	count := func() int64 {
		code, body := get(t, ts.URL, "/select/logsql/query", q("query", "* | stats count() n"), false)
		var n int64
		if code != 200 || func() error { _, err := fmt.Sscanf(body, `{"n":"%d"}`, &n); return err }() != nil {
			t.Fatalf("count: %d %s", code, body)
		}
		return n
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		lo := acked.Load()
		n := count()
		hi := acked.Load() + 1000 // a request may be acknowledged while it is read
		if n < last || n < lo || n > hi {
			t.Fatalf("count %d: want >= %d (last) and in [%d, %d] (acknowledged)", n, last, lo, hi)
		}
		last = n
	}
	if n := count(); n != 60000 || acked.Load() != 60000 {
		t.Fatalf("final count %d, acknowledged %d, want 60000", n, acked.Load())
	}
	waitFor(t, "segments to be compressed", func() bool {
		files, _ := segment.List(s.cfg.DataDir)
		zst := 0
		for _, f := range files {
			if f.Compressed {
				zst++
			}
		}
		return zst >= len(files)/2 && zst > 10
	})
	if n := count(); n != 60000 {
		t.Fatalf("count after compression %d, want 60000", n)
	}
	_, hits := get(t, ts.URL, "/select/logsql/hits", q("query", "*", "step", "1d"), false)
	if !strings.Contains(hits, `"total":60000`) {
		t.Fatalf("hits: %s", hits)
	}
}

// TestSelectArgs: the args VMUI and Grafana add to queries.
func TestSelectArgs(t *testing.T) {
	_, ts := newTestServer(t, Config{})
	selectData(t, ts.URL)
	count := func(args url.Values) string {
		t.Helper()
		code, body := get(t, ts.URL, "/select/logsql/query", args, true)
		if code != 200 {
			t.Fatalf("%v: %d %s", args, code, body)
		}
		return strings.TrimSpace(body)
	}
	for _, c := range []struct {
		args url.Values
		want string
	}{
		{q("query", "* | stats count() n", "extra_filters", "level:error"), `{"n":"2"}`},
		{q("query", "* | stats count() n", "extra_filters", `{"level":"info","app":["web","x"]}`), `{"n":"2"}`},
		{q("query", "* | stats count() n", "extra_filters", `{"level":"info"}`, "extra_filters", "n:>3"), `{"n":"1"}`},
		{q("query", "* | stats count() n", "extra_stream_filters", `{"app":"api"}`), `{"n":"3"}`},
		{q("query", "* | stats count() n", "extra_stream_filters", `{"app":["api","web"]}`), `{"n":"6"}`},
		{q("query", "* | stats count() n", "extra_stream_filters", `{app="web"}`), `{"n":"3"}`},
		{q("query", "error | stats count() n", "ignore_pipes", "1"), `{"_msg":"disk error","_stream":"{app=\"api\"}","_stream_id":"0000000000000000b229f2d1af9fff8980a49eec4250ada3","_time":"2026-11-22T08:30:00Z","app":"api","level":"error","n":"2"}` + "\n" +
			`{"_msg":"timeout error","_stream":"{app=\"web\"}","_stream_id":"00000000000000002d927b31913138dbfba2e4ff3abc4cf9","_time":"2026-11-22T09:20:00Z","app":"web","level":"error","n":"4"}`},
		// Relative times count back from the time arg.
		{q("query", "_time:1h | stats count() n", "time", "2026-11-22T09:30:00Z"), `{"n":"3"}`},
	} {
		if got := count(c.args); got != c.want {
			t.Errorf("%v:\n got  %s\n want %s", c.args, got, c.want)
		}
	}
	for _, c := range []struct {
		path string
		args url.Values
		want string
	}{
		{"/select/logsql/field_values", q("query", "*", "field", "_msg", "filter", "ok"),
			`{"values":[{"value":"request ok","hits":2},{"value":"boot ok","hits":1}]}`},
		// Every field of app:api has 3 values or 1 (left out as constant).
		{"/select/logsql/facets", q("query", "app:api", "max_values_per_field", "2"), `{"facets":[]}`},
		// Constant fields kept; fields with a value over 4 bytes left out.
		{"/select/logsql/facets", q("query", "app:api", "limit", "1", "keep_const_fields", "1", "max_value_len", "4"),
			`{"facets":[{"field_name":"app","values":[{"field_value":"api","hits":3}]},{"field_name":"n","values":[{"field_value":"1","hits":1}]}]}`},
	} {
		code, body := get(t, ts.URL, c.path, c.args, false)
		if code != 200 || body != c.want {
			t.Errorf("%s %v: %d\n got  %s\n want %s", c.path, c.args, code, body, c.want)
		}
	}
}

// TestTailOffset: with offset, lines younger than it are held back.
func TestTailOffset(t *testing.T) {
	noLeak(t)
	_, ts := newTestServer(t, Config{}) // now is fixed at 2026-11-22T10:00:00Z
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	br := openTail(t, ctx, ts, "query", "* | fields _msg, _time", "refresh_interval", "20ms", "offset", "10s")
	// "now" lines are never 10 s old (the clock stands still); the one
	// from a minute ago is sent.
	post(t, ts.URL+"/insert/jsonline", []byte(`{"msg":"young 1"}`+"\n"+`{"msg":"old","ts":"2026-11-22T09:59:00Z"}`+"\n"+`{"msg":"young 2"}`+"\n"))
	line, err := br.ReadString('\n')
	if err != nil || line != `{"_msg":"old","_time":"2026-11-22T09:59:00Z"}`+"\n" {
		t.Fatalf("tail with offset: %q, %v", line, err)
	}
	post(t, ts.URL+"/insert/jsonline", []byte(`{"msg":"old 2","ts":"2026-11-22T09:58:00Z"}`+"\n"))
	if line, err := br.ReadString('\n'); err != nil || line != `{"_msg":"old 2","_time":"2026-11-22T09:58:00Z"}`+"\n" {
		t.Fatalf("tail with offset: %q, %v (the young lines must stay held)", line, err)
	}
	cancel()
}

// TestTailExactlyOnce: a tail opened while lines are being ingested sends
// each line once: those acknowledged before it (all inside its start
// window, their _time being the server's fixed now) from its first query,
// the others as they come, with nothing counted twice between the two.
func TestTailExactlyOnce(t *testing.T) {
	noLeak(t)
	_, ts := newTestServer(t, Config{Segment: segment.Options{MaxSegmentBytes: 4 << 10, CompressDelay: -1}})
	const total = 3000
	done, stop := make(chan struct{}), make(chan struct{})
	started := make(chan struct{})
	defer func() {
		close(stop)
		<-done // the writer must not outlive the test
	}()
	go func() {
		defer close(done)
		for i := 0; i < total; i += 10 {
			select {
			case <-stop:
				return
			default:
			}
			var b strings.Builder
			for j := i; j < i+10; j++ {
				fmt.Fprintf(&b, `{"msg":"line %d"}`+"\n", j)
			}
			if r := post(t, ts.URL+"/insert/jsonline", []byte(b.String())); r.code != 200 {
				t.Errorf("ingest: %d", r.code)
				return
			}
			if i == 500 {
				close(started)
			}
		}
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	br := openTail(t, ctx, ts, "query", "* | fields _msg", "refresh_interval", "10ms")
	seen := map[string]int{}
	for len(seen) < total {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d lines: %v", len(seen), err)
		}
		seen[line]++
		if seen[line] > 1 {
			t.Fatalf("%q sent twice", line)
		}
	}
	cancel()
}

// TestSelectApproximate: results computed with sketches (past
// QueryMemory) say so in the Spate-Approximate header, or trailer.
func TestSelectApproximate(t *testing.T) {
	_, ts := newTestServer(t, Config{QueryMemory: 16 << 10})
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, `{"u":"user-%d"}`+"\n", i)
	}
	post(t, ts.URL+"/insert/jsonline", []byte(b.String()))
	for _, path := range []string{"/select/logsql/query", "/select/logsql/stats_query"} {
		resp, err := http.PostForm(ts.URL+path, q("query", "* | stats count_uniq(u) n"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := resp.Header.Get(approxHeader) + resp.Trailer.Get(approxHeader)
		if resp.StatusCode != 200 || !strings.Contains(got, "count_uniq") {
			t.Errorf("%s: %d %s, %s %q", path, resp.StatusCode, body, approxHeader, got)
		}
	}
	resp, err := http.PostForm(ts.URL+"/select/logsql/query", q("query", "* | stats count() n"))
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := resp.Header.Get(approxHeader) + resp.Trailer.Get(approxHeader); got != "" {
		t.Errorf("an exact count says %s %q", approxHeader, got)
	}
}

// TestStreamContextAcrossSegments: the logs around a match come from
// segments that the request's time range leaves out (the day before),
// as VictoriaLogs reads them whatever that range; over --select-peers
// too.
func TestStreamContextAcrossSegments(t *testing.T) {
	body := `{"_time":"2024-01-01T23:59:50Z","app":"a","_msg":"one"}
{"_time":"2024-01-01T23:59:55Z","app":"a","_msg":"two"}
{"_time":"2024-01-02T00:00:05Z","app":"a","_msg":"three error"}
{"_time":"2024-01-02T00:00:08Z","app":"a","_msg":"four"}
`
	_, node := newTestServer(t, Config{})
	if r := post(t, node.URL+"/insert/jsonline?_stream_fields=app", []byte(body)); r.code != 200 {
		t.Fatalf("ingest: %d", r.code)
	}
	_, front := newTestServer(t, Config{SelectPeers: []string{node.URL}})
	for _, base := range []string{node.URL, front.URL} {
		code, got := get(t, base, "/select/logsql/query", q("query", `error | stream_context before 5 after 5 | fields _msg`,
			"start", "2024-01-02T00:00:00Z", "end", "2024-01-02T01:00:00Z"), true)
		if code != 200 || strings.Count(got, "\n") != 4 || !strings.Contains(got, `"one"`) {
			t.Errorf("%s: %d %q", base, code, got)
		}
	}
}
