package query

// PipeFilter keeps rows that Filter matches: "filter f", "where f".
type PipeFilter struct{ Filter Filter }

func (*PipeFilter) isPipe() {}

func (p *PipeFilter) String() string { return "filter " + p.Filter.String() }

// parseFilterPipe parses "filter f" and "where f".
func (p *parser) parseFilterPipe(_ string) (Pipe, error) {
	t := p.cur()
	p.next()
	if p.isTrailer() {
		return nil, p.errorf(p.cur().pos, "missing filter after %q", t.raw)
	}
	return p.parseFilterPipeNoKeyword()
}

// parseFilterPipeNoKeyword parses a filter pipe written without "filter".
func (p *parser) parseFilterPipeNoKeyword() (Pipe, error) {
	f, err := p.parseOr("")
	if err != nil {
		return nil, err
	}
	return &PipeFilter{Filter: f}, nil
}

func (p *PipeFilter) newProcessor(_ *plan, next processor) (processor, error) {
	m, err := compileFilter(p.Filter)
	if err != nil {
		return nil, err
	}
	return &filterProc{m: m, next: next}, nil
}

type filterProc struct {
	m    matcher
	next processor
}

func (p *filterProc) push(r *Row) error {
	if !p.m.match(r) {
		return nil
	}
	return p.next.push(r)
}

func (p *filterProc) flush() error { return p.next.flush() }
