package query_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
)

// BenchmarkMergePartial measures the front of a fan-out: merging one
// node's partial stats state (many groups; a large count_uniq set), per
// byte of state.
func BenchmarkMergePartial(b *testing.B) {
	path := writeGen(b, 13, 16<<20)
	for _, text := range []string{
		`* | stats by (trace_id) count() n, sum(bytes) s`,
		`* | stats count_uniq(trace_id) u`,
	} {
		b.Run(text, func(b *testing.B) {
			q, err := query.Parse(text, diffNow)
			if err != nil {
				b.Fatal(err)
			}
			rp := query.PlanRemote(q)
			var state bytes.Buffer
			if _, err := query.Run(context.Background(), rp.Remote, []string{path}, fileread.Config{}, query.Options{Partial: &state}, nil); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(state.Len()))
			b.ReportAllocs()
			for b.Loop() {
				mergeOnce(b, rp, func(m *query.Merger) error { return m.AddPartial(state.Bytes()) })
			}
		})
	}
}

// BenchmarkMergeTwoPartials measures the front of a fan-out over two
// nodes that hold alternate lines of the same logs: both nodes' states of
// a high-cardinality group-by (most keys on both nodes) merged, then the
// pipes after stats, per byte of the two states.
func BenchmarkMergeTwoPartials(b *testing.B) {
	lines := readLines(b, writeGen(b, 17, 96<<20))
	dir := b.TempDir()
	var halves [2][]string
	for i, l := range lines {
		halves[i%2] = append(halves[i%2], l)
	}
	text := `* | stats by (path) sum(bytes) b | sort by (b) desc | limit 10`
	q, err := query.Parse(text, diffNow)
	if err != nil {
		b.Fatal(err)
	}
	rp := query.PlanRemote(q)
	var states [2][]byte
	size := 0
	for i, h := range halves {
		path := filepath.Join(dir, fmt.Sprintf("node%d.ndjson", i))
		if err := os.WriteFile(path, []byte(strings.Join(h, "\n")+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		var state bytes.Buffer
		if _, err := query.Run(context.Background(), rp.Remote, []string{path}, fileread.Config{}, query.Options{Partial: &state}, nil); err != nil {
			b.Fatal(err)
		}
		states[i] = state.Bytes()
		size += state.Len()
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var rows int
	for b.Loop() {
		var out rowsSink
		m, err := rp.NewMerger(query.Options{}, &out)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range states {
			if err := m.AddPartial(s); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := m.Finish(); err != nil {
			b.Fatal(err)
		}
		rows = len(out.rows)
	}
	if rows != 10 {
		b.Fatalf("%d rows, want 10", rows)
	}
}

// BenchmarkAddRows measures the front of a fan-out that moves rows: a
// node's 16 MiB of generated logs as the rows of `* | fields ...`, as
// /select/logsql/query writes them, read into the merge of `uniq by
// (level)` (which runs on the front and keeps a few rows), per byte of
// rows. json-tokens reads the same bytes with encoding/json's
// Decoder.Token, as AddRows did before: the baseline.
func BenchmarkAddRows(b *testing.B) {
	path := writeGen(b, 19, 16<<20)
	q, err := query.Parse(`* | fields _time, level, service, trace_id, _msg | uniq by (level)`, diffNow)
	if err != nil {
		b.Fatal(err)
	}
	rp := query.PlanRemote(q)
	if rp.Partial {
		b.Fatal("a plan of rows wanted")
	}
	var rows jsonRowsSink
	if _, err := query.Run(context.Background(), rp.Remote, []string{path}, fileread.Config{}, query.Options{Unordered: true}, &rows); err != nil {
		b.Fatal(err)
	}
	body := rows.b.Bytes()
	b.Run("AddRows", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if out := mergeOnce(b, rp, func(m *query.Merger) error { return m.AddRows(bytes.NewReader(body)) }); len(out.rows) == 0 {
				b.Fatal("no rows")
			}
		}
	})
	b.Run("json-tokens", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			dec := json.NewDecoder(bufio.NewReaderSize(bytes.NewReader(body), 64<<10))
			n := 0
			for {
				t, err := dec.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				if _, ok := t.(string); ok {
					n++
				}
			}
			if n == 0 {
				b.Fatal("no strings")
			}
		}
	})
}

// mergeOnce runs one merge of rp: a Merger, add, Finish; it returns the
// rows written.
func mergeOnce(b *testing.B, rp *query.RemotePlan, add func(*query.Merger) error) *rowsSink {
	var out rowsSink
	m, err := rp.NewMerger(query.Options{}, &out)
	if err != nil {
		b.Fatal(err)
	}
	if err := add(m); err != nil {
		b.Fatal(err)
	}
	if _, err := m.Finish(); err != nil {
		b.Fatal(err)
	}
	return &out
}
