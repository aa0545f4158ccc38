//go:build !linux

package segindex

import "os"

// mapFile maps nothing outside Linux: the reader uses pread.
func mapFile(*os.File, int64) []byte { return nil }

func unmapFile([]byte) {}
