package query

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// finder is the portable literal search of the prefilter (candFinder uses
// it where the AVX2 kernel is not available). It searches for one literal
// in byte slices faster than bytes.Index when the literal starts with a
// common byte (bytes.Index then stops at every 'e' of "error"): it scans 8
// bytes at a time for two of the literal's bytes at their offsets, chosen to
// be rare in log text, and verifies the candidates. Measured in memmem_timing_test.go. A finder is read-only and
// safe for concurrent use.
type finder struct {
	lit    []byte
	i1, i2 int // offsets of the two probe bytes, i1 < i2
	b1, b2 byte
	rep1   uint64 // b1 repeated in every byte
	rep2   uint64
	short  bool // the literal is too short to pair: use bytes.Index
	// jump: the rarest byte is rare enough that bytes.IndexByte (SIMD)
	// jumping from one occurrence to the next beats the pair scan.
	jump bool
	jb   byte // the rarest byte
	jo   int  // its offset in the literal
}

// byteRank orders bytes from common to rare in JSON log text (higher is
// rarer); letters follow English frequency, then digits and JSON syntax are
// treated as common.
var byteRank = func() [256]int {
	var r [256]int
	for i := range r {
		r[i] = 200 // bytes not listed are rare
	}
	// Most common first, as measured on generated NDJSON logs (which use
	// English words, ids and numbers, like real ones).
	common := `"et:0s,1ao2ir .cpud653h4nl/-7m8_9bfTvygw{}kPHGZEM();xWSKzLAOqCUXNFjRID\\VJ=+B?&[]`
	for i := 0; i < len(common); i++ {
		r[common[i]] = i
	}
	return r
}()

func newFinder(lit []byte) *finder {
	f := &finder{lit: lit}
	if len(lit) < 2 {
		f.short = true
		return f
	}
	// Pick the two rarest bytes at distinct offsets.
	best1, best2 := -1, -1
	for i := range lit {
		switch {
		case best1 < 0 || byteRank[lit[i]] > byteRank[lit[best1]]:
			best2 = best1
			best1 = i
		case best2 < 0 || byteRank[lit[i]] > byteRank[lit[best2]]:
			best2 = i
		}
	}
	f.jb, f.jo = lit[best1], best1
	f.jump = byteRank[f.jb] >= jumpRank
	if best1 > best2 {
		best1, best2 = best2, best1
	}
	f.i1, f.i2 = best1, best2
	f.b1, f.b2 = lit[best1], lit[best2]
	f.rep1 = 0x0101010101010101 * uint64(f.b1)
	f.rep2 = 0x0101010101010101 * uint64(f.b2)
	return f
}

const (
	lo7 = 0x0101010101010101
	hi7 = 0x8080808080808080
)

// jumpRank is the byteRank from which a byte is rare enough (about 1.5% of
// log text or less) for the IndexByte jump; measured in memmem_timing_test.go.
var jumpRank = byteRank['m']

// index returns the index of the first occurrence of the literal in s, or
// -1.
func (f *finder) index(s []byte) int {
	if f.short || len(s) < len(f.lit)+16 {
		return bytes.Index(s, f.lit)
	}
	if f.jump {
		return f.indexJump(s)
	}
	n := len(f.lit)
	last := len(s) - n // last valid start
	i := 0
	// Fast path: 16 candidate starts per step, 8 per word. A byte of m has
	// its high bit set where both probe bytes may match (the borrow of the
	// subtraction can flag a byte above a real match too; every candidate is
	// verified).
	s1, s2 := s[f.i1:], s[f.i2:]
	for i+16 <= len(s2) && i <= last {
		a1 := binary.LittleEndian.Uint64(s1[i:i+8]) ^ f.rep1
		a2 := binary.LittleEndian.Uint64(s2[i:i+8]) ^ f.rep2
		c1 := binary.LittleEndian.Uint64(s1[i+8:i+16]) ^ f.rep1
		c2 := binary.LittleEndian.Uint64(s2[i+8:i+16]) ^ f.rep2
		ma := ((a1 - lo7) &^ a1) & ((a2 - lo7) &^ a2) & hi7
		mc := ((c1 - lo7) &^ c1) & ((c2 - lo7) &^ c2) & hi7
		if ma|mc == 0 {
			i += 16
			continue
		}
		for _, w := range [2]struct {
			m   uint64
			off int
		}{{ma, i}, {mc, i + 8}} {
			m := w.m
			for m != 0 {
				p := w.off + bits.TrailingZeros64(m)/8
				if p > last {
					return -1
				}
				if bytes.Equal(s[p:p+n], f.lit) {
					return p
				}
				m &= m - 1
			}
		}
		i += 16
	}
	// Slow path: the tail.
	if i > last {
		return -1
	}
	if j := bytes.Index(s[i:], f.lit); j >= 0 {
		return i + j
	}
	return -1
}

// indexJump finds the literal by jumping between occurrences of its rarest
// byte with bytes.IndexByte and verifying each.
func (f *finder) indexJump(s []byte) int {
	n := len(f.lit)
	i := f.jo // next position where the rare byte may be
	for i < len(s) {
		j := bytes.IndexByte(s[i:], f.jb)
		if j < 0 {
			return -1
		}
		p := i + j - f.jo // candidate start
		if p+n > len(s) {
			return -1
		}
		if bytes.Equal(s[p:p+n], f.lit) {
			return p
		}
		i += j + 1
	}
	return -1
}
