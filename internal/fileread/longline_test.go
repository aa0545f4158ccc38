package fileread

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// textLine renders a line of n bytes before its '\n' (the last one a '\r'
// when crlf).
func textLine(r *rand.Rand, n int, crlf bool) []byte {
	b := make([]byte, n, n+1)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	if crlf && n > 0 {
		b[n-1] = '\r'
	}
	return append(b, '\n')
}

// longLineLayouts place over-long lines where the strategies' code paths
// differ: first, in the middle, last with and without a final newline, in
// runs, alone, in numbers over MaxLongLineSamples, and at the limit.
var longLineLayouts = []string{"start", "middle", "end", "end-no-newline", "run", "only", "only-no-newline", "many", "boundary", "random"}

// longLineInput makes an input for layout: short lines of up to maxLine
// bytes (some exactly maxLine, some CRLF) and over-long ones of maxLine+1 up
// to several pages, longer than the windows and chunks of the tests.
func longLineInput(r *rand.Rand, maxLine int, layout string) []byte {
	short := func() []byte {
		n := r.IntN(maxLine + 1)
		if r.IntN(10) == 0 {
			n = maxLine
		}
		return textLine(r, n, r.IntN(8) == 0)
	}
	long := func() []byte {
		n := maxLine + 1
		switch x := r.IntN(10); {
		case x < 5:
			n += r.IntN(maxLine)
		case x < 8:
			n += r.IntN(3 * int(pageSize))
		}
		return textLine(r, n, r.IntN(8) == 0)
	}
	shorts := func() []byte {
		var b []byte
		for range 1 + r.IntN(30) {
			b = append(b, short()...)
		}
		return b
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	noNewline := func(b []byte) []byte { return b[:len(b)-1] }
	switch layout {
	case "start":
		return cat(long(), shorts())
	case "middle":
		return cat(shorts(), long(), shorts())
	case "end":
		return cat(shorts(), long())
	case "end-no-newline":
		return noNewline(cat(shorts(), long()))
	case "run":
		return cat(shorts(), long(), long(), long(), shorts(), long(), long())
	case "only":
		return long()
	case "only-no-newline":
		return noNewline(long())
	case "many":
		var b []byte
		for range 25 {
			b = cat(b, long(), short())
		}
		return b
	case "boundary":
		return cat(textLine(r, maxLine, false), textLine(r, maxLine+1, false), textLine(r, maxLine, true),
			textLine(r, maxLine+1, true), short(), noNewline(textLine(r, maxLine+1, false)))
	}
	var b []byte
	for range 40 {
		if r.IntN(100) < 15 {
			b = append(b, long()...)
		} else {
			b = append(b, short()...)
		}
	}
	if r.IntN(2) == 0 {
		b = noNewline(b)
	}
	return b
}

// splitLongLines is the reference for SkipLongLines: it returns data without
// its lines longer than maxLine, those lines' byte ranges (with their '\n')
// and the lines as LongLines of input idx.
func splitLongLines(data []byte, maxLine, idx int, name string) (kept []byte, ranges [][2]int64, long []LongLine) {
	for pos := 0; pos < len(data); {
		n := bytes.IndexByte(data[pos:], '\n')
		end := pos + n + 1
		if n < 0 {
			n, end = len(data)-pos, len(data)
		}
		if n > maxLine {
			ranges = appendRange(ranges, int64(pos), int64(end))
			long = append(long, LongLine{Input: idx, Name: name, Offset: int64(pos), Length: int64(n)})
		} else {
			kept = append(kept, data[pos:end]...)
		}
		pos = end
	}
	return kept, ranges, long
}

// appendRange appends [from, to) to ranges, merging it with a last range
// that ends at from.
func appendRange(ranges [][2]int64, from, to int64) [][2]int64 {
	if n := len(ranges); n > 0 && ranges[n-1][1] == from {
		ranges[n-1][1] = to
		return ranges
	}
	return append(ranges, [2]int64{from, to})
}

// checkSkipped verifies the SkipLongLines contract for one input's chunks in
// Seq order: each chunk covers [offset, offset+len(data)+skip), the chunks
// cover the input without gaps, the skipped bytes are exactly the over-long
// lines and the data gives the reference lines without them.
func checkSkipped(t *testing.T, desc string, chunks []gotChunk, data []byte, maxLine int) {
	t.Helper()
	kept, wantRanges, _ := splitLongLines(data, maxLine, 0, "")
	var pos int64
	var got []byte
	var ranges [][2]int64
	for i, c := range chunks {
		if c.offset != pos {
			t.Fatalf("%s: chunk %d at offset %d, want %d", desc, i, c.offset, pos)
		}
		if i > 0 && c.seq <= chunks[i-1].seq {
			t.Fatalf("%s: chunk seqs not increasing: %d then %d", desc, chunks[i-1].seq, c.seq)
		}
		end := pos + int64(len(c.data))
		if end+c.skip > int64(len(data)) || c.skip < 0 {
			t.Fatalf("%s: chunk %d covers [%d, %d+%d), past the input's %d bytes", desc, i, pos, end, c.skip, len(data))
		}
		if !bytes.Equal(c.data, data[pos:end]) {
			t.Fatalf("%s: chunk %d data differs from the input at offset %d", desc, i, pos)
		}
		if len(c.data) > 0 && (i < len(chunks)-1 || c.skip > 0) && c.data[len(c.data)-1] != '\n' {
			t.Fatalf("%s: chunk %d of %d (skip %d) does not end with a newline", desc, i, len(chunks), c.skip)
		}
		got = append(got, c.data...)
		if c.skip > 0 {
			ranges = appendRange(ranges, end, end+c.skip)
		}
		pos = end + c.skip
	}
	if pos != int64(len(data)) {
		t.Fatalf("%s: chunks cover %d bytes, want %d", desc, pos, len(data))
	}
	if !slices.Equal(ranges, wantRanges) {
		t.Fatalf("%s: skipped ranges %v, want the long lines' %v", desc, ranges, wantRanges)
	}
	// The lines handed out are the reference lines without the long ones.
	var want []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l == "" {
			continue
		}
		if len(strings.TrimSuffix(l, "\n")) <= maxLine {
			want = append(want, referenceLines([]byte(l))...)
		}
	}
	if lines := referenceLines(got); !slices.Equal(lines, want) {
		t.Fatalf("%s: got %d lines, want %d (first difference at %d)", desc, len(lines), len(want), firstDiff(lines, want))
	}
	if !bytes.Equal(got, kept) {
		t.Fatalf("%s: data joins to %d bytes, want %d", desc, len(got), len(kept))
	}
}

