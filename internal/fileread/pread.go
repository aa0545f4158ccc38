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
		j := &preadJob{in: in, idx: idx, seq: k, start: start, end: min(start+chunk, in.size), maxLine: maxLine}
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
type preadJob struct {
	in         *input
	idx        int
	seq        int64
	start, end int64
	maxLine    int
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
	if err := j.readAt(data, lo); err != nil {
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
		lineStart := begin + bytes.LastIndexByte(data[begin:], '\n') + 1
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
			if err := j.readAt(data[old:], pos); err != nil {
				return err
			}
			if i := bytes.IndexByte(data[old:], '\n'); i >= 0 {
				data = data[:old+i+1]
				break
			}
			if len(data)-lineStart > j.maxLine {
				return &LineTooLongError{Name: in.name, Offset: lo + int64(lineStart), Max: j.maxLine}
			}
			step *= 2
		}
		if lineLen(data[lineStart:]) > j.maxLine {
			return &LineTooLongError{Name: in.name, Offset: lo + int64(lineStart), Max: j.maxLine}
		}
	}
	c.Data = data[begin:]
	c.Offset = lo + int64(begin)
	return nil
}

// readAt fills p from offset off, reporting a file that shrank since it was
// opened as ErrInputChanged.
func (j *preadJob) readAt(p []byte, off int64) error {
	n, err := j.in.f.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == io.EOF || err == nil {
		return fmt.Errorf("%s: file shrank below %d bytes while being read: %w", j.in.name, off+int64(len(p)), ErrInputChanged)
	}
	return fmt.Errorf("cannot read %q at offset %d: %w", j.in.name, off, err)
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
