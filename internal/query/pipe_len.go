package query

// PipeLen stores the byte length of Field in Result: "len(_msg) as l".
type PipeLen struct{ Field, Result string }

func (*PipeLen) isPipe() {}

func (p *PipeLen) String() string {
	return "len(" + quoteToken(p.Field) + ") as " + quoteToken(p.Result)
}

// parseLenPipe parses "len(f) [as] r"; the result defaults to _msg.
func (p *parser) parseLenPipe(_ string) (Pipe, error) {
	field, result, err := p.parseFieldToResult()
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

// parseFieldToResult reads what follows the name of a pipe that stores a
// value computed from one field (len, hash, json_array_len): "(f)" or
// "f", then an optional "[as] r", r defaulting to _msg. The current token
// is the pipe's name.
func (p *parser) parseFieldToResult() (field, result string, err error) {
	p.next()
	if field, err = p.parseOptionalParenField("field name"); err != nil {
		return "", "", err
	}
	if result, err = p.parseOptionalResult("_msg"); err != nil {
		return "", "", err
	}
	return field, result, nil
}
