package benchio

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// cacheControl reports whether Evict and Residency work on this platform.
const cacheControl = true

// Evict drops path's pages from the page cache without root: it flushes
// dirty pages first (they cannot be dropped before writeback), then calls
// posix_fadvise(POSIX_FADV_DONTNEED). Check the effect with Residency:
// pages mapped or locked by other processes stay.
func Evict(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot open input: %w", err)
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("cannot flush %q: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("cannot evict %q from the page cache: %w", path, err)
	}
	return nil
}

// Warm reads path once so that its pages are in the page cache.
func Warm(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot open input: %w", err)
	}
	defer f.Close()
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_SEQUENTIAL) // advice only
	buf := make([]byte, 1<<20)
	if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf); err != nil {
		return fmt.Errorf("cannot read %q: %w", path, err)
	}
	return nil
}
