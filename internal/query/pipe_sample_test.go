package query_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
)

// TestSample checks what can be checked of a random pipe: sample 1 keeps
// every row; sample N keeps about one row in N (within a tolerance of many
// standard deviations) of the rows it is given, each once, whatever the
// workers and wherever it stands (before and after a barrier).
func TestSample(t *testing.T) {
	const lines = 20000
	var b strings.Builder
	for i := range lines {
		fmt.Fprintf(&b, `{"ts":"2026-01-01T00:00:00Z","msg":"line %d","i":%d,"odd":%t}`+"\n", i, i, i%2 == 1)
	}
	path := filepath.Join(t.TempDir(), "sample.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 3} {
		cfg := fileread.Config{Workers: workers, ChunkSize: 4096}
		run := func(text string) []map[string]string {
			t.Helper()
			rows, _, err := runEngine(t, text, path, cfg, query.Options{})
			if err != nil {
				t.Fatalf("%s: %v", text, err)
			}
			return rows
		}
		count := func(text string) int {
			t.Helper()
			rows := run(text)
			n, err := strconv.Atoi(rows[0]["n"])
			if err != nil || len(rows) != 1 {
				t.Fatalf("%s: %v", text, rows)
			}
			return n
		}
		if n := count(`* | sample 1 | stats count() n`); n != lines {
			t.Errorf("workers=%d: sample 1 kept %d rows of %d", workers, n, lines)
		}
		for _, c := range []struct {
			q      string
			lo, hi int
		}{
			// 2000 expected, standard deviation about 40.
			{`* | sample 10 | stats count() n`, 1500, 2500},
			// 10000 odd rows, 1000 expected.
			{`odd:true | sample 10 | stats count() n`, 700, 1300},
			{`* | sample 100 | stats count() n`, 120, 280},
			// After a barrier: 20000 rows, 4000 expected.
			{`* | sort by (i) | sample 5 | stats count() n`, 3400, 4600},
		} {
			if n := count(c.q); n < c.lo || n > c.hi {
				t.Errorf("workers=%d: %s: %d rows, want %d to %d", workers, c.q, n, c.lo, c.hi)
			}
		}
		seen := map[string]bool{}
		rows := run(`odd:true | sample 3 | fields _msg, i`)
		for _, r := range rows {
			i, err := strconv.Atoi(r["i"])
			if err != nil || i%2 != 1 || r["_msg"] != "line "+r["i"] || seen[r["i"]] {
				t.Fatalf("workers=%d: row %v is not an input row passing the filter, or comes twice", workers, r)
			}
			seen[r["i"]] = true
		}
		if len(rows) < 2500 || len(rows) > 4200 {
			t.Errorf("workers=%d: sample 3 of 10000 rows kept %d", workers, len(rows))
		}
	}
}
