package segment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// writer is the state of the group-commit goroutine (Store.run). Only that
// goroutine touches it, except closeErr, which Close reads after the
// goroutine exits, and init, which runs before it starts.
type writer struct {
	s        *Store
	active   map[partKey]*segment // by tenant and day
	dirs     map[string]bool      // tenant and day directories known to exist, relative to DIR
	nextSeq  uint64
	gen      uint64     // current batch number, for segment.gen
	touched  []*segment // segments written in the current batch
	retiring []*segment // segments rotated out during the current batch
	closeErr error

	// ckpt is the checkpoint log, nil without checkpoints; ckState is the
	// record being built. broken, once set, fails every later batch: a
	// segment or the log could not be cut back after a failed batch, so
	// only a reopen (which cuts back to the last checkpoint) can restore
	// the guarantee.
	ckpt    *checkpointLog
	ckState checkpointState
	broken  error
}

// partKey names a partition: a tenant's day.
type partKey struct {
	tenant Tenant
	day    string
}

// segment is an active segment file, open for appending.
type segment struct {
	key       partKey
	dir       string // its directory relative to DIR: "0-0/2026-11-22"
	seq       uint64
	name      string // path relative to DIR
	f         *os.File
	size      int64
	created   time.Time // Options.Now at creation, for MaxSegmentAge
	lastWrite time.Time
	dirty     bool      // written since its last fsync
	gen       uint64    // batch in which before was recorded
	before    int64     // size before that batch, for rollback
	sum       summary   // of the acknowledged lines, for the metadata
	pend      summary   // of the lines of the current batch
	meta      *metaFile // open once the first batch is acknowledged
}

func (w *writer) init(s *Store) {
	w.s = s
	w.active = make(map[partKey]*segment)
	w.dirs = make(map[string]bool)
}

// maintainEvery returns how often the writer checks idle segments' ages.
func maintainEvery(age time.Duration) time.Duration {
	return min(max(age/4, 10*time.Millisecond), time.Minute)
}

// run is the writer goroutine: it takes one batch at a time, writes and
// (SyncBatch) fsyncs it, and acknowledges it. Between batches it fsyncs
// (SyncInterval) and seals old segments. Once the store is closed and the
// queue is empty, it closes the active segments and exits.
func (s *Store) run() {
	defer close(s.writerDone)
	w := &s.w
	var syncC <-chan time.Time
	if s.o.Sync == SyncInterval {
		t := time.NewTicker(s.o.SyncInterval)
		defer t.Stop()
		syncC = t.C
	}
	mt := time.NewTicker(maintainEvery(s.o.MaxSegmentAge))
	defer mt.Stop()
	for {
		b, closed := s.take()
		if b != nil {
			w.writeBatch(b)
			// Under constant load the queue never empties: do the
			// periodic work between batches too.
			select {
			case <-syncC:
				w.syncActive()
			case <-mt.C:
				w.trim(s.o.Now())
			default:
			}
			continue
		}
		if closed {
			break
		}
		select {
		case <-s.wake:
		case <-syncC:
			w.syncActive()
		case <-mt.C:
			w.trim(s.o.Now())
		}
	}
	var errs []error
	for _, seg := range w.active {
		errs = append(errs, w.seal(seg, true, false))
	}
	clear(w.active)
	if w.ckpt != nil {
		errs = append(errs, w.ckpt.close())
	}
	w.closeErr = errors.Join(errs...)
}

