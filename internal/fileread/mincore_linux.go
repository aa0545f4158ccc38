package fileread

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Residency returns the share (0..1) of path's pages that are in the page
// cache, from mincore(2) on a mapping whose pages it never touches, so
// asking does not change the answer.
func Residency(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("cannot open input: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("cannot stat %q: %w", path, err)
	}
	if fi.Size() == 0 {
		return 1, nil
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, fmt.Errorf("cannot mmap %q: %w", path, err)
	}
	defer unix.Munmap(data)
	vec := make([]byte, (int64(len(data))+pageSize-1)/pageSize)
	// x/sys/unix has no Mincore on Linux; the pointers are to a live mapping
	// and a live slice, both kept alive past the call by the defer and vec's
	// use below.
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(data))), uintptr(len(data)), uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	if errno != 0 {
		return 0, fmt.Errorf("cannot read page residency of %q: %w", path, errno)
	}
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	return float64(resident) / float64(len(vec)), nil
}
