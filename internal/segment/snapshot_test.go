package segment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// readSnapshot returns what a reader following the snapshot's rules reads:
// each file's first Limit bytes (decompressed).
func readSnapshot(t *testing.T, s *Snapshot) string {
	t.Helper()
	var b strings.Builder
	for i := range s.Files {
		f := &s.Files[i]
		fh, err := s.Open(f)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		var r io.Reader = fh
		head := make([]byte, 4)
		n, _ := fh.ReadAt(head, 0)
		if n == 4 && string(head) == "\x28\xb5\x2f\xfd" { // zstd's magic number
			d, err := zstd.NewReader(fh)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			r = d
		}
		if f.Limit >= 0 {
			r = io.LimitReader(r, f.Limit)
		}
		data, err := io.ReadAll(r)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		b.Write(data)
	}
	return b.String()
}

func takeSnapshot(t *testing.T, dir string, tn Tenant) *Snapshot {
	t.Helper()
	s, err := OpenSnapshot(dir, tn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSnapshotLive: with a store writing, a snapshot reads exactly the
// acknowledged lines: not a batch written but not yet acknowledged, and
// the metadata says what they hold.
func TestSnapshotLive(t *testing.T) {
	dir := t.TempDir()
	block := make(chan struct{})
	var hold atomic.Bool
	s := openStore(t, dir, Options{NoCompress: true, testBeforeAck: func() {
		if hold.Load() {
			<-block
		}
	}})
	ctx := context.Background()
	g := func(line string, ts int64, streams ...string) Group {
		return Group{Day: "2026-11-22", Lines: []byte(line), MinTime: ts, MaxTime: ts, HasTime: true, Streams: streams}
	}
	if err := s.Append(ctx, []Group{g("a\nb\n", 100, "{}", `{s="x"}`)}); err != nil {
		t.Fatal(err)
	}
	hold.Store(true)
	done := make(chan error)
	go func() { done <- s.Append(ctx, []Group{g("c\n", 50, `{s="y"}`)}) }()
	waitFor(t, "the batch written", func() bool { return s.Stats().SegmentBytes == 6 })
	snap := takeSnapshot(t, dir, Tenant{})
	if !snap.Live || len(snap.Files) != 1 {
		t.Fatalf("snapshot %+v", snap)
	}
	f := snap.Files[0]
	if f.Limit != 4 || f.Meta == nil || f.Meta.Lines != 2 || f.Meta.MinTime != 100 || fmt.Sprint(f.Meta.Streams) != `[{s="x"} {}]` || f.Meta.Sealed {
		t.Fatalf("file %+v, meta %+v", f, f.Meta)
	}
	if got := readSnapshot(t, snap); got != "a\nb\n" {
		t.Fatalf("read %q before the acknowledgement", got)
	}
	close(block)
	hold.Store(false)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	snap = takeSnapshot(t, dir, Tenant{})
	if f := snap.Files[0]; f.Limit != 6 || f.Meta.Lines != 3 || f.Meta.MinTime != 50 || f.Meta.MaxTime != 100 || len(f.Meta.Streams) != 3 {
		t.Fatalf("after the acknowledgement: %+v %+v", f, f.Meta)
	}
	if got := readSnapshot(t, snap); got != "a\nb\nc\n" {
		t.Fatalf("read %q", got)
	}
	// A group without a summary makes the time and streams unknown.
	mustAppend(t, s, "2026-11-22", "d\n")
	if m := takeSnapshot(t, dir, Tenant{}).Files[0].Meta; m.HasTime || m.StreamsKnown || m.Lines != 4 {
		t.Fatalf("after a group without summary: %+v", m)
	}
	s.Close()
	// Sealed: the whole segment, and the metadata says so.
	snap = takeSnapshot(t, dir, Tenant{})
	if f := snap.Files[0]; snap.Live || f.Limit != 8 || f.Meta == nil || !f.Meta.Sealed {
		t.Fatalf("after Close: live %v %+v %+v", snap.Live, f, f.Meta)
	}
}

// TestSnapshotRename: a plain segment compressed and removed between the
// snapshot and the opening is read from its .zst, and its lines come once.
func TestSnapshotRename(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{NoCompress: true})
	mustAppend(t, s, "2026-11-22", "a\nb\n")
	mustAppend(t, s, "2026-11-23", "c\n")
	s.Close()
	snap := takeSnapshot(t, dir, Tenant{})
	if len(snap.Files) != 2 || snap.Files[0].Compressed {
		t.Fatalf("%+v", snap.Files)
	}
	// A new store seals and compresses them.
	s2 := openStore(t, dir, Options{})
	waitFor(t, "compression", func() bool { return s2.Stats().CompressPending == 0 })
	if _, err := os.Stat(filepath.Join(dir, snap.Files[0].Path)); !os.IsNotExist(err) {
		t.Fatalf("the plain segment is still there: %v", err)
	}
	if got := readSnapshot(t, snap); got != "a\nb\nc\n" {
		t.Fatalf("read %q", got)
	}
	// A new snapshot lists the .zst files, sealed metadata and all.
	snap = takeSnapshot(t, dir, Tenant{})
	if f := snap.Files[0]; !f.Compressed || f.Limit != 4 || f.Meta == nil || !f.Meta.Sealed {
		t.Fatalf("%+v %+v", f, f.Meta)
	}
	if got := readSnapshot(t, snap); got != "a\nb\nc\n" {
		t.Fatalf("read %q", got)
	}
}

// TestSnapshotSealedMetaCache: the metadata of a compressed segment is
// read once and kept while its .zst is unchanged; a .zst with another
// modification time has it read again.
func TestSnapshotSealedMetaCache(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{NoCompress: true})
	mustAppend(t, s, "2026-11-22", "a\nb\n")
	s.Close()
	s = openStore(t, dir, Options{})
	waitFor(t, "compression", func() bool { return s.Stats().CompressPending == 0 })
	s.Close()
	snap := takeSnapshot(t, dir, Tenant{})
	f := snap.Files[0]
	if !f.Compressed || f.Meta == nil || !f.Meta.Sealed {
		t.Fatalf("%+v %+v", f, f.Meta)
	}
	metaPath := filepath.Join(dir, filepath.Dir(f.Path), metaName(f.Seq))
	if err := os.Remove(metaPath); err != nil {
		t.Fatal(err)
	}
	if snap = takeSnapshot(t, dir, Tenant{}); snap.Files[0].Meta == nil || snap.Files[0].Limit != 4 {
		t.Fatalf("the kept metadata was not used: %+v", snap.Files[0])
	}
	zst := filepath.Join(dir, f.Path)
	fi, err := os.Stat(zst)
	if err != nil {
		t.Fatal(err)
	}
	later := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(zst, later, later); err != nil {
		t.Fatal(err)
	}
	if snap = takeSnapshot(t, dir, Tenant{}); snap.Files[0].Meta != nil || snap.Files[0].Limit != -1 {
		t.Fatalf("metadata kept for a rewritten segment: %+v %+v", snap.Files[0], snap.Files[0].Meta)
	}
	if got := readSnapshot(t, snap); got != "a\nb\n" {
		t.Fatalf("read %q", got)
	}
}

