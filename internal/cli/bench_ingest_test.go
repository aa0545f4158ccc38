package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/spate-io/spate/internal/benchingest"
)

// fakeIngest is an httptest stand-in for spate serve's ingest endpoint:
// every third request gets 429, the others store their lines and get the
// counts. With token set, requests without it get 401.
type fakeIngest struct {
	token  string
	status int // if set, every ingest request gets it

	mu    sync.Mutex
	n     int
	sent  int64 // 429s sent
	lines int64
	got   bytes.Buffer // the accepted bodies, in order
}

// body returns the bodies the fake accepted, joined.
func (f *fakeIngest) body() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got.String()
}

func (f *fakeIngest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" {
		f.mu.Lock()
		defer f.mu.Unlock()
		fmt.Fprintf(w, "fake_lines_total %d\n", f.lines)
		return
	}
	data, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token:
		http.Error(w, `{"error":"missing or wrong token"}`, http.StatusUnauthorized)
		return
	case f.status != 0:
		http.Error(w, `{"error":"fake failure"}`, f.status)
		return
	}
	f.n++
	if f.n%3 == 0 {
		f.sent++
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	n := bytes.Count(data, []byte{'\n'})
	f.lines += int64(n)
	f.got.Write(data)
	fmt.Fprintf(w, `{"accepted":%d,"rejected":0,"errors":[]}`, n)
}

