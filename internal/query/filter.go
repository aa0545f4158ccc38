package query

import (
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spate-io/spate/internal/timeparse"
)

// matcher is a compiled filter. Matchers hold scratch buffers, so each worker
// compiles its own; match must not keep r.
type matcher interface {
	match(r *Row) bool
}

// compileFilter turns a filter tree into matchers.
func compileFilter(f Filter) (matcher, error) {
	switch f := f.(type) {
	case nil, *FilterAll:
		return matchAll{}, nil
	case *FilterAnd:
		ms, err := compileFilters(f.Filters)
		if err != nil {
			return nil, err
		}
		return &matchAnd{ms: ms}, nil
	case *FilterOr:
		ms, err := compileFilters(f.Filters)
		if err != nil {
			return nil, err
		}
		return &matchOr{ms: ms}, nil
	case *FilterNot:
		m, err := compileFilter(f.Filter)
		if err != nil {
			return nil, err
		}
		return &matchNot{m: m}, nil
	case *FilterPhrase:
		if f.Phrase == "" {
			return &matchEmpty{field: f.Field}, nil
		}
		return &matchPhrase{field: f.Field, p: newPhrase(f.Phrase, false, f.CaseInsensitive)}, nil
	case *FilterPrefix:
		if f.Prefix == "" {
			return &matchNonEmpty{field: f.Field}, nil
		}
		return &matchPhrase{field: f.Field, p: newPhrase(f.Prefix, true, f.CaseInsensitive)}, nil
	case *FilterExact:
		if f.Value == "" && !f.Prefix {
			return &matchEmpty{field: f.Field}, nil
		}
		return &matchExact{field: f.Field, value: f.Value, prefix: f.Prefix}, nil
	case *FilterIn:
		if f.Sub != nil {
			return nil, errUnresolved("in()", f.Sub)
		}
		m := &matchIn{field: f.Field, values: make(map[string]struct{}, len(f.Values))}
		for _, v := range f.Values {
			m.values[v] = struct{}{}
		}
		return m, nil
	case *FilterContainsAny:
		if f.Sub != nil {
			return nil, errUnresolved("contains_any()", f.Sub)
		}
		if slices.Contains(f.Phrases, "") {
			// As in VictoriaLogs: an empty phrase makes contains_any()
			// match every row, those without the field too.
			return matchAll{}, nil
		}
		return &matchContains{field: f.Field, ps: newPhrases(f.Phrases), any: true}, nil
	case *FilterContainsAll:
		if f.Sub != nil {
			return nil, errUnresolved("contains_all()", f.Sub)
		}
		// As in VictoriaLogs: contains_all() passes over empty phrases
		// (contains_all("") matches every row).
		phrases := slices.DeleteFunc(slices.Clone(f.Phrases), func(p string) bool { return p == "" })
		return &matchContains{field: f.Field, ps: newPhrases(phrases)}, nil
	case *FilterSeq:
		return &matchSeq{field: f.Field, ps: newPhrases(f.Phrases)}, nil
	case *FilterRegexp:
		re, err := regexp.Compile(f.Expr)
		if err != nil {
			return nil, fmt.Errorf("cannot compile regexp %q: %w", f.Expr, err)
		}
		m := &matchRegexp{field: f.Field, re: re}
		if lit, ok := regexpLiteral(f.Expr); ok && lit == f.Expr {
			// Fast path: the expression is a plain literal.
			m.re, m.lit = nil, lit
		}
		return m, nil
	case *FilterCompare:
		return &matchCompare{f: *f}, nil
	case *FilterRange:
		return &matchRange{f: *f}, nil
	case *FilterLenRange:
		return &matchLenRange{f: *f}, nil
	case *FilterStringRange:
		return &matchStringRange{f: *f}, nil
	case *FilterIPv4Range:
		return &matchIPv4Range{f: *f}, nil
	case *FilterIPv6Range:
		return &matchIPv6Range{f: *f}, nil
	case *FilterFieldCompare:
		return &matchFieldCompare{f: *f}, nil
	case *FilterCommonCase:
		return newMatchCommonCase(f), nil
	case *FilterJSONArrayContainsAny:
		return newMatchJSONArrayAny(f), nil
	case *FilterPatternMatch:
		return &matchPatternMatch{field: f.Field, m: newPatternMatcher(f.Pattern, f.Func)}, nil
	case *FilterDayRange:
		return &matchDayRange{f: *f}, nil
	case *FilterWeekRange:
		return &matchWeekRange{f: *f}, nil
	case *FilterTime:
		return &matchTime{min: f.Min, max: f.Max}, nil
	case *FilterStream:
		return newMatchStream(f)
	case *FilterStreamID:
		if f.Sub != nil {
			return nil, errUnresolved("_stream_id:in()", f.Sub)
		}
		return &matchStreamID{ids: f.IDs, account: f.account, project: f.project, cache: map[string]string{}}, nil
	}
	return nil, fmt.Errorf("BUG: unknown filter %T", f)
}

