package query

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spate-io/spate/internal/timeparse"
)

// PipeStreamContext returns the logs around each log it is fed, from the
// same stream: "stream_context before N after M [time_window D]", as
// VictoriaLogs v1.52.1 defines it. For each stream of the logs fed (at
// most 100 streams, 1,000 logs each), in the order of their earliest
// time, it reads the stream's logs within Window before the first and
// after the last time fed (the query's own filter and time range do not
// apply), and for each time fed, in time order, writes the N logs just
// before it, every log at that very time and the M just after, each
// sorted by time (ties by their fields, which also decide which of logs
// of one time are the N or M taken) and without the logs the previous
// time already wrote. A log is around a time only if it is strictly
// between the times fed before and after it, as in VictoriaLogs: so when
// several logs fed share a time, the first of them gets only the logs
// before, the last only those after, and the logs at that time are
// written for none of them. When
// there are several streams or several such groups, each group is
// followed by a row {"_time": its last log's time + 1 ns, "_stream_id",
// "_stream", "_msg": "---"}.
//
// The logs are read again with Options.Rerun, in one query for all the
// streams: "_stream_id:in(IDs) _time:[start, end]".
type PipeStreamContext struct {
	Before, After int64
	// Window is in nanoseconds (DefaultStreamContextWindow unless
	// written); WindowText is the duration as written, "" for the default.
	Window     int64
	WindowText string
}

// DefaultStreamContextWindow is how far from the logs fed stream_context
// looks for their neighbours when no time_window is given: one hour.
const DefaultStreamContextWindow = int64(3600e9)

// The limits VictoriaLogs puts on what stream_context is fed: its results
// are read by people.
const (
	maxStreamContextStreams = 100
	maxStreamContextRows    = 1000
)

func (*PipeStreamContext) isPipe() {}

func (p *PipeStreamContext) String() string {
	s := "stream_context"
	if p.Before > 0 {
		s += " before " + strconv.FormatInt(p.Before, 10)
	}
	if p.After > 0 {
		s += " after " + strconv.FormatInt(p.After, 10)
	}
	if p.Before <= 0 && p.After <= 0 {
		s += " after 0"
	}
	if p.WindowText != "" {
		s += " time_window " + p.WindowText
	}
	return s
}

// parseStreamContextPipe parses "stream_context before N after M
// [time_window D]" (before and after in any order, at least one).
func (p *parser) parseStreamContextPipe(_ string) (Pipe, error) {
	start := p.cur().pos
	p.next()
	pc := &PipeStreamContext{Window: DefaultStreamContextWindow}
	seen := false
	for p.isKw("before") || p.isKw("after") {
		kw := strings.ToLower(p.cur().text)
		p.next()
		// A number as VictoriaLogs reads it, its fraction dropped: 1.5
		// is 1, 1K is 1000.
		pos := p.cur().pos
		s, err := p.compound(stopsGeneric, "number after '"+kw+"'")
		if err != nil {
			return nil, err
		}
		f, ok := parseNumberLit(s)
		if !ok || f < 0 || f > math.MaxInt64/2 || math.IsNaN(f) {
			return nil, p.errorHint(pos, fmt.Sprintf("%s takes a non-negative number of logs such as 10", kw),
				"cannot parse %q as the number for '%s'", s, kw)
		}
		n := int64(f)
		if kw == "before" {
			pc.Before = n
		} else {
			pc.After = n
		}
		seen = true
	}
	if !seen {
		return nil, p.errorHint(start, "write stream_context before 10 after 10", "missing 'before N' or 'after N' in 'stream_context'")
	}
	if p.isKw("time_window") {
		p.next()
		var err error
		if pc.Window, pc.WindowText, err = p.parseDurationArg("time_window", "the duration of time_window", "use a duration such as 1h or 30m"); err != nil {
			return nil, err
		}
	}
	return pc, nil
}

// checkStreamContext refuses a stream_context pipe after a pipe other
// than filter, as VictoriaLogs does: the logs it is fed must be logs as
// stored, which it then reads again.
func checkStreamContext(q *Query) error {
	for i, p := range q.Pipes {
		if _, ok := p.(*PipeStreamContext); !ok || i == 0 {
			continue
		}
		for _, before := range q.Pipes[:i] {
			if _, ok := before.(*PipeFilter); !ok {
				return fmt.Errorf("[%s] pipe must go after [%s] filter; now it goes after the [%s] pipe", p, q.Filter, q.Pipes[i-1])
			}
		}
	}
	return nil
}

// HasStreamContext reports whether q has a stream_context pipe, which
// reads its inputs a second time.
func (q *Query) HasStreamContext() bool {
	return slices.ContainsFunc(q.Pipes, func(p Pipe) bool {
		_, ok := p.(*PipeStreamContext)
		return ok
	})
}

