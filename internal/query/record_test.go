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