func compileFilters(fs []Filter) ([]matcher, error) {
	ms := make([]matcher, len(fs))
	for i, f := range fs {
		m, err := compileFilter(f)
		if err != nil {
			return nil, err
		}
		ms[i] = m
	}
	return ms, nil
}

type matchAll struct{}

func (matchAll) match(*Row) bool { return true }

type matchAnd struct{ ms []matcher }

func (m *matchAnd) match(r *Row) bool {
	for _, c := range m.ms {
		if !c.match(r) {
			return false
		}
	}
	return true
}

type matchOr struct{ ms []matcher }

func (m *matchOr) match(r *Row) bool {
	for _, c := range m.ms {
		if c.match(r) {
			return true
		}
	}
	return false
}

type matchNot struct{ m matcher }

func (m *matchNot) match(r *Row) bool { return !m.m.match(r) }

type matchEmpty struct{ field string }

func (m *matchEmpty) match(r *Row) bool { return r.Get(m.field) == "" }

type matchNonEmpty struct{ field string }

func (m *matchNonEmpty) match(r *Row) bool { return r.Get(m.field) != "" }

// phrase finds a word, a phrase or a token prefix inside a value with
// token-boundary checks, optionally ignoring case.
type phrase struct {
	text       string // lower-cased when fold is set
	prefix     bool
	fold       bool
	needBefore bool // the text starts with a token rune
	needAfter  bool // the text ends with a token rune (never for a prefix)
	buf        []byte
}

func newPhrase(s string, prefix, fold bool) *phrase {
	p := &phrase{text: s, prefix: prefix, fold: fold}
	if fold {
		p.text = string(appendLower(nil, s))
	}
	first, _ := utf8.DecodeRuneInString(p.text)
	last, _ := utf8.DecodeLastRuneInString(p.text)
	p.needBefore = isTokenRune(first)
	p.needAfter = !prefix && isTokenRune(last)
	return p
}

func newPhrases(ss []string) []*phrase {
	ps := make([]*phrase, len(ss))
	for i, s := range ss {
		ps[i] = newPhrase(s, false, false)
	}
	return ps
}

// isTokenRune reports whether r is part of a word: a letter, a digit or '_'.
func isTokenRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// appendLower appends s lower-cased (Unicode simple folding to lower case).
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			// Slow path: non-ASCII text.
			for _, r := range s[i:] {
				dst = utf8.AppendRune(dst, unicode.ToLower(r))
			}
			return dst
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// find returns the end of the first match of p in v at or after from, or -1.
func (p *phrase) find(v string, from int) int {
	for from <= len(v) {
		i := strings.Index(v[from:], p.text)
		if i < 0 {
			return -1
		}
		start := from + i
		end := start + len(p.text)
		ok := true
		if p.needBefore && start > 0 {
			r, _ := utf8.DecodeLastRuneInString(v[:start])
			ok = !isTokenRune(r)
		}
		if ok && p.needAfter && end < len(v) {
			r, _ := utf8.DecodeRuneInString(v[end:])
			ok = !isTokenRune(r)
		}
		if ok {
			return end
		}
		_, size := utf8.DecodeRuneInString(v[start:])
		from = start + size
	}
	return -1
}

// prepare returns v lower-cased if p ignores case.
func (p *phrase) prepare(v string) string {
	if !p.fold {
		return v
	}
	p.buf = appendLower(p.buf[:0], v)
	return unsafeString(p.buf)
}

func (p *phrase) matches(v string) bool {
	if v == "" {
		return false
	}
	return p.find(p.prepare(v), 0) >= 0
}

type matchPhrase struct {
	field string
	p     *phrase
}

func (m *matchPhrase) match(r *Row) bool { return m.p.matches(r.Get(m.field)) }

