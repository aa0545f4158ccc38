package ndjson

import (
	"slices"
	"unicode/utf8"
)

// AppendQuoted appends s to dst as a JSON string literal: '"' and '\\'
// escaped, \n \r \t by name, other control bytes as \u00XX, and invalid
// UTF-8 replaced by \ufffd (so the result is always valid JSON). Other text,
// non-ASCII included, is copied as is. It is the inverse of AppendUnescape
// for valid UTF-8.
func AppendQuoted(dst []byte, s string) []byte {
	if Plain(s) {
		// Fast path: nothing to escape, one copy.
		n := len(dst)
		if cap(dst)-n < len(s)+2 {
			dst = slices.Grow(dst, len(s)+2)
		}
		dst = dst[:n+len(s)+2]
		dst[n] = '"'
		copy(dst[n+1:], s)
		dst[len(dst)-1] = '"'
		return dst
	}
	return appendQuotedSlow(dst, s)
}

// Plain reports whether s is ASCII with no byte that needs escaping in a
// JSON string: AppendQuoted then adds only the quotes. Cost: one word per
// 8 bytes (4 to 7 bytes: two overlapping halves of one word; fewer: byte
// by byte).
func Plain(s string) bool {
	n := len(s)
	if n < 8 {
		if n >= 4 {
			return specialMask(uint64(load32(s, 0))|uint64(load32(s, n-4))<<32) == 0
		}
		for i := range n {
			if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	for i := 0; i+8 <= n; i += 8 {
		if specialMask(load64(s, i)) != 0 {
			return false
		}
	}
	// The last word, overlapping the one before: the tail.
	return n%8 == 0 || specialMask(load64(s, n-8)) == 0
}

// appendQuotedSlow is AppendQuoted for strings Plain rejects.
func appendQuotedSlow(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Fast path: 8 bytes at a time while none needs escaping and all
		// are ASCII (specialMask); the copy is done in one append.
		for i+8 <= len(s) && specialMask(load64(s, i)) == 0 {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// load32 returns the 4 bytes of s at i as a little-endian word.
func load32(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// load64 returns the 8 bytes of s at i as a little-endian word (the
// compiler makes it one load).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
