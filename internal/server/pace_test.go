package server

import (
	"context"
	"testing"
	"time"
)

// TestQueryPacer: while ingesting, queries that report 100 ms of work per
// 100 ms of wall time at a rate of 0.5 cores wait 100 ms for each (their
// work takes half of the time); without ingestion they never wait.
func TestQueryPacer(t *testing.T) {
	clock := time.Unix(0, 0)
	var waited time.Duration
	ingesting := true
	p := newQueryPacer(0.5, func() bool { return ingesting })
	p.rate = 0.5 // whatever GOMAXPROCS is
	p.now = func() time.Time { return clock }
	p.sleep = func(_ context.Context, d time.Duration) { waited += d; clock = clock.Add(d) }
	ctx := context.Background()
	for range 10 {
		clock = clock.Add(100 * time.Millisecond) // the work
		p.pace(ctx, 100*time.Millisecond)
	}
	// 1 s of work at 0.5 cores needs 2 s: 1 s of waiting (the first call
	// waits 100 ms more: its bucket starts empty).
	if waited < 900*time.Millisecond || waited > 1200*time.Millisecond {
		t.Errorf("waited %v for 1 s of work at 0.5 cores, want about 1 s", waited)
	}
	ingesting = false
	waited = 0
	for range 10 {
		clock = clock.Add(100 * time.Millisecond)
		p.pace(ctx, 100*time.Millisecond)
	}
	if waited != 0 {
		t.Errorf("waited %v with nothing being ingested", waited)
	}
	// Several goroutines share one budget: two workers each reporting
	// 100 ms per 100 ms of wall time owe twice as much: 1 s of work at 0.5
	// cores takes 2 s, 0.5 s of it the work's own, less what the bucket
	// kept from before (at most burst plus one chunk).
	ingesting = true
	waited = 0
	for range 5 {
		clock = clock.Add(100 * time.Millisecond)
		p.pace(ctx, 100*time.Millisecond)
		p.pace(ctx, 100*time.Millisecond)
	}
	if waited < 1300*time.Millisecond {
		t.Errorf("two workers waited %v for 1 s of work in 0.5 s at 0.5 cores, want at least 1.3 s", waited)
	}
}
