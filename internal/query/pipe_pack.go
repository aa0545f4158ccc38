package query

import (
	"slices"
	"strings"
)

// PipePack stores a row's fields, packed into one text, in Result (default
// _msg): "pack_json [fields (a, b*)] [as result]" as a JSON object,
// "pack_logfmt ..." as logfmt. Fields (names and prefix patterns) choose
// which, in their order (a pattern's matches by name); without them every
// field, in the order VictoriaLogs lists a stored log's (_time,
// _stream_id, _stream, _msg, then by name). Fields without a value are
// left out, but for a named one in logfmt ("service="), as VictoriaLogs
// prints it.
type PipePack struct {
	Logfmt bool
	Fields []string
	Result string
}

func (*PipePack) isPipe() {}

func (p *PipePack) String() string {
	s := "pack_json"
	if p.Logfmt {
		s = "pack_logfmt"
	}
	if len(p.Fields) > 0 {
		s += " fields (" + joinFieldPatterns(p.Fields) + ")"
	}
	return s + " as " + quoteToken(p.Result)
}

// parsePackPipe parses pack_json and pack_logfmt.
func (p *parser) parsePackPipe(name string) (Pipe, error) {
	p.next()
	pp := &PipePack{Logfmt: name == "pack_logfmt", Result: "_msg"}
	if p.isKw("fields") {
		p.next()
		fields, err := p.parseFieldPatterns("field name", true, true)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(fields, "*") {
			pp.Fields = fields
		}
	}
	var err error
	if pp.Result, err = p.parseOptionalResult("_msg"); err != nil {
		return nil, err
	}
	return pp, nil
}

func (p *PipePack) newProcessor(_ *plan, next processor) (processor, error) {
	return &packProc{p: p, next: next}, nil
}

// packProc implements pack_json and pack_logfmt.
type packProc struct {
	p     *PipePack
	next  processor
	out   []Field // the fields packed, in order
	buf   []byte
	arena arena
}

func (p *packProc) push(r *Row) error {
	out := p.out[:0]
	if len(p.p.Fields) == 0 {
		for _, f := range r.Fields {
			if f.Value != "" {
				out = append(out, f)
			}
		}
		slices.SortFunc(out, func(a, b Field) int { return compareLogFieldNames(a.Name, b.Name) })
	} else {
		for k, name := range p.p.Fields {
			start := len(out)
			for _, f := range r.Fields {
				if f.Value != "" && matchesAny(p.p.Fields[k:k+1], f.Name) && !slices.ContainsFunc(out, func(o Field) bool { return o.Name == f.Name }) {
					out = append(out, f)
				}
			}
			if len(out) == start && p.p.Logfmt && !isPattern(name) {
				out = append(out, Field{Name: name}) // "name=", as VictoriaLogs prints it
			}
			slices.SortFunc(out[start:], func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
		}
	}
	p.out = out
	b := p.buf[:0]
	if !p.p.Logfmt {
		b = append(b, '{')
	}
	for n, f := range out {
		if !p.p.Logfmt {
			if n > 0 {
				b = append(b, ',')
			}
			b = appendJSONFieldVL(b, f.Name, f.Value)
			continue
		}
		if n > 0 {
			b = append(b, ' ')
		}
		b = append(append(b, f.Name...), '=')
		if strings.IndexFunc(f.Value, func(c rune) bool { return c <= ' ' || c == '"' || c == '\\' }) >= 0 {
			b = appendJSONStringVL(b, f.Value)
		} else {
			b = append(b, f.Value...)
		}
	}
	if !p.p.Logfmt {
		b = append(b, '}')
	}
	p.buf = b
	p.arena.reset()
	r.Set(p.p.Result, p.arena.add(b))
	return p.next.push(r)
}

func (p *packProc) flush() error { return p.next.flush() }
