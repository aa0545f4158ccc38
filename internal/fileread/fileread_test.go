package fileread

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// referenceLines is the naive reader every strategy must agree with: split
// the whole input on '\n', dropping one "\r" before it.
func referenceLines(data []byte) []string {
	var lines []string
	for len(data) > 0 {
		var line []byte
		line, data = NextLine(data)
		lines = append(lines, string(line))
	}
	return lines
}

type gotChunk struct {
	input  int
	seq    int64
	offset int64
	data   []byte
	skip   int64
	strat  Strategy
}

// collect scans inputs and returns, per input, the chunks in Seq order.
func collect(t *testing.T, inputs []string, cfg Config) ([][]gotChunk, Stats, error) {
	t.Helper()
	var mu sync.Mutex
	var got []gotChunk
	st, err := Scan(context.Background(), inputs, cfg, func(_ int, c *Chunk) error {
		if len(c.Data) == 0 && c.Skip == 0 {
			return errors.New("empty chunk handed out")
		}
		if c.Skip != 0 && !cfg.SkipLongLines {
			return fmt.Errorf("chunk at offset %d skips %d bytes without SkipLongLines", c.Offset, c.Skip)
		}
		g := gotChunk{input: c.Input, seq: c.Seq, offset: c.Offset, data: bytes.Clone(c.Data), skip: c.Skip, strat: c.Strategy}
		mu.Lock()
		got = append(got, g)
		mu.Unlock()
		return nil
	})
	per := make([][]gotChunk, len(inputs))
	for _, g := range got {
		per[g.input] = append(per[g.input], g)
	}
	for _, p := range per {
		slices.SortFunc(p, func(a, b gotChunk) int { return int(a.seq - b.seq) })
	}
	return per, st, err
}

