package query

import (
	"strconv"
	"strings"
)

// PipeUniq returns the distinct value tuples of By: "uniq by (a, b)
// [filter S] [with hits] [limit N]". With Filter (one field only), only
// the values that contain the text S count, as in VictoriaLogs v1.52.1.
// The hits field is "hits", or "hitss" and so on when a by-field has the
// name (hitsName).
type PipeUniq struct {
	By       []string
	Filter   string
	WithHits bool
	Limit    int64
}

// hitsName is the name of the hits field: "hits" with as many "s" added
// as make it differ from the by-fields.
func (p *PipeUniq) hitsName() string { return uniqueResultName("hits", p.By) }

func (*PipeUniq) isPipe() {}

func (p *PipeUniq) String() string {
	s := "uniq"
	if len(p.By) > 0 {
		s += " by (" + joinFieldPatterns(p.By) + ")"
	}
	if p.Filter != "" {
		s += " filter " + quoteToken(p.Filter)
	}
	if p.WithHits {
		s += " with hits"
	}
	if p.Limit > 0 {
		s += " limit " + strconv.FormatInt(p.Limit, 10)
	}
	return s
}

// parseUniqPipe parses "uniq [by] (a, b) [filter S] [with hits] [limit N]".
func (p *parser) parseUniqPipe(_ string) (Pipe, error) {
	p.next()
	pos := p.cur().pos
	by, err := p.parseByList("uniq", "with", "hits", "limit", "filter")
	if err != nil {
		return nil, err
	}
	if len(by) == 0 {
		return nil, p.errorHint(pos, "for example: uniq by (level)", "missing fields in uniq pipe")
	}
	pu := &PipeUniq{By: by}
	for {
		switch {
		case p.isKw("filter"):
			fpos := p.cur().pos
			p.next()
			if pu.Filter, err = p.compound(stopsGeneric, "text after 'filter' in uniq pipe"); err != nil {
				return nil, err
			}
			if len(pu.By) != 1 && pu.Filter != "" {
				return nil, p.errorf(fpos, "'filter' in uniq pipe takes one field; got %d", len(pu.By))
			}
		case p.isKw("with"):
			p.next()
			if !p.isKw("hits") {
				return nil, p.errorf(p.cur().pos, "missing 'hits' after 'with' in uniq pipe; got %s", p.describe())
			}
			p.next()
			pu.WithHits = true
		case p.isKw("hits"):
			p.next()
			pu.WithHits = true
		case p.isKw("limit"):
			p.next()
			n, err := p.parseCount("limit")
			if err != nil {
				return nil, err
			}
			pu.Limit = n
		default:
			return pu, nil
		}
	}
}

func (p *PipeUniq) newProcessor(_ *plan, next processor) (processor, error) {
	return newUniqProc(p, next), nil
}

// uniqProc implements uniq.
type uniqProc struct {
	p    *PipeUniq
	h    hitCounter
	next processor
}

func newUniqProc(p *PipeUniq, next processor) *uniqProc {
	return &uniqProc{p: p, h: newHitCounter(p.By), next: next}
}

// push counts r. The tuple of empty values is one like any other, as in
// VictoriaLogs v1.52.1: its row has no non-empty field, so it shows only
// with hits, but later pipes count it.
func (u *uniqProc) push(r *Row) error {
	if u.p.Filter != "" && !strings.Contains(r.Get(u.p.By[0]), u.p.Filter) {
		return nil
	}
	u.h.add(r)
	return nil
}

func (u *uniqProc) merge(o processor) error { u.h.merge(&o.(*uniqProc).h); return nil }

func (u *uniqProc) flush() error {
	var out Row
	groups := u.h.sorted(false)
	// Past the limit, the hits of the tuples kept would be partial in
	// VictoriaLogs, which streams them: it gives 0 for each.
	over := u.p.Limit > 0 && int64(len(groups)) > u.p.Limit
	for i, g := range groups {
		if u.p.Limit > 0 && int64(i) >= u.p.Limit {
			break
		}
		out.Reset()
		for j, f := range u.p.By {
			out.Set(f, g.vals[j])
		}
		if u.p.WithHits {
			hits := g.hits
			if over {
				hits = 0
			}
			out.Set(u.p.hitsName(), strconv.FormatInt(hits, 10))
		}
		if err := u.next.push(&out); err != nil {
			if err == errStop {
				break
			}
			return err
		}
	}
	return u.next.flush()
}
