package benchio

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chartTestReport returns a report with one row per strategy, worker count
// and cache state, in the order the benchmark emits them.
func chartTestReport(strategies []string, workers []int, caches []string) *Report {
	rep := &Report{
		Machine: Machine{OS: "linux", Arch: "amd64", CPUs: 2, CPUModel: "Intel(R) Xeon(R) CPU @ 2.20GHz", GoVersion: "go1.26"},
		Files:   []File{{Path: "/tmp/a.ndjson", Size: 2 << 30, Generated: true}},
		Repeat:  5,
		Work:    "count",
	}
	for _, cache := range caches {
		for si, s := range strategies {
			for _, w := range workers {
				gbps := float64(si+1) * 0.7 * float64(w)
				if cache == "cold" {
					gbps /= 3
				}
				rep.Rows = append(rep.Rows, Row{
					Strategy:  s,
					Workers:   w,
					Cache:     cache,
					Rounds:    5,
					GBps:      Spread{Median: gbps, Min: gbps * 0.9, Max: gbps * 1.15},
					PeakRSSMB: float64(20 + 300*si + 40*w),
				})
			}
		}
	}
	return rep
}

func TestWriteChart_SVG(t *testing.T) {
	rep := chartTestReport([]string{"mmap", "pread", "bufio", Ceiling}, []int{2}, []string{"warm", "cold"})
	path := filepath.Join(t.TempDir(), "c.svg")
	if err := WriteChart(path, rep); err != nil {
		t.Fatalf("WriteChart: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("cannot read chart: %v", err)
	}
	svg := string(data)
	if !strings.HasPrefix(svg, "<?xml") && !strings.Contains(svg, "<svg") {
		t.Fatalf("not an SVG document; starts with %q", svg[:min(len(svg), 40)])
	}
	want := []string{
		"spate bench io — 2.0 GiB, 2 CPUs (Intel(R) Xeon(R) CPU @ 2.20GHz)",
		"Throughput (GB/s, median of 5 rounds; whiskers min–max)",
		"Peak RSS (MB, max over rounds)",
	}
	for _, r := range rep.Rows {
		want = append(want, ">"+r.Label()+"<")
	}
	for _, w := range want {
		if !strings.Contains(svg, w) {
			t.Errorf("SVG lacks text %q", w)
		}
	}
	assertNoChartTemp(t, filepath.Dir(path))
}

func TestWriteChart_Formats(t *testing.T) {
	rep := chartTestReport([]string{"mmap", MmapWhole, "pread"}, []int{1, 2}, []string{"warm", "cold"})
	f := func(name string, magic []byte) {
		t.Helper()
		path := filepath.Join(t.TempDir(), name)
		if err := WriteChart(path, rep); err != nil {
			t.Fatalf("WriteChart(%q): %v", name, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("cannot read chart: %v", err)
		}
		if !bytes.HasPrefix(data, magic) {
			t.Fatalf("%s starts with %q; want %q", name, data[:min(len(data), len(magic))], magic)
		}
	}
	f("c.png", []byte("\x89PNG\r\n\x1a\n"))
	f("C.PNG", []byte("\x89PNG\r\n\x1a\n"))
	f("c.pdf", []byte("%PDF-"))
}

func TestWriteChart_OddValues(t *testing.T) {
	// Zero, NaN and unknown strategies must still draw (no panic, no error).
	rep := &Report{Rows: []Row{
		{Strategy: "mmap", Workers: 1, Cache: "warm"},
		{Strategy: "zstd-stream", Workers: 1, Cache: "cold", GBps: Spread{Median: math.NaN(), Min: math.NaN(), Max: math.Inf(1)}},
	}}
	path := filepath.Join(t.TempDir(), "c.svg")
	if err := WriteChart(path, rep); err != nil {
		t.Fatalf("WriteChart: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("cannot read chart: %v", err)
	}
	if !strings.Contains(string(data), "zstd-stream ×1 cold") {
		t.Fatalf("SVG lacks the label of the unknown strategy")
	}
}

func TestWriteChart_Failure(t *testing.T) {
	rep := chartTestReport([]string{"mmap"}, []int{1}, []string{"warm"})
	f := func(name string, rep *Report, want string) {
		t.Helper()
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		err := WriteChart(path, rep)
		if err == nil {
			t.Fatalf("WriteChart(%q): no error; want %q", name, want)
		}
		want = fmt.Sprintf("cannot write chart %q: %s", path, want)
		if got := err.Error(); got != want {
			t.Fatalf("WriteChart(%q) error:\ngot  %s\nwant %s", name, got, want)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("WriteChart(%q) failed but left a file (stat: %v)", name, err)
		}
		assertNoChartTemp(t, dir)
	}
	f("c.jpg", rep, `unsupported chart format ".jpg": use .svg, .png or .pdf`)
	f("chart", rep, `unsupported chart format "": use .svg, .png or .pdf`)
	f("c.svg", &Report{}, `no rows to chart`)
	f("c.svg", nil, `no rows to chart`)
}

func TestWriteChart_MissingDir(t *testing.T) {
	rep := chartTestReport([]string{"mmap"}, []int{1}, []string{"warm"})
	path := filepath.Join(t.TempDir(), "missing", "c.svg")
	err := WriteChart(path, rep)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("WriteChart into a missing directory: got %v; want a not-exist error", err)
	}
}

// assertNoChartTemp fails if dir holds a leftover temporary chart file.
func assertNoChartTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("cannot list %s: %v", dir, err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Fatalf("leftover temporary file %s in %s", e.Name(), dir)
		}
	}
}
