package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/spate-io/spate/internal/bytesutil"
	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/segment"
	"github.com/spate-io/spate/internal/timeparse"
)

// Sink takes the validated lines of a request, in order, and makes them
// durable. segment.Store is one (see StoreSink); a Kafka producer is
// another.
type Sink interface {
	// Enqueue takes groups, copying them (the caller reuses its buffers as
	// soon as it returns), and returns their acknowledgement. Parts of one
	// request are enqueued in order and must be stored in that order. It
	// may wait while the sink is full, until ctx is done.
	Enqueue(ctx context.Context, groups []segment.Group) (Ack, error)
}

// Ack is the acknowledgement of one Sink.Enqueue.
type Ack interface {
	// Wait returns nil once the lines are durable, or why they are not.
	// It must return even if ctx is never done.
	Wait(ctx context.Context) error
	// Done reports whether Wait would return at once.
	Done() bool
}

// StoreSink is a Sink that appends to a segment store, waiting for queue
// room when it is full.
type StoreSink struct{ Store *segment.Store }

// Enqueue implements Sink.
func (s StoreSink) Enqueue(ctx context.Context, groups []segment.Group) (Ack, error) {
	p, err := s.Store.Enqueue(ctx, groups, true)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Error classes of Result.Err, besides the sink's own errors and the body
// reader's (wrapped in ErrRead). Test with errors.Is.
var (
	// ErrBodyTooLarge: the decoded body passed Request.MaxBytes; the lines
	// before the limit were processed. HTTP: 413.
	ErrBodyTooLarge = errors.New("request body is larger than the limit")
	// ErrBusy: the sink stayed full for Config.MaxWait. HTTP: 429 if
	// nothing was stored, else 503.
	ErrBusy = errors.New("the write queue stayed full")
	// ErrClosed: the pipeline was closed before the request started; it
	// read nothing. HTTP: 503.
	ErrClosed = errors.New("the ingest pipeline is closed")
	// ErrRead: the body could not be read to its end (a client that went
	// away or stalled, a truncated or corrupt compressed body); every
	// complete line before the failure was processed. The error is a
	// *ReadError. HTTP: 400 or 408.
	ErrRead = errors.New("cannot read request body")
)

// ReadError is the error of a body reader, which ended a request early.
// errors.Is(err, ErrRead) is true for it.
type ReadError struct{ Err error }

func (e *ReadError) Error() string        { return "cannot read request body: " + e.Err.Error() }
func (e *ReadError) Unwrap() error        { return e.Err }
func (e *ReadError) Is(target error) bool { return target == ErrRead }

// CheckError is a request that failed the check of an
// UncheckedRowReader: nothing of it is stored. HTTP: 400, with Err's
// message.
type CheckError struct{ Err error }

func (e *CheckError) Error() string { return e.Err.Error() }
func (e *CheckError) Unwrap() error { return e.Err }

// MaxErrors is how many bad lines a Result names.
const MaxErrors = 10

// Defaults for the zero fields of Config.
const (
	DefaultChunkBytes   = 1 << 20
	DefaultMaxLineBytes = 256 << 10
	DefaultMemoryBytes  = 64 << 20
	DefaultMaxWait      = 30 * time.Second
)

// Config configures a Pipeline. The zero value means the defaults.
type Config struct {
	// Workers validate chunks; default GOMAXPROCS.
	Workers int
	// ChunkBytes is the unit of work: a body is read, validated and
	// enqueued in chunks of at most this many bytes, cut at line ends;
	// default 1 MiB, and at least MaxLineBytes+1.
	ChunkBytes int
	// MaxLineBytes caps one line; default 256 KiB (VictoriaLogs'
	// -insert.maxLineSizeBytes). A longer line is rejected and skipped
	// without being held in memory; the lines around it are kept.
	MaxLineBytes int
	// MemoryBytes bounds the memory of chunks being read, validated and
	// enqueued, over all requests; default 64 MiB. Each chunk reserves
	// twice its size (as read and as stored) before it is read. Admit
	// refuses a request that cannot get room for its first chunk (HTTP:
	// 429); later chunks of an admitted request wait for room.
	MemoryBytes int64
	// MaxWait bounds how long a request waits for room in the sink before
	// it fails with ErrBusy; default 30s.
	MaxWait time.Duration
	// Now returns the ingestion time of lines without one; nil: time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() (Config, error) {
	if c.Workers < 0 || c.ChunkBytes < 0 || c.MaxLineBytes < 0 || c.MemoryBytes < 0 || c.MaxWait < 0 {
		return c, errors.New("cannot start the ingest pipeline: negative setting")
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.MaxLineBytes == 0 {
		c.MaxLineBytes = DefaultMaxLineBytes
	}
	if c.ChunkBytes == 0 {
		c.ChunkBytes = DefaultChunkBytes
	}
	c.ChunkBytes = max(c.ChunkBytes, c.MaxLineBytes+1)
	if c.MemoryBytes == 0 {
		c.MemoryBytes = DefaultMemoryBytes
	}
	// One chunk must always fit, or no request could ever start.
	c.MemoryBytes = max(c.MemoryBytes, 2*int64(c.ChunkBytes))
	if c.MaxWait == 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// Pipeline turns request bodies into acknowledged lines: it reads each body
// in chunks cut at line ends, validates the chunks on all cores (see
// Processor), enqueues each chunk's lines into the request's Sink in body
// order, and reports once every enqueued chunk is acknowledged. It is
// protocol-independent: HTTP, Kafka or any other source hands it an
// io.Reader of NDJSON lines. A Pipeline is safe for concurrent use; its
// memory is bounded by Config.MemoryBytes plus the workers' scratch.
type Pipeline struct {
	cfg  Config
	jobs chan *chunk // closed once Close was called and no Ingest runs

	mu     sync.Mutex
	closed bool
	active int // Ingest calls running

	mem  *semaphore.Weighted
	used atomic.Int64 // bytes reserved in mem, for metrics

	bufs [bufClasses]sync.Pool // *[]byte of len classLen(i); see getBuf
}

// NewPipeline starts cfg.Workers validation goroutines. Close stops them.
func NewPipeline(cfg Config) (*Pipeline, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pipeline{
		cfg:  cfg,
		jobs: make(chan *chunk, 2*cfg.Workers),
		mem:  semaphore.NewWeighted(cfg.MemoryBytes),
	}
	for range cfg.Workers {
		go p.work()
	}
	return p, nil
}

// Config returns the pipeline's configuration with defaults filled in.
func (p *Pipeline) Config() Config { return p.cfg }

// MemoryUsed returns the bytes of Config.MemoryBytes reserved now.
func (p *Pipeline) MemoryUsed() int64 { return p.used.Load() }

// Close makes later Ingest calls fail with ErrClosed and stops the workers
// once the Ingest calls running now have returned. It does not wait for
// them. Safe to call more than once.
func (p *Pipeline) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		if p.active == 0 {
			close(p.jobs)
		}
	}
}

// begin registers a running Ingest; false after Close.
func (p *Pipeline) begin() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.active++
	return true
}

