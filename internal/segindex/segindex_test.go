package segindex

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

// jsonLines is a LineReader built on encoding/json, independent of the
// query engine: string values as they are, numbers as written, _time
// parsed as RFC 3339 when it has a zone.
func jsonLines(line []byte, emit func(name, value string)) (int64, bool, bool) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return 0, false, false
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var t int64
	timeOK := false
	for _, k := range keys {
		v := fmt.Sprint(m[k])
		emit(k, v)
		if k == "_time" {
			if tt, err := time.Parse(time.RFC3339Nano, v); err == nil {
				t, timeOK = tt.UnixNano(), true
			}
		}
	}
	return t, timeOK, true
}

// testLines makes n lines: short fields, a long message, an id, and now
// and then a missing field, a line without a time or a line that is not
// JSON.
func testLines(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	base := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	var out []string
	for i := range n {
		var b strings.Builder
		b.WriteString("{")
		if i%97 != 5 {
			fmt.Fprintf(&b, `"_time":%q,`, base.Add(time.Duration(i)*time.Millisecond+time.Duration(r.IntN(5))*time.Microsecond).Format(time.RFC3339Nano))
		}
		fmt.Fprintf(&b, `"level":%q,`, []string{"info", "warn", "error", ""}[r.IntN(4)])
		if i%13 != 0 {
			fmt.Fprintf(&b, `"status":%d,`, 200+r.IntN(4)*100)
		}
		fmt.Fprintf(&b, `"latency":%d.%03d,`, r.IntN(1000), r.IntN(1000))
		fmt.Fprintf(&b, `"trace":"%016x%016x",`, r.Uint64(), r.Uint64())
		fmt.Fprintf(&b, `"_msg":"%s"}`, strings.Repeat("m", 60+r.IntN(40)))
		out = append(out, b.String())
		if i%501 == 7 {
			out = append(out, "not json at all")
		}
	}
	return out
}

// newTestBuilder returns a zstd encoder for test segments and a Builder
// reading lines with jsonLines.
func newTestBuilder(t *testing.T) (*zstd.Encoder, *Builder) {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuilder(jsonLines)
	if err != nil {
		t.Fatal(err)
	}
	return enc, b
}

// buildIndex compresses lines into blocks of about blockLines lines and
// returns the .zst bytes and the sidecar.
func buildIndex(t *testing.T, lines []string, blockLines int, size, mtime int64) (zst, idx []byte, blocks [][]string) {
	t.Helper()
	enc, b := newTestBuilder(t)
	for i := 0; i < len(lines); i += blockLines {
		blk := lines[i:min(i+blockLines, len(lines))]
		raw := []byte(strings.Join(blk, "\n") + "\n")
		off := int64(len(zst))
		zst = enc.EncodeAll(raw, zst)
		b.Add(raw, off, int64(len(zst))-off)
		blocks = append(blocks, blk)
	}
	if size < 0 {
		size = int64(len(zst))
	}
	return zst, b.Finish(size, mtime), blocks
}

func writeTemp(t *testing.T, data []byte) *os.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "seg.idx")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// readAll reads every column of ix back into per-block, per-row maps.
func readAll(ix *Index) ([][]map[string]string, [][]int64, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, nil, err
	}
	defer dec.Close()
	var vals [][]map[string]string
	var times [][]int64
	for bi := range ix.Blocks {
		blk := &ix.Blocks[bi]
		rows := make([]map[string]string, blk.Rows)
		for r := range rows {
			rows[r] = map[string]string{}
		}
		for _, c := range blk.Columns {
			z, _, err := ix.ReadColumn(c, nil)
			if err != nil {
				return nil, nil, err
			}
			raw, err := DecodeColumn(dec, z, nil)
			if err != nil {
				return nil, nil, err
			}
			var sc StringColumn
			if err := ParseString(raw, blk.Rows, &sc); err != nil {
				return nil, nil, err
			}
			for r := range rows {
				if v, ok := sc.Value(r); ok {
					rows[r][ix.Fields[c.Field]] = v
				}
			}
		}
		vals = append(vals, rows)
		var ts []int64
		if blk.Flags&FlagTime != 0 {
			z, _, err := ix.ReadColumn(blk.Time, nil)
			if err != nil {
				return nil, nil, err
			}
			raw, err := dec.DecodeAll(z, nil)
			if err != nil {
				return nil, nil, err
			}
			if ts, err = ParseTime(raw, blk.Rows, nil); err != nil {
				return nil, nil, err
			}
		}
		times = append(times, ts)
		for _, c := range blk.Blooms {
			b, _, err := ix.ReadBloom(c, nil)
			if err != nil {
				return nil, nil, err
			}
			rows[0]["bloom:"+ix.Fields[c.Field]] = fmt.Sprintf("%x", b)
		}
	}
	return vals, times, nil
}

