package cli

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/timeparse"
)

// defaultMergeWindow is how many rows of each input --merge holds to put
// slightly unordered lines in order.
const defaultMergeWindow = 1000

// checkMerge says why q cannot run with --merge, or nil: the pipes before
// its first limit or offset must work row by row and keep _time.
func checkMerge(q *query.Query) error {
	pre, _ := splitAtLimit(q)
	if q.HasStreamContext() {
		return usagef("--merge runs the query on each input alone, and stream_context reads every input again for the logs around those it is fed: run it without --merge (its answer is in _time order already)")
	}
	if p := firstNeedingAll(pre); p != nil {
		return usagef("--merge interleaves rows by _time, and the query's %s pipe needs all of its input (its result does not depend on the order of the inputs): run it without --merge", pipeName(p))
	}
	q2 := *q
	q2.Pipes = pre
	if !q2.CanReturnLastN() {
		return usagef("--merge orders rows by _time, and the query's pipes drop or change _time: keep _time in the rows (fields _time, ...)")
	}
	for _, p := range q.Pipes[len(pre):] {
		if _, err := query.NewPipeline([]query.Pipe{p}, nil); err != nil {
			return usagef("--merge: %v", err)
		}
	}
	return nil
}

// splitAtLimit splits q's pipes before its first limit or offset: those run
// on each input, the rest on the merged rows.
func splitAtLimit(q *query.Query) (pre, post []query.Pipe) {
	for i, p := range q.Pipes {
		switch p.(type) {
		case *query.PipeLimit, *query.PipeOffset:
			return q.Pipes[:i], q.Pipes[i:]
		}
	}
	return q.Pipes, nil
}