func (p *Pipeline) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active--
	if p.closed && p.active == 0 {
		close(p.jobs)
	}
}

func (p *Pipeline) work() {
	for c := range p.jobs {
		c.process(p.cfg.MaxLineBytes, p.cfg.Now().UnixNano())
		close(c.done)
	}
}

// Ticket is the memory reserved for the start of one request by Admit. It
// is owned by one goroutine.
type Ticket struct {
	p    *Pipeline
	held int64
}

// Admit reserves memory for the first chunk of a request whose decoded
// body is about size bytes (-1 if unknown), without waiting. ok is false
// when there is no room now, or when requests admitted earlier are waiting
// for room: answer 429 and read nothing. Pass the ticket to Ingest, or
// Release it.
func (p *Pipeline) Admit(size int64) (t *Ticket, ok bool) {
	n := 2 * int64(p.cfg.ChunkBytes)
	if size >= 0 && size < int64(p.cfg.ChunkBytes) {
		// A small body: the buffer class that holds it (and one byte more,
		// to see its end).
		n = 2 * int64(p.classLen(p.class(int(size)+1)))
	}
	if !p.mem.TryAcquire(n) {
		return nil, false
	}
	p.used.Add(n)
	return &Ticket{p: p, held: n}, true
}

// Release gives back a ticket's memory; Ingest does it for the tickets it
// is given. Safe to call more than once.
func (t *Ticket) Release() {
	if t != nil && t.held > 0 {
		t.p.release(t.held)
		t.held = 0
	}
}

