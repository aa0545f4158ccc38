package query_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/conformance"
	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/gen"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/query/naive"
)

// diffNow is the time relative _time filters resolve against in these tests.
var diffNow = time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)

// rowsSink collects rows as maps of text.
type rowsSink struct{ rows []map[string]string }

func (s *rowsSink) WriteRow(r *query.Row) error {
	m := make(map[string]string, len(r.Fields))
	for _, f := range r.Fields {
		m[strings.Clone(f.Name)] = strings.Clone(f.Value) // r is only valid during the call
	}
	s.rows = append(s.rows, m)
	return nil
}

// runEngine runs text over path with the given workers and chunk size.
func runEngine(t testing.TB, text, path string, cfg fileread.Config, opts query.Options) ([]map[string]string, query.Stats, error) {
	t.Helper()
	q, err := query.Parse(text, diffNow)
	if err != nil {
		return nil, query.Stats{}, err
	}
	var s rowsSink
	st, err := query.Run(context.Background(), q, []string{path}, cfg, opts, &s)
	return s.rows, st, err
}

// floatTolerance allows float sums and averages to differ in their last
// digits: workers add in a different order than the naive evaluator.
var floatTolerance = "rel=1e-9: float summation order"

// diffQueries are run over generated logs by TestDifferential: together
// they use every supported filter, pipe and stats function. ordered marks
// queries whose row order is fixed (sorted with a total order, or file order
// after limit/offset).
var diffQueries = []struct {
	q       string
	ordered bool
}{
	{q: `* | stats count() n`},
	{q: `error | stats count() n`},
	{q: `level:error | stats count() n`},
	{q: `~"timeout" | stats count() n`},
	{q: `"cache miss" | stats count() n`},
	{q: `err* | stats count() n`},
	{q: `i(ERROR) | stats count() n`},
	{q: `i(tim*) | stats count() n`},
	{q: `level:="warn" | stats by (service) count() n`},
	{q: `path:="/api/v1"* | stats count() n`},
	{q: `level:in(error, warn) | stats by (level) count() n`},
	{q: `contains_any(timeout, refused) | stats count() n`},
	{q: `contains_all(user, logged) | stats count() n`},
	{q: `seq(user, logged) | stats count() n`},
	{q: `path:~"^/api/v[12]/users/[0-9]+$" | stats count() n`},
	{q: `status:>=500 | stats by (service) count() n, avg(latency_ms) a, quantile(0.95, latency_ms) p95`},
	{q: `status:<300 latency_ms:>100 | stats count() n`},
	{q: `latency_ms:range(10, 20] | stats count() n, sum(latency_ms) s`},
	{q: `bytes:>10KiB | stats count() n`},
	{q: `level:<"info" | stats by (level) count() n`},
	{q: `user_id:"" | stats count() n`},
	{q: `http.proto:* | stats by (http.proto) count() n`},
	{q: `_time:[2026-01-02T00:00:00Z, 2026-01-02T00:00:30Z) | stats count() n, rate() r`},
	{q: `_time:<=2026-01-02T00:00:10Z | stats count() n`},
	{q: `(timeout OR refused) AND -level:error | stats by (level) count() n`},
	{q: `NOT (level:info OR level:debug) | stats by (level) count() n`},
	{q: `service:(auth OR billing) !status:200 | stats by (service, status) count() n`},
	{q: `* | stats by (service) count() n, count(user_id) u, count_empty(user_id) e, count_uniq(host) h`},
	// Sets of many keys, several per group, and one cut at its limit.
	{q: `* | stats by (service) count_uniq(user_id) limit 40 ul, count_uniq(path) p, count_uniq(host, level) hl`},
	{q: `* | stats by (method) min(latency_ms) mn, max(latency_ms) mx, median(bytes) md, sum_len(path) sl`},
	{q: `level:error | stats by (service) values(status) v, uniq_values(method) uv`},
	{q: `* | stats row_min(latency_ms, _time, service) rmin, row_max(bytes, path, bytes) rmax`},
	{q: `* | stats by (service, level) any(level) a, row_any(service, level) r, field_min(latency_ms, latency_ms) fm, field_max(bytes, bytes) fx`},
	{q: `* | stats by (service) any(path) a, row_any(path, method) r, field_min(latency_ms, path) fm, field_max(latency_ms, path) fx`},
	{q: `* | stats by (path) stddev(latency_ms) sd, count() n`},
	{q: `* | stats by (service) count_uniq_hash(user_id) u, count_uniq_hash(status) s, count_uniq_hash(host, level) hl, count_uniq_hash(path) limit 30 p`},
	{q: `* | stats by (service) histogram(latency_ms) l, histogram(bytes) b, histogram(status) if (level:error) s`},
	{q: `* | stats by (service) json_values(path, status) sort by (_time) limit 5 a, json_values(level, l*) sort by (latency_ms desc, _time) limit 3 if (status:>=500) b, json_values(host) limit 4 c`},
	{q: `level:error | stats by (service, host) json_values(_msg, status) sort by (_time desc) j, json_values(path) p`},
	{q: `* | stats by (_time:10s, service) rate_sum(bytes) r, stddev(bytes) s, stddev(latency_ms) if (status:>=500) e`},
	{q: `* | stats by (_time:10s) count() n`},
	{q: `* | stats by (_time:1m offset 30s, level) count() n`},
	{q: `* | stats count() if (level:error) e, count() if (status:>=500) f, count() n`},
	{q: `* | stats by (path) sum(bytes) s | sort by (s desc, path) | limit 10`, ordered: true},
	// A numeric result first in the sort right after stats: groups the
	// sort would drop are skipped without making their rows
	// (statsProc.topK); ties on it are kept and ordered by the next field.
	{q: `* | stats by (path) count() n | sort by (n, path) | limit 25`, ordered: true},
	{q: `* | stats by (path) sum(bytes) s | sort by (s, path) | limit 5`, ordered: true},
	{q: `* | stats by (user_id) avg(latency_ms) a | sort by (a, user_id) desc offset 3 limit 7`, ordered: true},
	{q: `* | stats by (user_id, service) count() n, sum(latency_ms) l | sort by (l desc, user_id, service) | limit 4`, ordered: true},
	{q: `* | sort by (latency_ms desc, trace_id) partition by (service) limit 2 rank as r | fields r, service, latency_ms, trace_id`, ordered: true},
	{q: `* | stats by (service, level) count() n | sort by (n desc, level) partition by (service) offset 1 limit 1 | fields service, level, n`, ordered: true},
	{q: `error | total_stats by (service) count() n, sum(bytes) b, max(latency_ms) m | fields _time, service, n, b, m`},
	{q: `* | stats by (path) count() n, sum(bytes) b, avg(latency_ms) a, count_empty(user_id) e | sort by (n desc, path) | limit 20`, ordered: true},
	{q: `* | stats by (user_id, status) count() n, sum_len(path) l | filter n:>1 | stats count() groups, sum(l) l`},
	{q: `* | top 5 by (service)`, ordered: false},
	{q: `* | top 3 by (level, method) rank`},
	{q: `* | uniq by (level) with hits`},
	{q: `* | uniq by (http.proto, method)`},
	{q: `* | field_values level`},
	{q: `* | field_names | fields name`},
	{q: `level:error | facets 3`},
	{q: `level:warn | fields _time, service, status | limit 7`, ordered: true},
	{q: `level:warn | offset 5 | limit 3 | fields _time, _msg`, ordered: true},
	{q: `service:auth | sort by (latency_ms desc, _time) limit 5 | fields _time, latency_ms`, ordered: true},
	{q: `service:auth | sort by (_time) offset 3 limit 4 | fields _time, host`, ordered: true},
	{q: `status:>=500 | fields _time, service, status, http.ua`},
	{q: `status:>=500 | delete _msg, trace_id, http* | stats by (service) count() n`},
	{q: `level:error | rename service as svc, http* as h* | fields svc, h.proto, level`},
	{q: `level:error | copy service as svc | fields svc, service`},
	{q: `* | stats by (service) count() n | filter n:>10 | sort by (n desc, service)`, ordered: true},
	{q: `"cache lookup" | extract "key=<key> hit=<hit> " | stats by (hit) count() n, count_uniq(key) u`},
	{q: `"cache lookup" | extract_regexp "tenant (?P<tenant>[a-z]+)" | stats by (tenant) count() n`},
	{q: `* | math latency_ms * 2 as l2, round(bytes / 1024) as kib, latency_ms % 7 as m | stats sum(l2) s, max(kib) k, min(m) mm`},
	{q: `* | format "<service>:<uc:level>" as sl | stats by (sl) count() n`},
	{q: `* | len(_msg) as l | stats max(l) mx, sum(l) s`},
	{q: `level:error | stats values(status) v | unroll (v) | stats by (v) count() n`},
	{q: `* | format "a=<status> b=<method>" as lf | unpack_logfmt from lf | stats by (a, b) count() n`},
	{q: `http.proto:* | format "{\"p\":\"<http.proto>\"}" as j | unpack_json from j | stats by (p) count() n`},
}

