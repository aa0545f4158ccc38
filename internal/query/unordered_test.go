package query_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
)

// TestUnorderedInputs: with Options.Unordered and several inputs read in
// parallel, a query gives the rows it gives in file order, in some order;
// with a limit, that many of them.
func TestUnorderedInputs(t *testing.T) {
	data, err := os.ReadFile(writeGen(t, 3, 2<<20))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var inputs []string
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i := range 5 {
		part := bytes.Join(lines[i*len(lines)/5:(i+1)*len(lines)/5], nil)
		name := filepath.Join(dir, string(rune('a'+i))+".log")
		if err := os.WriteFile(name, part, 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, name)
	}
	run := func(text string, cfg fileread.Config, opts query.Options) []string {
		t.Helper()
		q, err := query.Parse(text, diffNow)
		if err != nil {
			t.Fatal(err)
		}
		var s rowsSink
		if _, err := query.Run(t.Context(), q, inputs, cfg, opts, &s); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range s.rows {
			out = append(out, r["_time"]+" "+r["_msg"])
		}
		return out
	}
	const text = `level:error | fields _time, _msg`
	want := run(text, fileread.Config{Workers: 1}, query.Options{})
	if len(want) < 20 {
		t.Fatalf("only %d rows: a test of nothing", len(want))
	}
	cfg := fileread.Config{Workers: 3, ChunkSize: 4 << 10, ParallelInputs: 3}
	got := run(text, cfg, query.Options{Unordered: true})
	slices.Sort(got)
	sorted := slices.Clone(want)
	slices.Sort(sorted)
	if !slices.Equal(got, sorted) {
		t.Fatalf("unordered: %d rows, want the %d of file order", len(got), len(want))
	}
	limited := run(text+" | limit 7", cfg, query.Options{Unordered: true})
	if len(limited) != 7 {
		t.Fatalf("unordered limit 7: %d rows", len(limited))
	}
	for _, r := range limited {
		if !slices.Contains(want, r) {
			t.Fatalf("unordered limit 7: row %q is not a result", r)
		}
	}
}
