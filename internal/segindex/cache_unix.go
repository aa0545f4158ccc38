//go:build unix

package segindex

import (
	"os"
	"syscall"
)

// devIno returns the device and inode of a file.
func devIno(fi os.FileInfo) (uint64, uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