// writeBatch writes b, fsyncs it in SyncBatch mode, and acknowledges it. On
// any error it rolls back every segment the batch touched and fails the
// whole batch.
func (w *writer) writeBatch(b *batch) {
	s := w.s
	if s.o.SlowWrite > 0 {
		time.Sleep(s.o.SlowWrite)
	}
	if s.o.testBeforeBatch != nil {
		s.o.testBeforeBatch()
	}
	if w.broken != nil {
		s.c.batches.Add(1)
		s.c.writeErrors.Add(1)
		s.finish(b, fmt.Errorf("segment store must be reopened after a failed rollback: %w", w.broken))
		return
	}
	now := s.o.Now()
	w.gen++
	w.touched = w.touched[:0]
	w.retiring = w.retiring[:0]

	t0 := time.Now()
	var err error
	for _, d := range b.days {
		if err = w.writeDay(d, now); err != nil {
			break
		}
	}
	t1 := time.Now()
	if err == nil && s.o.Sync == SyncBatch {
		err = w.syncTouched()
	}
	if err == nil && w.ckpt != nil {
		err = w.writeCheckpoint(b)
	}
	t2 := time.Now()
	if s.o.testBeforeAck != nil {
		s.o.testBeforeAck()
	}

	s.c.batches.Add(1)
	if err != nil {
		s.c.writeErrors.Add(1)
		s.log.Error("cannot write segment batch; failing its requests", "requests", b.reqs, "bytes", b.bytes, "err", err)
		w.rollback()
		if w.ckpt != nil && w.broken == nil {
			// Requests with marks form a sequence: a later batch must not
			// store a mark past the lines of this one.
			w.broken = err
		}
	} else {
		s.c.linesWritten.Add(b.lines)
		s.c.bytesWritten.Add(b.bytes)
	}
	info := BatchInfo{Requests: b.reqs, Lines: b.lines, Bytes: b.bytes, Segments: len(w.touched), Write: t1.Sub(t0), Err: err}
	if s.o.Sync == SyncBatch {
		info.Sync = t2.Sub(t1)
	}
	if err == nil {
		// Readers read a segment only as far as its metadata says: it
		// takes in the batch once nothing can undo it, and before the
		// acknowledgement, so that a client that sees its lines
		// acknowledged can read them.
		for _, seg := range w.touched {
			seg.sum.merge(&seg.pend)
			seg.pend = summary{}
			w.writeMeta(seg, false) // a rotated one is sealed after this
		}
	}
	if s.o.Observe != nil {
		// Before the acknowledgement, so that a client that sees its lines
		// acknowledged also sees their batch in the metrics.
		s.o.Observe(info)
	}
	s.finish(b, err)

	for _, seg := range w.retiring {
		w.seal(seg, s.o.Sync != SyncNever, true)
	}
	w.retiring = w.retiring[:0]
	w.trim(now)
}

// writeDay writes one day's lines of a batch, starting a new segment when
// the active one is too old or the next requests would take it past
// MaxSegmentBytes. It splits d only at request boundaries (d.ends) and
// writes each run of whole requests that fits with one write(2).
func (w *writer) writeDay(d *dayBuf, now time.Time) error {
	s := w.s
	off, next := 0, 0
	for off < len(d.buf) {
		key := partKey{d.tenant, d.day}
		seg := w.active[key]
		if seg != nil && now.Sub(seg.created) >= s.o.MaxSegmentAge {
			w.rotate(seg)
			seg = nil
		}
		if seg == nil {
			var err error
			if seg, err = w.create(key, now); err != nil {
				return err
			}
		}
		room := s.o.MaxSegmentBytes - seg.size
		end := next
		for end < len(d.ends) && int64(d.ends[end]-off) <= room {
			end++
		}
		if end == next {
			if seg.size > 0 {
				w.rotate(seg)
				continue
			}
			end++ // an empty segment takes one request even if it is too large
		}
		stop := d.ends[end-1]
		if err := w.write(seg, d.buf[off:stop], now); err != nil {
			return err
		}
		for k := next; k < end; k++ {
			seg.pend.addGroup(&d.sums[k])
		}
		off, next = stop, end
	}
	return nil
}

// write appends p to seg, remembering seg's size before the batch.
func (w *writer) write(seg *segment, p []byte, now time.Time) error {
	if seg.gen != w.gen {
		seg.gen = w.gen
		seg.before = seg.size
		seg.pend = summary{}
		w.touched = append(w.touched, seg)
	}
	var n int
	var err error
	if w.s.o.testWrite != nil {
		n, err = w.s.o.testWrite(seg.f, p)
	} else {
		n, err = seg.f.Write(p)
	}
	seg.size += int64(n)
	w.s.c.segmentBytes.Add(int64(n))
	seg.dirty = true
	seg.lastWrite = now
	if err != nil {
		return fmt.Errorf("cannot write segment %s: %w", seg.name, err)
	}
	return nil
}

