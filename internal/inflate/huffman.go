package inflate

import "math/bits"

// A decode table entry packs what decoding one symbol needs into 32 bits:
//
//	bits  0-7   bits to consume: the code's length, plus its extra bits for
//	            lengths and distances (a pointer entry: the primary bits)
//	bits  8-11  the code's length alone (a pointer entry: its subtable's bits)
//	bit  12     unused code (an incomplete code's gaps, symbols 286-287, 30-31)
//	bit  13     pointer to a subtable for codes longer than the primary bits
//	bit  14     end of block
//	bit  15     literal
//	bits 16-31  the literal, the length or distance base, or the subtable's
//	            index in the table
//
// A length or distance is base + (bitbuf & (1<<consume - 1)) >> codeLen.
const (
	entryInvalid = 1 << 12
	entrySub     = 1 << 13
	entryEOB     = 1 << 14
	entryLiteral = 1 << 15
)

const (
	maxCodeLen = 15
	litBits    = 11 // primary table bits for literal/length codes
	distBits   = 8  // primary table bits for distance codes
	preBits    = 7  // the code-length code has codes of at most 7 bits

	// The largest tables any code can need (zlib's "enough" for these
	// primary sizes: 286 literal/length and 30 distance symbols of at most
	// 15 bits). Building checks the bound, so a wrong number is an error, not
	// a fault.
	litEnough  = 2342
	distEnough = 402
)

// lengthBase and lengthExtra describe length symbols 257-285.
var lengthBase = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
	35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
var lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
	3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}

// distBase and distExtra describe distance symbols 0-29.
var distBase = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
	257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
var distExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
	7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}

// symbolKind says how buildTable turns a symbol into an entry.
type symbolKind uint8

const (
	kindLitLen symbolKind = iota
	kindDist
	kindPrecode
)

// entryFor returns the entry of symbol sym with a code of n bits, without
// the bits to consume of a subtable entry (the caller adjusts them).
func entryFor(kind symbolKind, sym int, n uint32) uint32 {
	switch kind {
	case kindLitLen:
		switch {
		case sym < 256:
			return uint32(sym)<<16 | entryLiteral | n<<8 | n
		case sym == 256:
			return entryEOB | n<<8 | n
		case sym < 286:
			i := sym - 257
			return uint32(lengthBase[i])<<16 | n<<8 | (n + uint32(lengthExtra[i]))
		}
		return entryInvalid | n<<8 | n
	case kindDist:
		if sym < 30 {
			return uint32(distBase[sym])<<16 | n<<8 | (n + uint32(distExtra[sym]))
		}
		return entryInvalid | n<<8 | n
	}
	return uint32(sym)<<16 | n<<8 | n
}

// buildTable fills table with the decode entries of the canonical Huffman
// code whose code lengths are lengths (0: symbol unused), with a primary
// table of 1<<primary entries followed by subtables. It reports false for a
// code that is over-subscribed or incomplete, except the two cases
// compress/flate accepts too: no codes at all (any use of the table is then
// an error) and a single code of one bit. Gaps stay entryInvalid.
func buildTable(table []uint32, lengths []uint8, primary uint, kind symbolKind) bool {
	var count [maxCodeLen + 1]int
	maxLen := 0
	for _, n := range lengths {
		count[n]++
		maxLen = max(maxLen, int(n))
	}
	count[0] = 0
	// Check the code's completeness as compress/flate does.
	code := 0
	for l := 1; l <= maxLen; l++ {
		code = code<<1 + count[l]
	}
	if maxLen > 0 && code != 1<<maxLen && !(code == 1 && maxLen == 1) {
		return false
	}
	size := 1 << primary
	for i := range table[:size] {
		table[i] = entryInvalid | uint32(primary)<<8 | uint32(primary)
	}
	if maxLen == 0 {
		return true
	}

	// Sort symbols by code length, then by symbol: the canonical order.
	var offs [maxCodeLen + 2]int
	for l := 1; l <= maxCodeLen; l++ {
		offs[l+1] = offs[l] + count[l]
	}
	var sorted [288]uint16
	for sym, n := range lengths {
		if n != 0 {
			sorted[offs[n]] = uint16(sym)
			offs[n]++
		}
	}

	next := size // where the next subtable starts
	codeVal := 0 // the canonical code of the current symbol, MSB first
	i := 0
	subPrefix := -1 // the primary index of the current subtable
	subStart, subBits := 0, 0
	for l := 1; l <= maxLen; l++ {
		codeVal <<= 1
		for range count[l] {
			sym := int(sorted[i])
			i++
			rev := int(bits.Reverse16(uint16(codeVal)) >> (16 - l))
			codeVal++
			if uint(l) <= primary {
				e := entryFor(kind, sym, uint32(l))
				for j := rev; j < size; j += 1 << l {
					table[j] = e
				}
				continue
			}
			prefix := rev & (size - 1)
			if prefix != subPrefix {
				// A new subtable: as many bits as the longest code
				// with this prefix needs, found by counting how many
				// codes of each longer length remain.
				subPrefix = prefix
				subBits = l - int(primary)
				left := 1 << subBits
				for ll := l; ll < maxLen; {
					if ll == l {
						left -= offs[l] - (i - 1) // this length's codes not yet placed, this one included
					} else {
						left -= count[ll]
					}
					if left <= 0 {
						break
					}
					ll++
					subBits++
					left <<= 1
				}
				subStart = next
				next += 1 << subBits
				if next > len(table) {
					return false
				}
				for k := subStart; k < next; k++ {
					table[k] = entryInvalid | uint32(subBits)<<8 | uint32(subBits)
				}
				table[prefix] = uint32(subStart)<<16 | entrySub | uint32(subBits)<<8 | uint32(primary)
			}
			sl := l - int(primary)
			e := entryFor(kind, sym, uint32(sl))
			for j := rev >> primary; j < 1<<subBits; j += 1 << sl {
				table[subStart+j] = e
			}
		}
	}
	return true
}
