package fileread

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/spate-io/spate/internal/inflate"
)

// Compression names a compressed input format, detected by magic bytes.
type Compression string

// Detected compressions.
const (
	None  Compression = ""
	Gzip  Compression = "gzip"
	Zstd  Compression = "zstd"
	Bzip2 Compression = "bzip2"
	Xz    Compression = "xz"
)

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
	xzMagic   = []byte{0xfd, '7', 'z', 'X', 'Z', 0}
)

// DetectCompression returns the compression whose magic bytes start head
// (6 bytes tell every one apart).
func DetectCompression(head []byte) Compression {
	switch {
	case bytes.HasPrefix(head, zstdMagic):
		return Zstd
	case bytes.HasPrefix(head, gzipMagic):
		return Gzip
	case bytes.HasPrefix(head, xzMagic):
		return Xz
	case len(head) >= 4 && string(head[:3]) == "BZh" && head[3] >= '1' && head[3] <= '9':
		return Bzip2
	}
	return None
}

// DetectFile returns the compression of f from its first bytes, read with
// ReadAt: f's offset does not move.
func DetectFile(f *os.File) (Compression, error) {
	var head [6]byte
	n, err := f.ReadAt(head[:], 0)
	if err != nil && err != io.EOF {
		return None, err
	}
	return DetectCompression(head[:n]), nil
}

// Decompress returns a reader of r decompressed as c (r itself for None)
// and a function that releases the decoder. gzip and zstd decoders come
// from pools. On this machine gzip decodes at 700-800 MB/s and zstd at
// 1,400-1,700; bzip2 (the standard library's) at 33-40 and xz
// (github.com/ulikunitz/xz) at 63-67, slower than the C tools.
func Decompress(c Compression, r io.Reader) (io.Reader, func(), error) {
	switch c {
	case Gzip:
		gr, err := getGzip(r)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot read gzip header: %w", err)
		}
		return gr, func() { putGzip(gr) }, nil
	case Zstd:
		d, err := getZstd(r)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot start zstd decoder: %w", err)
		}
		return d, func() { putZstd(d) }, nil
	case Bzip2:
		return bzip2.NewReader(r), func() {}, nil
	case Xz:
		xr, err := xz.NewReader(r)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot read xz header: %w", err)
		}
		return xr, func() {}, nil
	}
	return r, func() {}, nil
}

// pageSize is the system's memory page size.
var pageSize = int64(os.Getpagesize())

// input is one opened input. Regular files are shared by the jobs that read
// them and closed when the last one releases its reference.
type input struct {
	name        string
	f           *os.File  // nil for stdin given as Config.Stdin
	r           io.Reader // sequential reader (positioned at 0) for non-regular inputs
	regular     bool
	size        int64 // size at open (capped by limit), for regular files
	limit       int64 // Config.Open's limit, or -1
	compression Compression
	refs        atomic.Int32
	// consumed, set by reader for a compressed input, returns the
	// compressed bytes read so far (on the reading goroutine).
	consumed func() int64
}

// openInput opens name ("-" is stdin) and detects its kind and compression.
func openInput(name string, cfg Config) (*input, error) {
	in := &input{name: name, limit: -1}
	in.refs.Store(1)
	if name == "-" {
		var r io.Reader = os.Stdin
		if cfg.Stdin != nil {
			r = cfg.Stdin
		}
		return in, in.peekStream(r)
	}
	var f *os.File
	var err error
	if cfg.Open != nil {
		f, in.limit, err = cfg.Open(name)
	} else {
		f, err = os.Open(name)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open input: %w", err)
	}
	in.f = f
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot stat %q: %w", name, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: is a directory", name)
	}
	if !fi.Mode().IsRegular() {
		return in, in.peekStream(f)
	}
	in.regular = true
	in.size = fi.Size()
	if in.compression, err = DetectFile(f); err != nil {
		in.release()
		return nil, fmt.Errorf("cannot read %q: %w", name, err)
	}
	if in.limit >= 0 && in.compression == None {
		in.size = min(in.size, in.limit)
	}
	return in, nil
}

// peekStream sets up a sequential reader over r and detects compression from
// its first bytes without consuming them.
func (in *input) peekStream(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	// Four bytes tell the formats apart but xz, which needs six: a live
	// input that has written less waits for no more than it must.
	head, err := br.Peek(4)
	if bytes.HasPrefix(head, xzMagic[:4]) {
		head, err = br.Peek(len(xzMagic))
	}
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		in.release()
		return fmt.Errorf("cannot read %q: %w", in.name, err)
	}
	in.compression = DetectCompression(head)
	in.r = br
	return nil
}

// acquire takes a reference for a job that reads the file after the
// producer has moved on.
func (in *input) acquire() { in.refs.Add(1) }

// release drops a reference and closes the file with the last one.
func (in *input) release() {
	if in.refs.Add(-1) == 0 && in.f != nil {
		in.f.Close()
	}
}

// auto returns the strategy Auto picks for this input.
func (in *input) auto() Strategy {
	switch {
	case !in.regular || in.compression != None:
		return Stream
	case in.size < autoSmallFile || !mmapSupported:
		return Pread
	}
	return AutoRegular
}

// zstdPool keeps zstd decoders between inputs: a decoder's window and
// block buffers are several MB, and a store query opens one per segment.
//
// Decoders decode on the reading goroutine (WithDecoderConcurrency(1)):
// the producer that reads an input is then its decompressor, and the
// workers scan on the other cores. klauspost's concurrent stream decoder,
// which splits each block's work across goroutines, was slower here alone
// (1 GiB of logs: 0.90 s against 0.76 s for the synchronous one) and
// slower still beside the workers ('"timeout" | stats count()' on a .zst:
// 1.04 s against 0.91 s).
var zstdPool sync.Pool

