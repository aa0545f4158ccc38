package query

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spate-io/spate/internal/ndjson"
)

// Subqueries: queries inside a query, which run before it over the same
// logs (the same files, or the same tenant and time range of a server) and
// whose results become part of it, as in VictoriaLogs:
//
//   - "join by (a, b) (QUERY) [inner] [prefix P]": QUERY's rows;
//   - "union (QUERY)": QUERY's rows, after the input's;
//   - "f:in(QUERY)", "f:contains_any(QUERY)", "f:contains_all(QUERY)": the
//     values of the one field QUERY ends with ("| fields x" or
//     "| uniq by (x)").
//
// ResolveSubqueries runs them and puts their results in the query (rows,
// values), so that it prints and runs as if they had been written out:
// "join by (a) rows({"a":"1","b":"x"})", "f:in(1, 2)". A node of a fan-out
// so receives the front's results, not the subqueries.

// RowsLiteral is rows written out in a query: "rows({"a":"1"}, {b:2})".
type RowsLiteral [][]Field

// String prints the rows as VictoriaLogs does: rows({"a":"1",...},...).
func (rs RowsLiteral) String() string {
	b := []byte("rows(")
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		for j, f := range r {
			if j > 0 {
				b = append(b, ',')
			}
			b = ndjson.AppendQuoted(b, f.Name)
			b = append(b, ':')
			b = ndjson.AppendQuoted(b, f.Value)
		}
		b = append(b, '}')
	}
	return string(append(b, ')'))
}

// parseRowsLiteral parses "rows({name: value, "n"="v"}, ...)"; the current
// token is "rows".
func (p *parser) parseRowsLiteral() (RowsLiteral, error) {
	p.next()
	if err := p.expectPunct("(", "after 'rows'"); err != nil {
		return nil, err
	}
	rows := RowsLiteral{}
	for !p.isPunct(")") {
		if p.atEOF() {
			return nil, p.errorf(p.cur().pos, "missing ')' at the end of rows(...)")
		}
		if err := p.expectPunct("{", "before a row of rows(...)"); err != nil {
			return nil, err
		}
		var row []Field
		for !p.isPunct("}") {
			name, err := p.compound(stopsRowName, "field name in rows(...)")
			if err != nil {
				return nil, err
			}
			if !p.isPunct(":") && !p.isPunct("=") {
				return nil, p.errorf(p.cur().pos, "missing ':' or '=' after %s in rows(...); got %s", quoteToken(name), p.describe())
			}
			p.next()
			value, err := p.compound(stopsRowValue, "value in rows(...)")
			if err != nil {
				return nil, err
			}
			if i := slices.IndexFunc(row, func(f Field) bool { return f.Name == name }); i >= 0 {
				row[i].Value = value
			} else {
				row = append(row, Field{Name: name, Value: value})
			}
			if p.isPunct(",") {
				p.next()
			} else if !p.isPunct("}") {
				return nil, p.errorf(p.cur().pos, "missing ',' or '}' in a row of rows(...); got %s", p.describe())
			}
		}
		p.next() // }
		rows = append(rows, row)
		if p.isPunct(",") {
			p.next()
		}
	}
	p.next() // )
	return rows, nil
}

// parseSubquery parses "(QUERY)": a filter and pipes up to the matching
// ')'.
func (p *parser) parseSubquery(what string) (*Query, error) {
	open := p.cur().pos
	if err := p.expectPunct("(", "before the query of "+what); err != nil {
		return nil, err
	}
	if err := p.enter(open); err != nil {
		return nil, err
	}
	defer p.leave()
	if p.isPunct(")") {
		return nil, p.errorHint(p.cur().pos, `use "*" to select all logs`, "empty query in %s", what)
	}
	opts, err := p.parseOptionsPrefix()
	if err != nil {
		return nil, err
	}
	outer := p.options
	if opts != nil {
		p.options = opts
	}
	defer func() { p.options = outer }()
	f, err := p.parseOr("")
	if err != nil {
		return nil, err
	}
	q := &Query{Options: opts, Filter: f, inherited: outer}
	q.Filter = shiftTimeFilters(f, q.timeOffset())
	for p.isPunct("|") {
		p.next()
		if p.atEOF() || p.isPunct(")") {
			return nil, p.errorf(p.cur().pos, "missing pipe after '|'")
		}
		pp, err := p.parsePipe()
		if err != nil {
			return nil, err
		}
		q.Pipes = append(q.Pipes, pp)
	}
	if !p.isPunct(")") {
		return nil, p.errorHint(p.cur().pos, fmt.Sprintf("close the '(' at column %d", p.column(open)),
			"missing ')' at the end of the query of %s; got %s", what, p.describe())
	}
	p.next()
	return q, nil
}

