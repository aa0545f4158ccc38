package query

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/fileread"
)

// msgSink keeps the _msg of every row it is given, in order.
type msgSink struct{ msgs []string }

func (s *msgSink) WriteRow(r *Row) error {
	s.msgs = append(s.msgs, strings.Clone(r.Get("_msg")))
	return nil
}

// TestSkipLongLinesInOrder runs a file-ordered query over a file with
// over-long lines (first, in a run in the middle, and last without a final
// newline) with fileread's SkipLongLines: the other rows must all come out,
// in file order, with any number of workers and every strategy.
func TestSkipLongLinesInOrder(t *testing.T) {
	const maxLine = 100
	long := func(c string) string { return strings.Repeat(c, maxLine+1+len(c)*500) }
	var lines, want []string
	lines = append(lines, long("a"))
	for i := range 300 {
		msg := fmt.Sprintf("line %04d %s", i, strings.Repeat("x", i%60))
		lines = append(lines, msg)
		want = append(want, msg)
		if i == 150 {
			lines = append(lines, long("b"), long("c"), strings.Repeat("d", maxLine+1))
		}
	}
	lines = append(lines, long("e"))
	path := filepath.Join(t.TempDir(), "long.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}

	q, err := Parse(`* | fields _msg`, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, strategy := range []fileread.Strategy{fileread.Mmap, fileread.Pread, fileread.Bufio, fileread.Stream} {
		for _, workers := range []int{1, 3} {
			cfg := fileread.Config{Strategy: strategy, Workers: workers, ChunkSize: 64, MmapWindow: 4096, MaxLineSize: maxLine, SkipLongLines: true}
			var sink msgSink
			if _, err := Run(context.Background(), q, []string{path}, cfg, Options{}, &sink); err != nil {
				t.Fatalf("%s workers=%d: %v", strategy, workers, err)
			}
			if !slices.Equal(sink.msgs, want) {
				t.Fatalf("%s workers=%d: got %d rows, want %d (first difference at %d)", strategy, workers, len(sink.msgs), len(want), firstDifference(sink.msgs, want))
			}
		}
	}
}

func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