// errNoRerun is stream_context's error when the logs cannot be read again.
var errNoRerun = errors.New("stream_context reads the logs again to find their neighbours, and this input cannot be read twice (standard input, or -f): save it to a file first")

func (p *PipeStreamContext) newProcessor(pl *plan, next processor) (processor, error) {
	return &streamContextProc{
		p: p, pl: pl, next: next,
		times: make(map[string]*[]int64),
		ids:   matchStreamID{account: pl.opts.AccountID, project: pl.opts.ProjectID, cache: make(map[string]string)},
	}, nil
}

// streamContextProc implements stream_context: each worker collects the
// streams and times of the logs it is fed; merged, flush reads each
// stream's logs again and writes the contexts.
type streamContextProc struct {
	p  *PipeStreamContext
	pl *plan
	// times holds the times of the logs fed by _stream_id. Its keys own
	// their memory and are never assigned again: Go would replace a key
	// with the (aliasing) string of the assignment.
	times map[string]*[]int64
	ids   matchStreamID // derives the _stream_id of logs without one
	err   error
	next  processor
}

func (s *streamContextProc) push(r *Row) error {
	if s.err != nil {
		return errStop
	}
	ts, ok := rowTime(r)
	if !ok {
		s.err = errors.New("stream_context places the logs it is fed by their _time, and one has none (a line without a time field): filter such lines out first")
		return errStop
	}
	id := r.Get("_stream_id")
	if id == "" {
		id = s.ids.derive(rowStream(r))
	}
	tp := s.times[id]
	if tp == nil {
		if len(s.times) >= maxStreamContextStreams {
			s.err = fmt.Errorf("logs from more than %d streams passed to 'stream_context'; narrow down the matching log streams with more filters", maxStreamContextStreams)
			return errStop
		}
		tp = new([]int64)
		s.times[strings.Clone(id)] = tp
	}
	if len(*tp) >= maxStreamContextRows {
		s.err = fmt.Errorf("more than %d logs from one stream passed to 'stream_context'; narrow down the matching logs with more filters", maxStreamContextRows)
		return errStop
	}
	*tp = append(*tp, ts)
	return nil
}

func (s *streamContextProc) merge(other processor) error {
	o := other.(*streamContextProc)
	if s.err == nil {
		s.err = o.err
	}
	for id, ts := range o.times {
		if tp := s.times[id]; tp != nil {
			*tp = append(*tp, *ts...)
		} else {
			s.times[id] = ts // o's key owns its memory
		}
	}
	return nil
}

func (s *streamContextProc) flush() error {
	if s.err != nil {
		return s.err
	}
	if len(s.times) > maxStreamContextStreams {
		return fmt.Errorf("logs from %d streams passed to 'stream_context', more than the %d it takes; narrow down the matching log streams with more filters", len(s.times), maxStreamContextStreams)
	}
	streams := make([]*contextStream, 0, len(s.times))
	for id, tp := range s.times {
		ts := *tp
		if len(ts) > maxStreamContextRows {
			return fmt.Errorf("%d logs from one stream passed to 'stream_context', more than the %d it takes; narrow down the matching logs with more filters", len(ts), maxStreamContextRows)
		}
		streams = append(streams, s.newContextStream(id, ts))
	}
	if len(streams) == 0 {
		return s.next.flush()
	}
	slices.SortFunc(streams, func(a, b *contextStream) int {
		return cmp.Or(cmp.Compare(a.times[0], b.times[0]), cmp.Compare(a.id, b.id))
	})
	if s.pl.opts.Rerun == nil {
		return errNoRerun
	}
	if err := s.collect(streams); err != nil {
		return err
	}
	var row Row
	for _, st := range streams {
		groups := st.groups()
		for _, g := range groups {
			for _, cr := range g {
				// In the order logs are printed in: the logs were read
				// in any (anyOrderSink).
				row.Fields = append(row.Fields[:0], cr.fields...)
				sortRawFields(row.Fields)
				row.Time, row.HasTime = cr.time, true
				if err := s.next.push(&row); err != nil {
					return s.stopped(err)
				}
			}
			if len(streams) > 1 || len(groups) > 1 {
				last := g[len(g)-1]
				row.Fields = append(row.Fields[:0],
					Field{"_time", string(timeparse.AppendRFC3339(nil, last.time+1))},
					Field{"_stream_id", st.id},
					Field{"_stream", cmp.Or(fieldOf(last.fields, "_stream"), "{}")},
					Field{"_msg", "---"})
				row.Time, row.HasTime = last.time+1, true
				if err := s.next.push(&row); err != nil {
					return s.stopped(err)
				}
			}
		}
	}
	return s.next.flush()
}

