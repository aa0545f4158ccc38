package benchwrite

import (
	"testing"
	"time"
)

func TestNearestRank(t *testing.T) {
	f := func(n int, q float64, want time.Duration) {
		t.Helper()
		sorted := make([]time.Duration, n)
		for i := range sorted {
			sorted[i] = time.Duration(i + 1) // 1..n
		}
		if got := nearestRank(sorted, q); got != want {
			t.Errorf("nearestRank(1..%d, %v) = %d, want %d", n, q, got, want)
		}
	}
	f(1, 0.50, 1)
	f(1, 0.99, 1)
	f(2, 0.50, 1)
	f(3, 0.50, 2)
	f(4, 0.50, 2)
	f(10, 0.95, 10)
	f(20, 0.95, 19) // 0.95*20 is 19.000000000000004 in floating point
	f(100, 0.95, 95)
	f(100, 0.99, 99)
	f(100, 0.50, 50)
	f(101, 0.50, 51)
	f(1000, 0.99, 990)
	f(1000, 1, 1000)
}

func TestPercentiles(t *testing.T) {
	f := func(lat []time.Duration, want Pctl) {
		t.Helper()
		if got := percentiles(lat); got != want {
			t.Errorf("percentiles(%v) = %+v, want %+v", lat, got, want)
		}
	}
	ms := time.Millisecond
	f(nil, Pctl{})
	f([]time.Duration{3 * ms}, Pctl{P50: 3, P95: 3, P99: 3, Max: 3})
	f([]time.Duration{4 * ms, 1 * ms, 3 * ms, 2 * ms}, Pctl{P50: 2, P95: 4, P99: 4, Max: 4}) // unsorted input
	f([]time.Duration{1500 * time.Microsecond, 500 * time.Microsecond}, Pctl{P50: 0.5, P95: 1.5, P99: 1.5, Max: 1.5})
}

func TestMedianIndex(t *testing.T) {
	f := func(n, want int) {
		t.Helper()
		if got := medianIndex(n); got != want {
			t.Errorf("medianIndex(%d) = %d, want %d", n, got, want)
		}
	}
	f(1, 0)
	f(2, 0) // the lower of the two middle runs
	f(3, 1)
	f(4, 1)
	f(5, 2)
}
