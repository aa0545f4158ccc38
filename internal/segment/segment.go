package segment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spate-io/spate/internal/segindex"
)

// Error classes. Append and Open wrap them with context; test with errors.Is.
var (
	// ErrClosed: the store is closed (or closing) and took nothing.
	ErrClosed = errors.New("segment store is closed")
	// ErrQueueFull: the request does not fit in the queue right now
	// (Options.MaxQueueBytes); nothing was enqueued, retry later. HTTP: 429
	// with Retry-After. Append returns it unwrapped, so that rejecting a
	// request under overload does not allocate.
	ErrQueueFull = errors.New("segment queue is full")
	// ErrTooLarge: the request is larger than Options.MaxQueueBytes and
	// can never be enqueued. HTTP: 413.
	ErrTooLarge = errors.New("request is larger than the segment queue")
	// ErrInvalid: a Group has a malformed Day or Lines that do not end with
	// '\n'. HTTP: 400.
	ErrInvalid = errors.New("invalid segment records")
	// ErrLocked: another Store (in this or another process) has the
	// directory open.
	ErrLocked = errors.New("segment directory is locked by another store")
)

// SyncMode says when the writer fsyncs, and so what an acknowledged Append
// survives. See the package doc ("Durability").
type SyncMode uint8

// The sync modes.
const (
	// SyncBatch acknowledges a batch only after every segment it touched is
	// fsynced: acknowledged lines survive a power loss. The default.
	SyncBatch SyncMode = iota
	// SyncInterval acknowledges after write(2) and fsyncs the active
	// segments every Options.SyncInterval: a power loss may lose up to
	// that much acknowledged data.
	SyncInterval
	// SyncNever acknowledges after write(2) and leaves flushing to the
	// kernel (and Close).
	SyncNever
)

var syncModeNames = [...]string{SyncBatch: "batch", SyncInterval: "interval", SyncNever: "never"}

// String returns the name ParseSyncMode accepts.
func (m SyncMode) String() string {
	if int(m) < len(syncModeNames) {
		return syncModeNames[m]
	}
	return fmt.Sprintf("SyncMode(%d)", uint8(m))
}

// ParseSyncMode returns the sync mode called s: "batch", "interval" or
// "never".
func ParseSyncMode(s string) (SyncMode, error) {
	for m, name := range syncModeNames {
		if s == name {
			return SyncMode(m), nil
		}
	}
	return 0, fmt.Errorf("unknown sync mode %q: want one of batch, interval, never", s)
}

// Defaults for the zero fields of Options.
const (
	DefaultSyncInterval    = time.Second
	DefaultMaxSegmentBytes = 128 << 20
	DefaultMaxSegmentAge   = time.Hour
	DefaultMaxQueueBytes   = 64 << 20
	// DefaultCompressDelay: a burst of ingestion (a 1 GiB upload takes
	// about 2.5 s here) has the disk to itself, since compression writes
	// and fsyncs too; under steady load compression runs this far behind.
	DefaultCompressDelay = 5 * time.Second
)

// maxBatchBytes caps one batch (one write per day, one fsync per segment)
// so that queue space frees in steps while the writer works through a full
// queue. A single larger request still forms a batch of its own.
const maxBatchBytes = 8 << 20

// maxOpenDays is how many days of one tenant may have an active segment
// at once, and maxOpenSegments how many segments may be active in all;
// after a batch, the least recently written ones beyond them are sealed.
// Lines are partitioned by the caller's day, so late data can open old
// days.
const (
	maxOpenDays     = 4
	maxOpenSegments = 256
)

