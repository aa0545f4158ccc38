package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/gen"
)

// peerCluster ingests generated logs into two storage nodes (alternate
// lines) and all of them into a single node, and starts a server over the
// two with SelectPeers.
func peerCluster(t *testing.T) (single, fanout string, nodes []string) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Seed: 9, Size: 1 << 20, Format: "ndjson"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(buf.String(), "\n"), "\n")
	var halves [2]strings.Builder
	for i, l := range lines {
		halves[i%2].WriteString(strings.TrimSuffix(l, "\n") + "\n")
	}
	const args = "/insert/jsonline?_stream_fields=service"
	_, one := newTestServer(t, Config{})
	if r := post(t, one.URL+args, buf.Bytes()); r.code != 200 {
		t.Fatalf("ingest: %d", r.code)
	}
	for _, h := range halves {
		_, n := newTestServer(t, Config{})
		if r := post(t, n.URL+args, []byte(h.String())); r.code != 200 {
			t.Fatalf("ingest: %d", r.code)
		}
		nodes = append(nodes, n.URL)
	}
	// A little of tenant 3:4 on one node only.
	other := `{"_time":"2026-01-02T00:00:00Z","_msg":"other tenant","service":"billing"}` + "\n"
	for _, u := range []string{one.URL, nodes[1]} {
		if r := post(t, u+args, []byte(other), "AccountID", "3", "ProjectID", "4"); r.code != 200 {
			t.Fatalf("ingest 3:4: %d", r.code)
		}
	}
	_, fo := newTestServer(t, Config{SelectPeers: nodes})
	return one.URL, fo.URL, nodes
}

// TestSelectPeers: every /select endpoint answers the same over two
// storage nodes holding half the logs each as one node holding all.
func TestSelectPeers(t *testing.T) {
	single, fanout, _ := peerCluster(t)
	const tr = "2026-01-01T00:00:00Z"
	cases := []struct {
		path   string
		args   []string
		sorted bool // compare the lines as a set
		hdr    []string
	}{
		{path: "/select/logsql/query", args: []string{"query", `* | stats by (service) count() n, sum(bytes) s, avg(bytes) a, quantile(0.9, latency_ms) q, count_uniq(user_id) u, min(status) mi, max(latency_ms) ma, uniq_values(method) m | sort by (service)`}},
		{path: "/select/logsql/query", args: []string{"query", `* | stats count() n`}},
		{path: "/select/logsql/query", args: []string{"query", `status:>=500 | stats by (service, _time:1h) count() n, row_max(latency_ms, trace_id) r | sort by (service, _time)`}},
		{path: "/select/logsql/query", args: []string{"query", `level:error | fields trace_id, status | sort by (trace_id) | limit 7`}},
		{path: "/select/logsql/query", args: []string{"query", `level:warn service:payments | fields trace_id`}, sorted: true},
		{path: "/select/logsql/query", args: []string{"query", `* | uniq by (method) | sort by (method)`}},
		{path: "/select/logsql/query", args: []string{"query", `* | top 3 by (service)`}},
		{path: "/select/logsql/query", args: []string{"query", `* | stats count() n`}, hdr: []string{"AccountID", "3", "ProjectID", "4"}},
		// Subqueries run over every node, and the nodes are sent their
		// results.
		{path: "/select/logsql/query", args: []string{"query", `level:error | join by (service) (status:>=500 | stats by (service) count() e) inner | stats by (service, e) count() n | sort by (service)`}},
		{path: "/select/logsql/query", args: []string{"query", `* | fields nosuch | uniq by (nosuch) with hits`}},
		{path: "/select/logsql/query", args: []string{"query", `error | fields nosuch | stats count() n`}},
		{path: "/select/logsql/query", args: []string{"query", `service:in(status:>=500 level:warn | fields service) | stats by (service) count() n | union (level:error | stats count() errors) | sort by (service)`}},
		// The options' global filter reaches the nodes.
		{path: "/select/logsql/query", args: []string{"query", `options(global_filter=(level:error)) * | stats by (service) count() n | sort by (service)`}},
		{path: "/select/logsql/query", args: []string{"query", `options(time_offset=1h) * | stats by (_time:1h) count() n | sort by (_time)`}},
		// stream_context's lookups go to every node.
		{path: "/select/logsql/query", args: []string{"query", `level:error service:payments | stream_context before 2 after 1 | limit 40`}},
		{path: "/select/logsql/hits", args: []string{"query", "*", "step", "1h", "start", tr, "end", "2026-01-03T00:00:00Z"}},
		{path: "/select/logsql/stats_query", args: []string{"query", "* | stats by (level) count() n", "time", "2026-01-03T00:00:00Z"}},
		{path: "/select/logsql/stats_query_range", args: []string{"query", "* | stats by (level) count() n", "start", tr, "end", "2026-01-03T00:00:00Z", "step", "6h"}},
		{path: "/select/logsql/field_names", args: []string{"query", "*"}},
		{path: "/select/logsql/field_values", args: []string{"query", "*", "field", "service"}},
		{path: "/select/logsql/streams", args: []string{"query", "*"}},
		{path: "/select/logsql/facets", args: []string{"query", "level:error"}},
		{path: "/select/tenant_ids", args: nil},
	}
	for _, c := range cases {
		code1, want := get(t, single, c.path, q(c.args...), true, c.hdr...)
		code2, got := get(t, fanout, c.path, q(c.args...), true, c.hdr...)
		if code1 != 200 || code2 != 200 {
			t.Errorf("%s %v: single %d, fan-out %d: %s", c.path, c.args, code1, code2, got)
			continue
		}
		if c.sorted {
			w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
			slices.Sort(w)
			slices.Sort(g)
			want, got = strings.Join(w, "\n"), strings.Join(g, "\n")
		}
		if got != want || len(want) < 10 {
			t.Errorf("%s %v:\nfan-out %s\nsingle  %s", c.path, c.args, got, want)
		}
	}
	// Live tailing does not cross peers, and says so.
	if code, body := get(t, fanout, "/select/logsql/tail", q("query", "*"), true); code != http.StatusNotImplemented || !strings.Contains(body, "--select-peers") {
		t.Errorf("tail over peers: %d %s", code, body)
	}
}

