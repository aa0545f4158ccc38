package query

import (
	"encoding/binary"
	"slices"
	"strings"
)

// This file holds any and row_any, which return one row's value, or one
// row's fields, of a group. VictoriaLogs v1.52.1 keeps the first row its
// worker meets (without "by", only the first row of each storage block is
// looked at), so which row is not defined; spate keeps the earliest row of
// the input that qualifies, so that every run and every worker count
// agree.

// parseAnyArgs parses the one field of any.
func (p *parser) parseAnyArgs(sf *StatsFunc, args []string, argsPos int) error {
	if len(args) != 1 || strings.HasSuffix(args[0], "*") {
		return p.errorHint(argsPos, "for example: any(host)", "%s() takes exactly one field name", sf.Name)
	}
	sf.Fields = args
	return nil
}

// newAnyColumn compiles any.
func newAnyColumn(_ *plan, _ *PipeStats, f StatsFunc, _ []string, _ *memTracker) (statsColumn, error) {
	return &stateColumn{newFunc: func() statsState { return &anyState{field: f.Fields[0]} }}, nil
}

// anyState keeps the value of field in the earliest row where it is not
// empty.
type anyState struct {
	field string
	has   bool
	pos   rowPos
	val   string
}

func (s *anyState) update(r *Row) {
	if s.has && !r.pos.less(s.pos) {
		return
	}
	if v := r.Get(s.field); v != "" {
		s.has, s.pos, s.val = true, r.pos, strings.Clone(v)
	}
}

func (s *anyState) merge(o statsState) {
	os := o.(*anyState)
	if os.has && (!s.has || os.pos.less(s.pos)) {
		s.has, s.pos, s.val = true, os.pos, os.val
	}
}

func (s *anyState) result() string { return s.val }

func (s *anyState) appendState(dst []byte) []byte {
	if !s.has {
		return append(dst, 0)
	}
	return appendStr(appendPos(append(dst, 1), s.pos), s.val)
}

func (s *anyState) decodeState(src []byte) error {
	r := stateReader{b: src}
	if r.uvarint() == 1 {
		s.has, s.pos, s.val = true, r.pos(), r.str()
	}
	return r.end()
}

// newRowAnyColumn compiles row_any; fields nil means every field.
func newRowAnyColumn(_ *plan, _ *PipeStats, _ StatsFunc, fields []string, _ *memTracker) (statsColumn, error) {
	return &stateColumn{newFunc: func() statsState { return &rowAnyState{fields: fields} }}, nil
}

// rowAnyState keeps the fields (named ones and prefix patterns; nil: all)
// of the earliest row where one of them is not empty.
type rowAnyState struct {
	fields []string
	has    bool
	pos    rowPos
	row    []Field
}

func (s *rowAnyState) update(r *Row) {
	if s.has && !r.pos.less(s.pos) {
		return
	}
	if len(s.fields) == 0 {
		if !slices.ContainsFunc(r.Fields, func(f Field) bool { return f.Value != "" }) {
			return
		}
	} else if !anyValue(r, s.fields) {
		return
	}
	s.has, s.pos = true, r.pos
	s.row = s.row[:0]
	add := func(f *Field) {
		if f.Value != "" {
			s.row = append(s.row, Field{strings.Clone(f.Name), strings.Clone(f.Value)})
		}
	}
	if len(s.fields) == 0 {
		for i := range r.Fields {
			add(&r.Fields[i])
		}
		return
	}
	for _, f := range s.fields {
		if prefix, ok := strings.CutSuffix(f, "*"); ok {
			eachMatch(r, prefix, add)
			continue
		}
		add(&Field{f, r.Get(f)})
	}
}

func (s *rowAnyState) merge(o statsState) {
	os := o.(*rowAnyState)
	if os.has && (!s.has || os.pos.less(s.pos)) {
		s.has, s.pos, s.row = true, os.pos, os.row
	}
}

// result prints the kept fields as a JSON object, sorted by name (byte
// order, as VictoriaLogs' row_any: not row_min's _time-first order), each
// name once, without empty values; "{}" when no row qualified.
func (s *rowAnyState) result() string {
	row := slices.Clone(s.row)
	slices.SortStableFunc(row, func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
	b := []byte{'{'}
	for i, f := range row {
		if i > 0 && row[i-1].Name == f.Name {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendJSONFieldVL(b, f.Name, f.Value)
	}
	return string(append(b, '}'))
}

func (s *rowAnyState) appendState(dst []byte) []byte {
	if !s.has {
		return append(dst, 0)
	}
	dst = appendPos(append(dst, 1), s.pos)
	dst = binary.AppendUvarint(dst, uint64(len(s.row)))
	for _, f := range s.row {
		dst = appendStr(appendStr(dst, f.Name), f.Value)
	}
	return dst
}

func (s *rowAnyState) decodeState(src []byte) error {
	r := stateReader{b: src}
	if r.uvarint() == 1 {
		s.has, s.pos = true, r.pos()
		n := r.count()
		for range n {
			s.row = append(s.row, Field{Name: r.str(), Value: r.str()})
		}
	}
	return r.end()
}
