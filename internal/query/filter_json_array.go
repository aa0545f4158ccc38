package query

import (
	"slices"
	"strings"

	"github.com/spate-io/spate/internal/ndjson"
)

// This file holds the filter json_array_contains_any, as VictoriaLogs
// v1.52.1 defines it (its filter_json_array_contains_any.go, which reads
// the value with github.com/valyala/fastjson v1.6.10): type, String,
// parsing and matching.

// FilterJSONArrayContainsAny matches values that are JSON arrays with an
// element equal to one of Values: a string element by its unescaped text,
// a number by its text as written, true, false and null by their names;
// objects and arrays inside are never equal. As in VictoriaLogs, the value
// (JSON whitespace trimmed) must first hold every token of one of Values
// as a substring of its raw text, so that a string spelled with \u escapes
// for a value's letters does not match it; and the array is read by
// fastjson's lenient grammar (numbers such as 1.2.3, nan or -inf, string
// escapes not checked), which the whole value must follow.
type FilterJSONArrayContainsAny struct {
	Field  string
	Values []string
}

func (*FilterJSONArrayContainsAny) isFilter() {}

func (f *FilterJSONArrayContainsAny) String() string {
	return leafField(f.Field) + "json_array_contains_any(" + joinTokens(f.Values) + ")"
}

type matchJSONArrayAny struct {
	field  string
	values []string
	tokens [][]string // the tokens of each value
	elems  []string   // scratch: the elements of the value being matched
	buf    []byte     // scratch for unescaped strings
}

func newMatchJSONArrayAny(f *FilterJSONArrayContainsAny) *matchJSONArrayAny {
	m := &matchJSONArrayAny{field: f.Field, values: f.Values}
	for _, v := range f.Values {
		m.tokens = append(m.tokens, strings.FieldsFunc(v, func(r rune) bool { return !isTokenRune(r) }))
	}
	return m
}

func (m *matchJSONArrayAny) match(r *Row) bool {
	s := trimJSONSpace(r.Get(m.field))
	if s == "" || s[0] != '[' {
		return false
	}
	if !slices.ContainsFunc(m.tokens, func(toks []string) bool {
		for _, t := range toks {
			if !strings.Contains(s, t) {
				return false
			}
		}
		return true
	}) {
		return false
	}
	// The array is read as unroll reads it (json_array.go: fastjson's
	// grammar, the whole value); a string element is compared by its
	// unescaped text, a number, true, false or null by its text as
	// written, an object or array never.
	elems, ok := appendJSONArrayElems(m.elems[:0], s)
	found := ok && m.anyElem(elems)
	clear(elems) // they alias the row's value
	m.elems = elems[:0]
	return found
}

// anyElem reports whether one of elems (raw element texts) equals one of
// m.values.
func (m *matchJSONArrayAny) anyElem(elems []string) bool {
	for _, e := range elems {
		switch e[0] {
		case '[', '{':
		case '"':
			m.buf = ndjson.AppendUnescapeLenient(m.buf[:0], e[1:len(e)-1])
			if slices.Contains(m.values, unsafeString(m.buf)) {
				return true
			}
		default:
			if slices.Contains(m.values, e) {
				return true
			}
		}
	}
	return false
}