// scanSkipping scans inputs (whose bytes, decompressed, are datas) with
// SkipLongLines and checks chunks, InputDone and Stats against the
// reference.
func scanSkipping(t *testing.T, desc string, names []string, datas [][]byte, cfg Config) {
	t.Helper()
	cfg.SkipLongLines = true
	done := make([]int64, len(names))
	for i := range done {
		done[i] = -1
	}
	cfg.InputDone = func(i int, size int64) { done[i] = size }
	per, st, err := collect(t, names, cfg)
	if err != nil {
		t.Fatalf("%s: %v", desc, err)
	}
	var bytesKept int64
	var long []LongLine
	for i := range names {
		checkSkipped(t, fmt.Sprintf("%s input %d", desc, i), per[i], datas[i], cfg.MaxLineSize)
		if done[i] != int64(len(datas[i])) {
			t.Fatalf("%s input %d: InputDone reported %d bytes, want %d", desc, i, done[i], len(datas[i]))
		}
		kept, _, l := splitLongLines(datas[i], cfg.MaxLineSize, i, names[i])
		bytesKept += int64(len(kept))
		long = append(long, l...)
	}
	if st.Bytes != bytesKept {
		t.Fatalf("%s: Stats.Bytes = %d, want %d", desc, st.Bytes, bytesKept)
	}
	if st.LongLines != int64(len(long)) {
		t.Fatalf("%s: Stats.LongLines = %d, want %d", desc, st.LongLines, len(long))
	}
	if want := long[:min(len(long), MaxLongLineSamples)]; !slices.Equal(st.LongLineSamples, want) {
		t.Fatalf("%s: Stats.LongLineSamples =\n%v\nwant\n%v", desc, st.LongLineSamples, want)
	}
}

