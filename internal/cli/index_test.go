package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if code != ExitOK || !strings.Contains(stderr, "4 blocks (3.0MiB of lines) answered from columns") {
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
