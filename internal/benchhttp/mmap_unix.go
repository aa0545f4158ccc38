//go:build unix

package benchhttp

import (
	"net/http"
	"os"

	"golang.org/x/sys/unix"
)

// mmapBody maps f and writes size bytes from the mapping.
func mmapBody(w http.ResponseWriter, f *os.File, size int64) error {
	if size == 0 {
		return nil
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return err
	}
	defer unix.Munmap(data)
	_, err = w.Write(data)
	return err
}
