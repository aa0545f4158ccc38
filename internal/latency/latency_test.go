package latency

import (
	"testing"
	"time"
)

func TestNearestRank(t *testing.T) {
	f := func(n int, p float64, want time.Duration) {
		t.Helper()
		sorted := make([]time.Duration, n)
		for i := range sorted {
			sorted[i] = time.Duration(i + 1) // 1..n
		}
		if got := NearestRank(sorted, p); got != want {
			t.Errorf("NearestRank(1..%d, %v) = %d, want %d", n, p, got, want)
		}
	}
	f(1, 50, 1)
	f(1, 99, 1)
	f(2, 50, 1)
	f(2, 50.1, 2)
	f(3, 50, 2)
	f(4, 50, 2)
	f(10, 50, 5)
	f(10, 51, 6)
	f(10, 90, 9)
	f(10, 95, 10)
	f(10, 10, 1)
	f(10, 0, 1)
	f(20, 95, 19)
	f(100, 95, 95)
	f(100, 99, 99)
	f(100, 99.5, 100)
	f(100, 50, 50)
	f(101, 50, 51)
	f(1000, 99, 990)
	f(1000, 100, 1000)
}

func TestSummarize(t *testing.T) {
	f := func(lat []time.Duration, want Pctl) {
		t.Helper()
		if got := Summarize(lat); got != want {
			t.Errorf("Summarize(%v) = %+v, want %+v", lat, got, want)
		}
	}
	ms := time.Millisecond
	f(nil, Pctl{})
	f([]time.Duration{3 * ms}, Pctl{P50: 3, P95: 3, P99: 3, Max: 3})
	f([]time.Duration{4 * ms, 1 * ms, 3 * ms, 2 * ms}, Pctl{P50: 2, P95: 4, P99: 4, Max: 4}) // sorts its input
	f([]time.Duration{1500 * time.Microsecond, 500 * time.Microsecond}, Pctl{P50: 0.5, P95: 1.5, P99: 1.5, Max: 1.5})
	tail := make([]time.Duration, 20)
	for i := range tail {
		tail[i] = 10 * ms
	}
	tail[19] = 500 * ms
	f(tail, Pctl{P50: 10, P95: 10, P99: 500, Max: 500})
}