// Options configure a Store. The zero value means the defaults.
type Options struct {
	// Sync is when to fsync; the zero value is SyncBatch.
	Sync SyncMode
	// SyncInterval is the fsync period for SyncInterval; default 1s.
	SyncInterval time.Duration
	// MaxSegmentBytes: a segment is sealed and a new one started when the
	// next request's lines for its day would take it past this size; default
	// 128 MiB. One request's lines for one day are never split, so a
	// segment exceeds it only when it holds a single request larger than
	// the limit.
	MaxSegmentBytes int64
	// MaxSegmentAge: a segment is sealed once this long after it was
	// created (checked before each write to it and in the background);
	// default 1h.
	MaxSegmentAge time.Duration
	// MaxQueueBytes bounds the bytes enqueued and not yet acknowledged,
	// including the batch being written; default 64 MiB. See Append.
	MaxQueueBytes int64
	// Checkpoint makes the store keep a checkpoint (DIR/.checkpoint) with
	// every batch, so that the marks requests carry (EnqueueMarked) and the
	// lines are one atomic unit: after a crash, Open cuts the segments back
	// to the last checkpoint and Marks returns its marks. See the package
	// doc ("Checkpoints"). A store whose DIR has a checkpoint keeps them
	// whatever this says.
	Checkpoint bool
	// NoCompress leaves sealed segments as plain .ndjson instead of
	// compressing them with zstd in the background.
	NoCompress bool
	// IndexLines, if set, reads lines for the sidecar index written beside
	// each compressed segment (see package segindex), as the query engine
	// reads them: the caller passes query.IndexLines (segment cannot import
	// the query engine). Without it no sidecars are written. Compressed
	// segments without a valid sidecar are reindexed at Open.
	IndexLines segindex.LineReader
	// IndexNumbers, with IndexLines, parses values as the query engine
	// does for numeric filters (query.IndexNumbers), so that sidecars hold
	// each block's numeric ranges.
	IndexNumbers func(string) (float64, bool)
	// CompressDelay is how long a sealed segment stays plain before it is
	// compressed, so that a burst of writes has the disk to itself;
	// default 5s, and a negative value compresses at once.
	CompressDelay time.Duration
	// Logger receives recovery actions, write errors and compression
	// events; nil means slog.Default().
	Logger *slog.Logger
	// Now returns the current time for segment ages; nil means time.Now.
	// Days come from the caller (Group.Day), never from Now.
	Now func() time.Time
	// Observe, if set, is called by the writer goroutine after each batch
	// is written, just before its requests get their result: keep it short
	// (update counters, no I/O), it delays the acknowledgement. It must not
	// call Append or Close, which wait for the writer; Stats is fine.
	Observe func(BatchInfo)

	// SlowWrite makes the writer sleep this long before each batch: a slow
	// disk, for overload tests and demos of backpressure. Zero in
	// production.
	SlowWrite time.Duration
	// testBeforeBatch, if set, is called by the writer before it writes each
	// batch; tests block in it to stall the writer.
	testBeforeBatch func()
	// testRemoveDelay, if not zero, replaces defaultRemoveDelay; negative
	// means none.
	testRemoveDelay time.Duration
	// testBeforeAck, if set, is called by the writer once a batch is
	// written (and fsynced), before it is acknowledged.
	testBeforeAck func()
	// testCheckpoint, if set, is called before each checkpoint record is
	// written; an error it returns fails the record as a write would.
	testCheckpoint func() error
	// testWrite, if set, replaces f.Write for segment data; tests inject
	// short writes and errors with it.
	testWrite func(f *os.File, p []byte) (int, error)
}

