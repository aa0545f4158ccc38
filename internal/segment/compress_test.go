package segment

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCompress writes plain segments, saves their bytes, reopens the
// directory with compression on, and checks that every segment became a
// valid .zst holding exactly the saved bytes, with the .ndjson removed.
func TestCompress(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{MaxSegmentBytes: 64 << 10, NoCompress: true})
	for i := range 200 {
		var b []byte
		for k := range 20 {
			b = fmt.Appendf(b, "{\"i\":%d,\"k\":%d,\"msg\":\"%s\"}\n", i, k, strings.Repeat("abc", i%17))
		}
		mustAppend(t, s, "2026-11-22", string(b), "2026-11-23", string(b[:len(b)/2+bytes.IndexByte(b[len(b)/2:], '\n')+1]))
	}
	s.Close()
	plain := map[uint64][]byte{}
	files, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Compressed {
			t.Fatalf("NoCompress store wrote %s", f.Path)
		}
		plain[f.Seq] = readFile(t, dir, f)
	}
	if len(plain) < 4 {
		t.Fatalf("got %d segments, want several", len(plain))
	}

	s = openStore(t, dir, Options{})
	waitFor(t, "compression", func() bool { return s.Stats().CompressPending == 0 })
	st := s.Stats()
	s.Close()

	var total int64
	for _, name := range dirNames(t, dir) {
		if !strings.HasSuffix(name, extZstd) {
			t.Fatalf("left %s after compression", name)
		}
		seq, _, _ := parseSegName(filepath.Base(name))
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		total += int64(len(data))
		if got := unzstd(t, name, data); !bytes.Equal(got, plain[seq]) {
			t.Fatalf("%s decompresses to %d bytes, want the %d bytes of the plain segment", name, len(got), len(plain[seq]))
		}
		delete(plain, seq)
	}
	if len(plain) != 0 {
		t.Fatalf("segments missing after compression: %v", slices.Collect(mapKeys(plain)))
	}
	if st.SegmentBytes != total || st.Segments != len(files) {
		t.Fatalf("got stats %d segments, %d bytes; want %d, %d", st.Segments, st.SegmentBytes, len(files), total)
	}
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestCompressTornTail: a sealed segment whose rollback failed may end in
// a torn line; its .zst holds only the complete lines.
func TestCompressTornTail(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join("2026-11-22", segName(3, kindPlain))
	writeFiles(t, dir, name, "a\nb\ntorn")
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	logger, logs := testLogger()
	c := newCompressor(root, dir, logger, &counters{}, 0, 0, nil, nil)
	if err := c.compress(name); err != nil {
		t.Fatalf("compress: %v", err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"2026-11-22/seg-0000000000000003.ndjson.zst"}) {
		t.Fatalf("got files %q", got)
	}
	data, _ := os.ReadFile(filepath.Join(dir, name+".zst"))
	if got := string(unzstd(t, name, data)); got != "a\nb\n" {
		t.Fatalf("got %q, want %q", got, "a\nb\n")
	}
	if !strings.Contains(logs.String(), "torn last line") {
		t.Fatalf("the torn line was not logged: %s", logs)
	}
}

// TestCompressAbandon: Close abandons a compression in progress, removing
// its .tmp and leaving the plain segment for the next Open.
func TestCompressAbandon(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join("2026-11-22", segName(3, kindPlain))
	writeFiles(t, dir, name, strings.Repeat("line\n", 1000))
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	logger, _ := testLogger()
	c := newCompressor(root, dir, logger, &counters{}, 0, 0, nil, nil)
	close(c.stop)
	if err := c.compress(name); !errors.Is(err, errAbandoned) {
		t.Fatalf("compress after stop: got %v, want errAbandoned", err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"2026-11-22/seg-0000000000000003.ndjson"}) {
		t.Fatalf("got files %q, want the plain segment only", got)
	}
}

// TestCompressRemoveDelay: the plain segment stays beside its .zst for the
// removal delay, so that a listing racing the rename sees one of them;
// readers take the .zst; Close leaves it for the next Open.
func TestCompressRemoveDelay(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{testRemoveDelay: 300 * time.Millisecond})
	mustAppend(t, s, "2026-11-22", "a\n")
	s.Close() // the next Open seals and compresses the segment
	s2 := openStore(t, dir, Options{testRemoveDelay: 300 * time.Millisecond})
	waitFor(t, "compression", func() bool { return s2.Stats().CompressPending == 0 })
	names := dirNames(t, dir)
	if !slices.Equal(names, []string{"0-0/2026-11-22/seg-0000000000000000.ndjson", "0-0/2026-11-22/seg-0000000000000000.ndjson.zst"}) {
		t.Fatalf("right after compression: %q", names)
	}
	if files, _ := List(dir); len(files) != 1 || !files[0].Compressed {
		t.Fatalf("List: %+v", files)
	}
	waitFor(t, "the plain segment removed", func() bool { return len(dirNames(t, dir)) == 1 })
	if st := s2.Stats(); st.Segments != 1 {
		t.Fatalf("stats: %+v", st)
	}
}

// TestCompressDelay: a sealed segment stays plain for Options.CompressDelay
// before it is compressed.
func TestCompressDelay(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	mustAppend(t, s, "2026-11-22", "a\n")
	s.Close()
	start := time.Now()
	s2 := openStore(t, dir, Options{CompressDelay: 400 * time.Millisecond})
	time.Sleep(200 * time.Millisecond)
	if st := s2.Stats(); st.CompressPending != 1 {
		t.Fatalf("compressed before its delay: %+v", st)
	}
	if files, _ := List(dir); len(files) != 1 || files[0].Compressed {
		t.Fatalf("before the delay: %+v", files)
	}
	waitFor(t, "compression", func() bool { files, _ := List(dir); return len(files) == 1 && files[0].Compressed })
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Fatalf("compressed after %v, before the 400 ms delay", d)
	}
}