// checkChunks verifies the chunk contract against the input's bytes: chunks
// are contiguous, end on '\n' except the last, and give the reference lines.
func checkChunks(t *testing.T, desc string, chunks []gotChunk, want []byte) {
	t.Helper()
	var all []byte
	for i, c := range chunks {
		if c.offset != int64(len(all)) {
			t.Fatalf("%s: chunk %d at offset %d, want %d", desc, i, c.offset, len(all))
		}
		if i < len(chunks)-1 && c.data[len(c.data)-1] != '\n' {
			t.Fatalf("%s: chunk %d of %d does not end with a newline", desc, i, len(chunks))
		}
		if i > 0 && c.seq <= chunks[i-1].seq {
			t.Fatalf("%s: chunk seqs not increasing: %d then %d", desc, chunks[i-1].seq, c.seq)
		}
		all = append(all, c.data...)
	}
	if !bytes.Equal(all, want) {
		t.Fatalf("%s: chunks join to %d bytes that differ from the input's %d", desc, len(all), len(want))
	}
	var lines []string
	for _, c := range chunks {
		lines = append(lines, referenceLines(c.data)...)
	}
	if wl := referenceLines(want); !slices.Equal(lines, wl) {
		t.Fatalf("%s: got %d lines, want %d (first difference at %d)", desc, len(lines), len(wl), firstDiff(lines, wl))
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// randomInput makes lines of random lengths, some long (over the chunk and
// window sizes used in the tests), some CRLF, some empty, maybe without a
// final newline.
func randomInput(r *rand.Rand, maxBytes int) []byte {
	var b []byte
	target := r.IntN(maxBytes + 1)
	for len(b) < target {
		var n int
		switch x := r.IntN(100); {
		case x < 5:
			n = 0
		case x < 90:
			n = r.IntN(200)
		case x < 98:
			n = r.IntN(3000)
		default:
			n = 3000 + r.IntN(20000) // longer than most chunks and windows below
		}
		for range n {
			b = append(b, byte('a'+r.IntN(26)))
		}
		if r.IntN(10) == 0 {
			b = append(b, '\r')
		}
		b = append(b, '\n')
	}
	if len(b) > 0 && r.IntN(3) == 0 {
		b = b[:len(b)-1] // no final newline
	}
	return b
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gzipBytes(t *testing.T, data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstdBytes(t *testing.T, data []byte) []byte {
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return zw.EncodeAll(data, nil)
}

// strategyConfigs lists every strategy with settings that put chunk and
// window boundaries inside lines.
func strategyConfigs(r *rand.Rand) []Config {
	chunk := func() int { return 1 + r.IntN(8192) }
	return []Config{
		{Strategy: Mmap, ChunkSize: chunk(), MmapWindow: pageSize * int64(1+r.IntN(3))},
		{Strategy: Mmap, ChunkSize: chunk(), MmapWindow: -1},
		{Strategy: Mmap},
		{Strategy: Pread, ChunkSize: chunk()},
		{Strategy: Pread},
		{Strategy: Bufio, ChunkSize: chunk()},
		{Strategy: Bufio},
		{Strategy: Stream, ChunkSize: chunk()},
		{Strategy: Auto, ChunkSize: chunk()},
	}
}

func TestStrategiesMatchReference(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 12 {
		// Several inputs per scan, including an empty one.
		var names []string
		var datas [][]byte
		for i := range 3 {
			data := randomInput(r, 60000)
			if round == 0 && i == 1 {
				data = nil
			}
			names = append(names, writeFile(t, dir, fmt.Sprintf("r%d-%d.log", round, i), data))
			datas = append(datas, data)
		}
		for _, cfg := range strategyConfigs(r) {
			for _, workers := range []int{1, 2, 7} {
				cfg.Workers = workers
				desc := fmt.Sprintf("round %d %s chunk=%d window=%d workers=%d", round, cfg.Strategy, cfg.ChunkSize, cfg.MmapWindow, workers)
				done := make([]int64, len(names))
				for i := range done {
					done[i] = -1
				}
				cfg.InputDone = func(i int, size int64) { done[i] = size }
				per, st, err := collect(t, names, cfg)
				if err != nil {
					t.Fatalf("%s: %v", desc, err)
				}
				var total int64
				for i := range names {
					checkChunks(t, fmt.Sprintf("%s input %d", desc, i), per[i], datas[i])
					total += int64(len(datas[i]))
					if done[i] != int64(len(datas[i])) {
						t.Fatalf("%s input %d: InputDone reported %d bytes, want %d", desc, i, done[i], len(datas[i]))
					}
				}
				if st.Bytes != total {
					t.Fatalf("%s: Stats.Bytes = %d, want %d", desc, st.Bytes, total)
				}
			}
		}
	}
}

func TestCompressedInputs(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	data := randomInput(r, 200000)
	gz := writeFile(t, dir, "a.log.gz", gzipBytes(t, data))
	zs := writeFile(t, dir, "a.log.zst", zstdBytes(t, data))
	noExt := writeFile(t, dir, "gzip-without-extension", gzipBytes(t, data))
	multi := writeFile(t, dir, "multi.gz", append(gzipBytes(t, data[:len(data)/2]), gzipBytes(t, data[len(data)/2:])...))
	for _, cfg := range []Config{{Strategy: Stream, ChunkSize: 777}, {Strategy: Auto}, {Strategy: Stream, Workers: 1},
		{Strategy: Auto, ParallelInputs: 3}, {Strategy: Stream, ChunkSize: 777, Workers: 3, ParallelInputs: 2}} {
		done := make([]int64, 4)
		cfg.InputDone = func(i int, size int64) { done[i] = size }
		per, st, err := collect(t, []string{gz, zs, noExt, multi}, cfg)
		if err != nil {
			t.Fatalf("%s: %v", cfg.Strategy, err)
		}
		for i := range per {
			if done[i] != int64(len(data)) {
				t.Fatalf("%s input %d: InputDone reported %d bytes, want %d", cfg.Strategy, i, done[i], len(data))
			}
			checkChunks(t, fmt.Sprintf("%s input %d", cfg.Strategy, i), per[i], data)
			if st.Strategies[i] != Stream {
				t.Fatalf("input %d read with %s, want stream", i, st.Strategies[i])
			}
		}
	}
	for _, s := range []Strategy{Mmap, Pread, Bufio} {
		_, _, err := collect(t, []string{gz}, Config{Strategy: s})
		if !errors.Is(err, ErrUnsupported) {
			t.Fatalf("%s on gzip input: err = %v, want ErrUnsupported", s, err)
		}
	}
}

func TestCorruptCompressedInput(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte(`{"level":"info","msg":"hello"}`+"\n"), 20000)
	gz := gzipBytes(t, data)
	zs := zstdBytes(t, data)
	for name, b := range map[string][]byte{
		"truncated.gz":  gz[:len(gz)/2],
		"truncated.zst": zs[:len(zs)/2],
		"garbage.gz":    append([]byte{0x1f, 0x8b}, bytes.Repeat([]byte{0xff}, 100)...),
	} {
		p := writeFile(t, dir, name, b)
		_, _, err := collect(t, []string{p}, Config{})
		if err == nil {
			t.Fatalf("%s: want an error, got none", name)
		}
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("%s: error %q does not name the file", name, err)
		}
	}
}

func TestStdinAndPipes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	data := randomInput(r, 100000)
	for _, compress := range []string{"plain", "gzip", "zstd"} {
		in := data
		switch compress {
		case "gzip":
			in = gzipBytes(t, data)
		case "zstd":
			in = zstdBytes(t, data)
		}
		// Stdin given as a plain io.Reader.
		per, st, err := collect(t, []string{"-"}, Config{Stdin: bytes.NewReader(in), ChunkSize: 1000})
		if err != nil {
			t.Fatalf("stdin %s: %v", compress, err)
		}
		checkChunks(t, "stdin "+compress, per[0], data)
		if st.Strategies[0] != Stream {
			t.Fatalf("stdin read with %s, want stream", st.Strategies[0])
		}

		// A real pipe opened by path.
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() { pw.Write(in); pw.Close() }()
		per, _, err = collect(t, []string{fmt.Sprintf("/proc/self/fd/%d", pr.Fd())}, Config{Strategy: Auto})
		pr.Close()
		if err != nil {
			t.Fatalf("pipe %s: %v", compress, err)
		}
		checkChunks(t, "pipe "+compress, per[0], data)
	}
	_, _, err := collect(t, []string{"-"}, Config{Strategy: Mmap, Stdin: bytes.NewReader(data)})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("mmap of stdin: err = %v, want ErrUnsupported", err)
	}
}

