// Package latency summarises latency samples for the bench commands.
package latency

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

// Summarize sorts d in place and returns its nearest-rank P50, P95, P99
// and maximum; the zero Pctl for no samples.
func Summarize(d []time.Duration) Pctl {
	if len(d) == 0 {
		return Pctl{}
	}
	slices.Sort(d)
	ms := func(v time.Duration) float64 { return float64(v) / float64(time.Millisecond) }
	return Pctl{
		P50: ms(NearestRank(d, 50)),
		P95: ms(NearestRank(d, 95)),
		P99: ms(NearestRank(d, 99)),
		Max: ms(d[len(d)-1]),
	}
}

// NearestRank returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted, which must be ascending and not empty: the smallest value with at
// least p percent of the samples at or below it. p <= 0 gives the minimum.
func NearestRank(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	// rank = ceil(p/100 * n), in integers where possible so that p=50 of
	// 10 samples is exactly rank 5 and p=95 of 20 is 19.
	rank := int(p * float64(n) / 100)
	if float64(rank)*100 < p*float64(n) {
		rank++
	}
	return sorted[min(max(rank, 1), n)-1]
}
