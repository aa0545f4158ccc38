package segindex

import (
	"encoding/binary"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// Token blooms: per block, for each field its rows have (but _time, _stream
// and _stream_id, which queries may derive), a bloom filter of the tokens
// of its values, as VictoriaLogs keeps them: tokens are the maximal runs of
// letters, digits and '_' (IsTokenRune). A query whose filter needs a
// token in a field (a word, a phrase, an exact value) skips the blocks
// whose bloom says no value of the field holds it. A present field with no
// bloom has no tokens at all.
//
// A bloom is bloomBitsPerToken bits per distinct token (rounded up to 64)
// with bloomHashes probes by double hashing: about 0.06% false positives
// ((1-e^(-8/16))^8). With 10 bits and 7 probes (0.8%), a trace id looked
// up in 1 GiB of logs (about 1,000 blocks) decoded 8 blocks it was not in,
// most of the query's time.

const (
	bloomBitsPerToken = 16
	bloomHashes       = 8
)

// noBloom are the fields without token blooms (see above).
var noBloom = map[string]bool{"_time": true, "_stream": true, "_stream_id": true}

// HasBloom reports whether fields of this name get token blooms: a query
// may prune by tokens of no other field.
func HasBloom(field string) bool { return !noBloom[field] }

// IsTokenRune reports whether r is part of a token: a letter, a digit or
// '_'.
func IsTokenRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// asciiToken marks the ASCII token bytes.
var asciiToken = func() (t [256]bool) {
	for c := range utf8.RuneSelf {
		t[c] = IsTokenRune(rune(c))
	}
	return t
}()

// AppendTokenHashes appends the hash of each token of s to dst.
func AppendTokenHashes(dst []uint64, s string) []uint64 {
	start := -1
	for i := 0; i < len(s); {
		c := s[i]
		tok, n := false, 1
		if c < utf8.RuneSelf {
			// Fast path: ASCII.
			tok = asciiToken[c]
		} else {
			var r rune
			r, n = utf8.DecodeRuneInString(s[i:])
			tok = IsTokenRune(r)
		}
		if tok {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			dst = append(dst, TokenHash(s[start:i]))
			start = -1
		}
		i += n
	}
	if start >= 0 {
		dst = append(dst, TokenHash(s[start:]))
	}
	return dst
}

// TokenHash is the hash blooms keep of a token (xxhash64; never 0, which
// marks an empty slot of tokenSet).
func TokenHash(tok string) uint64 {
	h := xxhash.Sum64String(tok)
	if h == 0 {
		h = 1
	}
	return h
}

// appendBloom appends a bloom of the distinct hashes hs.
func appendBloom(dst []byte, hs []uint64) []byte {
	words := (len(hs)*bloomBitsPerToken + 63) / 64
	bits := make([]uint64, words)
	m := uint64(words * 64)
	for _, h := range hs {
		h1, h2 := h, h>>32|h<<32
		for i := range uint64(bloomHashes) {
			b := (h1 + i*h2) % m
			bits[b/64] |= 1 << (b % 64)
		}
	}
	for _, w := range bits {
		dst = binary.LittleEndian.AppendUint64(dst, w)
	}
	return dst
}

// BloomHas reports whether the bloom may hold the token of hash h; false
// means it does not. A bloom that is not whole 64-bit words holds nothing
// readable and answers true (never a wrong "no").
func BloomHas(bloom []byte, h uint64) bool {
	if len(bloom) == 0 || len(bloom)%8 != 0 {
		return true
	}
	m := uint64(len(bloom) * 8)
	h1, h2 := h, h>>32|h<<32
	for i := range uint64(bloomHashes) {
		b := (h1 + i*h2) % m
		if bloom[b/8]&(1<<(b%8)) == 0 {
			return false
		}
	}
	return true
}

// tokenSet collects the distinct token hashes of one field in one block:
// open addressing, no allocation once grown.
type tokenSet struct {
	slots []uint64 // 0: empty (TokenHash is never 0)
	n     int
}

func (s *tokenSet) reset() {
	if s.n > 0 {
		clear(s.slots)
		s.n = 0
	}
}

func (s *tokenSet) add(h uint64) {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case h:
			return
		case 0:
			s.slots[i] = h
			s.n++
			return
		}
	}
}

func (s *tokenSet) grow() {
	old := s.slots
	s.slots = make([]uint64, max(64, 2*len(old)))
	s.n = 0
	for _, h := range old {
		if h != 0 {
			s.add(h)
		}
	}
}

// appendTo appends the set's hashes to dst.
func (s *tokenSet) appendTo(dst []uint64) []uint64 {
	for _, h := range s.slots {
		if h != 0 {
			dst = append(dst, h)
		}
	}
	return dst
}
