package naive

import (
	"fmt"
	"math"
	"strings"

	"github.com/spate-io/spate/internal/conformance"
	"github.com/spate-io/spate/internal/query"
)

// match reports whether row r passes filter f. A missing field has the
// empty value. A bad regexp is recorded in ev.err and matches nothing.
func (ev *evaluator) match(f query.Filter, r row) bool {
	switch f := f.(type) {
	case *query.FilterAll:
		return true
	case *query.FilterAnd:
		for _, c := range f.Filters {
			if !ev.match(c, r) {
				return false
			}
		}
		return true
	case *query.FilterOr:
		for _, c := range f.Filters {
			if ev.match(c, r) {
				return true
			}
		}
		return false
	case *query.FilterNot:
		return !ev.match(f.Filter, r)

	case *query.FilterPhrase:
		v, phrase := r[f.Field], f.Phrase
		if f.CaseInsensitive {
			v, phrase = strings.ToLower(v), strings.ToLower(phrase)
		}
		return matchPhrase(v, phrase)
	case *query.FilterPrefix:
		v, prefix := r[f.Field], f.Prefix
		if f.CaseInsensitive {
			v, prefix = strings.ToLower(v), strings.ToLower(prefix)
		}
		return matchPrefix(v, prefix)
	case *query.FilterContainsAny:
		for _, p := range f.Phrases {
			if matchPhrase(r[f.Field], p) {
				return true
			}
		}
		return false
	case *query.FilterContainsAll:
		for _, p := range f.Phrases {
			if !matchPhrase(r[f.Field], p) {
				return false
			}
		}
		return true
	case *query.FilterSeq:
		return matchSequence(r[f.Field], f.Phrases)

	case *query.FilterExact:
		v := r[f.Field]
		if f.Prefix {
			return strings.HasPrefix(v, f.Value)
		}
		return equalValues(v, f.Value)
	case *query.FilterIn:
		v := r[f.Field]
		for _, want := range f.Values {
			if equalValues(v, want) {
				return true
			}
		}
		return false

	case *query.FilterRegexp:
		re := ev.regexp(f.Expr)
		return re != nil && re.MatchString(r[f.Field])

	case *query.FilterCompare:
		v := r[f.Field]
		if f.IsString {
			return compareStrings(v, f.Op, f.Value)
		}
		x := mathNumber(v)
		if math.IsNaN(x) {
			return false
		}
		switch f.Op {
		case ">":
			return x > f.Num
		case ">=":
			return x >= f.Num
		case "<":
			return x < f.Num
		case "<=":
			return x <= f.Num
		}
		ev.fail(fmt.Errorf("unknown comparison %q", f.Op))
		return false
	case *query.FilterRange:
		x := mathNumber(r[f.Field])
		if math.IsNaN(x) {
			return false
		}
		if x < f.Lo || (x == f.Lo && !f.LoInc) {
			return false
		}
		if x > f.Hi || (x == f.Hi && !f.HiInc) {
			return false
		}
		return true

	case *query.FilterTime:
		ns, ok := parseTime(r["_time"])
		return ok && ns >= f.Min && ns <= f.Max
	}
	ev.fail(fmt.Errorf("unsupported filter %T (%s)", f, f))
	return false
}

func (ev *evaluator) fail(err error) {
	if ev.err == nil {
		ev.err = err
	}
}

// equalValues is the exact-match test of `f:=v` and `f:in(...)`: equal
// text, or both plain JSON-style numbers with the same value ("500" and
// "500.0"; VictoriaLogs stores numeric columns as numbers, so their text
// form does not matter there).
func equalValues(v, want string) bool {
	if v == want {
		return true
	}
	a, okA := jsonNumber(v)
	b, okB := jsonNumber(want)
	return okA && okB && a == b
}

// jsonNumber parses s if it follows the JSON number grammar.
func jsonNumber(s string) (float64, bool) {
	if !conformance.IsJSONNumber(s) {
		return 0, false
	}
	return mustParseFloat(s), true
}

// compareStrings is a comparison against a quoted value: bytes compare, and
// the empty value takes part ("f:<\"x\"" matches a missing f), as in
// VictoriaLogs' string_range.
func compareStrings(v, op, value string) bool {
	switch op {
	case ">":
		return v > value
	case ">=":
		return v >= value
	case "<":
		return v < value
	case "<=":
		return v <= value
	}
	return false
}
