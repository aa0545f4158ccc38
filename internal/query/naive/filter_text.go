package naive

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/spate-io/spate/internal/query"
)

// This file is the naive side of contains_common_case,
// equals_common_case, json_array_contains_any, pattern_match* and
// _time:day_range / week_range: written again from VictoriaLogs v1.52.1's
// definitions, without the engine's code.

// commonCaseSpellings returns every spelling of phrase with some of its
// upper-case letters lower-cased, and each of them in upper case.
func commonCaseSpellings(phrase string) []string {
	spellings := []string{""}
	for _, r := range phrase {
		var next []string
		for _, s := range spellings {
			next = append(next, s+string(r))
			if unicode.IsUpper(r) {
				next = append(next, s+string(unicode.ToLower(r)))
			}
		}
		spellings = next
	}
	for _, s := range spellings {
		spellings = append(spellings, strings.ToUpper(s))
	}
	return spellings
}

func matchCommonCase(f *query.FilterCommonCase, v string) bool {
	for _, ph := range f.Phrases {
		for _, s := range commonCaseSpellings(ph) {
			switch {
			case f.Equals && v == s:
				return true
			case !f.Equals && s == "":
				return true // an empty phrase matches every row
			case !f.Equals && phrasePos(v, s) >= 0:
				return true
			}
		}
	}
	return false
}

// unescapeBestEffort decodes JSON escapes, keeping the ones it cannot
// read as written (fastjson's unescapeStringBestEffort).
func unescapeBestEffort(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case '"', '\\', '/':
			b.WriteByte(c)
		case 'b', 'f', 'n', 'r', 't':
			b.WriteByte(map[byte]byte{'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[c])
		case 'u':
			hex := func(at int) (rune, bool) {
				if at+4 > len(s) {
					return 0, false
				}
				x, err := strconv.ParseUint(s[at:at+4], 16, 16)
				return rune(x), err == nil
			}
			x, ok := hex(i + 1)
			switch {
			case !ok:
				b.WriteString(`\u`)
			case !utf16.IsSurrogate(x):
				b.WriteRune(x)
				i += 4
			default:
				y, ok := hex(i + 7)
				if i+6 < len(s) && s[i+5] == '\\' && s[i+6] == 'u' && ok {
					b.WriteRune(utf16.DecodeRune(x, y))
					i += 10
				} else {
					b.WriteString(`\u` + s[i+1:i+5])
					i += 4
				}
			}
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}

func matchJSONArrayContainsAny(f *query.FilterJSONArrayContainsAny, v string) bool {
	raw := strings.Trim(v, " \t\r\n")
	// The raw text must hold every token of one of the values first.
	tokensIn := false
	for _, want := range f.Values {
		all := true
		for _, tok := range strings.FieldsFunc(want, func(r rune) bool { return !isTokenRune(r) }) {
			all = all && strings.Contains(raw, tok)
		}
		tokensIn = tokensIn || all
	}
	if !tokensIn {
		return false
	}
	elems, ok := jsonArrayCompact(raw)
	if !ok {
		return false
	}
	for _, e := range elems {
		switch e[0] {
		case '[', '{':
			continue // an object or array equals no value
		case '"':
			e = unescapeBestEffort(e[1 : len(e)-1])
		}
		if slices.Contains(f.Values, e) {
			return true
		}
	}
	return false
}

// patternPart is a piece of a pattern: text, or a placeholder such as
// "<N>".
type patternPart struct {
	text string
	hole string
}

// splitPattern cuts a pattern into texts and placeholders, as
// VictoriaLogs reads it: each '<' up to the next '>' is a placeholder if
// it names one, else text.
func splitPattern(p string) []patternPart {
	holes := map[string]bool{"<N>": true, "<UUID>": true, "<IP4>": true, "<TIME>": true, "<DATE>": true, "<DATETIME>": true, "<W>": true}
	parts := []patternPart{{}}
	for p != "" {
		i := strings.Index(p, "<")
		j := -1
		if i >= 0 {
			j = strings.Index(p[i:], ">")
		}
		if i < 0 || j < 0 {
			parts[len(parts)-1].text += p
			break
		}
		name := p[i : i+j+1]
		parts[len(parts)-1].text += p[:i]
		p = p[i+j+1:]
		if holes[name] {
			parts[len(parts)-1].hole = name
			parts = append(parts, patternPart{})
		} else {
			parts[len(parts)-1].text += name
		}
	}
	return parts
}

// naiveNum returns the end of a number at i in s, or -1.
func naiveNum(s string, i int) int {
	j := i
	for j < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
		j++
	}
	num := s[i:j]
	if num == "" {
		return -1
	}
	if strings.ContainsAny(num, "abcdefABCDEF") && (len(num) < 4 || len(num)%2 != 0) {
		return -1
	}
	if j < len(s) && isASCIIWord(s[j]) && strings.IndexByte("_TZsmhun", s[j]) < 0 {
		return -1
	}
	return j
}

func isASCIIWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// naiveNums reads count numbers joined by sep.
func naiveNums(s string, i, count int, sep byte) int {
	for k := 0; k < count; k++ {
		if k > 0 {
			if i >= len(s) || s[i] != sep {
				return -1
			}
			i++
		}
		if i = naiveNum(s, i); i < 0 {
			return -1
		}
	}
	return i
}

// naiveHole returns the end of placeholder h at i, or -1.
func naiveHole(h, s string, i int) int {
	timeEnd := func(i int) int {
		e := naiveNums(s, i, 3, ':')
		if e >= 0 && e < len(s) && (s[e] == '.' || s[e] == ',') {
			if e2 := naiveNum(s, e+1); e2 >= 0 {
				return e2
			}
		}
		return e
	}
	dateEnd := func(i int) int {
		if e := naiveNums(s, i, 3, '-'); e >= 0 {
			return e
		}
		return naiveNums(s, i, 3, '/')
	}
	switch h {
	case "<N>":
		return naiveNum(s, i)
	case "<UUID>":
		return naiveNums(s, i, 5, '-')
	case "<IP4>":
		return naiveNums(s, i, 4, '.')
	case "<TIME>":
		return timeEnd(i)
	case "<DATE>":
		return dateEnd(i)
	case "<DATETIME>":
		e := dateEnd(i)
		if e < 0 || e >= len(s) || (s[e] != 'T' && s[e] != ' ') {
			return -1
		}
		e = timeEnd(e + 1)
		if e < 0 || e == len(s) {
			return e
		}
		if s[e] == 'Z' {
			return e + 1
		}
		if s[e] == '+' || s[e] == '-' {
			if z := naiveNums(s, e+1, 2, ':'); z >= 0 {
				return z
			}
		}
		return e
	case "<W>":
		if i >= len(s) {
			return -1
		}
		switch s[i] {
		case '"', '`':
			q, err := strconv.QuotedPrefix(s[i:])
			if err != nil {
				return -1
			}
			return i + len(q)
		case '\'':
			rest := s[i+1:]
			for !strings.HasPrefix(rest, "'") {
				_, _, tail, err := strconv.UnquoteChar(rest, '\'')
				if err != nil {
					return -1
				}
				rest = tail
			}
			return len(s) - len(rest) + 1
		}
		j := i
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if !isTokenRune(r) {
				break
			}
			j += size
		}
		return j
	}
	return -1
}

