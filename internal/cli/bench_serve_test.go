package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchServe runs a small `spate bench serve`: spate alone, and beside
// VictoriaLogs when SPATE_VICTORIALOGS names it; every query of the set is
// reported, answers agree, and disk and CPU are reported.
func TestBenchServe(t *testing.T) {
	t.Setenv(mainEnv, "1") // spate serve re-executed from this binary acts as spate
	work := t.TempDir()
	args := []string{"bench", "serve", "--size", "4MiB", "--rounds", "1", "--dir", work, "--peers", "2", "--peer-cpus", "1"}
	vl := os.Getenv("SPATE_VICTORIALOGS")
	if vl != "" {
		args = append(args, "--victoria-logs", vl)
	} else {
		args = append(args, "--no-victoria-logs")
	}
	code, out, stderr := runCLI(t, args...)
	if code != ExitOK {
		t.Fatalf("bench serve: exit %d\n%s", code, stderr)
	}
	report := string(out)
	for _, want := range []string{
		"`* \\| stats by (service) count() n`", "`level:=error \\| stats count() n`", "`error \\| limit 10`",
		"`trace_id:=", "`upstream \\| stats count() n`", "| disk: segments + sidecars |",
		"| CPU: index building alone vs ingestion",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "DIFFER") || strings.Contains(report, "cannot compare") {
		t.Errorf("answers differ:\n%s", report)
	}
	// The fan-out's table: every query through the front, answers equal
	// to the one node's.
	_, fanTable, ok := strings.Cut(report, "| query | one node s | 2 nodes + front s |")
	if !ok {
		t.Fatalf("no fan-out table:\n%s", report)
	}
	if n := strings.Count(fanTable, "| same"); n < 8 {
		t.Errorf("fan-out answers: %d of 8 the same:\n%s", n, fanTable)
	}
	if !strings.Contains(report, "(GOMAXPROCS 1, 1, from their /metrics)") {
		t.Errorf("--peer-cpus 1 did not reach the nodes:\n%s", report)
	}
	if !strings.Contains(fanTable, "The front's peak RSS:") {
		t.Errorf("no front RSS:\n%s", fanTable)
	}
	if vl != "" && strings.Count(report, "| same")-strings.Count(fanTable, "| same") < 7 {
		t.Errorf("answers not compared with VictoriaLogs:\n%s", report)
	}
	// --dir keeps the logs and the data directories.
	for _, p := range []string{"logs.ndjson", "spate"} {
		if _, err := os.Stat(filepath.Join(work, p)); err != nil {
			t.Errorf("--dir: %v", err)
		}
	}
	for _, bad := range [][]string{{"--rounds", "0"}, {"--peers", "1"}, {"--peers", "-2"}, {"--peer-cpus", "1"}} {
		if code, _, _ := runCLI(t, append([]string{"bench", "serve"}, bad...)...); code != ExitUsage {
			t.Errorf("%v: exit %d, want usage", bad, code)
		}
	}
}

// TestCompareAnswers: rows agree in any order with numbers to 3 decimals;
// quantiles VictoriaLogs estimates from a sample agree within 2%, and the
// answer says by how much.
func TestCompareAnswers(t *testing.T) {
	sp := `{"s":"a","n":"3","avg":"1.00000000001","p95":"153.456"}` + "\n" + `{"s":"b","n":"4","avg":"2","p95":"10"}` + "\n"
	for _, c := range []struct {
		vl, want string
	}{
		{`{"s":"b","n":"4","avg":"2","p95":"10"}` + "\n" + `{"s":"a","n":"3","avg":"1","p95":"153.456"}`, "same"},
		{`{"s":"a","n":"3","avg":"1","p95":"154.041"}` + "\n" + `{"s":"b","n":"4","avg":"2","p95":"10"}`, "same; p95 within 0.4%"},
		{`{"s":"a","n":"3","avg":"1","p95":"170"}` + "\n" + `{"s":"b","n":"4","avg":"2","p95":"10"}`, "**DIFFER**: p95 off by 9.7%"},
		{`{"s":"a","n":"3","avg":"1","p95":"153.456"}` + "\n" + `{"s":"b","n":"5","avg":"2","p95":"10"}`, "**DIFFER** (2 rows against 2)"},
		{`{"s":"a","n":"3","avg":"1","p95":"153.456"}`, "**DIFFER** (2 rows against 1)"},
		{`{"s":"a","n":"3","avg":"1","p95":"x"}`, `**cannot compare**: field p95: "x" is not a number`},
	} {
		if got := compareAnswers([]byte(sp), []byte(c.vl), false, []string{"p95"}); !strings.HasPrefix(got, c.want) {
			t.Errorf("against %s:\n got %s\nwant %s", c.vl, got, c.want)
		}
	}
	if got := compareAnswers([]byte(sp), []byte(sp), true, nil); got != "same count (2 rows)" {
		t.Errorf("rows: %s", got)
	}
}