func (p *Pipeline) release(n int64) {
	if n > 0 {
		p.used.Add(-n)
		p.mem.Release(n)
	}
}

// Request is one body to ingest.
type Request struct {
	// Body yields the decoded NDJSON lines. Its errors other than io.EOF
	// end the request with ErrRead.
	Body io.Reader
	// Params are the ingestion parameters of the request.
	Params Params
	// Tenant is the data set the lines go to.
	Tenant segment.Tenant
	// Sink stores the validated lines.
	Sink Sink
	// MaxBytes caps the decoded body; 0 means no limit. Past it, the
	// request ends with ErrBodyTooLarge after the lines that fit.
	MaxBytes int64
	// Written says that Body's lines were made by RowWriter, each with a
	// time (as syslog's are): they are stored without the validating
	// scan, their time and _stream read from their first fields, and may
	// be longer than Config.MaxLineBytes (their maker bounds what they
	// hold: syslog its messages, as VictoriaLogs bounds the message and
	// not the row it stores), though not than a chunk. Lines that do not
	// start and end as RowWriter writes them are checked as any. Set it
	// only for lines made in-process.
	Written bool
	// AllErrors makes Result.Errors name every rejected line, not only
	// the first MaxErrors (for protocols that answer line by line, such
	// as the Elasticsearch bulk API).
	AllErrors bool
}

// LineError names a rejected line by its 1-based number in the body.
type LineError struct {
	Line  int64  `json:"line"`
	Error string `json:"error"`
}

// Result is the outcome of one Ingest.
type Result struct {
	// Accepted is the number of lines stored: acknowledged by the sink.
	Accepted int64
	// Rejected is the number of bad lines; Errors names the first
	// MaxErrors of them (all of them with Request.AllErrors), in order.
	Rejected int64
	Errors   []LineError
	// Lines is how many lines of the body, from the first, were dealt with:
	// each one stored, rejected or empty. After an error, a client can
	// resend from line Lines+1. (After a storage error, ErrBusy excepted,
	// the stored lines need not be a prefix of those.)
	Lines int64
	// BodyBytes is how many decoded bytes were read.
	BodyBytes int64
	// StoredBytes is the size of the stored lines, as written.
	StoredBytes int64
	// Err is why the body was not read and stored to its end; nil when it
	// was. See ErrBodyTooLarge, ErrBusy, ErrRead; other errors come from
	// the sink (for a segment.Store: segment.ErrClosed, write errors).
	Err error
}

// chunk is one piece of a body: whole lines, validated by a worker (or
// inline), then committed in order by its request.
type chunk struct {
	buf   *[]byte // pooled input buffer; nil for a skip marker
	data  []byte  // the lines, in *buf
	held  int64   // memory reserved for it
	pr    *Processor
	batch *Batch
	done  chan struct{} // closed once processed

	lines    int64 // lines processed, empty ones included
	rejected int64
	errs     []LineError // line numbers relative to the chunk, at most MaxErrors unless all
	all      bool        // Request.AllErrors
	written  bool        // Request.Written
}

// process validates c.data and fills c.batch. now is the ingestion time.
func (c *chunk) process(maxLine int, now int64) {
	for rest := c.data; len(rest) > 0; {
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			line, rest = rest, nil
		}
		c.lines++
		if len(line) > maxLine && !c.written {
			c.reject(fmt.Sprintf("line is %d bytes, more than the limit of %d; skipped", len(line), maxLine))
			continue
		}
		if isBlank(line) {
			continue // empty lines are skipped, as VictoriaLogs does
		}
		if c.written {
			if out, ts, ok := c.pr.processWritten(line); ok {
				c.batch.Add(out, ts, c.pr.Stream())
				continue
			}
			if len(line) > maxLine {
				c.reject(fmt.Sprintf("line is %d bytes, more than the limit of %d; skipped", len(line), maxLine))
				continue
			}
		}
		out, ts, err := c.pr.Process(line, now)
		if err != nil {
			c.reject(err.Error())
			continue
		}
		c.batch.Add(out, ts, c.pr.Stream())
	}
}

