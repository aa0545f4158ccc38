package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/benchhttp"
)

func TestBenchHTTP(t *testing.T) {
	t.Setenv(mainEnv, "1") // the servers re-executed from this binary act as spate
	chart := filepath.Join(t.TempDir(), "h.svg")
	code, out, stderr := runCLI(t, "bench", "http", "--conns", "1,3", "--duration", "200ms", "--warmup", "50ms",
		"--big-size", "8MiB", "--small-files", "50", "--small-size", "3000", "--dir", t.TempDir(), "--json", "--chart", chart)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep benchhttp.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	_, nginxErr := exec.LookPath("nginx")
	if _, err := exec.LookPath("/usr/sbin/nginx"); err == nil {
		nginxErr = nil
	}
	downloads := len(benchhttp.DownloadVariants)
	if nginxErr != nil {
		downloads--
		if len(rep.Notes) == 0 {
			t.Error("no note that the nginx row was skipped")
		}
	}
	if want := 2 * (len(benchhttp.ResponseVariants) + 2*downloads); len(rep.Rows) != want {
		t.Fatalf("%d rows, want %d", len(rep.Rows), want)
	}
	if rep.BodyWrites != 801 || rep.BigSize != 8<<20 || rep.SmallFiles != 50 || !rep.ProcStats {
		t.Fatalf("report header %+v", rep)
	}
	rows := map[string]benchhttp.Row{}
	for _, r := range rep.Rows {
		rows[r.Workload+" "+r.Variant+" "+string(rune('0'+r.Conns))] = r
		if r.Requests == 0 || r.QPS <= 0 || r.MBps <= 0 || r.Latency.P99 < r.Latency.P50 || r.Vs <= 0 ||
			r.CPUPerReq < 0 || r.SyscallsPerReq <= 0 || r.PeakRSSMB <= 0 {
			t.Errorf("row %s %s %d: %+v", r.Workload, r.Variant, r.Conns, r)
		}
	}
	// The system calls show the copy paths: sendfile moves the 8 MiB file
	// in a few calls; a 4 KiB buffer needs a read and a write per 4 KiB;
	// bufio.Reader passes the file to sendfile too; a flush per piece
	// writes each of the 801 pieces on its own.
	big := int64(8 << 20)
	for v, r := range map[string]benchhttp.Row{"copy": rows["big copy 1"], "bufio-reader": rows["big bufio-reader 1"], "spate": rows["big spate 1"]} {
		if r.SyscallsPerReq > 100 {
			t.Errorf("%s: %.0f syscalls per 8 MiB download: not sendfile", v, r.SyscallsPerReq)
		}
	}
	// (Per request over a window that cuts requests at both ends: about
	// 2*big/4096, give or take a request's worth.)
	if r := rows["big copybuf-4k 1"]; r.SyscallsPerReq < float64(big/4096) {
		t.Errorf("copybuf-4k: %.0f syscalls per download, want about %d", r.SyscallsPerReq, 2*big/4096)
	}
	if r := rows["json flush-each 1"]; r.SyscallsPerReq < 700 {
		t.Errorf("flush-each: %.0f syscalls per response, want about 801", r.SyscallsPerReq)
	}
	if r := rows["json direct 1"]; r.SyscallsPerReq > 20 || r.Base != "direct" {
		t.Errorf("direct: %.0f syscalls per response, base %q", r.SyscallsPerReq, r.Base)
	}
	if nginxErr == nil && (rows["small nginx 3"].Base != "nginx" || rep.Nginx == "") {
		t.Errorf("nginx row %+v, version %q", rows["small nginx 3"], rep.Nginx)
	}
	if !strings.Contains(stderr, "downloads small spate, 3 conn") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	b, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	for _, s := range []string{"<svg", "flush-each", "copybuf-1m", "8.0 MiB file, 3 conn: MB/s"} {
		if !strings.Contains(svg, s) {
			t.Errorf("chart lacks %q", s)
		}
	}

	// The table names every server and the baselines.
	code, out, stderr = runCLI(t, "bench", "http", "--suite", "responses", "--servers", "direct,prebuilt", "--conns", "2", "--duration", "100ms", "--warmup", "0s")
	if code != ExitOK || !strings.Contains(string(out), "vs direct") || !strings.Contains(string(out), "prebuilt      2") {
		t.Fatalf("exit %d: %s\n%s", code, out, stderr)
	}
	// --big-size 0: no big file.
	code, out, stderr = runCLI(t, "bench", "http", "--suite", "downloads", "--servers", "copy", "--big-size", "0", "--small-files", "5",
		"--conns", "1", "--duration", "100ms", "--warmup", "0s", "--nginx", "off", "--json")
	var small benchhttp.Report
	if code != ExitOK || json.Unmarshal(out, &small) != nil || len(small.Rows) != 1 || small.Rows[0].Workload != benchhttp.WorkloadSmall || small.BigSize != 0 {
		t.Fatalf("--big-size 0: exit %d: %s\n%s", code, out, stderr)
	}
	for _, bad := range [][]string{
		{"--suite", "uploads"}, {"--servers", "lighttpd"}, {"--conns", "0"}, {"--duration", "0s"},
		{"--suite", "responses", "--servers", "copy"}, {"--big-size", "0", "--small-files", "0"},
	} {
		if code, _, stderr := runCLI(t, append([]string{"bench", "http"}, bad...)...); code != ExitUsage {
			t.Errorf("%v: exit %d, want usage: %s", bad, code, stderr)
		}
	}
}
