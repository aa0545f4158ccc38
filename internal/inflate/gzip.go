package inflate

import (
	"encoding/binary"
	"hash/crc32"
	"io"
)

// gzip header flags (RFC 1952, 2.3.1).
const (
	flagHdrCrc  = 1 << 1
	flagExtra   = 1 << 2
	flagName    = 1 << 3
	flagComment = 1 << 4
)

// Reader decompresses a gzip file of one or more members.
//
// Read decodes straight into p, so large reads (MiBs) are the fast way to
// use it: each Read also copies the last 32 KiB of its output aside for
// the next one. A Reader holds about 300 KiB (its input buffer, window and
// tables); Reset reuses them. It is not safe for concurrent use.
type Reader struct {
	d    decoder
	crc  uint32
	size uint32
	err  error
}

// NewReader reads the first member's header from r. An empty r gives
// io.EOF, as compress/gzip does.
func NewReader(r io.Reader) (*Reader, error) {
	z := new(Reader)
	if err := z.Reset(r); err != nil {
		return nil, err
	}
	return z, nil
}

// Reset makes z read r from its start, reusing z's buffers. Reset(nil)
// only drops z's reference to its input (for a pool), and Read then
// returns io.EOF.
func (z *Reader) Reset(r io.Reader) error {
	z.d.reset(r)
	if r == nil {
		z.err = io.EOF
		return nil
	}
	z.err = z.readHeader()
	return z.err
}

// InputOffset returns how far into the compressed input decoding has come.
func (z *Reader) InputOffset() int64 { return z.d.offset() }

// Read decompresses into p. It returns io.EOF after the last member's
// trailer, ErrChecksum for a member whose data does not match its trailer,
// io.ErrUnexpectedEOF for input that ends inside a member, and
// *CorruptInputError for invalid data; the bytes returned before an error
// are the ones decoded up to it.
func (z *Reader) Read(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	op, lo := 0, 0
	for len(p) > 0 {
		var ended bool
		var err error
		op, ended, err = z.d.decode(p, op, lo)
		z.crc = crc32.Update(z.crc, crc32.IEEETable, p[lo:op])
		z.size += uint32(op - lo)
		z.d.saveHist(p[lo:op])
		if err != nil {
			z.err = err
			return op, err
		}
		if !ended {
			return op, nil
		}
		if z.err = z.readTrailer(); z.err != nil {
			return op, z.err
		}
		if z.err = z.readHeader(); z.err != nil {
			return op, z.err
		}
		lo = op
		if op > 0 {
			return op, nil
		}
	}
	return op, nil
}

func (z *Reader) readTrailer() error {
	b, err := z.d.readBytes(8)
	if err != nil {
		return noEOF(err)
	}
	if binary.LittleEndian.Uint32(b) != z.crc || binary.LittleEndian.Uint32(b[4:]) != z.size {
		return ErrChecksum
	}
	z.crc, z.size = 0, 0
	return nil
}

// readHeader reads a member's header (io.EOF if the input ends before it)
// and readies the decoder for its data.
func (z *Reader) readHeader() error {
	d := &z.d
	b, err := d.readBytes(10)
	if err != nil {
		return err
	}
	if b[0] != 0x1f || b[1] != 0x8b || b[2] != 8 {
		return ErrHeader
	}
	flg := b[3]
	digest := crc32.ChecksumIEEE(b)
	if flg&flagExtra != 0 {
		b, err := d.readBytes(2)
		if err != nil {
			return noEOF(err)
		}
		digest = crc32.Update(digest, crc32.IEEETable, b)
		for n := int(binary.LittleEndian.Uint16(b)); n > 0; {
			b, err := d.readBytes(min(n, 8))
			if err != nil {
				return noEOF(err)
			}
			digest = crc32.Update(digest, crc32.IEEETable, b)
			n -= len(b)
		}
	}
	for _, f := range []byte{flagName, flagComment} {
		if flg&f == 0 {
			continue
		}
		for {
			b, err := d.readBytes(1)
			if err != nil {
				return noEOF(err)
			}
			digest = crc32.Update(digest, crc32.IEEETable, b)
			if b[0] == 0 {
				break
			}
		}
	}
	if flg&flagHdrCrc != 0 {
		b, err := d.readBytes(2)
		if err != nil {
			return noEOF(err)
		}
		if binary.LittleEndian.Uint16(b) != uint16(digest) {
			return ErrHeader
		}
	}
	d.startStream()
	z.crc, z.size = 0, 0
	return nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