// TestMaxLineSize checks that every strategy accepts a line of exactly the
// maximum and rejects one byte more, naming the file and the line's offset.
func TestMaxLineSize(t *testing.T) {
	dir := t.TempDir()
	const maxLine = 5000
	prefix := "short line\nanother\n"
	for _, n := range []int{maxLine, maxLine + 1, 3 * maxLine} {
		for _, final := range []string{"\nafter\n", ""} {
			data := []byte(prefix + strings.Repeat("x", n) + final)
			p := writeFile(t, dir, fmt.Sprintf("long-%d-%d.log", n, len(final)), data)
			gz := writeFile(t, dir, fmt.Sprintf("long-%d-%d.log.gz", n, len(final)), gzipBytes(t, data))
			for _, cfg := range []Config{
				{Strategy: Mmap, MmapWindow: pageSize},
				{Strategy: Mmap, MmapWindow: -1, ChunkSize: 100},
				{Strategy: Pread, ChunkSize: 100},
				{Strategy: Pread},
				{Strategy: Bufio, ChunkSize: 100},
				{Strategy: Bufio},
				{Strategy: Stream, ChunkSize: 64},
			} {
				for _, in := range []string{p, gz} {
					if in == gz && cfg.Strategy != Stream {
						continue
					}
					cfg.MaxLineSize = maxLine
					desc := fmt.Sprintf("%s chunk=%d line=%d final=%q %s", cfg.Strategy, cfg.ChunkSize, n, final, filepath.Base(in))
					per, _, err := collect(t, []string{in}, cfg)
					if n <= maxLine {
						if err != nil {
							t.Fatalf("%s: %v", desc, err)
						}
						checkChunks(t, desc, per[0], data)
						continue
					}
					var le *LineTooLongError
					if !errors.As(err, &le) || !errors.Is(err, ErrLineTooLong) {
						t.Fatalf("%s: err = %v, want a LineTooLongError", desc, err)
					}
					if le.Offset != int64(len(prefix)) || le.Name != in || !strings.Contains(err.Error(), in) {
						t.Fatalf("%s: error %q names offset %d, want %d and the file", desc, err, le.Offset, len(prefix))
					}
				}
			}
		}
	}
}

