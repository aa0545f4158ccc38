package query_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/timeparse"
)

// TestTimeFormats: the common time formats become _time in the zone of
// Options.TimeZone; a value no format reads keeps its line and its field,
// is counted, and the first is named with its place.
func TestTimeFormats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.ndjson")
	lines := `{"ts":"2026-11-24 20:00:00","msg":"iso no zone"}
{"time":"10/Oct/2026:13:55:36 -0700","msg":"clf"}
{"timestamp":"2026-11-24 20:00:00,250","msg":"python"}
plain text line
{"ts":"yesterday","msg":"bad one"}
{"ts":1767323045123,"msg":"unix ms"}
{"_time":"Tuesday","msg":"bad two"}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata")
	}
	cfg := fileread.Config{Strategy: fileread.Bufio, Workers: 2, ChunkSize: 64}
	rows, st, err := runEngine(t, `*`, path, cfg, query.Options{TimeZone: berlin})
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{
		{"_time": "2026-11-24T19:00:00Z", "_msg": "iso no zone"},
		{"_time": "2026-10-10T20:55:36Z", "_msg": "clf"},
		{"_time": "2026-11-24T19:00:00.25Z", "_msg": "python"},
		{"_msg": "plain text line"},
		{"_msg": "bad one", "ts": "yesterday"},
		{"_time": "2026-01-02T03:04:05.123Z", "_msg": "unix ms"},
		{"_msg": "bad two", "_time": "Tuesday"},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %v", len(rows), len(want), rows)
	}
	for i := range want {
		for k, v := range want[i] {
			if rows[i][k] != v {
				t.Errorf("row %d: %s=%q, want %q (%v)", i, k, rows[i][k], v, rows[i])
			}
		}
	}
	b := st.FirstBadTime
	if st.BadTimes != 2 || b == nil || b.Name != path || b.Field != "ts" || b.Value != "yesterday" || b.Offset != int64(len(`{"ts":"2026-11-24 20:00:00","msg":"iso no zone"}
{"time":"10/Oct/2026:13:55:36 -0700","msg":"clf"}
{"timestamp":"2026-11-24 20:00:00,250","msg":"python"}
plain text line
`)) {
		t.Fatalf("bad times %d, first %+v", st.BadTimes, b)
	}
	// A time filter sees the zone: 20:00 in Berlin is 19:00 UTC.
	rows, _, err = runEngine(t, `_time:[2026-11-24T19:00:00Z, 2026-11-24T19:00:01Z) | stats count() n`, path, cfg, query.Options{TimeZone: berlin})
	if err != nil || len(rows) != 1 || rows[0]["n"] != "2" {
		t.Fatalf("time filter: %v %v", rows, err)
	}
	// A fixed layout reads only what it describes.
	ms, _ := timeparse.ParseLayout("unix_ms")
	_, st, err = runEngine(t, `*`, path, cfg, query.Options{TimeFormat: ms})
	if err != nil || st.BadTimes != 5 {
		t.Fatalf("unix_ms: %d bad times, %v", st.BadTimes, err)
	}
}

// TestRenamedFields: a field the query names that became _msg or _time is
// counted per line, so the CLI can say so; answers stay VictoriaLogs'.
func TestRenamedFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.ndjson")
	if err := os.WriteFile(path, []byte(`{"log":"error: disk full","ts":"2026-01-01T00:00:00Z"}
{"msg":"ok","log":"error: x"}
{"log":"fine"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fileread.Config{Strategy: fileread.Bufio, Workers: 2, ChunkSize: 64}
	rows, st, err := runEngine(t, `log:error | fields log, ts`, path, cfg, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0]["log"] != "error: x" {
		t.Fatalf("rows %v", rows)
	}
	// (The third line has no "error": the prefilter skips it unparsed.)
	want := []query.Renamed{{Name: "log", Became: "_msg", Lines: 1}, {Name: "ts", Became: "_time", Lines: 1}}
	if len(st.Renamed) != 2 || st.Renamed[0] != want[0] || st.Renamed[1] != want[1] {
		t.Fatalf("renamed %+v, want %+v", st.Renamed, want)
	}
	if _, st, _ := runEngine(t, `log:error`, path, cfg, query.Options{MsgField: "msg"}); len(st.Renamed) != 0 {
		t.Fatalf("with --msg-field msg: renamed %+v", st.Renamed)
	}
}

