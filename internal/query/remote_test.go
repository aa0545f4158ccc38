package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"github.com/spate-io/spate/internal/conformance"
	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/query/naive"
)

// jsonRowsSink writes rows as /select/logsql/query does: one JSON object
// of string values a line, in field order.
type jsonRowsSink struct{ b bytes.Buffer }

func (s *jsonRowsSink) WriteRow(r *query.Row) error {
	s.b.WriteByte('{')
	for i, f := range r.Fields {
		if i > 0 {
			s.b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Name)
		v, _ := json.Marshal(f.Value)
		s.b.Write(k)
		s.b.WriteByte(':')
		s.b.Write(v)
	}
	s.b.WriteString("}\n")
	return nil
}

// runRemote runs text as PlanRemote splits it: each of paths is one node,
// and the merge runs the rest.
func runRemote(t testing.TB, text string, paths []string) ([]map[string]string, error) {
	rows, _, err := runRemoteOpts(t, text, paths, query.Options{})
	return rows, err
}

// runRemoteOpts is runRemote with the nodes' partial runs made with
// nodeOpts (Partial set here); spilled is the bytes their stats spilled.
func runRemoteOpts(t testing.TB, text string, paths []string, nodeOpts query.Options) (rows []map[string]string, spilled int64, err error) {
	t.Helper()
	q, err := query.Parse(text, diffNow)
	if err != nil {
		return nil, 0, err
	}
	rp := query.PlanRemote(q)
	var out rowsSink
	m, err := rp.NewMerger(query.Options{}, &out)
	if err != nil {
		return nil, 0, err
	}
	var spill atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, len(paths))
	for i, path := range paths {
		wg.Go(func() {
			cfg := fileread.Config{Workers: 2, ChunkSize: 64 << 10}
			if rp.Partial {
				var b bytes.Buffer
				o := nodeOpts
				o.Partial = &b
				st, err := query.Run(context.Background(), rp.Remote, []string{path}, cfg, o, nil)
				if err != nil {
					errs[i] = err
					return
				}
				spill.Add(st.Spilled)
				errs[i] = m.AddPartial(b.Bytes())
				return
			}
			var s jsonRowsSink
			if _, err := query.Run(context.Background(), rp.Remote, []string{path}, cfg, query.Options{Unordered: true}, &s); err != nil {
				errs[i] = err
				return
			}
			errs[i] = m.AddRows(&s.b)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, 0, err
		}
	}
	if _, err := m.Finish(); err != nil {
		return nil, 0, err
	}
	return out.rows, spill.Load(), nil
}