func (c *chunk) reject(msg string) {
	c.rejected++
	if c.all || len(c.errs) < MaxErrors {
		c.errs = append(c.errs, LineError{Line: c.lines, Error: msg})
	}
}

// isBlank reports whether line holds only JSON whitespace.
func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// pendingAck is an enqueued chunk waiting for its acknowledgement.
type pendingAck struct {
	ack   Ack
	lines int64
	bytes int64
}

// run is the state of one Ingest call, owned by its goroutine.
type run struct {
	p     *Pipeline
	ctx   context.Context
	req   *Request
	res   Result
	held  int64    // memory reserved for the next chunk
	queue []*chunk // submitted, not yet committed, in body order
	acks  []pendingAck
	prs   []*Processor // free processors for req.Params
	carry []byte       // the partial last line of the previous buffer
	// stopped: storing failed, so later chunks are not stored (the stored
	// lines stay a prefix of the body, a failed acknowledgement excepted).
	stopped bool
}

// Ingest reads req.Body to its end (or to an error), validates every line,
// enqueues the good ones into req.Sink in body order and waits for their
// acknowledgement. t is the memory Admit reserved; Ingest releases it.
//
// Memory: at most Workers+2 chunks of the request are in flight, each
// holding its reservation from before it is read until it is enqueued. A
// request that cannot reserve room for its next chunk first commits all it
// has in flight, then waits: it never holds memory while waiting for
// memory, so requests cannot deadlock each other.
//
// Ingest does not return before every enqueued chunk is acknowledged or
// failed, even if ctx is done: Result.Accepted is exact.
func (p *Pipeline) Ingest(ctx context.Context, t *Ticket, req *Request) Result {
	if !p.begin() {
		t.Release()
		return Result{Err: ErrClosed}
	}
	defer p.end()
	r := &run{p: p, ctx: ctx, req: req}
	r.held, t.held = t.held, 0
	if rows, check, ok := r.directRows(); ok {
		r.readRows(rows, check)
	} else {
		r.read()
	}
	r.drain()
	if r.held > 0 {
		p.release(r.held)
		r.held = 0
	}
	r.waitAcks(0)
	if r.res.Err == nil && r.stopped {
		panic("BUG: ingest stopped without an error")
	}
	return r.res
}

// read reads the body in chunks and submits them until the body ends,
// fails or a commit fails.
func (r *run) read() {
	p := r.p
	size := p.cfg.ChunkBytes
	first := true
	for !r.stopped {
		if err := r.reserve(); err != nil {
			r.end(err)
			return
		}
		if r.stopped {
			return
		}
		// A small body (Admit's size hint) gets a buffer of the class it
		// reserved, so that memory matches the reservation.
		bp := p.getBuf(int(min(r.held/2, int64(size))))
		buf := *bp
		n := copy(buf, r.carry)
		r.carry = r.carry[:0]
		n0 := n
		m, err := fileread.Fill(r.req.Body, buf[n:r.readLimit(len(buf), n)])
		n += m
		if err == nil && len(buf) < size {
			// Slow path: the body is larger than its hint. Nothing else is
			// in flight yet, so waiting for memory here is safe.
			if err = r.grow(); err != nil {
				r.end(err)
				return
			}
			big := p.getBuf(size)
			copy(*big, buf[:n])
			p.putBuf(bp)
			bp, buf = big, *big
			m, err = fileread.Fill(r.req.Body, buf[n:r.readLimit(len(buf), n0)])
			n += m
		}
		r.res.BodyBytes += int64(n - n0)
		if m := r.req.MaxBytes; m > 0 && r.res.BodyBytes > m {
			n -= int(r.res.BodyBytes - m)
			r.res.BodyBytes = m
			err = ErrBodyTooLarge
		}
		var data []byte
		last := err != nil
		switch {
		case err == io.EOF:
			data = buf[:n] // a last line without '\n' is a line
		case err != nil:
			// Only complete lines count when the body is cut short.
			if i := bytesutil.LastIndexByte(buf[:n], '\n'); i >= 0 {
				data = buf[:i+1]
			}
			if !errors.Is(err, ErrBodyTooLarge) {
				err = &ReadError{Err: err}
			}
		default:
			i := bytesutil.LastIndexByte(buf[:n], '\n')
			if i < 0 {
				// Slow path: a line longer than the buffer.
				p.putBuf(bp)
				if err := r.skipLine(n); err != nil {
					r.end(err)
					return
				}
				continue
			}
			data = buf[:i+1]
			r.carry = append(r.carry, buf[i+1:n]...)
		}
		if len(data) == 0 {
			p.putBuf(bp)
		} else {
			c := &chunk{buf: bp, data: data, held: r.held, pr: r.processor(), batch: getBatch(), done: make(chan struct{}), all: r.req.AllErrors, written: r.req.Written}
			c.batch.Tenant = r.req.Tenant
			r.held = 0
			if first && last && len(r.queue) == 0 {
				// Fast path: the whole body is one chunk; validate it here.
				c.process(p.cfg.MaxLineBytes, p.cfg.Now().UnixNano())
				close(c.done)
			} else {
				p.jobs <- c
			}
			r.queue = append(r.queue, c)
		}
		first = false
		if last {
			if err != io.EOF {
				r.end(err)
			}
			return
		}
		r.commitReady()
	}
}

