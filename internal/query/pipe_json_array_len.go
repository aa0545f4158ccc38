package query

import "strconv"

// PipeJSONArrayLen stores in Result (default _msg) the number of elements
// of the JSON array in Field: "json_array_len(f) [as] r". A value that is
// not a JSON array (as VictoriaLogs reads one, see json_array.go) gives 0.
type PipeJSONArrayLen struct{ Field, Result string }

func (*PipeJSONArrayLen) isPipe() {}

func (p *PipeJSONArrayLen) String() string {
	return "json_array_len(" + quoteToken(p.Field) + ") as " + quoteToken(p.Result)
}

// parseJSONArrayLenPipe parses "json_array_len(f) [as] [r]".
func (p *parser) parseJSONArrayLenPipe(_ string) (Pipe, error) {
	field, result, err := p.parseFieldToResult()
	if err != nil {
		return nil, err
	}
	return &PipeJSONArrayLen{Field: field, Result: result}, nil
}

func (p *PipeJSONArrayLen) newProcessor(_ *plan, next processor) (processor, error) {
	return &jsonArrayLenProc{field: p.Field, result: p.Result, next: next}, nil
}

type jsonArrayLenProc struct {
	field, result string
	next          processor
	elems         []string
	buf           []byte
}

func (p *jsonArrayLenProc) push(r *Row) error {
	p.elems, _ = appendJSONArrayElems(p.elems[:0], r.Get(p.field))
	p.buf = strconv.AppendInt(p.buf[:0], int64(len(p.elems)), 10)
	clear(p.elems) // they alias the row
	r.Set(p.result, unsafeString(p.buf))
	return p.next.push(r)
}

func (p *jsonArrayLenProc) flush() error { return p.next.flush() }
