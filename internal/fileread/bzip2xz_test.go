package fileread

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"
)

// bz2Lines is the text of testdata/lines.ndjson.bz2 (made with bzip2 -9;
// the standard library has no bzip2 writer).
func bz2Lines() []byte {
	var b strings.Builder
	for i := range 30000 {
		fmt.Fprintf(&b, `{"level":"%s","i":%d,"msg":"request %d took %d ms"}`+"\n", []string{"info", "warn", "error"}[i%3], i, i*7%1000, i%250)
	}
	return []byte(b.String())
}

func xzBytes(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := xz.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBzip2AndXz reads bzip2 and xz input as files (with every chunk size
// and worker count), from a pipe and from stdin, and checks that a
// truncated file is an error that names it.
func TestBzip2AndXz(t *testing.T) {
	data := bz2Lines()
	bz, err := os.ReadFile("testdata/lines.ndjson.bz2")
	if err != nil {
		t.Fatal(err)
	}
	xzb := xzBytes(t, data)
	// Two xz streams, one after the other, read as one.
	xz2 := append(xzBytes(t, data[:len(data)/3]), xzBytes(t, data[len(data)/3:])...)
	dir := t.TempDir()
	for name, b := range map[string][]byte{"lines.ndjson.bz2": bz, "lines.ndjson.xz": xzb, "two.xz": xz2} {
		want := Bzip2
		if strings.HasSuffix(name, ".xz") {
			want = Xz
		}
		if c := DetectCompression(b[:6]); c != want {
			t.Fatalf("%s: detected %q, want %q", name, c, want)
		}
		p := writeFile(t, dir, name, b)
		for _, cfg := range []Config{{}, {ChunkSize: 1000, Workers: 3}, {ChunkSize: 64 << 10, Workers: 1}} {
			per, st, err := collect(t, []string{p}, cfg)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkChunks(t, name, per[0], data)
			if st.Strategies[0] != Stream {
				t.Fatalf("%s read with %s, want stream", name, st.Strategies[0])
			}
		}
		per, _, err := collect(t, []string{"-"}, Config{Stdin: bytes.NewReader(b), ChunkSize: 5000})
		if err != nil {
			t.Fatalf("%s on stdin: %v", name, err)
		}
		checkChunks(t, name+" on stdin", per[0], data)

		cut := writeFile(t, dir, "cut-"+name, b[:len(b)*2/3])
		if _, _, err := collect(t, []string{cut}, Config{}); err == nil || !strings.Contains(err.Error(), cut) {
			t.Fatalf("truncated %s: err %v, want an error naming the file", name, err)
		}
	}
	// Not bzip2 after all: "BZh" and a digit, then garbage.
	p := writeFile(t, dir, "fake.bz2", append([]byte("BZh9"), bytes.Repeat([]byte{0x55}, 100)...))
	if _, _, err := collect(t, []string{p}, Config{}); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("garbage bzip2: err %v, want an error naming the file", err)
	}
}
