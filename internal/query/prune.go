package query

// Pruner tells, from a query's filter alone, which groups of logs cannot
// match it, so that a reader can skip them unread: logs whose times all
// fall outside the _time range the filter imposes at its top level, and
// logs of streams that its top-level stream filters rule out. A data
// directory's segment metadata (their time range and streams) is what it
// is asked about. A Pruner is not safe for concurrent use.
type Pruner struct {
	minTime, maxTime int64
	hasTime          bool
	streams          []*matchStream
}

// NewPruner returns the Pruner of q's filter. It never rules out a log
// that q's filter would match (pipes are not looked at).
func NewPruner(q *Query) (*Pruner, error) {
	p := &Pruner{}
	p.minTime, p.maxTime, p.hasTime = topTimeRange(q.Filter)
	for _, f := range topConjuncts(q.Filter) {
		if sf, ok := f.(*FilterStream); ok {
			m, err := newMatchStream(sf)
			if err != nil {
				return nil, err
			}
			p.streams = append(p.streams, m)
		}
	}
	return p, nil
}

// SkipTimes reports whether no log with a time in [lo, hi] can match.
func (p *Pruner) SkipTimes(lo, hi int64) bool {
	return p.hasTime && (hi < p.minTime || lo > p.maxTime)
}

// HasStreams reports whether the filter restricts streams at its top
// level, so that SkipStream can rule some out.
func (p *Pruner) HasStreams() bool { return len(p.streams) > 0 }

// SkipStream reports whether no log of the stream written s (a _stream
// value; "{}" for logs without one) can match.
func (p *Pruner) SkipStream(s string) bool {
	for _, m := range p.streams {
		if !m.eval(s) {
			return true
		}
	}
	return false
}

// topConjuncts returns the filters f's matches must all pass at its top
// level: the children of an AND, or f itself.
func topConjuncts(f Filter) []Filter {
	if a, ok := f.(*FilterAnd); ok {
		return a.Filters
	}
	return []Filter{f}
}
