//go:build !linux

package benchhttp

type procSample struct{ cpuTicks, syscalls, rssKiB, hwmKiB int64 }

const clockTicks = 100

// procAvailable is false: CPU, syscalls and RSS are reported as unknown.
const procAvailable = false

func sample(pids []int) (procSample, error) { return procSample{}, nil }

func children(pid int) []int { return nil }
