package query_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
)

// TestMathNowRand: now() is the query's time (Options.Now), the same for
// every row; rand() is in [0, 1) and not one value for every row.
func TestMathNowRand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.log")
	if err := os.WriteFile(path, []byte(strings.Repeat(`{"_msg":"x"}`+"\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	q, err := query.Parse(`* | math now() as n, rand() as r`, now)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	sink := sinkRows(func(r *query.Row) {
		if n := r.Get("n"); n != strconv.FormatInt(now.UnixNano(), 10) {
			t.Errorf("now() = %s, want %d", n, now.UnixNano())
		}
		f, err := strconv.ParseFloat(r.Get("r"), 64)
		if err != nil || f < 0 || f >= 1 {
			t.Errorf("rand() = %q, want a number in [0, 1)", r.Get("r"))
		}
		seen[r.Get("r")] = true
	})
	if _, err := query.Run(context.Background(), q, []string{path}, fileread.Config{Workers: 2, ChunkSize: 512}, query.Options{Now: now}, sink); err != nil {
		t.Fatal(err)
	}
	if len(seen) < 150 {
		t.Errorf("rand() gave %d distinct values over 200 rows", len(seen))
	}
}
