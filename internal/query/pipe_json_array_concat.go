package query

// PipeJSONArrayConcat joins the elements of the JSON array in From (default
// _msg) with Delimiter (default none) and stores the text in Result
// (default From): "json_array_concat [delimiter] [from f] [as r]". Elements
// are as unroll gives them (a string's contents, any other element's
// compact JSON text); a value that is not a JSON array gives "".
type PipeJSONArrayConcat struct {
	Delimiter    string
	From, Result string
}

func (*PipeJSONArrayConcat) isPipe() {}

func (p *PipeJSONArrayConcat) String() string {
	s := "json_array_concat"
	if p.Delimiter != "" {
		s += " " + quoteToken(p.Delimiter)
	}
	if p.From != "_msg" {
		s += " from " + quoteToken(p.From)
	}
	if p.Result != p.From {
		s += " as " + quoteToken(p.Result)
	}
	return s
}

// parseJSONArrayConcatPipe parses "json_array_concat [delimiter] [[from] f]
// [[as] r]": as in VictoriaLogs, the first token that is not "from" or
// "as" is the delimiter.
func (p *parser) parseJSONArrayConcatPipe(_ string) (Pipe, error) {
	p.next()
	pc := &PipeJSONArrayConcat{From: "_msg"}
	var err error
	if !p.isTrailer() && !p.isKw("from", "as") {
		if pc.Delimiter, err = p.compound(stopsGeneric, "delimiter"); err != nil {
			return nil, err
		}
	}
	if !p.isTrailer() && !p.isKw("as") {
		if p.isKw("from") {
			p.next()
		}
		if pc.From, err = p.parseFieldName("field after 'from'"); err != nil {
			return nil, err
		}
	}
	pc.Result = pc.From
	if !p.isTrailer() {
		if p.isKw("as") {
			p.next()
		}
		if pc.Result, err = p.parseFieldName("result field"); err != nil {
			return nil, err
		}
	}
	return pc, nil
}

func (p *PipeJSONArrayConcat) newProcessor(_ *plan, next processor) (processor, error) {
	return &jsonArrayConcatProc{p: p, next: next}, nil
}

type jsonArrayConcatProc struct {
	p     *PipeJSONArrayConcat
	next  processor
	elems []string
	buf   []byte
}

func (p *jsonArrayConcatProc) push(r *Row) error {
	p.elems, _ = appendJSONArrayElems(p.elems[:0], r.Get(p.p.From))
	p.buf = p.buf[:0]
	for i, e := range p.elems {
		if i > 0 {
			p.buf = append(p.buf, p.p.Delimiter...)
		}
		if v, ok := jsonElemValue(e); ok {
			p.buf = append(p.buf, v...)
		} else {
			p.buf = appendJSONElemValue(p.buf, e)
		}
	}
	clear(p.elems) // they alias the row
	r.Set(p.p.Result, unsafeString(p.buf))
	return p.next.push(r)
}

func (p *jsonArrayConcatProc) flush() error { return p.next.flush() }
