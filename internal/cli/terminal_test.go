//go:build linux

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/spate-io/spate/internal/gen"
)

// onTerminal runs spate (this test binary as main) with stdin, stdout and
// stderr on a new pseudo-terminal, as in an interactive shell; signal, if
// set, is called once the process has started. It returns the exit code
// and everything the terminal showed.
func onTerminal(t *testing.T, signal func(*os.Process), args ...string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	var screen bytes.Buffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&screen, ptmx) // ends with EIO once the process is gone
		close(copied)
	}()
	if signal != nil {
		signal(cmd.Process)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-waited:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("spate %v still running after 60s; the terminal shows:\n%s", args, screen.String())
	}
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		code = ee.ExitCode()
	} else if werr != nil {
		t.Fatal(werr)
	}
	return code, screen.String()
}

// TestQueryStdinTerminal: with no input and a terminal on stdin, spate
// query says what it wants at once instead of waiting for typing.
func TestQueryStdinTerminal(t *testing.T) {
	start := time.Now()
	code, screen := onTerminal(t, nil, "query", "error")
	if code != ExitUsage || !strings.Contains(screen, "no input: give files") || time.Since(start) > 20*time.Second {
		t.Fatalf("exit %d after %v:\n%s", code, time.Since(start), screen)
	}
}

// TestQueryInterrupt: Ctrl-C while spate query reads a terminal (where it
// cannot see the signal) ends it within about a second with exit 130 and
// no "context canceled".
func TestQueryInterrupt(t *testing.T) {
	var sent time.Time
	code, screen := onTerminal(t, func(p *os.Process) {
		time.Sleep(500 * time.Millisecond)
		sent = time.Now()
		p.Signal(syscall.SIGINT)
	}, "query", "error", "-")
	if took := time.Since(sent); code != ExitInterrupted || took > 10*time.Second ||
		!strings.Contains(screen, "spate: interrupted") || strings.Contains(screen, "context canceled") {
		t.Fatalf("exit %d, %v after SIGINT:\n%s", code, took, screen)
	}
	if !strings.Contains(screen, "reading logs from the terminal") {
		t.Errorf("no hint that stdin is read:\n%s", screen)
	}
}

// TestProgressClearedBeforeRows: with stdout and stderr on one terminal,
// the progress bar draws while the query runs and never again once the
// first result row is written, so it cannot overwrite rows.
func TestProgressClearedBeforeRows(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.ndjson")
	if _, err := gen.WriteFile(context.Background(), path, gen.Config{Size: 256 << 20, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	// A sort keeps every row until the end: the bar has time to draw.
	code, screen := onTerminal(t, nil, "query", "--workers", "1", "--format", "ndjson",
		"* | sort by (latency_ms desc, _time) | limit 3", path)
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, screen)
	}
	first := strings.Index(screen, `{"`)
	if first < 0 || strings.Count(screen, `{"_time"`) != 3 {
		t.Fatalf("fewer than 3 rows:\n%q", screen)
	}
	before, after := screen[:first], screen[first:]
	if !strings.Contains(before, "MiB") {
		t.Skipf("the query ended before the bar first drew (a fast machine); the terminal showed %q", before)
	}
	if strings.Contains(after, "MiB") || strings.Contains(after, "MB/s") {
		t.Fatalf("the bar drew after the first row:\n%q", after)
	}
}

// TestVersion: --version names the build.
func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "--version")
	if code != ExitOK || !strings.HasPrefix(string(out), "spate ") || !strings.Contains(string(out), "go1.") {
		t.Fatalf("exit %d: %q", code, out)
	}
}

// TestQueryFIFO: a FIFO is read as a stream, none of its lines lost to
// the format guess (which must not open it).
func TestQueryFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "logs.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		for i := range 1000 {
			fmt.Fprintf(f, "{\"n\":%d}\n", i)
		}
		f.Close()
	}()
	code, out, stderr := runCLI(t, "query", "* | stats count() n", fifo)
	if code != ExitOK || string(out) != "{\"n\":\"1000\"}\n" {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
}

// TestFollowEveryRedraws: spate query -f --every on a terminal redraws the
// stats table as lines are appended (clear screen, title, table), and
// Ctrl-C ends it with 130.
func TestFollowEveryRedraws(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "app.log")
	if err := os.WriteFile(p, []byte(`{"service":"api"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, screen := onTerminal(t, func(proc *os.Process) {
		time.Sleep(700 * time.Millisecond)
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		f.WriteString(`{"service":"web"}` + "\n" + `{"service":"web"}` + "\n")
		f.Close()
		time.Sleep(900 * time.Millisecond)
		proc.Signal(os.Interrupt)
	}, "query", "-f", "--every", "200ms", "* | stats by (service) count() n", p)
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d:\n%q", code, ExitInterrupted, screen)
	}
	frames := strings.Split(screen, "\x1b[H\x1b[2J")
	if len(frames) < 4 {
		t.Fatalf("%d redraws, want several:\n%q", len(frames)-1, screen)
	}
	first, last := frames[1], frames[len(frames)-1]
	if !strings.Contains(first, "every 200ms: * | stats by (service) count(*) as n") ||
		!strings.Contains(first, "service  n\r\n-------  -\r\napi      1\r\n") || strings.Contains(first, "web") {
		t.Fatalf("first frame:\n%q", first)
	}
	if !strings.Contains(last, "api      1\r\nweb      2\r\n") {
		t.Fatalf("last frame:\n%q", last)
	}
}
