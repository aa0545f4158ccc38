package ndjson

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// This file holds the validating token scanners shared by Iter,
// AppendUnescape and AppendCompact. Each takes the input and a start index
// and returns the index just past what it scanned plus an errCode; on error
// the index is the offset of the offending byte (len(s) when s ends early).

// MaxDepth is the deepest nesting of objects and arrays a line may have,
// counting the line's own object as 1: deeper lines are rejected with a
// *SyntaxError. encoding/json allows 10000; a log line nested deeper than
// 1000 is garbage, and the smaller limit bounds the Iter's stacks.
const MaxDepth = 1000

// SWAR constants: one bit per byte of a little-endian uint64 word.
const (
	lsb = 0x0101010101010101 // lowest bit of each byte
	msb = 0x8080808080808080 // highest bit of each byte
)

// scanString validates string contents starting at s[i], just after the
// opening quote, and returns the index of the closing quote and whether
// the contents hold backslash escapes. It rejects control bytes < 0x20,
// invalid escapes and invalid UTF-8. When s ends cleanly before a closing
// quote, it returns len(s) with errUnterminated.
//
// Fast path: findSpecial skips plain ASCII eight bytes at a time; each run
// of non-ASCII text is validated by one utf8.Valid call.
func scanString(s []byte, i int) (end int, esc bool, code errCode) {
	for {
		if i = findSpecial(s, i); i >= len(s) {
			return len(s), esc, errUnterminated
		}
		switch c := s[i]; {
		case c == '"':
			return i, esc, errNone
		case c == '\\':
			// Slow path: escapes are rare in log values.
			esc = true
			if i+1 >= len(s) {
				return len(s), esc, errEOF
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(s) {
						return len(s), esc, errEOF
					}
					if !isHex(s[j]) {
						return j, esc, ctxHex
					}
				}
				i += 6
			default:
				return i + 1, esc, ctxEscape
			}
		case c < 0x20:
			return i, esc, ctxString
		default:
			// Slow path: non-ASCII text. Validate everything up to the
			// next quote, backslash or control byte in one utf8.Valid call
			// (no multi-byte sequence contains those bytes, so the split
			// is safe), rather than rune by rune.
			j := findQuoteOrControl(s, i)
			if !utf8.Valid(s[i:j]) {
				return i + invalidUTF8At(s[i:j]), esc, errUTF8
			}
			i = j
		}
	}
}