func TestSkipLongLines(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 8))
	for _, maxLine := range []int{300, 2500} {
		for _, layout := range longLineLayouts {
			// Three inputs per scan: the layout between two random ones,
			// so that samples come from several inputs.
			var names []string
			var datas [][]byte
			for i, l := range []string{"random", layout, "middle"} {
				data := longLineInput(r, maxLine, l)
				names = append(names, writeFile(t, dir, fmt.Sprintf("%s-%d-%d.log", layout, maxLine, i), data))
				datas = append(datas, data)
			}
			for _, cfg := range strategyConfigs(r) {
				if r.IntN(2) == 0 && cfg.ChunkSize > 0 {
					cfg.ChunkSize = 1 + r.IntN(2*maxLine) // often capped at maxLine
				}
				cfg.MaxLineSize = maxLine
				for _, workers := range []int{1, 3} {
					cfg.Workers = workers
					desc := fmt.Sprintf("max=%d %s %s chunk=%d window=%d workers=%d", maxLine, layout, cfg.Strategy, cfg.ChunkSize, cfg.MmapWindow, workers)
					scanSkipping(t, desc, names, datas, cfg)
				}
			}
		}
	}
}

func TestSkipLongLinesCompressed(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(9, 10))
	const maxLine = 700
	for _, layout := range longLineLayouts {
		var names []string
		var datas [][]byte
		for i, l := range []string{layout, "random"} {
			data := longLineInput(r, maxLine, l)
			z := gzipBytes(t, data)
			if i == 1 {
				z = zstdBytes(t, data)
			}
			names = append(names, writeFile(t, dir, fmt.Sprintf("%s-%d.log.z", layout, i), z))
			datas = append(datas, data)
		}
		for _, cfg := range []Config{
			{Strategy: Stream, ChunkSize: 1 + r.IntN(2*maxLine)},
			{Strategy: Stream},
			{Strategy: Auto, ChunkSize: 1 + r.IntN(maxLine)},
		} {
			cfg.MaxLineSize = maxLine
			for _, workers := range []int{1, 3} {
				cfg.Workers = workers
				scanSkipping(t, fmt.Sprintf("%s %s chunk=%d workers=%d", layout, cfg.Strategy, cfg.ChunkSize, workers), names, datas, cfg)
			}
		}
		// Stdin, plain and compressed.
		for _, in := range [][]byte{datas[0], gzipBytes(t, datas[0])} {
			cfg := Config{Stdin: bytes.NewReader(in), ChunkSize: 1 + r.IntN(maxLine), MaxLineSize: maxLine, Workers: 2}
			scanSkipping(t, fmt.Sprintf("%s stdin chunk=%d", layout, cfg.ChunkSize), []string{"-"}, datas[:1], cfg)
		}
	}
}

// TestSkipLongLinesMemory checks that skipping a line much longer than
// MaxLineSize does not buffer it: the heap allocated by a scan stays far
// below the line's length.
func TestSkipLongLinesMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 64 MiB file")
	}
	dir := t.TempDir()
	const maxLine = 64 << 10
	line := bytes.Repeat([]byte("x"), 64<<20)
	data := bytes.Join([][]byte{[]byte("first\n"), line, []byte("\nlast\n")}, nil)
	p := writeFile(t, dir, "huge.log", data)
	gz := writeFile(t, dir, "huge.log.gz", gzipBytes(t, data))
	for _, tc := range []struct {
		in  string
		cfg Config
	}{
		{p, Config{Strategy: Mmap, MmapWindow: 1 << 20}},
		{p, Config{Strategy: Mmap}},
		{p, Config{Strategy: Pread}},
		{p, Config{Strategy: Bufio}},
		{p, Config{Strategy: Stream}},
		{gz, Config{Strategy: Stream}},
	} {
		tc.cfg.MaxLineSize, tc.cfg.SkipLongLines, tc.cfg.Workers = maxLine, true, 2
		desc := fmt.Sprintf("%s %s window=%d", filepath.Base(tc.in), tc.cfg.Strategy, tc.cfg.MmapWindow)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		per, st, err := collect(t, []string{tc.in}, tc.cfg)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatalf("%s: %v", desc, err)
		}
		checkSkipped(t, desc, per[0], data, maxLine)
		want := LongLine{Name: tc.in, Offset: 6, Length: int64(len(line))}
		if st.LongLines != 1 || !slices.Equal(st.LongLineSamples, []LongLine{want}) {
			t.Fatalf("%s: %d long lines %v, want %v", desc, st.LongLines, st.LongLineSamples, want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Fatalf("%s: the scan allocated %d bytes skipping a %d-byte line", desc, alloc, len(line))
		}
	}
}
