package query

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spate-io/spate/internal/bytesutil"
	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/timeparse"
)

// Sink receives result rows in their final order, from one goroutine at a
// time. The row and its strings are valid only during the call.
type Sink interface {
	WriteRow(r *Row) error
}

// Stats describes a finished run.
type Stats struct {
	Bytes int64 // bytes read
	// Workers is how many workers ran the query and ParallelInputs how
	// many inputs they could read at once (0: fileread's default), after
	// the query's options(concurrency=, parallel_readers=).
	Workers, ParallelInputs int
	// Lines counts log lines (non-empty lines). It is exact when every line
	// was parsed or Options.CountLines was set; LinesExact says which.
	Lines      int64
	LinesExact bool
	Matched    int64 // rows that passed the query's filter
	Parsed     int64 // lines parsed (the others were ruled out on raw bytes)
	BadLines   int64 // lines that start like JSON but are not valid JSON (read as plain text)
	PlainLines int64 // lines that are not JSON objects (read as plain text)
	BadTimes   int64 // JSON logs whose time field could not be parsed (they have no _time)
	// FirstBadTime is where the first of the BadTimes is (the earliest in
	// input order among those the workers saw first), nil when none.
	FirstBadTime *BadTime
	// Renamed lists fields the query names that became _msg or _time in
	// some lines (msg, log, ts, ...): in those lines they are not fields
	// of their own, as in VictoriaLogs.
	Renamed []Renamed
	// EarlyRejected counts parsed lines that the filter rejected as soon as
	// it had their fields, before reading the rest of the line: they were
	// not checked for bad JSON past that point (the answer is exact either
	// way, as such a line read as plain text would be rejected too).
	EarlyRejected int64
	// LongLines counts lines over the read layer's MaxLineSize that were
	// skipped (with fileread.Config.SkipLongLines); LongLineSamples names
	// the first few.
	LongLines       int64
	LongLineSamples []fileread.LongLine
	Duration        time.Duration
	Strategies      []fileread.Strategy
	// Approximate lists the stats results computed with sketches instead of
	// exactly, with the reason.
	Approximate []string
	// Stopped says the scan ended early because a limit was reached.
	Stopped bool
	// Spilled is the bytes of partial stats groups written to temp files
	// because they passed Options.GroupMemory.
	Spilled int64
	// ColumnBlocks counts segment blocks whose rows were read from their
	// sidecar's hot columns (see Options.Index) instead of their lines;
	// SkippedBlocks those the sidecar ruled out by time, and
	// TokenSkippedBlocks by its token blooms, ValueSkippedBlocks by its
	// numeric ranges or streams, unread (their rows count in Lines). ColumnFallbacks counts blocks whose columns
	// could not be read, so their lines were.
	ColumnBlocks, SkippedBlocks, TokenSkippedBlocks, ValueSkippedBlocks, ColumnFallbacks int64
	// ColumnBytes is what was read from sidecars; ColumnLineBytes the size
	// of the lines the ColumnBlocks hold (not read). LineBlocks counts
	// blocks of indexed segments read from their lines (decoded alone, in
	// parallel, the others skipped); TokenSkippedFrames the frames of such
	// blocks that their blooms per frame ruled out, unread (their rows
	// count in Lines).
	ColumnBytes, ColumnLineBytes, LineBlocks, TokenSkippedFrames int64
}

// errStop is returned by a processor that needs no more rows (a limit was
// reached). It ends the scan early without error.
var errStop = errors.New("no more rows needed")

// ResolveSubqueriesOver runs q's subqueries (ResolveSubqueries) over the
// same inputs, read the same way, as q itself will be. Standard input
// ("-") cannot be read twice: a query with subqueries over it is an
// error.
func ResolveSubqueriesOver(ctx context.Context, q *Query, inputs []string, cfg fileread.Config, opts Options) error {
	if slices.Contains(inputs, "-") {
		return errors.New("a query with a subquery (join, union, in(...)) reads its input twice, and standard input cannot be: save it to a file first")
	}
	sub := opts
	sub.Partial, sub.Every, sub.SnapshotDone, sub.Progress = nil, 0, nil, nil
	return ResolveSubqueries(ctx, q, opts.MaxMemory, func(ctx context.Context, sq *Query, sink Sink) error {
		_, err := Run(ctx, sq, inputs, cfg, sub, sink)
		return err
	})
}

