package query_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/conformance"
	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
)

// TestStatsSpill checks that stats with more groups than GroupMemory
// holds spill to temp files, give the same rows as without spilling (in the
// same order when the output is sorted), leave no file behind, and that
// functions that cannot spill keep their groups in memory.
func TestStatsSpill(t *testing.T) {
	path := writeGen(t, 11, 2<<20)
	// Past 1000 spilled records, the groups are emitted partition by
	// partition rather than sorted (100,000 outside tests).
	defer query.SetMaxSortedSpilled(1000)()
	cases := []struct {
		q       string
		mem     int64
		spills  bool
		ordered bool
		// sortedGroups, if set, is the most groups of many spilled
		// records that still come out sorted (100,000 outside tests).
		sortedGroups int
	}{
		// Many groups (one per path): emitted partition by partition,
		// once they pass sortedGroups.
		{q: `* | stats by (path) count() n, sum(bytes) b, avg(latency_ms) a`, mem: 32 << 10, spills: true, sortedGroups: 100},
		{q: `* | stats by (path) sum(bytes) s | sort by (s desc, path) | limit 10`, mem: 32 << 10, spills: true, ordered: true, sortedGroups: 100},
		// Many spilled records, but few enough groups to sort: sorted, as
		// without spilling.
		{q: `* | stats by (path) count() n, sum(bytes) b`, mem: 32 << 10, spills: true, ordered: true},
		{q: `* | stats by (user_id) count() n`, mem: 4 << 10, spills: true, ordered: true},
		// Few groups: read back into one table and sorted, as without
		// spilling.
		{q: `* | stats by (service, status) count() n, sum_len(_msg) l`, mem: 1, spills: true, ordered: true},
		{q: `* | stats by (_time:1s) count() n`, mem: 1, spills: true, ordered: true},
		// A limit after stats stops the partition loop early.
		{q: `* | stats by (user_id) count() n | limit 3 | stats count() rows`, mem: 32 << 10, spills: true},
		// quantile cannot spill: its groups stay in memory.
		{q: `* | stats by (path) count() n, quantile(0.5, bytes) q`, mem: 1},
	}
	defer query.SetMaxSortedSpilledGroups(100_000)() // restores the limit at the end
	for _, c := range cases {
		sorted := 100_000
		if c.sortedGroups > 0 {
			sorted = c.sortedGroups
		}
		query.SetMaxSortedSpilledGroups(sorted)
		for _, workers := range []int{1, 3} {
			cfg := fileread.Config{Workers: workers, ChunkSize: 64 << 10}
			want, wst, err := runEngine(t, c.q, path, cfg, query.Options{GroupMemory: -1})
			if err != nil {
				t.Fatalf("%s: %v", c.q, err)
			}
			if wst.Spilled != 0 {
				t.Errorf("%s: spilled %d bytes with GroupMemory -1", c.q, wst.Spilled)
			}
			dir := t.TempDir()
			got, st, err := runEngine(t, c.q, path, cfg, query.Options{GroupMemory: c.mem, TempDir: dir})
			if err != nil {
				t.Fatalf("%s (workers=%d, spilling): %v", c.q, workers, err)
			}
			if c.spills != (st.Spilled > 0) {
				t.Errorf("%s (workers=%d): spilled %d bytes, want spilling %v", c.q, workers, st.Spilled, c.spills)
			}
			if strings.Contains(c.q, "limit 3") {
				// Which 3 groups come first is not fixed; the count is.
				if len(got) != 1 || got[0]["rows"] != "3" {
					t.Errorf("%s (workers=%d): got %v", c.q, workers, got)
				}
			} else {
				cc := conformance.Case{ID: c.q, Query: c.q, Ordered: c.ordered, Expected: want, Approx: &floatTolerance}
				if err := conformance.Compare(cc, got); err != nil {
					t.Errorf("%s (workers=%d): spilled and in-memory results differ: %v", c.q, workers, err)
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("%s: %d files left in the temp dir", c.q, len(ents))
			}
		}
	}
}

// TestStatsSpillError checks that a temp dir that cannot be written is an
// error naming the problem, not a wrong result.
func TestStatsSpillError(t *testing.T) {
	path := writeGen(t, 11, 256<<10)
	missing := filepath.Join(t.TempDir(), "missing")
	_, _, err := runEngine(t, `* | stats by (trace_id) count() n`, path, fileread.Config{Workers: 2}, query.Options{GroupMemory: 4 << 10, TempDir: missing})
	if err == nil || !strings.Contains(err.Error(), "spill groups to a temp file") || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("got %v, want a spill error naming the directory", err)
	}
}

// TestStatsSpillMemoryCap checks that groups of a spilling stats pipe do
// not count against MaxMemory: they are bounded by GroupMemory, and
// counting them would turn a later count_uniq into a sketch for nothing.
func TestStatsSpillMemoryCap(t *testing.T) {
	path := writeGen(t, 11, 2<<20)
	const q = `* | stats by (trace_id) count() n | stats count_uniq(n) u, count() groups`
	opts := query.Options{MaxMemory: 64 << 10, GroupMemory: 16 << 10, TempDir: t.TempDir()}
	rows, st, err := runEngine(t, q, path, fileread.Config{Workers: 2}, opts)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := runEngine(t, q, path, fileread.Config{Workers: 2}, query.Options{GroupMemory: -1})
	if err != nil {
		t.Fatal(err)
	}
	if st.Spilled == 0 || len(st.Approximate) != 0 || len(rows) != 1 || len(want) != 1 || rows[0]["u"] != want[0]["u"] || rows[0]["groups"] != want[0]["groups"] {
		t.Fatalf("spilled %d bytes, approximate %q, rows %v; want spilling and exactly %v", st.Spilled, st.Approximate, rows, want)
	}
}
