package query

// PipeUnion adds the rows of a subquery (or rows written out) after its
// input's rows: "union (QUERY)", "union rows({...}, ...)". Query is the
// subquery until ResolveSubqueries runs it and sets Rows.
//
// It runs after the rows of the input, one at a time, in input order
// (like limit, it is a pipe that sees rows in order: executor), and
// holds none of them.
type PipeUnion struct {
	Query *Query
	Rows  RowsLiteral
}

func (*PipeUnion) isPipe() {}

func (p *PipeUnion) String() string {
	if p.Query != nil {
		return "union (" + p.Query.String() + ")"
	}
	return "union " + p.Rows.String()
}

// parseUnionPipe parses "union (QUERY)" and "union rows(...)".
func (p *parser) parseUnionPipe(_ string) (Pipe, error) {
	p.next()
	pu := &PipeUnion{}
	var err error
	if p.isKw("rows") {
		pu.Rows, err = p.parseRowsLiteral()
	} else {
		pu.Query, err = p.parseSubquery("union")
	}
	if err != nil {
		return nil, err
	}
	return pu, nil
}

// unionProc implements union: it passes rows on, then the union's rows.
type unionProc struct {
	p    *PipeUnion
	row  Row
	done bool // next wants no more rows
	next processor
}

func (p *PipeUnion) newProcessor(_ *plan, next processor) (processor, error) {
	if p.Query != nil {
		return nil, errUnresolved("union", p.Query)
	}
	return &unionProc{p: p, next: next}, nil
}

func (u *unionProc) push(r *Row) error {
	if u.done {
		return errStop
	}
	err := u.next.push(r)
	if err == errStop {
		u.done = true
	}
	return err
}

func (u *unionProc) flush() error {
	for _, fields := range u.p.Rows {
		if u.done {
			break
		}
		u.row.Fields = append(u.row.Fields[:0], fields...)
		u.row.HasTime = false
		if err := u.next.push(&u.row); err != nil {
			if err == errStop {
				break
			}
			return err
		}
	}
	return u.next.flush()
}
