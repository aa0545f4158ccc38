package benchio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/benchenv"
	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/gen"
)

const childEnv = "SPATE_BENCHIO_TEST_CHILD"

// TestMain lets the test binary act as the measured child process: Run
// re-executes it with childEnv set and the spec as the last argument.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		var spec ChildSpec
		if err := json.Unmarshal([]byte(os.Args[len(os.Args)-1]), &spec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := RunChild(context.Background(), spec, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testConfig(files ...string) Config {
	return Config{
		Files:        files,
		ChildCommand: []string{os.Args[0], "-test.run=^$"},
		ChildEnv:     []string{childEnv + "=1"},
	}
}

// canEvict reports whether the page cache of files in dir can be dropped
// (not on tmpfs, for example).
func canEvict(t *testing.T, p string) bool {
	if err := Evict(p); err != nil {
		return false
	}
	r, err := fileread.Residency(p)
	return err == nil && r < 0.5
}

func TestRunEveryRowCountsEveryLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.ndjson")
	st, err := gen.WriteFile(context.Background(), p, gen.Config{Seed: 3, Size: 3 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// An extra line without a final newline, so every row must count it.
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"msg":"no newline"}`)
	f.Close()
	wantLines, wantBytes := st.Lines+1, st.Bytes+int64(len(`{"msg":"no newline"}`))

	cfg := testConfig(p)
	cfg.Repeat = 2
	cfg.Workers = 2
	cfg.ChunkSize = 64 << 10
	cfg.MmapWindow = 1 << 20
	var progress bytes.Buffer
	cfg.Progress = &progress
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Warm: the strategies, ceiling and ceiling-prefaulted; cold: no
	// ceiling-prefaulted. Each with 1 and 2 workers.
	if want := (len(DefaultStrategies)+2)*2 + (len(DefaultStrategies)+1)*2; len(rep.Rows) != want {
		t.Fatalf("%d rows, want %d", len(rep.Rows), want)
	}
	evicts := canEvict(t, p)
	for _, r := range rep.Rows {
		if r.Lines != wantLines || r.Bytes != wantBytes {
			t.Fatalf("%s: %d lines / %d bytes, want %d / %d", r.Label(), r.Lines, r.Bytes, wantLines, wantBytes)
		}
		if r.GCPercent != 100 {
			t.Fatalf("%s: GC percent %d, want Go's default 100", r.Label(), r.GCPercent)
		}
		// --chunk-size reaches the children: 64 KiB chunks of a 3 MiB file.
		if !isCeilingRow(r) && r.Chunks < wantBytes/(64<<10) {
			t.Fatalf("%s: %d chunks, want at least %d for 64 KiB chunks", r.Label(), r.Chunks, wantBytes/(64<<10))
		}
		if r.Rounds != 2 || len(r.GBpsRounds) != 2 || r.GBps.Median <= 0 || r.GBps.Min > r.GBps.Median || r.GBps.Max < r.GBps.Median {
			t.Fatalf("%s: bad throughput %+v over %d rounds", r.Label(), r.GBps, r.Rounds)
		}
		if r.PeakRSSMB <= 0 || r.UserSec+r.SysSec <= 0 {
			t.Fatalf("%s: no rusage (rss %.1f MB, cpu %.3f s)", r.Label(), r.PeakRSSMB, r.UserSec+r.SysSec)
		}
		if !isCeilingRow(r) && (r.ChunkMS.P50 <= 0 || r.ChunkMS.P95 < r.ChunkMS.P50 || r.ChunkMS.P99 < r.ChunkMS.P95) {
			t.Fatalf("%s: bad chunk latencies %+v", r.Label(), r.ChunkMS)
		}
		if r.Cache == "warm" && r.ResidentBefore < 0.99 {
			t.Fatalf("%s: only %.0f%% cached before a warm round", r.Label(), 100*r.ResidentBefore)
		}
		if r.Cache == "cold" && r.Strategy == CeilingPrefaulted {
			t.Fatalf("%s: a pre-faulted row in a cold run", r.Label())
		}
		if r.Cache == "cold" && evicts && r.ResidentBefore > 0.5 {
			t.Fatalf("%s: %.0f%% still cached before a cold round", r.Label(), 100*r.ResidentBefore)
		}
	}
	if n := strings.Count(progress.String(), "GB/s\n"); n != len(rep.Rows)*2 {
		t.Fatalf("%d progress lines, want %d", n, len(rep.Rows)*2)
	}
}

func isCeilingRow(r Row) bool { return r.Strategy == Ceiling || r.Strategy == CeilingPrefaulted }

func TestRunPassesGOGC(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.log")
	os.WriteFile(p, bytes.Repeat([]byte("x\n"), 1000), 0o644)
	cfg := testConfig(p)
	cfg.Repeat, cfg.Caches, cfg.Strategies, cfg.GOGC = 1, []string{"warm"}, []string{"pread"}, "off"
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if r.GCPercent != -1 {
			t.Fatalf("%s: GC percent %d with GOGC=off, want -1", r.Label(), r.GCPercent)
		}
	}
}

func TestRunGeneratesAndRemovesSample(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	cfg.TempDir = dir
	cfg.Size = 1 << 20
	cfg.Repeat = 1
	cfg.Caches = []string{"warm"}
	cfg.Strategies = []string{"pread"}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 1 || !rep.Files[0].Generated || rep.Files[0].Size > 1<<20 || rep.Files[0].Size < 1<<20-2048 {
		t.Fatalf("files = %+v", rep.Files)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("sample not removed: %v", left)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.log")
	os.WriteFile(p, []byte("a\n"), 0o644)
	f := func(mod func(*Config), want string) {
		t.Helper()
		cfg := testConfig(p)
		mod(&cfg)
		_, err := Run(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want it to contain %q", err, want)
		}
	}
	f(func(c *Config) { c.Strategies = []string{"mmapp"} }, `unknown read strategy "mmapp"`)
	f(func(c *Config) { c.Caches = []string{"lukewarm"} }, `unknown cache state "lukewarm"`)
	f(func(c *Config) { c.Work = "sum" }, `unknown work "sum"`)
	f(func(c *Config) { c.Files = []string{filepath.Join(dir, "missing")} }, "missing")
	f(func(c *Config) { c.Files = []string{dir} }, "regular files")
	// A failing child is reported with its stderr.
	f(func(c *Config) { c.ChildEnv = nil; c.ChildCommand = []string{"false"} }, "child failed")
}

func sampleReport() *Report {
	row := func(s string, w int, cache string, gbps, rss float64) Row {
		return Row{Strategy: s, Workers: w, Cache: cache, Rounds: 2, GBps: Spread{gbps, gbps * 0.9, gbps * 1.1},
			GBpsRounds: []float64{gbps * 0.9, gbps * 1.1}, Bytes: 8e9, PeakRSSMB: rss, ChunkMS: Pctl{1, 2, 3}, ResidentBefore: 1}
	}
	return &Report{
		Machine: Machine{OS: "linux", Arch: "amd64", CPUs: 2, CPUModel: "Test CPU", GoVersion: "go1.26"},
		Files:   []File{{Path: "x.ndjson", Size: 8e9}},
		Repeat:  2, Work: "lines",
		Rows: []Row{
			row("mmap", 1, "warm", 7, 100), row("mmap", 2, "warm", 14, 125),
			row(MmapWhole, 2, "warm", 12.5, 8000),
			row("pread", 1, "warm", 5, 16), row("pread", 2, "warm", 9, 20),
			row("bufio", 1, "warm", 4, 28),
			row(Ceiling, 2, "warm", 14, 8000), row(CeilingPrefaulted, 2, "warm", 20, 8000),
		},
	}
}

func TestFindings(t *testing.T) {
	got := strings.Join(Findings(sampleReport()), "\n")
	for _, want := range []string{
		"warm: best with 2 workers: mmap at 14.00 GB/s",
		"warm: mmap ×2 is 3.50× bufio ×1 (4.00 GB/s)",
		"warm: mmap ×2 reaches 100% of the ceiling",
		"warm: mmap ×2 reaches 70% of the compute bound",
		"peak RSS 125 MB = 1/64.0 of the file (mmap-whole: 8000 MB); throughput 112% of mmap-whole",
		"warm: pread ×2 is 1.80× pread ×1",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("findings lack %q:\n%s", want, got)
		}
	}
}

func TestFormats(t *testing.T) {
	rep := sampleReport()
	var b bytes.Buffer
	if err := WriteTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	table := b.String()
	if !regexp.MustCompile(`(?m)^\s+strategy\s+GB/s\s+P95 ms\s+peak RSS MB\s+workers`).MatchString(table) {
		t.Fatalf("table header not in the write-ups' column order:\n%s", table)
	}
	if !regexp.MustCompile(`(?m)^\s+mmap\s+14\.00\s+2\.00\s+125\s+2\s`).MatchString(table) {
		t.Fatalf("table lacks the mmap ×2 row:\n%s", table)
	}

	b.Reset()
	WriteMarkdown(&b, rep)
	if !strings.Contains(b.String(), "| strategy | GB/s | P95 ms | peak RSS MB |") || !strings.Contains(b.String(), "| ceiling-prefaulted | 20.00 | - |") {
		t.Fatalf("markdown:\n%s", b.String())
	}

	b.Reset()
	WriteGobench(&b, rep)
	line := regexp.MustCompile(`^BenchmarkIO/strategy=[a-z-]+/workers=\d/cache=(warm|cold)-2\t1\t\d+ ns/op\t[\d.]+ MB/s\t\d+ peak-RSS-MB$`)
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if strings.HasPrefix(l, "Benchmark") {
			if !line.MatchString(l) {
				t.Fatalf("bad gobench line %q", l)
			}
			n++
		}
	}
	if n != 2*len(rep.Rows) {
		t.Fatalf("%d gobench lines, want %d", n, 2*len(rep.Rows))
	}
	// ns/op must agree with MB/s: 8e9 bytes at 12.6 GB/s (mmap ×2's first round).
	if !strings.Contains(b.String(), "BenchmarkIO/strategy=mmap/workers=2/cache=warm-2\t1\t634920635 ns/op\t12600.00 MB/s") {
		t.Fatalf("gobench mmap ×2 line wrong:\n%s", b.String())
	}

	b.Reset()
	benchenv.WriteJSON(&b, rep)
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Rows) != len(rep.Rows) || back.Rows[1].GBps.Median != 14 {
		t.Fatalf("JSON round trip: %v %+v", err, back.Rows)
	}
}

func TestStats(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Fatalf("median = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Fatalf("median = %v", m)
	}
	lat := make([]int64, 100)
	for i := range lat {
		lat[i] = int64(i+1) * 1e6
	}
	if p := pctl(lat, 0.95); p != 95 {
		t.Fatalf("p95 = %v", p)
	}
	if p := pctl(lat, 0.5); p != 50 {
		t.Fatalf("p50 = %v", p)
	}
	if p := pctl([]int64{7e6}, 0.99); p != 7 {
		t.Fatalf("p99 of one = %v", p)
	}
	if g := gbps(ChildResult{Bytes: 2e9, WallNS: 1e9}); math.Abs(g-2) > 1e-9 {
		t.Fatalf("gbps = %v", g)
	}
}

func TestRunChildRejectsUnknownWork(t *testing.T) {
	err := RunChild(context.Background(), ChildSpec{Paths: []string{"x"}, Strategy: "pread", Workers: 1, Work: "sum"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `unknown work "sum"`) {
		t.Fatalf("err = %v", err)
	}
}