// findSpecial returns the index of the first byte at or after s[i] that is
// '"', '\\', < 0x20 or >= 0x80, or len(s) if there is none: the fast path
// of scanString, small enough to call cheaply.
func findSpecial(s []byte, i int) int {
	for ; i <= len(s)-8; i += 8 {
		if m := specialMask(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	if i >= len(s) {
		return len(s)
	}
	if len(s) < 8 {
		for ; i < len(s); i++ {
			if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
				return i
			}
		}
		return len(s)
	}
	// The last 1..7 bytes: load the last word of s and shift out the bytes
	// before s[i]. The zero bytes shifted in are flagged as control bytes,
	// so the result is at most len(s).
	w := binary.LittleEndian.Uint64(s[len(s)-8:]) >> (8 * (8 - (len(s) - i)))
	return i + bits.TrailingZeros64(specialMask(w))>>3
}

// findQuoteOrControl is findSpecial without the bytes >= 0x80: it returns
// the index of the first '"', '\\' or byte < 0x20 at or after s[i], or
// len(s).
func findQuoteOrControl(s []byte, i int) int {
	for ; i <= len(s)-8; i += 8 {
		if m := quoteOrControlMask(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	if i >= len(s) {
		return len(s)
	}
	if len(s) < 8 {
		for ; i < len(s); i++ {
			if c := s[i]; c == '"' || c == '\\' || c < 0x20 {
				return i
			}
		}
		return len(s)
	}
	w := binary.LittleEndian.Uint64(s[len(s)-8:]) >> (8 * (8 - (len(s) - i)))
	return i + bits.TrailingZeros64(quoteOrControlMask(w))>>3
}

// invalidUTF8At returns the offset of the first invalid UTF-8 sequence in
// b, or len(b).
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// quickString looks for the closing quote of the string whose contents
// start at s[i] in the next 8 bytes. It returns (index, true) if it is
// there with no other special byte before it; else (j, false), where j is
// where the scan should resume: the first special byte, i+8 if those bytes
// hold none, or i if fewer than 8 bytes are left. It is small enough to
// inline: most keys and many values of log lines are shorter than 8
// bytes, and this saves them a call (BenchmarkIter/walk: -12% instructions).
func quickString(s []byte, i int) (int, bool) {
	if i > len(s)-8 {
		return i, false
	}
	m := specialMask(binary.LittleEndian.Uint64(s[i:]))
	if m == 0 {
		return i + 8, false
	}
	j := i + bits.TrailingZeros64(m)>>3
	return j, s[j] == '"'
}

// specialMask returns a word with the high bit set in (at least) the lowest
// byte of w, in little-endian order, that is '"', '\\', < 0x20 or >= 0x80,
// and no bit below it; 0 if there is none. Bytes above the first match may
// be flagged falsely (borrows propagate upwards), so only the lowest set bit
// is meaningful.
//
// For a byte x below the first match, 0x20 <= x < 0x80 and x is neither
// '"' nor '\\', so none of the three subtractions borrows or sets the high
// bit: x^'"' - 1, x^'\\' - 1 and x - 0x20 all stay in 0x00..0x7e. At the
// first match, with no borrow from below, the corresponding term has its
// high bit set; for x >= 0x80, x^'"' and x^'\\' are both >= 0x80, and
// subtracting 1 clears the high bit of at most one of them (only 0x80
// loses it, and x cannot be 0xa2 and 0xdc at once). So the haszero trick's
// usual "&^ x" is not needed, nor a "| w" for the bytes >= 0x80.
func specialMask(w uint64) uint64 {
	return (((w ^ (lsb * '"')) - lsb) | ((w ^ (lsb * '\\')) - lsb) | (w - lsb*0x20)) & msb
}

// quoteOrControlMask is specialMask without the bytes >= 0x80. Such bytes
// cause no borrow in any of the three subtractions (x^'"', x^'\\' and x
// are all >= 0x80, hence nonzero and >= 0x20), and "&^ w" clears the high
// bits their terms set; the lowest set bit is exact as in specialMask.
func quoteOrControlMask(w uint64) uint64 {
	return (((w ^ (lsb * '"')) - lsb) | ((w ^ (lsb * '\\')) - lsb) | (w - lsb*0x20)) &^ w & msb
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isSpace reports whether c is JSON whitespace.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// skipSpace returns the index of the first non-whitespace byte at or after
// s[i], or len(s). Callers inline the common "no whitespace" check
// (s[i] > ' ') before calling it.
func skipSpace(s []byte, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// scanNumber validates the JSON number starting at s[i], which is '-' or a
// digit, and returns the index just past it. The grammar is RFC 8259's:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? ; what follows the number
// is checked by the caller.
func scanNumber(s []byte, i int) (int, errCode) {
	if s[i] == '-' {
		i++
		if i >= len(s) {
			return i, errEOF
		}
	}
	switch c := s[i]; {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		i = digitsEnd(s, i+1)
	default:
		return i, ctxNumber
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) {
			return i, errEOF
		}
		if !isDigit(s[i]) {
			return i, ctxFraction
		}
		i = digitsEnd(s, i)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) {
			return i, errEOF
		}
		if !isDigit(s[i]) {
			return i, ctxExponent
		}
		i = digitsEnd(s, i)
	}
	return i, errNone
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digitsEnd returns the index of the first byte at or after s[i] that is
// not an ASCII digit, or len(s). It tests eight bytes per step, so a run of
// up to eight digits (most numbers in logs) costs one step and no
// data-dependent loop exit.
func digitsEnd(s []byte, i int) int {
	for ; i <= len(s)-8; i += 8 {
		if m := nonDigitMask(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// nonDigitMask returns a word with the high bit set in (at least) the
// lowest byte of w, in little-endian order, that is not an ASCII digit,
// and no bit below it; 0 if all eight bytes are digits.
//
// For a byte x, x+0x50 has its high bit set (without carrying out of the
// byte) exactly when '0' <= x <= 0xaf, and x+0x46 exactly when '9' < x <=
// 0xb9; so the mask flags x < '0', x > '9' up to 0xb9 and, as the first
// sum wraps, x >= 0xb0. A digit's sums never carry; a flagged byte's may
// carry into the byte above, so, as in specialMask, only the lowest set
// bit is meaningful.
func nonDigitMask(w uint64) uint64 {
	return (^(w + lsb*0x50) | (w + lsb*0x46)) & msb
}

// scanLiteral validates that s[i:] starts with lit ("true", "false" or
// "null"; s[i] == lit[0] is known) and returns the index just past it.
func scanLiteral(s []byte, i int, lit string) (int, errCode) {
	// Fast path: the whole literal is there.
	if i+len(lit) <= len(s) && string(s[i:i+len(lit)]) == lit {
		return i + len(lit), errNone
	}
	for j := 1; j < len(lit); j++ {
		if i+j >= len(s) {
			return len(s), errEOF
		}
		if s[i+j] != lit[j] {
			return i + j, ctxLiteral
		}
	}
	return i + len(lit), errNone // unreachable: the fast path matched
}

// scanScalar validates the string, number or literal starting at s[i]
// (s[i] is its first byte, not whitespace) and returns the index just past
// it, plus for strings whether it has escapes. Containers are ctxValue
// errors: callers handle them first.
func scanScalar(s []byte, i int) (end int, esc bool, code errCode) {
	switch c := s[i]; {
	case c == '"':
		end, esc, code = scanString(s, i+1)
		switch code {
		case errNone:
			return end + 1, esc, code
		case errUnterminated:
			return end, esc, errEOF
		}
		return end, esc, code
	case c == '-' || isDigit(c):
		end, code = scanNumber(s, i)
	case c == 't':
		end, code = scanLiteral(s, i, "true")
	case c == 'f':
		end, code = scanLiteral(s, i, "false")
	case c == 'n':
		end, code = scanLiteral(s, i, "null")
	default:
		return i, false, ctxValue
	}
	return end, false, code
}

// States of skipContainer.
const (
	skValue        = iota // expecting a value (after ':' or an array's ',')
	skValueOrClose        // just after '['
	skKey                 // expecting a key (after an object's ',')
	skKeyOrClose          // just after '{'
	skAfter               // just after a value
)

// skipContainer validates the array or object starting at s[i] ('[' or
// '{'), including everything nested in it, and returns the index just past
// its closing bracket and whether it holds whitespace outside strings (so
// that its compact form differs from its text). It may open at most room
// containers, counting its own, before failing with errDepth. stack is
// scratch space for the open containers; the (possibly grown) stack is
// returned for reuse. Cost: linear in the container's length, no recursion.
func skipContainer(s []byte, i int, stack []byte, room int) (end int, ws bool, _ []byte, code errCode) {
	stack = stack[:0]
	st := skValue
	for {
		if i < len(s) && s[i] <= ' ' {
			j := i
			i = skipSpace(s, i)
			ws = ws || i != j
		}
		if i >= len(s) {
			return len(s), ws, stack, errEOF
		}
		c := s[i]
		switch st {
		case skAfter:
			top := stack[len(stack)-1]
			switch {
			case c == ',':
				i++
				st = skValue
				if top == '{' {
					st = skKey
				}
				continue
			case c == top+2: // ']' is '['+2 and '}' is '{'+2
				i++
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return i, ws, stack, errNone
				}
				continue
			case top == '[':
				return i, ws, stack, ctxArrNext
			default:
				return i, ws, stack, ctxObjNext
			}
		case skKeyOrClose, skKey:
			if c == '}' && st == skKeyOrClose {
				i++
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return i, ws, stack, errNone
				}
				st = skAfter
				continue
			}
			if c != '"' {
				return i, ws, stack, ctxKey
			}
			var code errCode
			if i, _, code = scanScalar(s, i); code != errNone {
				return i, ws, stack, code
			}
			if i < len(s) && s[i] <= ' ' {
				j := i
				i = skipSpace(s, i)
				ws = ws || i != j
			}
			if i >= len(s) {
				return len(s), ws, stack, errEOF
			}
			if s[i] != ':' {
				return i, ws, stack, ctxColon
			}
			i++
			st = skValue
		default: // skValue, skValueOrClose
			switch {
			case c == ']' && st == skValueOrClose:
				i++
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return i, ws, stack, errNone
				}
				st = skAfter
			case c == '[' || c == '{':
				if len(stack) >= room {
					return i, ws, stack, errDepth
				}
				stack = append(stack, c)
				i++
				st = skValueOrClose
				if c == '{' {
					st = skKeyOrClose
				}
			default:
				var code errCode
				if i, _, code = scanScalar(s, i); code != errNone {
					return i, ws, stack, code
				}
				st = skAfter
			}
		}
	}
}