// withDefaults returns o with zero fields set to their defaults, or an
// error for negative values.
func (o Options) withDefaults() (Options, error) {
	if o.SyncInterval < 0 || o.MaxSegmentBytes < 0 || o.MaxSegmentAge < 0 || o.MaxQueueBytes < 0 {
		return o, fmt.Errorf("cannot use negative sizes or durations in segment options")
	}
	if o.Sync > SyncNever {
		return o, fmt.Errorf("cannot use sync mode %s", o.Sync)
	}
	if o.SyncInterval == 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	if o.MaxSegmentBytes == 0 {
		o.MaxSegmentBytes = DefaultMaxSegmentBytes
	}
	if o.MaxSegmentAge == 0 {
		o.MaxSegmentAge = DefaultMaxSegmentAge
	}
	if o.MaxQueueBytes == 0 {
		o.MaxQueueBytes = DefaultMaxQueueBytes
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// BatchInfo describes one batch the writer finished, for Options.Observe.
type BatchInfo struct {
	Requests int           // Append calls in the batch
	Lines    int64         // lines in the batch
	Bytes    int64         // bytes in the batch
	Segments int           // segment files written (one or more per day)
	Write    time.Duration // time in write(2), including opening new segments
	Sync     time.Duration // time in fsync; zero unless Sync is SyncBatch
	Err      error         // non-nil if the batch failed: nothing in it was acknowledged
}

// Group is one tenant's lines of one day in an Append request.
type Group struct {
	// Tenant is the data set; its segments live in their own directory.
	Tenant Tenant
	// Day is the partition, a UTC date in DayLayout form ("2026-11-22");
	// DayOf makes one from a time.
	Day string
	// Lines holds complete lines, each ending in '\n', written byte for
	// byte. The store does not look inside the lines: an empty line or
	// invalid JSON is written as given. A Group with empty Lines is
	// skipped.
	Lines []byte

	// What the caller knows of the lines, for the metadata of the segment
	// they land in (see Meta), which readers use to skip segments: when
	// HasTime is set, MinTime and MaxTime bound their times (Unix ns);
	// Streams lists their distinct _stream values ("{}" for lines without
	// one), or is nil when unknown. The store keeps its own copy of the
	// slice, not of the strings.
	MinTime, MaxTime int64
	HasTime          bool
	Streams          []string
}

// Stats is a snapshot of a Store's counters. Counters ("total") start at
// zero at Open.
type Stats struct {
	QueueBytes    int64 // bytes enqueued and not yet acknowledged or failed
	QueueRequests int   // requests enqueued and not yet acknowledged or failed

	ActiveSegments  int   // segments open for writing (at most one per day)
	Segments        int   // segments in DIR, active, sealed or compressed, each counted once
	SegmentBytes    int64 // their size on disk (compressed size for .zst)
	CompressPending int   // sealed segments waiting for or in compression

	LinesWritten int64 // total lines acknowledged
	BytesWritten int64 // total bytes acknowledged
	Batches      int64 // total batches written, failed ones included
	Syncs        int64 // total file fsyncs (directory fsyncs not counted)
	WriteErrors  int64 // total failed batches and failed background fsyncs
}

// counters are the Stats the writer and compressor update.
type counters struct {
	activeSegments atomic.Int64
	segments       atomic.Int64
	segmentBytes   atomic.Int64
	linesWritten   atomic.Int64
	bytesWritten   atomic.Int64
	batches        atomic.Int64
	syncs          atomic.Int64
	writeErrors    atomic.Int64
}

// Store appends NDJSON lines to day-partitioned segment files under one
// directory. Its methods are safe for concurrent use.
type Store struct {
	dir    string
	root   *os.Root
	o      Options
	log    *slog.Logger
	unlock func() error
	c      counters
	comp   *compressor

	// batchCap is the size at which Append starts a new batch:
	// min(maxBatchBytes, MaxQueueBytes).
	batchCap int64

	mu         sync.Mutex
	closed     bool
	pending    []*batch // oldest first; Append adds to the last
	queueBytes int64    // in pending and in the batch being written
	queueReqs  int
	free       []*dayBuf // reusable day buffers; see putDayBuf
	// room is closed (and replaced) whenever queue space is freed or the
	// store closes; Enqueue callers waiting for room select on it.
	room    chan struct{}
	waiters int // Enqueue calls waiting for room

	wake       chan struct{} // capacity 1: work is pending or the store is closing
	writerDone chan struct{} // closed when the writer goroutine has exited
	w          writer        // owned by the writer goroutine

	closeOnce sync.Once
	closeErr  error

	// checkpointed is set at Open and never changes; the writer owns
	// w.ckpt, which it replaces when it rewrites the log.
	checkpointed bool
	// marks are the acknowledged marks (see Mark); nil without checkpoints.
	marksMu sync.Mutex
	marks   map[string]int64
}

// Open opens the store in dir, creating dir if needed, and starts its
// writer and compressor goroutines. It takes an exclusive lock on dir
// (ErrLocked if another Store holds it) and recovers what a crash or kill
// left behind (see the package doc, "Recovery"); this reads only the tail
// of each plain segment. Plain segments found at Open are sealed: new
// lines always go to new segments. Call Close when done.
func Open(dir string, o Options) (*Store, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create segment directory: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open segment directory: %w", err)
	}
	unlock, err := lockDir(root)
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("cannot open segment directory %q: %w", dir, err)
	}
	s := &Store{
		dir:        dir,
		root:       root,
		o:          o,
		log:        o.Logger,
		unlock:     unlock,
		batchCap:   min(maxBatchBytes, o.MaxQueueBytes),
		wake:       make(chan struct{}, 1),
		writerDone: make(chan struct{}),
		room:       make(chan struct{}),
	}
	compressDelay, removeDelay := o.CompressDelay, defaultRemoveDelay
	if compressDelay == 0 {
		compressDelay = DefaultCompressDelay
	}
	compressDelay = max(compressDelay, 0)
	if o.testRemoveDelay != 0 {
		removeDelay = max(o.testRemoveDelay, 0)
	}
	s.comp = newCompressor(root, dir, s.log, &s.c, compressDelay, removeDelay, o.IndexLines, o.IndexNumbers)
	s.w.init(s)
	sealed, unindexed, cp, err := s.recover()
	if err == nil && (cp != nil || o.Checkpoint) {
		err = s.startCheckpoints(cp)
	}
	if err != nil {
		unlock()
		root.Close()
		return nil, fmt.Errorf("cannot recover segments in %q: %w", dir, err)
	}
	if !o.NoCompress {
		for _, name := range sealed {
			s.comp.add(name)
		}
	}
	if o.IndexLines != nil {
		for _, name := range unindexed {
			s.comp.addReindex(name)
		}
	}
	go s.comp.run()
	go s.run()
	return s, nil
}