// create starts a new active segment for a tenant's day. Outside
// SyncNever it fsyncs the directories it changed, so that the new file
// survives a power loss along with the first batch acknowledged in it.
func (w *writer) create(key partKey, now time.Time) (*segment, error) {
	s := w.s
	syncDirs := s.o.Sync != SyncNever
	tdir := tenantDirName(key.tenant)
	dir := tdir + "/" + key.day
	for _, d := range [...]struct{ name, parent string }{{tdir, "."}, {dir, tdir}} {
		if w.dirs[d.name] {
			continue
		}
		err := s.root.Mkdir(d.name, 0o755)
		if err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("cannot create directory %s: %w", d.name, err)
		}
		if err == nil && syncDirs {
			if err := syncDir(s.root, d.parent); err != nil {
				return nil, err
			}
		}
		w.dirs[d.name] = true
	}
	seq := w.nextSeq
	w.nextSeq++
	name := dir + "/" + segName(seq, kindPlain)
	f, err := s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot create segment: %w", err)
	}
	if syncDirs {
		if err := syncDir(s.root, dir); err != nil {
			f.Close()
			s.root.Remove(name)
			return nil, err
		}
	}
	seg := &segment{key: key, dir: dir, seq: seq, name: name, f: f, created: now, lastWrite: now}
	w.active[key] = seg
	s.c.activeSegments.Add(1)
	s.c.segments.Add(1)
	return seg, nil
}

// rotate takes seg out of the active set during a batch; writeBatch seals
// it once the batch is synced (or rolled back).
func (w *writer) rotate(seg *segment) {
	w.detach(seg)
	w.retiring = append(w.retiring, seg)
}

// detach removes seg from the active set if it is there.
func (w *writer) detach(seg *segment) {
	if w.active[seg.key] == seg {
		delete(w.active, seg.key)
		w.s.c.activeSegments.Add(-1)
	}
}

// syncTouched fsyncs every segment the current batch wrote.
func (w *writer) syncTouched() error {
	for _, seg := range w.touched {
		if err := w.sync(seg); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) sync(seg *segment) error {
	if !seg.dirty {
		return nil
	}
	w.s.c.syncs.Add(1)
	if err := seg.f.Sync(); err != nil {
		return fmt.Errorf("cannot sync segment %s: %w", seg.name, err)
	}
	seg.dirty = false
	return nil
}

// rollback truncates every segment the failed batch touched back to its
// size before the batch and retires it: after a failed write or fsync the
// file's state is uncertain (a failed fsync may have dropped dirty pages),
// so nothing more is appended to it. A failed truncate is logged and leaves
// unacknowledged lines, possibly a torn last one, at the end of the
// segment; compression and recovery drop a torn last line.
func (w *writer) rollback() {
	s := w.s
	for _, seg := range w.touched {
		if seg.size != seg.before {
			if err := seg.f.Truncate(seg.before); err != nil {
				s.log.Error("cannot roll back segment after a failed batch", "file", s.path(seg.name), "size", seg.size, "want_size", seg.before, "err", err)
				if w.ckpt != nil {
					w.broken = fmt.Errorf("cannot roll back segment %s: %w", seg.name, err)
				}
			} else {
				s.c.segmentBytes.Add(seg.before - seg.size)
				seg.size = seg.before
			}
		}
		if w.active[seg.key] == seg {
			w.rotate(seg)
		}
	}
}

// seal closes seg for good: it fsyncs it if sync is set and it is dirty,
// closes it, then removes it if empty or else, if compress is set, queues
// it for compression. Errors are logged and returned.
func (w *writer) seal(seg *segment, sync, compress bool) error {
	s := w.s
	w.detach(seg)
	if w.broken != nil {
		// seg may hold lines of a failed batch: leave it to the next
		// Open, which cuts it back to the checkpoint.
		if seg.meta != nil {
			seg.meta.f.Close()
			seg.meta = nil
		}
		return seg.f.Close()
	}
	var err error
	if sync {
		err = w.sync(seg)
	}
	if cerr := seg.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("cannot close segment %s: %w", seg.name, cerr)
	}
	if err != nil {
		if seg.meta != nil {
			// Its last metadata stands: readers stop at its acknowledged
			// size; the next Open seals it.
			seg.meta.f.Close()
			seg.meta = nil
		}
		s.c.writeErrors.Add(1)
		s.log.Error("cannot seal segment", "file", s.path(seg.name), "err", err)
		return err
	}
	if seg.size == 0 {
		// Created, then rolled back: leave no empty files behind.
		if seg.meta != nil {
			seg.meta.f.Close()
			seg.meta = nil
		}
		if err := s.root.Remove(seg.dir + "/" + metaName(seg.seq)); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("cannot remove the metadata of an empty segment", "file", s.path(seg.name), "err", err)
		}
		if err := s.root.Remove(seg.name); err != nil {
			s.log.Warn("cannot remove empty segment", "file", s.path(seg.name), "err", err)
			return nil
		}
		s.c.segments.Add(-1)
		if s.o.Sync != SyncNever {
			if err := syncDir(s.root, seg.dir); err != nil {
				s.log.Warn("cannot sync directory after removing an empty segment", "err", err)
			}
		}
		return nil
	}
	// Before compression, which readers of the .zst rely on it for.
	w.writeMeta(seg, true)
	if compress && !s.o.NoCompress {
		s.comp.add(seg.name)
	}
	return nil
}

