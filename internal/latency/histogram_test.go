package latency

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketEdges(t *testing.T) {
	// Every value lies in its bucket: at or below the bucket's upper edge
	// and above the previous bucket's.
	for _, v := range []uint64{0, 1, 63, 127, 128, 129, 255, 256, 1000, 1 << 20, 123456789, 1 << 42} {
		i := bucketOf(v)
		if v > upperEdge(i) || (i > 0 && v <= upperEdge(i-1)) {
			t.Errorf("value %d in bucket %d with edges (%d, %d]", v, i, upperEdge(i-1), upperEdge(i))
		}
	}
	for i := 1; i < histBuckets; i++ {
		if upperEdge(i) <= upperEdge(i-1) {
			t.Fatalf("edges not increasing at %d: %d <= %d", i, upperEdge(i), upperEdge(i-1))
		}
	}
}

func TestHistogramAgainstSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h, a, b Histogram
	var all []time.Duration
	for i := range 100000 {
		d := time.Duration(r.ExpFloat64() * float64(300*time.Microsecond))
		all = append(all, d)
		h.Record(d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	slices.Sort(all)
	for _, p := range []float64{1, 50, 90, 95, 99, 99.9, 100} {
		want := NearestRank(all, p)
		got := h.Quantile(p)
		if got < want || float64(got-want) > float64(want)/64+1 {
			t.Errorf("p%v = %v, exact %v: outside [exact, exact+1/64]", p, got, want)
		}
		if m := a.Quantile(p); m != got {
			t.Errorf("merged p%v = %v, want %v", p, m, got)
		}
	}
	if h.Count() != 100000 || h.Pctl().Max != float64(all[len(all)-1])/1e6 {
		t.Errorf("count %d, max %v; want 100000, %v", h.Count(), h.Pctl().Max, all[len(all)-1])
	}
	var empty Histogram
	if empty.Quantile(50) != 0 || empty.Pctl() != (Pctl{}) {
		t.Error("empty histogram should report zeros")
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	b.ReportAllocs()
	for i := range b.N {
		h.Record(time.Duration(i*7919) % time.Second)
	}
}
