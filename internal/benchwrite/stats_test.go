package benchwrite

import "testing"

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
