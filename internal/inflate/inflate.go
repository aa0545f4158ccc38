// Package inflate decodes gzip files (RFC 1952) and the DEFLATE streams
// inside them (RFC 1951), writing straight into the caller's buffer.
//
// compress/flate and klauspost's flate decode into a 32 KiB window and copy
// out of it on every Read. Here Read decodes into p itself and keeps only
// the last 32 KiB of output for the back-references of the next call, and
// the hot loop follows libdeflate's: one 64-bit refill per symbol pair
// without branches, 11-bit primary tables whose entries carry a length's or
// distance's base and extra bits, and matches copied eight bytes at a time.
// With the large reads of a log scan (MiBs), that decodes 1 GiB of NDJSON
// gzipped at level 6 in 1.45-1.48 s where klauspost's gzip takes 2.24-2.32 s
// on the same machine (BenchmarkReader compares them on 8 MiB).
//
// The accepted input is compress/gzip's: one or more members, each with a
// valid header (an FHCRC is checked), DEFLATE data whose Huffman codes are
// complete (or a single one-bit code, as zlib allows), and a trailer whose
// CRC-32 and size match. FuzzReader checks that against compress/gzip. One
// difference: compress/gzip refuses a file name or comment of 512 bytes or
// more, which this reader accepts.
package inflate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

const histSize = 32 << 10 // DEFLATE's window

// inBufSize is the input buffer: large reads, few system calls.
const inBufSize = 256 << 10

// fastOutMargin is the room the fast loop needs in the output: a match of
// 258 bytes copied in 8-byte words writes up to 7 bytes past its end.
const fastOutMargin = 258 + 8

// ErrChecksum is returned when a member's CRC-32 or size does not match its
// data. ErrHeader is returned for a header that is not a gzip header.
var (
	ErrChecksum = errors.New("inflate: gzip checksum or size mismatch")
	ErrHeader   = errors.New("inflate: invalid gzip header")
)

// CorruptInputError reports invalid DEFLATE data, with the offset in the
// compressed input where the decoder had read up to when it found it.
type CorruptInputError struct {
	Offset int64
	What   string
}

func (e *CorruptInputError) Error() string {
	return fmt.Sprintf("inflate: corrupt input before offset %d: %s", e.Offset, e.What)
}

type blockState uint8

const (
	stateHeader  blockState = iota // next: a block header
	stateStored                    // inside a stored block
	stateHuffman                   // inside a Huffman-coded block
	stateEnd                       // the final block is done
)

// decoder decodes one DEFLATE stream at a time from src, resumably: decode
// stops when the output is full and goes on in the next call.
type decoder struct {
	src    io.Reader
	srcErr error // what src returned last (io.EOF included); in[ip:inEnd] is still to use
	in     []byte
	ip     int
	inEnd  int
	base   int64 // offset in src of in[0]
	zeros  int   // reads that returned nothing and no error

	bits     uint64 // bits not yet used, the next one lowest
	nbits    uint
	overread uint // zero bytes put into bits past src's end

	state      blockState
	final      bool // the block being decoded is the last
	storedLeft int
	pendLen    int // a match that did not fit in the last output
	pendDist   int

	lit  *[litEnough]uint32 // the block's tables: fixedLit or &litTab
	dist *[distEnough]uint32

	hist    [histSize]byte // the stream's last output, right-aligned
	histLen int

	litTab  [litEnough]uint32
	distTab [distEnough]uint32
	preTab  [1 << preBits]uint32
	lens    [320]uint8
}

var (
	fixedLit  [litEnough]uint32
	fixedDist [distEnough]uint32
)

func init() {
	var l [288]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	buildTable(fixedLit[:], l[:], litBits, kindLitLen)
	var dl [32]uint8
	for i := range dl {
		dl[i] = 5
	}
	buildTable(fixedDist[:], dl[:], distBits, kindDist)
}

// reset makes d read a new source from its start.
func (d *decoder) reset(src io.Reader) {
	if d.in == nil {
		d.in = make([]byte, inBufSize)
	}
	d.src, d.srcErr = src, nil
	d.ip, d.inEnd, d.base, d.zeros = 0, 0, 0, 0
	d.bits, d.nbits, d.overread = 0, 0, 0
	d.startStream()
}

// startStream readies d for a DEFLATE stream at the current input position.
func (d *decoder) startStream() {
	d.state, d.final = stateHeader, false
	d.storedLeft, d.pendLen, d.pendDist = 0, 0, 0
	d.histLen = 0
}

