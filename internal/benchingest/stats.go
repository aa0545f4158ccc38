package benchingest

import "github.com/spate-io/spate/internal/latency"

// Pctl is a latency distribution in milliseconds.
type Pctl = latency.Pctl