// stopped handles an error from the next pipe's push: errStop (it wants
// no more rows) ends the writing with its flush; others are returned.
func (s *streamContextProc) stopped(err error) error {
	if err == errStop {
		return s.next.flush()
	}
	return err
}

// contextRow is a log read again for stream_context, its fields owned;
// sorted is them sorted by name, made when less first needs it (for logs
// of the same time).
type contextRow struct {
	time           int64
	fields, sorted []Field
}

// newContextRow copies the log r at ts (its fields in any order: see
// anyOrderSink), its names and values into one buffer: three allocations
// whatever the number of fields.
func newContextRow(ts int64, r *Row) *contextRow {
	n := 0
	for _, f := range r.Fields {
		n += len(f.Name) + len(f.Value)
	}
	buf := make([]byte, 0, n)
	cr := &contextRow{time: ts, fields: make([]Field, len(r.Fields))}
	for i, f := range r.Fields {
		start := len(buf)
		buf = append(buf, f.Name...)
		buf = append(buf, f.Value...)
		cr.fields[i] = Field{unsafeString(buf[start : start+len(f.Name)]), unsafeString(buf[start+len(f.Name):])}
	}
	return cr
}

// anyOrderSink is sinkFunc for logs whose fields may come in any order.
type anyOrderSink func(r *Row) error

func (f anyOrderSink) WriteRow(r *Row) error { return f(r) }
func (f anyOrderSink) takesEmptyRows()       {}
func (f anyOrderSink) anyFieldOrder()        {}

func (cr *contextRow) sortedFields() []Field {
	if cr.sorted == nil {
		cr.sorted = slices.Clone(cr.fields)
		slices.SortStableFunc(cr.sorted, func(x, y Field) int { return strings.Compare(x.Name, y.Name) })
	}
	return cr.sorted
}

// size is about the memory cr holds.
func (cr *contextRow) size() int64 {
	n := int64(64)
	for _, f := range cr.fields {
		n += int64(len(f.Name)+len(f.Value)) + 64
	}
	return n
}

// less orders context rows by time, then by their fields sorted by name
// (name, then value), then by their number: a total order, so that which
// of several logs of one time are taken does not depend on the order
// they are read in.
func (a *contextRow) less(b *contextRow) bool {
	if a.time != b.time {
		return a.time < b.time
	}
	return slices.CompareFunc(a.sortedFields(), b.sortedFields(), func(x, y Field) int {
		return cmp.Or(strings.Compare(x.Name, y.Name), strings.Compare(x.Value, y.Value))
	}) < 0
}

// timeContext collects the logs around one time fed.
type timeContext struct {
	at            int64
	before, after []*contextRow // the nearest so far, before sorted descending, after ascending
	matched       []*contextRow
}

// contextStream is one stream's part of stream_context: the times fed
// (sorted), the time range its logs are read from, and a timeContext per
// time.
type contextStream struct {
	id     string
	times  []int64
	lo, hi int64
	ctxs   []timeContext
}

func (s *streamContextProc) newContextStream(id string, times []int64) *contextStream {
	slices.Sort(times)
	st := &contextStream{id: id, times: times, ctxs: make([]timeContext, len(times))}
	st.lo, st.hi = contextRange(s.p, times[0], times[len(times)-1])
	for i, t := range times {
		st.ctxs[i].at = t
	}
	return st
}

// contextRange returns the range of times around first and last (the
// first and last times fed of a stream) whose logs stream_context reads,
// as VictoriaLogs gives it: Window before first (with Before) and after
// last (with After); an end on a whole second takes in that whole second,
// as the "_time:[start, end]" filter VictoriaLogs reads them with does;
// a negative Window is no bound at all.
func contextRange(p *PipeStreamContext, first, last int64) (lo, hi int64) {
	if p.Window < 0 {
		return math.MinInt64, math.MaxInt64
	}
	lo, hi = first, last
	if p.Before > 0 {
		lo = addNoOverflow(lo, -p.Window)
	}
	if p.After > 0 {
		hi = addNoOverflow(hi, p.Window)
	}
	if hi%1e9 == 0 && hi < math.MaxInt64-1e9 {
		hi += 1e9 - 1
	}
	return lo, hi
}

