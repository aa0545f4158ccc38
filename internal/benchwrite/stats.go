package benchwrite

import (
	"math"
	"slices"
	"time"
)

// Pctl holds latency percentiles in milliseconds.
type Pctl struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// percentiles returns the nearest-rank P50, P95, P99 and the maximum of
// lat, or zeros for none. It sorts lat in place.
func percentiles(lat []time.Duration) Pctl {
	if len(lat) == 0 {
		return Pctl{}
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return Pctl{
		P50: ms(nearestRank(lat, 0.50)),
		P95: ms(nearestRank(lat, 0.95)),
		P99: ms(nearestRank(lat, 0.99)),
		Max: ms(lat[len(lat)-1]),
	}
}

// nearestRank returns the q-quantile (0 < q <= 1) of sorted by the
// nearest-rank method: the smallest value with at least q of the values at
// or below it. sorted must not be empty.
func nearestRank(sorted []time.Duration, q float64) time.Duration {
	n := len(sorted)
	// ceil(q*n), minus a hair so that 0.95*20 = 19.000000000000004 is 19.
	rank := int(math.Ceil(q*float64(n) - 1e-9))
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

// medianIndex returns the index, in a slice of n values sorted ascending,
// of the median; for even n the lower of the two middle values, so that
// the reported run is a real one and never flatters.
func medianIndex(n int) int { return (n - 1) / 2 }
