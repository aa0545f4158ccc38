package query

import (
	"fmt"
	"slices"
	"strings"
)

// parseRowMinMaxArgs parses "field, field, ..." of row_min and row_max:
// the field to compare, then the fields to return (none or "*": all).
func (p *parser) parseRowMinMaxArgs(sf *StatsFunc, args []string, argsPos int) error {
	name := sf.Name
	if len(args) == 0 || strings.HasSuffix(args[0], "*") {
		return p.errorHint(argsPos, "for example: "+name+"(latency, _time, host)",
			"the first argument of %s() must be the field to compare", name)
	}
	sf.Fields = append([]string{args[0]}, allFieldsAsNil(args[1:])...)
	return nil
}

// rowMinMaxArgsString prints the fields of row_min and row_max.
func rowMinMaxArgsString(sf *StatsFunc) string { return joinFieldPatterns(sf.Fields) }

// parseFieldMinMaxArgs parses "field, result_field" of field_min and
// field_max: the field to compare and the one whose value is returned.
func (p *parser) parseFieldMinMaxArgs(sf *StatsFunc, args []string, argsPos int) error {
	if len(args) != 2 || strings.HasSuffix(args[0], "*") || strings.HasSuffix(args[1], "*") {
		return p.errorHint(argsPos, "for example: "+sf.Name+"(latency, host)",
			"%s() takes two field names: the field to compare and the field to return", sf.Name)
	}
	sf.Fields = args
	return nil
}

// newRowMinMaxColumn compiles row_min and row_max, and field_min and
// field_max, which are row_min and row_max of one field that return its
// bare value.
func newRowMinMaxColumn(_ *plan, _ *PipeStats, f StatsFunc, _ []string, _ *memTracker) (statsColumn, error) {
	if len(f.Fields) == 0 {
		return nil, fmt.Errorf("%s needs a field to compare", f.Name)
	}
	value := f.Name == "field_min" || f.Name == "field_max"
	if value && len(f.Fields) != 2 {
		return nil, fmt.Errorf("%s needs a field to compare and a field to return", f.Name)
	}
	return &stateColumn{newFunc: func() statsState {
		return &rowMinMaxState{field: f.Fields[0], fields: f.Fields[1:], min: f.Name == "row_min" || f.Name == "field_min", value: value}
	}}, nil
}

// rowMinMaxState keeps the fields of the row with the smallest or largest
// value of field (empty values are skipped); the earlier row wins a tie.
// With value set (field_min, field_max) its result is the bare value of
// its one field instead of a JSON object.
type rowMinMaxState struct {
	field  string
	fields []string
	min    bool
	value  bool
	has    bool
	val    string
	key    valueKey // val's, parsed once
	pos    rowPos
	row    []Field
}

func (s *rowMinMaxState) update(r *Row) {
	v := r.Get(s.field)
	if v == "" {
		return
	}
	if s.has && !s.better(v, r.pos) {
		return
	}
	s.has, s.val, s.pos = true, strings.Clone(v), r.pos
	s.key = keyOf(s.val)
	s.row = s.row[:0]
	if len(s.fields) == 0 {
		for _, f := range r.Fields {
			s.row = append(s.row, Field{strings.Clone(f.Name), strings.Clone(f.Value)})
		}
		return
	}
	for _, f := range s.fields {
		if prefix, ok := strings.CutSuffix(f, "*"); ok {
			eachMatch(r, prefix, func(fl *Field) {
				s.row = append(s.row, Field{strings.Clone(fl.Name), strings.Clone(fl.Value)})
			})
			continue
		}
		s.row = append(s.row, Field{f, strings.Clone(r.Get(f))})
	}
}

// better reports whether v at pos beats the kept value (ties: earlier row).
func (s *rowMinMaxState) better(v string, pos rowPos) bool {
	if v == s.val {
		return pos.less(s.pos)
	}
	k := keyOf(v)
	if s.min {
		return lessKey(&k, &s.key)
	}
	return lessKey(&s.key, &k)
}

func (s *rowMinMaxState) merge(o statsState) {
	os := o.(*rowMinMaxState)
	if os.has && (!s.has || s.better(os.val, os.pos)) {
		s.has, s.val, s.key, s.pos, s.row = true, os.val, os.key, os.pos, os.row
	}
}

func (s *rowMinMaxState) result() string {
	if s.value {
		if len(s.row) == 0 {
			return ""
		}
		return s.row[0].Value
	}
	if !s.has {
		return "{}" // as VictoriaLogs: no row had the field
	}
	row := s.row
	if len(s.fields) == 0 {
		// Every field, in VictoriaLogs' order: _time, _stream_id,
		// _stream, _msg, then the others by name.
		row = slices.Clone(row)
		slices.SortStableFunc(row, func(a, b Field) int { return compareLogFieldNames(a.Name, b.Name) })
	}
	b := []byte{'{'}
	n := 0
	for _, f := range row {
		if f.Value == "" {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendJSONFieldVL(b, f.Name, f.Value)
	}
	return string(append(b, '}'))
}

// compareLogFieldNames orders field names as VictoriaLogs lists a log's
// fields: _time, _stream_id, _stream and _msg first, then by name.
func compareLogFieldNames(a, b string) int {
	rank := func(n string) int {
		switch n {
		case "_time":
			return 0
		case "_stream_id":
			return 1
		case "_stream":
			return 2
		case "_msg":
			return 3
		}
		return 4
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	return strings.Compare(a, b)
}
