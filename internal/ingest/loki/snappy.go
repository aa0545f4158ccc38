package loki

import "encoding/binary"

// This file decodes snappy's block format as github.com/golang/snappy
// (VictoriaLogs' decoder) and klauspost's snappy.DecodeStrict do: the
// same blocks are refused (a copy whose offset is 0, which S2 reads as
// "repeat the last offset", reaches before the start, or runs past the
// declared length; a literal past the input; a length that the elements
// do not add up to exactly) and the same bytes come out of the others.
// It is faster than DecodeStrict on logs, whose elements are mostly
// short, because it copies literals and copies of up to 16 bytes (with an
// offset of at least 8) as two words, and longer overlapping copies a
// word at a time, without a call to memmove: this writes up to 15 bytes
// past an element's end while there is room before dst's end, which the
// elements after it overwrite (a block whose elements stop short of its
// length is refused anyway).

// decodeSnappyBlock decodes the elements of a snappy block (src, past
// its length varint) into dst, whose length is the block's declared
// length, and reports whether they were valid and filled dst exactly.
// Cost: one pass over src and dst, no allocation.
func decodeSnappyBlock(dst, src []byte) bool {
	var d, s int
	for s < len(src) {
		tag := src[s]
		var offset, length int
		switch tag & 3 {
		case 0: // literal
			x := int(tag >> 2)
			switch {
			case x < 60:
				s++
			case x == 60:
				s += 2
				if s > len(src) {
					return false
				}
				x = int(src[s-1])
			case x == 61:
				s += 3
				if s > len(src) {
					return false
				}
				x = int(src[s-2]) | int(src[s-1])<<8
			case x == 62:
				s += 4
				if s > len(src) {
					return false
				}
				x = int(src[s-3]) | int(src[s-2])<<8 | int(src[s-1])<<16
			default:
				s += 5
				if s > len(src) {
					return false
				}
				x = int(src[s-4]) | int(src[s-3])<<8 | int(src[s-2])<<16 | int(src[s-1])<<24
			}
			length = x + 1
			if length <= 0 || length > len(dst)-d || length > len(src)-s { // <= 0: a 32-bit int overflowed
				return false
			}
			if length <= 16 && len(src)-s >= 16 && len(dst)-d >= 16 {
				// Two words, whatever the literal's length.
				binary.LittleEndian.PutUint64(dst[d:], binary.LittleEndian.Uint64(src[s:]))
				binary.LittleEndian.PutUint64(dst[d+8:], binary.LittleEndian.Uint64(src[s+8:]))
			} else {
				copy(dst[d:], src[s:s+length])
			}
			d += length
			s += length
			continue
		case 1: // copy, 11-bit offset
			s += 2
			if s > len(src) {
				return false
			}
			length = 4 + int(tag>>2&7)
			offset = int(tag&0xe0)<<3 | int(src[s-1])
		case 2: // copy, 16-bit offset
			s += 3
			if s > len(src) {
				return false
			}
			length = 1 + int(tag>>2)
			offset = int(src[s-2]) | int(src[s-1])<<8
		default: // copy, 32-bit offset
			s += 5
			if s > len(src) {
				return false
			}
			length = 1 + int(tag>>2)
			offset = int(uint32(src[s-4]) | uint32(src[s-3])<<8 | uint32(src[s-2])<<16 | uint32(src[s-1])<<24)
		}
		if offset <= 0 || d < offset || length > len(dst)-d {
			return false
		}
		switch {
		case length <= 16 && offset >= 8 && len(dst)-d >= 16:
			// Two words, the second read after the first is written
			// (an offset of 8 to 15 repeats what the first wrote).
			from := d - offset
			binary.LittleEndian.PutUint64(dst[d:], binary.LittleEndian.Uint64(dst[from:]))
			binary.LittleEndian.PutUint64(dst[d+8:], binary.LittleEndian.Uint64(dst[from+8:]))
		case offset >= length:
			copy(dst[d:d+length], dst[d-offset:])
		case offset >= 8 && len(dst)-d >= length+8:
			// Words, each read from bytes written before it, the last
			// running up to 7 bytes past the copy's end.
			from := d - offset
			for i := 0; i < length; i += 8 {
				binary.LittleEndian.PutUint64(dst[d+i:], binary.LittleEndian.Uint64(dst[from+i:]))
			}
		default:
			// Overlapping: the pattern of the last offset bytes, repeated.
			a := dst[d : d+length]
			b := dst[d-offset : d-offset+length]
			for i := range a {
				a[i] = b[i]
			}
		}
		d += length
	}
	return d == len(dst)
}
