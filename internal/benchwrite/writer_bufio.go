package benchwrite

import "bufio"

// bufioWriter copies records into a bufio.Writer whose flushes reach the
// file as one write(2) of a full buffer; a record that straddles the
// buffer's end is split across two flushes. In SyncBatch mode the buffer is
// flushed, partly full, at every batch end before the sync.
type bufioWriter struct {
	f    *file
	b    *bufio.Writer
	mode SyncMode
}

// newBufioWriter allocates the buffer; the caller does this before timing.
func newBufioWriter(f *file, mode SyncMode, size int) *bufioWriter {
	return &bufioWriter{f: f, b: bufio.NewWriterSize(f, size), mode: mode}
}

func (w *bufioWriter) write(p []byte) error {
	_, err := w.b.Write(p)
	return err
}

func (w *bufioWriter) endBatch() error {
	if w.mode != SyncBatch {
		return nil
	}
	if err := w.b.Flush(); err != nil {
		return err
	}
	return w.f.datasync()
}

func (w *bufioWriter) finish() error {
	if err := w.b.Flush(); err != nil {
		return err
	}
	if w.mode == SyncEnd {
		return w.f.datasync()
	}
	return nil
}
