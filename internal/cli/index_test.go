package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/segment"
)

// TestIndexCmd: spate index compresses and indexes a data directory,
// --check reports each sidecar, a damaged one is reported and rebuilt, and
// spate query reads columns from the sidecars with the same answer as
// without them.
func TestIndexCmd(t *testing.T) {
	dir := t.TempDir()
	st, err := segment.Open(dir, segment.Options{NoCompress: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	code, logs, stderr := runCLI(t, "gen", "--size", "3MiB", "--seed", "2")
	if code != ExitOK {
		t.Fatalf("gen: %s", stderr)
	}
	if err := st.Append(context.Background(), []segment.Group{{Day: "2026-01-02", Lines: logs}}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, stderr := runCLI(t, "index", "--check", dir)
	if code != ExitOK || !strings.Contains(string(out), "plain (open, or sealed and not compressed yet)") {
		t.Fatalf("index --check on plain segments: exit %d, %s%s", code, out, stderr)
	}
	code, _, stderr = runCLI(t, "index", dir)
	if code != ExitOK || !strings.Contains(stderr, "1 segments compressed or indexed") {
		t.Fatalf("index: exit %d, %s", code, stderr)
	}
	code, out, _ = runCLI(t, "index", "--check", dir)
	if code != ExitOK || !strings.Contains(string(out), ".ndjson.zst: ok: 4 blocks") {
		t.Fatalf("index --check after index: %s", out)
	}
	idx, _ := filepath.Glob(filepath.Join(dir, "0-0", "*", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("sidecars %v, want one", idx)
	}

	q := `status:>=500 | stats by (service) count() n | sort by (service)`
	code, withIdx, stderr := runCLI(t, "query", "--stats", q, dir)
	if code != ExitOK || !strings.Contains(stderr, "answered from columns") || strings.Contains(stderr, "could not be used") {
		t.Fatalf("query over sidecars: exit %d, %s", code, stderr)
	}
	code, noIdx, stderr := runCLI(t, "query", "--stats", "--no-index", q, dir)
	if code != ExitOK || strings.Contains(stderr, "answered from columns") {
		t.Fatalf("query --no-index: exit %d, %s", code, stderr)
	}
	if string(withIdx) != string(noIdx) || len(withIdx) == 0 {
		t.Fatalf("answers differ:\nfrom columns %s\nfrom lines %s", withIdx, noIdx)
	}

	// A truncated sidecar: reported, ignored by queries, rebuilt.
	data, err := os.ReadFile(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(idx[0], data[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ = runCLI(t, "index", "--check", dir)
	if !strings.Contains(string(out), "sidecar cannot be used") || !strings.Contains(string(out), "1 sidecars cannot be used") {
		t.Fatalf("index --check with a truncated sidecar: %s", out)
	}
	code, again, stderr := runCLI(t, "query", "--stats", q, dir)
	if code != ExitOK || strings.Contains(stderr, "answered from columns") || string(again) != string(noIdx) {
		t.Fatalf("query with a truncated sidecar: exit %d, %s\n%s", code, stderr, again)
	}
	if !strings.Contains(stderr, "1 segments have sidecar indexes that could not be used") || !strings.Contains(stderr, "index is corrupt") {
		t.Fatalf("query with a truncated sidecar does not say so: %s", stderr)
	}
	if code, _, stderr = runCLI(t, "index", dir); code != ExitOK {
		t.Fatalf("index: %s", stderr)
	}
	if _, out, _ = runCLI(t, "index", "--check", dir); !strings.Contains(string(out), ": ok: 4 blocks") {
		t.Fatalf("index did not rebuild the truncated sidecar: %s", out)
	}
	if code, _, stderr = runCLI(t, "index", "--force", dir); code != ExitOK || !strings.Contains(stderr, "1 segments compressed or indexed") {
		t.Fatalf("index --force: exit %d, %s", code, stderr)
	}
	if code, _, stderr = runCLI(t, "index", "--force", "--check", dir); code != ExitUsage {
		t.Fatalf("index --force --check: exit %d, %s", code, stderr)
	}
}

// TestServeCrashIndex kills `spate serve` with SIGKILL at random moments
// while it compresses and indexes segments, restarts it each time, and
// checks that the store ends with every segment compressed and indexed,
// and that queries through the sidecars answer as queries of the lines.
func TestServeCrashIndex(t *testing.T) {
	dir := t.TempDir()
	code, logs, stderr := runCLI(t, "gen", "--size", "6MiB", "--seed", "5")
	if code != ExitOK {
		t.Fatalf("gen: %s", stderr)
	}
	lines := bytes.Count(logs, []byte("\n"))
	srv := startServe(t, dir, "--segment-size", "512KiB", "--compress-delay", "0s")
	vlPost(t, srv.url, "_time_field=ts&_msg_field=msg", logs)
	srv.stop(t, syscall.SIGKILL)
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 17))
	for range 6 {
		srv = startServe(t, dir, "--compress-delay", "0s")
		time.Sleep(time.Duration(r.IntN(120)) * time.Millisecond)
		srv.stop(t, syscall.SIGKILL)
	}
	srv = startServe(t, dir, "--compress-delay", "0s")
	if err := waitSealed(context.Background(), dir, time.Minute); err != nil {
		t.Fatal(err)
	}
	srv.stop(t, syscall.SIGTERM)
	if _, out, _ := runCLI(t, "index", "--check", dir); bytes.Contains(out, []byte("cannot be used")) || !bytes.Contains(out, []byte(": ok: ")) {
		t.Fatalf("sidecars after the crashes:\n%s", out)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "0-0", "*", "*.tmp"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	var first struct {
		Trace string `json:"trace_id"`
	}
	if err := json.Unmarshal(logs[:bytes.IndexByte(logs, '\n')], &first); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`* | stats count() n`,
		`* | stats by (service) count() n | sort by (service)`,
		`level:=error | stats by (host) count() n, max(latency_ms) a | sort by (host)`,
		`trace_id:=` + first.Trace + ` | fields trace_id, service`,
	} {
		_, got, _ := runCLI(t, "query", q, dir)
		_, want, _ := runCLI(t, "query", "--no-index", q, dir)
		if string(got) != string(want) || len(want) == 0 {
			t.Errorf("%s:\nthrough sidecars %s\nwithout         %s", q, got, want)
		}
	}
	if _, out, _ := runCLI(t, "query", `* | stats count() n`, dir); !strings.Contains(string(out), fmt.Sprintf(`"n":"%d"`, lines)) {
		t.Errorf("count %s, want %d lines", out, lines)
	}
}

// TestServeNoIndex: spate serve --no-index compresses sealed segments but
// writes no sidecar.
func TestServeNoIndex(t *testing.T) {
	dir := t.TempDir()
	code, logs, stderr := runCLI(t, "gen", "--size", "2MiB", "--seed", "8")
	if code != ExitOK {
		t.Fatalf("gen: %s", stderr)
	}
	srv := startServe(t, dir, "--no-index", "--segment-size", "256KiB", "--compress-delay", "0s")
	// One request's lines go to one segment: send several.
	for len(logs) > 0 {
		n := bytes.LastIndexByte(logs[:min(len(logs), 300<<10)], '\n') + 1
		vlPost(t, srv.url, "_time_field=ts&_msg_field=msg", logs[:n])
		logs = logs[n:]
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		zst, _ := filepath.Glob(filepath.Join(dir, "0-0", "*", "*.ndjson.zst"))
		if len(zst) >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv.stop(t, syscall.SIGTERM)
	zst, _ := filepath.Glob(filepath.Join(dir, "0-0", "*", "*.ndjson.zst"))
	idx, _ := filepath.Glob(filepath.Join(dir, "0-0", "*", "*.idx"))
	if len(zst) < 4 || len(idx) != 0 {
		t.Fatalf("--no-index: %d compressed segments, %d sidecars; want several and none", len(zst), len(idx))
	}
}
