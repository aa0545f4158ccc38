package query

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds the filters pattern_match, pattern_match_full,
// pattern_match_prefix and pattern_match_suffix, as VictoriaLogs v1.52.1
// defines them (its filter_pattern_match.go and pattern_matcher.go): type,
// String, parsing and matching.

// FilterPatternMatch matches values holding Pattern, a text whose
// placeholders stand for what collapse_nums replaces:
//
//	<N>         a number: decimal digits, or hex digits (an even number,
//	            at least 4), not glued to a letter or digit around it
//	            but for a few unit-like letters (_ T Z s m h u n after it,
//	            _ T X x v s h m before it)
//	<UUID>      <N>-<N>-<N>-<N>-<N>
//	<IP4>       <N>.<N>.<N>.<N>
//	<TIME>      <N>:<N>:<N>, optionally with .<N> or ,<N>
//	<DATE>      <N>-<N>-<N> or <N>/<N>/<N>
//	<DATETIME>  <DATE>T<TIME> or <DATE> <TIME>, optionally with Z, -<N>:<N>
//	            or +<N>:<N>
//	<W>         a word (letters, digits, '_'; possibly none) or a quoted
//	            string ("..." and `...` as Go reads them, '...' too)
//
// Any other <...> is text. Func names the variant: pattern_match finds the
// pattern anywhere in the value, pattern_match_full matches the whole
// value, _prefix its start and _suffix its end. Each placeholder takes as
// much as it can, without going back: "<N>1" matches nothing.
type FilterPatternMatch struct {
	Field   string
	Func    string
	Pattern string
}

func (*FilterPatternMatch) isFilter() {}

func (f *FilterPatternMatch) String() string {
	return leafField(f.Field) + f.Func + "(" + quoteToken(f.Pattern) + ")"
}

// patternHole is a placeholder of a pattern.
type patternHole uint8

const (
	holeNum patternHole = iota + 1
	holeUUID
	holeIP4
	holeTime
	holeDate
	holeDateTime
	holeWord
)

var patternHoles = map[string]patternHole{
	"<N>": holeNum, "<UUID>": holeUUID, "<IP4>": holeIP4, "<TIME>": holeTime,
	"<DATE>": holeDate, "<DATETIME>": holeDateTime, "<W>": holeWord,
}

// patternMatcher is a parsed pattern: texts[i] comes before holes[i], and
// one more text ends it (len(texts) == len(holes)+1).
type patternMatcher struct {
	texts []string
	holes []patternHole
	mode  string // "", "full", "prefix" or "suffix"
}

// newPatternMatcher parses pattern for the filter function fn.
func newPatternMatcher(pattern, fn string) *patternMatcher {
	m := &patternMatcher{mode: strings.TrimPrefix(strings.TrimPrefix(fn, "pattern_match"), "_")}
	text := ""
	for s := pattern; s != ""; {
		open := strings.IndexByte(s, '<')
		if open < 0 {
			text += s
			break
		}
		gt := strings.IndexByte(s[open:], '>')
		if gt < 0 {
			text += s
			break
		}
		name := s[open : open+gt+1]
		text += s[:open]
		s = s[open+gt+1:]
		h, ok := patternHoles[name]
		if !ok {
			text += name // not a placeholder: text
			continue
		}
		m.texts = append(m.texts, text)
		m.holes = append(m.holes, h)
		text = ""
	}
	m.texts = append(m.texts, text)
	return m
}

// longestText returns the longest text of the pattern: every value it
// matches holds it.
func (m *patternMatcher) longestText() string {
	best := ""
	for _, t := range m.texts {
		if len(t) > len(best) {
			best = t
		}
	}
	return best
}

func (m *patternMatcher) matches(s string) bool {
	switch m.mode {
	case "full":
		return m.endAt(s, 0) == len(s)
	case "prefix":
		return m.endAt(s, 0) >= 0
	case "suffix":
		if len(m.texts) == 1 && m.texts[0] == "" {
			return true
		}
		if !strings.HasSuffix(s, m.texts[len(m.texts)-1]) {
			return false
		}
		for from := 0; ; {
			start, end := m.find(s, from)
			if end < 0 {
				return false
			}
			if end == len(s) {
				return true
			}
			from = start + 1
		}
	}
	_, end := m.find(s, 0)
	return end >= 0
}

// find returns where the first match at or after from starts and ends;
// -1, -1 if there is none. A match starts where the first text is found,
// or, when the pattern starts with a placeholder, where a word (<W>) or a
// number (the others) may start.
func (m *patternMatcher) find(s string, from int) (start, end int) {
	for {
		start = m.startFrom(s, from)
		if start < 0 {
			return -1, -1
		}
		if end = m.endAt(s, start); end >= 0 {
			return start, end
		}
		from = start + 1
	}
}

