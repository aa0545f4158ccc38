package query_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/conformance"
	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/query/naive"
)

// bucketLines are the log the stats bucket tests group.
var bucketLines = []string{
	`{"ts":"2025-12-31T20:59:59Z","n":"-31"}`,
	`{"ts":"2025-12-31T21:00:00Z","n":"200"}`,
	`{"ts":"2026-01-01T02:59:59Z","n":"269"}`,
	`{"ts":"2026-01-01T03:00:00Z","n":"270"}`,
	`{"ts":"2026-01-01T23:00:00Z","n":"12.5"}`,
}

// expectQueryRows runs text over lines with the engine (1 and 3 workers,
// small chunks) and with the naive evaluator, and checks that both give
// the rows in want (NDJSON lines, in any order).
func expectQueryRows(t *testing.T, lines []string, text string, want ...string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "logs.ndjson")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantRows, err := conformance.ParseNDJSONRows([]byte(strings.Join(want, "\n")))
	if err != nil {
		t.Fatalf("%s: bad want: %v", text, err)
	}
	c := conformance.Case{ID: text, Query: text, Expected: wantRows}
	q, err := query.Parse(text, diffNow)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	got, err := naive.Run(q, lines, naive.Options{Now: diffNow})
	if err != nil {
		t.Fatalf("%s: naive: %v", text, err)
	}
	if err := conformance.Compare(c, got); err != nil {
		t.Errorf("%s: naive: %v", text, err)
	}
	for _, workers := range []int{1, 3} {
		got, _, err := runEngine(t, text, path, fileread.Config{Workers: workers, ChunkSize: 64}, query.Options{})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if err := conformance.Compare(c, got); err != nil {
			t.Errorf("%s (workers=%d): %v", text, workers, err)
		}
	}
}

func TestStatsBuckets(t *testing.T) {
	f := func(text string, want ...string) {
		t.Helper()
		expectQueryRows(t, bucketLines, text, want...)
	}
	f(`* | stats by (_time:1d) count() n`,
		`{"_time":"2025-12-31T00:00:00Z","n":"2"}`,
		`{"_time":"2026-01-01T00:00:00Z","n":"3"}`)
	// The offset is a time zone (VictoriaLogs v1.52): days at UTC+3 start
	// at 21:00 UTC, days at UTC-3 at 03:00 UTC.
	f(`* | stats by (_time:1d offset 3h) count() n`,
		`{"_time":"2025-12-30T21:00:00Z","n":"1"}`,
		`{"_time":"2025-12-31T21:00:00Z","n":"3"}`,
		`{"_time":"2026-01-01T21:00:00Z","n":"1"}`)
	f(`* | stats by (_time:1d offset -3h) count() n`,
		`{"_time":"2025-12-31T03:00:00Z","n":"3"}`,
		`{"_time":"2026-01-01T03:00:00Z","n":"2"}`)
	// Numbers too: v falls in floor((v+off)/step)*step-off.
	f(`* | stats by (n:100 offset 30) count() c`,
		`{"n":"-130","c":"1"}`,
		`{"n":"-30","c":"1"}`,
		`{"n":"170","c":"2"}`,
		`{"n":"270","c":"1"}`)
	// A fractional step or offset: integers are rounded by integers
	// (VictoriaLogs truncates both, and a step below 1 is 1).
	f(`* | stats by (n:0.5 offset 0.25) count() c`,
		`{"n":"-31","c":"1"}`,
		`{"n":"200","c":"1"}`,
		`{"n":"269","c":"1"}`,
		`{"n":"270","c":"1"}`,
		`{"n":"12.25","c":"1"}`)
	f(`* | stats by (n:10 offset 2.5) count() c`,
		`{"n":"-32","c":"1"}`,
		`{"n":"198","c":"1"}`,
		`{"n":"268","c":"2"}`,
		`{"n":"7.5","c":"1"}`)
	f(`* | stats by (n:2.5) count() c`,
		`{"n":"-32","c":"1"}`,
		`{"n":"200","c":"1"}`,
		`{"n":"268","c":"1"}`,
		`{"n":"270","c":"1"}`,
		`{"n":"12.5","c":"1"}`)
}

func TestStatsBucketsPlainNumbers(t *testing.T) {
	lines := []string{`{"x":"150"}`, `{"x":"1.5e2"}`, `{"x":"+150"}`, `{"x":"0150"}`, `{"x":"1KiB"}`, `{"x":"149.5"}`}
	// VictoriaLogs rounds only plain numbers; other values stay as they are.
	expectQueryRows(t, lines, `* | stats by (x:100) count() c`,
		`{"x":"100","c":"2"}`,
		`{"x":"1.5e2","c":"1"}`,
		`{"x":"+150","c":"1"}`,
		`{"x":"0150","c":"1"}`,
		`{"x":"1KiB","c":"1"}`)
}

func TestStatsWeekBuckets(t *testing.T) {
	lines := []string{
		`{"ts":"2025-12-28T23:59:59Z"}`, // Sunday
		`{"ts":"2025-12-29T00:00:00Z"}`, // Monday
		`{"ts":"2026-01-01T00:00:00Z"}`, // Thursday
	}
	f := func(text string, want ...string) {
		t.Helper()
		expectQueryRows(t, lines, text, want...)
	}
	// "week" starts on Monday; "1w" is 7 days from 1970-01-01, a Thursday.
	f(`* | stats by (_time:week) count() n`,
		`{"_time":"2025-12-22T00:00:00Z","n":"1"}`,
		`{"_time":"2025-12-29T00:00:00Z","n":"2"}`)
	f(`* | stats by (_time:week offset 1d) count() n`,
		`{"_time":"2025-12-28T00:00:00Z","n":"3"}`)
	f(`* | stats by (_time:1w) count() n`,
		`{"_time":"2025-12-25T00:00:00Z","n":"2"}`,
		`{"_time":"2026-01-01T00:00:00Z","n":"1"}`)
}

// TestStatsRateBucket checks that rate() is per second of the _time bucket
// when there is one, not of the query's time range (VictoriaLogs).
func TestStatsRateBucket(t *testing.T) {
	expectQueryRows(t, bucketLines, `_time:[2025-12-31T00:00:00Z, 2026-01-02T00:00:00Z) | stats by (_time:1h) rate() r`,
		`{"_time":"2025-12-31T20:00:00Z","r":"0.0002777777777777778"}`,
		`{"_time":"2025-12-31T21:00:00Z","r":"0.0002777777777777778"}`,
		`{"_time":"2026-01-01T02:00:00Z","r":"0.0002777777777777778"}`,
		`{"_time":"2026-01-01T03:00:00Z","r":"0.0002777777777777778"}`,
		`{"_time":"2026-01-01T23:00:00Z","r":"0.0002777777777777778"}`)
	// No time range is needed then.
	expectQueryRows(t, bucketLines, `* | stats by (_time:1d offset 3h) rate() r`,
		`{"_time":"2025-12-30T21:00:00Z","r":"0.000011574074074074073"}`,
		`{"_time":"2025-12-31T21:00:00Z","r":"0.00003472222222222222"}`,
		`{"_time":"2026-01-01T21:00:00Z","r":"0.000011574074074074073"}`)
	expectQueryRows(t, bucketLines, `_time:[2025-12-31T00:00:00Z, 2026-01-02T00:00:00Z) | stats rate() r`,
		`{"r":"0.000028935185185185186"}`)
}
