package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/benchio"
	"github.com/spate-io/spate/internal/query"
)

func TestBenchIO(t *testing.T) {
	t.Setenv(mainEnv, "1") // the children re-executed from this binary act as spate
	dir := t.TempDir()
	p := filepath.Join(dir, "in.log")
	if err := os.WriteFile(p, []byte(strings.Repeat("hello world\n", 50000)), 0o644); err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(dir, "io.svg")
	code, out, stderr := runCLI(t, "bench", "io", "--repeat", "1", "--cache", "warm", "--strategies", "pread,mmap", "--workers", "2", "--json", "--chart", chart, p)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep benchio.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if len(rep.Rows) != 8 { // (pread, mmap, ceiling, ceiling-prefaulted) × (1, 2 workers)
		t.Fatalf("%d rows, want 8", len(rep.Rows))
	}
	for _, r := range rep.Rows {
		if r.Lines != 50000 || r.Cache != "warm" {
			t.Fatalf("row %s: %d lines", r.Label(), r.Lines)
		}
	}
	if !strings.Contains(stderr, "[8/8]") {
		t.Fatalf("no progress on stderr: %q", stderr)
	}
	if b, err := os.ReadFile(chart); err != nil || !strings.Contains(string(b), "<svg") {
		t.Fatalf("chart not written: %v", err)
	}

	code, out, _ = runCLI(t, "bench", "io", "--repeat", "1", "--cache", "warm", "--strategies", "bufio", "--workers", "1", "-q", "--markdown", p)
	if code != ExitOK || !strings.Contains(string(out), "| strategy | GB/s | P95 ms | peak RSS MB |") {
		t.Fatalf("--markdown: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "bench", "io", "--repeat", "2", "--cache", "warm", "--strategies", "stream", "--workers", "1", "-q", "--gobench", p)
	if code != ExitOK || strings.Count(string(out), "BenchmarkIO/strategy=stream/workers=1/cache=warm") != 2 {
		t.Fatalf("--gobench: exit %d\n%s", code, out)
	}
}

func TestBenchIOUsageErrors(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		code, _, stderr := runCLI(t, append([]string{"bench", "io"}, args...)...)
		if code == ExitOK || !strings.Contains(stderr, want) {
			t.Fatalf("%v: exit %d, stderr %q, want it to contain %q", args, code, stderr, want)
		}
	}
	f("--repeat must be at least 1", "--repeat", "0")
	f(`unknown read strategy "fast"`, "--strategies", "fast", "--size", "1KiB")
	f("if any flags in the group [json markdown gobench] are set none of the others can be", "--json", "--markdown")
	f(`cannot parse size "big"`, "--size", "big")
	code, _, _ := runCLI(t, "bench", "io", "--repeat", "0")
	if code != ExitUsage {
		t.Fatalf("--repeat 0: exit %d, want %d", code, ExitUsage)
	}
}

func TestDemo(t *testing.T) {
	t.Setenv(mainEnv, "1")
	dir := t.TempDir()
	code, out, stderr := runCLI(t, "demo", "--size", "2MiB", "--dir", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"warm cache", "ceiling", "Try next", "spate bench io"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("demo output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "generating a 2MiB sample") {
		t.Fatalf("first demo did not generate: %q", stderr)
	}
	// The second run reuses the cached sample.
	code, _, stderr = runCLI(t, "demo", "--size", "2MiB", "--dir", dir)
	if code != ExitOK || !strings.Contains(stderr, "using the cached sample") {
		t.Fatalf("second demo: exit %d, stderr %q", code, stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(m) != 0 {
		t.Fatalf("temporary sample left behind: %v", m)
	}
}

// TestAdaptQueries: bench query on a user's file uses its field names and
// leaves out the queries that need a field it lacks.
func TestAdaptQueries(t *testing.T) {
	qs, notes := adaptQueries(map[string]bool{"_msg": true, "severity": true, "service.name": true, "status_code": true, "duration": true, "http.path": true})
	want := []string{
		`* | stats count()`,
		`severity:error | stats count()`,
		`~"timeout" | stats count()`,
		`* | stats by (service.name) count()`,
		`status_code:>=500 | stats by (service.name) count(), avg(duration), quantile(0.95, duration)`,
	}
	if !slices.Equal(qs, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(qs, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(strings.Join(notes, "\n"), "no bytes field") {
		t.Fatalf("notes %q", notes)
	}
	for _, q := range qs {
		if _, err := query.Parse(q, time.Now()); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
