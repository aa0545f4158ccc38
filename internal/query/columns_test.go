package query

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/gen"
	"github.com/spate-io/spate/internal/segindex"
	"github.com/spate-io/spate/internal/segment"
)

// BenchmarkIndexBuild is the CPU a segment's sidecar costs: every line
// read by NewIndexLines into a segindex.Builder, 1 MiB blocks of 128 KiB
// frames as the compressor gives them.
func BenchmarkIndexBuild(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Size: 16 << 20, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	var blocks [][]byte
	for len(data) > 0 {
		n := min(len(data), 1<<20)
		n = bytes.LastIndexByte(data[:n], '\n') + 1
		blocks = append(blocks, data[:n])
		data = data[n:]
	}
	var frames [][]segindex.Frame
	for _, blk := range blocks {
		frames = append(frames, segment.RawFrames(nil, blk))
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		bl, err := segindex.NewBuilder(NewIndexLines())
		if err != nil {
			b.Fatal(err)
		}
		bl.Numbers = IndexNumbers
		for i, blk := range blocks {
			bl.AddFrames(blk, 0, frames[i])
		}
		bl.Finish(1, 1)
	}
}

// TestLiteralRows checks literalRows against strings.Contains per row,
// on plain columns whose values hold the literal at their edges, hits
// that cross from one value into the next through its length byte, and
// absent and empty values.
func TestLiteralRows(t *testing.T) {
	lit := "ab\x05cd" // \x05: the length byte of a 4-byte value
	cases := [][]string{
		{"xab", "cdyy", "zab\x05cdz"},
		{"ab\x05cd", "", "ab\x05c", "dab\x05cd", "ab\x05cdab\x05cd"},
		{"", "", ""},
		{"ab", "\x05cd"},
		{"xxab\x05", "cdxx", "ab\x05cd"},
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for range 300 {
		var vals []string
		for range rng.IntN(12) {
			var b strings.Builder
			for range rng.IntN(8) {
				b.WriteString([]string{"a", "b", "\x05", "c", "d", "ab\x05cd", "x"}[rng.IntN(7)])
			}
			vals = append(vals, b.String())
		}
		cases = append(cases, vals)
	}
	f := newFinder([]byte(lit))
	for _, vals := range cases {
		// A plain column: per row 0 (absent, here for "") or 1 + length
		// and the value.
		raw := []byte{'p'}
		for _, v := range vals {
			if v == "" {
				raw = append(raw, 0)
				continue
			}
			raw = binary.AppendUvarint(raw, uint64(len(v))+1)
			raw = append(raw, v...)
		}
		var c segindex.StringColumn
		if err := segindex.ParseString(raw, len(vals), &c); err != nil {
			t.Fatal(err)
		}
		var want []int32
		for r, v := range vals {
			if strings.Contains(v, lit) {
				want = append(want, int32(r))
			}
		}
		if got := literalRows(nil, &c, raw, f); !slices.Equal(got, want) {
			t.Errorf("%q: rows %v, want %v", vals, got, want)
		}
	}
}

// TestIndexLinesTimeZone checks that NewIndexLines vouches for a line's
// time (timeOK) only when its value reads the same in every zone: the
// check looks at the value as the line holds it, not at the _time the row
// holds, which is written again in UTC.
func TestIndexLinesTimeZone(t *testing.T) {
	read := NewIndexLines()
	for _, c := range []struct {
		line   string
		timeOK bool
	}{
		{`{"_time":"2026-01-02T10:00:00Z","_msg":"a"}`, true},
		{`{"ts":"2026-01-02 10:00:00","msg":"no zone"}`, false},
		{`{"_time":"2026-01-02T10:00:00","_msg":"no zone"}`, false},
		{`{"ts":"2026-01-02T10:00:00+02:00","msg":"an offset"}`, true},
		{`{"ts":"1767348000","msg":"unix seconds"}`, true},
		{`{"msg":"no time"}`, false},
		{`plain text after a line without a zone`, false},
		{`{"ts":"2026-01-02 10:00:00.5","msg":"no zone"}`, false},
		{`{"_time":"2026-01-02T10:00:00.123Z","_msg":"b"}`, true},
	} {
		_, timeOK, _ := read([]byte(c.line), func(string, string) {})
		if timeOK != c.timeOK {
			t.Errorf("%s: timeOK %v, want %v", c.line, timeOK, c.timeOK)
		}
	}
}
