//go:build !linux

package fileread

import "os"

// readAhead is a no-op where posix_fadvise and RWF_NOWAIT are not used.
func readAhead(*os.File, int64, int64) {}
