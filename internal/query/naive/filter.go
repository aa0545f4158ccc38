package naive

import (
	"bytes"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spate-io/spate/internal/logstream"

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
		phrases := f.Phrases
		if f.Sub != nil {
			phrases = ev.subqueryValues(f.Sub, f.SubField)
		}
		for _, p := range phrases {
			// An empty phrase matches every row (VictoriaLogs).
			if p == "" || matchPhrase(r[f.Field], p) {
				return true
			}
		}
		return false
	case *query.FilterContainsAll:
		phrases := f.Phrases
		if f.Sub != nil {
			phrases = ev.subqueryValues(f.Sub, f.SubField)
		}
		for _, p := range phrases {
			// An empty phrase is passed over (VictoriaLogs).
			if p != "" && !matchPhrase(r[f.Field], p) {
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
		values := f.Values
		if f.Sub != nil {
			values = ev.subqueryValues(f.Sub, f.SubField)
		}
		for _, want := range values {
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
		// VictoriaLogs makes x > b a range from the next float after b,
		// and the next float after ±Inf is itself: a bound at an
		// infinity holds it.
		inf := math.IsInf(f.Num, 0)
		switch f.Op {
		case ">":
			return x > f.Num || inf && x == f.Num
		case ">=":
			return x >= f.Num
		case "<":
			return x < f.Num || inf && x == f.Num
		case "<=":
			return x <= f.Num
		}
		ev.fail(fmt.Errorf("unknown comparison %q", f.Op))
		return false
	case *query.FilterRange:
		x := mathNumber(r[f.Field])
		if math.IsNaN(x) || math.IsNaN(f.Lo) || math.IsNaN(f.Hi) {
			return false // a NaN bound holds nothing, as in VictoriaLogs
		}
		if x < f.Lo || (x == f.Lo && !f.LoInc && !math.IsInf(x, 0)) {
			return false // (a bound at an infinity holds it, as above)
		}
		if x > f.Hi || (x == f.Hi && !f.HiInc && !math.IsInf(x, 0)) {
			return false
		}
		return true

	case *query.FilterLenRange:
		n := uint64(utf8.RuneCountInString(r[f.Field]))
		return f.Min <= n && n <= f.Max

	case *query.FilterStringRange:
		v := r[f.Field]
		return f.Lo <= v && v < f.Hi

	case *query.FilterIPv4Range:
		ip, ok := parseIPv4(r[f.Field])
		return ok && f.Lo <= ip && ip <= f.Hi

	case *query.FilterIPv6Range:
		a, err := netip.ParseAddr(r[f.Field])
		if err != nil || len(r[f.Field]) > 45 {
			return false
		}
		ip := a.As16()
		return bytes.Compare(ip[:], f.Lo[:]) >= 0 && bytes.Compare(ip[:], f.Hi[:]) <= 0

	case *query.FilterFieldCompare:
		a, b := r[f.Field], r[f.Other]
		switch f.Op {
		case "eq":
			return a == b
		case "le", "lt":
			x, y := mathNumber(a), mathNumber(b)
			if !math.IsNaN(x) && !math.IsNaN(y) {
				return x < y || f.Op == "le" && x == y
			}
			return a < b || f.Op == "le" && a == b
		}
		ev.fail(fmt.Errorf("unknown field comparison %q", f.Op))
		return false

	case *query.FilterCommonCase:
		return matchCommonCase(f, r[f.Field])
	case *query.FilterJSONArrayContainsAny:
		return matchJSONArrayContainsAny(f, r[f.Field])
	case *query.FilterPatternMatch:
		return matchPatternFilter(f, r[f.Field])
	case *query.FilterDayRange:
		return matchDayRange(f, r)
	case *query.FilterWeekRange:
		return matchWeekRange(f, r)

	case *query.FilterTime:
		ns, ok := parseTime(r["_time"])
		return ok && ns >= f.Min && ns <= f.Max

	case *query.FilterStream:
		tags, ok := parseStreamText(streamOf(r))
		if !ok {
			return false
		}
		for _, group := range f.Or {
			all := true
			for _, t := range group {
				all = all && ev.matchStreamTag(t, tags[t.Name])
			}
			if all {
				return true
			}
		}
		return false
	case *query.FilterStreamID:
		id := r["_stream_id"]
		if id == "" {
			id = ev.streamID(streamOf(r))
		}
		ids := f.IDs
		if f.Sub != nil {
			ids = ev.subqueryValues(f.Sub, f.SubField)
		}
		for _, want := range ids {
			if id == want {
				return true
			}
		}
		return false
	}
	ev.fail(fmt.Errorf("unsupported filter %T (%s)", f, f))
	return false
}

// streamOf returns a row's _stream, {} when it has none.
func streamOf(r row) string {
	if s := r["_stream"]; s != "" {
		return s
	}
	return "{}"
}

// parseStreamText reads {name="value",...} (Go-quoted values) into a map;
// a repeated name keeps its first value, as a tag lookup finds it.
func parseStreamText(s string) (map[string]string, bool) {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, false
	}
	inner := s[1 : len(s)-1]
	tags := map[string]string{}
	for inner != "" {
		eq := strings.Index(inner, "=")
		if eq < 0 {
			return nil, false
		}
		name := inner[:eq]
		rest := inner[eq+1:]
		// The value is the shortest prefix that unquotes.
		end := -1
		for i := 1; i < len(rest); i++ {
			if rest[i] == '"' {
				if v, err := strconv.Unquote(rest[:i+1]); err == nil {
					if _, seen := tags[name]; !seen {
						tags[name] = v
					}
					end = i + 1
					break
				}
			}
		}
		if end < 0 {
			return nil, false
		}
		inner = rest[end:]
		if inner == "" {
			break
		}
		if inner[0] != ',' {
			return nil, false
		}
		inner = inner[1:]
		if inner == "" {
			return nil, false
		}
	}
	return tags, true
}

func (ev *evaluator) matchStreamTag(t query.StreamTagFilter, v string) bool {
	switch t.Op {
	case "=":
		return v == t.Value
	case "!=":
		return v != t.Value
	case "=~", "!~":
		re := ev.regexp("^(?:" + t.Value + ")$")
		return re != nil && re.MatchString(v) == (t.Op == "=~")
	case "in", "not_in":
		found := t.Any
		for _, w := range t.Values {
			found = found || v == w
		}
		return found == (t.Op == "in")
	}
	ev.fail(fmt.Errorf("unknown stream tag operation %q", t.Op))
	return false
}

// streamID is the _stream_id of the stream written s in the evaluator's
// tenant, or "" if s does not parse.
func (ev *evaluator) streamID(s string) string {
	tags, ok := parseStreamText(s)
	if !ok {
		return ""
	}
	var list []logstream.Tag
	for n, v := range tags {
		list = append(list, logstream.Tag{Name: n, Value: v})
	}
	logstream.Sort(list)
	return string(logstream.AppendID(nil, ev.opts.AccountID, ev.opts.ProjectID, logstream.AppendCanonical(nil, list)))
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
