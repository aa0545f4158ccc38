package segment

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestValidDay(t *testing.T) {
	f := func(in string, want bool) {
		t.Helper()
		if got := validDay(in); got != want {
			t.Fatalf("validDay(%q): got %v, want %v", in, got, want)
		}
	}
	f("2026-11-22", true)
	f("2024-02-29", true)
	f("2000-02-29", true)
	f("0001-01-01", true)
	f("9999-12-31", true)
	f("2026-02-29", false)
	f("1900-02-29", false)
	f("2026-04-31", false)
	f("2026-13-01", false)
	f("2026-00-01", false)
	f("2026-01-00", false)
	f("2026-1-01", false)
	f("2026-01-1x", false)
	f("2026/01/01", false)
	f("+026-01-01", false)
	f("2026-11-22 ", false)
	f("", false)
	f("..", false)
	f("2026-11-22/../x", false)
	if allocs := testing.AllocsPerRun(100, func() { validDay("2026-11-22") }); allocs != 0 {
		t.Fatalf("validDay allocates %v times", allocs)
	}
}

func TestDayOf(t *testing.T) {
	east := time.FixedZone("east", 3*3600)
	f := func(in time.Time, want string) {
		t.Helper()
		if got := DayOf(in); got != want {
			t.Fatalf("DayOf(%v): got %q, want %q", in, got, want)
		}
		if !validDay(want) {
			t.Fatalf("DayOf(%v) = %q is not a valid day", in, want)
		}
	}
	f(time.Date(2026, 11, 22, 23, 59, 59, 0, time.UTC), "2026-11-22")
	f(time.Date(2026, 11, 23, 1, 0, 0, 0, east), "2026-11-22")
	f(time.Date(2026, 11, 23, 3, 0, 0, 0, east), "2026-11-23")
}

func TestSegName(t *testing.T) {
	f := func(seq uint64, k fileKind, want string) {
		t.Helper()
		got := segName(seq, k)
		if got != want {
			t.Fatalf("segName(%d, %d): got %q, want %q", seq, k, got, want)
		}
		gotSeq, gotKind, ok := parseSegName(got)
		if !ok || gotSeq != seq || gotKind != k {
			t.Fatalf("parseSegName(%q): got %d, %d, %v", got, gotSeq, gotKind, ok)
		}
	}
	f(0, kindPlain, "seg-0000000000000000.ndjson")
	f(42, kindZstd, "seg-0000000000000042.ndjson.zst")
	f(9999999999999999, kindTmp, "seg-9999999999999999.ndjson.zst.tmp")
}

func TestParseSegName_Failure(t *testing.T) {
	f := func(name string) {
		t.Helper()
		if seq, k, ok := parseSegName(name); ok {
			t.Fatalf("parseSegName(%q): got %d, %d, want failure", name, seq, k)
		}
	}
	f("")
	f("seg-.ndjson")
	f("seg-000000000000001.ndjson")   // 15 digits
	f("seg-00000000000000001.ndjson") // 17 digits
	f("seg-000000000000000x.ndjson")
	f("seg-+000000000000001.ndjson")
	f("seg-0000000000000001.json")
	f("seg-0000000000000001.ndjson.gz")
	f("seg-0000000000000001.ndjson.tmp")
	f("Seg-0000000000000001.ndjson")
	f("x-seg-0000000000000001.ndjson")
}

// TestList checks the reading rules: a .zst hides its .ndjson, .tmp and
// unrelated files are skipped, order is day then sequence.
func TestList(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir,
		"2026-11-22/seg-0000000000000010.ndjson", "ten\n",
		"2026-11-22/seg-0000000000000003.ndjson", "three\n",
		"2026-11-22/seg-0000000000000003.ndjson.zst", zstdString(t, "three\n"),
		"2026-11-22/seg-0000000000000011.ndjson.zst.tmp", "x",
		"2026-11-22/other.ndjson", "x\n",
		"2026-11-21/seg-0000000000000012.ndjson", "twelve\n",
		"misc/seg-0000000000000001.ndjson", "x\n",
	)
	files, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, fmt.Sprintf("%s %d %s %v", f.Day, f.Seq, f.Path, f.Compressed))
	}
	want := []string{
		"2026-11-21 12 2026-11-21/seg-0000000000000012.ndjson false",
		"2026-11-22 3 2026-11-22/seg-0000000000000003.ndjson.zst true",
		"2026-11-22 10 2026-11-22/seg-0000000000000010.ndjson false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := string(readFile(t, dir, files[1])); got != "three\n" {
		t.Fatalf("got %q from %s", got, files[1].Path)
	}
	if _, err := List(dir + "/missing"); err == nil {
		t.Fatal("List of a missing directory: got no error")
	}
}