// TestSnapshotAfterCrash: with no store running, a plain segment is read up
// to its last complete line, and metadata that lags behind it is not used.
func TestSnapshotAfterCrash(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{NoCompress: true})
	mustAppend(t, s, "2026-11-22", "a\n")
	crash := t.TempDir()
	if err := os.CopyFS(crash, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	// Lines the metadata does not know of, and a torn one.
	files, _ := List(crash)
	p := filepath.Join(crash, files[0].Path)
	af, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	af.WriteString("b\n{\"torn")
	af.Close()
	snap := takeSnapshot(t, crash, Tenant{})
	if f := snap.Files[0]; snap.Live || f.Limit != 4 || f.Meta != nil {
		t.Fatalf("%v %+v", snap.Live, f)
	}
	if got := readSnapshot(t, snap); got != "a\nb\n" {
		t.Fatalf("read %q", got)
	}
	// The running store's own directory is live; other tenants are apart.
	snap = takeSnapshot(t, dir, Tenant{})
	if !snap.Live || len(snap.Files) != 1 || len(takeSnapshot(t, dir, Tenant{1, 2}).Files) != 0 {
		t.Fatalf("%+v", snap)
	}
	// Damaged metadata counts as none.
	writeFiles(t, crash, filepath.Join(filepath.Dir(files[0].Path), metaName(files[0].Seq)), "{not json")
	if f := takeSnapshot(t, crash, Tenant{}).Files[0]; f.Meta != nil || f.Limit != 4 {
		t.Fatalf("damaged metadata: %+v", f)
	}
}