// Run executes q over inputs (files, or "-" for cfg.Stdin) read with cfg, and
// writes the result rows to sink. cfg.ParallelInputs applies only to queries
// with a pipe that needs all rows (stats, sort, ...) and with
// Options.Unordered; others read their inputs in order, to give rows in
// file order with bounded memory.
func Run(ctx context.Context, q *Query, inputs []string, cfg fileread.Config, opts Options, sink Sink) (Stats, error) {
	start := time.Now()
	if o := q.EffectiveOptions(); o != nil {
		if o.Concurrency > 0 && (cfg.Workers <= 0 || cfg.Workers > o.Concurrency) {
			cfg.Workers = o.Concurrency
		}
		if o.ParallelReaders > 0 {
			cfg.ParallelInputs = o.ParallelReaders
		}
	}
	if q.HasSubqueries() {
		if err := ResolveSubqueriesOver(ctx, q, inputs, cfg, opts); err != nil {
			return Stats{}, err
		}
	}
	if opts.Rerun == nil && slices.Contains(inputs, "-") && q.HasStreamContext() {
		return Stats{}, errNoRerun
	}
	if opts.Rerun == nil && !slices.Contains(inputs, "-") {
		// stream_context reads the same files again, in any order (it
		// orders what it keeps).
		sub := opts
		sub.Partial, sub.Every, sub.SnapshotDone, sub.Progress = nil, 0, nil, nil
		sub.Unordered = true
		opts.Rerun = func(sq *Query, sink Sink) error {
			_, err := Run(ctx, sq, inputs, cfg, sub, sink)
			return err
		}
	}
	if opts.Every > 0 {
		opts.GroupMemory = -1 // a spilled stats state cannot be read twice
	}
	p, err := newPlan(q, opts)
	if err != nil {
		return Stats{}, err
	}
	p.done = ctx.Done()
	if opts.Partial != nil {
		if _, ok := p.barrier.(*PipeStats); !ok || len(p.post) > 0 || opts.Every > 0 {
			return Stats{}, fmt.Errorf("cannot run [%s] for a partial state: it must end with its first stats pipe", q)
		}
	}
	e, err := newExecutor(p, cfg, sink)
	if err != nil {
		return Stats{}, err
	}
	cfg.InputDone = e.inputDone
	if e.order != nil && !opts.Unordered {
		// Rows come out in file order: reading later inputs early would
		// only hold their rows until the earlier ones end.
		cfg.ParallelInputs = 1
	}
	stopSnapshots := e.startSnapshots(ctx)
	// Segments with a sidecar index are read block by block (indexed.go),
	// before the other inputs: in file order, they come first.
	jobs, rest, restIdx, indexed := e.indexJobs(inputs)
	defer jobs.close()
	if len(jobs.jobs) > 0 {
		err = e.scanJobs(ctx, jobs)
	}
	var rst fileread.Stats
	if err == nil && (!indexed || len(rest) > 0) {
		onChunk := e.chunk
		if indexed {
			// fileread names inputs by their index in rest.
			onChunk = func(wid int, c *fileread.Chunk) error {
				c.Input = restIdx[c.Input]
				return e.chunk(wid, c)
			}
			cfg.InputDone = func(input int, size int64) { e.inputDone(restIdx[input], size) }
		}
		rst, err = fileread.Scan(ctx, rest, cfg, onChunk)
	}
	if serr := stopSnapshots(); err == nil {
		err = serr
	}
	st := e.stats()
	st.Workers, st.ParallelInputs = len(e.workers), cfg.ParallelInputs
	st.Bytes = rst.Bytes + e.blockBytes.Load()
	st.Strategies = rst.Strategies
	st.LongLines = rst.LongLines
	st.LongLineSamples = rst.LongLineSamples
	if err == nil {
		err = e.finish()
	}
	e.release()
	st.Stopped = e.stopped.Load()
	st.Approximate = e.approx()
	st.Spilled = p.spilled.Load()
	st.ColumnBlocks, st.SkippedBlocks, st.ColumnFallbacks = e.colBlocks.Load(), e.colSkipped.Load(), e.colFallbacks.Load()
	st.ColumnBytes, st.ColumnLineBytes, st.LineBlocks = e.colBytes.Load(), e.colLineBytes.Load(), e.blockLines.Load()
	st.TokenSkippedBlocks, st.ValueSkippedBlocks = e.tokSkipped.Load(), e.valSkipped.Load()
	st.TokenSkippedFrames = e.frameSkipped.Load()
	st.Lines += e.colSkippedRows.Load()
	st.Duration = time.Since(start)
	return st, err
}

