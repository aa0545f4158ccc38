package fileread

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"syscall"
	"testing"
)

// TestAutoFallsBackToPread makes every mmap fail: Auto must read the file
// with pread instead, while an explicit Mmap reports the error.
func TestAutoFallsBackToPread(t *testing.T) {
	data := bytes.Repeat([]byte("some log line\n"), (autoSmallFile/14)+1000)
	p := writeFile(t, t.TempDir(), "big.log", data)
	mapWindow = func(*os.File, int64, int64) ([]byte, error) { return nil, syscall.ENODEV }
	defer func() { mapWindow = mapRange }()

	per, st, err := collect(t, []string{p}, Config{Strategy: Auto})
	if err != nil {
		t.Fatal(err)
	}
	if st.Strategies[0] != Pread {
		t.Fatalf("auto used %s after mmap failed, want pread", st.Strategies[0])
	}
	checkChunks(t, "auto fallback", per[0], data)

	_, _, err = collect(t, []string{p}, Config{Strategy: Mmap})
	if !errors.Is(err, syscall.ENODEV) {
		t.Fatalf("explicit mmap: err = %v, want ENODEV", err)
	}
}

func TestAutoPicksByKind(t *testing.T) {
	dir := t.TempDir()
	small := writeFile(t, dir, "small.log", []byte("a\nb\n"))
	big := writeFile(t, dir, "big.log", bytes.Repeat([]byte("x\n"), autoSmallFile/2+1))
	gz := writeFile(t, dir, "c.log.gz", gzipBytes(t, []byte("a\n")))
	_, st, err := collect(t, []string{small, big, gz}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Strategy{Pread, AutoRegular, Stream}; !slices.Equal(st.Strategies, want) {
		t.Fatalf("auto picked %v, want %v", st.Strategies, want)
	}
}