// writeMeta records seg's metadata: its acknowledged size and what its
// lines hold, in its metadata file, which stays open while seg is active
// (sealed closes it). A failure is logged; readers then read the whole
// segment (sealed) or, for an active one, stop at its last recorded size.
func (w *writer) writeMeta(seg *segment, sealed bool) {
	var err error
	if seg.meta == nil {
		seg.meta, err = openMetaFile(w.s.root, seg.dir, seg.seq)
	}
	if err == nil {
		err = seg.meta.write(seg.sum.meta(seg.size, sealed))
	}
	if sealed && seg.meta != nil {
		if cerr := seg.meta.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("cannot close segment metadata: %w", cerr)
		}
		seg.meta = nil
	}
	if err != nil {
		w.s.log.Warn("cannot write segment metadata", "file", w.s.path(seg.name), "err", err)
	}
}

// trim seals, between batches, the active segments older than
// MaxSegmentAge and, beyond maxOpenDays per tenant and maxOpenSegments in
// all, the least recently written ones.
func (w *writer) trim(now time.Time) {
	s := w.s
	for _, seg := range w.active {
		if now.Sub(seg.created) >= s.o.MaxSegmentAge {
			w.seal(seg, s.o.Sync != SyncNever, true)
		}
	}
	if len(w.active) <= maxOpenDays {
		return // Fast path: no tenant can be over its limit.
	}
	perTenant := map[Tenant]int{}
	for k := range w.active {
		perTenant[k.tenant]++
	}
	for t, n := range perTenant {
		for ; n > maxOpenDays; n-- {
			w.seal(w.oldest(func(k partKey) bool { return k.tenant == t }), s.o.Sync != SyncNever, true)
		}
	}
	for len(w.active) > maxOpenSegments {
		w.seal(w.oldest(func(partKey) bool { return true }), s.o.Sync != SyncNever, true)
	}
}

// oldest returns the least recently written active segment whose key
// matches.
func (w *writer) oldest(match func(partKey) bool) *segment {
	var oldest *segment
	for k, seg := range w.active {
		if match(k) && (oldest == nil || seg.lastWrite.Before(oldest.lastWrite)) {
			oldest = seg
		}
	}
	return oldest
}

// syncActive is the SyncInterval tick: it fsyncs the dirty active
// segments. The lines are already acknowledged, so an error can only be
// logged; the segment is sealed so that nothing more is appended to it.
func (w *writer) syncActive() {
	for _, seg := range w.active {
		if err := w.sync(seg); err != nil {
			w.s.c.writeErrors.Add(1)
			w.s.log.Error("cannot sync segment; acknowledged lines may be lost on power failure", "err", err)
			w.seal(seg, false, true)
		}
	}
}

// path returns name (relative to DIR) as a path including DIR, for logs.
func (s *Store) path(name string) string { return filepath.Join(s.dir, name) }
