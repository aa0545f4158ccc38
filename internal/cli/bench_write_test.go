package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/benchwrite"
)

func TestBenchWrite(t *testing.T) {
	t.Setenv(mainEnv, "1") // the children re-executed from this binary act as spate
	dir := t.TempDir()
	chart := filepath.Join(t.TempDir(), "w.svg")
	code, out, stderr := runCLI(t, "bench", "write", "--size", "100KiB", "--batch", "64", "--dir", dir, "--json", "--chart", chart)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep benchwrite.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if len(rep.Rows) != len(benchwrite.Writers)*len(benchwrite.SyncModes) {
		t.Fatalf("%d rows, want every writer in every fsync mode", len(rep.Rows))
	}
	if rep.Records != 1024 || rep.RecordSize != 100 || rep.Batch != 64 || rep.Dir != dir || rep.FSType == "" {
		t.Fatalf("report header %+v", rep)
	}
	for _, r := range rep.Rows {
		if r.RecordsPerSec <= 0 || r.VsWrite <= 0 || r.Batches != 16 || r.SyscallsTotal <= 0 || r.PeakRSSMB <= 0 || r.SHA256 != rep.Rows[0].SHA256 {
			t.Errorf("row %s: %+v", r.Label(), r)
		}
		if r.Writer == benchwrite.WriteRow && r.Syscalls.Write != 1024 {
			t.Errorf("%s: %d writes, want one per record", r.Label(), r.Syscalls.Write)
		}
	}
	if !strings.Contains(stderr, "[18/18]") {
		t.Fatalf("no progress on stderr: %q", stderr)
	}
	if b, err := os.ReadFile(chart); err != nil || !strings.Contains(string(b), "<svg") {
		t.Fatalf("chart not written: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("files left in --dir: %v", left)
	}

	// The table, restricted: write comes along as the reference.
	code, out, stderr = runCLI(t, "bench", "write", "--size", "64KiB", "--dir", dir, "--writers", "bufio-64k", "--fsync", "none", "-q")
	if code != ExitOK {
		t.Fatalf("table: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"dir: " + dir + " (" + rep.FSType, "fsync none", "vs write", "bufio-64k", "write 655", "findings"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "fsync batch") || stderr != "" {
		t.Errorf("--fsync none ran other modes or -q printed progress: %q\n%s", stderr, out)
	}
}

func TestBenchWriteUsageErrors(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		code, _, stderr := runCLI(t, append([]string{"bench", "write"}, args...)...)
		if code != ExitUsage || !strings.Contains(stderr, want) {
			t.Fatalf("%v: exit %d, stderr %q, want usage exit with %q", args, code, stderr, want)
		}
	}
	f("--repeat must be at least 1", "--repeat", "0")
	f("--batch must be at least 1", "--batch", "0")
	f(`unknown writer "fwrite" in --writers`, "--writers", "bufio-4k,fwrite")
	f(`invalid --fsync: unknown fsync mode "always"`, "--fsync", "always")
	f("--fsync names no mode", "--fsync", ",")
	f("--record-size 10 is too small", "--record-size", "10")
	f("is less than one record", "--size", "50", "--record-size", "100")
	f(`cannot parse size "big"`, "--size", "big")
	f("unknown command", "extra") // no arguments
}

func TestBenchWriteRefusesWithoutSpace(t *testing.T) {
	code, _, stderr := runCLI(t, "bench", "write", "--size", "1000TiB", "--dir", t.TempDir())
	if code == ExitOK || !strings.Contains(stderr, "not enough free space") || !strings.Contains(stderr, "use a smaller --size or another --dir") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestBenchWriteHelp(t *testing.T) {
	code, out, _ := runCLI(t, "bench", "write", "--help")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Mrec/s", "fdatasync", "tmpfs", "VM", "--record-size", "spate bench write --fsync none --repeat 3 --chart write.svg"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
