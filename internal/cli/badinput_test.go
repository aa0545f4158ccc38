package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
)

// hugeLineReader yields "before\n", a line of n bytes, then "\nafter\n",
// without holding the line.
type hugeLineReader struct {
	n, pos int64
}

func (r *hugeLineReader) Read(p []byte) (int, error) {
	head, tail := []byte(`{"msg":"before"}`+"\n"), []byte("\n"+`{"msg":"after"}`+"\n")
	total := int64(len(head)) + r.n + int64(len(tail))
	if r.pos >= total {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && r.pos < total {
		switch {
		case r.pos < int64(len(head)):
			p[k] = head[r.pos]
		case r.pos < int64(len(head))+r.n:
			p[k] = 'x'
		default:
			p[k] = tail[r.pos-int64(len(head))-r.n]
		}
		k++
		r.pos++
	}
	return k, nil
}

// TestLineOverOneGiB streams a 1.1 GiB line between two logs through stdin:
// it is skipped, counted and located without being held (what the scan
// allocates does not grow with the line), and the logs on either side are
// read.
func TestLineOverOneGiB(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 1.4 GiB")
	}
	q, err := query.Parse("* | fields _msg", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	run := func(n int64) uint64 {
		var sink msgRows
		cfg := fileread.Config{Stdin: &hugeLineReader{n: n}, MaxLineSize: fileread.DefaultMaxLineSize, SkipLongLines: true}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		st, err := query.Run(t.Context(), q, []string{"-"}, cfg, query.Options{}, &sink)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(sink, ","); got != "before,after" {
			t.Fatalf("rows %q", got)
		}
		if st.LongLines != 1 || len(st.LongLineSamples) != 1 || st.LongLineSamples[0].Offset != 17 || st.LongLineSamples[0].Length != n {
			t.Fatalf("long lines %d %+v", st.LongLines, st.LongLineSamples)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, huge := run(300<<20), run(1100<<20)
	t.Logf("allocated %d MiB for a 300 MiB line, %d MiB for a 1.1 GiB one", small>>20, huge>>20)
	// The read buffers grow up to --max-line-size each, never to the line.
	if huge > 5*fileread.DefaultMaxLineSize || huge > small+32<<20 {
		t.Fatalf("allocated %d MiB skipping a 1.1 GiB line (%d MiB for 300 MiB)", huge>>20, small>>20)
	}
}

type msgRows []string

func (m *msgRows) WriteRow(r *query.Row) error {
	*m = append(*m, r.Get("_msg"))
	return nil
}

// TestDirectoryOf100kFiles reads a directory of 100,000 small files: every
// line of every file is counted once, and files stay within the open-file
// limit.
func TestDirectoryOf100kFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100,000 files")
	}
	dir := t.TempDir()
	const files = 100_000
	for i := range files {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", i%100))
		if i < 100 {
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		line := fmt.Sprintf(`{"level":"%s","i":%d}`+"\n", []string{"info", "error"}[i%2], i)
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("%06d.log", i)), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	code, out, stderr := runCLI(t, "query", "--format", "csv", "* | stats by (level) count() n, sum(i) s", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got, want := string(out), fmt.Sprintf("level,n,s\nerror,50000,%d\ninfo,50000,%d\n", 2500000000, 2499950000); got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	t.Logf("100,000 files read in %v", time.Since(start))
}

// TestSlowDevStdin pipes lines one by one, 150 ms apart, into spate query
// reading /dev/stdin by name: each row is printed before the next line is
// written, and the query ends when the producer does.
func TestSlowDevStdin(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "query", "level:error | fields i", "/dev/stdin")
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	pw, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	for i := range 5 {
		fmt.Fprintf(pw, `{"level":"error","i":%d}`+"\n"+`{"level":"info"}`+"\n", i)
		got := make(chan string, 1)
		go func() {
			if sc.Scan() {
				got <- sc.Text()
			}
			close(got)
		}()
		select {
		case l := <-got:
			if want := fmt.Sprintf(`{"i":"%d"}`, i); l != want {
				t.Fatalf("got %q, want %q; stderr %s", l, want, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("row %d not printed while the producer waits; stderr %s", i, stderr.String())
		}
		time.Sleep(150 * time.Millisecond)
	}
	pw.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v; stderr %s", err, stderr.String())
	}
}
