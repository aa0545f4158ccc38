package inflate

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"

	kflate "github.com/klauspost/compress/flate"
	kgzip "github.com/klauspost/compress/gzip"
)

// logLines returns n bytes of log-like text: repeated structure, varying
// values, long and short matches, runs.
func logLines(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	svcs := []string{"api", "web", "auth", "billing", "search"}
	for b.Len() < n {
		fmt.Fprintf(&b, `{"ts":"2026-11-%02dT%02d:%02d:%02d.%06dZ","level":"%s","service":"%s","latency_ms":%d,"msg":"%s"}`+"\n",
			1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000000),
			[]string{"info", "warn", "error"}[r.IntN(3)], svcs[r.IntN(len(svcs))], r.IntN(5000),
			bytes.Repeat([]byte{byte('a' + r.IntN(26))}, r.IntN(40)))
		if r.IntN(50) == 0 {
			rnd := make([]byte, r.IntN(3000))
			for i := range rnd {
				rnd[i] = byte(r.Uint32())
			}
			b.Write(rnd)
		}
	}
	return b.Bytes()[:n]
}

// gzipped compresses data with compress/gzip at level (or with klauspost's
// flate inside a hand-made member when k is set).
func gzipped(t testing.TB, data []byte, level int, k bool) []byte {
	t.Helper()
	var b bytes.Buffer
	if !k {
		w, err := gzip.NewWriterLevel(&b, level)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		w.Close()
		return b.Bytes()
	}
	var body bytes.Buffer
	w, err := kflate.NewWriter(&body, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return member(body.Bytes(), data, 0, nil, "", "", false)
}

// member wraps a DEFLATE stream in a gzip member with the given header
// fields.
func member(deflated, data []byte, flg byte, extra []byte, name, comment string, hcrc bool) []byte {
	var h bytes.Buffer
	if extra != nil {
		flg |= flagExtra
	}
	if name != "" {
		flg |= flagName
	}
	if comment != "" {
		flg |= flagComment
	}
	if hcrc {
		flg |= flagHdrCrc
	}
	h.Write([]byte{0x1f, 0x8b, 8, flg, 0, 0, 0, 0, 0, 255})
	if extra != nil {
		h.Write([]byte{byte(len(extra)), byte(len(extra) >> 8)})
		h.Write(extra)
	}
	if name != "" {
		h.WriteString(name + "\x00")
	}
	if comment != "" {
		h.WriteString(comment + "\x00")
	}
	if hcrc {
		c := crc32.ChecksumIEEE(h.Bytes())
		h.Write([]byte{byte(c), byte(c >> 8)})
	}
	h.Write(deflated)
	c := crc32.ChecksumIEEE(data)
	n := uint32(len(data))
	h.Write([]byte{byte(c), byte(c >> 8), byte(c >> 16), byte(c >> 24), byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)})
	return h.Bytes()
}

