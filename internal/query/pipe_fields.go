package query

import "strings"

// PipeFields keeps only the named fields: "fields a, b, http*". A name ending
// in '*' is a prefix pattern.
type PipeFields struct{ Fields []string }

func (*PipeFields) isPipe() {}

func (p *PipeFields) String() string { return "fields " + joinFieldPatterns(p.Fields) }

// parseFieldsPipe parses "fields a, b, http*".
func (p *parser) parseFieldsPipe(_ string) (Pipe, error) {
	p.next()
	fields, err := p.parseFieldPatterns("field name", false, true)
	if err != nil {
		return nil, err
	}
	return &PipeFields{Fields: fields}, nil
}

func (p *PipeFields) newProcessor(_ *plan, next processor) (processor, error) {
	return &fieldsProc{names: p.Fields, next: next}, nil
}

type fieldsProc struct {
	names   []string
	next    processor
	scratch Row
}

func (p *fieldsProc) push(r *Row) error {
	s := &p.scratch
	s.Reset()
	s.pos = r.pos
	for _, n := range p.names {
		if !strings.HasSuffix(n, "*") {
			if i := r.index(n); i >= 0 && s.index(n) < 0 {
				s.Fields = append(s.Fields, r.Fields[i])
			}
			continue
		}
		for _, f := range r.Fields {
			if matchName(n, f.Name) && s.index(f.Name) < 0 {
				s.Fields = append(s.Fields, f)
			}
		}
	}
	if s.index("_time") >= 0 {
		s.Time, s.HasTime = r.Time, r.HasTime
	}
	return p.next.push(s)
}

func (p *fieldsProc) flush() error { return p.next.flush() }
