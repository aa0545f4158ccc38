package query

import "strconv"

// PipeLimit keeps the first N rows: "limit N", "head N". "head" with no
// number means 10.
type PipeLimit struct{ N int64 }

func (*PipeLimit) isPipe() {}

func (p *PipeLimit) String() string { return "limit " + strconv.FormatInt(p.N, 10) }

// parseLimitPipe parses "limit N" and "head [N]"; N defaults to 10.
func (p *parser) parseLimitPipe(name string) (Pipe, error) {
	p.next()
	n := int64(10)
	if !p.isTrailer() {
		var err error
		if n, err = p.parseCount(name); err != nil {
			return nil, err
		}
	}
	return &PipeLimit{N: n}, nil
}

func (p *PipeLimit) newProcessor(_ *plan, next processor) (processor, error) {
	return &limitProc{n: p.N, next: next}, nil
}

type limitProc struct {
	n, seen int64
	next    processor
}

func (p *limitProc) push(r *Row) error {
	if p.seen >= p.n {
		return errStop
	}
	p.seen++
	if err := p.next.push(r); err != nil {
		return err
	}
	if p.seen >= p.n {
		return errStop
	}
	return nil
}

func (p *limitProc) flush() error { return p.next.flush() }
