package fileread

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Residency returns the share (0..1) of path's pages that are in the page
// cache, from mincore(2) on a mapping whose pages it never touches, so
// asking does not change the answer.
func Residency(path string) (float64, error) {
	m, err := MapFile(path, false)
	if err != nil {
		return 0, err
	}
	defer m.Close()
	data := m.Bytes
	if len(data) == 0 {
		return 1, nil
	}
	vec := make([]byte, (int64(len(data))+pageSize-1)/pageSize)
	// x/sys/unix has no Mincore on Linux; the pointers are to a live mapping
	// (unmapped by the deferred Close) and a live slice, used below.
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
