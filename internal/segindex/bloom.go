package segindex

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
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
// A bloom is split into blocks of 256 bits (eight 32-bit words), about
// bloomBitsPerToken bits per distinct token: a token's hash picks one
// block (by multiplying, not dividing) and sets one bit in each of its
// eight words, as Parquet's split block bloom filters do. A lookup reads
// one 32-byte block, with no division or data-dependent branch: a query
// for a trace id over 1 GiB of logs makes about a thousand such reads, one
// per block of the segments, each likely a cache miss in the mapped
// sidecar. False positives: 0.055% at 16 bits per token in
// TestBloomFalsePositives. Version 2 probed 8 bits anywhere in the bloom by
// double hashing, a division and a cache line per probe; the same test
// measured 0.34% for it, six times as many blocks decoded for nothing.

const (
	bloomBitsPerToken = 16
	bloomBlockBytes   = 32
	// segBloomBitsPerToken is for the segment's blooms (all its blocks'
	// tokens of a field: Index.SegmentBloom), which rule whole segments
	// out before their blocks' blooms are read: about 1% false positives
	// (0.7% in TestBloomFalsePositives, 0.8% in TestBlooms), each costing
	// a check of the segment's block blooms, for 5/8 of the bytes.
	segBloomBitsPerToken = 10
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
	for i := 0; i < len(s); {
		// Skip to the next token.
		if c := s[i]; c < utf8.RuneSelf {
			if !asciiToken[c] {
				i++
				continue
			}
		} else if r, n := utf8.DecodeRuneInString(s[i:]); !IsTokenRune(r) {
			i += n
			continue
		}
		// Take it: ASCII token bytes in a tight loop.
		start := i
		for i < len(s) {
			c := s[i]
			if c < utf8.RuneSelf {
				if !asciiToken[c] {
					break
				}
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			if !IsTokenRune(r) {
				break
			}
			i += n
		}
		dst = append(dst, TokenHash(s[start:i]))
	}
	return dst
}

// TokenHash is the hash blooms keep of a token (never 0, which marks an
// empty slot of tokenSet). Tokens of up to 16 bytes, nearly all of them,
// are read as two (overlapping) words and mixed with two 64x64->128-bit
// multiplications, as wyhash does for short keys; longer ones go through
// xxhash64, mixed the same way. BenchmarkTokenHashes went from 289-295 to
// 234-243 ns against xxhash64 for every token; blooms of similar short
// tokens fill as with xxhash64 (TestTokenHashSpread).
func TokenHash(tok string) uint64 {
	n := len(tok)
	var a, b uint64
	switch {
	case n > 16:
		a = xxhash.Sum64String(tok)
	case n >= 8:
		a, b = load64(tok), load64(tok[n-8:])
	case n >= 4:
		a, b = uint64(load32(tok)), uint64(load32(tok[n-4:]))
	case n > 0:
		a = uint64(tok[0])<<16 | uint64(tok[n>>1])<<8 | uint64(tok[n-1])
	}
	h := hashMix(hashMix(a^0xa0761d6478bd642f, b^0xe7037ed1a0b428db), uint64(n)^0x8ebc6af09c88c6e3)
	if h == 0 {
		h = 1
	}
	return h
}

// hashMix multiplies a and b to 128 bits and folds the halves.
func hashMix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// load64 and load32 read the first 8 and 4 bytes of s, little-endian.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func load32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// appendBloom appends a bloom of the distinct hashes hs, of about perToken
// bits per token.
func appendBloom(dst []byte, hs []uint64, perToken int) []byte {
	return appendBloomOf(dst, hs, len(hs), perToken)
}

// appendBloomOf appends a bloom of the hashes hs, which hold about n
// distinct ones (hs may repeat a hash: a bloom holds it once), of about
// perToken bits per distinct token.
func appendBloomOf(dst []byte, hs []uint64, n, perToken int) []byte {
	blocks := max(1, (n*perToken+8*bloomBlockBytes-1)/(8*bloomBlockBytes))
	off := len(dst)
	dst = slices.Grow(dst, blocks*bloomBlockBytes)[:off+blocks*bloomBlockBytes]
	bloom := dst[off:]
	clear(bloom)
	for _, h := range hs {
		blk := (*[bloomBlockBytes]byte)(bloom[bloomBlock(h, blocks):])
		m0, m1, m2, m3 := bloomMask(h)
		binary.LittleEndian.PutUint64(blk[0:], binary.LittleEndian.Uint64(blk[0:])|m0)
		binary.LittleEndian.PutUint64(blk[8:], binary.LittleEndian.Uint64(blk[8:])|m1)
		binary.LittleEndian.PutUint64(blk[16:], binary.LittleEndian.Uint64(blk[16:])|m2)
		binary.LittleEndian.PutUint64(blk[24:], binary.LittleEndian.Uint64(blk[24:])|m3)
	}
	return dst
}

// bloomBlock returns the offset of the block of a bloom of n blocks that
// holds hash h: the high 32 bits of h scaled to n.
func bloomBlock(h uint64, n int) int {
	return int((h>>32)*uint64(n)>>32) * bloomBlockBytes
}

// bloomMask returns the bits hash h sets in its block, as four 64-bit
// words: one bit in each 32-bit half, picked by the top 5 bits of the low
// 32 bits of h times a salt (Parquet's).
func bloomMask(h uint64) (m0, m1, m2, m3 uint64) {
	x := uint32(h)
	m0 = 1<<(x*0x47b6137b>>27&63) | 1<<((x*0x44974d91>>27+32)&63)
	m1 = 1<<(x*0x8824ad5b>>27&63) | 1<<((x*0xa2b7289d>>27+32)&63)
	m2 = 1<<(x*0x705495c7>>27&63) | 1<<((x*0x2df1424b>>27+32)&63)
	m3 = 1<<(x*0x9efc4947>>27&63) | 1<<((x*0x5c6bfb31>>27+32)&63)
	return
}

// BloomHas reports whether the bloom may hold the token of hash h; false
// means it does not. A bloom that is not whole blocks holds nothing
// readable and answers true (never a wrong "no"). Cost: one 32-byte read.
func BloomHas(bloom []byte, h uint64) bool {
	n := len(bloom) / bloomBlockBytes
	if n == 0 || len(bloom)%bloomBlockBytes != 0 {
		return true
	}
	blk := (*[bloomBlockBytes]byte)(bloom[bloomBlock(h, n):])
	m0, m1, m2, m3 := bloomMask(h)
	miss := ^binary.LittleEndian.Uint64(blk[0:])&m0 | ^binary.LittleEndian.Uint64(blk[8:])&m1 |
		^binary.LittleEndian.Uint64(blk[16:])&m2 | ^binary.LittleEndian.Uint64(blk[24:])&m3
	return miss == 0
}

// distinctCounter estimates how many distinct hashes it was given: a
// HyperLogLog of 4,096 registers (about 1.6% standard error), with the
// linear counting of small sets. It sizes segment blooms; 4 KiB stay in
// cache where a set of a segment's tokens would not.
type distinctCounter struct {
	reg [1 << distinctBits]uint8
}

const distinctBits = 12

func (d *distinctCounter) add(h uint64) {
	i := h >> (64 - distinctBits)
	rho := uint8(bits.LeadingZeros64(h<<distinctBits|1<<(distinctBits-1))) + 1
	if rho > d.reg[i] {
		d.reg[i] = rho
	}
}

// estimate returns the estimated count of distinct hashes added.
func (d *distinctCounter) estimate() int {
	const m = 1 << distinctBits
	sum, zeros := 0.0, 0
	for _, r := range d.reg {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	e := 0.7213 / (1 + 1.079/m) * m * m / sum
	if e <= 2.5*m && zeros > 0 {
		e = m * math.Log(float64(m)/float64(zeros))
	}
	return int(math.Ceil(e))
}

// tokenSet collects the distinct token hashes of one field in one block:
// open addressing, no allocation once grown. The hashes are kept in a list
// too, in the order added: appendTo copies it instead of scanning the
// slots, whose unpredictable branch per slot (a set's slots are sized for
// its largest block) cost 3% of BenchmarkIndexBuild.
type tokenSet struct {
	slots []uint64 // 0: empty (TokenHash is never 0)
	hs    []uint64 // the hashes in the order added
	n     int
}

func (s *tokenSet) reset() {
	if s.n > 0 {
		clear(s.slots)
		s.hs = s.hs[:0]
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
			s.hs = append(s.hs, h)
			s.n++
			return
		}
	}
}

func (s *tokenSet) grow() {
	s.slots = make([]uint64, max(64, 2*len(s.slots)))
	mask := uint64(len(s.slots) - 1)
	for _, h := range s.hs {
		i := h & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = h
	}
}

// appendTo appends the set's hashes to dst, in the order added.
func (s *tokenSet) appendTo(dst []uint64) []uint64 {
	return append(dst, s.hs...)
}
