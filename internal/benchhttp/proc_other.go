//go:build !linux

package benchhttp

import "time"

type procSample struct {
	cpu                      time.Duration
	syscalls, rssKiB, hwmKiB int64
}

// procAvailable is false: CPU, syscalls and RSS are reported as unknown.
const procAvailable = false

func sample(pids []int) (procSample, error) { return procSample{}, nil }

func children(pid int) []int { return nil }