// directRows returns the decoder of a Body made by RowReader, unread, when
// the request's Params store its lines as written: readRows then takes its
// rows without the text round trip (a goroutine, a pipe and a validating
// scan of lines RowWriter made valid).
func (r *run) directRows() (decode func(emit func(*Row) error) error, check func() error, ok bool) {
	rr, ok := r.req.Body.(*rowReader)
	if !ok || r.req.Params.Rewrites() || r.req.MaxBytes > 0 {
		return nil, nil, false
	}
	decode, ok = rr.takeRows()
	return decode, rr.check, ok
}

// maxPendingChunks is how many chunks of an unchecked request readRows
// holds back, uncommitted, before it runs the request's check: a request
// whose rows fit in them is walked once, not twice.
const maxPendingChunks = 4

// errRowsStopped ends a decoder's emit once storing failed.
var errRowsStopped = errors.New("storing stopped")

// readRows is read for rows: it writes them with a RowWriter straight into
// batches, the lines read() would store for the same rows, and commits a
// chunk each time its batch reaches ChunkBytes. Memory: a chunk reserves
// twice ChunkBytes, as read's do, and holds only its batch (at most
// ChunkBytes plus one line).
//
// With check set (an UncheckedRowReader's), decode may fail after it has
// emitted rows: readRows then holds the chunks back, uncommitted, until
// decode has returned nil, or until it would hold more than
// maxPendingChunks or wait for memory, when it runs check first. If
// decode or check fails meanwhile, nothing of the request is stored and
// the request ends with a *CheckError.
func (r *run) readRows(decode func(emit func(*Row) error) error, check func() error) {
	p := r.p
	w := RowWriter{Tenant: r.req.Tenant}
	var (
		line []byte
		c    *chunk
		now  int64
		// nowLen is the length of `"_time":"<now>"`.
		nowLen int
		// pending: the request is not known to be valid yet, and nothing
		// of it is committed.
		pending = check != nil
	)
	// settle runs the check of a pending request, then commits what it
	// holds.
	settle := func() error {
		pending = false
		if err := check(); err != nil {
			return &CheckError{Err: err}
		}
		r.commitReady()
		return nil
	}
	submit := func() {
		c.held, r.held = r.held, 0
		r.queue = append(r.queue, c)
		c = nil
		if !pending {
			r.commitReady()
		}
	}
	start := func() error {
		if pending && len(r.queue) > 0 && (len(r.queue) >= maxPendingChunks || !r.tryReserve()) {
			if err := settle(); err != nil {
				return err
			}
		}
		if err := r.reserve(); err != nil {
			return err
		}
		if r.stopped {
			return errRowsStopped
		}
		c = &chunk{batch: getBatch(), done: closedChan, all: r.req.AllErrors}
		c.batch.Tenant = r.req.Tenant
		now = p.cfg.Now().UnixNano()
		nowLen = len(timeparse.AppendRFC3339(append(line[:0], `"_time":"`...), now)) + 1
		return nil
	}
	var emitErr error // what emit returned last, to tell decode's own errors
	err := decode(func(row *Row) error {
		if r.stopped {
			emitErr = errRowsStopped
			return emitErr
		}
		if c == nil {
			if err := start(); err != nil {
				emitErr = err
				return err
			}
		}
		ts := row.Time
		if ts == 0 {
			ts = now
		}
		line = w.appendAt(line[:0], row, ts)
		n := len(line) - 1 // the line's length as text: without '\n' and
		if row.Time == 0 { // without the ingestion time, added later there
			n -= nowLen
			if len(line) > 1+nowLen+2 {
				n-- // its comma
			}
		}
		if n > p.cfg.MaxLineBytes {
			r.res.BodyBytes += int64(n) + 1
			c.lines++
			c.reject(fmt.Sprintf("line is %d bytes, more than the limit of %d; skipped", n, p.cfg.MaxLineBytes))
			return nil
		}
		if c.batch.Bytes+int64(len(line)) > r.held {
			// Only after a small first reservation (Admit's size hint):
			// commit what it holds, then raise the reservation to a full
			// chunk's. Nothing is in flight then, so waiting is safe.
			if c.batch.Lines > 0 {
				submit()
				if err := start(); err != nil {
					emitErr = err
					return err
				}
			}
			if c.batch.Bytes+int64(len(line)) > r.held {
				if pending && len(r.queue) > 0 {
					if err := settle(); err != nil { // grow may wait for memory
						emitErr = err
						return err
					}
				}
				if err := r.grow(); err != nil {
					emitErr = err
					return err
				}
			}
		}
		r.res.BodyBytes += int64(n) + 1
		c.lines++
		c.batch.Add(line[:len(line)-1], ts, w.stream(row))
		if c.batch.Bytes >= min(int64(p.cfg.ChunkBytes), r.held/2) {
			submit()
		}
		return nil
	})
	if c != nil {
		if c.lines > 0 {
			submit()
		} else {
			putBatch(c.batch)
		}
	}
	if pending {
		switch {
		case err == nil:
			// decode walked the whole request: it is valid.
			pending = false
			r.commitReady()
		case emitErr == nil || err != emitErr:
			// decode's own error: the request is invalid. check says why
			// as a checked request would have been refused.
			r.discard()
			if cerr := check(); cerr != nil {
				err = cerr
			}
			err = &CheckError{Err: err}
		default:
			// Storing failed (no memory, shutting down) before the request
			// was known to be valid: nothing of it is kept.
			r.discard()
		}
	}
	var ce *CheckError
	switch {
	case err == nil, err == errRowsStopped:
	case errors.As(err, &ce):
		r.discard()
		r.end(ce)
	case errors.Is(err, ErrBusy), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), r.ctx.Err() != nil:
		r.end(err)
	default:
		r.end(&ReadError{Err: err})
	}
}