type matchExact struct {
	field  string
	value  string
	prefix bool
}

func (m *matchExact) match(r *Row) bool {
	v := r.Get(m.field)
	if m.prefix {
		return strings.HasPrefix(v, m.value)
	}
	return v == m.value
}

type matchIn struct {
	field  string
	values map[string]struct{}
}

func (m *matchIn) match(r *Row) bool {
	_, ok := m.values[r.Get(m.field)]
	return ok
}

type matchContains struct {
	field string
	ps    []*phrase
	any   bool
}

func (m *matchContains) match(r *Row) bool {
	v := r.Get(m.field)
	for _, p := range m.ps {
		if p.matches(v) == m.any {
			return m.any
		}
	}
	return !m.any
}

type matchSeq struct {
	field string
	ps    []*phrase
}

func (m *matchSeq) match(r *Row) bool {
	v := r.Get(m.field)
	if v == "" {
		return false
	}
	pos := 0
	for _, p := range m.ps {
		if p.text == "" {
			continue
		}
		end := p.find(v, pos)
		if end < 0 {
			return false
		}
		pos = end
	}
	return true
}

type matchRegexp struct {
	field string
	re    *regexp.Regexp
	lit   string
}

func (m *matchRegexp) match(r *Row) bool {
	v := r.Get(m.field)
	if m.re == nil {
		return strings.Contains(v, m.lit)
	}
	return m.re.MatchString(v)
}

type matchCompare struct{ f FilterCompare }

func (m *matchCompare) match(r *Row) bool {
	v := r.Get(m.f.Field)
	var c int
	if m.f.IsString {
		c = strings.Compare(v, m.f.Value)
	} else {
		n, ok := mathNumber(v)
		if !ok || math.IsNaN(m.f.Num) {
			return false // a NaN bound holds nothing, as in VictoriaLogs
		}
		switch {
		case n < m.f.Num:
			c = -1
		case n > m.f.Num:
			c = 1
		}
	}
	// An exclusive bound at an infinity holds that infinity, as in
	// VictoriaLogs (its next float after ±Inf is itself).
	atInf := !m.f.IsString && c == 0 && math.IsInf(m.f.Num, 0)
	switch m.f.Op {
	case ">":
		return c > 0 || atInf
	case ">=":
		return c >= 0
	case "<":
		return c < 0 || atInf
	case "<=":
		return c <= 0
	}
	return false
}

type matchRange struct{ f FilterRange }

func (m *matchRange) match(r *Row) bool {
	n, ok := mathNumber(r.Get(m.f.Field))
	if !ok || math.IsNaN(m.f.Lo) || math.IsNaN(m.f.Hi) {
		return false
	}
	// An exclusive bound at an infinity holds it (see matchCompare).
	if n < m.f.Lo || (n == m.f.Lo && !m.f.LoInc && !math.IsInf(n, 0)) {
		return false
	}
	if n > m.f.Hi || (n == m.f.Hi && !m.f.HiInc && !math.IsInf(n, 0)) {
		return false
	}
	return true
}

type matchTime struct{ min, max int64 }

func (m *matchTime) match(r *Row) bool {
	t, ok := rowTime(r)
	return ok && t >= m.min && t <= m.max
}

// rowTime returns the row's _time in Unix nanoseconds.
func rowTime(r *Row) (int64, bool) {
	if r.HasTime {
		return r.Time, true
	}
	return timeparse.Parse(r.Get("_time"))
}

// regexpLiteral returns the longest literal that every match of expr must
// contain, if there is a case-sensitive one.
func regexpLiteral(expr string) (string, bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return "", false
	}
	re = re.Simplify()
	lit := func(r *syntax.Regexp) (string, bool) {
		if r.Op == syntax.OpLiteral && r.Flags&syntax.FoldCase == 0 {
			return string(r.Rune), true
		}
		return "", false
	}
	if s, ok := lit(re); ok {
		return s, true
	}
	if re.Op == syntax.OpConcat || re.Op == syntax.OpCapture {
		subs := re.Sub
		if re.Op == syntax.OpCapture {
			if s, ok := lit(re.Sub[0]); ok {
				return s, true
			}
			return "", false
		}
		best := ""
		for _, s := range subs {
			if l, ok := lit(s); ok && len(l) > len(best) {
				best = l
			}
		}
		return best, best != ""
	}
	return "", false
}
