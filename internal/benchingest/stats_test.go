package benchingest

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	f := func(samples []time.Duration, p float64, want time.Duration) {
		t.Helper()
		if got := percentile(samples, p); got != want {
			t.Fatalf("percentile(%v, %g) = %v, want %v", samples, p, got, want)
		}
	}
	ten := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	f(ten, 50, 5)
	f(ten, 51, 6)
	f(ten, 95, 10)
	f(ten, 90, 9)
	f(ten, 99, 10)
	f(ten, 100, 10)
	f(ten, 10, 1)
	f(ten, 0, 1)
	f([]time.Duration{7}, 50, 7)
	f([]time.Duration{7}, 99, 7)
	f([]time.Duration{1, 2}, 50, 1)
	f([]time.Duration{1, 2}, 50.1, 2)
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i + 1)
	}
	f(hundred, 95, 95)
	f(hundred, 99, 99)
	f(hundred, 99.5, 100)
}

func TestLatencyPctl(t *testing.T) {
	f := func(ms []int, want Pctl) {
		t.Helper()
		d := make([]time.Duration, len(ms))
		for i, v := range ms {
			d[i] = time.Duration(v) * time.Millisecond
		}
		if got := latencyPctl(d); got != want {
			t.Fatalf("latencyPctl(%v) = %+v, want %+v", ms, got, want)
		}
	}
	f(nil, Pctl{})
	f([]int{3, 1, 2}, Pctl{P50: 2, P95: 3, P99: 3, Max: 3}) // sorts its input
	f([]int{10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 500}, Pctl{P50: 10, P95: 10, P99: 500, Max: 500})
}
