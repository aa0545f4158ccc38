package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/query"
)

// TestQueryMerge writes three files whose lines are in time order but for
// swaps of neighbours (and lines without a time after some rows), and
// checks that --merge prints every row once, in the order a stable sort of
// all rows by time gives (a line without time goes with the row before it).
func TestQueryMerge(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type want struct {
		t    int64
		file int
		seq  int
		id   string
	}
	var all []want
	for f := range 3 {
		var b strings.Builder
		times := make([]int64, 400)
		for i := range times {
			times[i] = int64(i*3+f) * int64(time.Millisecond) * 7
		}
		for i := 0; i+1 < len(times); i += 2 {
			if rng.IntN(3) == 0 {
				times[i], times[i+1] = times[i+1], times[i] // slightly unordered
			}
		}
		seq := 0
		for i, ts := range times {
			id := fmt.Sprintf("f%d-%d", f, i)
			fmt.Fprintf(&b, `{"_time":%q,"id":%q}`+"\n", base.Add(time.Duration(ts)).Format(time.RFC3339Nano), id)
			all = append(all, want{ts, f, seq, id})
			seq++
			if i%50 == 7 {
				b.WriteString("a continuation of " + id + "\n")
				all = append(all, want{ts, f, seq, "cont " + id})
				seq++
			}
		}
		writeLogs(t, dir, fmt.Sprintf("%d.log", f), b.String())
	}
	slices.SortStableFunc(all, func(a, b want) int {
		switch {
		case a.t != b.t:
			return cmp.Compare(a.t, b.t)
		case a.file != b.file:
			return a.file - b.file
		}
		return a.seq - b.seq
	})
	ids := func(out []byte) []string {
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var m map[string]string
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			if m["id"] != "" {
				got = append(got, m["id"])
			} else {
				got = append(got, "cont "+strings.TrimPrefix(m["_msg"], "a continuation of "))
			}
		}
		return got
	}
	var wantIDs []string
	for _, w := range all {
		wantIDs = append(wantIDs, w.id)
	}
	for _, workers := range []string{"1", "4"} {
		code, out, stderr := runCLI(t, "query", "--workers", workers, "--merge", "--merge-window", "4", "*", dir)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if got := ids(out); !slices.Equal(got, wantIDs) {
			for i := range min(len(got), len(wantIDs)) {
				if got[i] != wantIDs[i] {
					t.Fatalf("workers %s: row %d is %s, want %s (%d rows, want %d)", workers, i, got[i], wantIDs[i], len(got), len(wantIDs))
				}
			}
			t.Fatalf("workers %s: %d rows, want %d", workers, len(got), len(wantIDs))
		}
	}
	// limit and the pipes after it run on the merged rows.
	code, out, stderr := runCLI(t, "query", "--merge", "* | offset 2 | limit 3 | fields id", filepath.Join(dir, "*.log"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := ids(out); !slices.Equal(got, wantIDs[2:5]) {
		t.Fatalf("offset 2 | limit 3: %v, want %v", got, wantIDs[2:5])
	}
	for _, c := range []struct{ q, want string }{
		{"* | stats count()", "its result does not depend on the order"},
		{"* | fields id", "keep _time"},
	} {
		code, _, stderr := runCLI(t, "query", "--merge", c.q, dir)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Fatalf("%s: exit %d, stderr %q", c.q, code, stderr)
		}
	}
}

type discardSink struct{}

func (discardSink) WriteRow(*query.Row) error { return nil }

// BenchmarkMerge measures the merge itself: four inputs of rows in time
// order but for swapped neighbours, already parsed, put in order.
func BenchmarkMerge(b *testing.B) {
	const inputs, n = 4, 20_000
	rows := make([][]*query.Row, inputs)
	size := 0
	for i := range rows {
		for j := range n {
			ts := int64(j*inputs + i)
			if j%2 == 1 {
				ts -= inputs // one place early
			}
			r := &query.Row{Time: ts, HasTime: true, Fields: []query.Field{{Name: "_msg", Value: "a log line of some length"}}}
			rows[i] = append(rows[i], r)
			size += len(r.Fields[0].Value)
		}
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		ctx := context.Background()
		srcs := make([]*mergeSource, inputs)
		for i := range srcs {
			ch := make(chan []*query.Row, 4)
			srcs[i] = &mergeSource{in: i, ch: ch}
			go func() {
				for k := 0; k < n; k += mergeBatch {
					ch <- slices.Clone(rows[i][k:min(k+mergeBatch, n)]) // fill clears what it takes
				}
				close(ch)
			}()
		}
		pl, err := query.NewPipeline(nil, discardSink{})
		if err != nil {
			b.Fatal(err)
		}
		if err := mergeInOrder(ctx, srcs, defaultMergeWindow, pl); err != nil {
			b.Fatal(err)
		}
	}
}