// patternEndAt matches parts at i, each placeholder taking what it can,
// and returns the end, or -1.
func patternEndAt(parts []patternPart, s string, i int) int {
	for _, p := range parts {
		if !strings.HasPrefix(s[i:], p.text) {
			return -1
		}
		i += len(p.text)
		if p.hole != "" {
			if i = naiveHole(p.hole, s, i); i < 0 {
				return -1
			}
		}
	}
	return i
}

// patternCanStart reports whether a match may start at i: where the first
// text is, or, for a leading placeholder, at a word rune (<W>) or at a
// hex digit not glued to a word byte but for _ T X x v s h m.
func patternCanStart(parts []patternPart, s string, i int) bool {
	switch {
	case parts[0].text != "":
		return strings.HasPrefix(s[i:], parts[0].text)
	case parts[0].hole == "":
		return i == 0
	case parts[0].hole == "<W>":
		r, _ := utf8.DecodeRuneInString(s[i:])
		return i < len(s) && isTokenRune(r)
	}
	return i < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[i]) >= 0 &&
		(i == 0 || !isASCIIWord(s[i-1]) || strings.IndexByte("_TXxvshm", s[i-1]) >= 0)
}

func matchPatternFilter(f *query.FilterPatternMatch, v string) bool {
	parts := splitPattern(f.Pattern)
	switch f.Func {
	case "pattern_match_full":
		return patternEndAt(parts, v, 0) == len(v)
	case "pattern_match_prefix":
		return patternEndAt(parts, v, 0) >= 0
	}
	// A match is tried at each start in turn; the first that ends is the
	// one (pattern_match_suffix goes on until one ends at the end).
	if len(parts) == 1 && parts[0].text == "" {
		return true
	}
	suffix := f.Func == "pattern_match_suffix"
	if suffix && !strings.HasSuffix(v, parts[len(parts)-1].text) {
		return false
	}
	for i := 0; i <= len(v); i++ {
		if !patternCanStart(parts, v, i) {
			continue
		}
		if end := patternEndAt(parts, v, i); end >= 0 && (!suffix || end == len(v)) {
			return true
		}
	}
	return false
}

// matchDayRange and matchWeekRange shift the time by the offset and read
// its time of day or weekday in UTC.
func matchDayRange(f *query.FilterDayRange, r row) bool {
	if f.Start > f.End {
		return false
	}
	if f.Start == 0 && f.End == 24*int64(time.Hour)-1 {
		return true
	}
	ns, ok := parseTime(r["_time"])
	if !ok {
		return false
	}
	t := time.Unix(0, ns).Add(time.Duration(f.Offset)).UTC()
	if t.Year() < 1970 {
		// The remainder of a negative time is negative: only midnight.
		return f.Start == 0 && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0
	}
	d := int64(t.Hour())*int64(time.Hour) + int64(t.Minute())*int64(time.Minute) + int64(t.Second())*int64(time.Second) + int64(t.Nanosecond())
	return d >= f.Start && d <= f.End
}

func matchWeekRange(f *query.FilterWeekRange, r row) bool {
	if f.Start > f.End {
		return false
	}
	if f.Start == time.Sunday && f.End == time.Saturday {
		return true
	}
	ns, ok := parseTime(r["_time"])
	if !ok {
		return false
	}
	d := time.Unix(0, ns).Add(time.Duration(f.Offset)).UTC().Weekday()
	return d >= f.Start && d <= f.End
}
