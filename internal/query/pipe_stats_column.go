package query

import (
	"fmt"
	"slices"
	"strings"
)

// statsColumn is one stats function's state for every group of a statsProc,
// indexed by group.
type statsColumn interface {
	// grow makes room for groups [0, n).
	grow(n int)
	update(g int, r *Row)
	// merge folds group og of o (the same function of another worker)
	// into group g.
	merge(g int, o statsColumn, og int)
	result(g int) string
	// addRows adds n rows that have no fields (the count-only fast path).
	addRows(g int, n int64)
}

// newStatsColumn compiles f, a function of st, into a column: flat numeric
// slices for the simple functions, state objects per group for the rest.
// The newColumn of f's entry in getStatsFuncDefs builds it.
func newStatsColumn(p *plan, st *PipeStats, f StatsFunc, mem *memTracker) (statsColumn, error) {
	fields := f.Fields
	if len(fields) == 1 && fields[0] == "*" {
		fields = nil
	}
	def, ok := getStatsFuncDefs()[f.Name]
	if !ok {
		return nil, fmt.Errorf("stats function %q is not supported by spate", f.Name)
	}
	return def.newColumn(p, st, f, fields, mem)
}

// stateColumn keeps one state object per group.
type stateColumn struct {
	newFunc func() statsState
	states  []statsState
}

func (c *stateColumn) grow(n int) {
	for len(c.states) < n {
		c.states = append(c.states, c.newFunc())
	}
}

func (c *stateColumn) update(g int, r *Row) { c.states[g].update(r) }
func (c *stateColumn) addRows(int, int64)   {}
func (c *stateColumn) merge(g int, o statsColumn, og int) {
	c.states[g].merge(o.(*stateColumn).states[og])
}
func (c *stateColumn) result(g int) string { return c.states[g].result() }

// statsState is one function's running state in one group.
type statsState interface {
	update(r *Row)
	merge(o statsState)
	result() string
}

// eachValue calls fn with the values of fields in r: a named field's (""
// when r lacks it) and the non-empty values of the fields a prefix pattern
// ("http*") matches, in name order; with no fields, every field's value.
func eachValue(r *Row, fields []string, fn func(v string)) {
	if len(fields) == 0 {
		for _, f := range r.Fields {
			fn(f.Value)
		}
		return
	}
	for _, f := range fields {
		if prefix, ok := strings.CutSuffix(f, "*"); ok {
			eachMatch(r, prefix, func(fl *Field) {
				if fl.Value != "" {
					fn(fl.Value)
				}
			})
			continue
		}
		fn(r.Get(f))
	}
}

// isPattern reports whether a stats function's field is a prefix pattern
// ("http*").
func isPattern(f string) bool { return f != "" && f[len(f)-1] == '*' }

// eachMatch calls fn with r's fields whose names start with prefix, in
// name order.
func eachMatch(r *Row, prefix string, fn func(f *Field)) {
	var idx [16]int
	m := idx[:0]
	for i := range r.Fields {
		if strings.HasPrefix(r.Fields[i].Name, prefix) {
			m = append(m, i)
		}
	}
	if len(m) > 1 {
		slices.SortFunc(m, func(a, b int) int { return strings.Compare(r.Fields[a].Name, r.Fields[b].Name) })
	}
	for _, i := range m {
		fn(&r.Fields[i])
	}
}

// anyValue reports whether r has a non-empty value of one of fields (named
// fields and prefix patterns, as in eachValue).
func anyValue(r *Row, fields []string) bool {
	for _, f := range fields {
		if prefix, ok := strings.CutSuffix(f, "*"); ok {
			for i := range r.Fields {
				if r.Fields[i].Value != "" && strings.HasPrefix(r.Fields[i].Name, prefix) {
					return true
				}
			}
		} else if r.Get(f) != "" {
			return true
		}
	}
	return false
}
