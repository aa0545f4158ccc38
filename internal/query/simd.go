package query

import (
	"bytes"
	"math/bits"
)

// countLinesVec counts the non-empty lines of data (see countLogLines)
// with the AVX2 kernels; only call it when useAVX2 is set. The first 64
// bytes and the tail are counted here, so the kernels can look two bytes
// back. Blocks of countVecBlock bytes are counted by countNewlinesAVX2,
// which needs fewer operations per byte but only counts newlines: a block
// where it flags a newline that may end an empty line is counted again,
// from L1, by countLinesAVX2. So files with empty lines or CRLF line ends
// take both passes over those blocks, and all other files one cheap pass.
func countLinesVec(data []byte) int64 {
	var n int64
	if len(data) >= 128 {
		k := (len(data) - 64) &^ 63
		for off := 64; off < 64+k; off += countVecBlock {
			m := min(countVecBlock, 64+k-off)
			c, flagged := countNewlinesAVX2(&data[off], m)
			if flagged {
				c = countLinesAVX2(&data[off], m)
			}
			n += int64(c)
		}
		n += countEnds(data, 0, 64) + countEnds(data, 64+k, len(data))
	} else {
		n = countEnds(data, 0, len(data))
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		last := data[bytes.LastIndexByte(data, '\n')+1:]
		if !(len(last) == 1 && last[0] == '\r') {
			n++ // an unterminated last line
		}
	}
	return n
}

// countVecBlock is the block of countLinesVec: a multiple of 64 that fits
// in L1 with room to spare, so that a second pass over a flagged block
// reads no memory.
const countVecBlock = 16 << 10

// countEnds counts the newlines in data[from:to] that end a non-empty line;
// data starts at a line start.
func countEnds(data []byte, from, to int) int64 {
	var n int64
	for i := from; i < to; i++ {
		if data[i] != '\n' {
			continue
		}
		empty := i == 0 || data[i-1] == '\n' || (data[i-1] == '\r' && (i == 1 || data[i-2] == '\n'))
		if !empty {
			n++
		}
	}
	return n
}

// probes is what probeAVX2 compares at every candidate start: three bytes
// of the literal and two of the escape probe, as offsets from the start
// and byte values. Its layout is shared with simd_amd64.s.
type probes struct {
	off [5]int
	val [5]int
}

// candFinder finds the lines the literal prefilter must parse: those that
// contain the plan's literal or its escape probe (plan.escapeProbe). It is
// read-only and safe for concurrent use; candScan holds the per-chunk
// state.
type candFinder struct {
	lit, esc []byte
	f        *finder // portable path
	pr       probes  // AVX2 path
	maxOff   int
}

func newCandFinder(lit, esc []byte) *candFinder {
	c := &candFinder{lit: lit, esc: esc, f: newFinder(lit)}
	// The three rarest bytes of the literal, at distinct offsets when it
	// has three.
	var picked [3]int
	for k := range picked {
		best := -1
		for i := range lit {
			taken := false
			for _, p := range picked[:k] {
				taken = taken || p == i
			}
			if !taken && (best < 0 || byteRank[lit[i]] > byteRank[lit[best]]) {
				best = i
			}
		}
		if best < 0 {
			best = picked[k-1] // a short literal repeats a probe
		}
		picked[k] = best
	}
	for k, i := range picked {
		c.pr.off[k], c.pr.val[k] = i, int(lit[i])
	}
	c.pr.off[3], c.pr.val[3] = 0, int(esc[0])
	c.pr.off[4], c.pr.val[4] = len(esc)-1, int(esc[len(esc)-1])
	for _, o := range c.pr.off {
		c.maxOff = max(c.maxOff, o)
	}
	return c
}

// candScan walks the candidates of one chunk in order.
type candScan struct {
	c    *candFinder
	data []byte
	// Portable path: the next occurrence of each pattern at or after the
	// last search (-1: none left; -2: not searched yet).
	nextLit, nextEsc int
	// AVX2 path: the pending block and its unvisited candidates, the next
	// block start and the last start the kernel may scan.
	base  int
	mask  uint64
	next  int
	limit int
}

