package query

import (
	"errors"
	"fmt"
	"slices"
)

// ErrNoMoreRows is what Pipeline.Push returns once its pipes need no more
// rows (a limit was reached).
var ErrNoMoreRows = errStop

// Pipeline runs pipes over rows that the caller pushes, one at a time,
// writing the results to a sink: the part of a query that runs after rows
// from several runs are put together (spate query --merge runs each file's
// query and then the limit, offset and pipes after it on the merged rows).
// Only pipes that work row by row, limit and offset are accepted. Not safe
// for concurrent use.
type Pipeline struct {
	head processor
	done bool
}

// NewPipeline compiles pipes feeding sink.
func NewPipeline(pipes []Pipe, sink Sink) (*Pipeline, error) {
	for _, p := range pipes {
		switch p.(type) {
		case *PipeLimit, *PipeOffset:
		default:
			if isBarrier(p) {
				return nil, fmt.Errorf("the %s pipe needs all of its input: it cannot run over merged rows", p)
			}
		}
	}
	pl := &plan{}
	head, err := buildChain(pl, slices.Clone(pipes), newSinkProc(sink, false))
	if err != nil {
		return nil, err
	}
	return &Pipeline{head: head}, nil
}

// Push runs r through the pipes; r and its strings are only read during the
// call. It returns ErrNoMoreRows once no more rows are needed.
func (p *Pipeline) Push(r *Row) error {
	if p.done {
		return ErrNoMoreRows
	}
	err := p.head.push(r)
	if errors.Is(err, errStop) {
		p.done = true
	}
	return err
}

// Flush ends the input: the pipes flush, and so does the sink if it has a
// Flush method.
func (p *Pipeline) Flush() error {
	err := p.head.flush()
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// Add adds the counts of another run (of other inputs) to s: counts and
// bytes add up, Duration is the longer, FirstBadTime the first found (s's
// unless it has none), and the lists are joined.
func (s *Stats) Add(o Stats) {
	s.Workers, s.ParallelInputs = max(s.Workers, o.Workers), max(s.ParallelInputs, o.ParallelInputs)
	s.Bytes += o.Bytes
	s.Lines += o.Lines
	s.LinesExact = s.LinesExact && o.LinesExact
	s.Matched += o.Matched
	s.Parsed += o.Parsed
	s.BadLines += o.BadLines
	s.PlainLines += o.PlainLines
	s.BadTimes += o.BadTimes
	if s.FirstBadTime == nil {
		s.FirstBadTime = o.FirstBadTime
	}
	for _, r := range o.Renamed {
		if i := slices.IndexFunc(s.Renamed, func(x Renamed) bool { return x.Became == r.Became }); i >= 0 {
			s.Renamed[i].Lines += r.Lines
		} else {
			s.Renamed = append(s.Renamed, r)
		}
	}
	s.EarlyRejected += o.EarlyRejected
	s.LongLines += o.LongLines
	s.LongLineSamples = append(s.LongLineSamples, o.LongLineSamples...)
	s.Duration = max(s.Duration, o.Duration)
	for _, st := range o.Strategies {
		if !slices.Contains(s.Strategies, st) {
			s.Strategies = append(s.Strategies, st)
		}
	}
	for _, a := range o.Approximate {
		if !slices.Contains(s.Approximate, a) {
			s.Approximate = append(s.Approximate, a)
		}
	}
	s.Stopped = s.Stopped || o.Stopped
	s.Spilled += o.Spilled
}
