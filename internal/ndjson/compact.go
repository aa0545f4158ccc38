package ndjson

import "bytes"

// AppendCompact appends the compact form of the JSON value raw to dst, like
// encoding/json.Compact: whitespace outside strings is removed (including
// around raw), strings are copied byte for byte. raw must be exactly one
// valid JSON value of any kind, with valid UTF-8 strings, nested at most
// MaxDepth deep; otherwise dst is returned unchanged with a *SyntaxError
// whose Offset is relative to raw. Cost: one validating pass and one copy;
// it allocates only to grow dst (and a scratch stack for values nested
// deeper than 32).
func AppendCompact(dst, raw []byte) ([]byte, error) {
	i := skipSpace(raw, 0)
	if i >= len(raw) {
		return dst, newError(errEOF, raw, len(raw))
	}
	var (
		end   int
		code  errCode
		space [32]byte
	)
	if c := raw[i]; c == '[' || c == '{' {
		end, _, _, code = skipContainer(raw, i, space[:0], MaxDepth)
	} else {
		end, _, code = scanScalar(raw, i)
	}
	if code != errNone {
		return dst, newError(code, raw, end)
	}
	if j := skipSpace(raw, end); j < len(raw) {
		return dst, newError(ctxTrailing, raw, j)
	}
	return appendCompactValid(dst, raw[i:end]), nil
}

// appendCompactValid is AppendCompact for a value already validated.
func appendCompactValid(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '"':
			end := i + 1 + StringEnd(raw[i+1:])
			dst = append(dst, raw[i:end+1]...)
			i = end + 1
		case isSpace(c):
			i++
		default:
			j := i + 1
			for j < len(raw) && raw[j] != '"' && !isSpace(raw[j]) {
				j++
			}
			dst = append(dst, raw[i:j]...)
			i = j
		}
	}
	return dst
}

// StringEnd returns the index of the closing quote of string contents s
// (what follows an opening quote): the first '"' preceded by an even
// number of backslashes (in valid JSON, backslashes only start escapes);
// len(s) if there is none.
func StringEnd(s []byte) int {
	off := 0
	for {
		k := bytes.IndexByte(s[off:], '"')
		if k < 0 {
			return len(s) // unreachable for a whole valid string
		}
		q := off + k
		n := 0
		for n < q && s[q-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q
		}
		off = q + 1
	}
}