// TestSelectPeersFailures: a peer that is down fails the query naming
// it, or with AllowPartial is left out and named in a header; a peer that
// hangs fails the query when its time is up, named.
func TestSelectPeersFailures(t *testing.T) {
	_, _, nodes := peerCluster(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	stats := q("query", "* | stats count() n")

	_, strict := newTestServer(t, Config{SelectPeers: []string{nodes[0], deadURL}})
	code, body := get(t, strict.URL, "/select/logsql/query", stats, true)
	if code != http.StatusBadGateway || !strings.Contains(body, deadURL) || !strings.Contains(body, "--allow-partial") {
		t.Errorf("a dead peer: %d %s", code, body)
	}

	_, lenient := newTestServer(t, Config{SelectPeers: []string{nodes[0], deadURL}, AllowPartial: true})
	req, _ := http.NewRequest(http.MethodPost, lenient.URL+"/select/logsql/query", strings.NewReader(stats.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp := do(t, req)
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	resp.Body.Close()
	_, one := get(t, nodes[0], "/select/logsql/query", stats, true)
	if resp.StatusCode != 200 || b.String() != one || !strings.Contains(resp.Trailer.Get(partialHeader)+resp.Header.Get(partialHeader), deadURL) {
		t.Errorf("--allow-partial: %d %q (node a alone: %q), header %q, trailer %q", resp.StatusCode, b.String(), one, resp.Header.Get(partialHeader), resp.Trailer.Get(partialHeader))
	}

	// A query's options(allow_partial_response=...) overrides the flag,
	// either way.
	code, body = get(t, strict.URL, "/select/logsql/query", q("query", "options(allow_partial_response=true) * | stats count() n"), true)
	if code != 200 || body != one {
		t.Errorf("allow_partial_response=true over a strict front: %d %q, want 200 %q", code, body, one)
	}
	code, body = get(t, lenient.URL, "/select/logsql/query", q("query", "options(allow_partial_response=false) * | stats count() n"), true)
	if code != http.StatusBadGateway || !strings.Contains(body, deadURL) {
		t.Errorf("allow_partial_response=false over a lenient front: %d %s", code, body)
	}

	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then net/http notices the client leaving
		<-r.Context().Done()
	}))
	defer hang.Close()
	_, slow := newTestServer(t, Config{SelectPeers: []string{nodes[0], hang.URL}, MaxQueryDuration: 300 * time.Millisecond})
	code, body = get(t, slow.URL, "/select/logsql/query", stats, true)
	if code != http.StatusGatewayTimeout || !strings.Contains(body, hang.URL) {
		t.Errorf("a hanging peer: %d %s", code, body)
	}
	// A wrong query is the query's fault: 400, as from one node.
	if code, body := get(t, strict.URL, "/select/logsql/query", q("query", "* | stats nosuch() x"), true); code != 400 {
		t.Errorf("a bad query: %d %s", code, body)
	}
}

// TestSelectPeersToken: nodes that take tokens answer a front that sends
// PeerToken (a read-only one is enough), and refuse one that does not.
func TestSelectPeersToken(t *testing.T) {
	_, node := newTestServer(t, Config{AuthTokens: []AuthToken{{Token: "w", Perm: PermWrite}, {Token: "r", Perm: PermRead}}})
	if r := post(t, node.URL+"/insert/jsonline", []byte(`{"_msg":"a"}`+"\n"+`{"_msg":"b"}`+"\n"), "Authorization", "Bearer w"); r.code != 200 {
		t.Fatalf("ingest: %d", r.code)
	}
	stats := q("query", "* | stats count() n")
	_, with := newTestServer(t, Config{SelectPeers: []string{node.URL}, PeerToken: "r"})
	if code, body := get(t, with.URL, "/select/logsql/query", stats, true); code != 200 || !strings.Contains(body, `"n":"2"`) {
		t.Errorf("with the token: %d %s", code, body)
	}
	_, without := newTestServer(t, Config{SelectPeers: []string{node.URL}})
	if code, body := get(t, without.URL, "/select/logsql/query", stats, true); code != http.StatusBadGateway || !strings.Contains(body, "401") {
		t.Errorf("without the token: %d %s", code, body)
	}
}