func TestRoundTrip(t *testing.T) {
	for _, nm := range []bool{false, true} {
		noMap = nm
		t.Run(fmt.Sprintf("pread=%v", nm), testRoundTrip)
	}
	noMap = false
}

func testRoundTrip(t *testing.T) {
	lines := testLines(3000, 1)
	zst, idx, blocks := buildIndex(t, lines, 400, -1, 12345)
	ix, err := Open(writeTemp(t, idx), int64(len(zst)), 12345)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if len(ix.Blocks) != len(blocks) {
		t.Fatalf("%d blocks, want %d", len(ix.Blocks), len(blocks))
	}
	if ix.FieldID("trace") < 0 || ix.FieldID("nope") != -1 {
		t.Fatalf("field ids: trace %d, nope %d", ix.FieldID("trace"), ix.FieldID("nope"))
	}
	vals, times, err := readAll(ix)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	var rows int64
	for bi, blk := range ix.Blocks {
		// The frame decodes alone to the block's lines.
		raw, err := dec.DecodeAll(zst[blk.ZOff:blk.ZOff+blk.ZLen], nil)
		if err != nil || string(raw) != strings.Join(blocks[bi], "\n")+"\n" || int64(len(raw)) != blk.RawLen {
			t.Fatalf("block %d: frame does not decode to its lines (%v)", bi, err)
		}
		json := blk.Flags&FlagColumns != 0
		if hasBad := slices.Contains(blocks[bi], "not json at all"); hasBad == json {
			t.Fatalf("block %d: FlagColumns %v with a non-JSON line %v", bi, json, hasBad)
		}
		if json {
			if _, ok := blk.Column(ix.FieldID("trace")); ok {
				t.Errorf("block %d: the id field got a column", bi)
			}
			for _, f := range []string{"level", "status", "latency", "_msg"} {
				if _, ok := blk.Column(ix.FieldID(f)); !ok {
					t.Errorf("block %d: no column for %s", bi, f)
				}
			}
		}
		for r, line := range blocks[bi] {
			want := map[string]string{}
			var wt int64
			wok := false
			if json {
				wt, wok, _ = jsonLines([]byte(line), func(n, v string) {
					if _, ok := blk.Column(ix.FieldID(n)); ok {
						want[n] = v
					}
				})
				for k := range vals[bi][r] {
					if strings.HasPrefix(k, "bloom:") {
						delete(vals[bi][r], k)
					}
				}
				if fmt.Sprint(vals[bi][r]) != fmt.Sprint(want) {
					t.Fatalf("block %d row %d: columns %v, want %v", bi, r, vals[bi][r], want)
				}
			}
			if blk.Flags&FlagTime != 0 {
				if !wok || times[bi][r] != wt {
					t.Fatalf("block %d row %d: time %d, want %d (%v)", bi, r, times[bi][r], wt, wok)
				}
				if wt < blk.MinTime || wt > blk.MaxTime {
					t.Fatalf("block %d: time %d outside [%d, %d]", bi, wt, blk.MinTime, blk.MaxTime)
				}
			}
		}
		rows += int64(blk.Rows)
	}
	if rows != ix.Rows || ix.Rows != int64(len(lines)) {
		t.Fatalf("rows %d / %d, want %d", rows, ix.Rows, len(lines))
	}
	// A block with a line without _time has no time column.
	if ix.Blocks[0].Flags&FlagTime != 0 {
		t.Error("block 0 holds a line without _time but has FlagTime")
	}
}

