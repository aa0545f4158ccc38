package query

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
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
	s := strings.Trim(r.Get(m.field), " \t\n\r")
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
	w := jsonLenient{s: s, values: m.values, buf: m.buf}
	ok := w.array(1) && len(w.skipSpace()) == 0
	m.buf = w.buf
	return ok && w.found
}

// jsonLenientMaxDepth is fastjson's MaxDepth: values nested deeper do not
// parse.
const jsonLenientMaxDepth = 300

// jsonLenient walks a JSON text by the grammar of fastjson v1.6.10, which
// VictoriaLogs parses with: as JSON, but a number is any run of digits,
// '.', '-', '+', 'e' and 'E' (or inf or nan, with a sign), a string ends at
// the first '"' after an even number of backslashes, whatever it holds.
// found records whether an element of the top-level array equals one of
// values. s is the text not yet read.
type jsonLenient struct {
	s      string
	values []string
	found  bool
	buf    []byte
}

func (w *jsonLenient) skipSpace() string {
	w.s = strings.TrimLeft(w.s, " \t\n\r")
	return w.s
}

// array reads an array at w.s (its '[' first) at nesting depth (1 for
// the top level); at depth 1 it compares the elements with w.values.
func (w *jsonLenient) array(depth int) bool {
	w.s = w.s[1:]
	if s := w.skipSpace(); s != "" && s[0] == ']' {
		w.s = s[1:]
		return true
	}
	for {
		s := w.skipSpace()
		start := s
		kind, ok := w.value(depth)
		if !ok {
			return false
		}
		if depth == 1 && !w.found {
			w.found = w.elementMatches(kind, start[:len(start)-len(w.s)])
		}
		s = w.skipSpace()
		switch {
		case s == "":
			return false
		case s[0] == ',':
			w.s = s[1:]
		case s[0] == ']':
			w.s = s[1:]
			return true
		default:
			return false
		}
	}
}

// elementMatches reports whether an element of the top-level array, of
// kind ('"' string, '0' number or literal, '{' or '[') and raw text,
// equals one of w.values.
func (w *jsonLenient) elementMatches(kind byte, raw string) bool {
	switch kind {
	case '"':
		w.buf = appendUnescapeLenient(w.buf[:0], raw[1:len(raw)-1])
		return slices.Contains(w.values, unsafeString(w.buf))
	case '0':
		return slices.Contains(w.values, raw)
	}
	return false
}

// value reads one value at w.s inside a container at nesting depth and
// returns its kind: '"', '{', '[' or '0' for a number, true, false or
// null. As in fastjson, no value may be deeper than jsonLenientMaxDepth.
func (w *jsonLenient) value(depth int) (byte, bool) {
	s := w.s
	if s == "" || depth+1 > jsonLenientMaxDepth {
		return 0, false
	}
	switch s[0] {
	case '[':
		return '[', w.array(depth + 1)
	case '{':
		return '{', w.object(depth + 1)
	case '"':
		n := jsonLenientStringEnd(s[1:])
		if n < 0 {
			return 0, false
		}
		w.s = s[n+2:]
		return '"', true
	case 't', 'f':
		lit := "true"
		if s[0] == 'f' {
			lit = "false"
		}
		if !strings.HasPrefix(s, lit) {
			return 0, false
		}
		w.s = s[len(lit):]
		return '0', true
	case 'n':
		switch {
		case strings.HasPrefix(s, "null"):
			w.s = s[4:]
		case len(s) >= 3 && strings.EqualFold(s[:3], "nan"):
			w.s = s[3:]
		default:
			return 0, false
		}
		return '0', true
	}
	n := jsonLenientNumberEnd(s)
	if n < 0 {
		return 0, false
	}
	w.s = s[n:]
	return '0', true
}

// object reads an object at w.s (its '{' first) at nesting depth.
func (w *jsonLenient) object(depth int) bool {
	w.s = w.s[1:]
	if s := w.skipSpace(); s != "" && s[0] == '}' {
		w.s = s[1:]
		return true
	}
	for {
		s := w.skipSpace()
		if s == "" || s[0] != '"' {
			return false
		}
		n := jsonLenientStringEnd(s[1:])
		if n < 0 {
			return false
		}
		w.s = s[n+2:]
		if s = w.skipSpace(); s == "" || s[0] != ':' {
			return false
		}
		w.s = s[1:]
		w.skipSpace()
		if _, ok := w.value(depth); !ok {
			return false
		}
		s = w.skipSpace()
		switch {
		case s == "":
			return false
		case s[0] == ',':
			w.s = s[1:]
		case s[0] == '}':
			w.s = s[1:]
			return true
		default:
			return false
		}
	}
}

// jsonLenientStringEnd returns the index in s (what follows an opening
// quote) of the closing quote: the first '"' after an even number of
// backslashes; -1 if there is none.
func jsonLenientStringEnd(s string) int {
	off := 0
	for {
		n := strings.IndexByte(s[off:], '"')
		if n < 0 {
			return -1
		}
		n += off
		bs := 0
		for bs < n && s[n-1-bs] == '\\' {
			bs++
		}
		if bs%2 == 0 {
			return n
		}
		off = n + 1
	}
}

// jsonLenientNumberEnd returns the length of the number at the start of s
// by fastjson's rule: a run of digits, '.', '-', '+', 'e' and 'E', or
// "inf" or "nan" (any case) alone or after one sign; -1 if there is none.
func jsonLenientNumberEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E' {
			continue
		}
		if i == 0 || i == 1 && (s[0] == '-' || s[0] == '+') {
			if len(s)-i >= 3 && (strings.EqualFold(s[i:i+3], "inf") || strings.EqualFold(s[i:i+3], "nan")) {
				return i + 3
			}
			return -1
		}
		return i
	}
	return len(s)
}

// appendUnescapeLenient appends the contents of a JSON string, unescaped
// as fastjson does: \" \\ \/ \b \f \n \r \t and \uXXXX (a surrogate pair
// as one rune) are decoded; any other escape, a \u without four hex
// digits and a lone surrogate stay as written.
func appendUnescapeLenient(dst []byte, s string) []byte {
	for {
		n := strings.IndexByte(s, '\\')
		if n < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:n]...)
		s = s[n+1:]
		if s == "" {
			// Unreachable inside a string read by jsonLenientStringEnd.
			return append(dst, '\\')
		}
		c := s[0]
		s = s[1:]
		switch c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			x, ok := hex4Lenient(s)
			if !ok {
				dst = append(dst, `\u`...)
				break
			}
			hexText := s[:4]
			s = s[4:]
			if !utf16.IsSurrogate(x) {
				dst = utf8.AppendRune(dst, x)
				break
			}
			if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
				dst = append(dst, `\u`...)
				dst = append(dst, hexText...)
				break
			}
			y, ok := hex4Lenient(s[2:])
			if !ok {
				dst = append(dst, `\u`...)
				dst = append(dst, hexText...)
				break
			}
			dst = utf8.AppendRune(dst, utf16.DecodeRune(x, y))
			s = s[6:]
		default:
			dst = append(dst, '\\', c)
		}
	}
}

// hex4Lenient reads the 4 hex digits at the start of s.
func hex4Lenient(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	x, err := strconv.ParseUint(s[:4], 16, 16)
	return rune(x), err == nil
}
