package segment

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/spate-io/spate/internal/segindex"
)

// testIndexLines is a segindex.LineReader on encoding/json.
func testIndexLines(line []byte, emit func(name, value string)) (int64, bool, bool) {
	var m map[string]any
	if json.Unmarshal(line, &m) != nil {
		return 0, false, false
	}
	for k, v := range m {
		emit(k, fmt.Sprint(v))
	}
	return 0, false, true
}

// bigLines returns about n bytes of lines for one day.
func bigLines(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "{\"i\":%d,\"level\":\"%s\",\"msg\":\"%s\"}\n", i, []string{"info", "error"}[i%2], strings.Repeat("x", i%300))
	}
	return b.String()
}

// openIndex opens the sidecar of the .zst at path (relative to dir).
func openIndex(t *testing.T, dir, path string) (*segindex.Index, error) {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, path))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, path+idxExt))
	if err != nil {
		return nil, err
	}
	return segindex.Open(f, fi.Size(), fi.ModTime().UnixNano())
}

// checkFramed checks that the .zst at path holds want as frames that each
// decode alone to the lines its sidecar says, and returns the frames.
func checkFramed(t *testing.T, dir, path string, want []byte) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, path))
	if err != nil {
		t.Fatal(err)
	}
	if got := unzstd(t, path, data); !bytes.Equal(got, want) {
		t.Fatalf("%s decompresses to %d bytes, want %d", path, len(got), len(want))
	}
	ix, err := openIndex(t, dir, path)
	if err != nil {
		t.Fatalf("%s: sidecar: %v", path, err)
	}
	defer ix.Close()
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	var joined []byte
	var rows int
	for i, b := range ix.Blocks {
		raw, err := dec.DecodeAll(data[b.ZOff:b.ZOff+b.ZLen], nil)
		if err != nil {
			t.Fatalf("%s: frame %d does not decode alone: %v", path, i, err)
		}
		if int64(len(raw)) != b.RawLen || b.RawOff != int64(len(joined)) || len(raw) > BlockSize || raw[len(raw)-1] != '\n' {
			t.Fatalf("%s: frame %d: %d bytes at %d, the index says %d at %d", path, i, len(raw), len(joined), b.RawLen, b.RawOff)
		}
		joined = append(joined, raw...)
		rows += b.Rows
	}
	if !bytes.Equal(joined, want) || rows != bytes.Count(want, []byte("\n")) {
		t.Fatalf("%s: frames join to %d bytes and %d rows, want %d bytes", path, len(joined), rows, len(want))
	}
	return len(ix.Blocks)
}

// TestFramedWithIndex: a compressed segment is a run of frames of at most
// BlockSize bytes of whole lines, each decodable alone, and its sidecar
// describes them.
func TestFramedWithIndex(t *testing.T) {
	dir := t.TempDir()
	lines := bigLines(5 << 19) // 2.5 MiB: three frames
	s := openStore(t, dir, Options{NoCompress: true})
	mustAppend(t, s, "2026-11-26", lines)
	s.Close()
	s = openStore(t, dir, Options{IndexLines: testIndexLines})
	waitFor(t, "compression", func() bool { return s.Stats().CompressPending == 0 })
	files, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || !files[0].Compressed {
		t.Fatalf("files %+v, want one compressed segment", files)
	}
	if n := checkFramed(t, dir, files[0].Path, []byte(lines)); n != 3 {
		t.Fatalf("%d frames, want 3", n)
	}
}

// TestReindex: at Open, a compressed segment without a usable sidecar (none
// yet, one truncated, one of a segment since rewritten) is rewritten as
// frames with a fresh sidecar, and sidecar leftovers are removed; the lines
// are unchanged.
func TestReindex(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{NoCompress: true})
	days := []string{"2026-11-23", "2026-11-24", "2026-11-25"}
	want := map[string]string{}
	for _, d := range days {
		want[d] = bigLines(300 << 10)
		mustAppend(t, s, d, want[d])
	}
	s.Close()
	s = openStore(t, dir, Options{})
	waitFor(t, "compression", func() bool { return s.Stats().CompressPending == 0 })
	s.Close()
	files, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("got %d segments, want 3", len(files))
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f.Path+idxExt)); err == nil {
			t.Fatalf("%s: a sidecar without IndexLines", f.Path)
		}
	}
	// Damage: segment 0 has none; segment 1 a truncated one; segment 2 one
	// of another mtime; plus a leftover temp file and an orphan.
	s = openStore(t, dir, Options{IndexLines: testIndexLines})
	waitFor(t, "reindex", func() bool { return s.Stats().CompressPending == 0 })
	s.Close()
	for _, f := range files {
		checkFramed(t, dir, f.Path, []byte(want[f.Day]))
	}
	idx1 := filepath.Join(dir, files[1].Path+idxExt)
	data, err := os.ReadFile(idx1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(idx1, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, files[2].Path), later, later); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, files[0].Path+idxExt)); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, files[0].Path+idxExt+extTmp)
	orphan := filepath.Join(filepath.Dir(leftover), segName(999, kindZstd)+idxExt)
	for _, p := range []string{leftover, orphan} {
		if err := os.WriteFile(p, []byte("junk"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		if _, err := openIndex(t, dir, f.Path); err == nil {
			t.Fatalf("%s: damaged sidecar still opens", f.Path)
		}
	}
	log, lb := testLogger()
	s = openStore(t, dir, Options{IndexLines: testIndexLines, Logger: log})
	waitFor(t, "reindex", func() bool { return s.Stats().CompressPending == 0 })
	s.Close()
	for _, f := range files {
		checkFramed(t, dir, f.Path, []byte(want[f.Day]))
	}
	for _, p := range []string{leftover, orphan} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left in place", p)
		}
	}
	if !strings.Contains(lb.String(), "segment index cannot be used") {
		t.Errorf("no log of the damaged sidecars:\n%s", lb.String())
	}

	// Sidecars of another format version, as after an upgrade: rebuilt,
	// and said once for all of them, not once per segment.
	for _, f := range files {
		p := filepath.Join(dir, f.Path+idxExt)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint32(data[8:], segindex.Version-1)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := openIndex(t, dir, f.Path); !errors.Is(err, segindex.ErrVersion) {
			t.Fatalf("%s: %v, want another version", f.Path, err)
		}
	}
	log, lb = testLogger()
	s = openStore(t, dir, Options{IndexLines: testIndexLines, Logger: log})
	waitFor(t, "reindex", func() bool { return s.Stats().CompressPending == 0 })
	s.Close()
	for _, f := range files {
		checkFramed(t, dir, f.Path, []byte(want[f.Day]))
	}
	for _, f := range files {
		ix, err := openIndex(t, dir, f.Path)
		if err != nil {
			t.Fatalf("%s: not rebuilt: %v", f.Path, err)
		}
		ix.Close()
	}
	if got := lb.String(); strings.Contains(got, "segment index cannot be used") ||
		strings.Count(got, "segment indexes of another format version") != 1 || !strings.Contains(got, "segments=3") {
		t.Errorf("sidecars of another version logged as:\n%s", got)
	}
}