func (m *patternMatcher) startFrom(s string, from int) int {
	switch {
	case m.texts[0] != "":
		n := strings.Index(s[from:], m.texts[0])
		if n < 0 {
			return -1
		}
		return from + n
	case len(m.holes) == 0:
		return 0
	case m.holes[0] == holeWord:
		for off, r := range s[from:] {
			if isTokenRune(r) {
				return from + off
			}
		}
		return -1
	}
	return numStart(s, from)
}

// endAt returns the end of the pattern matched at start, or -1.
func (m *patternMatcher) endAt(s string, start int) int {
	off := start
	for i, t := range m.texts {
		if !strings.HasPrefix(s[off:], t) {
			return -1
		}
		off += len(t)
		if i == len(m.holes) {
			break
		}
		if off = holeEnd(m.holes[i], s, off); off < 0 {
			return -1
		}
	}
	return off
}

// holeEnd returns the end of placeholder h matched at start, or -1.
func holeEnd(h patternHole, s string, start int) int {
	switch h {
	case holeNum:
		return numHoleEnd(s, start)
	case holeUUID:
		return numsEnd(s, start, 5, '-')
	case holeIP4:
		return numsEnd(s, start, 4, '.')
	case holeTime:
		return timeHoleEnd(s, start)
	case holeDate:
		return dateHoleEnd(s, start)
	case holeDateTime:
		end := dateHoleEnd(s, start)
		if end < 0 || end >= len(s) || s[end] != 'T' && s[end] != ' ' {
			return -1
		}
		if end = timeHoleEnd(s, end+1); end < 0 || end >= len(s) {
			return end
		}
		switch s[end] {
		case 'Z':
			return end + 1
		case '-', '+':
			if n := numsEnd(s, end+1, 2, ':'); n >= 0 {
				return n
			}
		}
		return end
	case holeWord:
		return wordHoleEnd(s, start)
	}
	return -1
}

func timeHoleEnd(s string, start int) int {
	end := numsEnd(s, start, 3, ':')
	if end >= 0 && end < len(s) && (s[end] == '.' || s[end] == ',') {
		if n := numHoleEnd(s, end+1); n >= 0 {
			return n
		}
	}
	return end
}

func dateHoleEnd(s string, start int) int {
	if end := numsEnd(s, start, 3, '-'); end >= 0 {
		return end
	}
	return numsEnd(s, start, 3, '/')
}

// numsEnd returns the end of n numbers separated by sep at start, or -1.
func numsEnd(s string, start, n int, sep byte) int {
	end := numHoleEnd(s, start)
	for ; n > 1 && end >= 0; n-- {
		if end >= len(s) || s[end] != sep {
			return -1
		}
		end = numHoleEnd(s, end+1)
	}
	return end
}

// numHoleEnd returns the end of the number <N> at start, or -1: the run of
// hex digits there, if it can be a number (see FilterPatternMatch) and
// what follows is no letter or digit but for _ T Z s m h u n.
func numHoleEnd(s string, start int) int {
	end := start
	hex := false
	for end < len(s) && isHexDigit(s[end]) {
		hex = hex || s[end] > '9'
		end++
	}
	switch n := end - start; {
	case n == 0:
		return -1
	case hex && (n < 4 || n%2 == 1):
		return -1
	case end < len(s) && isTokenByte(s[end]) && !strings.ContainsRune("_TZsmhun", rune(s[end])):
		return -1
	}
	return end
}

// numStart returns the first offset at or after from where a number may
// start: a hex digit at the start of s or after a byte that is not ASCII
// letter, digit or '_', or after one of _ T X x v s h m; -1 if none.
func numStart(s string, from int) int {
	for i := from; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			continue
		}
		if i == 0 || !isTokenByte(s[i-1]) || strings.IndexByte("_TXxvshm", s[i-1]) >= 0 {
			return i
		}
	}
	return -1
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isTokenByte reports whether c is an ASCII letter, digit or '_'.
func isTokenByte(c byte) bool {
	return c < utf8.RuneSelf && isTokenRune(rune(c))
}

// wordHoleEnd returns the end of <W> at start, or -1: a quoted string, or
// the run of letters, digits and '_' there (maybe empty).
func wordHoleEnd(s string, start int) int {
	if start >= len(s) {
		return -1
	}
	switch s[start] {
	case '"', '`':
		q, err := strconv.QuotedPrefix(s[start:])
		if err != nil {
			return -1
		}
		return start + len(q)
	case '\'':
		rest := s[start+1:]
		for !strings.HasPrefix(rest, "'") {
			_, _, tail, err := strconv.UnquoteChar(rest, '\'')
			if err != nil {
				return -1
			}
			rest = tail
		}
		return len(s) - len(rest) + 1
	}
	for off, r := range s[start:] {
		if !isTokenRune(r) {
			return start + off
		}
	}
	return len(s)
}

type matchPatternMatch struct {
	field string
	m     *patternMatcher
}

func (m *matchPatternMatch) match(r *Row) bool { return m.m.matches(r.Get(m.field)) }