// collect reads the logs of the streams within their time ranges again,
// in one query ("_stream_id:in(...) _time:[...]" over the ranges' union),
// and hands each to the times of its stream it may be around.
func (s *streamContextProc) collect(streams []*contextStream) error {
	byID := make(map[string]*contextStream, len(streams))
	ids := make([]string, len(streams))
	lo, hi := streams[0].lo, streams[0].hi
	for i, st := range streams {
		byID[st.id] = st
		ids[i] = quoteToken(st.id)
		lo, hi = min(lo, st.lo), max(hi, st.hi)
	}
	text := "_stream_id:in(" + strings.Join(ids, ", ") + ")"
	if lo != math.MinInt64 || hi != math.MaxInt64 {
		text += fmt.Sprintf(" _time:[%s, %s]", timeparse.AppendRFC3339(nil, lo), timeparse.AppendRFC3339(nil, hi))
	}
	q, err := Parse(text, s.pl.opts.Now)
	if err != nil {
		return fmt.Errorf("stream_context: %w", err)
	}
	derive := matchStreamID{account: s.pl.opts.AccountID, project: s.pl.opts.ProjectID, cache: make(map[string]string)}
	var held int64
	return s.pl.opts.Rerun(q, anyOrderSink(func(r *Row) error {
		ts, ok := rowTime(r)
		if !ok {
			return nil
		}
		id := r.Get("_stream_id")
		if id == "" {
			id = derive.derive(rowStream(r))
		}
		st := byID[id]
		if st == nil || ts < st.lo || ts > st.hi {
			return nil
		}
		held += st.add(s.p, ts, r)
		if max := s.pl.opts.MaxMemory; max > 0 && held > max {
			return fmt.Errorf("stream_context holds more than %d bytes of logs: %w", max, ErrMemoryLimit)
		}
		return nil
	}))
}

// add hands the log r at ts to the times it may be around and returns the
// change in the bytes held.
func (st *contextStream) add(p *PipeStreamContext, ts int64, r *Row) int64 {
	times := st.times
	var cr *contextRow
	var held int64
	// VictoriaLogs passes a log to time i only strictly between times i-1
	// and i+1.
	j, _ := slices.BinarySearch(times, ts) // times[j] is the first >= ts
	k := j
	for k < len(times) && times[k] == ts {
		k++
	}
	for i := max(j-1, 0); i <= k && i < len(times); i++ {
		if i > 0 && ts <= times[i-1] || i+1 < len(times) && ts >= times[i+1] {
			continue
		}
		c := &st.ctxs[i]
		switch {
		case ts < c.at && (p.Before <= 0 || len(c.before) == int(p.Before) && ts < c.before[len(c.before)-1].time),
			ts > c.at && (p.After <= 0 || len(c.after) == int(p.After) && ts > c.after[len(c.after)-1].time):
			continue // farther than every log held: no need to copy it
		}
		if cr == nil {
			cr = newContextRow(ts, r)
		}
		var added bool
		var dropped *contextRow
		switch {
		case ts < c.at:
			c.before, added, dropped = keepNearest(c.before, int(p.Before), cr, func(a, b *contextRow) bool { return b.less(a) })
		case ts > c.at:
			c.after, added, dropped = keepNearest(c.after, int(p.After), cr, func(a, b *contextRow) bool { return a.less(b) })
		default:
			c.matched, added = append(c.matched, cr), true
		}
		if added {
			held += cr.size()
		}
		if dropped != nil {
			held -= dropped.size()
		}
	}
	return held
}

// groups returns the stream's groups to write: per time, the logs before
// it, at it and after it, sorted, less those the time before wrote.
func (st *contextStream) groups() [][]*contextRow {
	var groups [][]*contextRow
	var last *contextRow
	for i := range st.ctxs {
		c := &st.ctxs[i]
		g := slices.Concat(c.before, c.matched, c.after)
		slices.SortStableFunc(g, func(a, b *contextRow) int {
			switch {
			case a.less(b):
				return -1
			case b.less(a):
				return 1
			}
			return 0
		})
		if last != nil {
			k := 0
			for k < len(g) && !last.less(g[k]) {
				k++
			}
			g = g[k:]
		}
		if len(g) == 0 {
			continue
		}
		groups = append(groups, g)
		last = g[len(g)-1]
	}
	return groups
}

// keepNearest adds cr to rows, the n nearest to a time so far, nearest
// first by nearer, unless n are held that are all nearer; it reports
// whether cr was added, and which row it pushed out, if any.
func keepNearest(rows []*contextRow, n int, cr *contextRow, nearer func(a, b *contextRow) bool) (_ []*contextRow, added bool, dropped *contextRow) {
	if len(rows) == n && !nearer(cr, rows[n-1]) {
		return rows, false, nil
	}
	i := len(rows)
	for i > 0 && nearer(cr, rows[i-1]) {
		i--
	}
	if len(rows) < n {
		rows = append(rows, nil)
	} else {
		dropped = rows[n-1]
	}
	copy(rows[i+1:], rows[i:len(rows)-1])
	rows[i] = cr
	return rows, true, dropped
}

// fieldOf returns the value of the field name in fs, "" if absent.
func fieldOf(fs []Field, name string) string {
	for _, f := range fs {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}
