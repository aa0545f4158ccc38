package benchwrite

import (
	"fmt"
	"strings"
)

// Syscalls counts the system calls a writer issued, by kind. Every call that
// reaches the kernel on the writer's behalf is counted, including the ones a
// retry loop repeats after a short write; opening, closing and verifying the
// file are not the writer's and are not counted.
type Syscalls struct {
	Write     int64 `json:"write"`
	Writev    int64 `json:"writev"`
	Fdatasync int64 `json:"fdatasync"` // fsync(2) where fdatasync is not available
	Msync     int64 `json:"msync"`
	Fallocate int64 `json:"fallocate"` // including calls that failed with EOPNOTSUPP
	Ftruncate int64 `json:"ftruncate"`
	Mmap      int64 `json:"mmap"`
	Munmap    int64 `json:"munmap"`
}

// Total is the number of calls of every kind.
func (s Syscalls) Total() int64 {
	return s.Write + s.Writev + s.Fdatasync + s.Msync + s.Fallocate + s.Ftruncate + s.Mmap + s.Munmap
}

// Syncs is the number of calls that wait for storage: fdatasync and msync.
func (s Syscalls) Syncs() int64 { return s.Fdatasync + s.Msync }

// String lists the non-zero counts: "write 671089, fdatasync 1".
func (s Syscalls) String() string {
	var parts []string
	for _, c := range []struct {
		name string
		n    int64
	}{
		{"write", s.Write}, {"writev", s.Writev}, {"fdatasync", s.Fdatasync}, {"msync", s.Msync},
		{"fallocate", s.Fallocate}, {"ftruncate", s.Ftruncate}, {"mmap", s.Mmap}, {"munmap", s.Munmap},
	} {
		if c.n != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c.name, c.n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