// offset returns the input offset decoding has reached: one past the byte
// that holds the next bit to decode.
func (d *decoder) offset() int64 {
	return d.base + int64(d.ip) - int64(d.nbits/8) + int64(d.overread)
}

func (d *decoder) corrupt(what string) error {
	return &CorruptInputError{Offset: d.offset(), What: what}
}

// fill reads more input after in[ip:inEnd], keeping the 8 bytes before ip
// (bits may hold them, and the stream's end gives them back).
func (d *decoder) fill() {
	if d.srcErr != nil {
		return
	}
	if keep := d.ip - 8; keep > 0 && d.inEnd > len(d.in)-4096 {
		copy(d.in, d.in[keep:d.inEnd])
		d.base += int64(keep)
		d.ip -= keep
		d.inEnd -= keep
	}
	n, err := d.src.Read(d.in[d.inEnd:])
	d.inEnd += n
	switch {
	case err != nil:
		d.srcErr = err
	case n == 0:
		if d.zeros++; d.zeros > 100 {
			d.srcErr = io.ErrNoProgress
		}
	default:
		d.zeros = 0
	}
}

// endErr is the error for input that ended early: src's own, or
// io.ErrUnexpectedEOF for a clean end of src.
func (d *decoder) endErr() error {
	if d.srcErr == nil || d.srcErr == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return d.srcErr
}

// refill brings bits up to at least 56, reading src as needed. Past src's
// end it adds zero bytes, counted in overread: using any of them is an
// error that used() reports.
func (d *decoder) refill() {
	for d.nbits <= 56 {
		switch {
		case d.ip < d.inEnd:
			d.bits |= uint64(d.in[d.ip]) << d.nbits
			d.ip++
		case d.srcErr == nil:
			d.fill()
			continue
		default:
			d.overread++
		}
		d.nbits += 8
	}
}

// used reports an error if the bits consumed so far reach past src's end.
func (d *decoder) used() error {
	if d.nbits < d.overread*8 {
		return d.endErr()
	}
	return nil
}

// getBits returns the next n (<= 32) bits.
func (d *decoder) getBits(n uint) (uint32, error) {
	if d.nbits < n {
		d.refill()
	}
	v := uint32(d.bits & (1<<n - 1))
	d.bits >>= n
	d.nbits -= n
	return v, d.used()
}

// alignInput drops the bits up to the next byte boundary and gives the
// whole bytes still in bits back to the input, so that in[ip:] is what
// follows.
func (d *decoder) alignInput() error {
	d.nbits -= d.nbits % 8
	whole := int(d.nbits/8) - int(d.overread)
	if whole < 0 {
		return d.endErr()
	}
	d.ip -= whole
	d.bits, d.nbits, d.overread = 0, 0, 0
	return nil
}

// readBytes returns the next n bytes of input (n <= 8), after alignInput.
// At src's clean end it returns io.EOF if no byte is left and
// io.ErrUnexpectedEOF if some are.
func (d *decoder) readBytes(n int) ([]byte, error) {
	for d.inEnd-d.ip < n && d.srcErr == nil {
		d.fill()
	}
	if d.inEnd-d.ip < n {
		if d.inEnd == d.ip && d.srcErr == io.EOF {
			return nil, io.EOF
		}
		return nil, d.endErr()
	}
	b := d.in[d.ip : d.ip+n]
	d.ip += n
	return b, nil
}

// decode writes the stream's bytes into out[op:] until out is full or the
// stream ends, and returns the new op and whether the stream ended. The
// stream's output in this out starts at out[lo] (0, or where its member
// started); what came before it in earlier calls is in hist.
func (d *decoder) decode(out []byte, op, lo int) (int, bool, error) {
	for {
		switch d.state {
		case stateEnd:
			return op, true, nil
		case stateHeader:
			if d.final {
				if err := d.alignInput(); err != nil {
					return op, false, err
				}
				d.state = stateEnd
				continue
			}
			if op == len(out) {
				return op, false, nil
			}
			if err := d.blockHeader(); err != nil {
				return op, false, err
			}
		case stateStored:
			var err error
			if op, err = d.stored(out, op); err != nil || op == len(out) {
				return op, false, err
			}
		case stateHuffman:
			if d.pendLen > 0 {
				n := min(d.pendLen, len(out)-op)
				op = d.copySlow(out, op, lo, d.pendDist, n)
				d.pendLen -= n
				if d.pendLen > 0 {
					return op, false, nil
				}
			}
			var err error
			if op, err = d.huffman(out, op, lo); err != nil || op == len(out) {
				return op, false, err
			}
		}
	}
}

