package segment

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// writeFiles creates files under dir from name, content pairs.
func writeFiles(t testing.TB, dir string, nameContent ...string) {
	t.Helper()
	for i := 0; i+1 < len(nameContent); i += 2 {
		p := filepath.Join(dir, nameContent[i])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(nameContent[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func zstdString(t testing.TB, s string) string {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return string(enc.EncodeAll([]byte(s), nil))
}

// TestRecover lists directory states left by a crash or kill and checks
// what Open leaves behind (NoCompress, so plain segments stay visible),
// what reading gives, and where the next segment goes.
func TestRecover(t *testing.T) {
	f := func(desc string, before []string, wantFiles []string, wantDays map[string]string, wantLog ...string) {
		t.Helper()
		dir := t.TempDir()
		writeFiles(t, dir, before...)
		logger, logs := testLogger()
		s := openStore(t, dir, Options{NoCompress: true, Logger: logger})
		if err := s.Close(); err != nil {
			t.Fatalf("%s: Close: %v", desc, err)
		}
		if got := dirNames(t, dir); !slices.Equal(got, wantFiles) {
			t.Fatalf("%s: got files\n%q\nwant\n%q", desc, got, wantFiles)
		}
		got := readDays(t, dir)
		if len(got) != len(wantDays) {
			t.Fatalf("%s: got days %q, want %q", desc, got, wantDays)
		}
		for day, want := range wantDays {
			if got[day] != want {
				t.Fatalf("%s: day %s: got %q, want %q", desc, day, got[day], want)
			}
		}
		for _, w := range wantLog {
			if !strings.Contains(logs.String(), w) {
				t.Fatalf("%s: log lacks %q:\n%s", desc, w, logs)
			}
		}
	}
	const (
		d     = "0-0/2026-11-22/"
		seg5  = d + "seg-0000000000000005.ndjson"
		seg5z = seg5 + ".zst"
		seg5t = seg5z + ".tmp"
		seg6  = d + "seg-0000000000000006.ndjson"
	)
	f("empty directory", nil, nil, nil)
	f("torn tail",
		[]string{seg5, "{\"a\":1}\n{\"a\":2}\n{\"a\""},
		[]string{seg5},
		map[string]string{"2026-11-22": "{\"a\":1}\n{\"a\":2}\n"},
		"truncated torn segment tail", "seg-0000000000000005.ndjson", "old_size=20", "new_size=16")
	f("torn tail longer than a read step",
		[]string{seg5, "a\n" + strings.Repeat("x", 200<<10)},
		[]string{seg5},
		map[string]string{"2026-11-22": "a\n"},
		"new_size=2")
	f("no complete line",
		[]string{seg5, "{\"a\""},
		nil, nil,
		"removed segment without a complete line")
	f("empty segment",
		[]string{seg5, ""},
		nil, nil)
	f("leftover tmp",
		[]string{seg5, "a\n", seg5t, "garbage"},
		[]string{seg5},
		map[string]string{"2026-11-22": "a\n"},
		"removed leftover temporary file")
	f("plain and zst: the zst wins",
		[]string{seg5, "a\nb\n", seg5z, zstdString(t, "a\nb\n")},
		[]string{seg5z},
		map[string]string{"2026-11-22": "a\nb\n"},
		"removed plain segment already compressed")
	f("other files are left alone",
		[]string{d + "notes.txt", "x", "README", "y", "2026-13-01/seg-0000000000000001.ndjson", "z"},
		[]string{"0-0/2026-11-22/notes.txt", "2026-13-01/seg-0000000000000001.ndjson", "README"},
		nil)
	f("several days",
		[]string{seg5z, zstdString(t, "a\n"), seg6, "b\n", "0-0/2026-11-21/seg-0000000000000002.ndjson", "c\ntorn"},
		[]string{"0-0/2026-11-21/seg-0000000000000002.ndjson", seg5z, seg6},
		map[string]string{"2026-11-21": "c\n", "2026-11-22": "a\nb\n"})
	// The layout before tenants: days are moved under 0-0, and recovered.
	f("legacy layout",
		[]string{"2026-11-22/seg-0000000000000005.ndjson", "a\ntorn", "2026-11-21/seg-0000000000000002.ndjson.zst", zstdString(t, "c\n"),
			"2026-11-21/notes.txt", "n"},
		[]string{"0-0/2026-11-21/notes.txt", "0-0/2026-11-21/seg-0000000000000002.ndjson.zst", seg5},
		map[string]string{"2026-11-21": "c\n", "2026-11-22": "a\n"},
		"moved day directories under the default tenant", "days=2")
	// A migration cut short: the day is in both places.
	f("legacy and migrated",
		[]string{"2026-11-22/seg-0000000000000006.ndjson", "b\n", "2026-11-22/notes.txt", "n", seg5, "a\n"},
		[]string{"0-0/2026-11-22/seg-0000000000000005.ndjson", "0-0/2026-11-22/seg-0000000000000006.ndjson", "2026-11-22/notes.txt"},
		map[string]string{"2026-11-22": "a\nb\n"})
	// Other tenants live in their own directories.
	f("tenants",
		[]string{"7-8/2026-11-22/seg-0000000000000009.ndjson", "t\n", seg5, "a\n", "07-8/2026-11-22/seg-0000000000000001.ndjson", "x\n"},
		[]string{seg5, "07-8/2026-11-22/seg-0000000000000001.ndjson", "7-8/2026-11-22/seg-0000000000000009.ndjson"},
		map[string]string{"2026-11-22": "a\nt\n"})
}

// TestRecoverSequence: new segments continue after the largest sequence
// number on disk, whatever its kind, and never reuse an old file.
func TestRecoverSequence(t *testing.T) {
	f := func(before []string, want string) {
		t.Helper()
		dir := t.TempDir()
		writeFiles(t, dir, before...)
		s := openStore(t, dir, Options{NoCompress: true})
		mustAppend(t, s, "2026-11-22", "new\n")
		s.Close()
		files, err := List(dir)
		if err != nil {
			t.Fatal(err)
		}
		last := slices.MaxFunc(files, func(a, b File) int { return cmp.Compare(a.Seq, b.Seq) })
		if last.Path != want {
			t.Fatalf("after %q: new segment is %s, want %s", before, last.Path, want)
		}
	}
	f(nil, "0-0/2026-11-22/seg-0000000000000000.ndjson")
	f([]string{"2026-11-22/seg-0000000000000007.ndjson", "a\n"}, "0-0/2026-11-22/seg-0000000000000008.ndjson")
	f([]string{"0-0/2026-11-20/seg-0000000000000041.ndjson.zst", zstdString(t, "a\n"), "0-0/2026-11-22/seg-0000000000000007.ndjson", "a\n"},
		"0-0/2026-11-22/seg-0000000000000042.ndjson")
	f([]string{"0-0/2026-11-22/seg-0000000000000009.ndjson.zst.tmp", "x"}, "0-0/2026-11-22/seg-0000000000000010.ndjson")
	// Sequence numbers are global to DIR, over tenants.
	f([]string{"3-1/2026-11-22/seg-0000000000000050.ndjson", "a\n"}, "0-0/2026-11-22/seg-0000000000000051.ndjson")
}

// TestRecoverAfterCrash simulates kill -9: it copies the directory of a
// running store (all acknowledged lines are in the files, as after a
// process crash), adds a torn line being written to the active segment
// and a half-done compression, then opens the copy. Every acknowledged
// line must be there exactly once, nothing else, and the recovered store
// must keep working.
func TestRecoverAfterCrash(t *testing.T) {
	for _, mode := range []SyncMode{SyncBatch, SyncNever} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir, Options{Sync: mode, MaxSegmentBytes: 300, NoCompress: true})
			var acked strings.Builder
			for i := range 40 {
				line := strings.Repeat("x", i) + "\n"
				mustAppend(t, s, "2026-11-22", line)
				acked.WriteString(line)
			}
			// The writer is idle: the files hold exactly the acknowledged lines.
			crash := t.TempDir()
			if err := os.CopyFS(crash, os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
			files, err := List(crash)
			if err != nil {
				t.Fatal(err)
			}
			active := filepath.Join(crash, files[len(files)-1].Path)
			sealed := filepath.Join(crash, files[0].Path)
			af, err := os.OpenFile(active, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			af.WriteString("{\"unacknowledged\":")
			af.Close()
			writeFiles(t, crash, strings.TrimPrefix(sealed, crash+"/")+".zst.tmp", "half a frame")
			os.Remove(filepath.Join(crash, lockName))

			logger, logs := testLogger()
			s2 := openStore(t, crash, Options{Sync: mode, Logger: logger})
			mustAppend(t, s2, "2026-11-22", "after restart\n")
			waitFor(t, "compression", func() bool { return s2.Stats().CompressPending == 0 })
			if err := s2.Close(); err != nil {
				t.Fatal(err)
			}
			if got, want := readDays(t, crash)["2026-11-22"], acked.String()+"after restart\n"; got != want {
				t.Fatalf("got\n%q\nwant\n%q", got, want)
			}
			for _, w := range []string{"truncated torn segment tail", "removed leftover temporary file"} {
				if !strings.Contains(logs.String(), w) {
					t.Fatalf("log lacks %q:\n%s", w, logs)
				}
			}
			// The restart sealed and compressed every old segment.
			newSeg := segName(files[len(files)-1].Seq+1, kindPlain)
			for _, name := range dirNames(t, crash) {
				if !strings.HasSuffix(name, extZstd) && filepath.Base(name) != newSeg {
					t.Errorf("unexpected file %s after recovery", name)
				}
			}
			// The original store is unaffected and still works.
			mustAppend(t, s, "2026-11-22", "original\n")
			s.Close()
			if got, want := readDays(t, dir)["2026-11-22"], acked.String()+"original\n"; got != want {
				t.Fatalf("original store: got %q, want %q", got, want)
			}
		})
	}
}

// TestRecoverCompressesOnOpen: plain segments found at Open are sealed
// and compressed in the background; new lines go to a new segment.
func TestRecoverCompressesOnOpen(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "2026-11-22/seg-0000000000000003.ndjson", "a\nb\n")
	s := openStore(t, dir, Options{})
	if err := s.Append(context.Background(), groups("2026-11-22", "c\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "compression", func() bool { return s.Stats().CompressPending == 0 })
	s.Close()
	want := []string{"0-0/2026-11-22/seg-0000000000000003.ndjson.zst", "0-0/2026-11-22/seg-0000000000000004.ndjson"}
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Fatalf("got files %q, want %q", got, want)
	}
	if got := readDays(t, dir)["2026-11-22"]; got != "a\nb\nc\n" {
		t.Fatalf("got %q", got)
	}
}