// readLimit returns how much of a buffer of size bytes, holding n already,
// to fill: all of it, or at most one byte past Request.MaxBytes, to see
// that the limit is passed.
func (r *run) readLimit(size, n int) int {
	if m := r.req.MaxBytes; m > 0 {
		return int(min(int64(size), int64(n)+m-r.res.BodyBytes+1))
	}
	return size
}

// grow raises the reservation of a small first chunk to a full one.
func (r *run) grow() error {
	p := r.p
	need := 2*int64(p.cfg.ChunkBytes) - r.held
	ctx, cancel := context.WithTimeout(r.ctx, p.cfg.MaxWait)
	defer cancel()
	if err := p.mem.Acquire(ctx, need); err != nil {
		if r.ctx.Err() != nil {
			return context.Cause(r.ctx)
		}
		return fmt.Errorf("%w: no memory for the next chunk for %v", ErrBusy, p.cfg.MaxWait)
	}
	p.used.Add(need)
	r.held += need
	return nil
}

// skipLine passes over a line longer than a chunk, of which n bytes were
// read, without keeping it: it reads to the next '\n' (keeping what
// follows as the next chunk's start) and queues the rejection in order.
func (r *run) skipLine(n int) error {
	p := r.p
	bp := p.getBuf(p.cfg.ChunkBytes)
	defer p.putBuf(bp)
	buf := *bp
	skipped := int64(n)
	var err error
	for {
		limit := len(buf)
		if m := r.req.MaxBytes; m > 0 {
			limit = int(min(int64(limit), m-r.res.BodyBytes+1))
		}
		var m int
		m, err = r.req.Body.Read(buf[:limit])
		r.res.BodyBytes += int64(m)
		if mb := r.req.MaxBytes; mb > 0 && r.res.BodyBytes > mb {
			m -= int(r.res.BodyBytes - mb)
			r.res.BodyBytes = mb
			err = ErrBodyTooLarge
		}
		if i := bytes.IndexByte(buf[:m], '\n'); i >= 0 {
			skipped += int64(i)
			r.carry = append(r.carry[:0], buf[i+1:m]...)
			break
		}
		skipped += int64(m)
		if err != nil {
			break
		}
	}
	if err != nil && err != io.EOF {
		// The long line was cut short: it is not a line of the body.
		if !errors.Is(err, ErrBodyTooLarge) {
			err = &ReadError{Err: err}
		}
		return err
	}
	c := &chunk{lines: 1, done: closedChan}
	c.reject(fmt.Sprintf("line is %d bytes, more than the limit of %d; skipped", skipped, p.cfg.MaxLineBytes))
	r.queue = append(r.queue, c)
	if err == io.EOF {
		return errEndOfBody
	}
	return nil
}

