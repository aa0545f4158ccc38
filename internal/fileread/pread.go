package fileread

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spate-io/spate/internal/bytesutil"
)

// preadReadAhead is the first step of reading past a chunk's end to finish
// its last line; later steps double.
const preadReadAhead = 64 << 10

// preadAlign is the alignment pread keeps between file offsets and buffer
// addresses (a page).
const preadAlign = 4096

// Read-ahead of pread: the producer keeps the kernel reading up to
// preadAheadBytes in front of the chunks it hands out, in preadAheadStep
// regions (see readAhead).
const (
	preadAheadBytes = 64 << 20
	preadAheadStep  = 16 << 20
)

// producePread emits one job per fixed-size chunk of the file. The workers
// read the chunks themselves, in parallel, each into its own buffer, while
// the producer keeps read-ahead going in front of them.
func (s *scanner) producePread(idx int, in *input) error {
	chunk := int64(s.cfg.chunkSize(Pread))
	maxLine := s.cfg.maxLine()
	var ahead int64 // read-ahead was requested up to here
	for k, start := int64(0), int64(0); start < in.size; k, start = k+1, start+chunk {
		for ; ahead < min(start+preadAheadBytes, in.size); ahead += preadAheadStep {
			readAhead(in.f, ahead, min(preadAheadStep, in.size-ahead))
		}
		in.acquire()
		j := &preadJob{in: in, idx: idx, seq: k, start: start, end: min(start+chunk, in.size), maxLine: maxLine, skipLong: s.cfg.SkipLongLines}
		if !s.send(j) {
			return nil
		}
	}
	return nil
}

// preadJob reads the lines that start in [start, end) of a file. A line
// belongs to the chunk where it starts: the job skips the partial line at its
// start (its owner is the previous chunk) and reads past end to finish its
// own last line.
//
// The chunk size is at most maxLine, so an over-long line is always the last
// line of the job where it starts: with skipLong that job hands out the lines
// before it and reports the line's bytes in Chunk.Skip, and the jobs that
// start inside the line find no line of their own.
type preadJob struct {
	in         *input
	idx        int
	seq        int64
	start, end int64
	maxLine    int
	skipLong   bool
}

func (j *preadJob) release() { j.in.release() }

func (j *preadJob) load(w *worker, c *Chunk) error {
	in := j.in
	c.Input, c.Name, c.Seq, c.Strategy = j.idx, in.name, j.seq, Pread

	// Read one byte before start to learn whether a line starts at start.
	lo := j.start
	if lo > 0 {
		lo--
	}
	n := int(j.end - lo)
	if w.buf == nil {
		// Room for the chunk, the byte before it and a first read-ahead.
		w.buf = getChunkBuf(preadAlign + n + preadReadAhead)
	}
	// Place data at the same offset within a page as lo has in the file:
	// the kernel's copy runs several times faster when source and
	// destination are mutually aligned (measured: BenchmarkScan/pread).
	w.buf.b = growBuf(w.buf.b[:0], preadAlign+n)
	pad := bytesutil.AlignPad(w.buf.b, lo, preadAlign)
	w.buf.b = w.buf.b[:pad+n]
	data := w.buf.b[pad:]
	if err := in.readAt(data, lo); err != nil {
		return err
	}
	begin := 0
	if j.start > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 || i == len(data)-1 {
			return nil // no line starts in this chunk
		}
		begin = i + 1
	}

	// Slow path: finish the last line past the chunk's end.
	if j.end < in.size && data[len(data)-1] != '\n' {
		lineStart := begin + bytesutil.LastIndexByte(data[begin:], '\n') + 1
		step := preadReadAhead
		for {
			pos := lo + int64(len(data))
			if pos == in.size {
				break // the input's last line, with no final newline
			}
			more := int(min(int64(step), in.size-pos))
			old := len(data)
			w.buf.b = growBuf(w.buf.b[:pad+old], pad+old+more)
			data = w.buf.b[pad:]
			if err := in.readAt(data[old:], pos); err != nil {
				return err
			}
			if i := bytes.IndexByte(data[old:], '\n'); i >= 0 {
				data = data[:old+i+1]
				break
			}
			if len(data)-lineStart > j.maxLine {
				if !j.skipLong {
					return &LineTooLongError{Name: in.name, Offset: lo + int64(lineStart), Max: j.maxLine}
				}
				// Read past the rest of the line in bounded reads, into
				// the buffer from lineStart: the line's bytes are not
				// needed.
				scratch := data[lineStart:]
				next, newline, err := in.skipLine(lo+int64(len(data)), scratch[:min(len(scratch), skipReadSize)])
				if err != nil {
					return err
				}
				length := next - (lo + int64(lineStart))
				if newline {
					length--
				}
				j.skipLast(w, c, data, lo, begin, lineStart, next, length)
				return nil
			}
			step *= 2
		}
		if n := lineLen(data[lineStart:]); n > j.maxLine {
			if !j.skipLong {
				return &LineTooLongError{Name: in.name, Offset: lo + int64(lineStart), Max: j.maxLine}
			}
			j.skipLast(w, c, data, lo, begin, lineStart, lo+int64(len(data)), int64(n))
			return nil
		}
	}
	c.Data = data[begin:]
	c.Offset = lo + int64(begin)
	return nil
}

// skipLast hands out the job's lines data[begin:lineStart] (data starts at
// file offset lo) without its last line, an over-long line of length bytes
// that ends just before file offset next, and records that line.
func (j *preadJob) skipLast(w *worker, c *Chunk, data []byte, lo int64, begin, lineStart int, next, length int64) {
	c.Data = data[begin:lineStart]
	c.Offset = lo + int64(begin)
	c.Skip = next - (lo + int64(lineStart))
	w.long.add(LongLine{Input: j.idx, Name: j.in.name, Offset: lo + int64(lineStart), Length: length})
}

// readAt fills p from offset off, reporting a file that shrank since it was
// opened as ErrInputChanged.
func (in *input) readAt(p []byte, off int64) error {
	n, err := in.f.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == io.EOF || err == nil {
		return fmt.Errorf("%s: file shrank below %d bytes while being read: %w", in.name, off+int64(len(p)), ErrInputChanged)
	}
	return fmt.Errorf("cannot read %q at offset %d: %w", in.name, off, err)
}

// lineLen returns the length of the first line of b, without its '\n'.
func lineLen(b []byte) int {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return i
	}
	return len(b)
}

// growBuf returns b resized to n bytes, keeping its contents and reusing its
// storage when the capacity allows.
func growBuf(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	nb := make([]byte, n, max(n, 2*cap(b)))
	copy(nb, b)
	return nb
}