// TestInputFormats: logfmt and csv inputs become fields (msg and ts
// candidates as for JSON), the csv header is no row, with small chunks
// across workers too.
func TestInputFormats(t *testing.T) {
	dir := t.TempDir()
	csvPath, lfPath := filepath.Join(dir, "a.csv"), filepath.Join(dir, "a.log")
	var csv, lf strings.Builder
	csv.WriteString("ts,level,service,msg,latency_ms\n")
	for i := range 500 {
		fmt.Fprintf(&csv, "2026-01-01T00:00:%02dZ,%s,svc%d,\"done, %d\",%d\n", i%60, []string{"info", "error"}[i%2], i%3, i, i)
		fmt.Fprintf(&lf, "ts=2026-01-01T00:00:%02dZ level=%s service=svc%d msg=\"done %d\" latency_ms=%d\n", i%60, []string{"info", "error"}[i%2], i%3, i, i)
	}
	os.WriteFile(csvPath, []byte(csv.String()), 0o644)
	os.WriteFile(lfPath, []byte(lf.String()), 0o644)
	opts := query.Options{InputFormats: []query.InputFormat{
		{Kind: query.FormatCSV, Comma: ',', Header: []string{"ts", "level", "service", "msg", "latency_ms"}},
		{Kind: query.FormatLogfmt},
	}}
	for _, cfg := range []fileread.Config{{Strategy: fileread.Bufio, Workers: 1}, {Strategy: fileread.Pread, Workers: 2, ChunkSize: 256}} {
		q, err := query.Parse(`level:error | stats by (service) count() n, sum(latency_ms) s | sort by (service)`, diffNow)
		if err != nil {
			t.Fatal(err)
		}
		var s rowsSink
		st, err := query.Run(context.Background(), q, []string{csvPath, lfPath}, cfg, opts, &s)
		if err != nil {
			t.Fatal(err)
		}
		// Errors are the odd i: 250 per file, sums over odd i by i%3.
		want := map[string][2]int{}
		for i := 1; i < 500; i += 2 {
			w := want[fmt.Sprintf("svc%d", i%3)]
			want[fmt.Sprintf("svc%d", i%3)] = [2]int{w[0] + 2, w[1] + 2*i}
		}
		if len(s.rows) != 3 {
			t.Fatalf("%+v: rows %v", cfg, s.rows)
		}
		for _, r := range s.rows {
			w := want[r["service"]]
			if r["n"] != fmt.Sprint(w[0]) || r["s"] != fmt.Sprint(w[1]) {
				t.Errorf("%+v: %v, want n=%d s=%d", cfg, r, w[0], w[1])
			}
		}
		if st.BadTimes != 0 || st.BadLines != 0 {
			t.Errorf("%+v: bad times %d, bad lines %d", cfg, st.BadTimes, st.BadLines)
		}
	}
	rows, _, err := runEngine(t, `"done, 7" | fields _time, _msg, service`, csvPath, fileread.Config{Strategy: fileread.Bufio}, opts)
	if err != nil || len(rows) != 1 || rows[0]["_msg"] != "done, 7" || rows[0]["_time"] != "2026-01-01T00:00:07Z" || rows[0]["service"] != "svc1" {
		t.Fatalf("csv row: %v %v", rows, err)
	}
}

// TestPrefixedLines: kubectl --timestamps and CRI log lines keep their
// JSON (or text) and take the prefix's time when they have none.
func TestPrefixedLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.log")
	os.WriteFile(path, []byte(`2026-11-24T20:00:00.123456789Z {"level":"error","msg":"boom"}
2026-11-24T20:00:01.5Z stdout F {"level":"info","msg":"ok","ts":"2026-11-24T19:59:59Z"}
2026-11-24T20:00:02Z stderr P panic: runtime error
2026-11-24 not a prefix
2026-11-24T20:00:03Z INFO started
`), 0o644)
	rows, _, err := runEngine(t, `*`, path, fileread.Config{Strategy: fileread.Bufio}, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{
		{"_time": "2026-11-24T20:00:00.123456789Z", "_msg": "boom", "level": "error"},
		{"_time": "2026-11-24T19:59:59Z", "_msg": "ok", "level": "info", "stream": "stdout", "logtag": "F", "timestamp": "2026-11-24T20:00:01.5Z"},
		{"_time": "2026-11-24T20:00:02Z", "_msg": "panic: runtime error", "stream": "stderr", "logtag": "P"},
		{"_msg": "2026-11-24 not a prefix"},
		{"_time": "2026-11-24T20:00:03Z", "_msg": "2026-11-24T20:00:03Z INFO started"},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %v", rows)
	}
	for i := range want {
		if len(rows[i]) != len(want[i]) {
			t.Errorf("row %d: %v, want %v", i, rows[i], want[i])
		}
		for k, v := range want[i] {
			if rows[i][k] != v {
				t.Errorf("row %d: %s=%q, want %q", i, k, rows[i][k], v)
			}
		}
	}
	rows, _, err = runEngine(t, `_time:>=2026-11-24T20:00:00Z level:error | stats count() n`, path, fileread.Config{Strategy: fileread.Bufio}, query.Options{})
	if err != nil || len(rows) != 1 || rows[0]["n"] != "1" {
		t.Fatalf("filter: %v %v", rows, err)
	}
}
