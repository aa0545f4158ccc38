package query

import "strconv"

// PipeOffset drops the first N rows: "offset N", "skip N".
type PipeOffset struct{ N int64 }

func (*PipeOffset) isPipe() {}

func (p *PipeOffset) String() string { return "offset " + strconv.FormatInt(p.N, 10) }

// parseOffsetPipe parses "offset N" and "skip N".
func (p *parser) parseOffsetPipe(name string) (Pipe, error) {
	p.next()
	n, err := p.parseCount(name)
	if err != nil {
		return nil, err
	}
	return &PipeOffset{N: n}, nil
}

func (p *PipeOffset) newProcessor(_ *plan, next processor) (processor, error) {
	return &offsetProc{n: p.N, next: next}, nil
}

type offsetProc struct {
	n, seen int64
	next    processor
}

func (p *offsetProc) push(r *Row) error {
	if p.seen < p.n {
		p.seen++
		return nil
	}
	return p.next.push(r)
}

func (p *offsetProc) flush() error { return p.next.flush() }
