package ndjson

import (
	"bytes"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendUnescape appends the decoded form of a JSON string's contents
// (without the quotes) to dst and returns the extended buffer. Decoding
// matches encoding/json: \uXXXX surrogate pairs combine into one rune and
// a lone or mismatched surrogate becomes U+FFFD. Unlike encoding/json, raw
// invalid UTF-8 is an error, as are control bytes, unescaped quotes and bad
// escapes; on error dst is returned unchanged with a *SyntaxError whose
// Offset is relative to raw. Cost: one validating pass over raw, then one
// copy; it allocates only to grow dst.
func AppendUnescape(dst, raw []byte) ([]byte, error) {
	end, _, code := scanString(raw, 0)
	switch code {
	case errUnterminated:
		// Valid: the scan ran to the end of raw between characters.
	case errNone:
		return dst, newError(ctxUnquote, raw, end)
	default:
		return dst, newError(code, raw, end)
	}
	return appendUnescapeValid(dst, raw), nil
}

// appendUnescapeValid is AppendUnescape for contents already validated by
// scanString. It copies the runs between escapes in bulk.
func appendUnescapeValid(dst, raw []byte) []byte {
	for {
		k := bytes.IndexByte(raw, '\\')
		if k < 0 {
			return append(dst, raw...)
		}
		dst = append(dst, raw[:k]...)
		c := raw[k+1]
		raw = raw[k+2:]
		switch c {
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
			r := hex4(raw)
			raw = raw[4:]
			if utf16.IsSurrogate(r) {
				// As encoding/json: combine with a following \uXXXX if the
				// two form a valid pair, else emit U+FFFD for this half
				// and decode the next escape on its own.
				r2 := rune(-1)
				if len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u' {
					r2 = hex4(raw[2:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
					r = dec
					raw = raw[6:]
				} else {
					r = unicode.ReplacementChar
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, c)
		}
	}
}

// hex4 decodes the four hex digits at the start of b, or returns -1 if
// they are not four hex digits.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
