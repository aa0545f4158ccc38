package query

import (
	"strings"

	"github.com/spate-io/spate/internal/ndjson"
)

// This file reads JSON arrays held in a field's value as VictoriaLogs
// v1.52.1 reads them (with valyala/fastjson) for unroll, json_array_len and
// json_array_concat. fastjson is lenient where encoding/json is not, and
// VictoriaLogs inherits that: a number is any run of the bytes
// "0-9.eE+-" (so "+1" and "1.2.3" are numbers), as are inf and nan in any
// case with an optional sign; escapes inside strings are not checked, and
// unknown ones are kept as written. Nesting deeper than 300 levels is not
// an array.

// jsonMaxDepth is fastjson's nesting limit.
const jsonMaxDepth = 300

// appendJSONArrayElems appends to dst the raw text of each element of the
// JSON array s (surrounding JSON white space allowed), and reports whether
// s is one. The texts alias s. A value that is not an array leaves dst as
// it is and gives false.
func appendJSONArrayElems(dst []string, s string) ([]string, bool) {
	s = trimJSONSpace(s)
	if s == "" || s[0] != '[' {
		return dst, false
	}
	tail, ok := skipJSONValue(s, 0)
	if !ok || trimJSONSpace(tail) != "" {
		return dst, false
	}
	s = skipJSONSpace(s[1:])
	if s[0] == ']' {
		return dst, true
	}
	for {
		tail, _ := skipJSONValue(s, 1)
		dst = append(dst, s[:len(s)-len(tail)])
		s = skipJSONSpace(tail)
		if s[0] == ']' {
			return dst, true
		}
		s = skipJSONSpace(s[1:]) // the ','
	}
}

// appendJSONElemValue appends the value VictoriaLogs gives an array
// element of raw text elem (from appendJSONArrayElems): a string's
// contents, unescaped as far as its escapes are valid; any other element's
// text without the white space outside its strings (null is "null").
func appendJSONElemValue(dst []byte, elem string) []byte {
	if elem[0] == '"' {
		return ndjson.AppendUnescapeLenient(dst, elem[1:len(elem)-1])
	}
	inStr, esc := false, false
	for i := 0; i < len(elem); i++ {
		c := elem[i]
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && isJSONSpace(c):
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// jsonElemValue is appendJSONElemValue for the common elements that need no
// change: a string without escapes, or another value without white space,
// as a substring of elem. ok is false when elem must be rewritten.
func jsonElemValue(elem string) (v string, ok bool) {
	if elem[0] == '"' {
		v = elem[1 : len(elem)-1]
		return v, strings.IndexByte(v, '\\') < 0
	}
	for i := 0; i < len(elem); i++ {
		if isJSONSpace(elem[i]) {
			return "", false
		}
	}
	return elem, true
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func trimJSONSpace(s string) string {
	for len(s) > 0 && isJSONSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isJSONSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func skipJSONSpace(s string) string {
	for len(s) > 0 && isJSONSpace(s[0]) {
		s = s[1:]
	}
	return s
}

// skipJSONValue skips the JSON value at the start of s, at nesting depth
// depth, and returns what follows it; ok is false if s does not start with
// a value fastjson accepts.
func skipJSONValue(s string, depth int) (tail string, ok bool) {
	if s == "" {
		return s, false
	}
	depth++
	if depth > jsonMaxDepth {
		return s, false
	}
	switch s[0] {
	case '[', '{':
		return skipJSONContainer(s, depth)
	case '"':
		return skipJSONString(s[1:])
	case 't':
		return skipJSONWord(s, "true")
	case 'f':
		return skipJSONWord(s, "false")
	case 'n':
		if strings.HasPrefix(s, "null") {
			return s[4:], true
		}
		if len(s) >= 3 && strings.EqualFold(s[:3], "nan") {
			return s[3:], true
		}
		return s, false
	}
	return skipJSONNumber(s)
}

func skipJSONWord(s, w string) (string, bool) {
	if strings.HasPrefix(s, w) {
		return s[len(w):], true
	}
	return s, false
}

// skipJSONString skips a string's contents and closing quote: it ends at
// the first '"' after an even number of backslashes.
func skipJSONString(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return s[i+1:], true
		}
	}
	return s, false
}

// skipJSONNumber skips what fastjson takes for a number.
func skipJSONNumber(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' || c == '.' || c == '-' || c == 'e' || c == 'E' || c == '+' {
			continue
		}
		if i == 0 || i == 1 && (s[0] == '-' || s[0] == '+') {
			if len(s)-i >= 3 && (strings.EqualFold(s[i:i+3], "inf") || strings.EqualFold(s[i:i+3], "nan")) {
				return s[i+3:], true
			}
			return s, false
		}
		return s[i:], true
	}
	return "", true
}

// skipJSONContainer skips an array or an object; s starts with '[' or '{'.
func skipJSONContainer(s string, depth int) (string, bool) {
	obj := s[0] == '{'
	end := byte(']')
	if obj {
		end = '}'
	}
	s = skipJSONSpace(s[1:])
	if s != "" && s[0] == end {
		return s[1:], true
	}
	for {
		var ok bool
		s = skipJSONSpace(s)
		if obj {
			if s == "" || s[0] != '"' {
				return s, false
			}
			if s, ok = skipJSONString(s[1:]); !ok {
				return s, false
			}
			s = skipJSONSpace(s)
			if s == "" || s[0] != ':' {
				return s, false
			}
			s = skipJSONSpace(s[1:])
		}
		if s, ok = skipJSONValue(s, depth); !ok {
			return s, false
		}
		s = skipJSONSpace(s)
		switch {
		case s == "":
			return s, false
		case s[0] == ',':
			s = s[1:]
		case s[0] == end:
			return s[1:], true
		default:
			return s, false
		}
	}
}
