//go:build !unix

package benchingest

import "time"

// processCPU returns -1: CPU time is measured on unix only.
func processCPU() time.Duration { return -1 }
