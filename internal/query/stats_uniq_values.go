package query

import (
	"slices"
	"strings"
)

// newUniqValuesColumn compiles uniq_values.
func newUniqValuesColumn(_ *plan, _ *PipeStats, f StatsFunc, fields []string, mem *memTracker) (statsColumn, error) {
	return &stateColumn{newFunc: func() statsState {
		return &uniqValuesState{fields: fields, limit: f.Limit, set: map[string]struct{}{}, mem: mem}
	}}, nil
}

// uniqValuesState keeps the distinct non-empty values, printed sorted.
type uniqValuesState struct {
	fields []string
	limit  int64
	set    map[string]struct{}
	mem    *memTracker
}

func (s *uniqValuesState) update(r *Row) {
	eachValue(r, s.fields, func(v string) {
		if v == "" {
			return
		}
		if _, ok := s.set[v]; ok {
			return
		}
		if s.limit > 0 && int64(len(s.set)) >= s.limit {
			return
		}
		s.set[strings.Clone(v)] = struct{}{}
		s.mem.add(int64(len(v)) + 48)
	})
}

func (s *uniqValuesState) merge(o statsState) {
	for v := range o.(*uniqValuesState).set {
		if s.limit > 0 && int64(len(s.set)) >= s.limit {
			break
		}
		s.set[v] = struct{}{}
	}
}

func (s *uniqValuesState) result() string {
	vals := make([]string, 0, len(s.set))
	for v := range s.set {
		vals = append(vals, v)
	}
	slices.SortFunc(vals, compareNatural)
	b := []byte{'['}
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONStringVL(b, v)
	}
	return string(append(b, ']'))
}
