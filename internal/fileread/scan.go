package fileread

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// job is one chunk's worth of work handed from a producer to a worker.
type job interface {
	// load fills c.Data (and c.Seq, c.Offset, c.Skip). It runs on the
	// worker goroutine, with faults on mapped memory turned into panics. An
	// empty c.Data with a zero c.Skip means the job produced nothing and is
	// skipped.
	load(w *worker, c *Chunk) error
	// release gives back what load used (a buffer, a window reference).
	// It is called exactly once, after the callback returns.
	release()
}

// worker is one worker goroutine's own state: no locks are shared between
// workers on the hot path.
type worker struct {
	id        int
	buf       *chunkBuf // pread's read buffer, reused for every chunk
	latencies []time.Duration
	bytes     int64
	chunks    int64
	long      longLines // over-long lines this worker skipped (pread)
}

// scanner runs one Scan: a producer goroutine feeding jobs to workers.
type scanner struct {
	cfg  Config
	fn   func(worker int, c *Chunk) error
	jobs chan job

	ctx    context.Context
	cancel context.CancelFunc

	errOnce sync.Once
	err     error

	longMu sync.Mutex
	long   longLines // over-long lines the producers skipped (mmap, bufio, stream)
}

// skipped records an over-long line a producer skipped.
func (s *scanner) skipped(x LongLine) {
	s.longMu.Lock()
	s.long.add(x)
	s.longMu.Unlock()
}

// fail records the first error and cancels the scan.
func (s *scanner) fail(err error) {
	s.errOnce.Do(func() {
		s.err = err
		s.cancel()
	})
}

// send hands j to a worker, or releases it and returns false if the scan was
// cancelled.
func (s *scanner) send(j job) bool {
	select {
	case s.jobs <- j:
		return true
	case <-s.ctx.Done():
		j.release()
		return false
	}
}

// Scan reads inputs in order and calls fn for every chunk on one of
// cfg.Workers goroutines. Chunks of different inputs and of one input may be
// processed concurrently and out of order; Chunk.Input and Chunk.Seq restore
// the order.
//
// An input named "-" is cfg.Stdin (os.Stdin by default). The first error, from
// reading or from fn, stops the scan and is returned; if fn returns Stop the
// scan ends early and Scan returns nil. Cancelling ctx stops the scan and
// returns ctx.Err(). fn must not retain c or c.Data after it returns.
//
// With cfg.SkipLongLines, fn may get a chunk with empty Data and Skip > 0;
// see Chunk.Skip.
func Scan(ctx context.Context, inputs []string, cfg Config, fn func(worker int, c *Chunk) error) (Stats, error) {
	if cfg.Strategy == "" {
		cfg.Strategy = Auto
	}
	if _, err := ParseStrategy(string(cfg.Strategy)); err != nil {
		return Stats{}, err
	}
	n := cfg.workers()
	s := &scanner{cfg: cfg, fn: fn, jobs: make(chan job, n)}
	s.ctx, s.cancel = context.WithCancel(ctx)
	defer s.cancel()

	workers := make([]*worker, n)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{id: i}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.runWorker(w)
		}()
	}

	strategies := make([]Strategy, len(inputs))
	// Producers: one input after the other, or up to ParallelInputs at
	// once, each on its own goroutine.
	slots := make(chan struct{}, max(cfg.ParallelInputs, 1))
	var pwg sync.WaitGroup
	for i, name := range inputs {
		select {
		case slots <- struct{}{}:
		case <-s.ctx.Done():
		}
		if s.ctx.Err() != nil {
			break
		}
		pwg.Go(func() {
			defer func() { <-slots }()
			defer func() {
				if r := recover(); r != nil {
					s.fail(faultError(name, r))
				}
			}()
			// A fault while the producer touches a mapping becomes a panic
			// we turn into ErrInputChanged instead of a crash.
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			st, err := s.produce(i, name)
			strategies[i] = st
			if err != nil {
				s.fail(err)
			}
		})
	}
	pwg.Wait()
	close(s.jobs)
	wg.Wait()

	st := Stats{Strategies: strategies}
	longs := []*longLines{&s.long}
	for _, w := range workers {
		longs = append(longs, &w.long)
		if w.buf != nil {
			putChunkBuf(w.buf)
		}
		st.Bytes += w.bytes
		st.Chunks += w.chunks
		st.Latencies = append(st.Latencies, w.latencies...)
	}
	mergeLongLines(&st, longs...)
	if errors.Is(s.err, Stop) {
		return st, nil
	}
	if s.err != nil {
		return st, s.err
	}
	return st, ctx.Err()
}

func (s *scanner) runWorker(w *worker) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var c Chunk
	for {
		start := time.Now()
		j, ok := <-s.jobs
		if !ok {
			return
		}
		if s.ctx.Err() != nil {
			j.release()
			continue // drain so the producer never blocks
		}
		began := time.Now()
		if err := s.runJob(w, j, &c); err != nil {
			s.fail(err)
			continue
		}
		if s.cfg.Latencies && (len(c.Data) > 0 || c.Skip > 0) {
			w.latencies = append(w.latencies, time.Since(start))
		}
		if s.cfg.Pace != nil {
			s.cfg.Pace(s.ctx, time.Since(began))
		}
	}
}

// runJob loads one job and runs the callback, turning a fault on mapped
// memory (a file truncated under the mapping) into an error.
func (s *scanner) runJob(w *worker, j job, c *Chunk) (err error) {
	defer j.release()
	defer func() {
		if r := recover(); r != nil {
			err = faultError(c.Name, r)
		}
	}()
	c.Data, c.Skip = nil, 0
	if err := j.load(w, c); err != nil {
		return err
	}
	if len(c.Data) == 0 && c.Skip == 0 {
		return nil
	}
	w.bytes += int64(len(c.Data))
	w.chunks++
	return s.fn(w.id, c)
}

// faultError converts a recovered memory fault into ErrInputChanged and
// re-panics anything else: only faults are expected here.
func faultError(name string, r any) error {
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		return fmt.Errorf("%s: memory fault at %#x while reading a mapping (was the file truncated?): %w", name, f.Addr(), ErrInputChanged)
	}
	panic(r)
}
