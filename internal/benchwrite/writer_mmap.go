package benchwrite

import (
	"errors"
	"os"
)

// mmapStep is how much the mmap writer grows the file at a time, and the
// size of each mapping: 64 MiB (a multiple of any page size).
const mmapStep = 64 << 20

// mmapWriter appends by copying records into a shared writable mapping of
// the file. The file is grown a step at a time with fallocate(2), or with
// ftruncate(2) where the file system cannot preallocate (the file is then
// sparse and a store the file system cannot back raises SIGBUS); each step
// is mapped on its own and unmapped when full, so at most one step of file
// pages is mapped at once. At the end the file is cut to the bytes written.
//
// Durability: in SyncBatch mode every batch end msyncs (MS_SYNC) the pages
// dirtied since the previous one, and a full mapping is msynced before it
// is unmapped. msync cannot reach pages that are no longer mapped, so
// SyncEnd (and the end of SyncBatch, which must make the final size
// durable) uses one fdatasync after the final ftruncate, which writes the
// pages dirtied through any mapping of the file.
type mmapWriter struct {
	f    *file
	mode SyncMode
	step int64

	win      []byte // the current mapping, of file bytes [winOff, winOff+len(win))
	winOff   int64
	pos      int   // bytes written into win
	synced   int64 // file offset up to which the data is msynced (SyncBatch)
	grow     string
	noFalloc bool // fallocate failed as unsupported: grow with ftruncate
}

func newMmapWriter(f *file, mode SyncMode, step int64) *mmapWriter {
	if step <= 0 {
		step = mmapStep
	}
	if ps := int64(os.Getpagesize()); step%ps != 0 {
		step += ps - step%ps
	}
	return &mmapWriter{f: f, mode: mode, step: step, grow: "fallocate"}
}

func (w *mmapWriter) write(p []byte) error {
	for len(p) > 0 {
		if w.pos == len(w.win) {
			if err := w.next(); err != nil {
				return err
			}
		}
		n := copy(w.win[w.pos:], p)
		w.pos += n
		p = p[n:]
	}
	return nil
}

// next retires the full mapping, if any, grows the file by a step and maps
// the new step.
func (w *mmapWriter) next() error {
	off := int64(0)
	if w.win != nil {
		off = w.winOff + int64(len(w.win))
		if err := w.retire(); err != nil {
			return err
		}
	}
	if err := w.growTo(off, w.step); err != nil {
		return err
	}
	win, err := w.f.mmap(off, int(w.step))
	if err != nil {
		return err
	}
	w.win, w.winOff, w.pos = win, off, 0
	return nil
}

// growTo extends the file to off+n bytes, preallocated where possible.
func (w *mmapWriter) growTo(off, n int64) error {
	if !w.noFalloc {
		err := w.f.fallocate(off, n)
		if !errors.Is(err, errNoFallocate) {
			return err
		}
		w.noFalloc, w.grow = true, "ftruncate" // Slow path: once per file
	}
	return w.f.ftruncate(off + n)
}

// syncDirty msyncs the current mapping's bytes from the last synced offset
// to pos; msync takes a page-aligned start.
func (w *mmapWriter) syncDirty() error {
	end := w.winOff + int64(w.pos)
	if w.win == nil || w.synced >= end {
		return nil
	}
	from := max(w.synced-w.winOff, 0)
	from -= from % int64(os.Getpagesize())
	if err := w.f.msync(w.win[from:w.pos]); err != nil {
		return err
	}
	w.synced = end
	return nil
}

// retire unmaps the current mapping, msyncing it first in SyncBatch mode.
func (w *mmapWriter) retire() error {
	if w.mode == SyncBatch {
		if err := w.syncDirty(); err != nil {
			return err
		}
	}
	err := w.f.munmap(w.win)
	w.win = nil
	return err
}

func (w *mmapWriter) endBatch() error {
	if w.mode == SyncBatch {
		return w.syncDirty()
	}
	return nil
}

func (w *mmapWriter) finish() error {
	size := int64(0)
	if w.win != nil {
		size = w.winOff + int64(w.pos)
		if err := w.retire(); err != nil {
			return err
		}
	}
	if err := w.f.ftruncate(size); err != nil {
		return err
	}
	if w.mode != SyncNone {
		return w.f.datasync()
	}
	return nil
}
