package naive

import (
	"strings"
)

// jsonArrayElements returns the elements of a JSON array value as
// VictoriaLogs (valyala/fastjson) reads it, or nil if v is not one: each
// string element unescaped best-effort (an escape it cannot read stays as
// written), any other element as its text with the white space outside
// strings removed. fastjson takes any run of "0-9.eE+-", and inf or nan with
// an optional sign, for a number, and does not check string escapes.
func jsonArrayElements(v string) []string {
	elems, ok := jsonArrayCompact(v)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		if e[0] == '"' {
			out = append(out, unescapeBestEffort(e[1:len(e)-1]))
		} else {
			out = append(out, e)
		}
	}
	return out
}

// jsonArrayCompact returns the compact text of each element of the JSON
// array v (JSON white space around it allowed) by fastjson's grammar: a
// string with its quotes and escapes as written, any other element
// without the white space outside its strings. ok is false if v is not
// one array.
func jsonArrayCompact(v string) (elems []string, ok bool) {
	v = strings.Trim(v, " \t\n\r")
	if !strings.HasPrefix(v, "[") {
		return nil, false
	}
	var l lenient
	elems, rest, ok := l.array(v[1:], 1)
	if !ok || strings.Trim(rest, " \t\n\r") != "" {
		return nil, false
	}
	return elems, true
}

// lenient is a recursive reader of fastjson's grammar that returns each
// value's compact text.
type lenient struct{}

func ws(s string) string { return strings.TrimLeft(s, " \t\n\r") }

// value reads one value; depth counts the containers around it plus one.
func (l lenient) value(s string, depth int) (compact, rest string, ok bool) {
	if s == "" || depth+1 > 300 {
		return "", s, false
	}
	depth++
	switch {
	case s[0] == '[':
		elems, rest, ok := l.array(s[1:], depth)
		return "[" + strings.Join(elems, ",") + "]", rest, ok
	case s[0] == '{':
		return l.object(s[1:], depth)
	case s[0] == '"':
		end := closingQuote(s[1:])
		if end < 0 {
			return "", s, false
		}
		return s[:end+2], s[end+2:], true
	case strings.HasPrefix(s, "true"):
		return "true", s[4:], true
	case strings.HasPrefix(s, "false"):
		return "false", s[5:], true
	case strings.HasPrefix(s, "null"):
		return "null", s[4:], true
	case s[0] == 't' || s[0] == 'f':
		return "", s, false
	case s[0] == 'n':
		if len(s) >= 3 && strings.EqualFold(s[:3], "nan") {
			return s[:3], s[3:], true
		}
		return "", s, false
	}
	n := 0
	for n < len(s) && strings.IndexByte("0123456789.eE+-", s[n]) >= 0 {
		n++
	}
	if n == 0 || n == 1 && (s[0] == '-' || s[0] == '+') {
		if w := s[n:]; len(w) >= 3 && (strings.EqualFold(w[:3], "inf") || strings.EqualFold(w[:3], "nan")) {
			return s[:n+3], s[n+3:], true
		}
		if n < len(s) {
			return "", s, false
		}
	}
	return s[:n], s[n:], true
}

// closingQuote returns the index in s of the '"' that closes a string
// whose contents start s: the first one after an even run of backslashes.
func closingQuote(s string) int {
	backslashes := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"' && backslashes%2 == 0:
			return i
		case s[i] == '\\':
			backslashes++
		default:
			backslashes = 0
		}
	}
	return -1
}

func (l lenient) array(s string, depth int) (elems []string, rest string, ok bool) {
	s = ws(s)
	if strings.HasPrefix(s, "]") {
		return []string{}, s[1:], true
	}
	for {
		var e string
		if e, s, ok = l.value(ws(s), depth); !ok {
			return nil, s, false
		}
		elems = append(elems, e)
		s = ws(s)
		switch {
		case strings.HasPrefix(s, ","):
			s = s[1:]
		case strings.HasPrefix(s, "]"):
			return elems, s[1:], true
		default:
			return nil, s, false
		}
	}
}

func (l lenient) object(s string, depth int) (compact, rest string, ok bool) {
	s = ws(s)
	if strings.HasPrefix(s, "}") {
		return "{}", s[1:], true
	}
	var parts []string
	for {
		s = ws(s)
		if !strings.HasPrefix(s, `"`) {
			return "", s, false
		}
		end := closingQuote(s[1:])
		if end < 0 {
			return "", s, false
		}
		key := s[:end+2]
		s = ws(s[end+2:])
		if !strings.HasPrefix(s, ":") {
			return "", s, false
		}
		var v string
		if v, s, ok = l.value(ws(s[1:]), depth); !ok {
			return "", s, false
		}
		parts = append(parts, key+":"+v)
		s = ws(s)
		switch {
		case strings.HasPrefix(s, ","):
			s = s[1:]
		case strings.HasPrefix(s, "}"):
			return "{" + strings.Join(parts, ",") + "}", s[1:], true
		default:
			return "", s, false
		}
	}
}