// runMerged runs q over each input on its own, at once, and writes their
// rows to sink in _time order, as hl --sort does: a k-way merge of the
// inputs, each put in order within a window of its next window rows (so a
// line up to window rows early or late in its file still lands in place).
// A row without _time keeps the time of the row before it in its input.
// Rows of equal time keep input order. Memory: window rows per input.
func runMerged(ctx context.Context, q *query.Query, inputs []string, window int, cfg fileread.Config, opts query.Options, sink query.Sink) (query.Stats, error) {
	if q.HasSubqueries() {
		// Over every input, before the inputs run one by one.
		if err := query.ResolveSubqueriesOver(ctx, q, inputs, cfg, opts); err != nil {
			return query.Stats{}, err
		}
	}
	pre, post := splitAtLimit(q)
	pl, err := query.NewPipeline(post, sink)
	if err != nil {
		return query.Stats{}, err
	}
	per := *q
	per.Pipes = pre
	if len(inputs) >= runtime.GOMAXPROCS(0) {
		cfg.Workers = 1 // the inputs run side by side already
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()

	srcs := make([]*mergeSource, len(inputs))
	stats := make([]query.Stats, len(inputs))
	errs := make([]error, len(inputs))
	var wg sync.WaitGroup
	for i, in := range inputs {
		ch := make(chan []*query.Row, 4)
		src := &mergeSource{in: i, ch: ch, last: math.MinInt64}
		srcs[i] = src
		o := opts
		o.InputFormats = nil
		if i < len(opts.InputFormats) {
			o.InputFormats = []query.InputFormat{opts.InputFormats[i]}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(ch)
			stats[i], errs[i] = query.Run(rctx, &per, []string{in}, cfg, o, &chanSink{ctx: rctx, ch: ch})
		}()
	}
	start := time.Now()
	merr := mergeInOrder(rctx, srcs, window, pl)
	if errors.Is(merr, query.ErrNoMoreRows) {
		merr = nil
	}
	cancel() // a limit reached, or an error: the other runs stop
	for _, s := range srcs {
		for range s.ch { // let blocked senders see the cancel
		}
	}
	wg.Wait()
	if merr == nil {
		merr = pl.Flush()
	}
	st := stats[0]
	for _, s := range stats[1:] {
		st.Add(s)
	}
	st.Duration = time.Since(start)
	for i, e := range errs {
		if e != nil && !errors.Is(e, context.Canceled) && merr == nil {
			merr = fmt.Errorf("%s: %w", inputs[i], e)
		}
	}
	if merr == nil && ctx.Err() != nil {
		merr = ctx.Err()
	}
	return st, merr
}

// chanSink sends clones of the rows of one input's run to the merge, in
// batches of mergeBatch (a channel send per row cost more than the merge).
type chanSink struct {
	ctx   context.Context
	ch    chan<- []*query.Row
	batch []*query.Row
}

const mergeBatch = 128

func (s *chanSink) WriteRow(r *query.Row) error {
	s.batch = append(s.batch, r.Clone())
	if len(s.batch) < mergeBatch {
		return nil
	}
	return s.Flush()
}

// Flush sends the rows batched so far; the run calls it at its end.
func (s *chanSink) Flush() error {
	if len(s.batch) == 0 {
		return nil
	}
	select {
	case s.ch <- s.batch:
		s.batch = make([]*query.Row, 0, mergeBatch)
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

// mergeSource is one input's rows: a window of up to window rows by time.
type mergeSource struct {
	in   int
	ch   <-chan []*query.Row
	next []*query.Row // rows received and not yet in rows
	eof  bool
	last int64 // time of the last row read, for rows without _time
	seq  int64
	rows sortedRows
}

type mergeRow struct {
	t, seq int64
	r      *query.Row
}

// sortedRows is a window of rows in order, first at head: rows come mostly
// in order, so an insert walks back from the end a few places at most, and
// a pop is O(1).
type sortedRows struct {
	rows []mergeRow
	head int
}

func (w *sortedRows) len() int { return len(w.rows) - w.head }

func (w *sortedRows) first() mergeRow { return w.rows[w.head] }

func (w *sortedRows) insert(r mergeRow) {
	i := len(w.rows)
	w.rows = append(w.rows, r)
	for i > w.head && w.rows[i-1].t > r.t { // seq grows: equal times stay in order
		w.rows[i] = w.rows[i-1]
		i--
	}
	w.rows[i] = r
}

func (w *sortedRows) pop() mergeRow {
	r := w.rows[w.head]
	w.rows[w.head] = mergeRow{}
	w.head++
	if w.head > 1024 && w.head*2 > len(w.rows) {
		n := copy(w.rows, w.rows[w.head:])
		clear(w.rows[n:])
		w.rows, w.head = w.rows[:n], 0
	}
	return r
}

// fill reads rows until the source holds window of them or its input ended.
func (s *mergeSource) fill(ctx context.Context, window int) error {
	for s.rows.len() < window {
		if len(s.next) == 0 {
			if s.eof {
				return nil
			}
			select {
			case b, ok := <-s.ch:
				if !ok {
					s.eof = true
					return nil
				}
				s.next = b
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		r := s.next[0]
		s.next[0] = nil
		s.next = s.next[1:]
		{
			t, ok := rowTime(r)
			if !ok {
				t = s.last
			}
			s.last = t
			s.seq++
			s.rows.insert(mergeRow{t: t, seq: s.seq, r: r})
		}
	}
	return nil
}

// rowTime returns r's _time in Unix nanoseconds.
func rowTime(r *query.Row) (int64, bool) {
	if r.HasTime {
		return r.Time, true
	}
	v := r.Get("_time")
	if v == "" {
		return 0, false
	}
	if ns, ok := timeparse.ParseRFC3339(v); ok {
		return ns, true
	}
	return timeparse.ParseIn(v, time.UTC)
}

// sources is a heap of the sources that hold rows, by their first row.
type sources []*mergeSource

func (h sources) Len() int { return len(h) }
func (h sources) Less(i, j int) bool {
	a, b := h[i].rows.first(), h[j].rows.first()
	return a.t < b.t || a.t == b.t && h[i].in < h[j].in
}
func (h sources) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *sources) Push(x any)   { *h = append(*h, x.(*mergeSource)) }
func (h *sources) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeInOrder pushes the rows of srcs to pl in time order.
func mergeInOrder(ctx context.Context, srcs []*mergeSource, window int, pl *query.Pipeline) error {
	var h sources
	for _, s := range srcs {
		if err := s.fill(ctx, window); err != nil {
			return err
		}
		if s.rows.len() > 0 {
			h = append(h, s)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		s := h[0]
		row := s.rows.pop()
		if err := pl.Push(row.r); err != nil {
			return err
		}
		if err := s.fill(ctx, window); err != nil {
			return err
		}
		if s.rows.len() > 0 {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}
