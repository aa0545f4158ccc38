package query

// PipeUnroll splits JSON-array fields into one row per element: "unroll (a,
// b)" (also "unroll by (a)").
type PipeUnroll struct{ Fields []string }

func (*PipeUnroll) isPipe() {}

func (p *PipeUnroll) String() string { return "unroll (" + joinFieldPatterns(p.Fields) + ")" }

// parseUnrollPipe parses "unroll [by] (a, b)".
func (p *parser) parseUnrollPipe(_ string) (Pipe, error) {
	p.next()
	if p.isKw("if") {
		return nil, p.errorf(p.cur().pos, "'if' in unroll pipe is not supported by spate")
	}
	pos := p.cur().pos
	fields, err := p.parseByList("unroll")
	if err != nil {
		return nil, err
	}
	if len(fields) == 0 {
		return nil, p.errorHint(pos, "for example: unroll (tags)", "missing fields in unroll pipe")
	}
	return &PipeUnroll{Fields: fields}, nil
}

func (p *PipeUnroll) newProcessor(_ *plan, next processor) (processor, error) {
	return &unrollProc{fields: p.Fields, next: next}, nil
}

// unrollProc emits one row per element of JSON-array fields, and one with
// the fields empty for a row without elements.
type unrollProc struct {
	fields  []string
	next    processor
	scratch Row
	arena   arena
	vals    [][]string
	elems   []string
}

func (p *unrollProc) push(r *Row) error {
	p.arena.reset()
	p.vals = p.vals[:0]
	n := 0
	for _, f := range p.fields {
		vs := splitJSONArray(&p.elems, &p.arena, r.Get(f))
		p.vals = append(p.vals, vs)
		n = max(n, len(vs))
	}
	// A row whose fields hold no array element (absent, not an array, [])
	// stays, once, with them empty: as in VictoriaLogs.
	n = max(n, 1)
	for i := 0; i < n; i++ {
		p.scratch.CopyFrom(r)
		for j, f := range p.fields {
			v := ""
			if i < len(p.vals[j]) {
				v = p.vals[j][i]
			}
			p.scratch.Set(f, v)
		}
		if err := p.next.push(&p.scratch); err != nil {
			return err
		}
	}
	return nil
}

func (p *unrollProc) flush() error { return p.next.flush() }

// splitJSONArray returns the elements of a JSON array's text as values, as
// VictoriaLogs reads them (see json_array.go): strings unquoted, other
// elements as their compact JSON text (null is "null"). A value that is not
// a JSON array gives nil. The values are in a or alias s.
func splitJSONArray(elems *[]string, a *arena, s string) []string {
	raw, _ := appendJSONArrayElems((*elems)[:0], s)
	*elems = raw
	if len(raw) == 0 {
		return nil
	}
	out := make([]string, len(raw))
	for i, e := range raw {
		if v, ok := jsonElemValue(e); ok {
			out[i] = v
			continue
		}
		b := appendJSONElemValue(a.appendBuf(len(e)), e)
		out[i] = a.take(b)
	}
	return out
}