func (s *candScan) reset(c *candFinder, data []byte) {
	*s = candScan{c: c, data: data, nextLit: -2, nextEsc: -2}
	s.limit = len(data) - 64 - c.maxOff
	if !useAVX2 {
		s.limit = -1
	}
}

// find returns the first candidate start at or after pos, or -1. Calls
// must not decrease pos.
func (s *candScan) find(pos int) int {
	data := s.data
	for {
		if s.mask != 0 {
			if d := pos - s.base; d >= 64 {
				s.mask = 0
			} else if d > 0 {
				s.mask &^= 1<<d - 1
			}
			for s.mask != 0 {
				q := s.base + bits.TrailingZeros64(s.mask)
				s.mask &= s.mask - 1
				if s.c.verify(data, q) {
					return q
				}
			}
		}
		s.next = max(s.next, pos)
		if s.next > s.limit {
			break
		}
		// Fast path: the kernel skips 64 starts at a time.
		s.base, s.mask = probeAVX2(&data[0], s.next, s.limit, &s.c.pr)
		s.next = s.base + 64
		if s.mask == 0 {
			s.next = s.base
			break
		}
	}
	// Slow path: past the kernel's limit, or without AVX2.
	return s.portable(max(pos, s.next))
}

// containsIn reports whether s contains the literal or the escape probe.
// It is meant for short s (the rest of a line, see recordBuilder.build),
// where the tail that candScan leaves to the portable search would be most
// of the work. With AVX2 it probes every start of s with the kernel, which
// loads up to 64+maxOff bytes past the last start: from s's own capacity
// when that has room (so s[len(s):cap(s)] must be readable and not written
// during the call), or else from a copy of s in *scratch, zero-padded.
func (c *candFinder) containsIn(s []byte, scratch *[]byte) bool {
	if !useAVX2 {
		return c.f.index(s) >= 0 || bytes.Index(s, c.esc) >= 0
	}
	if len(s) == 0 {
		return false
	}
	buf := s[:cap(s)]
	if len(buf)-len(s) < 64+c.maxOff {
		buf = append((*scratch)[:0], s...)
		buf = append(buf, make([]byte, 64+c.maxOff)...) // zero padding: allocates only to grow
		*scratch = buf
	}
	for next := 0; next < len(s); {
		base, mask := probeAVX2(&buf[0], next, len(s)-1, &c.pr)
		for ; mask != 0; mask &= mask - 1 {
			q := base + bits.TrailingZeros64(mask)
			if q >= len(s) {
				return false
			}
			if c.verify(s, q) {
				return true
			}
		}
		next = base + 64
		if base > len(s)-1 {
			break
		}
	}
	return false
}

// verify reports whether the literal or the escape probe starts at q.
func (c *candFinder) verify(data []byte, q int) bool {
	return bytes.HasPrefix(data[q:], c.lit) || bytes.HasPrefix(data[q:], c.esc)
}

// portable finds the first candidate at or after pos with the finder and
// bytes.Index, remembering each pattern's next occurrence.
func (s *candScan) portable(pos int) int {
	data := s.data
	if s.nextLit != -1 && s.nextLit < pos {
		if i := s.c.f.index(data[pos:]); i >= 0 {
			s.nextLit = pos + i
		} else {
			s.nextLit = -1
		}
	}
	if s.nextEsc != -1 && s.nextEsc < pos {
		if i := bytes.Index(data[pos:], s.c.esc); i >= 0 {
			s.nextEsc = pos + i
		} else {
			s.nextEsc = -1
		}
	}
	cand := s.nextLit
	if cand < 0 || (s.nextEsc >= 0 && s.nextEsc < cand) {
		cand = s.nextEsc
	}
	return cand
}
