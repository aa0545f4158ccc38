package query_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
)

// TestMsgFieldAsVictoriaLogs: the message of a line as VictoriaLogs
// v1.52.1 stores it (found by TestVictoriaLogsLines): a top-level empty key
// is _msg; a line without the named message field, or with it empty, keeps
// its own _msg.
func TestMsgFieldAsVictoriaLogs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.ndjson")
	lines := `{"":"empty key","a":{"":"nested"}}
{"_msg":"own","m":""}
{"_msg":"own","m":"named"}
{"msg":"not the message","log":"nor this"}
{"_msg":"","msg":"after an empty one"}
{"_msg":null,"m":"","msg":""}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fileread.Config{Strategy: fileread.Bufio, Workers: 1}
	f := func(opts query.Options, want ...string) {
		t.Helper()
		rows, _, err := runEngine(t, `* | fields _msg, a., msg`, path, cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(want) {
			t.Fatalf("%+v: %d rows, want %d", opts, len(rows), len(want))
		}
		for i, w := range want {
			if got := rows[i]["_msg"]; got != w {
				t.Errorf("%+v: line %d: _msg %q, want %q (row %v)", opts, i+1, got, w, rows[i])
			}
		}
		if rows[0]["a."] != "nested" {
			t.Errorf("%+v: a. = %q, want nested", opts, rows[0]["a."])
		}
	}
	const missing = "missing _msg field; see https://docs.victoriametrics.com/victorialogs/keyconcepts/#message-field"
	f(query.Options{}, "empty key", "own", "own", "not the message", "after an empty one", missing)
	f(query.Options{MsgField: "m"}, "empty key", "own", "named", missing, missing, missing)
	f(query.Options{MsgField: "_msg"}, "empty key", "own", "own", missing, missing, missing)
}

// TestTimeMeansNow: a time that VictoriaLogs reads as the ingestion time
// ("", null, "0", "-", or 0 itself) gives a line read in place no _time and
// is not kept as a field; a later candidate's time takes its place (found
// by TestVictoriaLogsLines: "0" read as 1970, "-" kept as the field).
func TestTimeMeansNow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.ndjson")
	lines := `{"_time":"0","m":"a"}
{"_time":"-","m":"b"}
{"_time":null,"m":"c"}
{"_time":0.0,"m":"d"}
{"_time":"1970-01-01T00:00:00Z","m":"e"}
{"_time":"0","ts":"2026-01-02T03:04:05Z","m":"f"}
{"t":"-","m":"g"}
{"_time":"2026-01-02T03:04:05Z","m":"h"}
{"ts":"0","m":"i"}
{"ts":"1970-01-01T00:00:00Z","m":"j"}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fileread.Config{Strategy: fileread.Bufio, Workers: 1}
	f := func(opts query.Options, want ...string) {
		t.Helper()
		rows, _, err := runEngine(t, `* | fields _time, m, t, ts`, path, cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(want) {
			t.Fatalf("%+v: %d rows, want %d", opts, len(rows), len(want))
		}
		for i, w := range want {
			got := rows[i]["_time"] + "|" + rows[i]["t"] + "|" + rows[i]["ts"]
			if w != "*" && got != w {
				t.Errorf("%+v: line %d: _time|t|ts %q, want %q (row %v)", opts, i+1, got, w, rows[i])
			}
		}
	}
	const day = "2026-01-02T03:04:05Z"
	// (ts is no time to VictoriaLogs without a named time field: such a
	// value stays a field, as spate serve stores it.)
	f(query.Options{}, "||", "||", "||", "||", "||", day+"||", "|-|", day+"||", "||0", "||1970-01-01T00:00:00Z")
	// (With --time-field t, _time is a field of these lines: only the
	// line with t is looked at.)
	f(query.Options{TimeField: "t"}, "*", "*", "*", "*", "*", "*", "||", "*", "*", "*")
	// A named ts is read as the time.
	f(query.Options{TimeField: "ts"}, "*", "*", "*", "*", "*", "*", "*", "*", "||", "||")
}