// splitFile writes lines into n files, line i to file i%n.
func splitFile(t testing.TB, lines []string, n int) []string {
	t.Helper()
	parts := make([]strings.Builder, n)
	for i, l := range lines {
		parts[i%n].WriteString(l + "\n")
	}
	var paths []string
	dir := t.TempDir()
	for i := range parts {
		p := filepath.Join(dir, "part"+string(rune('a'+i))+".ndjson")
		if err := os.WriteFile(p, []byte(parts[i].String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestRemoteDifferential runs every differential query over the logs
// split across 3 nodes, as spate serve --select-peers runs it, and checks
// the merged answer against the naive evaluator over all the logs: with
// the nodes' default group memory, and with 8 KiB, so that their stats
// spill and their partial states are written from spilled partitions,
// folded or as the runs hold them; the merge reading every state into one
// table (few groups), and a partition at a time on every CPU (many).
func TestRemoteDifferential(t *testing.T) {
	size := int64(1 << 20)
	if testing.Short() {
		size = 256 << 10
	}
	path := writeGen(t, 11, size)
	lines := readLines(t, path)
	paths := splitFile(t, lines, 3)
	tmp := t.TempDir()
	spills := 0
	for _, dq := range diffQueries {
		if (strings.Contains(dq.q, "limit") || strings.Contains(dq.q, "offset") || strings.Contains(dq.q, "head")) && !strings.Contains(dq.q, "sort") {
			continue // the first N rows in file order, which nodes do not share
		}
		if strings.Contains(dq.q, "values(") && !strings.Contains(dq.q, "uniq_values(") {
			continue // values() lists values in file order, which nodes do not share
		}
		if strings.Contains(dq.q, "any(path)") {
			continue // any, row_any and the ties of field_min take the earliest row, which nodes do not share
		}
		q, err := query.Parse(dq.q, diffNow)
		if err != nil {
			t.Fatal(err)
		}
		want, err := naive.Run(q, lines, naive.Options{Now: diffNow})
		if err != nil {
			t.Fatalf("%s: naive: %v", dq.q, err)
		}
		spilling := query.Options{GroupMemory: 8 << 10, TempDir: tmp}
		for i, o := range []query.Options{{}, spilling, spilling, spilling, spilling} {
			var restore []func()
			if i > 0 {
				// A table looks at its memory every 16 new groups, so
				// that the small nodes of -short spill too.
				restore = append(restore, query.SetSpillCheckEvery(16))
			}
			// A node that spilled sends its runs folded (1, 2) or as
			// they are (3, 4).
			switch i {
			case 1, 2:
				restore = append(restore, query.SetPartialUnfoldedRepeats(0))
			case 3, 4:
				restore = append(restore, query.SetPartialUnfoldedRepeats(1e9))
			}
			if i%2 == 0 && i > 0 {
				// The merge folds the nodes' states a partition at a time
				// on every CPU, as for many groups, and emits them unsorted.
				restore = append(restore, query.SetMaxSortedSpilled(0), query.SetMaxSortedSpilledGroups(0))
			}
			got, spilled, err := runRemoteOpts(t, dq.q, paths, o)
			for _, f := range restore {
				f()
			}
			if err != nil {
				t.Errorf("%s (group memory %d): %v", dq.q, o.GroupMemory, err)
				continue
			}
			if spilled > 0 {
				spills++
			}
			c := conformance.Case{ID: dq.q, Query: dq.q, Ordered: dq.ordered, Expected: want, Approx: &floatTolerance}
			if err := conformance.Compare(c, got); err != nil {
				t.Errorf("%s over 3 nodes (group memory %d): merged and naive differ: %v", dq.q, o.GroupMemory, err)
			}
		}
	}
	t.Logf("%d queries spilled on the nodes with 8 KiB of group memory", spills)
	if spills < 5 {
		t.Errorf("only %d queries spilled on the nodes with 8 KiB of group memory", spills)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("spill files left behind: %d", len(left))
	}
}

// TestRemoteSketches: states that switched to sketches (a memory cap on
// the nodes) cross nodes too, merge within the sketches' error of the
// exact answer, and the merge says it is approximate.
func TestRemoteSketches(t *testing.T) {
	path := writeGen(t, 5, 512<<10)
	lines := readLines(t, path)
	paths := splitFile(t, lines, 2)
	const text = `* | stats count_uniq(user_id) u, quantile(0.9, latency_ms) q`
	exact, _, err := runEngine(t, text, path, fileread.Config{}, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := query.Parse(text, diffNow)
	rp := query.PlanRemote(q)
	var out rowsSink
	m, err := rp.NewMerger(query.Options{}, &out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		var b bytes.Buffer
		if _, err := query.Run(context.Background(), rp.Remote, []string{p}, fileread.Config{}, query.Options{Partial: &b, Approx: true}, nil); err != nil {
			t.Fatal(err)
		}
		if err := m.AddPartial(b.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	st, err := m.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Approximate) == 0 || len(out.rows) != 1 {
		t.Fatalf("approximate %v, rows %v", st.Approximate, out.rows)
	}
	for _, f := range []string{"u", "q"} {
		e, _ := strconv.ParseFloat(exact[0][f], 64)
		g, _ := strconv.ParseFloat(out.rows[0][f], 64)
		if math.Abs(g-e) > 0.03*e {
			t.Errorf("%s: merged sketches give %v, exact %v", f, g, e)
		}
	}
}

// TestRemotePartialErrors: a cut or mismatched partial state fails the
// merge, and only a query ending with its stats pipe runs partial.
func TestRemotePartialErrors(t *testing.T) {
	q, _ := query.Parse(`* | stats by (level) count() n`, diffNow)
	rp := query.PlanRemote(q)
	var out rowsSink
	m, err := rp.NewMerger(query.Options{}, &out)
	if err != nil {
		t.Fatal(err)
	}
	path := writeGen(t, 3, 64<<10)
	var b bytes.Buffer
	if _, err := query.Run(context.Background(), rp.Remote, []string{path}, fileread.Config{}, query.Options{Partial: &b}, nil); err != nil {
		t.Fatal(err)
	}
	full := b.Bytes()
	for _, cut := range []int{0, 5, len(full) / 2, len(full) - 1} {
		if err := m.AddPartial(full[:cut]); err == nil {
			t.Errorf("a stream cut at %d of %d bytes merged without an error", cut, len(full))
		}
	}
	// A state of hundreds of groups (merged 32 at a time) cut anywhere:
	// in a key, in a state, between batches, in the trailer.
	qp, _ := query.Parse(`* | stats by (path) count() n, sum(bytes) s`, diffNow)
	rpp := query.PlanRemote(qp)
	var bp bytes.Buffer
	if _, err := query.Run(context.Background(), rpp.Remote, []string{path}, fileread.Config{}, query.Options{Partial: &bp}, nil); err != nil {
		t.Fatal(err)
	}
	fullp := bp.Bytes()
	for cut := 0; cut < len(fullp); cut += 1 + cut%13 {
		mp, _ := rpp.NewMerger(query.Options{}, &out)
		if err := mp.AddPartial(fullp[:cut]); err == nil {
			t.Fatalf("a %d-byte state cut at %d merged without an error", len(fullp), cut)
		}
	}
	mp, _ := rpp.NewMerger(query.Options{}, &out)
	if err := mp.AddPartial(fullp); err != nil {
		t.Fatalf("the whole state: %v", err)
	}
	// Damaged states: a changed byte anywhere (lengths, the trailer, its
	// offset) never panics; when AddPartial refuses the state, the merge
	// is as if it never came (the good state alone), and when it takes
	// it, Finish answers or fails (a changed key or count is not
	// detectable without a checksum; nodes and fronts talk over TCP).
	var alone rowsSink
	ma, _ := rpp.NewMerger(query.Options{}, &alone)
	if err := ma.AddPartial(fullp); err != nil {
		t.Fatal(err)
	}
	if _, err := ma.Finish(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range 400 {
		bad := bytes.Clone(fullp)
		at := rng.IntN(len(bad))
		footer := i%4 == 0
		if footer {
			at = len(bad) - 1 - rng.IntN(8) // the trailer's offset
		}
		bad[at] ^= byte(1 + rng.IntN(255))
		var got rowsSink
		mb, _ := rpp.NewMerger(query.Options{}, &got)
		if err := mb.AddPartial(fullp); err != nil {
			t.Fatal(err)
		}
		err := mb.AddPartial(bad)
		if footer && err == nil {
			t.Fatalf("byte %d of the trailer's offset changed: the state was taken", at)
		}
		if err != nil {
			if _, err := mb.Finish(); err != nil {
				t.Fatalf("byte %d changed: the refused state failed the merge: %v", at, err)
			}
			if !slices.EqualFunc(got.rows, alone.rows, maps.Equal) {
				t.Fatalf("byte %d changed: the refused state changed the answer", at)
			}
			continue
		}
		mb.Finish()
	}
	// A node of another version says so.
	old := append([]byte("spate-partial-1\n"), full[len("spate-partial-2\n"):]...)
	if err := m.AddPartial(old); err == nil || !strings.Contains(err.Error(), "the node sent format 1, this server reads 2") {
		t.Errorf("a state of format 1: %v", err)
	}
	// Another query's state is refused.
	q2, _ := query.Parse(`* | stats by (level) count() m`, diffNow)
	rp2 := query.PlanRemote(q2)
	m2, _ := rp2.NewMerger(query.Options{}, &out)
	if err := m2.AddPartial(full); err == nil || !strings.Contains(err.Error(), "the node ran") {
		t.Errorf("a mismatched state: %v", err)
	}
	// A query that does not end with its stats pipe cannot run partial.
	q3, _ := query.Parse(`* | stats count() n | sort by (n)`, diffNow)
	if _, err := query.Run(context.Background(), q3, []string{path}, fileread.Config{}, query.Options{Partial: io.Discard}, nil); err == nil {
		t.Error("a partial run of a query with pipes after stats did not fail")
	}
}

// orderedSink keeps each row's fields in order, as "name=value".
type orderedSink struct{ rows [][]string }

func (s *orderedSink) WriteRow(r *query.Row) error {
	var row []string
	for _, f := range r.Fields {
		row = append(row, f.Name+"="+f.Value) // copies: r is only valid during the call
	}
	s.rows = append(s.rows, row)
	return nil
}

// TestRemoteRows reads a node's result lines: escapes in names and
// values, non-ASCII, null, numbers and booleans, blank lines, a last line
// without a newline, a line longer than the reader's buffer, duplicate
// names; the rows a pipe keeps (sort) are not overwritten by the lines
// read after them. A line that is not an object of values fails with its
// number.
func TestRemoteRows(t *testing.T) {
	long := strings.Repeat("x\"y\\é", 40000) // 280 KB decoded, more quoted
	longQ, _ := json.Marshal(long)
	body := strings.Join([]string{
		`{"a":"1","b":"plain"}`,
		`{"a":"2","b":"tab\there \"q\" \\ \u00e9 \ud83d\ude00 用户"}`,
		``,
		`  {"a":"3", "b":null, "n":12.50, "t":true, "f":false}`,
		`{"a":"4","b":` + string(longQ) + `}`,
		`{"a":"5","\u0062":"escaped name","b":"dup"}`,
		`{"a":"0","b":"last, no newline"}`,
	}, "\n")
	q, err := query.Parse(`* | sort by (a)`, diffNow)
	if err != nil {
		t.Fatal(err)
	}
	rp := query.PlanRemote(q)
	var out orderedSink
	m, err := rp.NewMerger(query.Options{}, &out)
	if err != nil {
		t.Fatal(err)
	}
	// Through a reader that returns a few bytes at a time, so that lines
	// cross the reader's refills.
	if err := m.AddRows(iotest.HalfReader(strings.NewReader(body))); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Finish(); err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"a=0", "b=last, no newline"},
		{"a=1", "b=plain"},
		{"a=2", "b=tab\there \"q\" \\ é 😀 用户"},
		{"a=3", "b=", "n=12.5", "t=true", "f=false"},
		{"a=4", "b=" + long},
		{"a=5", "b=escaped name", "b=dup"},
	}
	if len(out.rows) != len(want) {
		t.Fatalf("%d rows, want %d: %q", len(out.rows), len(want), out.rows)
	}
	for i := range want {
		// The merge's rows come out with their fields sorted.
		slices.Sort(out.rows[i])
		if slices.Sort(want[i]); !slices.Equal(out.rows[i], want[i]) {
			t.Errorf("row %d: %.200q, want %.200q", i, out.rows[i], want[i])
		}
	}

	for _, c := range []struct{ body, err string }{
		{"{\"a\":\"1\"}\n{\"a\":[1]}\n", "line 2: field \"a\": want a string value, got array"},
		{"{\"a\":\"1\"}\n\nnot json\n", "line 3"},
		{`{"a":"1`, "line 1"},
		{"{\"a\":\"1\"}\n[\"a\"]", "line 2"},
		{"{\"a\":\"\xff\"}", "line 1"},
	} {
		m, _ := rp.NewMerger(query.Options{}, &orderedSink{})
		if err := m.AddRows(strings.NewReader(c.body)); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, want an error with %q", c.body, err, c.err)
		}
	}
}

// TestRemoteNoGroups: nodes where nothing matches. A stats pipe without
// by-fields still answers its one row (count 0), one with by-fields none.
func TestRemoteNoGroups(t *testing.T) {
	path := writeGen(t, 4, 64<<10)
	paths := splitFile(t, readLines(t, path), 2)
	for q, want := range map[string]int{
		`nosuchfield:x | stats count() n, sum(bytes) s`:                          1,
		`nosuchfield:x | stats by (service) count() n`:                           0,
		`nosuchfield:x | stats count() n | sort by (n)`:                          1,
		`nosuchfield:x | stats by (path) count() n | sort by (n) desc | limit 3`: 0,
	} {
		rows, err := runRemote(t, q, paths)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(rows) != want || want == 1 && rows[0]["n"] != "0" {
			t.Errorf("%s: %v, want %d rows with n 0", q, rows, want)
		}
	}
}

// FuzzAddPartial: whatever bytes a node sends, the front neither panics
// nor hangs: AddPartial refuses them, or Finish answers or fails. The
// seeds are whole and cut states of a query with every kind of state
// (counts, sums, a quantile sample, a count_uniq set, min and max).
func FuzzAddPartial(f *testing.F) {
	const text = `* | stats by (service) count() n, sum(bytes) s, quantile(0.5, latency_ms) q, count_uniq(user_id) u, min(path) lo, max(latency_ms) hi`
	q, err := query.Parse(text, diffNow)
	if err != nil {
		f.Fatal(err)
	}
	rp := query.PlanRemote(q)
	path := writeGen(f, 6, 32<<10)
	var b bytes.Buffer
	if _, err := query.Run(context.Background(), rp.Remote, []string{path}, fileread.Config{}, query.Options{Partial: &b}, nil); err != nil {
		f.Fatal(err)
	}
	full := b.Bytes()
	f.Add(full)
	f.Add(full[:len(full)/2])
	f.Add(full[:len(full)-9])
	f.Fuzz(func(t *testing.T, src []byte) {
		var out rowsSink
		m, err := rp.NewMerger(query.Options{}, &out)
		if err != nil {
			t.Fatal(err)
		}
		if m.AddPartial(src) == nil {
			m.Finish()
		}
	})
}

// TestRemoteDamagedStates: states of every kind (quantile samples and
// sketches, count_uniq sets and HyperLogLogs, values, row_max) with a byte
// or two changed never panic the front: AddPartial refuses them, or Finish
// answers or fails. (Run at 20,000 changes per case while writing it.)
func TestRemoteDamagedStates(t *testing.T) {
	path := writeGen(t, 6, 64<<10)
	for _, text := range []string{
		`* | stats by (service) count() n, sum(bytes) s, quantile(0.5, latency_ms) q, count_uniq(user_id) u, min(path) lo, max(latency_ms) hi`,
		`* | stats by (service) uniq_values(level) v, values(method) w, row_max(latency_ms) r, median(bytes) m`,
	} {
		for _, approx := range []bool{false, true} {
			q, err := query.Parse(text, diffNow)
			if err != nil {
				t.Fatal(err)
			}
			rp := query.PlanRemote(q)
			var b bytes.Buffer
			if _, err := query.Run(context.Background(), rp.Remote, []string{path}, fileread.Config{}, query.Options{Partial: &b, Approx: approx}, nil); err != nil {
				t.Fatal(err)
			}
			full := b.Bytes()
			rng := rand.New(rand.NewPCG(1, 2))
			taken := 0
			for range 1000 {
				bad := bytes.Clone(full)
				for range 1 + rng.IntN(2) {
					bad[rng.IntN(len(bad)-8)] = byte(rng.IntN(256))
				}
				var out rowsSink
				m, err := rp.NewMerger(query.Options{}, &out)
				if err != nil {
					t.Fatal(err)
				}
				if m.AddPartial(bad) == nil {
					taken++
					m.Finish()
				}
			}
			if taken == 0 {
				t.Errorf("%s (approx %v): every damaged state refused: the merge of damaged states went untested", text, approx)
			}
		}
	}
}