// writeGen writes size bytes of generated NDJSON with seed to a temp file.
func writeGen(t testing.TB, seed uint64, size int64) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Seed: seed, Size: size, Format: "ndjson"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gen.ndjson")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readLines(t testing.TB, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// TestDifferential checks the engine against the naive reference evaluator
// on generated data, with 1 and several workers, random chunk sizes and
// read strategies.
func TestDifferential(t *testing.T) {
	size := int64(3 << 20)
	if testing.Short() {
		size = 256 << 10 // the race detector run in CI
	}
	path := writeGen(t, 7, size)
	lines := readLines(t, path)
	r := rand.New(rand.NewPCG(1, 2))
	strategies := []fileread.Strategy{fileread.Auto, fileread.Mmap, fileread.Pread, fileread.Bufio, fileread.Stream}
	for _, dq := range diffQueries {
		q, err := query.Parse(dq.q, diffNow)
		if err != nil {
			t.Errorf("%s: parse: %v", dq.q, err)
			continue
		}
		want, err := naive.Run(q, lines, naive.Options{Now: diffNow})
		if err != nil {
			t.Errorf("%s: naive: %v", dq.q, err)
			continue
		}
		for i, workers := range []int{1, 2 + r.IntN(3), 1 + r.IntN(4)} {
			cfg := fileread.Config{Workers: workers, ChunkSize: 1<<10 + r.IntN(256<<10), Strategy: strategies[r.IntN(len(strategies))]}
			var opts query.Options
			if i == 2 {
				// Stats groups spill to temp files after a few KiB.
				opts.GroupMemory, opts.TempDir = 1+r.Int64N(64<<10), t.TempDir()
			}
			if i == 1 && !dq.ordered && !strings.Contains(dq.q, "limit") && !strings.Contains(dq.q, "offset") && !strings.Contains(dq.q, "head") {
				// Rows in the order chunks finish, as the query API asks:
				// the same rows.
				opts.Unordered = true
			}
			got, _, err := runEngine(t, dq.q, path, cfg, opts)
			if err != nil {
				t.Errorf("%s (workers=%d %s chunk=%d group-memory=%d): %v", dq.q, workers, cfg.Strategy, cfg.ChunkSize, opts.GroupMemory, err)
				continue
			}
			c := conformance.Case{ID: dq.q, Query: dq.q, Ordered: dq.ordered, Expected: want, Approx: &floatTolerance}
			if err := conformance.Compare(c, got); err != nil {
				t.Errorf("%s (workers=%d %s chunk=%d group-memory=%d): engine and naive differ: %v", dq.q, workers, cfg.Strategy, cfg.ChunkSize, opts.GroupMemory, err)
			}
		}
	}
}