// TestRecoverMeta: Open writes sealed metadata for the segments it
// recovers, keeping the summary when the last metadata covered the whole
// file, and removes metadata whose segment is gone.
func TestRecoverMeta(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{NoCompress: true})
	if err := s.Append(context.Background(), []Group{{Day: "2026-11-22", Lines: []byte("a\nb\n"), MinTime: 1, MaxTime: 2, HasTime: true, Streams: []string{"{}"}}}); err != nil {
		t.Fatal(err)
	}
	crash := t.TempDir()
	os.CopyFS(crash, os.DirFS(dir))
	os.Remove(filepath.Join(crash, lockName))
	writeFiles(t, crash, "0-0/2026-11-22/.seg-0000000000000007.meta", "{}")
	s2 := openStore(t, crash, Options{NoCompress: true})
	s2.Close()
	snap := takeSnapshot(t, crash, Tenant{})
	if m := snap.Files[0].Meta; m == nil || !m.Sealed || m.Lines != 2 || !m.HasTime || m.MaxTime != 2 || !m.StreamsKnown {
		t.Fatalf("kept summary: %+v", m)
	}
	for _, name := range []string{".seg-0000000000000007.meta"} {
		if _, err := os.Stat(filepath.Join(crash, "0-0/2026-11-22", name)); !os.IsNotExist(err) {
			t.Fatalf("%s left behind: %v", name, err)
		}
	}
	// A segment longer than its metadata: lines counted, summary unknown.
	crash2 := t.TempDir()
	os.CopyFS(crash2, os.DirFS(dir))
	os.Remove(filepath.Join(crash2, lockName))
	files, _ := List(crash2)
	af, _ := os.OpenFile(filepath.Join(crash2, files[0].Path), os.O_WRONLY|os.O_APPEND, 0)
	af.WriteString("c\n")
	af.Close()
	s3 := openStore(t, crash2, Options{NoCompress: true})
	s3.Close()
	if m := takeSnapshot(t, crash2, Tenant{}).Files[0].Meta; m == nil || !m.Sealed || m.Lines != 3 || m.Size != 6 || m.HasTime || m.StreamsKnown {
		t.Fatalf("recounted: %+v", m)
	}
}

// TestMetaEncoding: metadata round-trips; a torn or altered file fails its
// checksum; a rewrite in place that gets shorter leaves no tail.
func TestMetaEncoding(t *testing.T) {
	m := &Meta{Version: MetaVersion, Size: 1234, Lines: 10, Sealed: true, MinTime: -5, MaxTime: 7, HasTime: true, Streams: []string{`{a="b\n"}`, "{}"}, StreamsKnown: true}
	data := encodeMeta(nil, m)
	got, err := decodeMeta(data)
	if err != nil || fmt.Sprint(*got) != fmt.Sprint(*m) {
		t.Fatalf("decodeMeta(encodeMeta) = %+v, %v", got, err)
	}
	for _, bad := range [][]byte{data[:len(data)/2], data[:len(data)-1], append(append([]byte(nil), data...), 'x'),
		bytes.Replace(data, []byte("1234"), []byte("1235"), 1), []byte(`{"version":1}`), nil} {
		if _, err := decodeMeta(bad); err == nil {
			t.Fatalf("decodeMeta(%q) accepted", bad)
		}
	}
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	root.Mkdir("d", 0o755)
	if err := writeMeta(root, "d", 3, m); err != nil {
		t.Fatal(err)
	}
	short := &Meta{Version: MetaVersion, Size: 1}
	if err := writeMeta(root, "d", 3, short); err != nil {
		t.Fatal(err)
	}
	if got, err := readMeta(root, "d", 3); err != nil || got.Size != 1 || got.Streams != nil {
		t.Fatalf("after a shorter rewrite: %+v, %v", got, err)
	}
	if _, err := readMeta(root, "d", 4); !errors.Is(err, errNoMeta) {
		t.Fatalf("missing metadata: %v", err)
	}
}

