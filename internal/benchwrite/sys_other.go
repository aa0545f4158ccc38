//go:build !linux

package benchwrite

import (
	"errors"
	"fmt"
	"os"
)

// errUnsupported is returned by the calls only implemented on Linux.
var errUnsupported = errors.New("not supported on this platform (Linux only)")

// errNoFallocate reports that the file system cannot preallocate.
var errNoFallocate = errors.New("fallocate is not supported")

// file is the writers' only way to the kernel: every call goes through one
// of its methods and is counted in n. Only write and fsync are implemented
// outside Linux, so only the write and bufio writers run here.
type file struct {
	f *os.File
	n Syscalls
}

func newFile(f *os.File) *file { return &file{f: f} }

// Write implements io.Writer; os.File.Write loops over short writes, so the
// count is one per call, a lower bound.
func (f *file) Write(p []byte) (int, error) {
	f.n.Write++
	return f.f.Write(p)
}

func (f *file) writev([][]byte) (int, error) {
	return 0, fmt.Errorf("cannot writev: %w", errUnsupported)
}

// datasync is fsync(2) here; it is counted as Fdatasync.
func (f *file) datasync() error {
	f.n.Fdatasync++
	return f.f.Sync()
}

func (f *file) msync([]byte) error { return fmt.Errorf("cannot msync: %w", errUnsupported) }

func (f *file) fallocate(int64, int64) error { return errNoFallocate }

func (f *file) ftruncate(n int64) error {
	f.n.Ftruncate++
	return f.f.Truncate(n)
}

func (f *file) mmap(int64, int) ([]byte, error) {
	return nil, fmt.Errorf("cannot mmap: %w", errUnsupported)
}

func (f *file) munmap([]byte) error { return fmt.Errorf("cannot munmap: %w", errUnsupported) }
