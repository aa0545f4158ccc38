package benchwrite

import "github.com/spate-io/spate/internal/latency"

// Pctl holds latency percentiles in milliseconds.
type Pctl = latency.Pctl

// medianIndex returns the index, in a slice of n values sorted ascending,
// of the median; for even n the lower of the two middle values, so that
// the reported run is a real one and never flatters.
func medianIndex(n int) int { return (n - 1) / 2 }
