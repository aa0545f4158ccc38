package segindex

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the first size bytes of f read-only, or returns nil (the
// reader then uses pread). Sidecars are only ever replaced by a rename or
// removed, never truncated in place, so a mapping stays readable.
func mapFile(f *os.File, size int64) []byte {
	if size <= 0 || size > 1<<40 {
		return nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil
	}
	return b
}

func unmapFile(b []byte) {
	if b != nil {
		unix.Munmap(b)
	}
}
