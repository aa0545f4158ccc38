//go:build !linux

package benchenv

import (
	"errors"
	"time"
)

// ProcessCPU is known on Linux only (/proc).
func ProcessCPU(int) (time.Duration, error) {
	return 0, errors.New("the CPU time of another process is read from /proc, on Linux only")
}