// compressedReadBuffer is the read size for compressed regular files.
const compressedReadBuffer = 256 << 10

func getZstd(r io.Reader) (*zstd.Decoder, error) {
	if d, ok := zstdPool.Get().(*zstd.Decoder); ok {
		if err := d.Reset(r); err == nil {
			return d, nil
		}
		d.Close()
	}
	return zstd.NewReader(r, zstd.WithDecoderLowmem(false), zstd.WithDecoderConcurrency(1))
}

// putZstd returns d to the pool once it no longer reads its input.
func putZstd(d *zstd.Decoder) {
	if d.Reset(nil) != nil {
		d.Close()
		return
	}
	zstdPool.Put(d)
}

// gzipPool keeps gzip readers (about 300 KiB of buffers and tables each)
// between inputs.
var gzipPool sync.Pool

func getGzip(r io.Reader) (*inflate.Reader, error) {
	if z, ok := gzipPool.Get().(*inflate.Reader); ok {
		if err := z.Reset(r); err != nil {
			putGzip(z)
			return nil, err
		}
		return z, nil
	}
	return inflate.NewReader(r)
}

// putGzip returns z to the pool once it no longer reads its input.
func putGzip(z *inflate.Reader) {
	z.Reset(nil)
	gzipPool.Put(z)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// reader returns a sequential reader of the input's (decompressed) bytes,
// limited to the size at open for regular files, and a close function. For
// a compressed input, in.consumed then gives the compressed bytes read.
func (in *input) reader(ctx context.Context, s Strategy) (io.Reader, func(), error) {
	var r io.Reader
	closeLive := func() {}
	switch {
	case in.regular:
		r = io.NewSectionReader(in.f, 0, in.size)
	case in.compression == None:
		// A pipe, a FIFO or stdin: hand out complete lines when it pauses.
		l := newLiveReader(ctx, in.r)
		r, closeLive = l, l.close
	default:
		r = in.r
	}
	if s == Bufio {
		r = bufio.NewReaderSize(r, DefaultBufioBuffer)
	}
	if in.compression != None && in.compression != Gzip {
		// The gzip decoder says how much it has used (InputOffset, below);
		// the others are counted as they read.
		cr := &countingReader{r: r}
		r, in.consumed = cr, cr.n.Load
	}
	if in.regular && in.compression != None && in.compression != Gzip && s != Bufio {
		// The zstd, bzip2 and xz decoders read in small pieces; one large
		// buffer makes a few hundred reads of a 200 MB file. (The gzip
		// decoder reads 256 KiB at a time itself.)
		r = bufio.NewReaderSize(r, compressedReadBuffer)
	}
	if in.compression == None {
		return r, closeLive, nil
	}
	zr, closeZ, err := Decompress(in.compression, r)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", in.name, err)
	}
	if gr, ok := zr.(*inflate.Reader); ok {
		in.consumed = gr.InputOffset // exact: what the decoder has used
	}
	if in.limit >= 0 {
		zr = io.LimitReader(zr, in.limit)
	}
	return zr, closeZ, nil
}

// produce reads input idx and hands its chunks to the workers, returning the
// strategy it used. When every chunk has been handed out it reports the
// input's size to cfg.InputDone.
func (s *scanner) produce(idx int, name string) (Strategy, error) {
	in, err := openInput(name, s.cfg)
	if err != nil {
		return "", err
	}
	defer in.release()
	st := s.cfg.Strategy
	if st == Auto {
		st = in.auto()
		if st == Mmap && s.cfg.NoMmap {
			st = Pread
		}
	}
	switch st {
	case Mmap, Pread:
		if !in.regular {
			return st, fmt.Errorf("%s: %s needs a regular file (use stream or auto for pipes and stdin): %w", name, st, ErrUnsupported)
		}
		if in.compression != None {
			return st, fmt.Errorf("%s: %s cannot read %s-compressed input (use stream or auto): %w", name, st, in.compression, ErrUnsupported)
		}
	case Bufio:
		if in.compression != None {
			return st, fmt.Errorf("%s: bufio cannot read %s-compressed input (use stream or auto): %w", name, in.compression, ErrUnsupported)
		}
	}
	switch st {
	case Mmap:
		err := s.produceMmap(idx, in)
		var mf *mmapFailedError
		if s.cfg.Strategy == Auto && errors.As(err, &mf) && mf.first {
			// Nothing was handed out yet: read the file with pread instead
			// (a file system that cannot mmap, or no address space left).
			return Pread, s.inputDone(idx, in.size, s.producePread(idx, in))
		}
		return st, s.inputDone(idx, in.size, err)
	case Pread:
		return st, s.inputDone(idx, in.size, s.producePread(idx, in))
	}
	r, closeR, err := in.reader(s.ctx, st)
	if err != nil {
		return st, err
	}
	defer closeR()
	size, err := s.produceSeq(idx, in, st, r)
	return st, s.inputDone(idx, size, err)
}

// inputDone reports a completely produced input to cfg.InputDone and passes
// err through.
func (s *scanner) inputDone(idx int, size int64, err error) error {
	if err == nil && s.cfg.InputDone != nil && s.ctx.Err() == nil {
		s.cfg.InputDone(idx, size)
	}
	return err
}

// mmapFailedError reports a failed mmap call; first says that it was the
// input's first window, so that nothing had been handed out yet.
type mmapFailedError struct {
	name  string
	off   int64
	first bool
	err   error
}

func (e *mmapFailedError) Error() string {
	return fmt.Sprintf("cannot mmap %q at offset %d: %v", e.name, e.off, e.err)
}

func (e *mmapFailedError) Unwrap() error { return e.err }