// blockHeader reads a block's header and, for a dynamic block, its codes.
func (d *decoder) blockHeader() error {
	h, err := d.getBits(3)
	if err != nil {
		return err
	}
	d.final = h&1 != 0
	switch h >> 1 {
	case 0:
		if err := d.alignInput(); err != nil {
			return err
		}
		b, err := d.readBytes(4)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		n, nn := binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:])
		if n != ^nn {
			return d.corrupt("stored block length does not match its complement")
		}
		d.storedLeft = int(n)
		d.state = stateStored
	case 1:
		d.lit, d.dist = &fixedLit, &fixedDist
		d.state = stateHuffman
	case 2:
		if err := d.dynamicCodes(); err != nil {
			return err
		}
		d.lit, d.dist = &d.litTab, &d.distTab
		d.state = stateHuffman
	default:
		return d.corrupt("reserved block type")
	}
	return nil
}

// codeOrder is the order of the code-length code's lengths.
var codeOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamicCodes reads a dynamic block's code lengths and builds its tables.
func (d *decoder) dynamicCodes() error {
	h, err := d.getBits(14)
	if err != nil {
		return err
	}
	nlit := int(h&31) + 257
	ndist := int(h>>5&31) + 1
	nclen := int(h>>10) + 4
	if nlit > 286 || ndist > 30 {
		return d.corrupt("too many literal/length or distance codes")
	}
	var pre [19]uint8
	for i := range nclen {
		v, err := d.getBits(3)
		if err != nil {
			return err
		}
		pre[codeOrder[i]] = uint8(v)
	}
	if !buildTable(d.preTab[:], pre[:], preBits, kindPrecode) {
		return d.corrupt("invalid code-length code")
	}
	lens := d.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if d.nbits < 7+7 {
			d.refill()
		}
		e := d.preTab[d.bits&(1<<preBits-1)]
		if e&entryInvalid != 0 {
			return d.corrupt("invalid code length symbol")
		}
		d.bits >>= e & 0xff
		d.nbits -= uint(e & 0xff)
		if err := d.used(); err != nil {
			return err
		}
		sym := e >> 16
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return d.corrupt("repeat of a code length with none before it")
			}
			v, err := d.getBits(2)
			if err != nil {
				return err
			}
			rep, val = 3+int(v), lens[i-1]
		case 17:
			v, err := d.getBits(3)
			if err != nil {
				return err
			}
			rep = 3 + int(v)
		default:
			v, err := d.getBits(7)
			if err != nil {
				return err
			}
			rep = 11 + int(v)
		}
		if i+rep > len(lens) {
			return d.corrupt("code lengths repeat past their end")
		}
		for range rep {
			lens[i] = val
			i++
		}
	}
	if !buildTable(d.litTab[:], lens[:nlit], litBits, kindLitLen) ||
		!buildTable(d.distTab[:], lens[nlit:], distBits, kindDist) {
		return d.corrupt("invalid Huffman code lengths")
	}
	return nil
}

// stored copies a stored block's bytes into out[op:].
func (d *decoder) stored(out []byte, op int) (int, error) {
	for d.storedLeft > 0 && op < len(out) {
		if d.ip == d.inEnd {
			if d.srcErr != nil {
				return op, d.endErr()
			}
			d.fill()
			continue
		}
		n := copy(out[op:min(len(out), op+d.storedLeft)], d.in[d.ip:d.inEnd])
		d.ip += n
		op += n
		d.storedLeft -= n
	}
	if d.storedLeft == 0 {
		d.state = stateHeader
	}
	return op, nil
}

// copySlow copies a match of n bytes from dist back into out[op:], writing
// nothing past op+n. Bytes before out[lo] come from hist.
func (d *decoder) copySlow(out []byte, op, lo, dist, n int) int {
	if back := dist - (op - lo); back > 0 {
		k := min(back, n)
		h := histSize - back
		copy(out[op:op+k], d.hist[h:h+k])
		op += k
		n -= k
	}
	src := op - dist
	for range n {
		out[op] = out[src]
		op++
		src++
	}
	return op
}

// saveHist keeps the last histSize bytes of the stream's output, b being
// the newest.
func (d *decoder) saveHist(b []byte) {
	if len(b) >= histSize {
		copy(d.hist[:], b[len(b)-histSize:])
		d.histLen = histSize
		return
	}
	copy(d.hist[:], d.hist[len(b):])
	copy(d.hist[histSize-len(b):], b)
	d.histLen = min(d.histLen+len(b), histSize)
}
