package fileread

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spate-io/spate/internal/bytesutil"
)

// chunkBuf is a pooled chunk buffer. Use getChunkBuf and putChunkBuf.
type chunkBuf struct{ b []byte }

var chunkBufPool sync.Pool

// getChunkBuf returns a buffer with len(b) == size at least.
func getChunkBuf(size int) *chunkBuf {
	cb, _ := chunkBufPool.Get().(*chunkBuf)
	if cb == nil {
		cb = &chunkBuf{}
	}
	cb.b = growBuf(cb.b[:0], size)
	return cb
}

// putChunkBuf returns cb to the pool; cb must not be used afterwards.
func putChunkBuf(cb *chunkBuf) {
	cb.b = cb.b[:0]
	chunkBufPool.Put(cb)
}

// seqJob hands out a chunk that the producer has already read.
type seqJob struct {
	buf    *chunkBuf
	data   []byte
	c      Chunk
	tokens chan struct{} // read-ahead slots of the input; one is returned on release
}

func (j *seqJob) load(_ *worker, c *Chunk) error {
	*c = j.c
	c.Data = j.data
	return nil
}

func (j *seqJob) release() {
	putChunkBuf(j.buf)
	j.tokens <- struct{}{}
}

// produceSeq reads r from start to end on the producer goroutine, filling
// chunk buffers and carrying each chunk's partial last line into the next.
//
// The number of chunks in flight bounds memory: Bufio allows one per worker,
// so with one worker it reads, then waits while the chunk is processed, like
// a plain read loop; Stream allows two more, so it reads ahead of the workers.
//
// With Config.SkipLongLines, buffers hold at most maxLine+1 bytes, so every
// whole line in a buffer is short enough and an over-long line shows up as a
// full buffer with no '\n'; it is read past in that buffer (skipSeqLine) and
// reported in a chunk of its own.
//
// It returns the number of bytes read (decompressed, for compressed input).
func (s *scanner) produceSeq(idx int, in *input, st Strategy, r io.Reader) (int64, error) {
	chunkSize := s.cfg.chunkSize(st)
	if in.regular && in.compression == None {
		chunkSize = int(min(int64(chunkSize), max(in.size, 1)))
	}
	maxLine := s.cfg.maxLine()
	skipLong := s.cfg.SkipLongLines
	bufSize := func(n int) int {
		if skipLong {
			return min(n, maxLine+1)
		}
		return n
	}
	slots := s.cfg.workers()
	if st == Stream {
		slots += 2
	}
	tokens := make(chan struct{}, slots)
	for range slots {
		tokens <- struct{}{}
	}

	var carry []byte // the partial line at the end of the previous chunk
	var off, seq int64
	// read marks c with the compressed bytes read since the chunk before
	// (Chunk.FileBytes) for a compressed input.
	var lastRead int64
	read := func(c Chunk) Chunk {
		if in.consumed != nil {
			now := in.consumed()
			c.read, c.compressed = now-lastRead, true
			lastRead = now
		}
		return c
	}
	for {
		select {
		case <-tokens:
		case <-s.ctx.Done():
			return 0, nil
		}
		began := time.Now()
		cb := getChunkBuf(bufSize(max(chunkSize, 2*len(carry))))
		buf := cb.b
		n := copy(buf, carry)
		firstNL := -1 // index of the first '\n' in buf[:n]
		for {
			m, err := Fill(r, buf[n:])
			if firstNL < 0 {
				if i := bytes.IndexByte(buf[n:n+m], '\n'); i >= 0 {
					firstNL = n + i
				}
			}
			n += m
			if skipLong && firstNL < 0 && n > maxLine && (err == nil || err == io.EOF) {
				// Slow path: the line at off is too long; skip it and keep
				// what follows it at the start of buf.
				skipped, length, rest, rerr := skipSeqLine(r, buf, n, err)
				if rerr != nil && rerr != io.EOF {
					putChunkBuf(cb)
					return 0, seqReadError(in, off+skipped, rerr)
				}
				s.skipped(LongLine{Input: idx, Name: in.name, Offset: off, Length: length})
				if !s.send(&skipJob{c: read(Chunk{Input: idx, Name: in.name, Seq: seq, Offset: off, Skip: skipped, Strategy: st})}) {
					putChunkBuf(cb)
					return 0, nil
				}
				off += skipped
				seq++
				n, err = rest, rerr
				firstNL = bytes.IndexByte(buf[:n], '\n')
			}
			if err == io.EOF {
				// The input's end: hand out everything, then stop.
				if err := checkSeqLines(in, buf[:n], firstNL, off, maxLine, true); err != nil {
					putChunkBuf(cb)
					return 0, err
				}
				if in.regular && in.compression == None && off+int64(n) < in.size {
					putChunkBuf(cb)
					return 0, fmt.Errorf("%s: file shrank to %d bytes while being read (it had %d): %w", in.name, off+int64(n), in.size, ErrInputChanged)
				}
				if n == 0 {
					putChunkBuf(cb)
					tokens <- struct{}{}
					return off, nil
				}
				s.send(&seqJob{buf: cb, data: buf[:n], tokens: tokens, c: read(Chunk{Input: idx, Name: in.name, Seq: seq, Offset: off, Strategy: st})})
				return off + int64(n), nil
			}
			if err != nil {
				putChunkBuf(cb)
				return 0, seqReadError(in, off+int64(n), err)
			}
			if firstNL >= 0 {
				break
			}
			if n < len(buf) {
				continue // a live input paused mid-line: wait for the rest
			}
			// Slow path: no line ends in a full buffer; grow it.
			if n > maxLine {
				putChunkBuf(cb)
				return 0, &LineTooLongError{Name: in.name, Offset: off, Max: maxLine}
			}
			cb.b = growBuf(buf, bufSize(2*len(buf)))
			buf = cb.b
		}
		last := bytesutil.LastIndexByte(buf[:n], '\n')
		if err := checkSeqLines(in, buf[:last+1], firstNL, off, maxLine, false); err != nil {
			putChunkBuf(cb)
			return 0, err
		}
		carry = append(carry[:0], buf[last+1:n]...)
		if s.cfg.Pace != nil {
			s.cfg.Pace(s.ctx, time.Since(began))
		}
		if !s.send(&seqJob{buf: cb, data: buf[:last+1], tokens: tokens, c: read(Chunk{Input: idx, Name: in.name, Seq: seq, Offset: off, Strategy: st})}) {
			return 0, nil
		}
		off += int64(last + 1)
		seq++
	}
}

