package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
)

// TestServeQueryFlags: the query flags of spate serve reach the server.
func TestServeQueryFlags(t *testing.T) {
	dir := t.TempDir()
	srv := startServe(t, dir, "--query-memory", "64KiB", "--max-query-duration", "1ns", "--query-share", "0.5", "--max-concurrent-queries", "3")
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, `{"n":%d,"pad":"%s"}`+"\n", i, strings.Repeat("p", 40))
	}
	resp, err := http.Post(srv.url+"/insert/jsonline", "application/stream+json", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ask := func(qs string, extra ...string) (int, string) {
		t.Helper()
		args := url.Values{"query": {qs}}
		for i := 0; i+1 < len(extra); i += 2 {
			args.Set(extra[i], extra[i+1])
		}
		resp, err := http.PostForm(srv.url+"/select/logsql/query", args)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	metrics := func() string {
		t.Helper()
		resp, err := http.Get(srv.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	m := metrics()
	for _, want := range []string{"\nspate_select_limit 3\n", "\nspate_select_share_while_ingesting 0.5\n", "\nspate_select_running 0\n"} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}
	// --max-query-duration 1ns: every query runs out of time (a shorter
	// timeout arg cannot raise it).
	if code, body := ask("* | stats count()", "timeout", "10s"); code != 503 || !strings.Contains(body, "--max-query-duration=1ns") {
		t.Errorf("--max-query-duration: %d %s", code, body)
	}
	srv.stop(t, syscall.SIGTERM)

	srv = startServe(t, dir, "--query-memory", "64KiB")
	if code, body := ask("* | sort by (n)"); code != 422 || !strings.Contains(body, "--query-memory") {
		t.Errorf("--query-memory: %d %.200s", code, body)
	}
	if code, body := ask("* | stats count() n"); code != 200 || body != `{"n":"3000"}`+"\n" {
		t.Errorf("count: %d %s", code, body)
	}
	srv.stop(t, syscall.SIGTERM)

	for _, bad := range [][]string{{"--query-share", "0"}, {"--query-share", "1.5"}, {"--max-concurrent-queries", "-1"}} {
		code, _, stderr := runCLI(t, append([]string{"serve", "--data", dir}, bad...)...)
		if code != ExitUsage || !strings.Contains(string(stderr), bad[0]) {
			t.Errorf("%v: exit %d: %s", bad, code, stderr)
		}
	}
}