// TestBlooms: every token of every value of a block is in its field's
// bloom (no false negatives), few others are, and fields without tokens,
// absent fields and _time have none.
func TestBlooms(t *testing.T) {
	lines := append(testLines(2000, 9), `{"_time":"2026-11-26T00:00:00Z","empty":"","dash":"-","uni":"été, 東京 x_y"}`)
	zst, idx, blocks := buildIndex(t, lines, 500, -1, 5)
	ix, err := Open(writeTemp(t, idx), int64(len(zst)), 5)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	hits, probes := 0, 0
	for bi, blk := range ix.Blocks {
		blooms := map[string][]byte{}
		for _, c := range blk.Blooms {
			b, _, err := ix.ReadBloom(c, nil)
			if err != nil {
				t.Fatal(err)
			}
			blooms[ix.Fields[c.Field]] = b
		}
		if _, ok := blooms["_time"]; ok {
			t.Errorf("block %d: _time has a bloom", bi)
		}
		for id := -1; id <= len(ix.Fields); id++ {
			want, wok := blk.Bloom(id)
			got, ok := ix.BlockBloom(id, bi)
			if ok != wok || (ok && (got.Off != want.Off || got.Len != want.Len)) {
				t.Errorf("block %d field %d: BlockBloom %v %v, Block.Bloom %v %v", bi, id, got, ok, want, wok)
			}
		}
		for _, line := range blocks[bi] {
			jsonLines([]byte(line), func(name, value string) {
				if !HasBloom(name) {
					return
				}
				hs := AppendTokenHashes(nil, value)
				b, ok := blooms[name]
				if len(hs) > 0 && !ok {
					t.Fatalf("block %d: no bloom for %s (value %q)", bi, name, value)
				}
				for _, h := range hs {
					if !BloomHas(b, h) {
						t.Fatalf("block %d: %s's bloom misses a token of %q", bi, name, value)
					}
				}
			})
		}
		for i := range 1000 {
			probes++
			if BloomHas(blooms["trace"], TokenHash(fmt.Sprintf("absent%dtoken", i))) {
				hits++
			}
		}
	}
	if hits > probes/20 {
		t.Errorf("%d of %d absent tokens found in blooms", hits, probes)
	}
	// The segment's blooms hold every token of every block, and rule out
	// most others.
	segBloom := func(name string) []byte {
		ref, ok := ix.SegmentBloom(ix.FieldID(name))
		if !ok {
			return nil
		}
		b, _, err := ix.ReadBloom(ref, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, blk := range blocks {
		for _, line := range blk {
			jsonLines([]byte(line), func(name, value string) {
				if !HasBloom(name) {
					if _, ok := ix.SegmentBloom(ix.FieldID(name)); ok {
						t.Errorf("%s has a segment bloom", name)
					}
					return
				}
				for _, h := range AppendTokenHashes(nil, value) {
					if !BloomHas(segBloom(name), h) {
						t.Fatalf("the segment bloom of %s misses a token of %q", name, value)
					}
				}
			})
		}
	}
	hits = 0
	for i := range 1000 {
		if BloomHas(segBloom("trace"), TokenHash(fmt.Sprintf("absent%dtoken", i))) {
			hits++
		}
	}
	if hits > 40 {
		t.Errorf("the segment bloom of trace holds %d of 1000 absent tokens", hits)
	} else {
		t.Logf("the segment bloom of trace (2,000 ids) holds %d of 1000 absent tokens", hits)
	}
	if _, ok := ix.SegmentBloom(-1); ok {
		t.Error("a segment bloom of no field")
	}
	if _, ok := ix.SegmentBloom(ix.FieldID("empty")); ok {
		t.Error("a field without tokens has a segment bloom")
	}
	last := ix.Blocks[len(ix.Blocks)-1]
	for _, f := range []string{"empty", "dash"} {
		if id := ix.FieldID(f); id < 0 || !last.Has(id) {
			t.Errorf("%s not present", f)
		} else if _, ok := last.Bloom(id); ok {
			t.Errorf("%s, without tokens, has a bloom", f)
		}
	}
	got := AppendTokenHashes(nil, "été, 東京 x_y")
	want := []uint64{TokenHash("été"), TokenHash("東京"), TokenHash("x_y")}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tokens of a unicode value: %v, want %v", got, want)
	}
}

func TestOpenRefuses(t *testing.T) {
	lines := testLines(500, 2)
	zst, idx, _ := buildIndex(t, lines, 100, -1, 777)
	size := int64(len(zst))
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(idx)) }
	cases := []struct {
		name        string
		data        []byte
		size, mtime int64
		want        error
	}{
		{"stale size", idx, size + 1, 777, ErrStale},
		{"stale mtime", idx, size, 778, ErrStale},
		{"truncated", idx[:len(idx)-1], size, 777, ErrCorrupt},
		{"truncated header", idx[:10], size, 777, ErrCorrupt},
		{"empty", nil, size, 777, ErrCorrupt},
		{"longer", append(bytes.Clone(idx), 0), size, 777, ErrCorrupt},
		{"magic", mod(func(b []byte) []byte { b[0] = 'X'; return b }), size, 777, ErrCorrupt},
		{"version", mod(func(b []byte) []byte { b[8] = Version + 1; return b }), size, 777, ErrCorrupt},
		{"version, as ErrVersion", mod(func(b []byte) []byte { b[8] = Version + 1; return b }), size, 777, ErrVersion},
		{"table", mod(func(b []byte) []byte { b[headerSize+3] ^= 1; return b }), size, 777, ErrCorrupt},
		{"table length", mod(func(b []byte) []byte { b[16] ^= 0x40; return b }), size, 777, ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ix, err := Open(writeTemp(t, c.data), c.size, c.mtime)
			if !errors.Is(err, c.want) {
				if ix != nil {
					ix.Close()
				}
				t.Fatalf("Open: %v, want %v", err, c.want)
			}
		})
	}
}

// TestCorruptNeverLies flips bytes all over a sidecar: Open refuses it, or
// reading its columns fails, or they read exactly as before. A damaged
// sidecar may cost a fallback, never a wrong answer.
func TestCorruptNeverLies(t *testing.T) {
	for _, nm := range []bool{false, true} {
		noMap = nm
		t.Run(fmt.Sprintf("pread=%v", nm), testCorruptNeverLies)
	}
	noMap = false
}

