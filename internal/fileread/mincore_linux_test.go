package fileread

import (
	"bytes"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func unixFdatasyncAndDrop(f *os.File) error {
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

func TestResidency(t *testing.T) {
	p := writeFile(t, t.TempDir(), "r.log", bytes.Repeat([]byte("x\n"), 1<<20))
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unixFdatasyncAndDrop(f); err != nil {
		t.Skipf("cannot drop the page cache here: %v", err)
	}
	cold, err := Residency(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(p); err != nil {
		t.Fatal(err)
	}
	warm, err := Residency(p)
	if err != nil {
		t.Fatal(err)
	}
	if warm < 0.99 || cold > 0.5 {
		t.Fatalf("residency cold %.2f warm %.2f: want about 0 and 1", cold, warm)
	}
}

// TestRegionCached checks the probe pread's read-ahead relies on: a region
// just read is cached, the same region after eviction is not.
func TestRegionCached(t *testing.T) {
	p := writeFile(t, t.TempDir(), "r.log", bytes.Repeat([]byte("y\n"), 1<<20))
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := os.ReadFile(p); err != nil {
		t.Fatal(err)
	}
	if !regionCached(f, 0, 2<<20) {
		t.Skip("preadv2(RWF_NOWAIT) is not supported here")
	}
	if err := unixFdatasyncAndDrop(f); err != nil {
		t.Skipf("cannot drop the page cache here: %v", err)
	}
	if r, _ := Residency(p); r > 0.5 {
		t.Skipf("the page cache kept %.0f%% of the file (tmpfs?)", 100*r)
	}
	if regionCached(f, 0, 2<<20) {
		t.Fatal("regionCached is true for an evicted file")
	}
	readAhead(f, 0, 2<<20) // must not fail; it is advice
}
