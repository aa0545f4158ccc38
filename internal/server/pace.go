package server

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// queryPacer keeps queries to a share of the CPUs while requests are being
// ingested, so that a burst of queries cannot starve ingestion (a 2-core
// server running 8 queries and a 1 GiB upload would otherwise give the
// upload a tenth of its solo speed, as Go's scheduler shares the cores by
// runnable goroutines). Queries run at full speed whenever no request is
// being ingested.
//
// It is a token bucket of CPU time: scan workers and producers report the
// time each chunk took (fileread.Config.Pace), and while an ingest request
// is in flight the queries together may spend share × GOMAXPROCS seconds
// of it per second; one that overdraws waits until the bucket refills.
// Safe for concurrent use.
type queryPacer struct {
	ingesting func() bool
	rate      float64 // cores queries may use while ingesting
	burst     time.Duration

	mu     sync.Mutex
	tokens time.Duration // CPU time queries may still spend; negative: owed
	last   time.Time

	now   func() time.Time                     // time.Now; tests replace it
	sleep func(context.Context, time.Duration) // sleepCtx; tests replace it
	// waited, if set, is told how long each wait was (for metrics).
	waited func(time.Duration)
}

func newQueryPacer(share float64, ingesting func() bool) *queryPacer {
	return &queryPacer{
		ingesting: ingesting,
		rate:      share * float64(runtime.GOMAXPROCS(0)),
		burst:     20 * time.Millisecond,
		now:       time.Now,
		sleep:     sleepCtx,
	}
}

// sleepCtx sleeps for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// pace is fileread.Config.Pace.
func (p *queryPacer) pace(ctx context.Context, busy time.Duration) {
	if p.rate <= 0 || !p.ingesting() {
		return
	}
	p.mu.Lock()
	now := p.now()
	if !p.last.IsZero() {
		p.tokens += time.Duration(float64(now.Sub(p.last)) * p.rate)
	}
	p.last = now
	// Unused time carries over up to burst (beyond the work just done,
	// whose own wall time refilled the bucket).
	p.tokens = min(p.tokens, p.burst+busy) - busy
	wait := time.Duration(0)
	if p.tokens < 0 {
		wait = time.Duration(float64(-p.tokens) / p.rate)
	}
	p.mu.Unlock()
	if wait > 0 {
		p.sleep(ctx, wait)
		if p.waited != nil {
			p.waited(wait)
		}
	}
}
