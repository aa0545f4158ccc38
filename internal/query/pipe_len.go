package query

// PipeLen stores the byte length of Field in Result: "len(_msg) as l".
type PipeLen struct{ Field, Result string }

func (*PipeLen) isPipe() {}

func (p *PipeLen) String() string {
	return "len(" + quoteToken(p.Field) + ") as " + quoteToken(p.Result)
}

// parseLenPipe parses "len(f) [as] r"; the result defaults to _msg.
func (p *parser) parseLenPipe(_ string) (Pipe, error) {
	p.next()
	field, err := p.parseOptionalParenField("field name")
	if err != nil {
		return nil, err
	}
	result, err := p.parseOptionalResult("_msg")
	if err != nil {
		return nil, err
	}
	return &PipeLen{Field: field, Result: result}, nil
}

func (p *PipeLen) newProcessor(_ *plan, next processor) (processor, error) {
	return &lenProc{field: p.Field, result: p.Result, next: next}, nil
}

type lenProc struct {
	field, result string
	next          processor
	buf           []byte
}

func (p *lenProc) push(r *Row) error {
	p.buf = appendNumber(p.buf[:0], float64(len(r.Get(p.field))))
	r.Set(p.result, unsafeString(p.buf))
	return p.next.push(r)
}

func (p *lenProc) flush() error { return p.next.flush() }
