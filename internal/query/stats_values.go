package query

import (
	"slices"
	"strings"
)

// newValuesColumn compiles values.
func newValuesColumn(_ *plan, _ *PipeStats, f StatsFunc, fields []string, mem *memTracker) (statsColumn, error) {
	return &stateColumn{newFunc: func() statsState { return &valuesState{fields: fields, limit: f.Limit, mem: mem} }}, nil
}

// valuesState keeps every value in file order.
type valuesState struct {
	fields []string
	limit  int64
	vals   []posValue
	mem    *memTracker
}

type posValue struct {
	pos rowPos
	v   string
}

// update adds r's values of the fields, an empty one for each row without
// a named field (VictoriaLogs keeps them: values(x) of 4 rows has 4
// values), only the non-empty ones of every field (values(*)).
func (s *valuesState) update(r *Row) {
	eachValue(r, s.fields, func(v string) {
		if (v == "" && len(s.fields) == 0) || (s.limit > 0 && int64(len(s.vals)) >= s.limit) {
			return
		}
		s.vals = append(s.vals, posValue{r.pos, strings.Clone(v)})
		s.mem.add(int64(len(v)) + 40)
	})
}

func (s *valuesState) merge(o statsState) { s.vals = append(s.vals, o.(*valuesState).vals...) }

func (s *valuesState) result() string {
	slices.SortStableFunc(s.vals, func(a, b posValue) int {
		if a.pos.less(b.pos) {
			return -1
		}
		if b.pos.less(a.pos) {
			return 1
		}
		return 0
	})
	vals := s.vals
	if s.limit > 0 && int64(len(vals)) > s.limit {
		vals = vals[:s.limit]
	}
	b := []byte{'['}
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONStringVL(b, v.v)
	}
	return string(append(b, ']'))
}