func newFakeIngest(t *testing.T, f *fakeIngest) string {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestBenchIngestURL(t *testing.T) {
	fake := &fakeIngest{}
	url := newFakeIngest(t, fake)
	code, out, stderr := runCLI(t, "bench", "ingest", "--url", url, "--volume", "2MiB", "--batch-size", "128KiB", "--clients", "3", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Fsync  string                     `json:"fsync"`
		Ingest map[string]json.RawMessage `json:"ingest"`
		Server json.RawMessage            `json:"server"`
		Write  json.RawMessage            `json:"write"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if rep.Fsync != "batch" || rep.Server != nil || rep.Write != nil {
		t.Fatalf("fsync %q, server %s, write %s: want batch and neither section with --url", rep.Fsync, rep.Server, rep.Write)
	}
	for _, key := range []string{"url", "clients", "volume", "pool_lines", "avg_line_bytes", "planned_lines", "requests", "ok", "throttled",
		"throttle_rate", "failed", "status", "accepted_lines", "rejected_lines", "accepted_bytes", "wire_bytes", "wall_sec", "mb_per_sec",
		"lines_per_sec", "latency_ms", "client_cpu_sec", "server_metrics_delta"} {
		if _, ok := rep.Ingest[key]; !ok {
			t.Errorf("ingest lacks %q", key)
		}
	}
	var res struct {
		URL           string           `json:"url"`
		PlannedLines  int64            `json:"planned_lines"`
		AcceptedLines int64            `json:"accepted_lines"`
		Throttled     int64            `json:"throttled"`
		Status        map[string]int64 `json:"status"`
		MBps          float64          `json:"mb_per_sec"`
		Latency       map[string]float64
		Metrics       map[string]float64 `json:"server_metrics_delta"`
	}
	raw, _ := json.Marshal(rep.Ingest)
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rep.Ingest["latency_ms"], &res.Latency); err != nil || len(res.Latency) != 4 || res.Latency["p99"] <= 0 {
		t.Fatalf("latency_ms %s: %v", rep.Ingest["latency_ms"], err)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if res.AcceptedLines != fake.lines || res.PlannedLines != fake.lines || fake.lines == 0 {
		t.Fatalf("accepted %d lines, planned %d; the server stored %d", res.AcceptedLines, res.PlannedLines, fake.lines)
	}
	if res.Throttled != fake.sent || res.Status["429"] != fake.sent || fake.sent == 0 {
		t.Fatalf("429s: %d counted, status %v, %d sent", res.Throttled, res.Status, fake.sent)
	}
	if res.URL != url+"/insert/jsonline" || res.MBps <= 0 || res.Metrics["fake_lines_total"] != float64(fake.lines) {
		t.Fatalf("url %q, %g MB/s, metrics %v", res.URL, res.MBps, res.Metrics)
	}
	if !strings.Contains(stderr, "bench ingest: sending ") {
		t.Fatalf("progress on stderr: %q", stderr)
	}
}

func TestBenchIngestTable(t *testing.T) {
	fake := &fakeIngest{token: "s3cret"}
	url := newFakeIngest(t, fake)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("# ours\n\ns3cret\nother\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "bench", "ingest", "--url", url+"/api/v1/ingest", "--duration", "200ms", "--clients", "2", "--batch-size", "64KiB", "--gzip", "--token-file", tok, "-q")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{url + "/api/v1/ingest, 2 clients, for 0.2s", "gzip on", "MB/s", "429 rate", "P99 ms", "replies by status: 200: ", "429: ",
		"fake_lines_total +", "load generator CPU", "fsync batch (as given by --fsync)", "P50/P95/P99/max: latency"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	// Without the token, the 401s stop the run with the server's message.
	code, _, stderr = runCLI(t, "bench", "ingest", "--url", url, "--volume", "1MiB", "--batch-size", "64KiB", "-q")
	if code != ExitFailure || !strings.Contains(stderr, "stopped after 3 failed requests") || !strings.Contains(stderr, "401 Unauthorized: {\"error\":\"missing or wrong token\"}") {
		t.Fatalf("no token: exit %d, %s", code, stderr)
	}
}

func TestBenchIngestUsageErrors(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, []byte("# nothing\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := func(want string, args ...string) {
		t.Helper()
		code, _, stderr := runCLI(t, append([]string{"bench", "ingest"}, args...)...)
		if code != ExitUsage || !strings.Contains(stderr, want) {
			t.Fatalf("%v: exit %d, stderr %q, want usage exit with %q", args, code, stderr, want)
		}
	}
	f("--clients must be at least 1", "--clients", "0")
	f("--duration must be positive", "--duration", "0s")
	f("--batch-size must be between", "--batch-size", "0")
	f(`invalid --fsync "always": want batch, interval or never`, "--fsync", "always")
	f("--url and --spawn exclude each other", "--url", "http://127.0.0.1:1", "--spawn")
	f("--duration and --volume exclude each other", "--duration", "1s", "--volume", "1MiB")
	f("--spawn=false needs --url", "--spawn=false")
	f("--serve-arg needs a spawned server", "--url", "http://127.0.0.1:1", "--serve-arg", "--log-level=warn")
	f("holds no token", "--url", "http://127.0.0.1:1", "--token-file", empty)
	f(`cannot parse size "lots"`, "--volume", "lots")
	f("unknown command", "extra")
	f("--seed and --input exclude each other", "--seed", "2", "--input", empty)
}

// TestBenchIngestWarm: --warm writes and deletes its bytes in --dir before
// the run, and the report says so.
func TestBenchIngestWarm(t *testing.T) {
	url := newFakeIngest(t, &fakeIngest{})
	dir := t.TempDir()
	code, out, stderr := runCLI(t, "bench", "ingest", "--url", url, "--volume", "64KiB", "--warm", "3MiB", "--dir", dir, "--json", "-q")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep benchIngestReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if rep.Ingest.WarmBytes != 3<<20 || rep.Ingest.WarmSec <= 0 {
		t.Fatalf("warm %d bytes in %gs", rep.Ingest.WarmBytes, rep.Ingest.WarmSec)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left in --dir: %v", left)
	}
	code, _, stderr = runCLI(t, "bench", "ingest", "--url", url, "--volume", "64KiB", "--warm", "1MiB", "--dir", filepath.Join(dir, "absent"), "-q")
	if code != ExitFailure || !strings.Contains(stderr, "cannot warm the page cache") {
		t.Fatalf("a missing --dir: exit %d, %s", code, stderr)
	}
}

// TestBenchIngestInput sends a file's lines: the server receives them as
// they are, cycled to the volume, and the report names the file.
func TestBenchIngestInput(t *testing.T) {
	fi := &fakeIngest{}
	url := newFakeIngest(t, fi)
	in := filepath.Join(t.TempDir(), "app.ndjson")
	lines := "{\"msg\":\"a\"}\n{\"msg\":\"b\"}\n"
	if err := os.WriteFile(in, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "bench", "ingest", "--url", url, "--input", in, "--volume", "140B", "--clients", "1", "--json", "-q")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep benchIngestReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if r := rep.Ingest; r.Input != in || r.PoolLines != 2 || r.AcceptedLines != 10 || r.AcceptedBytes != 120 {
		t.Fatalf("report %+v", r)
	}
	if got := fi.body(); got != strings.Repeat(lines, 5) {
		t.Fatalf("the server received %q", got)
	}
	code, _, stderr = runCLI(t, "bench", "ingest", "--url", url, "--input", in+".absent", "-q")
	if code != ExitFailure || !strings.Contains(stderr, "cannot read the lines to send") || !strings.Contains(stderr, "app.ndjson.absent") {
		t.Fatalf("a missing file: exit %d, %s", code, stderr)
	}
}

func TestBenchIngestCompareWrite(t *testing.T) {
	t.Setenv(mainEnv, "1") // bench write runs as a child: the test binary acting as spate
	url := newFakeIngest(t, &fakeIngest{})
	dir := t.TempDir()
	code, out, stderr := runCLI(t, "bench", "ingest", "--url", url, "--volume", "1MiB", "--batch-size", "256KiB", "--compare-write", "--dir", dir, "--json", "-q")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep benchIngestReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	w := rep.Write
	if w == nil || w.Fsync != "batch" || w.BestWriter == "" || w.BestMBps <= 0 || w.Report.Dir != dir || len(w.Report.Rows) == 0 {
		t.Fatalf("write section %+v", w)
	}
	if want := rep.Ingest.MBps / w.BestMBps; w.Ratio != want {
		t.Fatalf("ratio %g, want %g", w.Ratio, want)
	}
	// Shaped like the ingest run: records of the average line, a body's
	// worth of lines per batch.
	if d := float64(w.Report.RecordSize) - rep.Ingest.AvgLineBytes; d < -1 || d > 1 {
		t.Errorf("record size %d for lines of %.1f B", w.Report.RecordSize, rep.Ingest.AvgLineBytes)
	}
	if lines := rep.Ingest.AvgBodyBytes / rep.Ingest.AvgLineBytes; float64(w.Report.Batch) < lines-1 || float64(w.Report.Batch) > lines+1 {
		t.Errorf("batch %d for bodies of %.1f lines", w.Report.Batch, lines)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("files left in --dir: %v", left)
	}
}

// TestBenchIngestSpawn runs the default mode: a spawned spate serve (the
// test binary acting as spate), stopped with SIGTERM afterwards.
func TestBenchIngestSpawn(t *testing.T) {
	t.Setenv(mainEnv, "1")
	dir := t.TempDir()
	code, out, stderr := runCLI(t, "bench", "ingest", "--volume", "2MiB", "--batch-size", "256KiB", "--clients", "2", "--dir", dir, "--keep", "--json", "-q")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep benchIngestReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	s, in := rep.Server, rep.Ingest
	if s == nil || s.ExitCode != 0 || s.PeakRSSMB <= 0 || s.PID <= 0 || !s.Kept || filepath.Dir(s.DataDir) != dir || !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Fatalf("server section %+v", s)
	}
	if in.AcceptedLines != in.PlannedLines || in.AcceptedLines == 0 || in.Failed+in.TransportErrors != 0 || in.RejectedLines != 0 {
		t.Fatalf("accepted %d of %d lines, %d failed, %d rejected", in.AcceptedLines, in.PlannedLines, in.Failed, in.RejectedLines)
	}
	if got := countStoredLines(t, s.DataDir); got != in.AcceptedLines {
		t.Fatalf("the server stored %d lines, it accepted %d", got, in.AcceptedLines)
	}

	// Without --keep the data directory goes; the table names the server.
	code, out, stderr = runCLI(t, "bench", "ingest", "--volume", "512KiB", "--clients", "1", "--dir", dir, "--fsync", "never", "-q")
	if code != ExitOK {
		t.Fatalf("table: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"--fsync never (pid ", "exit code 0; data directory removed", "peak RSS"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 { // the kept one
		t.Fatalf("left in --dir: %v", left)
	}

	// A server that cannot start: its own message comes back.
	code, _, stderr = runCLI(t, "bench", "ingest", "--volume", "64KiB", "--dir", dir, "--serve-arg", "--log-format=xml", "-q")
	if code != ExitFailure || !strings.Contains(stderr, "spate serve exited before listening") || !strings.Contains(stderr, "--log-format") {
		t.Fatalf("bad serve flag: exit %d, %s", code, stderr)
	}
}

// countStoredLines counts the lines in the segment files under dir, plain
// or zstd-compressed.
func countStoredLines(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(p, ".ndjson.zst"):
			zr, err := zstd.NewReader(bytes.NewReader(b))
			if err != nil {
				return err
			}
			defer zr.Close()
			if b, err = io.ReadAll(zr); err != nil {
				return err
			}
		case !strings.HasSuffix(p, ".ndjson"):
			return nil
		}
		n += int64(bytes.Count(b, []byte{'\n'}))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLineTail(t *testing.T) {
	lt := newLineTail(2)
	for _, p := range []string{"time=1 level=INFO msg=x\nspate serve: admin on http://127.0.0.1:1\nspate serve: listen", "ing on http://127.0.0.1:4242\r\n", "a\nb\n", "partial"} {
		lt.Write([]byte(p))
	}
	select {
	case u := <-lt.listening:
		if u != "http://127.0.0.1:4242" {
			t.Fatalf("listening on %q", u)
		}
	default:
		t.Fatal("the listening line was not seen")
	}
	if got, want := lt.quote(), "\nspate serve's last output:\n  a\n  b\n  partial"; got != want {
		t.Fatalf("quote() = %q, want %q", got, want)
	}
	lt.Write([]byte("spate serve: listening on http://127.0.0.1:1\n")) // only the first counts, and never blocks
	if len(lt.listening) != 0 {
		t.Fatal("a second listening line was sent")
	}
	if newLineTail(3).quote() != "" {
		t.Fatal("quote of nothing")
	}
}

func TestBenchIngestHelp(t *testing.T) {
	code, out, _ := runCLI(t, "bench", "ingest", "--help")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"spate bench ingest --fsync batch --compare-write", "--volume 1GiB --gzip", "Retry-After", "1e6 bytes/s", "--token-file", "SIGTERM", "peak RSS"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// TestBenchIngestProtocols: --protocol runs every protocol, each on a
// server of its own, and each stores every line it sent; syslog's run
// ends when the server's metrics count them all. --protocol syslog with
// --url needs --syslog-addr.
func TestBenchIngestProtocols(t *testing.T) {
	t.Setenv(mainEnv, "1")
	code, out, stderr := runCLI(t, "bench", "ingest", "--volume", "1MiB", "--batch-size", "128KiB", "--clients", "2",
		"--protocol", "jsonline,elasticsearch,loki,otlp,syslog", "--json", "-q")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep benchIngestReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	runs := append([]benchingest.Result{rep.Ingest}, rep.Protocols...)
	if len(runs) != 5 {
		t.Fatalf("%d runs", len(runs))
	}
	for i, p := range []benchingest.Protocol{"jsonline", "elasticsearch", "loki", "otlp", "syslog"} {
		r := runs[i]
		if r.Protocol != p || r.AcceptedLines != r.PlannedLines || r.AcceptedLines == 0 || r.RejectedLines != 0 || r.MBps <= 0 {
			t.Errorf("%s: protocol %q, accepted %d of %d lines, rejected %d, %.1f MB/s", p, r.Protocol, r.AcceptedLines, r.PlannedLines, r.RejectedLines, r.MBps)
		}
		if m := r.ServerMetrics["spate_ingest_lines_total{result=\"accepted\"}"]; int64(m) != r.AcceptedLines {
			t.Errorf("%s: the server counted %v lines accepted, the client %d", p, m, r.AcceptedLines)
		}
	}
	code, _, stderr = runCLI(t, "bench", "ingest", "--url", "http://127.0.0.1:1", "--protocol", "syslog", "--volume", "64KiB", "-q")
	if code != ExitUsage || !strings.Contains(stderr, "--syslog-addr") {
		t.Errorf("syslog with --url and no --syslog-addr: exit %d, %s", code, stderr)
	}
}

// TestBenchIngestProtocolTable: the protocol table gives each run's
// stored bytes over its payload and the server's CPU per GB, from the
// server's metrics, and "-" for a server without them.
func TestBenchIngestProtocolTable(t *testing.T) {
	rep := benchIngestReport{
		Ingest: benchingest.Result{Protocol: "jsonline", MBps: 300, AcceptedBytes: 2e9,
			ServerMetrics: map[string]float64{"spate_ingest_stored_bytes_total": 2e9, "process_cpu_seconds_total": 9}},
		Protocols: []benchingest.Result{
			{Protocol: "loki", MBps: 150, AcceptedBytes: 1e9,
				ServerMetrics: map[string]float64{"spate_ingest_stored_bytes_total": 1.5e9, "process_cpu_seconds_total": 12}},
			{Protocol: "otlp", MBps: 60, AcceptedBytes: 1e9},
		},
	}
	var b strings.Builder
	if err := writeBenchIngestTable(&b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| jsonline | 300.0 | 0 | 0.0 | 0.0 | 1.00 | 1.00 | 4.50 |", "| loki | 150.0 | 0 | 0.0 | 0.0 | 0.50 | 1.50 | 12.00 |", "| otlp | 60.0 | 0 | 0.0 | 0.0 | 0.20 | - | - |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}
