package query

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds the filters contains_common_case and equals_common_case,
// as VictoriaLogs v1.52.1 defines them (its filter_contains_common_case.go
// and filter_equals_common_case.go): type, String, parsing and matching.

// FilterCommonCase matches the "common case" spellings of its phrases: each
// phrase with any of its upper-case letters made lower case, and each of
// those spellings all in upper case. contains_common_case("Error") is
// contains_any("ERROR", "Error", "error"), equals_common_case("Error") is
// in("ERROR", "Error", "error"). An empty phrase makes contains_common_case
// match every row. Values holds those spellings, sorted and
// without duplicates; Phrases the arguments as written, for String().
type FilterCommonCase struct {
	Field   string
	Phrases []string
	Equals  bool // equals_common_case; contains_common_case otherwise
	Values  []string
}

func (*FilterCommonCase) isFilter() {}

func (f *FilterCommonCase) String() string {
	name := "contains_common_case("
	if f.Equals {
		name = "equals_common_case("
	}
	return leafField(f.Field) + name + joinTokens(f.Phrases) + ")"
}

// maxCommonCaseUpper is the most upper-case letters a phrase of a common
// case filter may have: each doubles the spellings.
const maxCommonCaseUpper = 10

// newFilterCommonCase builds the filter, or returns an error message for a
// phrase with too many upper-case letters.
func newFilterCommonCase(field string, phrases []string, equals bool) (*FilterCommonCase, string) {
	f := &FilterCommonCase{Field: field, Phrases: phrases, Equals: equals}
	seen := map[string]struct{}{}
	for _, ph := range phrases {
		var upper []int // byte offsets of the upper-case runes
		for i, r := range ph {
			if unicode.IsUpper(r) {
				upper = append(upper, i)
			}
		}
		if len(upper) > maxCommonCaseUpper {
			return nil, fmt.Sprintf("too many common_case combinations for %q: it has %d upper-case letters, at most %d are allowed", ph, len(upper), maxCommonCaseUpper)
		}
		var b []byte
		for mask := 0; mask < 1<<len(upper); mask++ {
			// Bit j of mask lowers the j-th upper-case rune.
			b = b[:0]
			last := 0
			for j, off := range upper {
				if mask&(1<<j) == 0 {
					continue
				}
				r, size := utf8.DecodeRuneInString(ph[off:])
				b = append(b, ph[last:off]...)
				b = utf8.AppendRune(b, unicode.ToLower(r))
				last = off + size
			}
			b = append(b, ph[last:]...)
			seen[string(b)] = struct{}{}
			seen[strings.ToUpper(string(b))] = struct{}{}
		}
	}
	for s := range seen {
		f.Values = append(f.Values, s)
	}
	slices.Sort(f.Values)
	return f, ""
}

// matchCommonCaseContains is contains_common_case: one of the spellings as
// a phrase of the value (token boundaries as for contains_any).
type matchCommonCaseContains struct {
	field string
	ps    []*phrase
	// lower holds the phrases lower-cased when they are all ASCII; a value
	// whose lower-cased text holds none of them cannot match. nil without
	// that prefilter.
	lower []string
	buf   []byte
}

func newMatchCommonCase(f *FilterCommonCase) matcher {
	if f.Equals {
		m := &matchIn{field: f.Field, values: make(map[string]struct{}, len(f.Values))}
		for _, v := range f.Values {
			m.values[v] = struct{}{}
		}
		return m
	}
	if slices.Contains(f.Values, "") {
		// An empty phrase matches every row, as VictoriaLogs' contains_any
		// has it over stored logs (even those without the field).
		return matchAll{}
	}
	m := &matchCommonCaseContains{field: f.Field, ps: newPhrases(f.Values)}
	for _, ph := range f.Phrases {
		if !isASCII(ph) {
			m.lower = nil
			break
		}
		// Every spelling of an ASCII phrase lower-cases to the phrase
		// lower-cased, and so does the same text inside any value.
		m.lower = append(m.lower, strings.ToLower(ph))
	}
	return m
}

func (m *matchCommonCaseContains) match(r *Row) bool {
	v := r.Get(m.field)
	if m.lower != nil {
		// Fast path: rule out values without any phrase in any case.
		m.buf = appendLower(m.buf[:0], v)
		lv := unsafeString(m.buf)
		if !slices.ContainsFunc(m.lower, func(l string) bool { return strings.Contains(lv, l) }) {
			return false
		}
	}
	for _, p := range m.ps {
		if p.matches(v) {
			return true
		}
	}
	return false
}

// isASCII reports whether s has only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