// readAll reads z with reads of sizes drawn by size.
func readAll(z io.Reader, size func() int) ([]byte, error) {
	var out []byte
	for {
		p := make([]byte, size())
		n, err := z.Read(p)
		out = append(out, p[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// oneByteReader hands out its input a byte at a time.
type oneByteReader struct{ b []byte }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

func TestReaderMatchesGzip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := logLines(r, 3<<20)
	sizes := map[string]func() int{
		"1MiB":   func() int { return 1 << 20 },
		"4KiB":   func() int { return 4096 },
		"random": func() int { return 1 + r.IntN(70000) },
		"tiny":   func() int { return 1 + r.IntN(300) },
	}
	for _, level := range []int{gzip.NoCompression, gzip.HuffmanOnly, 1, 6, 9} {
		for _, k := range []bool{false, true} {
			if k && level == gzip.NoCompression {
				continue
			}
			gz := gzipped(t, data, level, k)
			for name, size := range sizes {
				if name == "tiny" && level != 6 {
					continue
				}
				z, err := NewReader(bytes.NewReader(gz))
				if err != nil {
					t.Fatal(err)
				}
				got, err := readAll(z, size)
				if err != nil {
					t.Fatalf("level %d klauspost %v reads %s: %v", level, k, name, err)
				}
				if !bytes.Equal(got, data) {
					t.Fatalf("level %d klauspost %v reads %s: output differs (%d bytes, want %d)", level, k, name, len(got), len(data))
				}
			}
		}
	}
}

func TestReaderMembersAndHeaders(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var all, want []byte
	for i := range 6 {
		data := logLines(r, r.IntN(100000))
		var body bytes.Buffer
		w, _ := flate.NewWriter(&body, 1+i)
		w.Write(data)
		w.Close()
		var extra []byte
		if i%2 == 0 {
			extra = bytes.Repeat([]byte{byte(i)}, 300)
		}
		all = append(all, member(body.Bytes(), data, 0, extra, fmt.Sprint("name", i), fmt.Sprint("comment", i), i%3 == 0)...)
		want = append(want, data...)
	}
	for _, src := range []io.Reader{bytes.NewReader(all), &oneByteReader{all}} {
		z, err := NewReader(src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(z, func() int { return 1 + r.IntN(200000) })
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%T: output differs", src)
		}
	}
	// Reset reuses the reader.
	z, _ := NewReader(bytes.NewReader(all))
	if err := z.Reset(bytes.NewReader(all)); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(z); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after Reset: %v", err)
	}
	if _, err := NewReader(bytes.NewReader(nil)); err != io.EOF {
		t.Fatalf("empty input: %v, want io.EOF", err)
	}
}

func TestReaderErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	data := logLines(r, 200000)
	gz := gzipped(t, data, 6, false)
	check := func(name string, in []byte, want error) {
		t.Helper()
		_, stdErr := io.ReadAll(mustGzip(in))
		z, err := NewReader(bytes.NewReader(in))
		if err == nil {
			_, err = readAll(z, func() int { return 1 + r.IntN(100000) })
		}
		if err == nil || stdErr == nil {
			t.Fatalf("%s: err %v, compress/gzip %v: want both errors", name, err, stdErr)
		}
		if want != nil && !errors.Is(err, want) {
			t.Fatalf("%s: err %v, want %v", name, err, want)
		}
	}
	for _, cut := range []int{1, 5, 10, 11, 100, len(gz) / 2, len(gz) - 9, len(gz) - 4, len(gz) - 1} {
		check(fmt.Sprint("truncated at ", cut), gz[:cut], nil)
	}
	bad := bytes.Clone(gz)
	bad[len(bad)-5] ^= 1
	check("crc", bad, ErrChecksum)
	bad = bytes.Clone(gz)
	bad[len(bad)-1] ^= 1
	check("size", bad, ErrChecksum)
	check("not gzip", []byte("not gzip at all, really"), ErrHeader)
	check("garbage after a member", append(bytes.Clone(gz), "garbage!!!!"...), ErrHeader)
	// A reserved block type (3) right after the header.
	check("reserved block", append(bytes.Clone(gz[:10]), 0x07, 0, 0, 0, 0, 0, 0, 0, 0, 0), nil)
	var ce *CorruptInputError
	z, _ := NewReader(bytes.NewReader(append(bytes.Clone(gz[:10]), 0x07, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
	if _, err := io.ReadAll(z); !errors.As(err, &ce) || ce.Offset != 11 {
		t.Fatalf("reserved block: %v, want a CorruptInputError at offset 11", err)
	}
}

func mustGzip(in []byte) io.Reader {
	z, err := gzip.NewReader(bytes.NewReader(in))
	if err != nil {
		return errReader{err}
	}
	return z
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestTruncatedEverywhere cuts a small multi-block member at every byte:
// each gives an error, never a panic or a clean end.
func TestTruncatedEverywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	data := logLines(r, 20000)
	for _, level := range []int{gzip.NoCompression, 1, 9} {
		gz := gzipped(t, data, level, false)
		for cut := range len(gz) {
			z, err := NewReader(bytes.NewReader(gz[:cut]))
			if err == nil {
				var got []byte
				got, err = readAll(z, func() int { return 1 + r.IntN(5000) })
				if !bytes.HasPrefix(data, got) {
					t.Fatalf("level %d cut %d: output is not a prefix of the data", level, cut)
				}
			}
			if err == nil || (cut > 0 && !errors.Is(err, io.ErrUnexpectedEOF)) {
				t.Fatalf("level %d cut %d: err %v, want io.ErrUnexpectedEOF", level, cut, err)
			}
		}
	}
}

// FuzzDeflate checks the decoder against compress/flate on any bytes taken
// as a DEFLATE stream: the same output when compress/flate accepts them, an
// error when it does not.
func FuzzDeflate(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, level := range []int{0, 1, 6, 9, -2} {
		var b bytes.Buffer
		w, _ := flate.NewWriter(&b, level)
		w.Write(logLines(r, 5000))
		w.Close()
		f.Add(b.Bytes())
	}
	f.Add([]byte{0x07})
	f.Fuzz(func(t *testing.T, in []byte) {
		want, wantErr := io.ReadAll(flate.NewReader(bytes.NewReader(in)))
		var d decoder
		d.reset(bytes.NewReader(in))
		var got []byte
		var err error
		buf := make([]byte, 1+len(in)%5000)
		for {
			var n int
			var ended bool
			n, ended, err = d.decode(buf, 0, 0)
			got = append(got, buf[:n]...)
			d.saveHist(buf[:n])
			if err != nil || ended {
				break
			}
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("err %v, compress/flate %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("output differs: %d bytes, compress/flate %d", len(got), len(want))
		}
	})
}

// FuzzReader checks Reader against compress/gzip on any input.
func FuzzReader(f *testing.F) {
	r := rand.New(rand.NewPCG(11, 12))
	f.Add(gzipped(f, logLines(r, 3000), 6, false))
	f.Add(append(gzipped(f, logLines(r, 100), 0, false), gzipped(f, logLines(r, 300), 9, false)...))
	f.Fuzz(func(t *testing.T, in []byte) {
		want, wantErr := io.ReadAll(mustGzip(in))
		z, err := NewReader(bytes.NewReader(in))
		var got []byte
		if err == nil {
			got, err = readAll(z, func() int { return 1 + len(in)%3000 })
		}
		if err == io.EOF {
			err = nil // an empty input
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("err %v, compress/gzip %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("output differs: %d bytes, compress/gzip %d", len(got), len(want))
		}
	})
}

// BenchmarkReader decodes 8 MiB of gzipped log lines with 1 MiB reads, as
// a scan does, beside klauspost's and the standard library's gzip readers
// on the same bytes.
func BenchmarkReader(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	data := logLines(r, 8<<20)
	gz := gzipped(b, data, 6, false)
	buf := make([]byte, 1<<20)
	drain := func(b *testing.B, z io.Reader) {
		for {
			_, err := io.ReadFull(z, buf)
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name string
		z    interface {
			io.Reader
			Reset(io.Reader) error
		}
	}{{"inflate", new(Reader)}, {"klauspost", new(kgzip.Reader)}, {"stdlib", new(gzip.Reader)}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.z.Reset(bytes.NewReader(gz)); err != nil {
					b.Fatal(err)
				}
				drain(b, c.z)
			}
		})
	}
}
