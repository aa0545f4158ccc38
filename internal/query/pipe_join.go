package query

import (
	"fmt"
	"slices"
)

// PipeJoin joins each row with the rows of a subquery (or rows written
// out) that have the same values of the By fields: "join by (a, b) (QUERY)
// [inner] [prefix P]". A row is given once per matching row, with that
// row's other fields (their names prefixed by Prefix) where its own are
// empty; a row without a match is given as it is, or dropped with Inner.
// A missing By field has the empty value on both sides.
//
// Query is the subquery until ResolveSubqueries runs it and sets Rows
// (Rows alone: "join by (a) rows({...})").
type PipeJoin struct {
	By     []string
	Query  *Query
	Rows   RowsLiteral
	Inner  bool
	Prefix string
}

func (*PipeJoin) isPipe() {}

func (p *PipeJoin) String() string {
	s := "join by (" + joinFieldPatterns(p.By) + ") "
	if p.Query != nil {
		s += "(" + p.Query.String() + ")"
	} else {
		s += p.Rows.String()
	}
	if p.Inner {
		s += " inner"
	}
	if p.Prefix != "" {
		s += " prefix " + quoteToken(p.Prefix)
	}
	return s
}

// parseJoinPipe parses "join [by|on] (a, b) (QUERY) [inner] [prefix P]",
// with "rows(...)" in place of (QUERY).
func (p *parser) parseJoinPipe(_ string) (Pipe, error) {
	p.next()
	if p.isKw("by", "on") {
		p.next()
	}
	pos := p.cur().pos
	by, err := p.parseFieldPatterns("join field", true, false)
	if err != nil {
		return nil, err
	}
	if len(by) == 0 {
		return nil, p.errorf(pos, "join needs at least one field in 'by (...)'")
	}
	pj := &PipeJoin{By: by}
	if p.isKw("rows") {
		if pj.Rows, err = p.parseRowsLiteral(); err != nil {
			return nil, err
		}
	} else if pj.Query, err = p.parseSubquery("join"); err != nil {
		return nil, err
	}
	if p.isKw("inner") {
		p.next()
		pj.Inner = true
	}
	if p.isKw("prefix") {
		p.next()
		if pj.Prefix, err = p.compound(stopsGeneric, "prefix of join"); err != nil {
			return nil, err
		}
		if p.isKw("inner") {
			p.next()
			pj.Inner = true
		}
	}
	return pj, nil
}

// joinProc implements join. The table of rows by key is built once, at
// compile time, and shared read-only by the workers.
type joinProc struct {
	p       *PipeJoin
	table   map[string][][]Field
	key     []byte
	scratch Row
	next    processor
}

func (p *PipeJoin) newProcessor(pl *plan, next processor) (processor, error) {
	if p.Query != nil {
		return nil, errUnresolved("join", p.Query)
	}
	pl.joinMu.Lock()
	defer pl.joinMu.Unlock()
	if pl.joinTables == nil {
		pl.joinTables = make(map[*PipeJoin]map[string][][]Field)
	}
	table, ok := pl.joinTables[p]
	if !ok {
		table = buildJoinTable(p)
		pl.joinTables[p] = table
	}
	return &joinProc{p: p, table: table, next: next}, nil
}

// buildJoinTable groups the join's rows by the key of their By values
// (appendPartitionKey), each without its By fields and with the prefix
// on the others' names.
func buildJoinTable(p *PipeJoin) map[string][][]Field {
	table := make(map[string][][]Field, len(p.Rows))
	var key []byte
	for _, fields := range p.Rows {
		r := Row{Fields: fields}
		key = appendPartitionKey(key[:0], &r, p.By)
		var extra []Field
		for _, f := range fields {
			if !slices.Contains(p.By, f.Name) {
				extra = append(extra, Field{Name: p.Prefix + f.Name, Value: f.Value})
			}
		}
		table[string(key)] = append(table[string(key)], extra)
	}
	return table
}

func (j *joinProc) push(r *Row) error {
	j.key = appendPartitionKey(j.key[:0], r, j.p.By)
	matches := j.table[string(j.key)]
	if len(matches) == 0 {
		if j.p.Inner {
			return nil
		}
		return j.next.push(r)
	}
	for _, extra := range matches {
		j.scratch.CopyFrom(r)
		for _, f := range extra {
			if i := j.scratch.index(f.Name); i >= 0 {
				if j.scratch.Fields[i].Value == "" {
					j.scratch.Fields[i].Value = f.Value
					if f.Name == "_time" {
						j.scratch.HasTime = false
					}
				}
				continue
			}
			j.scratch.Set(f.Name, f.Value)
		}
		if err := j.next.push(&j.scratch); err != nil {
			return err
		}
	}
	return nil
}

func (j *joinProc) flush() error { return j.next.flush() }

// errUnresolved is the error of a subquery that reached execution without
// ResolveSubqueries: one in a place it does not look.
func errUnresolved(where string, q *Query) error {
	return fmt.Errorf("the subquery of %s cannot be run there by spate (only in the query's filter, filter pipes and the if of a pipe or stats function): %s", where, q)
}
