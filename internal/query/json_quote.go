package query

// This file writes JSON strings the way VictoriaLogs v1.52.1 writes the
// JSON it builds inside values (valyala/quicktemplate's AppendJSONString):
// the arrays of values, uniq_values, split and unpack_words, the objects
// of row_min, row_max, row_any and pack_json, pack_logfmt's quoted values,
// format's <q:field>, and the key a sort without fields orders rows by.

// jsonSpecialVL marks the bytes appendJSONStringVL escapes.
var jsonSpecialVL = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'], t['<'], t['\''] = true, true, true, true
	return t
}()

// appendJSONStringVL appends s as a quoted JSON string the way
// VictoriaLogs writes it: '"', '\\', \n, \r, \t, \b, \f by name, '<' and
// '\” as \u003c and \u0027, other control bytes as \u00XX; everything
// else, invalid UTF-8 too, as it is.
func appendJSONStringVL(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !jsonSpecialVL[c] {
			continue
		}
		dst = append(dst, s[start:i]...)
		start = i + 1
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		case '\b':
			dst = append(dst, `\b`...)
		case '\f':
			dst = append(dst, `\f`...)
		default: // '<', '\'' and the other control bytes
			const hex = "0123456789abcdef"
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendJSONFieldVL appends "name":"value" quoted as appendJSONStringVL
// quotes.
func appendJSONFieldVL(dst []byte, name, value string) []byte {
	dst = appendJSONStringVL(dst, name)
	dst = append(dst, ':')
	return appendJSONStringVL(dst, value)
}
