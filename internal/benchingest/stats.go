package benchingest

import (
	"slices"
	"time"
)

// Pctl is a latency distribution in milliseconds.
type Pctl struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// latencyPctl sorts d in place and returns its percentiles; the zero Pctl
// for no samples.
func latencyPctl(d []time.Duration) Pctl {
	if len(d) == 0 {
		return Pctl{}
	}
	slices.Sort(d)
	ms := func(v time.Duration) float64 { return float64(v) / float64(time.Millisecond) }
	return Pctl{
		P50: ms(percentile(d, 50)),
		P95: ms(percentile(d, 95)),
		P99: ms(percentile(d, 99)),
		Max: ms(d[len(d)-1]),
	}
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted, which must be in ascending order and not empty: the smallest
// value that at least p percent of the samples are less than or equal to.
// p <= 0 gives the minimum.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	// rank = ceil(p/100 * n), computed in integers where possible so that
	// p=50 of 10 samples is exactly rank 5.
	rank := int(p * float64(n) / 100)
	if float64(rank)*100 < p*float64(n) {
		rank++
	}
	return sorted[min(max(rank, 1), n)-1]
}
