package query

import (
	"slices"
	"strconv"
)

// PipeTop returns the N most frequent value tuples of By with a "hits"
// column: "top 5 by (a, b)". N defaults to 10. HitsName is the hits column
// name ("hits" unless "hits as x"). Rank, if not "", names a rank column
// ("rank" for a bare "rank", or "rank as r").
type PipeTop struct {
	N        int64
	By       []string
	HitsName string
	Rank     string
}

func (*PipeTop) isPipe() {}

func (p *PipeTop) String() string {
	s := "top " + strconv.FormatInt(p.N, 10)
	if len(p.By) > 0 {
		s += " by (" + joinFieldPatterns(p.By) + ")"
	}
	if p.HitsName != "hits" {
		s += " hits as " + quoteToken(p.HitsName)
	}
	return s + rankString(p.Rank)
}

// parseTopPipe parses "top [N] [by] (a, b) [hits as x] [rank [as r]]".
func (p *parser) parseTopPipe(_ string) (Pipe, error) {
	p.next()
	pt := &PipeTop{N: 10}
	if t := p.cur(); t.kind == lexWord && isNumberPrefixLit(t.text) {
		pos := t.pos
		s, err := p.compound(stopsGeneric, "N of top")
		if err != nil {
			return nil, err
		}
		f, ok := parseNumberLit(s)
		if !ok || f < 1 || f > 1<<62 || f != float64(int64(f)) {
			return nil, p.errorf(pos, "N in 'top %s' must be an integer bigger than 0", s)
		}
		pt.N = int64(f)
	}
	by, err := p.parseByList("top", "hits", "rank")
	if err != nil {
		return nil, err
	}
	pt.By = by
	pt.HitsName = "hits"
	for {
		switch {
		case p.isKw("hits"):
			p.next()
			if p.isKw("as") {
				p.next()
			}
			name, err := p.parseFieldName("hits field name")
			if err != nil {
				return nil, err
			}
			pt.HitsName = name
		case p.isKw("rank"):
			rank, err := p.parseRank()
			if err != nil {
				return nil, err
			}
			pt.Rank = uniqueResultName(rank, pt.By)
		default:
			// As in VictoriaLogs, a result named like a by-field gets an
			// "s" (or more) added.
			pt.HitsName = uniqueResultName(pt.HitsName, pt.By)
			return pt, nil
		}
	}
}

// uniqueResultName returns name with as many "s" added as make it differ
// from the fields of by.
func uniqueResultName(name string, by []string) string {
	for slices.Contains(by, name) {
		name += "s"
	}
	return name
}

// topProc implements top.
type topProc struct {
	p    *PipeTop
	h    hitCounter
	next processor
}

func (p *PipeTop) newProcessor(_ *plan, next processor) (processor, error) {
	return newTopProc(p, next), nil
}

func newTopProc(p *PipeTop, next processor) *topProc {
	return &topProc{p: p, h: newHitCounter(p.By), next: next}
}

func (t *topProc) push(r *Row) error       { t.h.add(r); return nil }
func (t *topProc) merge(o processor) error { t.h.merge(&o.(*topProc).h); return nil }
func (t *topProc) flush() error {
	n := t.p.N
	if n <= 0 {
		n = 10
	}
	hitsName := t.p.HitsName
	if hitsName == "" {
		hitsName = "hits"
	}
	var out Row
	for i, g := range t.h.sorted(true) {
		if int64(i) >= n {
			break
		}
		out.Reset()
		for j, f := range t.p.By {
			out.Set(f, g.vals[j])
		}
		out.Set(hitsName, strconv.FormatInt(g.hits, 10))
		if t.p.Rank != "" {
			out.Set(t.p.Rank, strconv.Itoa(i+1))
		}
		if err := t.next.push(&out); err != nil {
			if err == errStop {
				break
			}
			return err
		}
	}
	return t.next.flush()
}
