//go:build !unix

package benchenv

import "time"

// SelfCPU returns -1: CPU time is measured on unix only.
func SelfCPU() time.Duration { return -1 }
