package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/gen"
)

// startVictoriaLogs starts the VictoriaLogs binary at path on a free
// loopback port and returns its URL.
func startVictoriaLogs(t *testing.T, path string) string {
	t.Helper()
	return startVictoriaLogsArgs(t, path)
}

// startVictoriaLogsArgs is startVictoriaLogs with more flags.
func startVictoriaLogsArgs(t *testing.T, path string, args ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var logs bytes.Buffer
	// The logs are dated 2026-01-02: keep them (the default keeps 7 days).
	cmd := exec.Command(path, append([]string{"-storageDataPath=" + t.TempDir(), "-httpListenAddr=" + addr, "-loggerLevel=WARN", "-retentionPeriod=100y"}, args...)...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	u := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; {
		if resp, err := http.Get(u + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return u
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("VictoriaLogs did not start:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// vlPost sends body to an /insert/jsonline endpoint with query args and
// headers (name, value pairs).
func vlPost(t *testing.T, u, args string, body []byte, hdr ...string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u+"/insert/jsonline?"+args, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/stream+json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", u, resp.StatusCode, msg)
	}
}

// vlQuery runs a LogsQL query on VictoriaLogs in a tenant and returns the
// rows.
func vlQuery(t *testing.T, u, q, account, project string) []map[string]string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u+"/select/logsql/query", strings.NewReader(url.Values{"query": {q}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("AccountID", account)
	req.Header.Set("ProjectID", project)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("VictoriaLogs %s: %d %s", q, resp.StatusCode, msg)
	}
	var rows []map[string]string
	dec := json.NewDecoder(resp.Body)
	for dec.More() {
		var r map[string]string
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows
}

// TestVictoriaLogsOracle sends the same lines to VictoriaLogs v1.52.1 and
// to spate serve, in two tenants, with _stream_fields, and checks that
// spate stores the _stream and _stream_id VictoriaLogs gives every line,
// and that stream filters over spate's data directory count what
// VictoriaLogs counts. It runs when SPATE_VICTORIALOGS names the binary
// (.ci/run installs it).
// victoriaLogsBin returns the VictoriaLogs v1.52.1 binary that
// SPATE_VICTORIALOGS names, or skips t when it is unset.
func victoriaLogsBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("SPATE_VICTORIALOGS")
	if bin == "" {
		t.Skip("set SPATE_VICTORIALOGS to a victoria-logs v1.52.1 binary")
	}
	return bin
}

func TestVictoriaLogsOracle(t *testing.T) {
	vlBin := victoriaLogsBin(t)
	vl := startVictoriaLogs(t, vlBin)
	dir := t.TempDir()
	srv := startServe(t, dir)

	// Generated lines, numbered, and lines with odd stream values.
	var sample bytes.Buffer
	if _, err := gen.Write(context.Background(), &sample, gen.Config{Seed: 9, Size: 2 << 20, Format: "ndjson"}); err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	n := 0
	for line := range bytes.Lines(sample.Bytes()) {
		fmt.Fprintf(&body, `{"oid":"%d",%s`, n, line[1:])
		n++
	}
	for _, extra := range []string{
		`"service":"quote \" back \\ tab \t é 用户 \u0001 \u007f","host":""`,
		`"service":123,"host":true`,
		`"service":"","http":{"proto":"HTTP/9"}`,
		`"host":"h-only"`,
		`"_stream":"{x=\"y\"}","service":"with-own-stream"`,
	} {
		fmt.Fprintf(&body, `{"oid":"%d","ts":"2026-01-02T03:04:05Z","msg":"odd",%s}`+"\n", n, extra)
		n++
	}
	args := "_stream_fields=service,host,http.proto&_msg_field=msg&_time_field=ts"
	tenants := [][2]string{{"0", "0"}, {"3", "4"}}
	for _, tn := range tenants {
		vlPost(t, vl, args, body.Bytes(), "AccountID", tn[0], "ProjectID", tn[1])
		vlPost(t, srv.url, args, body.Bytes(), "AccountID", tn[0], "ProjectID", tn[1])
	}
	if resp, err := http.Get(vl + "/internal/force_flush"); err == nil {
		resp.Body.Close()
	}
	srv.stop(t, syscall.SIGTERM)

	spateRows := func(tenant string, q string) []map[string]string {
		t.Helper()
		code, out, stderr := runCLI(t, "query", "--tenant", tenant, q, dir)
		if code != ExitOK {
			t.Fatalf("spate %s: %s", q, stderr)
		}
		var rows []map[string]string
		for line := range bytes.Lines(out) {
			var r map[string]string
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r)
		}
		return rows
	}
	byOID := func(rows []map[string]string) map[string]map[string]string {
		m := map[string]map[string]string{}
		for _, r := range rows {
			m[r["oid"]] = r
		}
		return m
	}
	for _, tn := range tenants {
		tenant := tn[0] + ":" + tn[1]
		want := byOID(vlQuery(t, vl, "* | fields oid, _stream, _stream_id", tn[0], tn[1]))
		got := byOID(spateRows(tenant, "* | fields oid, _stream, _stream_id"))
		if len(want) != n || len(got) != n {
			t.Fatalf("tenant %s: VictoriaLogs has %d lines, spate %d, sent %d", tenant, len(want), len(got), n)
		}
		for oid, w := range want {
			g := got[oid]
			if g["_stream"] != w["_stream"] || g["_stream_id"] != w["_stream_id"] {
				t.Fatalf("tenant %s, line %s: spate _stream %s _stream_id %s; VictoriaLogs %s %s",
					tenant, oid, g["_stream"], g["_stream_id"], w["_stream"], w["_stream_id"])
			}
		}
		// Stream filters count the same lines.
		someID := want["0"]["_stream_id"]
		for _, q := range []string{
			`{service="auth"}`,
			`_stream:{service=~"a.*|b.*", host!~"auth-0[12].*"}`,
			`{service in(auth, cart, "123") or host="h-only"}`,
			`{service not_in(auth)}`,
			`{http.proto="HTTP/9"}`,
			`{service="quote \" back \\ tab \t é 用户 \x01 \x7f"}`,
			`{host=""}`,
			`{service="with-own-stream"}`,
			`_stream_id:` + someID,
			`_stream_id:in(` + someID + `, 0000000000000000e934a84adb05276890d7f7bfcadabe92)`,
			`{service="auth"} level:error`,
		} {
			full := q + " | stats count() n"
			w := vlQuery(t, vl, full, tn[0], tn[1])
			g := spateRows(tenant, full)
			if len(w) != 1 || len(g) != 1 || w[0]["n"] != g[0]["n"] {
				t.Errorf("tenant %s: %s: VictoriaLogs %v, spate %v", tenant, q, w, g)
			} else if w[0]["n"] == "0" && !strings.Contains(q, "e934a84adb05276890d7f7bfcadabe92") {
				t.Errorf("tenant %s: %s matches nothing: the case tests nothing", tenant, q)
			}
		}
	}
	t.Logf("%d lines per tenant compared; data in %s", n, filepath.Base(dir))
}