func testCorruptNeverLies(t *testing.T) {
	lines := testLines(400, 3)
	zst, idx, _ := buildIndex(t, lines, 100, -1, 1)
	ix, err := Open(writeTemp(t, idx), int64(len(zst)), 1)
	if err != nil {
		t.Fatal(err)
	}
	want, wantT, err := readAll(ix)
	ix.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 4))
	refused, failed := 0, 0
	const flips = 1000
	for i := range flips {
		data := bytes.Clone(idx)
		pos := i // the header and table first, then anywhere
		if i >= 200 || pos >= len(data) {
			pos = r.IntN(len(data))
		}
		data[pos] ^= byte(1 + r.IntN(255))
		ix, err := Open(writeTemp(t, data), int64(len(zst)), 1)
		if err != nil {
			refused++
			continue
		}
		got, gotT, err := readAll(ix)
		ix.Close()
		if err != nil {
			failed++
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(gotT) != fmt.Sprint(wantT) {
			t.Fatalf("byte %d flipped: columns read differently without an error", pos)
		}
	}
	t.Logf("%d refused by Open, %d failed reading columns or blooms, %d read the same", refused, failed, flips-refused-failed)
}

func BenchmarkBuilder(b *testing.B) {
	lines := testLines(5000, 5)
	raw := []byte(strings.Join(lines, "\n") + "\n")
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		bl, _ := NewBuilder(jsonLines)
		bl.Add(raw, 0, 1)
		bl.Finish(1, 1)
	}
}

