//go:build !unix

package benchhttp

import (
	"errors"
	"net/http"
	"os"
)

// mmapBody is not available here: the mmap row fails its check request.
func mmapBody(w http.ResponseWriter, f *os.File, size int64) error {
	return errors.New("mmap is not supported on this system")
}
