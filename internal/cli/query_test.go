package cli

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

func writeLogs(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const sampleLogs = `{"ts":"2026-01-01T00:00:00Z","level":"error","service":"api","msg":"db timeout"}
{"ts":"2026-01-01T00:00:01Z","level":"info","service":"api","msg":"ok"}
{"ts":"2026-01-01T00:00:02Z","level":"error","service":"web","msg":"upstream timeout"}
not json: a plain error line
{"ts":"2026-01-01T00:00:03Z","level":"warn","service":"web","msg":"truncated
`

func TestQueryFormats(t *testing.T) {
	dir := t.TempDir()
	p := writeLogs(t, dir, "a.log", sampleLogs)
	q := `level:error | stats by (service) count() n`
	f := func(format, want string) {
		t.Helper()
		code, out, stderr := runCLI(t, "query", "--format", format, q, p)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		if string(out) != want {
			t.Fatalf("%s: got\n%s\nwant\n%s", format, out, want)
		}
	}
	f("ndjson", "{\"service\":\"api\",\"n\":\"1\"}\n{\"service\":\"web\",\"n\":\"1\"}\n")
	f("json", "[\n{\"service\":\"api\",\"n\":\"1\"},\n{\"service\":\"web\",\"n\":\"1\"}\n]\n")
	f("csv", "service,n\napi,1\nweb,1\n")
	f("table", "service  n\n-------  -\napi      1\nweb      1\n")
}

func TestQueryInputsAndStats(t *testing.T) {
	dir := t.TempDir()
	writeLogs(t, dir, "logs/b/2.log", sampleLogs)
	writeLogs(t, dir, "logs/a/1.log", sampleLogs)
	code, out, stderr := runCLI(t, "query", "--stats", "--format", "csv", `error | stats count() n`, filepath.Join(dir, "logs"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Per file: "db timeout" has no "error" word in _msg; the plain line does.
	if got := string(out); got != "n\n2\n" {
		t.Fatalf("got %q", got)
	}
	for _, want := range []string{"10 lines", "6 parsed", "not checked"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("--stats output %q lacks %q", stderr, want)
		}
	}
	// Every line parsed: bad and plain-text lines are counted.
	code, _, stderr = runCLI(t, "query", "--stats", `* | stats by (level) count() n`, filepath.Join(dir, "logs"))
	for _, want := range []string{"10 lines", "10 parsed", "2 bad lines", "2 plain-text lines"} {
		if code != ExitOK || !strings.Contains(stderr, want) {
			t.Errorf("--stats output %q lacks %q", stderr, want)
		}
	}
	// A glob, and file order kept for rows.
	code, out, _ = runCLI(t, "query", `level:error | fields service`, filepath.Join(dir, "logs", "*", "*.log"))
	if code != ExitOK || string(out) != "{\"service\":\"api\"}\n{\"service\":\"web\"}\n{\"service\":\"api\"}\n{\"service\":\"web\"}\n" {
		t.Fatalf("glob: exit %d, out %q", code, out)
	}
}

func TestQueryErrors(t *testing.T) {
	dir := t.TempDir()
	p := writeLogs(t, dir, "a.log", sampleLogs)
	code, _, stderr := runCLI(t, "query", `* | stats foo()`, p)
	if code != ExitFailure {
		t.Fatalf("bad query: exit %d, want %d", code, ExitFailure)
	}
	if !strings.Contains(stderr, "^") || !strings.Contains(stderr, "foo") {
		t.Fatalf("bad query: stderr %q lacks a caret and the name", stderr)
	}
	for _, flags := range [][]string{{"-f"}, {"--merge"}, {"--every", "5s"}} {
		code, _, stderr = runCLI(t, append(append([]string{"query"}, flags...), `error | stream_context after 1`, p)...)
		if code != ExitUsage || !strings.Contains(stderr, "stream_context") || !strings.Contains(stderr, "without "+flags[0]) {
			t.Fatalf("stream_context with %s: exit %d, stderr %q", flags[0], code, stderr)
		}
	}
	code, _, stderr = runCLI(t, "query", `* | block_stats`, p)
	if code != ExitFailure || !strings.Contains(stderr, "not supported") {
		t.Fatalf("unsupported pipe: exit %d, stderr %q", code, stderr)
	}
	if code, _, _ = runCLI(t, "query", "--format", "yaml", `*`, p); code != ExitUsage {
		t.Fatalf("bad format: exit %d, want %d", code, ExitUsage)
	}
	if code, _, _ = runCLI(t, "query"); code != ExitUsage {
		t.Fatalf("no query: exit %d, want %d", code, ExitUsage)
	}
	code, _, stderr = runCLI(t, "query", `*`, filepath.Join(dir, "missing.log"))
	if code != ExitFailure || !strings.Contains(stderr, "missing.log") {
		t.Fatalf("missing file: exit %d, stderr %q", code, stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--every", "1s", "error"}, "--every refreshes the result of queries that need all input"},
		{[]string{"--every", "10ms", "* | stats count()"}, "too short"},
		{[]string{"-f", "* | stats count()"}, "add --every 5s"},
		{[]string{"--tail", "2", "*"}, "--tail is for -f"},
	} {
		code, _, stderr := runCLI(t, append(append([]string{"query"}, c.args...), p)...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Fatalf("%q: exit %d, stderr %q", c.args, code, stderr)
		}
	}
	// A query starting with '-' after "--".
	code, out, stderr := runCLI(t, "query", "--format", "csv", "--", `-level:error | stats count() n`, p)
	if code != ExitOK || string(out) != "n\n3\n" {
		t.Fatalf("negated query: exit %d, out %q, stderr %q", code, out, stderr)
	}
}

func TestBenchQuery(t *testing.T) {
	t.Setenv(mainEnv, "1") // the children re-executed from this binary act as spate
	dir := t.TempDir()
	code, out, stderr := runCLI(t, "bench", "query", "--size", "1MiB", "--repeat", "1", "--dir", dir,
		"--query", `* | stats count()`, "--query", `level:error | stats by (service) count()`)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"GB/s", "level:error | stats by (service) count()"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestBenchQueryCompressed checks --compressed: both copies are made and
// timed, each round reads what the plain file holds, and with gzip, zstd
// and rg installed the baselines count what spate counts.
func TestBenchQueryCompressed(t *testing.T) {
	t.Setenv(mainEnv, "1")
	dir := t.TempDir()
	code, out, stderr := runCLI(t, "bench", "query", "--size", "2MiB", "--repeat", "1", "--dir", dir, "--json", "--compressed", "gzip,zstd",
		"--query", `~"timeout" | stats count()`, "--query", `* | stats by (service) count()`)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Compressed []benchCompressed `json:"compressed"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Compressed) != 2 {
		t.Fatalf("%d compressed runs, want 2:\n%s", len(res.Compressed), out)
	}
	for _, bc := range res.Compressed {
		if len(bc.Queries) != 2 || bc.Bytes == 0 || bc.Queries[0].MedianSeconds <= 0 || bc.Queries[1].Rounds[0].Rows == 0 {
			t.Fatalf("%s: %+v", bc.Codec, bc)
		}
		if bc.Baseline == nil {
			t.Logf("%s: no baseline: %s", bc.Codec, bc.NoBaseline)
			continue
		}
		if bc.Baseline.Count == 0 || bc.Baseline.Count != bc.Queries[0].Rounds[0].Matched {
			t.Fatalf("%s: baseline counted %d, spate matched %d", bc.Codec, bc.Baseline.Count, bc.Queries[0].Rounds[0].Matched)
		}
	}
	// An already compressed FILE is refused.
	gz := filepath.Join(dir, filepath.Base(res.Compressed[0].File))
	if code, _, stderr := runCLI(t, "bench", "query", "--compressed", "gzip", gz); code != ExitUsage || !strings.Contains(stderr, "needs an uncompressed FILE") {
		t.Fatalf("compressed FILE: exit %d, %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "bench", "query", "--compressed", "lz4"); code != ExitUsage {
		t.Fatalf("--compressed lz4: exit %d", code)
	}
}

func TestQueryLongLines(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 5000)
	p := writeLogs(t, dir, "a.log", "short one\n"+long+"\nshort two\n")
	code, out, stderr := runCLI(t, "query", "--max-line-size", "1KiB", "--format", "csv", `* | stats count() n`, p)
	if code != ExitOK || string(out) != "n\n2\n" {
		t.Fatalf("exit %d, out %q, stderr %q", code, out, stderr)
	}
	if !strings.Contains(stderr, "skipped 1 lines longer than") || !strings.Contains(stderr, "a.log at byte 10") {
		t.Fatalf("stderr %q does not name the skipped line", stderr)
	}
}

func TestQuerySketchesAndReadFlags(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 3000 {
		b.WriteString(`{"u":"user-` + strings.Repeat("x", i%7) + itoa(i) + `","v":` + itoa(i%100) + "}\n")
	}
	p := writeLogs(t, dir, "u.log", b.String())
	q := `* | stats count_uniq(u) n, quantile(0.5, v) p50`
	code, exact, stderr := runCLI(t, "query", "--format", "csv", q, p)
	if code != ExitOK || string(exact) != "n,p50\n3000,50\n" || strings.Contains(stderr, "approximate") {
		t.Fatalf("exact: exit %d, out %q, stderr %q", code, exact, stderr)
	}
	for _, flags := range [][]string{{"--approx"}, {"--max-memory", "1KiB"}} {
		args := append(append([]string{"query", "--format", "csv"}, flags...), q, p)
		code, out, stderr := runCLI(t, args...)
		if code != ExitOK || !strings.Contains(stderr, "approximate result: count_uniq") || !strings.Contains(stderr, "approximate result: quantile") {
			t.Fatalf("%v: exit %d, out %q, stderr %q", flags, code, out, stderr)
		}
		if string(out) == string(exact) {
			t.Logf("%v: sketches gave the exact answer %q", flags, out)
		}
	}
	// Read flags change how, not what.
	for _, flags := range [][]string{{"--strategy", "stream", "--workers", "3", "--chunk-size", "4KiB"}, {"--strategy", "pread", "--workers", "1"}, {"--strategy", "bufio"}} {
		args := append(append([]string{"query", "--format", "csv"}, flags...), q, p)
		if code, out, stderr := runCLI(t, args...); code != ExitOK || string(out) != string(exact) {
			t.Fatalf("%v: exit %d, out %q, stderr %q", flags, code, out, stderr)
		}
	}
	if code, _, _ := runCLI(t, "query", "--strategy", "tape", q, p); code != ExitUsage {
		t.Fatalf("bad --strategy: exit %d", code)
	}
	// --progress draws on stderr even when it is not a terminal.
	if code, _, stderr := runCLI(t, "query", "--progress", q, p); code != ExitOK || stderr == "" {
		t.Fatalf("--progress: exit %d, stderr %q", code, stderr)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestQueryGroupMemory checks --group-memory and --temp-dir: past the
// budget, groups spill to --temp-dir (said by --stats, nothing left
// there) with the same answer; 0 never spills; a missing directory is an
// error naming it.
func TestQueryGroupMemory(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 20000 {
		b.WriteString(`{"u":"user-` + itoa(i%7919) + `","v":` + itoa(i%100) + "}\n")
	}
	p := writeLogs(t, dir, "u.log", b.String())
	q := `* | stats by (u) count() n, sum(v) s | sort by (n desc, s desc, u) | limit 5`
	code, inMem, stderr := runCLI(t, "query", "--stats", "--format", "csv", "--group-memory", "0", q, p)
	if code != ExitOK || strings.Contains(stderr, "spilled") {
		t.Fatalf("--group-memory 0: exit %d, stderr %q", code, stderr)
	}
	tmp := filepath.Join(dir, "spill")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "query", "--stats", "--format", "csv", "--group-memory", "32KiB", "--temp-dir", tmp, q, p)
	if code != ExitOK || string(out) != string(inMem) || !strings.Contains(stderr, "of stats groups spilled to temp files") {
		t.Fatalf("--group-memory 32KiB: exit %d, out %q (want %q), stderr %q", code, out, inMem, stderr)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("%d files left in --temp-dir", len(ents))
	}
	missing := filepath.Join(dir, "missing")
	code, _, stderr = runCLI(t, "query", "--group-memory", "32KiB", "--temp-dir", missing, q, p)
	if code != ExitFailure || !strings.Contains(stderr, missing) {
		t.Fatalf("missing --temp-dir: exit %d, stderr %q", code, stderr)
	}
}

// TestQueryTimeFlags: --tz and --time-format reach the engine, a value no
// format reads is named once with file:line, and bad flags are usage
// errors.
func TestQueryTimeFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.ndjson")
	if err := os.WriteFile(path, []byte(`{"ts":"2026-11-24 20:00:00","msg":"a"}
{"ts":"yesterday","msg":"b"}
{"ts":"yesterday too","msg":"c"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "query", "--tz", "+05:30", "*", path)
	if code != ExitOK || !strings.Contains(string(out), `"_time":"2026-11-24T14:30:00Z"`) || !strings.Contains(string(out), `"ts":"yesterday"`) {
		t.Fatalf("exit %d: %s\n%s", code, out, stderr)
	}
	if strings.Count(stderr, "could not be read") != 1 || !strings.Contains(stderr, "2 time values") || !strings.Contains(stderr, path+`:2: ts="yesterday"`) {
		t.Fatalf("stderr: %s", stderr)
	}
	code, out, _ = runCLI(t, "query", "--time-format", "2006-01-02 15:04:05", "--tz", "UTC", "_time:>=2026-11-24T20:00:00Z", path)
	if code != ExitOK || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("--time-format: exit %d: %s", code, out)
	}
	// --since and --until narrow by _time, relative to --now.
	code, out, _ = runCLI(t, "query", "--tz", "UTC", "--now", "2026-11-24T21:00:00Z", "--since", "2h", "--until", "2026-11-24T20:30:00", "*", path)
	if code != ExitOK || strings.Count(string(out), "\n") != 1 || !strings.Contains(string(out), `"_msg":"a"`) {
		t.Fatalf("--since/--until: exit %d: %s", code, out)
	}
	for _, bad := range [][]string{{"--tz", "Mars/Base"}, {"--tz", "+25:00"}, {"--time-format", "%Y-%m-%d"}, {"--since", "soon"}, {"--since", "1h", "--until", "2h"}} {
		if code, _, stderr := runCLI(t, append(append([]string{"query"}, bad...), "*", path)...); code != ExitUsage {
			t.Errorf("%v: exit %d: %s", bad, code, stderr)
		}
	}
}

// TestQueryRenamedField: naming a field that became _msg says so.
func TestQueryRenamedField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.ndjson")
	if err := os.WriteFile(path, []byte(`{"log":"error: disk full"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "query", "log:error", path)
	if code != ExitOK || len(out) != 0 || !strings.Contains(stderr, `names "log", which is the message field (_msg) of 1 line`) {
		t.Fatalf("exit %d: %q\n%s", code, out, stderr)
	}
	if code, out, stderr := runCLI(t, "query", "_msg:error", path); code != ExitOK || len(out) == 0 || strings.Contains(stderr, "names") {
		t.Fatalf("_msg: exit %d: %q\n%s", code, out, stderr)
	}
}

// TestQueryInputFormats: csv, tsv and logfmt files are recognised per
// file, binary files are skipped with a warning (read with --binary), an
// unreadable file is named and skipped while the rest is read, and the
// exit status says so.
func TestQueryInputFormats(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	csv := write("a.csv", "ts,level,msg\n2026-01-01T00:00:00Z,error,\"disk full, again\"\n2026-01-01T00:00:01Z,info,ok\n")
	tsv := write("b.tsv", "ts\tlevel\tmsg\n2026-01-01T00:00:02Z\terror\tno route\n")
	lf := write("c.log", "ts=2026-01-01T00:00:03Z level=error msg=\"timeout\"\nts=2026-01-01T00:00:04Z level=info msg=fine\n")
	bin := write("d.bin", "level=error \x00\x01\x02\n")
	sys := write("e.syslog", "<11>1 2026-01-01T00:00:05Z web01 nginx 12 - - upstream gone\n<14>1 2026-01-01T00:00:06Z web01 nginx 12 - - fine\n")
	code, out, stderr := runCLI(t, "query", "level:error | fields _time, _msg", csv, tsv, lf, bin, sys)
	want := `{"_time":"2026-01-01T00:00:00Z","_msg":"disk full, again"}
{"_time":"2026-01-01T00:00:02Z","_msg":"no route"}
{"_time":"2026-01-01T00:00:03Z","_msg":"timeout"}
{"_time":"2026-01-01T00:00:05Z","_msg":"upstream gone"}
`
	if code != ExitOK || string(out) != want || !strings.Contains(stderr, bin+": binary file") {
		t.Fatalf("exit %d:\n%s\nwant:\n%s\nstderr: %s", code, out, want, stderr)
	}
	if code, out, _ := runCLI(t, "query", "--binary", "error", bin); code != ExitOK || !strings.Contains(string(out), `level=error`) {
		t.Fatalf("--binary: exit %d: %s", code, out)
	}
	// The header is no log, also for the count-only path.
	if code, out, _ := runCLI(t, "query", "* | stats count() n", csv); code != ExitOK || string(out) != "{\"n\":\"2\"}\n" {
		t.Fatalf("csv count: exit %d: %s", code, out)
	}
	// Forced: the csv file read as plain text has its header as a row.
	if code, out, _ := runCLI(t, "query", "--input-format", "plain", "* | stats count() n", csv); code != ExitOK || string(out) != "{\"n\":\"3\"}\n" {
		t.Fatalf("plain: exit %d: %s", code, out)
	}
	// /proc/self/mem is a regular file that cannot be read at offset 0.
	if _, err := os.Stat("/proc/self/mem"); err == nil {
		code, out, stderr := runCLI(t, "query", "* | stats count() n", "/proc/self/mem", lf)
		if code != ExitFailure || string(out) != "{\"n\":\"2\"}\n" || !strings.Contains(stderr, "/proc/self/mem: ") || !strings.Contains(stderr, "1 of the inputs could not be read") {
			t.Fatalf("unreadable: exit %d: %s\n%s", code, out, stderr)
		}
	}
	if code, _, _ := runCLI(t, "query", "--input-format", "xml", "*", csv); code != ExitUsage {
		t.Fatalf("--input-format xml: exit %d", code)
	}
}

// TestQueryFollow: spate query -f prints the last --tail lines, then lines
// appended to the file and to a file that appears later, through a rename
// rotation; Ctrl-C ends it with 130. Queries that need all input are
// refused.
func TestQueryFollow(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app.log")
	os.WriteFile(app, []byte(`{"level":"error","msg":"old 1"}`+"\n"+`{"level":"error","msg":"old 2"}`+"\n"), 0o644)
	lines, stop := followLines(t, "--tail", "1", "level:error | fields _msg", filepath.Join(dir, "*.log"))
	next := func(want string) time.Duration {
		t.Helper()
		start := time.Now()
		if got := lines(); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
		return time.Since(start)
	}
	next(`{"_msg":"old 2"}`)
	appendLine := func(path, msg string) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, `{"level":"error","msg":%q}`+"\n", msg)
		f.Close()
	}
	appendLine(app, "new 1")
	d := next(`{"_msg":"new 1"}`)
	t.Logf("an appended line was printed after %v", d)
	os.Rename(app, app+".1")
	appendLine(app, "after rotation")
	next(`{"_msg":"after rotation"}`)
	appendLine(filepath.Join(dir, "b.log"), "new file")
	next(`{"_msg":"new file"}`)
	if code := stop(); code != ExitInterrupted {
		t.Fatalf("after Ctrl-C: exit %d, want %d", code, ExitInterrupted)
	}
	// A limit ends a follow by itself.
	done := make(chan int, 1)
	go func() {
		code, _, _ := runCLI(t, "query", "-f", "--tail", "1", "* | limit 1", app)
		done <- code
	}()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("-f with limit: exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("-f with a reached limit did not end")
	}
	if code, _, stderr := runCLI(t, "query", "-f", "* | stats count()", app); code != ExitUsage || !strings.Contains(stderr, "stats pipe needs all of its input") {
		t.Fatalf("-f with stats: exit %d: %s", code, stderr)
	}
}

// TestQueryOutputFile: -o FILE appears under its name only when the query
// has finished; a query that fails leaves an existing FILE as it was and no
// temporary file behind.
func TestQueryOutputFile(t *testing.T) {
	dir := t.TempDir()
	p := writeLogs(t, dir, "a.log", sampleLogs)
	out := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(out, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The sort keeps more rows than --max-memory allows: a runtime error
	// after rows may have been written.
	code, stdout, stderr := runCLI(t, "query", "-o", out, "--max-memory", "64", "--format", "csv", `* | sort by (ts)`, p)
	if code != ExitFailure || len(stdout) != 0 {
		t.Fatalf("exit %d (want %d), stdout %q, stderr %s", code, ExitFailure, stdout, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "old\n" {
		t.Fatalf("failed query changed -o file: %q", b)
	}
	code, _, stderr = runCLI(t, "query", "-o", out, "--format", "csv", `level:error | stats by (service) count() n`, p)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "service,n\napi,1\nweb,1\n" {
		t.Fatalf("-o file: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("temporary files left: %v", names)
	}
}

// TestQueryTableManyRows prints more rows than a table holds in memory:
// the rest go through a temporary file and every row is printed.
func TestQueryTableManyRows(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	const n = 60_000
	for i := range n {
		fmt.Fprintf(&b, "{\"i\":\"%d\",\"pad\":\"%s\"}\n", i, strings.Repeat("x", 600))
	}
	p := writeLogs(t, dir, "big.log", b.String())
	for _, format := range []string{"csv", "table"} {
		code, out, stderr := runCLI(t, "query", "--temp-dir", dir, "--format", format, `* | delete _msg`, p)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		head := 1
		if format == "table" {
			head = 2
		}
		if len(lines) != n+head {
			t.Fatalf("%s: %d lines, want %d", format, len(lines), n+head)
		}
		if !strings.HasPrefix(lines[head+n-1], "59999") {
			t.Fatalf("%s: last row %.20q", format, lines[head+n-1])
		}
	}
}

// followLines starts spate query -f with args (this test binary as main)
// and returns a function that waits for its next stdout line, and one that
// sends Ctrl-C and returns the exit code.
func followLines(t *testing.T, args ...string) (next func() string, stop func() int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"query", "-f"}, args...)...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next = func() string {
		t.Helper()
		select {
		case l := <-lines:
			return l
		case <-time.After(10 * time.Second):
			t.Fatalf("no line after 10 s; stderr: %s", stderr.String())
		}
		return ""
	}
	stop = func() int {
		cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 0
	}
	return next, stop
}

// TestQueryFollowFormats follows a CSV file, a logfmt file and a JSON file
// at once: each file's lines are read in its own format (the CSV header
// from its first line, also when --tail starts past it, and again after
// copytruncate), and --every prints stats snapshots over them.
func TestQueryFollowFormats(t *testing.T) {
	dir := t.TempDir()
	csvPath := writeLogs(t, dir, "a.csv", "ts,level,msg\n2026-01-01T00:00:00Z,info,\"hello, csv\"\n")
	lfPath := writeLogs(t, dir, "b.log", "ts=2026-01-01T00:00:01Z level=error msg=\"hello logfmt\"\n")
	appendTo := func(path, text string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(text)
		f.Close()
	}
	next, stop := followLines(t, "--tail", "1", "* | fields _time, level, _msg", dir)
	got := map[string]bool{next(): true, next(): true}
	for _, want := range []string{
		`{"_time":"2026-01-01T00:00:00Z","level":"info","_msg":"hello, csv"}`,
		`{"_time":"2026-01-01T00:00:01Z","level":"error","_msg":"hello logfmt"}`,
	} {
		if !got[want] {
			t.Fatalf("tail lines %v lack %s", got, want)
		}
	}
	appendTo(csvPath, "2026-01-01T00:00:02Z,warn,second\n")
	if l, want := next(), `{"_time":"2026-01-01T00:00:02Z","level":"warn","_msg":"second"}`; l != want {
		t.Fatalf("got %s, want %s", l, want)
	}
	// copytruncate, then a new header with other columns.
	if err := os.WriteFile(csvPath, []byte("level,msg\ndebug,after truncate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if l, want := next(), `{"level":"debug","_msg":"after truncate"}`; l != want {
		t.Fatalf("got %s, want %s", l, want)
	}
	appendTo(filepath.Join(dir, "c.log"), `{"level":"info","msg":"json too"}`+"\n")
	if l, want := next(), `{"level":"info","_msg":"json too"}`; l != want {
		t.Fatalf("got %s, want %s", l, want)
	}
	if code := stop(); code != ExitInterrupted {
		t.Fatalf("exit %d", code)
	}

	// --every: a snapshot of the counts per level after each change.
	next, stop = followLines(t, "--every", "150ms", "--format", "csv", "* | stats by (level) count() n", lfPath, csvPath)
	waitFor := func(want string) {
		t.Helper()
		var snap []string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			l := next()
			if l == "" {
				if strings.Join(snap, "|") == want {
					return
				}
				snap = snap[:0]
				continue
			}
			snap = append(snap, l)
		}
		t.Fatalf("no snapshot %s", want)
	}
	waitFor("level,n|debug,1|error,1")
	appendTo(lfPath, "level=debug msg=x\nlevel=info msg=y\n")
	waitFor("level,n|debug,2|error,1|info,1")
	if code := stop(); code != ExitInterrupted {
		t.Fatalf("exit %d", code)
	}
}

// TestQueryCompressedInputs queries the same logs as plain text, gzip,
// zstd, bzip2 and xz (known by their first bytes: one file has no
// extension, and holds CSV, which the sniffer must see through xz).
func TestQueryCompressedInputs(t *testing.T) {
	dir := t.TempDir()
	bz, err := os.ReadFile("../fileread/testdata/lines.ndjson.bz2")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(bz)))
	if err != nil {
		t.Fatal(err)
	}
	compress := func(c string, b []byte) []byte {
		var buf bytes.Buffer
		var w io.WriteCloser
		switch c {
		case "gz":
			w = gzip.NewWriter(&buf)
		case "zst":
			w, _ = zstd.NewWriter(&buf)
		case "xz":
			w, _ = xz.NewWriter(&buf)
		}
		w.Write(b)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	files := map[string][]byte{
		"plain.log":    plain,
		"logs.log.gz":  compress("gz", plain),
		"logs.log.zst": compress("zst", plain),
		"logs.log.bz2": bz,
		"logs.log.xz":  compress("xz", plain),
	}
	q := `* | stats by (level) count() n, sum(i) s | sort by (level)`
	var want string
	for _, name := range []string{"plain.log", "logs.log.gz", "logs.log.zst", "logs.log.bz2", "logs.log.xz"} {
		p := writeLogs(t, dir, name, string(files[name]))
		code, out, stderr := runCLI(t, "query", "--format", "csv", q, p)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		if want == "" {
			want = string(out)
			if !strings.HasPrefix(want, "level,n,s\nerror,10000,") {
				t.Fatalf("plain: %q", want)
			}
		} else if string(out) != want {
			t.Fatalf("%s: %q, want %q", name, out, want)
		}
	}
	csv := "level,msg\ninfo,started\nerror,failed\ninfo,done\n"
	p := writeLogs(t, dir, "csvlog", string(compress("xz", []byte(csv))))
	code, out, stderr := runCLI(t, "query", "--format", "csv", `* | stats by (level) count() n | sort by (level)`, p)
	if code != ExitOK || string(out) != "level,n\nerror,1\ninfo,2\n" {
		t.Fatalf("CSV in xz without an extension: exit %d, %q, %s", code, out, stderr)
	}
}