// TestTruncatedDuringScan truncates the file from inside the first callback.
// Every strategy must return ErrInputChanged; mmap must not crash with
// SIGBUS.
func TestTruncatedDuringScan(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("y", 99) + "\n"
	data := []byte(strings.Repeat(line, 80000)) // 8 MB
	for _, cfg := range []Config{
		{Strategy: Mmap, MmapWindow: 1 << 20, ChunkSize: 64 << 10},
		{Strategy: Mmap, MmapWindow: -1, ChunkSize: 64 << 10},
		{Strategy: Pread, ChunkSize: 64 << 10},
		{Strategy: Bufio, ChunkSize: 64 << 10},
		{Strategy: Stream, ChunkSize: 64 << 10},
	} {
		for _, workers := range []int{1, 2} {
			cfg.Workers = workers
			p := writeFile(t, dir, "trunc.log", data)
			var once sync.Once
			var lines int
			var mu sync.Mutex
			_, err := Scan(context.Background(), []string{p}, cfg, func(_ int, c *Chunk) error {
				once.Do(func() {
					if err := os.Truncate(p, 0); err != nil {
						t.Error(err)
					}
				})
				n := CountLines(c.Data) // touches every byte: faults on a truncated mapping
				mu.Lock()
				lines += n
				mu.Unlock()
				return nil
			})
			if !errors.Is(err, ErrInputChanged) {
				t.Fatalf("%s workers=%d: err = %v (after %d lines), want ErrInputChanged", cfg.Strategy, workers, err, lines)
			}
			if !strings.Contains(err.Error(), p) {
				t.Fatalf("%s: error %q does not name the file", cfg.Strategy, err)
			}
		}
	}
}

func TestStopAndCancel(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.log", bytes.Repeat([]byte("0123456789\n"), 100000))
	for _, s := range []Strategy{Mmap, Pread, Bufio, Stream} {
		var mu sync.Mutex
		calls := 0
		st, err := Scan(context.Background(), []string{p}, Config{Strategy: s, ChunkSize: 4096, Workers: 2}, func(_ int, c *Chunk) error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			return Stop
		})
		if err != nil {
			t.Fatalf("%s: Stop gave err %v", s, err)
		}
		if st.Chunks > 4 {
			t.Fatalf("%s: %d chunks processed after Stop, want a few", s, st.Chunks)
		}

		ctx, cancel := context.WithCancel(context.Background())
		_, err = Scan(ctx, []string{p}, Config{Strategy: s, ChunkSize: 4096}, func(_ int, c *Chunk) error {
			cancel()
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: cancel gave err %v, want context.Canceled", s, err)
		}

		boom := errors.New("boom")
		_, err = Scan(context.Background(), []string{p}, Config{Strategy: s, ChunkSize: 4096}, func(_ int, c *Chunk) error {
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("%s: callback error gave %v", s, err)
		}
	}
}

func TestInputErrors(t *testing.T) {
	dir := t.TempDir()
	_, _, err := collect(t, []string{filepath.Join(dir, "missing.log")}, Config{})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.log") {
		t.Fatalf("missing file: err = %v", err)
	}
	_, _, err = collect(t, []string{dir}, Config{})
	if err == nil || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("directory: err = %v", err)
	}
	if _, err := ParseStrategy("mmapp"); err == nil || !strings.Contains(err.Error(), "pread") {
		t.Fatalf("ParseStrategy: err = %v", err)
	}
	_, err = Scan(context.Background(), nil, Config{Strategy: "nope"}, nil)
	if err == nil {
		t.Fatal("unknown strategy: no error")
	}
}

func TestLatencies(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.log", bytes.Repeat([]byte("0123456789\n"), 10000))
	st, err := Scan(context.Background(), []string{p}, Config{Strategy: Pread, ChunkSize: 4096, Latencies: true}, func(int, *Chunk) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(st.Latencies)) != st.Chunks || st.Chunks < 20 {
		t.Fatalf("%d latencies for %d chunks", len(st.Latencies), st.Chunks)
	}
}

func TestNextLineAndCountLines(t *testing.T) {
	f := func(in string, want ...string) {
		t.Helper()
		got := referenceLines([]byte(in))
		if !slices.Equal(got, want) {
			t.Fatalf("lines(%q) = %q, want %q", in, got, want)
		}
		if n := CountLines([]byte(in)); n != len(want) {
			t.Fatalf("CountLines(%q) = %d, want %d", in, n, len(want))
		}
	}
	f("")
	f("\n", "")
	f("a", "a")
	f("a\n", "a")
	f("a\r\nb", "a", "b")
	f("a\n\nb\n", "a", "", "b")
	f("\r\n\r", "", "")
}