// valuesField returns the field whose values a subquery of in(),
// contains_any() or contains_all() gives: the one field of its last pipe,
// fields or uniq.
func valuesField(q *Query) (string, error) {
	if len(q.Pipes) > 0 {
		switch t := q.Pipes[len(q.Pipes)-1].(type) {
		case *PipeFields:
			if len(t.Fields) == 1 && !isPattern(t.Fields[0]) {
				return t.Fields[0], nil
			}
			return "", fmt.Errorf("'%s' must name one field", t)
		case *PipeUniq:
			if len(t.By) == 1 {
				return t.By[0], nil
			}
			return "", fmt.Errorf("'%s' must have one field", t)
		}
	}
	return "", errors.New("the query must end with '| fields x' or '| uniq by (x)'")
}

// HasSubqueries reports whether q has a subquery that ResolveSubqueries
// has not run yet.
func (q *Query) HasSubqueries() bool {
	found := false
	q.visitSubqueryHolders(func(f Filter, p Pipe) {
		_, ok := pendingSubquery(f, p)
		found = found || ok
	})
	return found
}

// visitSubqueryHolders calls fn with every filter leaf of q (forEachFilter:
// its filter, its filter pipes and the if of pipes and stats functions;
// pipe nil), and with each of its pipes (filter nil): where subqueries
// may be. It does not enter the subqueries themselves.
func (q *Query) visitSubqueryHolders(fn func(f Filter, p Pipe)) {
	forEachFilter(q, func(f Filter) { fn(f, nil) })
	for _, p := range q.Pipes {
		fn(nil, p)
	}
}

// pending is a subquery not run yet, and where its results go: a
// filter's values (those of field), a join's or union's rows. The setter
// also clears the subquery.
type pending struct {
	q      *Query
	field  string
	values func([]string)    // filters
	rows   func(RowsLiteral) // join, union
}

// pendingSubquery returns the subquery a holder (as visitSubqueryHolders
// gives them) has not run yet; ok is false when it has none.
func pendingSubquery(f Filter, p Pipe) (s pending, ok bool) {
	switch t := f.(type) {
	case *FilterIn:
		s = pending{q: t.Sub, field: t.SubField, values: func(v []string) { t.Values, t.Sub = v, nil }}
	case *FilterContainsAny:
		s = pending{q: t.Sub, field: t.SubField, values: func(v []string) { t.Phrases, t.Sub = v, nil }}
	case *FilterContainsAll:
		s = pending{q: t.Sub, field: t.SubField, values: func(v []string) { t.Phrases, t.Sub = v, nil }}
	case *FilterStreamID:
		s = pending{q: t.Sub, field: t.SubField, values: func(v []string) { t.IDs, t.Sub = v, nil }}
	}
	switch t := p.(type) {
	case *PipeJoin:
		s = pending{q: t.Query, rows: func(r RowsLiteral) { t.Rows, t.Query = r, nil }}
	case *PipeUnion:
		s = pending{q: t.Query, rows: func(r RowsLiteral) { t.Rows, t.Query = r, nil }}
	}
	return s, s.q != nil
}

// visitQueries calls fn with q and every subquery in it, at any depth,
// outer queries first.
func (q *Query) visitQueries(fn func(*Query)) {
	fn(q)
	q.visitSubqueryHolders(func(f Filter, p Pipe) {
		if s, ok := pendingSubquery(f, p); ok {
			s.q.visitQueries(fn)
		}
	})
}

