package benchwrite

// writeWriter issues one write(2) per record: the unbuffered baseline the
// write-ups call "per-record write()". Each record costs a system call
// (about a microsecond of kernel entry, locking and page-cache copy)
// whatever its size.
type writeWriter struct {
	f    *file
	mode SyncMode
}

func (w *writeWriter) write(p []byte) error {
	_, err := w.f.Write(p)
	return err
}

func (w *writeWriter) endBatch() error {
	if w.mode == SyncBatch {
		return w.f.datasync()
	}
	return nil
}

func (w *writeWriter) finish() error {
	if w.mode == SyncEnd {
		return w.f.datasync()
	}
	return nil
}