// errEndOfBody ends read after skipLine met the end of the body; it is
// not a failure.
var errEndOfBody = errors.New("end of body")

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// reserve makes sure r.held covers the next chunk. It commits what is in
// flight before waiting for memory (see Ingest).
func (r *run) reserve() error {
	if r.tryReserve() {
		return nil
	}
	// Slow path: give back what this request holds, then wait in line.
	p := r.p
	n := 2 * int64(p.cfg.ChunkBytes)
	r.drain()
	if r.stopped {
		return nil // the failure is recorded; read stops
	}
	ctx, cancel := context.WithTimeout(r.ctx, p.cfg.MaxWait)
	err := p.mem.Acquire(ctx, n)
	cancel()
	if err != nil {
		if r.ctx.Err() != nil {
			return context.Cause(r.ctx)
		}
		return fmt.Errorf("%w: no memory for the next chunk for %v", ErrBusy, p.cfg.MaxWait)
	}
	p.used.Add(n)
	r.held = n
	return nil
}

// tryReserve makes sure r.held covers the next chunk if that needs no
// wait, and says whether it does.
func (r *run) tryReserve() bool {
	if r.held > 0 {
		return true
	}
	n := 2 * int64(r.p.cfg.ChunkBytes)
	if !r.p.mem.TryAcquire(n) {
		return false
	}
	r.p.used.Add(n)
	r.held = n
	return true
}

// discard drops the chunks in the queue, uncommitted, with their lines'
// counts: for a request refused whole, of which nothing was committed.
func (r *run) discard() {
	for _, c := range r.queue {
		if c.batch != nil {
			putBatch(c.batch)
		}
		r.p.release(c.held)
	}
	clear(r.queue)
	r.queue = r.queue[:0]
	r.res.BodyBytes = 0
}

// end records why the body ends early; chunks read before it are still
// stored.
func (r *run) end(err error) {
	if err != errEndOfBody && r.res.Err == nil {
		r.res.Err = err
	}
}

// stop records a storing failure: later chunks are not stored.
func (r *run) stop(err error) {
	r.end(err)
	r.stopped = true
}

// commitReady commits the chunks at the head of the queue that are done,
// and waits for the oldest when Workers+2 are in flight.
func (r *run) commitReady() {
	for len(r.queue) > 0 {
		c := r.queue[0]
		select {
		case <-c.done:
		default:
			if len(r.queue) < r.p.cfg.Workers+2 {
				return
			}
			<-c.done
		}
		r.queue = r.queue[1:]
		r.commit(c)
	}
}

// drain commits every chunk in flight.
func (r *run) drain() {
	for len(r.queue) > 0 {
		c := r.queue[0]
		r.queue = r.queue[1:]
		<-c.done
		r.commit(c)
	}
}