// executor holds one run's shared state.
type executor struct {
	p       *plan
	workers []*workerState
	post    processor // first processor after the barrier (ends at the sink)
	order   *orderer  // restores file order when there is no barrier or it is limit/offset
	stopped atomic.Bool

	// With snapshots (Options.Every), the workers' barrier states are
	// moved into acc at every snapshot, under gate: workers hold it shared
	// while they work on a chunk. acc feeds relay, which points at a fresh
	// copy of the pipes after the barrier for each snapshot.
	gate  sync.RWMutex
	acc   mergeable
	relay *relayProc
	sink  Sink

	// Reading from hot columns (columns.go): open is fileread.Config.Open,
	// for blocks whose columns fail; the counters are Stats'.
	open                                                func(string) (*os.File, int64, error)
	pace                                                func(context.Context, time.Duration) // fileread.Config.Pace, for blocks read through sidecars
	colBlocks, colSkipped, colSkippedRows, colFallbacks atomic.Int64
	colBytes, colLineBytes, blockBytes, blockLines      atomic.Int64
	tokSkipped, valSkipped, frameSkipped                atomic.Int64
	fast                                                colFast // set before the workers start
}

// workerState is what one worker owns: nothing in it is shared.
type workerState struct {
	_       falseSharingPad
	arena   arena
	rb      *recordBuilder
	row     Row
	filter  matcher
	head    processor  // the worker's first pipe processor
	barrier mergeable  // this worker's partial barrier state, if any
	out     *collector // this worker's row collector, in ordered mode
	lines   int64
	matched int64
	parsed  int64
	badTime *BadTime // the worker's first, when noted
	_       falseSharingPad
}

// falseSharingPad keeps what one worker writes for every line off the
// cache lines of another worker's state, which the allocator may place
// right after it: without it, two workers of one process spent 20-40%
// more CPU than two processes (a field read at the end of workerState
// cost 70x more with two workers than with one).
type falseSharingPad [128]byte

// Renamed is a field the query names that became Became (_msg or _time)
// in Lines lines.
type Renamed struct {
	Name, Became string
	Lines        int64
}

// BadTime is a time value that could not be parsed: where, in which field,
// and the value.
type BadTime struct {
	Input  int    // index of the input
	Name   string // input name
	Offset int64  // byte offset of the line (decompressed)
	Field  string
	Value  string
}

// mergeable is a barrier processor: each worker fills its own, then they are
// merged into the first and it is flushed.
type mergeable interface {
	processor
	merge(other processor) error
}

