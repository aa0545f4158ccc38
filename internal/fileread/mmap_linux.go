package fileread

import (
	"bytes"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/spate-io/spate/internal/bytesutil"
	"golang.org/x/sys/unix"
)

const mmapSupported = true

// window is one read-only mapping of part of a file. It is unmapped when the
// last reference (the producer's, then one per chunk) is released.
//
// Risks (see README, "mmap"): a fault on a page of a file truncated under the
// mapping raises SIGBUS; scan goroutines run with debug.SetPanicOnFault so it
// surfaces as ErrInputChanged. A page fault holds the goroutine's P: on a cold
// cache, MADV_WILLNEED starts the read-ahead of the next window early.
type window struct {
	data  []byte // the mapping; no slice of it may be used after unmap
	refs  atomic.Int32
	slots chan struct{} // the producer's windows-in-flight limit
}

func (w *window) acquire() { w.refs.Add(1) }

func (w *window) release() {
	if w.refs.Add(-1) == 0 {
		_ = unix.Munmap(w.data) // cannot fail for a mapping we made
		w.data = nil
		w.slots <- struct{}{}
	}
}

// mapWindow maps a window; a variable so tests can make mmap fail.
var mapWindow = mapRange

// mapRange maps length bytes of f from off (a multiple of the page size)
// read-only and advises the kernel to read it sequentially.
func mapRange(f *os.File, off, length int64) ([]byte, error) {
	data, err := unix.Mmap(int(f.Fd()), off, int(length), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	_ = unix.Madvise(data, unix.MADV_SEQUENTIAL) // advice only
	_ = unix.Madvise(data, unix.MADV_WILLNEED)   // start read-ahead now
	return data, nil
}

// produceMmap maps the file window by window, splits each window into
// newline-aligned chunks and hands them out as slices of the mapping. At most
// mmapWindowsAhead+1 windows are mapped at once, which bounds RSS.
func (s *scanner) produceMmap(idx int, in *input) error {
	winSize := s.cfg.MmapWindow
	if winSize == 0 {
		winSize = DefaultMmapWindow
	}
	if winSize < 0 {
		winSize = in.size
	}
	winSize = max((winSize+pageSize-1)/pageSize*pageSize, pageSize)
	chunk := s.cfg.chunkSize(Mmap)
	maxLine := s.cfg.maxLine()
	slots := make(chan struct{}, mmapWindowsAhead+1)
	for range mmapWindowsAhead + 1 {
		slots <- struct{}{}
	}

	var seq int64
	for off := int64(0); off < in.size; {
		select {
		case <-slots:
		case <-s.ctx.Done():
			return nil
		}
		mapOff := off / pageSize * pageSize
		length := winSize
		var data []byte // the mapping, from mapOff
		var end int     // lines to hand out: data[off-mapOff:end]
		for {
			length = min(length, in.size-mapOff)
			var err error
			if data, err = mapWindow(in.f, mapOff, length); err != nil {
				slots <- struct{}{}
				return &mmapFailedError{name: in.name, off: mapOff, first: seq == 0, err: err}
			}
			lines := data[off-mapOff:]
			if mapOff+length == in.size {
				end = len(data)
				break
			}
			if i := bytesutil.LastIndexByte(lines, '\n'); i >= 0 {
				end = int(off-mapOff) + i + 1
				break
			}
			// Slow path: the line at off does not end in this window.
			_ = unix.Munmap(data)
			if len(lines) > maxLine {
				slots <- struct{}{}
				if !s.cfg.SkipLongLines {
					return &LineTooLongError{Name: in.name, Offset: off, Max: maxLine}
				}
				data = nil
				break
			}
			length *= 2
		}
		if data == nil {
			// Skip the over-long line at off, reading past the rest of it
			// (from the end of the last mapping, which holds no '\n').
			next, err := s.skipMmapLine(idx, in, off, mapOff+length, seq)
			if err != nil || next < 0 {
				return err
			}
			seq++
			off = next
			continue
		}
		win := &window{data: data, slots: slots}
		win.refs.Store(1)
		err := s.splitWindow(idx, in, win, off-mapOff, end, mapOff, chunk, maxLine, &seq)
		win.release()
		if err != nil {
			return err
		}
		off = mapOff + int64(end)
	}
	return nil
}

// skipMmapLine skips the over-long line that starts at off and has no '\n'
// before from, reading the rest of it in bounded reads. It hands out a chunk
// that reports the skipped bytes and returns where the next line starts, or
// -1 if the scan was cancelled.
func (s *scanner) skipMmapLine(idx int, in *input, off, from, seq int64) (int64, error) {
	cb := getChunkBuf(skipReadSize)
	next, newline, err := in.skipLine(from, cb.b)
	putChunkBuf(cb)
	if err != nil {
		return 0, err
	}
	length := next - off
	if newline {
		length--
	}
	s.skipped(LongLine{Input: idx, Name: in.name, Offset: off, Length: length})
	if !s.send(&skipJob{c: Chunk{Input: idx, Name: in.name, Seq: seq, Offset: off, Skip: next - off, Strategy: Mmap}}) {
		return -1, nil
	}
	return next, nil
}

// splitWindow hands out win.data[from:end] as chunks of about chunk bytes
// that end on line boundaries, checking the length of every line that
// crosses a chunk boundary. With Config.SkipLongLines, a chunk ends before an
// over-long line and reports it in Chunk.Skip.
func (s *scanner) splitWindow(idx int, in *input, win *window, from int64, end int, mapOff int64, chunk, maxLine int, seq *int64) error {
	data := win.data[:end]
	for p := int(from); p < end; {
		q := p + chunk
		dataEnd := -1 // where Data stops before a skipped line; -1: at q
		if q >= end {
			q = end
			if mapOff+int64(end) == in.size && data[end-1] != '\n' {
				// The input's last line, with no final newline.
				if ls := bytesutil.LastIndexByte(data[p:], '\n') + 1 + p; end-ls > maxLine {
					if !s.cfg.SkipLongLines {
						return &LineTooLongError{Name: in.name, Offset: mapOff + int64(ls), Max: maxLine}
					}
					s.skipped(LongLine{Input: idx, Name: in.name, Offset: mapOff + int64(ls), Length: int64(end - ls)})
					dataEnd = ls
				}
			}
		} else {
			ls := bytesutil.LastIndexByte(data[p:q], '\n') + 1 + p // start of the line crossing q
			le := end
			if i := bytes.IndexByte(data[q:], '\n'); i >= 0 {
				le = q + i
			}
			if le-ls > maxLine {
				if !s.cfg.SkipLongLines {
					return &LineTooLongError{Name: in.name, Offset: mapOff + int64(ls), Max: maxLine}
				}
				s.skipped(LongLine{Input: idx, Name: in.name, Offset: mapOff + int64(ls), Length: int64(le - ls)})
				dataEnd = ls
			}
			q = min(le+1, end)
		}
		c := Chunk{Input: idx, Name: in.name, Seq: *seq, Offset: mapOff + int64(p), Strategy: Mmap}
		jdata := data[p:q]
		if dataEnd >= 0 {
			jdata = data[p:dataEnd]
			c.Skip = int64(q - dataEnd)
		}
		win.acquire()
		j := &mmapJob{win: win, data: jdata, c: c}
		if !s.send(j) {
			return nil
		}
		*seq++
		p = q
	}
	return nil
}

// mmapJob hands out a slice of a window.
type mmapJob struct {
	win  *window
	data []byte
	c    Chunk
}

func (j *mmapJob) load(_ *worker, c *Chunk) error {
	*c = j.c
	c.Data = j.data
	return nil
}

func (j *mmapJob) release() { j.win.release() }

// Mapping is a whole file mapped read-only, for callers that want the raw
// bytes (the benchmark's ceiling row). Bytes are valid until Close.
type Mapping struct {
	Bytes []byte
}

// MapFile maps the whole of path read-only. With populate, the kernel fills
// the page tables for the whole file up front (MAP_POPULATE), reading it
// from disk if needed, so that later accesses take no page faults. An empty
// file gives an empty Mapping. A fault on the mapping (the file truncated)
// raises SIGBUS unless the reading goroutine runs with
// debug.SetPanicOnFault.
func MapFile(path string, populate bool) (*Mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open input: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot stat %q: %w", path, err)
	}
	if fi.Size() == 0 {
		return &Mapping{}, nil
	}
	flags := unix.MAP_SHARED
	if populate {
		flags |= unix.MAP_POPULATE
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, flags)
	if err != nil {
		return nil, fmt.Errorf("cannot mmap %q: %w", path, err)
	}
	return &Mapping{Bytes: data}, nil
}

// Close unmaps m. No slice of m.Bytes may be used afterwards.
func (m *Mapping) Close() error {
	if m.Bytes == nil {
		return nil
	}
	err := unix.Munmap(m.Bytes)
	m.Bytes = nil
	return err
}
