package benchwrite

// iovMax is the most iovecs one writev(2) takes on Linux (UIO_MAXIOV,
// sysconf(_SC_IOV_MAX)); more fail with EINVAL.
const iovMax = 1024

// writevWriter collects a batch's records as references, without copying,
// and hands them to the kernel with writev(2) at the batch end: one call
// per batch of up to iovMax records, more for bigger batches or after a
// short write. The records must stay unchanged until endBatch returns.
type writevWriter struct {
	f      *file
	mode   SyncMode
	iovMax int
	bufs   [][]byte // the batch's records, reused between batches
}

func newWritevWriter(f *file, mode SyncMode, max int) *writevWriter {
	if max <= 0 {
		max = iovMax
	}
	return &writevWriter{f: f, mode: mode, iovMax: max}
}

func (w *writevWriter) write(p []byte) error {
	w.bufs = append(w.bufs, p)
	return nil
}

// flush writes every collected record. A short write leaves the kernel
// part of the way through the iovecs: drop the ones written in full, trim
// the one written in part, and go on from there.
func (w *writevWriter) flush() error {
	bufs := w.bufs
	defer func() {
		clear(w.bufs) // drop the references to the records
		w.bufs = w.bufs[:0]
	}()
	for len(bufs) > 0 {
		n, err := w.f.writev(bufs[:min(len(bufs), w.iovMax)])
		if err != nil {
			return err
		}
		if n == 0 {
			return errShortWrite // or only empty records were left, which never happens
		}
		for n > 0 {
			if n < len(bufs[0]) {
				bufs[0] = bufs[0][n:]
				break
			}
			n -= len(bufs[0])
			bufs = bufs[1:]
		}
	}
	return nil
}

func (w *writevWriter) endBatch() error {
	if err := w.flush(); err != nil {
		return err
	}
	if w.mode == SyncBatch {
		return w.f.datasync()
	}
	return nil
}

func (w *writevWriter) finish() error {
	if err := w.flush(); err != nil { // nothing left after the last endBatch
		return err
	}
	if w.mode == SyncEnd {
		return w.f.datasync()
	}
	return nil
}
