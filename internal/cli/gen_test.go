package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the command line and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, []byte, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, &out, &errb)
	return code, out.Bytes(), errb.String()
}

func TestGen(t *testing.T) {
	code, out, stderr := runCLI(t, "gen", "--size", "64KiB", "--seed", "3")
	if code != ExitOK {
		t.Fatalf("gen: exit code %d, stderr %q", code, stderr)
	}
	if len(out) == 0 || len(out) > 64<<10 || out[len(out)-1] != '\n' {
		t.Fatalf("gen --size 64KiB: %d bytes of output", len(out))
	}
	if stderr != "" {
		t.Fatalf("gen to stdout wrote to stderr: %q", stderr)
	}
	_, again, _ := runCLI(t, "gen", "--size", "64KiB", "--seed", "3", "--workers", "3")
	if !bytes.Equal(again, out) {
		t.Fatalf("gen is not deterministic")
	}
	_, other, _ := runCLI(t, "gen", "--size", "64KiB", "--seed", "4")
	if bytes.Equal(other, out) {
		t.Fatalf("gen --seed 4 gave the same output as --seed 3")
	}
	_, dash, _ := runCLI(t, "gen", "--size", "64KiB", "--seed", "3", "-o", "-")
	if !bytes.Equal(dash, out) {
		t.Fatalf("gen -o - differs from the default stdout output")
	}

	path := filepath.Join(t.TempDir(), "out.ndjson")
	code, fileOut, stderr := runCLI(t, "gen", "--size", "64KiB", "--seed", "3", "-o", path)
	if code != ExitOK || len(fileOut) != 0 {
		t.Fatalf("gen -o: exit code %d, %d bytes on stdout, stderr %q", code, len(fileOut), stderr)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	if !bytes.Equal(got, out) {
		t.Fatalf("gen -o wrote %d bytes, stdout got %d; equal: false", len(got), len(out))
	}
	lines := bytes.Count(out, []byte{'\n'})
	if want := "spate gen: wrote " + formatSize(int64(len(out))) + " (" + formatThousands(int64(lines)) + " lines) to " + path + " in "; !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, " MB/s)\n") {
		t.Fatalf("gen -o summary = %q, want prefix %q", stderr, want)
	}

	for _, format := range []string{"csv", "logfmt"} {
		code, out, stderr := runCLI(t, "gen", "--size", "10KiB", "--format", format)
		if code != ExitOK || len(out) == 0 || len(out) > 10<<10 {
			t.Fatalf("gen --format %s: exit code %d, %d bytes, stderr %q", format, code, len(out), stderr)
		}
	}
}

func TestGenFailure(t *testing.T) {
	f := func(wantCode int, wantErr string, args ...string) {
		t.Helper()
		code, out, stderr := runCLI(t, append([]string{"gen"}, args...)...)
		if code != wantCode || !strings.Contains(stderr, wantErr) || len(out) != 0 {
			t.Fatalf("gen %q: exit code %d, stderr %q, %d bytes of output; want exit code %d and %q", args, code, stderr, len(out), wantCode, wantErr)
		}
	}
	f(ExitUsage, `unknown format "xml": want ndjson, csv or logfmt`, "--format", "xml", "--size", "1KiB")
	f(ExitUsage, "cannot parse size", "--size", "lots")
	f(ExitUsage, "cannot parse size", "--size", "-1")
	f(ExitUsage, "invalid --workers", "--workers", "-1")
	f(ExitUsage, "invalid argument", "--seed", "x")
	f(ExitUsage, "unknown flag", "--bogus")
	f(ExitUsage, "unknown command", "extra-arg")

	bad := filepath.Join(t.TempDir(), "missing", "out.ndjson")
	f(ExitFailure, `cannot create "`+bad+`"`, "--size", "1KiB", "-o", bad)
}

func TestFormatThousands(t *testing.T) {
	f := func(n int64, want string) {
		t.Helper()
		if got := formatThousands(n); got != want {
			t.Fatalf("formatThousands(%d) = %q, want %q", n, got, want)
		}
	}
	f(0, "0")
	f(999, "999")
	f(1000, "1,000")
	f(2860000, "2,860,000")
	f(-1234567, "-1,234,567")
}

// TestGenLayouts: --layouts reaches the generator (odd layouts start with a
// pod field) and is refused for CSV.
func TestGenLayouts(t *testing.T) {
	code, out, stderr := runCLI(t, "gen", "--size", "64KiB", "--layouts", "4")
	if code != ExitOK || !bytes.Contains(out, []byte(`{"pod":`)) {
		t.Fatalf("exit %d, stderr %q, pod lines: %v", code, stderr, bytes.Contains(out, []byte(`{"pod":`)))
	}
	if code, _, _ := runCLI(t, "gen", "--size", "64KiB", "--layouts", "4", "--format", "csv"); code != ExitUsage {
		t.Fatalf("--layouts with csv: exit %d", code)
	}
	if code, _, _ := runCLI(t, "gen", "--size", "64KiB", "--layouts", "17"); code != ExitUsage {
		t.Fatalf("--layouts 17: exit %d", code)
	}
}
