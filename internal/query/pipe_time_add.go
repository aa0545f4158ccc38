package query

import (
	"math"

	"github.com/spate-io/spate/internal/timeparse"
)

// PipeTimeAdd adds a duration to the RFC 3339 time in a field (default
// _time): "time_add 1h [at field]" (a negative duration subtracts). The
// result is printed as _time is, in UTC; a value that is not such a time
// is left as it is. OffsetText is the duration as written.
type PipeTimeAdd struct {
	Offset     int64
	OffsetText string
	Field      string
}

func (*PipeTimeAdd) isPipe() {}

func (p *PipeTimeAdd) String() string {
	s := "time_add " + p.OffsetText
	if p.Field != "_time" {
		s += " at " + quoteToken(p.Field)
	}
	return s
}

// parseTimeAddPipe parses "time_add duration [at field]".
func (p *parser) parseTimeAddPipe(_ string) (Pipe, error) {
	p.next()
	d, s, err := p.parseDurationArg("time_add", "the duration of time_add", "use a duration such as 1h or -30m")
	if err != nil {
		return nil, err
	}
	pt := &PipeTimeAdd{Offset: d, OffsetText: s, Field: "_time"}
	if p.isKw("at") {
		p.next()
		if pt.Field, err = p.parseFieldName("field after 'at'"); err != nil {
			return nil, err
		}
	}
	return pt, nil
}

func (p *PipeTimeAdd) newProcessor(_ *plan, next processor) (processor, error) {
	return &timeAddProc{p: p, next: next}, nil
}

type timeAddProc struct {
	p    *PipeTimeAdd
	next processor
	buf  []byte
}

func (p *timeAddProc) push(r *Row) error {
	ts, ok := parseTimestampLit(r.Get(p.p.Field))
	if ok {
		ts = addNoOverflow(ts, p.p.Offset)
		p.buf = timeparse.AppendRFC3339(p.buf[:0], ts)
		r.Set(p.p.Field, unsafeString(p.buf))
		if p.p.Field == "_time" {
			r.Time, r.HasTime = ts, true
		}
	}
	return p.next.push(r)
}

func (p *timeAddProc) flush() error { return p.next.flush() }

// addNoOverflow is a+b, held at the ends of the int64 range.
func addNoOverflow(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}