// skipSeqLine reads r past the rest of a line whose first n bytes fill
// buf[:n] (err is the error that read them: nil or io.EOF), reusing buf. It
// returns the line's bytes skipped (with its '\n'), its length without the
// '\n', and how many bytes read after the line it moved to the start of buf,
// with the error of the last read (nil, io.EOF or a failure).
func skipSeqLine(r io.Reader, buf []byte, n int, err error) (skipped, length int64, rest int, rerr error) {
	skipped = int64(n)
	for err == nil {
		var m int
		m, err = Fill(r, buf)
		if i := bytes.IndexByte(buf[:m], '\n'); i >= 0 {
			skipped += int64(i + 1)
			return skipped, skipped - 1, copy(buf, buf[i+1:m]), err
		}
		skipped += int64(m)
	}
	return skipped, skipped, 0, err
}

// checkSeqLines checks the lines of a chunk that could exceed maxLine: the
// first (it may continue a line carried over from earlier chunks) and, at the
// input's end, the last. Lines in between are shorter than the buffer grown
// to find the first line's end, which never exceeds maxLine.
func checkSeqLines(in *input, data []byte, firstNL int, off int64, maxLine int, atEOF bool) error {
	if firstNL < 0 {
		firstNL = len(data)
	}
	if firstNL > maxLine {
		return &LineTooLongError{Name: in.name, Offset: off, Max: maxLine}
	}
	if atEOF {
		start := bytesutil.LastIndexByte(data, '\n') + 1
		if len(data)-start > maxLine {
			return &LineTooLongError{Name: in.name, Offset: off + int64(start), Max: maxLine}
		}
	}
	return nil
}

func seqReadError(in *input, off int64, err error) error {
	if in.compression != None {
		return fmt.Errorf("%s: cannot read %s input near decompressed offset %d (truncated or corrupt?): %w", in.name, in.compression, off, err)
	}
	return fmt.Errorf("cannot read %q at offset %d: %w", in.name, off, err)
}

// Fill reads into p until it is full or r fails. Unlike io.ReadFull it
// returns io.EOF only for a clean end of r, so that a truncated compressed
// stream's io.ErrUnexpectedEOF stays an error.
//
// From a live input (a pipe or stdin, see liveReader) it returns early,
// with no error, once it holds some bytes and none came for LiveFlush.
func Fill(r io.Reader, p []byte) (int, error) {
	n, empty := 0, 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err == errIdle {
			if n > 0 {
				return n, nil
			}
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			if empty++; empty == 100 {
				return n, io.ErrNoProgress
			}
		}
	}
	return n, nil
}