// TestMetaCacheBound: the kept metadata stays under its byte cap, however
// many segments and streams it is given.
func TestMetaCacheBound(t *testing.T) {
	c := metaCache{m: map[metaKey]*Meta{}}
	streams := make([]string, 1000)
	for i := range streams {
		streams[i] = fmt.Sprintf(`{app="service-%04d",env="production"}`, i)
	}
	for i := range 2000 {
		k := metaKey{path: fmt.Sprintf("/data/0-0/2026-11-26/seg-%016d.ndjson.zst", i), size: 1, mtime: 2}
		c.put(k, &Meta{Sealed: true, Streams: streams, StreamsKnown: true})
		if c.bytes > maxSealedMetaBytes {
			t.Fatalf("after %d puts the cache holds about %d bytes", i+1, c.bytes)
		}
		if c.get(k) == nil {
			t.Fatalf("put %d not kept", i)
		}
	}
	if len(c.m) == 2000 {
		t.Fatal("the cache was never cut back")
	}
}

// TestSnapshotScanCache: a snapshot of a store whose directories are old
// and unchanged reuses the last listing, and lists again when a segment,
// a day or a tenant comes or goes.
func TestSnapshotScanCache(t *testing.T) {
	dir := t.TempDir()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	age := func() { // every directory an hour old
		old := time.Now().Add(-time.Hour)
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				err = os.Chtimes(p, old, old)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	cached := func() *scanEntry {
		scanCache.mu.Lock()
		defer scanCache.mu.Unlock()
		return scanCache.m[abs]
	}
	paths := func(tn Tenant) string {
		var ps []string
		for _, f := range takeSnapshot(t, dir, tn).Files {
			ps = append(ps, f.Path)
		}
		return strings.Join(ps, " ")
	}
	write := func(tn Tenant, day string) {
		s := openStore(t, dir, Options{NoCompress: true})
		if err := s.Append(context.Background(), []Group{{Tenant: tn, Day: day, Lines: []byte("x\n")}}); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	check := func(tn Tenant, want string, reused bool) {
		t.Helper()
		before := cached()
		if got := paths(tn); got != want {
			t.Fatalf("listed %q, want %q", got, want)
		}
		if after := cached(); reused != (before != nil && after == before) {
			t.Fatalf("listing reused: %v, want %v", !reused, reused)
		}
	}
	seg := func(day string, seq int) string { return fmt.Sprintf("0-0/%s/seg-%016x.ndjson", day, seq) }

	write(Tenant{}, "2026-11-22")
	check(Tenant{}, seg("2026-11-22", 0), false) // fresh directories: not cached
	if cached() != nil {
		t.Fatal("a listing of directories changed a moment ago was cached")
	}
	age()
	check(Tenant{}, seg("2026-11-22", 0), false)
	if cached() == nil {
		t.Fatal("the listing of old directories was not cached")
	}
	check(Tenant{}, seg("2026-11-22", 0), true)

	write(Tenant{}, "2026-11-23") // a new day
	check(Tenant{}, seg("2026-11-22", 0)+" "+seg("2026-11-23", 1), false)
	age()
	check(Tenant{}, seg("2026-11-22", 0)+" "+seg("2026-11-23", 1), false)
	check(Tenant{}, seg("2026-11-22", 0)+" "+seg("2026-11-23", 1), true)

	write(Tenant{}, "2026-11-23") // a new segment in a day
	check(Tenant{}, seg("2026-11-22", 0)+" "+seg("2026-11-23", 1)+" "+seg("2026-11-23", 2), false)
	age()
	check(Tenant{}, seg("2026-11-22", 0)+" "+seg("2026-11-23", 1)+" "+seg("2026-11-23", 2), false)

	// A segment removed.
	for _, name := range []string{seg("2026-11-23", 1), fmt.Sprintf("0-0/2026-11-23/.seg-%016x.meta", 1)} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	check(Tenant{}, seg("2026-11-22", 0)+" "+seg("2026-11-23", 2), false)
	age()
	check(Tenant{}, seg("2026-11-22", 0)+" "+seg("2026-11-23", 2), false)
	check(Tenant{}, seg("2026-11-22", 0)+" "+seg("2026-11-23", 2), true)

	// A new tenant.
	tn := Tenant{AccountID: 3, ProjectID: 4}
	write(tn, "2026-11-22")
	check(tn, fmt.Sprintf("3-4/2026-11-22/seg-%016x.ndjson", 3), false)
	check(Tenant{}, seg("2026-11-22", 0)+" "+seg("2026-11-23", 2), false)
}
