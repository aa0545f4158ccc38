package query

import (
	"math"
	"math/rand/v2"
	"strconv"
)

// PipeSample keeps about one row in N, at random: "sample N" (N > 0;
// sample 1 keeps every row). As in VictoriaLogs v1.52.1, each worker
// skips its rows in runs of random length: after a kept row it skips
// round((N-1)·E) rows, E exponentially distributed with mean 1, so that
// one row in N is kept on average. The rows kept change from run to run
// (each worker seeds its generator anew).
type PipeSample struct{ N int64 }

func (*PipeSample) isPipe() {}

func (p *PipeSample) String() string { return "sample " + strconv.FormatInt(p.N, 10) }

// parseSamplePipe parses "sample N".
func (p *parser) parseSamplePipe(_ string) (Pipe, error) {
	p.next()
	pos := p.cur().pos
	n, err := p.parseCount("sample")
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, p.errorHint(pos, "sample N keeps about one row in N: N is 1 or more", "sample must be bigger than 0; got %d", n)
	}
	return &PipeSample{N: n}, nil
}

func (p *PipeSample) newProcessor(_ *plan, next processor) (processor, error) {
	s := &sampleProc{d: float64(p.N - 1), next: next, rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	s.skip = s.step()
	return s, nil
}

// sampleProc implements sample for one worker (or the one goroutine after
// a barrier).
type sampleProc struct {
	d    float64 // N-1: the mean number of rows skipped after a kept one
	rng  *rand.Rand
	skip uint64 // rows to skip before the next kept one
	next processor
}

// step returns the number of rows to skip before the next kept row.
func (s *sampleProc) step() uint64 {
	f := math.Round(s.d * s.rng.ExpFloat64())
	if f >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(f)
}

func (s *sampleProc) push(r *Row) error {
	if s.skip > 0 {
		s.skip--
		return nil
	}
	s.skip = s.step()
	return s.next.push(r)
}

func (s *sampleProc) flush() error { return s.next.flush() }
