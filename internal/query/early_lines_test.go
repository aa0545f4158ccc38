package query_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/query"
)

// earlyLines are lines where a filter on status could be decided too early:
// the field set again later (a duplicate key, an escaped key, a top-level
// dotted key that flattens to the same name), its name in a later value,
// and JSON that breaks after the field. The ordinary lines after them
// are rejected early.
var earlyLines = []string{
	`{"status":200,"service":"a","status":503,"pad":"0123456789abcdef0123"}`,
	`{"status":200,"service":"b","st\u0061tus":504,"pad":"0123456789abcdef0123"}`,
	`{"status":200,"service":"c","msg":"status 500","pad":"0123456789abcdef0123"}`,
	`{"http":{"status":200},"service":"d","http.status":502,"pad":"0123456789abcdef"}`,
	`{"http":{"status":200,"x":{"status":1}},"service":"e","pad":"0123456789abcdef"}`,
	`{"status":200,"service":"f" "oops"}`,
	`{"status":503,"service":"g" "oops"}`,
	`{"status":200,"service":"h","pad":"0123456789abcdef0123","tail":`,
	`{"status":"503","service":"i","pad":"0123456789abcdef0123"}`,
	`status:503 plain text`,
	`{"service":"j","status":500,"pad":"0123456789abcdef0123"}`,
}

var earlyQueries = []string{
	`status:>=500 | stats by (service) count() n`,
	`status:>=500 | fields service, status`,
	`http.status:>=500 | stats by (service) count() n`,
	`status:>=500 OR service:b | stats by (service) count() n`,
	`status:in(503, 200) service:a | stats count() n`,
	`-status:<500 | stats by (service) count() n`,
	`status:200 | stats by (service) count() n`,
}

// TestEarlyReject checks early rejection (recordBuilder.build) against the
// naive evaluator on earlyLines and 200 ordinary lines, and that it happens.
func TestEarlyReject(t *testing.T) {
	lines := slices.Clone(earlyLines)
	for i := range 200 {
		http := `"http":{"code":200,"ua":"curl/8.5.0"}` // half the lines: status only once
		if i%2 == 0 {
			http = `"http":{"status":` + []string{"200", "502"}[i%4/2] + `,"ua":"curl/8.5.0"}`
		}
		lines = append(lines, `{"ts":"2026-01-01T00:00:00Z","status":`+[]string{"200", "404", "503"}[i%3]+
			`,"service":"s`+string(rune('0'+i%7))+`","latency_ms":12.5,"msg":"request done",`+http+`}`)
	}
	path := filepath.Join(t.TempDir(), "early.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, text := range earlyQueries {
		compareNaive(t, path, text, 256, func(workers int, st query.Stats) {
			early := !strings.HasPrefix(text, "-") // -status:<500 matches plain text
			if early && st.EarlyRejected < 50 || !early && st.EarlyRejected != 0 {
				t.Errorf("%s (workers=%d): %d lines rejected early", text, workers, st.EarlyRejected)
			}
		})
	}
}