func newExecutor(p *plan, cfg fileread.Config, sink Sink) (*executor, error) {
	e := &executor{p: p, open: cfg.Open, pace: cfg.Pace}
	var term processor = newSinkProc(sink, p.rawRows)
	post, err := buildChain(p, p.post, term)
	if err != nil {
		return nil, err
	}
	ordered := p.barrier == nil
	switch p.barrier.(type) {
	case *PipeLimit, *PipeOffset, *PipeUnion, *PipeGenerateSequence:
		// Pipes that see the rows one at a time, in order, after the
		// workers.
		ordered = true
		post, err = buildChain(p, []Pipe{p.barrier}, post)
		if err != nil {
			return nil, err
		}
	}
	e.post = post
	if ordered {
		e.order = newOrderer(post)
		e.order.unordered = p.opts.Unordered
	}
	n := cfg.Workers
	if n <= 0 {
		n = defaultWorkers()
	}
	e.workers = make([]*workerState, n)
	for i := range e.workers {
		w := &workerState{}
		w.rb = newRecordBuilder(p, &w.arena)
		if w.filter, err = compileFilter(p.filter); err != nil {
			return nil, err
		}
		if p.earlyFields != nil {
			w.rb.early, w.rb.earlyNames, w.rb.earlyFinders = w.filter, p.earlyFields, p.earlyFinders
		}
		var tail processor
		if ordered {
			w.out = &collector{}
			tail = w.out
		} else {
			if w.barrier, err = e.newBarrier(post, n); err != nil {
				return nil, err
			}
			tail = w.barrier
		}
		if w.head, err = headChain(p, tail); err != nil {
			return nil, err
		}
		e.workers[i] = w
	}
	if !ordered && p.opts.Every > 0 {
		e.sink = sink
		e.relay = &relayProc{next: post}
		if e.acc, err = e.newBarrier(e.relay, 1); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// newBarrier compiles the plan's barrier pipe feeding next, for one of n
// workers.
func (e *executor) newBarrier(next processor, n int) (mergeable, error) {
	bp, err := newProcessor(e.p, e.p.barrier, next)
	if err != nil {
		return nil, err
	}
	m, ok := bp.(mergeable)
	if !ok {
		return nil, fmt.Errorf("BUG: barrier %T is not mergeable", bp)
	}
	if sp, ok := m.(*statsProc); ok && sp.budget > 0 && e.p.opts.GroupMemory > 0 {
		// The workers share the group memory they were given (the
		// default is per worker).
		sp.budget = max(sp.budget/int64(n), 1)
	}
	return m, nil
}

// relayProc passes rows to next, which a snapshot replaces.
type relayProc struct{ next processor }

func (r *relayProc) push(row *Row) error { return r.next.push(row) }
func (r *relayProc) flush() error        { return r.next.flush() }

// startSnapshots starts writing a snapshot every Options.Every, when the
// query has one; the returned function stops it and returns the first
// error a snapshot met.
func (e *executor) startSnapshots(ctx context.Context) func() error {
	if e.acc == nil {
		return func() error { return nil }
	}
	done := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		t := time.NewTicker(e.p.opts.Every)
		defer t.Stop()
		for {
			select {
			case <-done:
				errc <- nil
				return
			case <-ctx.Done():
				errc <- nil
				return
			case <-t.C:
				if err := e.snapshot(); err != nil {
					errc <- err
					return
				}
			}
		}
	}()
	return func() error {
		close(done)
		return <-errc
	}
}

// collect moves every worker's barrier state into acc and gives each a
// fresh one.
func (e *executor) collect() error {
	e.gate.Lock()
	defer e.gate.Unlock()
	for _, w := range e.workers {
		if err := e.acc.merge(w.barrier); err != nil {
			return err
		}
		m, err := e.newBarrier(e.post, len(e.workers))
		if err != nil {
			return err
		}
		if w.head, err = headChain(e.p, m); err != nil {
			return err
		}
		w.barrier = m
	}
	return nil
}

// snapshot writes the result of the rows read so far to the sink through a
// fresh copy of the pipes after the barrier, then calls SnapshotDone.
func (e *executor) snapshot() error {
	if err := e.collect(); err != nil {
		return err
	}
	post, err := buildChain(e.p, e.p.post, newSinkProc(e.sink, e.p.rawRows))
	if err != nil {
		return err
	}
	e.relay.next = post
	if err := e.acc.flush(); err != nil && !errors.Is(err, errStop) {
		return err
	}
	if f := e.p.opts.SnapshotDone; f != nil {
		return f()
	}
	return nil
}

// headChain builds a worker's pipes before the barrier, feeding tail.
// With a time_offset, a timeShiftProc goes after the filter pipes that
// come first (VictoriaLogs merges them into the query's filter, which
// reads the logs' own times) and before the other pipes.
func headChain(p *plan, tail processor) (processor, error) {
	if p.timeOffset == 0 {
		return buildChain(p, p.pre, tail)
	}
	lead := 0
	for lead < len(p.pre) {
		if _, ok := p.pre[lead].(*PipeFilter); !ok {
			break
		}
		lead++
	}
	rest, err := buildChain(p, p.pre[lead:], tail)
	if err != nil {
		return nil, err
	}
	return buildChain(p, p.pre[:lead], &timeShiftProc{off: p.timeOffset, next: rest})
}

// timeShiftProc adds a query's time_offset to the _time of each row that
// passed its filter, before its pipes see it. The _time text it sets is
// valid until the next push.
type timeShiftProc struct {
	off  int64
	buf  []byte
	next processor
}

func (s *timeShiftProc) push(r *Row) error {
	if t, ok := rowTime(r); ok {
		r.Time, r.HasTime = addNoOverflow(t, s.off), true
		s.buf = timeparse.AppendRFC3339(s.buf[:0], r.Time)
		r.Set("_time", unsafeString(s.buf))
	}
	return s.next.push(r)
}

func (s *timeShiftProc) flush() error { return s.next.flush() }

// buildChain makes processors for pipes, each feeding the next, the last
// feeding tail.
func buildChain(p *plan, pipes []Pipe, tail processor) (processor, error) {
	next := tail
	for i := len(pipes) - 1; i >= 0; i-- {
		pr, err := newProcessor(p, pipes[i], next)
		if err != nil {
			return nil, err
		}
		next = pr
	}
	return next, nil
}

func (e *executor) inputDone(input int, size int64) {
	if e.order != nil {
		if err := e.order.done(input, size); err != nil && !errors.Is(err, errStop) {
			// The error resurfaces from the next deliver or finish.
			e.order.fail(err)
		}
	}
}

// chunk processes one chunk on worker wid.
func (e *executor) chunk(wid int, c *fileread.Chunk) error {
	if e.acc != nil {
		e.gate.RLock()
		defer e.gate.RUnlock()
	}
	w := e.workers[wid]
	if w.out != nil {
		w.out.begin(c)
	}
	var err error
	switch {
	case e.p.countOnly:
		n := countLogLines(c.Data)
		w.lines += n
		w.matched += n
		w.barrier.(*statsProc).addCount(n)
	case e.p.literal != nil:
		err = e.scanLiteral(w, c)
	default:
		err = e.scanAll(w, c)
	}
	if w.out != nil && err == nil {
		err = e.order.deliver(w.out.end())
	}
	if pr := e.p.opts.Progress; pr != nil {
		pr.Add(c.FileBytes()) // compressed bytes for .gz and .zst inputs
	}
	if errors.Is(err, errStop) {
		e.stopped.Store(true)
		return fileread.Stop
	}
	return err
}

// scanAll parses every line of c.
func (e *executor) scanAll(w *workerState, c *fileread.Chunk) error {
	data := c.Data[:len(c.Data):len(c.Data)] // lines' capacity ends with the chunk: see line
	off := c.Offset
	for len(data) > 0 {
		line, rest := fileread.NextLine(data)
		lineOff := off
		off += int64(len(data) - len(rest))
		data = rest
		if len(line) == 0 {
			continue
		}
		w.lines++
		if err := e.line(w, c, line, lineOff); err != nil {
			return err
		}
	}
	return nil
}

// scanLiteral visits only the lines of c that contain the plan's literal or
// a JSON escape that could hide it (plan.escapeProbe); the other lines cannot
// match.
func (e *executor) scanLiteral(w *workerState, c *fileread.Chunk) error {
	data := c.Data[:len(c.Data):len(c.Data)] // see line
	if e.p.opts.CountLines {
		w.lines += countLogLines(data)
	}
	var cs candScan
	cs.reset(e.p.cands, data)
	pos := 0
	for pos < len(data) {
		cand := cs.find(pos)
		if cand < 0 {
			break
		}
		start := bytesutil.LastIndexByte(data[:cand], '\n') + 1
		end := bytes.IndexByte(data[cand:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += cand
		}
		line := data[start:end]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		pos = end + 1
		if len(line) == 0 {
			continue
		}
		if err := e.line(w, c, line, c.Offset+int64(start)); err != nil {
			return err
		}
	}
	return nil
}

// line builds, filters and pushes one log line. The bytes from the end of
// line to the end of its capacity must be readable and stay unchanged until
// line returns (the rest of its chunk): early rejection probes past the
// line's end (see candFinder.containsIn).
func (e *executor) line(w *workerState, c *fileread.Chunk, line []byte, off int64) error {
	w.arena.reset()
	w.parsed++
	var f *InputFormat
	if c.Input < len(e.p.opts.InputFormats) {
		f = &e.p.opts.InputFormats[c.Input]
	}
	ok := w.rb.buildAs(f, line, off, &w.row)
	if w.badTime == nil && w.rb.badTime != "" {
		w.badTime = &BadTime{Input: c.Input, Name: c.Name, Offset: off, Field: w.rb.badTimeField, Value: w.rb.badTime}
	}
	if !ok || !w.filter.match(&w.row) {
		return nil
	}
	w.matched++
	w.row.pos = rowPos{input: c.Input, off: off}
	return w.head.push(&w.row)
}

// countLogLines counts the non-empty lines of data (an empty line, or one
// holding only "\r", is not a log).
//
// Long lines (the common case for NDJSON logs) are counted in one pass that
// jumps from newline to newline with bytes.IndexByte and checks each line's
// length on the way. Short lines make that a call per few bytes, so a block
// whose lines average under longLineAvg bytes is counted with bytes.Count and
// checked for empty lines with a second pass over the block, which is sized
// to still be in L2.
func countLogLines(data []byte) int64 {
	if useAVX2 {
		// Fast path: one vector pass counts newlines and empty lines.
		return countLinesVec(data)
	}
	var n int64
	long := true
	for len(data) > 0 {
		blk := data[:min(len(data), countBlock)]
		if len(blk) < len(data) {
			// Extend the block to a line end, so lines never straddle blocks.
			if i := bytes.IndexByte(data[len(blk):], '\n'); i >= 0 {
				blk = data[:len(blk)+i+1]
			} else {
				blk = data
			}
		}
		data = data[len(blk):]
		var lines int64
		if long {
			lines = countLinesJump(blk)
		} else {
			lines = countLinesCount(blk)
		}
		n += lines
		long = lines == 0 || int64(len(blk))/lines >= longLineAvg
	}
	return n
}

// longLineAvg is the average line length from which countLinesJump beats
// bytes.Count plus an empty-line pass.
const longLineAvg = 160

// countLinesJump counts the non-empty lines of blk, newline by newline.
func countLinesJump(blk []byte) int64 {
	var n int64
	start := 0
	for start < len(blk) {
		i := bytes.IndexByte(blk[start:], '\n')
		if i < 0 {
			if !(len(blk)-start == 1 && blk[start] == '\r') {
				n++
			}
			break
		}
		if i > 1 || (i == 1 && blk[start] != '\r') {
			n++
		}
		start += i + 1
	}
	return n
}

// countLinesCount counts the non-empty lines of blk with bytes.Count, then
// subtracts empty lines if a second pass finds any.
func countLinesCount(blk []byte) int64 {
	n := int64(bytes.Count(blk, []byte{'\n'}))
	if blk[len(blk)-1] != '\n' {
		n++
	}
	if blk[0] != '\n' && blk[0] != '\r' && bytes.Index(blk, []byte("\n\n")) < 0 && bytes.IndexByte(blk, '\r') < 0 {
		return n
	}
	for len(blk) > 0 {
		line, rest := fileread.NextLine(blk)
		if len(line) == 0 {
			n--
		}
		blk = rest
	}
	return n
}

// countBlock is the block size of countLogLines: well inside a 1 MiB L2.
const countBlock = 128 << 10

func (e *executor) stats() Stats {
	var st Stats
	st.LinesExact = e.p.literal == nil || e.p.opts.CountLines
	for _, w := range e.workers {
		st.Lines += w.lines
		st.Matched += w.matched
		st.Parsed += w.parsed
		st.BadLines += w.rb.badLines
		st.PlainLines += w.rb.plainLines
		st.BadTimes += w.rb.badTimes
		for i, became := range [2]string{"_msg", "_time"} {
			c := w.rb.renamed[i]
			if c.lines == 0 {
				continue
			}
			if j := slices.IndexFunc(st.Renamed, func(r Renamed) bool { return r.Became == became }); j >= 0 {
				st.Renamed[j].Lines += c.lines
			} else {
				st.Renamed = append(st.Renamed, Renamed{Name: c.name, Became: became, Lines: c.lines})
			}
		}
		if b := w.badTime; b != nil && (st.FirstBadTime == nil || b.Input < st.FirstBadTime.Input ||
			b.Input == st.FirstBadTime.Input && b.Offset < st.FirstBadTime.Offset) {
			st.FirstBadTime = b
		}
		st.EarlyRejected += w.rb.earlyLines
	}
	if e.stopped.Load() {
		st.LinesExact = false
	}
	return st
}

// finish merges the workers' barrier states and flushes the pipeline.
func (e *executor) finish() error {
	var err error
	if e.order != nil {
		err = e.order.finish()
		if err == nil || errors.Is(err, errStop) {
			err = e.post.flush()
		}
	} else if e.acc != nil {
		if err = e.collect(); err == nil {
			e.relay.next = e.post
			err = e.acc.flush()
		}
	} else {
		first := e.workers[0].barrier
		for _, w := range e.workers[1:] {
			if err = first.merge(w.barrier); err != nil {
				break
			}
		}
		if err == nil {
			if sp, ok := first.(*statsProc); ok && e.p.opts.Partial != nil {
				err = sp.writePartial(e.p.opts.Partial, sp.approximations())
			} else {
				err = first.flush()
			}
		}
	}
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// release frees what the run holds outside the heap (stats spill files).
func (e *executor) release() {
	if sp, ok := e.acc.(*statsProc); ok {
		sp.release()
	}
	for _, w := range e.workers {
		if sp, ok := w.barrier.(*statsProc); ok {
			sp.release()
		}
	}
}

func (e *executor) approx() []string {
	var out []string
	first := processor(e.acc)
	if e.acc == nil && len(e.workers) > 0 && e.workers[0].barrier != nil {
		first = e.workers[0].barrier
	}
	if first != nil {
		if a, ok := first.(interface{ approximations() []string }); ok {
			out = a.approximations()
		}
	}
	return out
}

// collector keeps a worker's output rows for the current chunk, in order.
type collector struct {
	cur *chunkOut
}

// chunkOut is one chunk's output rows.
type chunkOut struct {
	input int
	off   int64
	size  int64 // input bytes the chunk covers: its Data and the skipped long lines after it
	rows  []*Row
}

func (c *collector) begin(ch *fileread.Chunk) {
	c.cur = &chunkOut{input: ch.Input, off: ch.Offset, size: int64(len(ch.Data)) + ch.Skip}
}

func (c *collector) end() *chunkOut {
	out := c.cur
	c.cur = nil
	return out
}

func (c *collector) push(r *Row) error {
	c.cur.rows = append(c.cur.rows, r.Clone())
	return nil
}

func (c *collector) flush() error { return nil }

// orderer delivers chunk outputs to next in file order: chunks of an input
// cover it contiguously by offset, and fileread reports each input's size
// once all its chunks are out. With unordered set (Options.Unordered) it
// delivers each chunk's rows as soon as the chunk is done.
type orderer struct {
	mu        sync.Mutex
	unordered bool
	next      processor
	input     int
	off       int64
	sizes     map[int]int64
	pending   map[[2]int64]*chunkOut
	err       error
}

func newOrderer(next processor) *orderer {
	return &orderer{next: next, sizes: map[int]int64{}, pending: map[[2]int64]*chunkOut{}}
}

func (o *orderer) deliver(c *chunkOut) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	if o.unordered {
		return o.push(c)
	}
	o.pending[[2]int64{int64(c.input), c.off}] = c
	return o.advance()
}

// push hands the rows of c to next. Called with mu held.
func (o *orderer) push(c *chunkOut) error {
	for _, r := range c.rows {
		if err := o.next.push(r); err != nil {
			o.err = err
			return err
		}
	}
	return nil
}

func (o *orderer) done(input int, size int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil || o.unordered {
		return o.err
	}
	o.sizes[input] = size
	return o.advance()
}

func (o *orderer) fail(err error) {
	o.mu.Lock()
	if o.err == nil {
		o.err = err
	}
	o.mu.Unlock()
}

// advance pushes every chunk that is next in order. Called with mu held.
func (o *orderer) advance() error {
	for {
		if size, ok := o.sizes[o.input]; ok && o.off >= size {
			delete(o.sizes, o.input)
			o.input++
			o.off = 0
			continue
		}
		key := [2]int64{int64(o.input), o.off}
		c, ok := o.pending[key]
		if !ok {
			return nil
		}
		delete(o.pending, key)
		o.off += c.size
		if err := o.push(c); err != nil {
			return err
		}
	}
}

// finish checks that every chunk was delivered.
func (o *orderer) finish() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	if len(o.pending) > 0 {
		return fmt.Errorf("BUG: %d chunk outputs were never delivered in order (next input %d offset %d)", len(o.pending), o.input, o.off)
	}
	return nil
}