// SubqueryRunner runs a subquery over the logs of the query that holds it
// and writes its result rows to sink.
type SubqueryRunner func(ctx context.Context, q *Query, sink Sink) error

// ResolveSubqueries runs every subquery of q with run and puts its results
// in q, in place: a join's and a union's Rows, the Values of in(), the
// Phrases of contains_any() and contains_all(), the IDs of
// _stream_id:in(). A subquery's own subqueries are run in its turn (run
// resolves them). Rows and values are held in memory; a result over
// maxBytes (0: no limit) is an error (ErrMemoryLimit).
func ResolveSubqueries(ctx context.Context, q *Query, maxBytes int64, run SubqueryRunner) error {
	var err error
	q.visitSubqueryHolders(func(f Filter, p Pipe) {
		s, ok := pendingSubquery(f, p)
		if err != nil || !ok {
			return
		}
		if s.values != nil {
			var vals []string
			vals, err = subqueryValues(ctx, s.q, s.field, maxBytes, run)
			s.values(vals)
			return
		}
		var rows RowsLiteral
		rows, err = subqueryRows(ctx, s.q, maxBytes, run)
		s.rows(rows)
	})
	return err
}

// subqueryRows runs q and returns its rows, cloned.
func subqueryRows(ctx context.Context, q *Query, maxBytes int64, run SubqueryRunner) (RowsLiteral, error) {
	rows := RowsLiteral{}
	var size int64
	err := run(ctx, q, sinkFunc(func(r *Row) error {
		c := r.Clone()
		size += rowSize(c)
		if maxBytes > 0 && size > maxBytes {
			return fmt.Errorf("the rows of subquery [%s] take over %d MiB: %w", q, maxBytes>>20, ErrMemoryLimit)
		}
		rows = append(rows, c.Fields)
		return nil
	}))
	if err != nil {
		return nil, fmt.Errorf("cannot run subquery [%s]: %w", q, err)
	}
	return rows, nil
}

// subqueryValues runs q, with "| uniq by (field)" added unless it ends
// with uniq, and returns field's distinct values.
func subqueryValues(ctx context.Context, q *Query, field string, maxBytes int64, run SubqueryRunner) ([]string, error) {
	if len(q.Pipes) == 0 || !isUniq(q.Pipes[len(q.Pipes)-1]) {
		c := *q
		c.Pipes = append(slices.Clip(c.Pipes), &PipeUniq{By: []string{field}})
		q = &c
	}
	values := []string{}
	seen := make(map[string]bool)
	var size int64
	err := run(ctx, q, sinkFunc(func(r *Row) error {
		v := r.Get(field)
		if seen[v] {
			return nil
		}
		v = strings.Clone(v)
		seen[v] = true
		values = append(values, v)
		size += int64(len(v)) + 32
		if maxBytes > 0 && size > maxBytes {
			return fmt.Errorf("the values of subquery [%s] take over %d MiB: %w", q, maxBytes>>20, ErrMemoryLimit)
		}
		return nil
	}))
	if err != nil {
		return nil, fmt.Errorf("cannot run subquery [%s]: %w", q, err)
	}
	return values, nil
}

// WithEmptyRows returns a Sink that passes every row to s, including the
// rows with no non-empty field, which a query's result leaves out
// otherwise (VictoriaLogs returns none to clients). A node of a fan-out
// sends them to the front, where they count (uniq's empty tuple, a
// subquery's empty value) until its own result leaves them out.
func WithEmptyRows(s Sink) Sink { return allRows{s} }

type allRows struct{ Sink }

func (allRows) takesEmptyRows() {}

func isUniq(p Pipe) bool {
	_, ok := p.(*PipeUniq)
	return ok
}

// sinkFunc is a Sink that calls a function with each row, including the
// rows with no non-empty field (allRowsSink): the empty value is one of a
// subquery's values, and a row of a join.
type sinkFunc func(r *Row) error

func (f sinkFunc) WriteRow(r *Row) error { return f(r) }
func (f sinkFunc) takesEmptyRows()       {}