// TestStatsTopK checks that skipping the groups a following sort would drop
// (statsProc.topK) changes no answer: every query gives the same rows, in
// the same order, with the skip and without it, with groups emitted in
// table order (ties then meet the sort in any order) and sorted, and over
// several workers and spilled groups. It also checks that the skip happens.
func TestStatsTopK(t *testing.T) {
	path := writeGen(t, 11, 2<<20)
	// A sum is NaN for a group without numbers, and NaN sorts above every
	// number: once the kept rows' worst is NaN, every number is skipped in
	// a descending sort. An average over no values is NaN too; those queries
	// keep a few groups only, and not all configurations skip.
	queries := []struct {
		q     string
		skips bool
	}{
		{`* | stats by (path) count() n | sort by (n) | limit 25`, true},
		{`* | stats by (path) count() n | sort by (n desc) | limit 3`, true},
		{`* | stats by (path) sum(bytes) s | sort by (s desc) | limit 10`, true},
		{`* | stats by (path) sum(bytes) s | sort by (s) | limit 10`, true},
		{`* | stats by (path) sum(bytes) s | sort by (s desc) | limit 3`, true}, // the 3 kept are NaN
		{`bytes:>=0 | stats by (path) sum(bytes) s | sort by (s) | limit 5`, true},
		{`* | stats by (user_id) avg(latency_ms) a | sort by (a) desc offset 3 limit 7`, false},
		{`latency_ms:>=0 | stats by (user_id) avg(latency_ms) a | sort by (a desc, user_id) limit 6`, true},
		{`latency_ms:>=0 | stats by (user_id, service) count() n, sum(latency_ms) l | sort by (l desc) | limit 4`, true},
		{`_time:[2026-01-01T00:00:00Z, 2026-01-03T00:00:00Z) | stats by (path) rate() r | sort by (r desc) | limit 8`, true},
	}
	for _, tableOrder := range []bool{false, true} {
		if tableOrder {
			// Spilled groups too: read back a partition at a time on
			// several goroutines, and emitted in partition order.
			defer query.SetMaxSortedGroups(0)()
			defer query.SetMaxSortedSpilled(0)()
			defer query.SetMaxSortedSpilledGroups(0)()
		}
		for _, tq := range queries {
			q := tq.q
			var skipped, skippedSpilled int64
			for _, cfg := range []struct {
				workers int
				opts    query.Options
			}{{1, query.Options{}}, {3, query.Options{}}, {2, query.Options{GroupMemory: 8 << 10, TempDir: t.TempDir()}}} {
				fc := fileread.Config{Workers: cfg.workers, ChunkSize: 64 << 10}
				before := query.TopKSkipped()
				got, _, err := runEngine(t, q, path, fc, cfg.opts)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if cfg.opts.GroupMemory == 0 {
					skipped += query.TopKSkipped() - before
				} else {
					skippedSpilled += query.TopKSkipped() - before
				}
				restore := query.SetStatsTopK(false)
				want, _, err := runEngine(t, q, path, fc, cfg.opts)
				restore()
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				c := conformance.Case{ID: q, Query: q, Ordered: true, Expected: want, Approx: &floatTolerance}
				if err := conformance.Compare(c, got); err != nil {
					t.Errorf("%s (table order %v, workers %d, group memory %d): with the skip: %v", q, tableOrder, cfg.workers, cfg.opts.GroupMemory, err)
				}
			}
			if tq.skips && (skipped == 0 || tableOrder && skippedSpilled == 0) {
				t.Errorf("%s (table order %v): no group skipped (%d, spilled %d)", q, tableOrder, skipped, skippedSpilled)
			}
		}
	}
}