// TestOpenLimit: Config.Open opens the inputs, and its limit caps what is
// read, for every strategy and for compressed files (decompressed bytes).
func TestOpenLimit(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 6))
	data := randomInput(r, 100000)
	cut := bytes.LastIndexByte(data[:len(data)*2/3], '\n') + 1
	plain := writeFile(t, dir, "plain.log", data)
	zs := writeFile(t, dir, "a.zst", zstdBytes(t, data))
	gz := writeFile(t, dir, "a.gz", gzipBytes(t, data))
	var opened []string
	var mu sync.Mutex
	open := func(limit int64) func(string) (*os.File, int64, error) {
		return func(name string) (*os.File, int64, error) {
			mu.Lock()
			opened = append(opened, filepath.Base(name))
			mu.Unlock()
			f, err := os.Open(name)
			return f, limit, err
		}
	}
	for _, cfg := range strategyConfigs(r) {
		cfg.Open = open(int64(cut))
		per, _, err := collect(t, []string{plain}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		checkChunks(t, fmt.Sprintf("%s limit %d", cfg.Strategy, cut), per[0], data[:cut])
	}
	for _, name := range []string{zs, gz} {
		per, _, err := collect(t, []string{name}, Config{Open: open(int64(cut))})
		if err != nil {
			t.Fatal(err)
		}
		checkChunks(t, name, per[0], data[:cut])
		per, _, err = collect(t, []string{name}, Config{Open: open(-1)})
		if err != nil {
			t.Fatal(err)
		}
		checkChunks(t, name+" unlimited", per[0], data)
	}
	// A limit past the end reads the file.
	per, _, err := collect(t, []string{plain}, Config{Open: open(int64(len(data) + 100))})
	if err != nil {
		t.Fatal(err)
	}
	checkChunks(t, "limit past the end", per[0], data)
	if len(opened) != len(strategyConfigs(r))+5 {
		t.Fatalf("Open called %d times: %v", len(opened), opened)
	}
}

// TestNoMmap: with NoMmap, Auto reads a large regular file with pread (a
// server's scans keep their memory in buffers, not mapped windows).
func TestNoMmap(t *testing.T) {
	data := bytes.Repeat([]byte("a line of a file Auto would map\n"), autoSmallFile/16)
	name := writeFile(t, t.TempDir(), "big.log", data)
	for _, c := range []struct {
		noMmap bool
		want   Strategy
	}{{false, AutoRegular}, {true, Pread}} {
		per, st, err := collect(t, []string{name}, Config{NoMmap: c.noMmap})
		if err != nil {
			t.Fatal(err)
		}
		if st.Strategies[0] != c.want {
			t.Errorf("NoMmap %v: read with %s, want %s", c.noMmap, st.Strategies[0], c.want)
		}
		checkChunks(t, fmt.Sprintf("NoMmap %v", c.noMmap), per[0], data)
	}
}

// TestFileBytes checks Chunk.FileBytes: a plain input's chunks add up to
// its size, and so do a compressed input's (not to its decompressed size),
// so that progress against file sizes ends at 100%.
func TestFileBytes(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&b, `{"level":"info","i":%d,"msg":"hello %d"}`+"\n", i, i%977)
	}
	data := []byte(b.String())
	files := map[string][]byte{
		"plain.log":    data,
		"logs.log.gz":  gzipBytes(t, data),
		"logs.log.zst": zstdBytes(t, data),
	}
	for name, b := range files {
		p := writeFile(t, dir, name, b)
		for _, cfg := range []Config{{ChunkSize: 64 << 10}, {ChunkSize: 1 << 20, Workers: 3}} {
			var sum, decompressed atomic.Int64
			_, err := Scan(context.Background(), []string{p}, cfg, func(_ int, c *Chunk) error {
				sum.Add(c.FileBytes())
				decompressed.Add(int64(len(c.Data)))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got, size := sum.Load(), int64(len(b)); got != size || decompressed.Load() != int64(len(data)) {
				t.Fatalf("%s (chunk %d): chunks account for %d bytes of a %d-byte file (%d of %d decompressed)", name, cfg.ChunkSize, got, size, decompressed.Load(), len(data))
			}
		}
	}
}