// Dir returns the directory the store was opened with.
func (s *Store) Dir() string { return s.dir }

// Append enqueues one request's groups and waits until the writer has
// written them (SyncInterval, SyncNever) or written and fsynced them
// (SyncBatch): it is Enqueue without waiting for room, then Pending.Wait. A
// nil error is the acknowledgement: the lines are in their day's active
// segment, each group's lines contiguous and in order, every group of one
// request in the same batch. Lines of concurrent requests are not
// interleaved within a line, and each request's lines for one day are never
// split across two segments.
//
// Errors are Enqueue's and Pending.Wait's. A failed Append may still leave
// its lines on disk (a rollback that fails, or a cancelled wait), so
// clients that retry get at-least-once delivery; an acknowledged Append is
// present exactly once.
func (s *Store) Append(ctx context.Context, recs []Group) error {
	p, err := s.Enqueue(ctx, recs, false)
	if err != nil {
		return err
	}
	return p.Wait(ctx)
}

// Pending is an enqueued request waiting for the writer. It is safe for
// concurrent use.
type Pending struct {
	res *result // nil: nothing to write
}

// Wait waits until the writer has written (and, in SyncBatch, fsynced) the
// request's lines. A nil error is the acknowledgement. It returns the
// writer's error if the batch failed (rolled back, best effort, and not
// acknowledged), or a wrapped ctx error if ctx is done first: the request
// stays enqueued and may still be written, so a retry may duplicate it.
// The writer always finishes every enqueued batch, Close included, so a
// Wait with a context that is never done returns.
func (p *Pending) Wait(ctx context.Context) error {
	if p == nil || p.res == nil {
		return nil
	}
	select {
	case <-p.res.done:
		return p.res.err
	default:
	}
	select {
	case <-p.res.done:
		return p.res.err
	case <-ctx.Done():
		select {
		case <-p.res.done: // finished at the same time: report the outcome
			return p.res.err
		default:
		}
		return fmt.Errorf("stopped waiting for the segment writer (the lines may still be written): %w", context.Cause(ctx))
	}
}

// Done reports whether Wait would return at once.
func (p *Pending) Done() bool {
	if p == nil || p.res == nil {
		return true
	}
	select {
	case <-p.res.done:
		return true
	default:
		return false
	}
}

// Enqueue copies one request's groups into the queue and returns without
// waiting for the writer; Pending.Wait waits for the acknowledgement.
// Requests are written in the order they were enqueued, so a caller that
// enqueues the parts of one stream in order gets them stored in order.
//
// Enqueue copies the groups before it returns: the caller may reuse recs
// and its buffers at once, whatever the result. The copy happens under the
// queue lock (a memmove of the request, about 10 GB/s), and so does nothing
// else that is proportional to the request except counting lines before
// the lock.
//
// When the request does not fit in the queue now, Enqueue returns
// ErrQueueFull (unwrapped, so that rejecting a request under overload does
// not allocate) if wait is false, and otherwise waits for room until ctx is
// done (returning ctx's error). A caller that does not wait also gets
// ErrQueueFull while others wait, so that waiting callers are not starved.
//
// Errors, all before anything is enqueued:
//   - ErrInvalid (wrapped): a group's Day is not a DayLayout date, or its
//     Lines do not end with '\n'.
//   - ErrTooLarge (wrapped): the request's bytes exceed MaxQueueBytes.
//   - ErrQueueFull: see above.
//   - ErrClosed: Close has started.
//   - ctx's error, if ctx is done before the request is enqueued.
func (s *Store) Enqueue(ctx context.Context, recs []Group, wait bool) (*Pending, error) {
	return s.EnqueueMarked(ctx, recs, nil, wait)
}