// commit takes a processed chunk's results in body order and enqueues its
// lines, unless an earlier commit failed.
func (r *run) commit(c *chunk) {
	p := r.p
	defer func() {
		if c.buf != nil {
			p.putBuf(c.buf)
		}
		if c.pr != nil {
			r.prs = append(r.prs, c.pr)
		}
		if c.batch != nil {
			putBatch(c.batch)
		}
		p.release(c.held)
	}()
	if r.stopped {
		return
	}
	if c.batch != nil && c.batch.Lines > 0 {
		ctx, cancel := context.WithTimeout(r.ctx, p.cfg.MaxWait)
		ack, err := r.req.Sink.Enqueue(ctx, c.batch.Groups())
		cancel()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && r.ctx.Err() == nil {
				err = fmt.Errorf("%w for %v", ErrBusy, p.cfg.MaxWait)
			}
			r.stop(err)
			return
		}
		r.acks = append(r.acks, pendingAck{ack: ack, lines: int64(c.batch.Lines), bytes: c.batch.Bytes})
		if len(r.acks) > 64 {
			r.waitAcks(32)
		}
	}
	for _, e := range c.errs {
		if r.req.AllErrors || len(r.res.Errors) < MaxErrors {
			e.Line += r.res.Lines
			r.res.Errors = append(r.res.Errors, e)
		}
	}
	r.res.Rejected += c.rejected
	r.res.Lines += c.lines
}

// waitAcks waits for the oldest acknowledgements until at most keep are
// pending, taking those already done too. A failed one is recorded; its
// lines are not accepted.
func (r *run) waitAcks(keep int) {
	i := 0
	for ; i < len(r.acks); i++ {
		a := r.acks[i]
		if len(r.acks)-i <= keep && !a.ack.Done() {
			break
		}
		// The sink finishes every enqueued part, so this returns.
		if err := a.ack.Wait(context.WithoutCancel(r.ctx)); err != nil {
			r.stop(err)
			continue
		}
		r.res.Accepted += a.lines
		r.res.StoredBytes += a.bytes
	}
	r.acks = append(r.acks[:0], r.acks[i:]...)
}

// processor returns a Processor for the request's Params.
func (r *run) processor() *Processor {
	if k := len(r.prs); k > 0 {
		pr := r.prs[k-1]
		r.prs = r.prs[:k-1]
		return pr
	}
	return NewProcessor(r.req.Params, r.req.Tenant)
}

// bufClasses is the number of buffer sizes: ChunkBytes, and quarters of
// it down to ChunkBytes/256, for small bodies.
const bufClasses = 5

// classLen returns the length of buffers of class i.
func (p *Pipeline) classLen(i int) int { return p.cfg.ChunkBytes >> (2 * i) }

// class returns the class of the smallest buffers that hold n bytes.
func (p *Pipeline) class(n int) int {
	i := 0
	for i+1 < bufClasses && p.classLen(i+1) >= n {
		i++
	}
	return i
}

// getBuf returns a pooled buffer of the smallest class that holds n bytes
// (n <= ChunkBytes); putBuf takes it back.
func (p *Pipeline) getBuf(n int) *[]byte {
	i := p.class(n)
	if bp, ok := p.bufs[i].Get().(*[]byte); ok {
		return bp
	}
	b := make([]byte, p.classLen(i))
	return &b
}

func (p *Pipeline) putBuf(bp *[]byte) {
	if i := p.class(len(*bp)); p.classLen(i) == len(*bp) {
		p.bufs[i].Put(bp)
	}
}

// batchPool holds Batches between chunks; see getBatch and putBatch.
var batchPool sync.Pool

func getBatch() *Batch {
	if b, ok := batchPool.Get().(*Batch); ok {
		return b
	}
	return &Batch{}
}

// maxPooledBatch: batches that grew larger (long lines rebuilt bigger)
// are dropped rather than pinned in the pool.
const maxPooledBatch = 4 << 20

func putBatch(b *Batch) {
	if b.Cap() > maxPooledBatch {
		return
	}
	b.Reset()
	batchPool.Put(b)
}
