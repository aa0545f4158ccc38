package query

// PipeDelete removes the named fields: "delete a, b" (also del, rm, drop).
// Names ending in '*' are prefix patterns.
type PipeDelete struct{ Fields []string }

func (*PipeDelete) isPipe() {}

func (p *PipeDelete) String() string { return "delete " + joinFieldPatterns(p.Fields) }

// parseDeletePipe parses "delete a, b".
func (p *parser) parseDeletePipe(_ string) (Pipe, error) {
	p.next()
	fields, err := p.parseFieldPatterns("field name", false, true)
	if err != nil {
		return nil, err
	}
	return &PipeDelete{Fields: fields}, nil
}

func (p *PipeDelete) newProcessor(_ *plan, next processor) (processor, error) {
	return &deleteProc{names: p.Fields, next: next}, nil
}

type deleteProc struct {
	names []string
	next  processor
}

func (p *deleteProc) push(r *Row) error {
	j := 0
	for _, f := range r.Fields {
		del := false
		for _, n := range p.names {
			if matchName(n, f.Name) {
				del = true
				break
			}
		}
		if del {
			if f.Name == "_time" {
				r.HasTime = false
			}
			continue
		}
		r.Fields[j] = f
		j++
	}
	r.Fields = r.Fields[:j]
	return p.next.push(r)
}

func (p *deleteProc) flush() error { return p.next.flush() }
