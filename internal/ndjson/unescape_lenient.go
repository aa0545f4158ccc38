package ndjson

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendUnescapeLenient appends the decoded contents of a JSON string to dst,
// best effort as fastjson decodes: a bad or unknown escape is kept as
// written, a surrogate half not followed by a \uXXXX escape is kept as
// written, a surrogate half followed by a \uXXXX escape that does not
// complete a pair becomes U+FFFD (consuming that escape), and a final lone
// backslash is dropped.
func AppendUnescapeLenient(dst []byte, s string) []byte {
	for {
		n := strings.IndexByte(s, '\\')
		if n < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:n]...)
		if n == len(s)-1 {
			return dst
		}
		c := s[n+1]
		s = s[n+2:]
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
			x, ok := hex4String(s)
			if !ok {
				dst = append(dst, `\u`...)
				break
			}
			xs := s[:4]
			s = s[4:]
			if !utf16.IsSurrogate(x) {
				dst = utf8.AppendRune(dst, x)
				break
			}
			if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
				dst = append(append(dst, `\u`...), xs...)
				break
			}
			x2, ok := hex4String(s[2:])
			if !ok {
				dst = append(append(dst, `\u`...), xs...)
				break
			}
			dst = utf8.AppendRune(dst, utf16.DecodeRune(x, x2))
			s = s[6:]
		default:
			dst = append(dst, '\\', c)
		}
	}
}

// hex4String decodes the four hex digits s starts with.
func hex4String(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for i := range 4 {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
