package inflate

import "encoding/binary"

// huffman decodes a Huffman-coded block's symbols into out[op:] until the
// block ends (state becomes stateHeader) or out is full.
//
// The fast loop runs while 8 bytes of input and fastOutMargin bytes of
// output are left: it refills bits with one unaligned load (the bytes above
// nbits then hold the next byte's low bits, which the next load ORs in
// again unchanged), decodes up to three literals (at most 15+11+11 bits)
// or one length and distance (at most 48 bits) per refill, and copies
// matches in 8-byte words. The slow path after it decodes one symbol at a
// time with every check.
func (d *decoder) huffman(out []byte, op, lo int) (int, error) {
	for {
		var err error
		op, err = d.huffmanFast(out, op, lo)
		if err != nil || d.state != stateHuffman || op == len(out) {
			return op, err
		}
		if d.inEnd-d.ip < 8 && d.srcErr == nil {
			d.fill()
			continue
		}
		if op, err = d.huffmanSymbol(out, op, lo); err != nil || d.state != stateHuffman || op == len(out) {
			return op, err
		}
	}
}

func (d *decoder) huffmanFast(out []byte, op, lo int) (int, error) {
	bits, nbits := d.bits, d.nbits
	in := d.in[:d.inEnd]
	ip := d.ip
	lit, dt := d.lit, d.dist
	histLen := d.histLen
	for ip+8 <= len(in) && op+fastOutMargin <= len(out) {
		bits |= binary.LittleEndian.Uint64(in[ip:]) << (nbits & 63)
		ip += int((63 - nbits) >> 3)
		nbits |= 56

		e := lit[bits&(1<<litBits-1)]
		if e&entrySub != 0 {
			bits >>= litBits
			nbits -= litBits
			e = lit[e>>16+uint32(bits)&(1<<((e>>8)&15)-1)]
		}
		if e&entryLiteral != 0 {
			n := e & 0xff
			bits >>= n & 63
			nbits -= uint(n)
			out[op] = byte(e >> 16)
			op++
			e = lit[bits&(1<<litBits-1)]
			if e&entryLiteral != 0 {
				n := e & 0xff
				bits >>= n & 63
				nbits -= uint(n)
				out[op] = byte(e >> 16)
				op++
				e = lit[bits&(1<<litBits-1)]
				if e&entryLiteral != 0 {
					n := e & 0xff
					bits >>= n & 63
					nbits -= uint(n)
					out[op] = byte(e >> 16)
					op++
				}
			}
			continue
		}
		if e&(entryEOB|entryInvalid) != 0 {
			n := e & 0xff
			bits >>= n & 63
			nbits -= uint(n)
			d.bits, d.nbits, d.ip = bits, nbits, ip
			if e&entryInvalid != 0 {
				return op, d.corrupt("invalid literal/length code")
			}
			d.state = stateHeader
			return op, nil
		}
		total := e & 0xff
		length := int(e>>16) + int((bits&(1<<(total&63)-1))>>((e>>8)&15))
		bits >>= total & 63
		nbits -= uint(total)

		e = dt[bits&(1<<distBits-1)]
		if e&entrySub != 0 {
			bits >>= distBits
			nbits -= distBits
			e = dt[e>>16+uint32(bits)&(1<<((e>>8)&15)-1)]
		}
		total = e & 0xff
		dist := int(e>>16) + int((bits&(1<<(total&63)-1))>>((e>>8)&15))
		bits >>= total & 63
		nbits -= uint(total)
		if e&entryInvalid != 0 {
			d.bits, d.nbits, d.ip = bits, nbits, ip
			return op, d.corrupt("invalid distance code")
		}

		src := op - dist
		switch {
		case src < lo:
			if dist > op-lo+histLen {
				d.bits, d.nbits, d.ip = bits, nbits, ip
				return op, d.corrupt("distance too far back")
			}
			op = d.copySlow(out, op, lo, dist, length)
			continue
		case dist >= 8:
			for i := 0; i < length; i += 8 {
				binary.LittleEndian.PutUint64(out[op+i:], binary.LittleEndian.Uint64(out[src+i:]))
			}
		case dist == 1:
			v := uint64(out[src]) * 0x0101010101010101
			for i := 0; i < length; i += 8 {
				binary.LittleEndian.PutUint64(out[op+i:], v)
			}
		default:
			for i := range length {
				out[op+i] = out[src+i]
			}
		}
		op += length
	}
	d.bits, d.nbits, d.ip = bits, nbits, ip
	return op, nil
}

// huffmanSymbol decodes one symbol with every check: near the input's end
// and when out has less than fastOutMargin bytes left. A match that does
// not fit is finished in the next call (pendLen).
func (d *decoder) huffmanSymbol(out []byte, op, lo int) (int, error) {
	d.refill() // 56 bits or more: a length and a distance take at most 48
	e := d.lit[d.bits&(1<<litBits-1)]
	if e&entrySub != 0 {
		d.bits >>= litBits
		d.nbits -= litBits
		e = d.lit[e>>16+uint32(d.bits)&(1<<((e>>8)&15)-1)]
	}
	total := e & 0xff
	length := int(e>>16) + int((d.bits&(1<<total-1))>>((e>>8)&15))
	d.bits >>= total
	d.nbits -= uint(total)
	if err := d.used(); err != nil {
		return op, err
	}
	switch {
	case e&entryLiteral != 0:
		out[op] = byte(e >> 16)
		return op + 1, nil
	case e&entryInvalid != 0:
		return op, d.corrupt("invalid literal/length code")
	case e&entryEOB != 0:
		d.state = stateHeader
		return op, nil
	}
	e = d.dist[d.bits&(1<<distBits-1)]
	if e&entrySub != 0 {
		d.bits >>= distBits
		d.nbits -= distBits
		e = d.dist[e>>16+uint32(d.bits)&(1<<((e>>8)&15)-1)]
	}
	total = e & 0xff
	dist := int(e>>16) + int((d.bits&(1<<total-1))>>((e>>8)&15))
	d.bits >>= total
	d.nbits -= uint(total)
	if err := d.used(); err != nil {
		return op, err
	}
	if e&entryInvalid != 0 {
		return op, d.corrupt("invalid distance code")
	}
	if dist > op-lo+d.histLen {
		return op, d.corrupt("distance too far back")
	}
	n := min(length, len(out)-op)
	op = d.copySlow(out, op, lo, dist, n)
	if n < length {
		d.pendLen, d.pendDist = length-n, dist
	}
	return op, nil
}
