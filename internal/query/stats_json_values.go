package query

import (
	"encoding/binary"
	"slices"
	"strings"
)

// This file holds json_values, which gives every row of a group as a JSON
// object of its fields that match the arguments: "json_values(a, b*) sort
// by (_time desc) limit 10". VictoriaLogs v1.52.1 keeps the rows in the
// order its workers meet them, sorts them (sort.Slice: equal sort values in
// any order) and, with a limit but no sort, keeps whichever rows it met
// first; spate keeps input order, sorts stably and keeps the earliest rows,
// so that every run and worker count agree.

// parseJSONValuesArgs takes the arguments of json_values as field names and
// prefix patterns; none or "*" means every field.
func (p *parser) parseJSONValuesArgs(sf *StatsFunc, args []string, _ int) error {
	sf.Fields = allFieldsAsNil(args)
	return nil
}

// sortFieldsString prints " sort by (a, b desc)" for json_values' Sort, ""
// without one.
func sortFieldsString(fields []SortField) string {
	if len(fields) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(" sort")
	writeSortBy(&b, fields)
	return b.String()
}

// writeSortBy writes " by (a, b desc)", the fields as sort and
// json_values name them.
func writeSortBy(b *strings.Builder, fields []SortField) {
	b.WriteString(" by (")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteToken(f.Name))
		if f.Desc {
			b.WriteString(" desc")
		}
	}
	b.WriteString(")")
}

// newJSONValuesColumn compiles json_values; fields nil means every field.
func newJSONValuesColumn(_ *plan, _ *PipeStats, f StatsFunc, fields []string, mem *memTracker) (statsColumn, error) {
	return &stateColumn{newFunc: func() statsState {
		return &jsonValuesState{fields: fields, sort: f.Sort, limit: f.Limit, mem: mem}
	}}, nil
}

// jsonValuesState keeps one entry per row: its JSON object, its position
// and, with sort, its values of the sort fields. With a limit it keeps at
// most 2*limit entries, trimming to the best limit ones when full.
type jsonValuesState struct {
	fields  []string
	sort    []SortField
	limit   int64
	entries []jsonEntry
	mem     *memTracker
	// trimmed is set once entries were trimmed to limit; worst is then
	// the last kept entry, which a row must beat to be kept.
	trimmed bool
	worst   jsonEntry
	keys    []valueKey // the current row's sort keys (scratch)
	buf     []Field    // the current row's matching fields (scratch)
	json    []byte     // scratch
}

type jsonEntry struct {
	pos  rowPos
	json string
	keys []valueKey // the sort fields' values
}

// compare orders a and b as the result lists them: by the sort fields
// (VictoriaLogs' lessString order, desc reversing a field; the first
// field whose texts differ decides), then by input position.
func (s *jsonValuesState) compare(a, b *jsonEntry) int {
	for i := range s.sort {
		c := 0
		if lessKey(&a.keys[i], &b.keys[i]) {
			c = -1
		} else if lessKey(&b.keys[i], &a.keys[i]) {
			c = 1
		}
		if s.sort[i].Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		if a.keys[i].s != b.keys[i].s {
			// Different texts of one number ("1e3", "1_000"): VictoriaLogs
			// stops at the first field whose texts differ, so they tie.
			break
		}
	}
	switch {
	case a.pos.less(b.pos):
		return -1
	case b.pos.less(a.pos):
		return 1
	}
	return 0
}

func (s *jsonValuesState) update(r *Row) {
	cand := jsonEntry{pos: r.pos}
	if len(s.sort) > 0 {
		s.keys = s.keys[:0]
		for _, f := range s.sort {
			s.keys = append(s.keys, keyOf(r.Get(f.Name)))
		}
		cand.keys = s.keys
	}
	if s.trimmed && s.compare(&cand, &s.worst) > 0 {
		return // Fast path: cannot be among the first limit entries.
	}
	s.buf = s.buf[:0]
	for _, f := range r.Fields {
		if f.Value != "" && (len(s.fields) == 0 || matchesAny(s.fields, f.Name)) {
			s.buf = append(s.buf, f)
		}
	}
	slices.SortFunc(s.buf, func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
	s.json = appendFieldsJSONVL(s.json[:0], s.buf)
	cand.json = string(s.json)
	if len(s.sort) > 0 {
		cand.keys = make([]valueKey, len(s.keys))
		for i, k := range s.keys {
			k.s = strings.Clone(k.s)
			cand.keys[i] = k
		}
	}
	s.add(cand)
}

// appendFieldsJSONVL appends fields as a JSON object, each value quoted as
// VictoriaLogs quotes them (appendJSONStringVL).
func appendFieldsJSONVL(dst []byte, fields []Field) []byte {
	dst = append(dst, '{')
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONStringVL(dst, f.Name)
		dst = append(dst, ':')
		dst = appendJSONStringVL(dst, f.Value)
	}
	return append(dst, '}')
}

// add keeps e, trimming the entries to the best limit ones when they
// reach twice the limit.
func (s *jsonValuesState) add(e jsonEntry) {
	s.entries = append(s.entries, e)
	s.mem.add(int64(len(e.json)) + 48 + int64(len(e.keys))*80)
	if s.limit > 0 && int64(len(s.entries)) >= 2*s.limit {
		s.trim()
	}
}

// trim sorts the entries and keeps the first limit of them.
func (s *jsonValuesState) trim() {
	slices.SortStableFunc(s.entries, func(a, b jsonEntry) int { return s.compare(&a, &b) })
	if s.limit > 0 && int64(len(s.entries)) > s.limit {
		clear(s.entries[s.limit:])
		s.entries = s.entries[:s.limit]
		s.trimmed = true
		s.worst = s.entries[len(s.entries)-1]
	}
}

func (s *jsonValuesState) merge(o statsState) {
	for _, e := range o.(*jsonValuesState).entries {
		s.add(e)
	}
}

// result prints the kept objects as a JSON array, "[]" for none.
func (s *jsonValuesState) result() string {
	s.trim()
	var b []byte
	b = append(b, '[')
	for i, e := range s.entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.json...)
	}
	return string(append(b, ']'))
}

// appendState writes the entries: their count, then each one's position,
// object and sort values.
func (s *jsonValuesState) appendState(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s.entries)))
	for _, e := range s.entries {
		dst = appendStr(appendPos(dst, e.pos), e.json)
		for _, k := range e.keys {
			dst = appendStr(dst, k.s)
		}
	}
	return dst
}

func (s *jsonValuesState) decodeState(src []byte) error {
	r := stateReader{b: src}
	n := r.count()
	for range n {
		e := jsonEntry{pos: r.pos(), json: r.str()}
		if len(s.sort) > 0 {
			e.keys = make([]valueKey, len(s.sort))
			for i := range e.keys {
				e.keys[i] = keyOf(r.str())
			}
		}
		if r.err != nil {
			break
		}
		s.entries = append(s.entries, e)
	}
	return r.end()
}
