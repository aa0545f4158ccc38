package query

import (
	"slices"
	"strings"
)

// PipeCoalesce stores in Result (default _msg) the first non-empty value
// of Fields, or Default when all are empty: "coalesce(a, b*) [default v]
// [as r]". Names are tried in the list's order; a prefix pattern tries the
// row's matching fields by name (as VictoriaLogs orders a block's columns),
// each field once.
type PipeCoalesce struct {
	Fields  []string
	Default string
	Result  string
}

func (*PipeCoalesce) isPipe() {}

func (p *PipeCoalesce) String() string {
	s := "coalesce(" + joinFieldPatterns(p.Fields) + ")"
	if p.Default != "" {
		s += " default " + quoteToken(p.Default)
	}
	return s + " as " + quoteToken(p.Result)
}

// parseCoalescePipe parses "coalesce (a, b*) [default v] [as r]".
func (p *parser) parseCoalescePipe(_ string) (Pipe, error) {
	p.next()
	pos := p.cur().pos
	fields, err := p.parseFieldPatterns("coalesce field", true, true)
	if err != nil {
		return nil, err
	}
	if len(fields) == 0 {
		return nil, p.errorHint(pos, "for example: coalesce(host, hostname) as h", "coalesce needs at least one field")
	}
	pc := &PipeCoalesce{Fields: fields, Result: "_msg"}
	if p.isKw("default") {
		p.next()
		if pc.Default, err = p.compound(stopsGeneric, "default value after 'default'"); err != nil {
			return nil, err
		}
	}
	if p.isKw("as") {
		p.next()
		if pc.Result, err = p.parseFieldName("result field after 'as'"); err != nil {
			return nil, err
		}
	}
	return pc, nil
}

func (p *PipeCoalesce) newProcessor(_ *plan, next processor) (processor, error) {
	pattern := slices.ContainsFunc(p.Fields, func(f string) bool { return strings.HasSuffix(f, "*") })
	return &coalesceProc{p: p, pattern: pattern, next: next}, nil
}

// coalesceProc implements coalesce.
type coalesceProc struct {
	p       *PipeCoalesce
	pattern bool // a field in the list is a prefix pattern
	next    processor
	tried   []string // the fields tried, in order (patterns only)
	matched []string
}

func (p *coalesceProc) push(r *Row) error {
	v := ""
	if !p.pattern {
		// Fast path: names only.
		for _, f := range p.p.Fields {
			if v = r.Get(f); v != "" {
				break
			}
		}
	} else {
		v = p.firstPattern(r)
	}
	if v == "" {
		v = p.p.Default
	}
	r.Set(p.p.Result, v)
	return p.next.push(r)
}

// firstPattern is the first non-empty value when the list has patterns.
func (p *coalesceProc) firstPattern(r *Row) string {
	p.tried = p.tried[:0]
	for _, f := range p.p.Fields {
		prefix, ok := strings.CutSuffix(f, "*")
		if !ok {
			if !slices.Contains(p.tried, f) {
				if v := r.Get(f); v != "" {
					return v
				}
				p.tried = append(p.tried, f)
			}
			continue
		}
		p.matched = p.matched[:0]
		for _, rf := range r.Fields {
			if strings.HasPrefix(rf.Name, prefix) && !slices.Contains(p.tried, rf.Name) {
				p.matched = append(p.matched, rf.Name)
			}
		}
		slices.Sort(p.matched)
		for _, name := range p.matched {
			if v := r.Get(name); v != "" {
				return v
			}
			p.tried = append(p.tried, name)
		}
	}
	return ""
}

func (p *coalesceProc) flush() error { return p.next.flush() }
