package benchwrite

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/benchenv"
)

// sampleReport is a report with every writer in two fsync modes; the
// bufio writers run at 4 to 20 times write without syncs.
func sampleReport(repeat int) *Report {
	rep := &Report{
		Machine: Machine{OS: "linux", Arch: "amd64", CPUs: 2, CPUModel: "Test CPU", Kernel: "6.1", GoVersion: "go1.26"},
		Dir:     "/tmp", FSType: "ext4", FreeBytes: 1 << 40,
		Records: 671088, RecordSize: 100, Bytes: 67108800, Batch: 1000, Repeat: repeat,
	}
	rates := map[SyncMode]map[string]float64{
		SyncNone:  {WriteRow: 1e6, Bufio4K: 4e6, Bufio64K: 12e6, Bufio1M: 20e6, Writev: 9e6, Mmap: 7e6},
		SyncBatch: {WriteRow: 0.5e6, Bufio4K: 1e6, Bufio64K: 2e6, Bufio1M: 2.5e6, Writev: 2.4e6, Mmap: 1.5e6},
	}
	for _, m := range []SyncMode{SyncNone, SyncBatch} {
		for _, w := range Writers {
			v := rates[m][w]
			r := Row{Writer: w, Sync: m, Runs: repeat, RecordsPerSec: v, MBps: v * 100 / 1e6, VsWrite: v / rates[m][WriteRow],
				BatchMS: Pctl{P50: 0.1, P95: 0.2, P99: 0.3, Max: 0.4}, Syscalls: Syscalls{Write: 100}, SyscallsTotal: 100, SyscallsPerMB: 1.5,
				PeakRSSMB: 80, BaseRSSMB: 75, SHA256: "ab"}
			for i := range repeat {
				r.RecordsPerSecRuns = append(r.RecordsPerSecRuns, v*(0.9+0.1*float64(i)))
			}
			rep.Rows = append(rep.Rows, r)
		}
	}
	return rep
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, sampleReport(1)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"dir: /tmp (ext4, 1.0 TiB free)",
		"fsync none (never synced",
		"fsync batch (fdatasync, or msync for mmap",
		"vs write  P50 ms  P95 ms  P99 ms",
		"bufio-1m    20.0  2000.0    20.00×",
		"fsync=none: bufio writers run at 4.00× (bufio-4k) to 20.00× (bufio-1m) the records/s of per-record write (1.00 Mrec/s) with 100-byte records; the write-ups claim about 1.85×, the issue asks at least 5×: not met",
		"fsync=batch: bufio writers run at 2.00× (bufio-4k) to 5.00× (bufio-1m)",
		"fsync=none: fastest is bufio-1m at 20.0 Mrec/s",
		"fsync=batch keeps this share of each writer's fsync=none records/s: write 50%, bufio-4k 25%",
		"syscalls by kind",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "min–max") {
		t.Errorf("one run per row, yet a min–max column:\n%s", out)
	}
	b.Reset()
	WriteTable(&b, sampleReport(3))
	if !strings.Contains(b.String(), "Mrec/s min–max") || !strings.Contains(b.String(), "18.0–22.0") {
		t.Errorf("three runs: no min–max column:\n%s", b.String())
	}
}

func TestFindingsVerdict(t *testing.T) {
	rep := sampleReport(1)
	for i, r := range rep.Rows {
		if r.Writer == Bufio4K && r.Sync == SyncNone {
			rep.Rows[i].RecordsPerSec, rep.Rows[i].VsWrite = 6e6, 6
		}
	}
	f := Findings(rep)
	if len(f) == 0 || !strings.HasSuffix(f[0], "at least 5×: met") {
		t.Fatalf("findings: %q", f)
	}
	// Without the reference row there is no ratio to state.
	rep.Rows = rep.Rows[1:6]
	for _, line := range Findings(rep) {
		if strings.Contains(line, "fsync=none: bufio") {
			t.Fatalf("a ratio without a write row: %q", line)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := benchenv.WriteJSON(&b, sampleReport(2)); err != nil {
		t.Fatal(err)
	}
	var shape struct {
		FSType string `json:"fs_type"`
		Rows   []struct {
			Writer        string             `json:"writer"`
			Fsync         string             `json:"fsync"`
			RecordsPerSec float64            `json:"records_per_sec"`
			MBps          float64            `json:"mb_per_sec"`
			VsWrite       float64            `json:"vs_write"`
			BatchMS       map[string]float64 `json:"batch_ms"`
			Syscalls      map[string]int64   `json:"syscalls"`
			PeakRSSMB     float64            `json:"peak_rss_mb"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(b.Bytes(), &shape); err != nil {
		t.Fatal(err)
	}
	if shape.FSType != "ext4" || len(shape.Rows) != 12 {
		t.Fatalf("fs %q, %d rows", shape.FSType, len(shape.Rows))
	}
	r := shape.Rows[3]
	if r.Writer != Bufio1M || r.Fsync != "none" || r.RecordsPerSec != 20e6 || r.VsWrite != 20 || r.BatchMS["p99"] != 0.3 ||
		len(r.Syscalls) != 8 || r.Syscalls["write"] != 100 || r.PeakRSSMB != 80 {
		t.Fatalf("row 3: %+v", r)
	}
}

func TestWriteChart(t *testing.T) {
	rep := sampleReport(3)
	dir := t.TempDir()
	p := filepath.Join(dir, "w.svg")
	if err := WriteChart(p, rep); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	for _, want := range []string{"<svg", "spate bench write — 64.0 MiB of 100-byte records, batches of 1000",
		"fsync none: million records/s", "fsync batch: million records/s", "median of 3 runs, whiskers min–max", ">bufio-64k<", "20.0 (20.0×)", "/tmp (ext4)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	f := func(name string, magic []byte) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := WriteChart(p, rep); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := os.ReadFile(p)
		if !bytes.HasPrefix(b, magic) {
			t.Fatalf("%s starts with %q", name, b[:min(len(b), 8)])
		}
	}
	f("w.png", []byte("\x89PNG"))
	f("w.pdf", []byte("%PDF"))
	if err := WriteChart(filepath.Join(dir, "w.gif"), rep); err == nil || !strings.Contains(err.Error(), `unsupported chart format ".gif"`) {
		t.Fatalf("gif: %v", err)
	}
	if err := WriteChart(filepath.Join(dir, "e.svg"), &Report{}); err == nil || !strings.Contains(err.Error(), "no rows") {
		t.Fatalf("empty report: %v", err)
	}
	if err := WriteChart(filepath.Join(dir, "missing", "w.svg"), rep); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing directory: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Fatalf("temporary chart file left: %s", e.Name())
		}
	}
}
