//go:build unix

package benchenv

import (
	"syscall"
	"time"
)

// SelfCPU returns the user plus system CPU time this process has used, or
// -1 if it cannot tell.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
