package latency

import (
	"math/bits"
	"time"
)

// histSubBits sets the histogram's precision: each power of two is split
// into 2^(histSubBits-1) buckets, so a recorded value is known to within
// 1/64 (1.6%) of itself.
const histSubBits = 7

// histBuckets covers durations up to 2^43 ns (about 2.4 hours); longer
// ones land in the last bucket.
const histBuckets = (43-histSubBits+2)<<(histSubBits-1) + 1

// Histogram counts durations in log-linear buckets (the HdrHistogram
// layout) at a fixed memory cost of about 20 KiB, whatever the number of
// samples. Quantiles are reported as the upper edge of their bucket: never
// below the true value, and at most 1.6% above it. The zero value is empty
// and ready to use. It is not safe for concurrent use: give each goroutine
// its own and Merge them.
type Histogram struct {
	counts [histBuckets]uint64
	n      uint64
	max    time.Duration
}

// bucketOf returns the bucket of v nanoseconds. Values below
// 2^histSubBits have a bucket each; above, bucket e*64+m holds the values
// whose top seven bits are m (64..127) with e bits below them.
func bucketOf(v uint64) int {
	if v < 1<<histSubBits {
		return int(v)
	}
	e := bits.Len64(v) - histSubBits
	i := e<<(histSubBits-1) + int(v>>e)
	return min(i, histBuckets-1)
}

// upperEdge returns the largest value, in nanoseconds, that bucket i holds.
func upperEdge(i int) uint64 {
	if i < 1<<histSubBits {
		return uint64(i)
	}
	e := i>>(histSubBits-1) - 1
	m := uint64(i&(1<<(histSubBits-1)-1) + 1<<(histSubBits-1))
	return (m+1)<<e - 1
}

// Record adds one sample; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	h.counts[bucketOf(uint64(max(d, 0)))]++
	h.n++
	h.max = max(h.max, d)
}

// Merge adds o's samples to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// Count is the number of samples recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Quantile returns the nearest-rank p-th percentile (0 < p <= 100), as the
// upper edge of its bucket capped at the largest sample; 0 when empty.
func (h *Histogram) Quantile(p float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(p * float64(h.n) / 100)
	if float64(rank)*100 < p*float64(h.n) {
		rank++
	}
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(upperEdge(i)), h.max)
		}
	}
	return h.max
}

// Pctl summarises the histogram like Summarize does samples.
func (h *Histogram) Pctl() Pctl {
	if h.n == 0 {
		return Pctl{}
	}
	ms := func(v time.Duration) float64 { return float64(v) / float64(time.Millisecond) }
	return Pctl{P50: ms(h.Quantile(50)), P95: ms(h.Quantile(95)), P99: ms(h.Quantile(99)), Max: ms(h.max)}
}