// EnqueueMarked is Enqueue with marks: once the request is acknowledged,
// its lines and its marks are stored as one atomic unit (see Mark). A
// request may carry marks and no lines. Without checkpoints (Options.
// Checkpoint) a request with marks fails with ErrInvalid.
func (s *Store) EnqueueMarked(ctx context.Context, recs []Group, marks []Mark, wait bool) (*Pending, error) {
	if len(marks) > 0 && !s.Checkpointed() {
		return nil, fmt.Errorf("cannot store marks: the store keeps no checkpoints: %w", ErrInvalid)
	}
	var n, lines int64
	var countBuf [8]int64
	counts := countBuf[:0] // lines per group
	for i := range recs {
		g := &recs[i]
		if len(g.Lines) == 0 {
			counts = append(counts, 0)
			continue
		}
		if !validDay(g.Day) {
			return nil, fmt.Errorf("cannot append group %d: day %q is not a YYYY-MM-DD date: %w", i, g.Day, ErrInvalid)
		}
		if g.Lines[len(g.Lines)-1] != '\n' {
			return nil, fmt.Errorf("cannot append group %d: lines do not end with a newline: %w", i, ErrInvalid)
		}
		c := int64(bytes.Count(g.Lines, newline))
		counts = append(counts, c)
		n += int64(len(g.Lines))
		lines += c
	}
	if n > s.o.MaxQueueBytes {
		return nil, fmt.Errorf("cannot append %d bytes: the queue holds at most %d: %w", n, s.o.MaxQueueBytes, ErrTooLarge)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := s.enqueue(ctx, recs, marks, counts, n, lines, wait)
	if err != nil {
		return nil, err
	}
	return &Pending{res: res}, nil
}

var newline = []byte{'\n'}

// enqueue copies recs (n bytes, lines lines, counts[i] in recs[i]) into
// the last pending batch,
// or a new one, and wakes the writer; with wait it first waits for room.
// It returns the batch's result, or nil when there is nothing to write.
func (s *Store) enqueue(ctx context.Context, recs []Group, marks []Mark, counts []int64, n, lines int64, wait bool) (*result, error) {
	s.mu.Lock()
	for {
		if s.closed {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		if n == 0 && len(marks) == 0 {
			s.mu.Unlock()
			return nil, nil
		}
		if s.queueBytes+n <= s.o.MaxQueueBytes && (wait || s.waiters == 0) {
			break
		}
		if !wait {
			s.mu.Unlock()
			return nil, ErrQueueFull
		}
		// Slow path: wait until finish frees room (or Close starts).
		room := s.room
		s.waiters++
		s.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			s.mu.Lock()
			s.waiters--
			s.mu.Unlock()
			return nil, context.Cause(ctx)
		}
		s.mu.Lock()
		s.waiters--
	}
	var b *batch
	if k := len(s.pending); k > 0 && s.pending[k-1].bytes+n <= s.batchCap {
		b = s.pending[k-1]
	} else {
		b = newBatch()
		s.pending = append(s.pending, b)
	}
	s.addLocked(b, recs, counts)
	for _, m := range marks {
		if b.marks == nil {
			b.marks = make(map[string]int64, len(marks))
		}
		b.marks[m.Key] = m.Value
	}
	b.bytes += n
	b.lines += lines
	b.reqs++
	s.queueBytes += n
	s.queueReqs++
	res := b.res
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return res, nil
}

// Stats returns a snapshot of the store's counters. It takes the queue
// lock briefly.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	qb, qr := s.queueBytes, s.queueReqs
	s.mu.Unlock()
	return Stats{
		QueueBytes:      qb,
		QueueRequests:   qr,
		ActiveSegments:  int(s.c.activeSegments.Load()),
		Segments:        int(s.c.segments.Load()),
		SegmentBytes:    s.c.segmentBytes.Load(),
		CompressPending: s.comp.pending(),
		LinesWritten:    s.c.linesWritten.Load(),
		BytesWritten:    s.c.bytesWritten.Load(),
		Batches:         s.c.batches.Load(),
		Syncs:           s.c.syncs.Load(),
		WriteErrors:     s.c.writeErrors.Load(),
	}
}

// Close stops accepting requests (Append returns ErrClosed), waits for the
// writer to write (and, in every sync mode, fsync) everything already
// enqueued and acknowledge it, then closes the active segments. They stay
// plain .ndjson until the next Open seals and compresses them. A
// compression in progress is abandoned (its .tmp removed); the next Open
// redoes it. Close then releases the directory lock.
//
// Close waits for at most MaxQueueBytes of writes. It is safe to call more
// than once and concurrently; every call returns the first call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		close(s.room) // waiting Enqueue calls see closed
		s.room = make(chan struct{})
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
		<-s.writerDone
		s.comp.close()
		s.closeErr = errors.Join(s.w.closeErr, s.unlock(), s.root.Close())
	})
	return s.closeErr
}
