package query

import "strings"

// newMinMaxColumn compiles min and max.
func newMinMaxColumn(_ *plan, _ *PipeStats, f StatsFunc, fields []string, _ *memTracker) (statsColumn, error) {
	isMin := f.Name == "min"
	return &stateColumn{newFunc: func() statsState { return &minMaxState{fields: fields, min: isMin} }}, nil
}

// minMaxState keeps the smallest or largest value: numerically when both
// parse as numbers, otherwise as strings. Empty values take part in min.
type minMaxState struct {
	fields []string
	min    bool
	has    bool
	val    string
	key    valueKey // val's, parsed once
}

func (s *minMaxState) update(r *Row) {
	if len(s.fields) == 1 && !isPattern(s.fields[0]) {
		s.add(r.Get(s.fields[0]))
		return
	}
	eachValue(r, s.fields, s.add)
}

func (s *minMaxState) add(v string) {
	if !s.min && v == "" {
		return
	}
	if s.has && v == s.val {
		return
	}
	k := keyOf(v)
	if !s.has || s.min && lessKey(&k, &s.key) || !s.min && lessKey(&s.key, &k) {
		s.has, s.val = true, strings.Clone(v)
		s.key = keyOf(s.val)
	}
}

func (s *minMaxState) merge(o statsState) {
	if os := o.(*minMaxState); os.has {
		s.add(os.val)
	}
}

func (s *minMaxState) result() string { return s.val }