// TestOpenShared: a sidecar opened twice is read once; a replaced one is
// read again, while the Index opened before stays readable until closed;
// a segment of another size is still refused.
func TestOpenShared(t *testing.T) {
	lines := testLines(300, 6)
	zst, idx, _ := buildIndex(t, lines, 100, -1, 9)
	dir := t.TempDir()
	p := filepath.Join(dir, "seg.idx")
	if err := os.WriteFile(p, idx, 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(size int64) (*Index, error) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		return OpenShared(p, f, size, 9)
	}
	a, err := open(int64(len(zst)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := open(int64(len(zst)))
	if err != nil || a != b {
		t.Fatalf("second open: %v, same Index %v", err, a == b)
	}
	if _, err := open(int64(len(zst)) + 1); !errors.Is(err, ErrStale) {
		t.Fatalf("a segment of another size: %v", err)
	}
	// Replace the file (a rebuild renames a new one into place).
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, idx, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	c, err := open(int64(len(zst)))
	if err != nil || c == a {
		t.Fatalf("after a replace: %v, same Index %v", err, c == a)
	}
	for _, ix := range []*Index{a, b, c} {
		if _, _, err := readAll(ix); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	if _, _, err := readAll(b); err != nil { // b is a: still held once
		t.Fatal(err)
	}
	b.Close()
	c.Close()
	shared.mu.Lock()
	if ix := shared.m[p]; ix != c || ix.refs != 0 {
		t.Errorf("cache holds %p with %d refs, want the newest with 0", ix, ix.refs)
	}
	if a.mapped != nil {
		t.Errorf("the replaced Index was not closed when released")
	}
	shared.mu.Unlock()

	// OpenSharedStat: the cached file is not opened again; a replaced one
	// is.
	opens := 0
	statOpen := func() (*Index, error) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return OpenSharedStat(p, fi, func() (*os.File, error) { opens++; return os.Open(p) }, int64(len(zst)), 9)
	}
	d, err := statOpen()
	if err != nil || d != c || opens != 0 {
		t.Fatalf("stat of the cached file: %v, same Index %v, %d opens", err, d == c, opens)
	}
	d.Close()
	if err := os.WriteFile(tmp, idx, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	e, err := statOpen()
	if err != nil || e == c || opens != 1 {
		t.Fatalf("stat of a replaced file: %v, same Index %v, %d opens", err, e == c, opens)
	}
	if _, _, err := readAll(e); err != nil {
		t.Fatal(err)
	}
	e.Close()
}

// TestNumsAndStreams: a block's numeric ranges cover exactly its numeric
// values of column fields (none for a field without numbers, none at all
// with a NaN), and its streams are its _stream values, "{}" for rows
// without one.
func TestNumsAndStreams(t *testing.T) {
	lines := []string{
		`{"_stream":"{a=\"1\"}","n":"5","s":"x","m":"nan"}`,
		`{"_stream":"{a=\"2\"}","n":"-2.5","s":"y","m":"1"}`,
		`{"n":"10","s":"z"}`,
		`{"n":"oops","s":"x"}`,
	}
	b, err := NewBuilder(jsonLines)
	if err != nil {
		t.Fatal(err)
	}
	b.Numbers = func(s string) (float64, bool) {
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	raw := []byte(strings.Join(lines, "\n") + "\n")
	b.Add(raw, 0, 1)
	ix, err := Open(writeTemp(t, b.Finish(1, 1)), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	blk := &ix.Blocks[0]
	if n, ok := blk.Num(ix.FieldID("n")); !ok || !n.Any || n.Min != -2.5 || n.Max != 10 {
		t.Errorf("n: %+v %v, want -2.5..10", n, ok)
	}
	if n, ok := blk.Num(ix.FieldID("s")); !ok || n.Any {
		t.Errorf("s: %+v %v, want a range without numbers", n, ok)
	}
	if n, ok := blk.Num(ix.FieldID("m")); ok {
		t.Errorf("m holds a NaN: want no range, got %+v", n)
	}
	want := []string{`{a="1"}`, `{a="2"}`, "{}"}
	if !blk.StreamsKnown || fmt.Sprint(blk.Streams) != fmt.Sprint(want) {
		t.Errorf("streams %q (known %v), want %q", blk.Streams, blk.StreamsKnown, want)
	}
}

// TestOpenSharedConcurrent: goroutines open, read and close one sidecar
// while it is replaced again and again; every read succeeds (an Index in
// use is never unmapped) and the cache ends with one open Index.
func TestOpenSharedConcurrent(t *testing.T) {
	lines := testLines(200, 11)
	zst, idx, _ := buildIndex(t, lines, 50, -1, 3)
	dir := t.TempDir()
	p := filepath.Join(dir, "seg.idx")
	if err := os.WriteFile(p, idx, 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := fmt.Sprintf("%s.%d", p, i)
			if err := os.WriteFile(tmp, idx, 0o644); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, p); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for range 200 {
				f, err := os.Open(p)
				if err != nil {
					errs <- err
					return
				}
				ix, err := OpenShared(p, f, int64(len(zst)), 3)
				if err != nil {
					errs <- err
					return
				}
				if _, _, err := readAll(ix); err != nil {
					errs <- err
				}
				ix.Close()
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if ix := shared.m[p]; ix == nil || ix.refs != 0 {
		t.Fatalf("cache entry %v", ix)
	}
}

// TestBloomFalsePositives: blooms hold every token added and answer yes
// for few others: at 16 bits per token (blocks) about 0.07%, at 10
// (segments) about 0.7%; the bounds leave room for the spread of random
// blooms, not for a broken probe.
func TestBloomFalsePositives(t *testing.T) {
	for _, tc := range []struct {
		bits int
		max  float64
	}{{bloomBitsPerToken, 0.003}, {segBloomBitsPerToken, 0.04}} {
		r := rand.New(rand.NewPCG(3, 4))
		hits, probes := 0, 0
		for _, n := range []int{1, 7, 100, 3000, 30000} {
			for range 20 {
				hs := make([]uint64, n)
				for i := range hs {
					hs[i] = r.Uint64() | 1
				}
				bloom := appendBloom([]byte("prefix"), hs, tc.bits)[len("prefix"):]
				for _, h := range hs {
					if !BloomHas(bloom, h) {
						t.Fatalf("%d bits, %d tokens: a token added is missing", tc.bits, n)
					}
				}
				for range 5000 {
					probes++
					if BloomHas(bloom, r.Uint64()) {
						hits++
					}
				}
			}
		}
		if rate := float64(hits) / float64(probes); rate > tc.max {
			t.Errorf("%d bits per token: false positives: %d of %d (%.3f%%)", tc.bits, hits, probes, 100*rate)
		} else {
			t.Logf("%d bits per token: false positives: %d of %d (%.3f%%)", tc.bits, hits, probes, 100*rate)
		}
	}
	if !BloomHas(nil, 1) || !BloomHas(make([]byte, 33), 1) {
		t.Error("a bloom that is not whole blocks must answer true")
	}
}

// BenchmarkBloomHas is the check a needle query makes of each block: a
// token looked up in a bloom of 2,600 tokens (a trace id field of a 1 MiB
// block), across 1,000 blooms as a query of 1 GiB walks them.
func BenchmarkBloomHas(b *testing.B) {
	blooms := 1000
	if v, err := strconv.Atoi(os.Getenv("BLOOMS")); err == nil {
		blooms = v
	}
	r := rand.New(rand.NewPCG(5, 6))
	var data []byte
	var offs []int
	for range blooms {
		hs := make([]uint64, 2600)
		for i := range hs {
			hs[i] = r.Uint64() | 1
		}
		offs = append(offs, len(data))
		data = appendBloom(data, hs, bloomBitsPerToken)
	}
	size := len(data) / len(offs)
	q := r.Uint64()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for _, off := range offs {
			if BloomHas(data[off:off+size], q) {
				n++
			}
		}
	}
	if n > b.N*10 {
		b.Fatal("too many hits")
	}
}

// TestFrames: a block of several frames lists them with their rows, and
// has a bloom per frame for its fields without a column (the trace ids),
// which holds every token of the frame's values and rules out most
// others; the frames decode alone to the lines they list.
func TestFrames(t *testing.T) {
	lines := testLines(1200, 11)[:1200]
	enc, b := newTestBuilder(t)
	var zst []byte
	var frameLines [][]string // per frame, across blocks
	for i := 0; i < len(lines); i += 400 {
		var raw []byte
		var frames []Frame
		off := int64(len(zst))
		// Frames of 90, 90, ... lines, the last one shorter; one block of
		// a single frame.
		per := 90
		if i == 800 {
			per = 400
		}
		for j := i; j < min(i+400, len(lines)); j += per {
			fl := lines[j:min(j+per, i+400, len(lines))]
			fr := []byte(strings.Join(fl, "\n") + "\n")
			z := len(zst)
			zst = enc.EncodeAll(fr, zst)
			frames = append(frames, Frame{ZLen: int64(len(zst) - z), RawLen: int64(len(fr))})
			raw = append(raw, fr...)
			frameLines = append(frameLines, fl)
		}
		b.AddFrames(raw, off, frames)
	}
	ix, err := Open(writeTemp(t, b.Finish(int64(len(zst)), 5)), int64(len(zst)), 5)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	trace := ix.FieldID("trace")
	fi, hits, probes := 0, 0, 0
	for bi, blk := range ix.Blocks {
		if bi == 2 {
			if blk.Frames != nil || blk.FrameBlooms != nil {
				t.Errorf("block of one frame: %d frames, %d frame blooms", len(blk.Frames), len(blk.FrameBlooms))
			}
			fi++
			continue
		}
		if len(blk.Frames) != 5 {
			t.Fatalf("block %d: %d frames, want 5", bi, len(blk.Frames))
		}
		refs, ok := blk.FrameBloom(trace)
		if !ok {
			t.Fatalf("block %d: no frame blooms of trace (%v)", bi, blk.FrameBlooms)
		}
		if _, ok := blk.FrameBloom(ix.FieldID("level")); ok {
			t.Errorf("block %d: level, a column, has frame blooms", bi)
		}
		zoff := blk.ZOff
		for f, fr := range blk.Frames {
			raw, err := dec.DecodeAll(zst[zoff:zoff+fr.ZLen], nil)
			if err != nil || string(raw) != strings.Join(frameLines[fi], "\n")+"\n" {
				t.Fatalf("block %d frame %d does not decode to its lines: %v", bi, f, err)
			}
			rows := 0
			for _, l := range frameLines[fi] {
				if l != "" {
					rows++
				}
			}
			if fr.Rows != rows {
				t.Errorf("block %d frame %d: %d rows, want %d", bi, f, fr.Rows, rows)
			}
			bloom, _, err := ix.ReadBloom(refs[f], nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range frameLines[fi] {
				var v struct{ Trace string }
				if json.Unmarshal([]byte(l), &v) != nil || v.Trace == "" {
					continue
				}
				if !BloomHas(bloom, TokenHash(v.Trace)) {
					t.Fatalf("block %d frame %d: bloom misses %s", bi, f, v.Trace)
				}
			}
			// The other frames' ids: ruled out but for false positives.
			for _, other := range frameLines {
				for _, l := range other {
					var v struct{ Trace string }
					if json.Unmarshal([]byte(l), &v) != nil || slices.Contains(frameLines[fi], l) {
						continue
					}
					probes++
					if BloomHas(bloom, TokenHash(v.Trace)) {
						hits++
					}
				}
			}
			zoff += fr.ZLen
			fi++
		}
	}
	if hits > probes/100 {
		t.Errorf("frame blooms hold %d of %d ids of other frames", hits, probes)
	}
}

// TestDistinctCounter: the sketch that sizes segment blooms counts
// distinct hashes within a few percent, however often each repeats.
func TestDistinctCounter(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 10, 1000, 30000, 300000} {
		var d distinctCounter
		hs := make([]uint64, n)
		for i := range hs {
			hs[i] = r.Uint64()
		}
		for rep := range 3 {
			for _, h := range hs[:n/(rep+1)] {
				d.add(h)
			}
		}
		got := d.estimate()
		if diff := math.Abs(float64(got - n)); diff > 0.05*float64(n)+1 {
			t.Errorf("%d distinct hashes (some added 3 times): estimate %d", n, got)
		}
	}
}

// BenchmarkTokenHashes is the tokenizing and hashing the Builder does for
// each value of a field without a dictionary: a message, a path, an
// address, a number, a user id and a trace id of `spate gen` logs.
func BenchmarkTokenHashes(b *testing.B) {
	values := []string{
		`unexpected token "5123cdc5" at line 12, column 41 in region eu-west-1`,
		"/api/v1/shipments/74673", "10.105.105.47", "29.972", "u_93361", "dbd2a18e0bf6b0f59885541c3ceb1a5a",
		"cache lookup key=sessions:993618 hit=true for tenant hooli",
	}
	n := 0
	for _, v := range values {
		n += len(v)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	var hs []uint64
	for b.Loop() {
		for _, v := range values {
			hs = AppendTokenHashes(hs[:0], v)
		}
	}
}

// TestTokenHashSpread: hashes of similar short tokens (numbers, ids that
// differ in a digit, every length from 1 to 40) do not collide and fill
// blooms as random hashes do.
func TestTokenHashSpread(t *testing.T) {
	seen := map[uint64]string{}
	var in, out []uint64
	for i := range 200000 {
		for _, tok := range []string{strconv.Itoa(i), fmt.Sprintf("u_%06d", i), fmt.Sprintf("%x", i*7919)} {
			h := TokenHash(tok)
			if prev, ok := seen[h]; ok && prev != tok {
				t.Fatalf("%q and %q hash alike", prev, tok)
			}
			seen[h] = tok
			if i%2 == 0 {
				in = append(in, h)
			} else {
				out = append(out, h)
			}
		}
	}
	for n := 1; n <= 40; n++ {
		tok := strings.Repeat("a", n)
		if _, ok := seen[TokenHash(tok)]; ok {
			t.Fatalf("%q collides", tok)
		}
		seen[TokenHash(tok)] = tok
	}
	slices.Sort(in)
	in = slices.Compact(in)
	bloom := appendBloom(nil, in, bloomBitsPerToken)
	hits := 0
	for _, h := range out {
		if BloomHas(bloom, h) {
			hits++
		}
	}
	if rate := float64(hits) / float64(len(out)); rate > 0.003 {
		t.Errorf("a bloom of even numbers' tokens holds %.3f%% of the odd ones'", 100*rate)
	} else {
		t.Logf("a bloom of even numbers' tokens holds %.3f%% of the odd ones'", 100*rate)
	}
}

// TestBytesOver checks bytesOver against a byte loop for every bound and
// random blocks, with one byte over the bound at each position.
func TestBytesOver(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 256 {
		for trial := range 100 {
			b := make([]byte, trial)
			for i := range b {
				b[i] = byte(rng.IntN(n + 1))
			}
			if bytesOver(b, byte(n)) {
				t.Fatalf("n=%d %v: over, none is", n, b)
			}
			if n == 255 || trial == 0 {
				continue
			}
			at := rng.IntN(trial)
			b[at] = byte(n + 1 + rng.IntN(255-n))
			if !bytesOver(b, byte(n)) {
				t.Fatalf("n=%d %v: byte %d is over", n, b, at)
			}
		}
	}
}

// BenchmarkBytesOver checks a block's worth of byte ids against a
// dictionary of 10 values, as a packed column's read does.
func BenchmarkBytesOver(b *testing.B) {
	ids := make([]byte, 2017)
	for i := range ids {
		ids[i] = byte(i % 11)
	}
	b.SetBytes(int64(len(ids)))
	b.ReportAllocs()
	for b.Loop() {
		if bytesOver(ids, 10) {
			b.Fatal("over")
		}
	}
}

// TestPackedColumns reads back dictionary columns of 1 to 400 values (1,
// 2, 4 and 8-bit packed ids, and a zstd column of 2-byte ids past 254)
// over blocks of 1 to 3000 rows with absent values, and checks that a
// packed column is stored as is, and damaged ones fail.
func TestPackedColumns(t *testing.T) {
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	sawWide := false
	for _, k := range []int{1, 2, 3, 4, 15, 16, 254, 256, 400} {
		for _, rows := range []int{1, 2, 7, 8, 9, 21, 40, 3000} {
			var lines []string
			distinct := map[int]bool{}
			for i := range rows {
				if i%5 == 3 {
					lines = append(lines, `{"other":"x"}`)
					continue
				}
				v := (i * 7) % k
				if i < 300 {
					v = i % 4 % k // a dictionary when the builder decides, at row 256
				}
				lines = append(lines, fmt.Sprintf(`{"f":"v%d","other":"x"}`, v))
				distinct[v] = true
			}
			zst, idx, _ := buildIndex(t, lines, rows, -1, 1)
			ix, err := Open(writeTemp(t, idx), int64(len(zst)), 1)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := readAll(ix)
			if err != nil {
				t.Fatalf("k=%d rows=%d: %v", k, rows, err)
			}
			for i, l := range lines {
				var want map[string]string
				if err := json.Unmarshal([]byte(l), &want); err != nil {
					t.Fatal(err)
				}
				maps.DeleteFunc(got[0][i], func(k, _ string) bool { return strings.HasPrefix(k, "bloom:") })
				if fmt.Sprint(got[0][i]) != fmt.Sprint(want) {
					t.Fatalf("k=%d rows=%d row %d: %v, want %v", k, rows, i, got[0][i], want)
				}
			}
			// Fields with at most 254 values are stored as is.
			blk := &ix.Blocks[0]
			ref, _ := blk.Column(ix.FieldID("f"))
			frame, _, err := ix.ReadColumn(ref, nil)
			if err != nil {
				t.Fatal(err)
			}
			sawWide = sawWide || len(distinct) > maxPackedDict
			if Stored(frame) != (len(distinct) <= maxPackedDict) {
				t.Errorf("k=%d rows=%d: stored %v", k, rows, Stored(frame))
			}
			// A packed column's counts are its ids', whichever way it
			// is read.
			raw, err := DecodeColumn(dec, frame, nil)
			if err != nil {
				t.Fatal(err)
			}
			var full, counted StringColumn
			if err := ParseString(raw, rows, &full); err != nil {
				t.Fatal(err)
			}
			ok, err := ParseCounts(raw, rows, &counted)
			if err != nil || ok != Stored(frame) {
				t.Fatalf("k=%d rows=%d: ParseCounts %v %v", k, rows, ok, err)
			}
			if ok {
				want := make([]uint32, len(full.Dict)+1)
				for r := range rows {
					want[full.ID(r)]++
				}
				if fmt.Sprint(full.Counts()) != fmt.Sprint(want) || fmt.Sprint(counted.Counts()) != fmt.Sprint(want) || fmt.Sprint(counted.Dict) != fmt.Sprint(full.Dict) {
					t.Fatalf("k=%d rows=%d: counts %v and %v (dictionary %v), want %v", k, rows, full.Counts(), counted.Counts(), counted.Dict, want)
				}
				if _, ok := counted.ByteIDs(); ok {
					t.Fatal("ByteIDs of a column read by ParseCounts")
				}
			} else if full.Counts() != nil {
				t.Fatalf("k=%d rows=%d: counts %v of a column that is not packed", k, rows, full.Counts())
			}
			ix.Close()
		}
	}

	if !sawWide {
		t.Error("no case has more than 254 values")
	}
	// Damaged packed columns: each must fail to parse.
	dict := func(n int) []byte {
		b := binary.AppendUvarint([]byte{kindPacked}, uint64(n))
		for i := range n {
			b = append(b, 2, 'v', byte(i))
		}
		return b
	}
	// col is a packed column: dict(n), the id bytes, then the counts.
	col := func(n int, ids []byte, counts ...byte) []byte {
		return append(append(dict(n), ids...), counts...)
	}
	var c StringColumn
	if err := ParseString(col(3, []byte{0b11100100, 0b00}, 2, 1, 1, 1), 5, &c); err != nil {
		t.Fatalf("a good column: %v", err)
	} else if ids := []uint32{c.ID(0), c.ID(1), c.ID(2), c.ID(3), c.ID(4)}; fmt.Sprint(ids) != "[0 1 2 3 0]" || fmt.Sprint(c.Counts()) != "[2 1 1 1]" {
		t.Fatalf("ids %v, counts %v", ids, c.Counts())
	}
	for _, bad := range []struct {
		name   string
		raw    []byte
		rows   int
		counts bool // ParseCounts fails too (it reads no ids)
	}{
		{"id past the dictionary", col(2, []byte{0b11}, 0, 0, 1), 1, false},
		{"4-bit id past the dictionary", col(5, []byte{0x06}, 0, 0, 0, 0, 0, 2), 2, false},
		{"bits set past the last row", col(3, []byte{0b01000000}, 3, 0, 0, 0), 3, false},
		{"too few id bytes", col(3, []byte{0}), 5, true},
		{"8-bit id past the dictionary", col(20, []byte{21}, append([]byte{1}, make([]byte, 20)...)...), 1, false},
		{"255 values", col(255, []byte{0}, append([]byte{1}, make([]byte, 255)...)...), 1, true},
		{"no counts", col(3, []byte{0}), 4, true},
		{"too few counts", col(3, []byte{0}, 4, 0, 0), 4, true},
		{"counts short of the rows", col(3, []byte{0}, 3, 0, 0, 0), 4, true},
		{"counts past the rows", col(3, []byte{0}, 4, 1, 0, 0), 4, true},
		{"a count past the rows", col(3, []byte{0}, 5, 0, 0, 0), 4, true},
		{"bytes past the counts", col(3, []byte{0}, 4, 0, 0, 0, 0), 4, true},
	} {
		if err := ParseString(bad.raw, bad.rows, &c); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", bad.name, err)
		}
		if ok, err := ParseCounts(bad.raw, bad.rows, &c); !ok || errors.Is(err, ErrCorrupt) != bad.counts {
			t.Errorf("%s: ParseCounts %v %v", bad.name, ok, err)
		}
	}
	// A stored column whose bytes changed fails its checksum.
	good := col(3, []byte{0b11100100, 0}, 2, 1, 1, 1)
	frame := binary.LittleEndian.AppendUint32(bytes.Clone(good), uint32(xxhash.Sum64(good)))
	if out, err := DecodeColumn(nil, frame, nil); err != nil || !bytes.Equal(out, good) {
		t.Fatalf("%q %v", out, err)
	}
	frame[len(frame)-6] ^= 1
	if _, err := DecodeColumn(nil, frame, nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a changed stored column: %v", err)
	}
}
