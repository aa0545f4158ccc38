package query

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spate-io/spate/internal/segindex"
	"github.com/spate-io/spate/internal/timeparse"
)

// Options configures a query run. The zero value means defaults.
type Options struct {
	// MsgField and TimeField name the fields that become _msg and _time.
	// Empty means auto-detect per line: _msg from _msg, msg, message, log;
	// _time from _time, ts, time, timestamp, @timestamp (first
	// present). A line without the named MsgField keeps its own _msg, and
	// a top-level empty key is _msg, as in VictoriaLogs.
	MsgField, TimeField string
	// TimeZone is where time values without a zone are wall times
	// ("2026-11-24 20:00:00", syslog and CLF without an offset); nil
	// means time.Local, as VictoriaLogs reads them. TimeFormat reads time
	// values one way instead of detecting their shape (--time-format);
	// the zero Layout detects (timeparse.ParseIn).
	TimeZone   *time.Location
	TimeFormat timeparse.Layout
	// InputFormats says how the lines of each input become fields, by
	// input index; inputs past its end (and a nil slice) are read as
	// JSON objects or plain text (FormatJSON).
	InputFormats []InputFormat
	// Now is the time relative _time filters were resolved against; only
	// used for explanations. Zero means time.Now().
	Now time.Time
	// MaxMemory caps the memory that exact stats state (distinct values,
	// quantile samples, group maps) may hold, in bytes; 0 means no cap.
	// Past the cap, count_uniq and quantile switch to sketches and the
	// result says so (Stats.Approximate), and a sort that must keep more
	// rows than the cap fails with ErrMemoryLimit.
	MaxMemory int64
	// Rerun runs a query over the same logs as this one, for the pipes
	// that read them again (stream_context reads the neighbours of the
	// logs it is fed): files again, a store's tenant again (its own
	// filter and time range only). Run sets it for files when it is nil
	// and the inputs can be read twice; nil refuses those pipes.
	Rerun func(q *Query, sink Sink) error
	// GroupMemory is the memory stats groups may hold (shared by the
	// workers) before partial results spill to temp files in TempDir;
	// 0 means DefaultGroupMemory for each worker and a negative value
	// never spills. Results stay exact. Only stats pipes whose functions
	// are all count, count_empty, rate, sum_len, sum or avg spill; others
	// keep every group in memory.
	GroupMemory int64
	// Partial, when set, makes Run write the state of the query's stats
	// pipe to Partial instead of result rows: the part of a query that
	// one node of several runs (see PlanRemote, Merger.AddPartial). The
	// query must end with its first pipe that needs every row, a stats
	// pipe. Groups never spill then.
	Partial io.Writer
	// TempDir is where spill files go; empty means os.TempDir().
	TempDir string
	// Approx asks for sketches from the start (bounded memory, approximate
	// count_uniq and quantiles).
	Approx bool
	// CountLines asks for Stats.Lines even on paths that skip lines
	// (prefiltered scans); it costs one extra pass over the bytes.
	CountLines bool
	// Progress, if set, is increased by the bytes of every chunk when a
	// worker finishes it, counted as the input's file holds them
	// (fileread.Chunk.FileBytes: compressed bytes for a .gz or .zst), so
	// that it ends near the inputs' total size (for progress bars; read it
	// atomically).
	Progress *atomic.Int64
	// AccountID and ProjectID are the tenant the logs belong to: the
	// _stream_id of a log without that field is its stream's ID in this
	// tenant (VictoriaLogs' IDs begin with the tenant). Default 0:0.
	AccountID, ProjectID uint32
	// StoreFields says the logs come from spate serve segments, which
	// leave out the _stream and _stream_id of logs in the empty stream: a
	// log without _stream reads as _stream "{}" with that stream's
	// _stream_id in the tenant, as VictoriaLogs returns it.
	StoreFields bool
	// Unordered lets the rows of a query without a pipe that needs all
	// rows (stats, sort, ...) come out in any order, chunk by chunk as the
	// workers finish them, as VictoriaLogs' API gives them: inputs are then
	// read in parallel (fileread.Config.ParallelInputs) and no rows wait
	// for earlier inputs. A limit keeps the first rows found, not the
	// first in file order. Default: file order.
	Unordered bool
	// Every, when positive, makes a query with a pipe that needs all of its
	// input (stats, sort, top, uniq, field_names, field_values, facets)
	// answer while it reads too: every Every, the rows so far go through
	// that pipe and the pipes after it, their result is written to the
	// sink, and SnapshotDone is called; the final result follows at the end
	// as usual (with no SnapshotDone). Snapshots are cumulative: each
	// covers every row read so far. Stats groups never spill then
	// (GroupMemory is ignored). Other queries ignore Every.
	Every        time.Duration
	SnapshotDone func() error
	// Index, if set, returns the sidecar index of the input name (a spate
	// serve segment; see package segindex), or nil when it has none. A
	// query that reads only short fields into an order-independent stats
	// pipe then reads such segments' rows from their hot columns, and
	// skips blocks outside its time range (see Stats.ColumnBlocks). The
	// answer is the same as from the lines.
	Index func(name string) *segindex.Index
}

// DefaultGroupMemory is each worker's group memory when
// Options.GroupMemory is 0: a table that stays in a 1 MiB L2 cache. A
// lookup in a bigger table misses the cache about four times (slot, key
// offset, key, column); writing small tables out and adding them up one
// partition at a time costs less. Against the former 16 MiB shared by 2
// workers on the 2 GiB sample (docs/query.md, "Spilling"): 2.6 million
// groups by path 2.32 against 2.59 s at 67 against 108 MB peak RSS;
// 100,000 groups by user_id 1.48 against 1.59 s, though they now spill.
const DefaultGroupMemory = 512 << 10

// plan is a query compiled for execution: which fields every stage needs,
// where the per-worker part ends, and which literal bytes every matching line
// contains.
type plan struct {
	opts   Options
	q      *Query
	filter Filter

	// pre runs on the workers, row by row; barrier is the first pipe that
	// needs all rows (nil if none), merged across workers; post runs on the
	// merged rows in order.
	pre     []Pipe
	barrier Pipe
	post    []Pipe

	need     fieldSet // log fields the query reads
	named    []string // fields the query names in its filter and pipes
	needTime bool     // the parsed _time is needed (time filters, buckets)

	// literal is a byte string every matching line contains (before JSON
	// unescaping), used to skip lines without parsing them; nil if none.
	literal []byte
	cands   *candFinder
	// escapeProbe is what a line must contain to spell the literal with a
	// JSON escape: `\u` when the literal has no byte JSON must escape
	// (only \uXXXX can then hide it), else a lone backslash.
	escapeProbe []byte

	// earlyFields are the filter's fields when lines may be rejected as
	// soon as they have set them all (see earlyFilter); nil if not.
	// earlyFinders find, for each, its last dotted segment or a backslash.
	earlyFields  []string
	earlyFinders []*candFinder

	// countOnly marks "* | stats count()" with nothing else per row: the
	// executor counts non-empty lines without parsing them.
	countOnly bool

	// timeMin and timeMax are the query's top-level _time range, for rate().
	timeMin, timeMax int64
	hasTimeRange     bool

	// mem is the run-wide memory accounting of exact stats state.
	mem *memShared
	// spilled counts the bytes stats groups spilled to temp files.
	spilled atomic.Int64
	// done is the run's cancellation (its context's Done), for pipes
	// that emit many rows at flush (generate_sequence); nil: none.
	done <-chan struct{}

	// timeOffset is the query's time_offset: added to the _time of the
	// rows that pass the filter, before the pipes (timeShiftProc).
	timeOffset int64

	// rawRows says the output rows are logs whose field set no pipe fixed:
	// they are printed with _time and _msg first, then the rest by name.
	rawRows bool
	// joinTables holds each join pipe's table of rows, built once and
	// shared by the workers' processors (read-only once built).
	joinMu     sync.Mutex
	joinTables map[*PipeJoin]map[string][][]Field
}

// isBarrier reports whether p needs every row of the scan (or their order)
// before it can emit, so it cannot run independently on each worker.
func isBarrier(p Pipe) bool {
	switch p.(type) {
	case *PipeLimit, *PipeOffset, *PipeSort, *PipeStats, *PipeTop, *PipeUniq,
		*PipeFieldNames, *PipeFieldValues, *PipeFacets, *PipeRunningStats, *PipeUnion, *PipeGenerateSequence,
		*PipeStreamContext:
		return true
	}
	return false
}

// newPlan compiles q.
func newPlan(q *Query, opts Options) (*plan, error) {
	if err := checkStreamContext(q); err != nil {
		return nil, err
	}
	if f := q.finalFilter(); f != q.Filter {
		// The options' global filter, for the plan's every use of the
		// filter (needs, literals, time range, shortcuts).
		g := *q
		g.Filter = f
		q = &g
	}
	q = fuseSortLimit(q)
	forEachFilter(q, func(f Filter) {
		if sf, ok := f.(*FilterStreamID); ok {
			sf.account, sf.project = opts.AccountID, opts.ProjectID
		}
	})
	p := &plan{opts: opts, q: q, filter: q.Filter, timeOffset: q.timeOffset()}
	i := 0
	for i < len(q.Pipes) && !isBarrier(q.Pipes[i]) {
		i++
	}
	p.pre = q.Pipes[:i]
	if i < len(q.Pipes) {
		p.barrier = q.Pipes[i]
		p.post = q.Pipes[i+1:]
	}

	// Needed fields, computed backwards from the output (which shows every
	// field unless a pipe fixes the set).
	need := allFields()
	p.rawRows = true
	for j := len(q.Pipes) - 1; j >= 0; j-- {
		need = pipeNeeds(q.Pipes[j], need)
		if fixesFields(q.Pipes[j]) {
			p.rawRows = false
		}
	}
	filterNeeds(q.Filter, &need, &p.needTime)
	// The fields the query names itself: the same walk from an output
	// that needs nothing.
	var named fieldSet
	for j := len(q.Pipes) - 1; j >= 0; j-- {
		named = pipeNeeds(q.Pipes[j], named)
	}
	var nt bool
	filterNeeds(q.Filter, &named, &nt)
	p.named = named.names
	for _, pp := range q.Pipes {
		if pipeNeedsTime(pp) {
			p.needTime = true
		}
	}
	p.need = need

	lit := verbatimPiece(requiredLiteral(q.Filter))
	if strings.IndexByte(lit, '"') >= 0 && slices.ContainsFunc(opts.InputFormats, func(f InputFormat) bool { return f.Kind == FormatCSV }) {
		lit = "" // CSV doubles quotes: the raw line need not hold the literal
	}
	if slices.ContainsFunc(opts.InputFormats, func(f InputFormat) bool { return f.Kind == FormatSyslog }) {
		lit = "" // syslog fields are derived (level from <PRI>): not in the raw line
	}
	if len(lit) > 0 {
		p.literal = []byte(lit)
		p.escapeProbe = []byte(`\u`)
		if strings.ContainsAny(lit, "\"\\/") || strings.IndexFunc(lit, func(r rune) bool { return r < 0x20 }) >= 0 {
			p.escapeProbe = []byte(`\`)
		}
		p.cands = newCandFinder(p.literal, p.escapeProbe)
	}
	p.timeMin, p.timeMax, p.hasTimeRange = topTimeRange(q.Filter)
	if names, ok := earlyFilter(q.Filter); ok {
		p.earlyFields = names
		for _, n := range names {
			seg := n[strings.LastIndexByte(n, '.')+1:]
			p.earlyFinders = append(p.earlyFinders, newCandFinder([]byte(seg), []byte(`\`)))
		}
	}

	// (Not over csv inputs: their header line is no log.)
	csv := slices.ContainsFunc(opts.InputFormats, func(f InputFormat) bool { return f.Kind == FormatCSV })
	if st, ok := p.barrier.(*PipeStats); ok && len(p.pre) == 0 && len(st.By) == 0 && isFilterAll(q.Filter) && !csv {
		p.countOnly = true
		for _, f := range st.Funcs {
			if f.Name != "count" || f.If != nil || !(len(f.Fields) == 0 || (len(f.Fields) == 1 && f.Fields[0] == "*")) {
				p.countOnly = false
			}
		}
	}
	for _, pp := range q.Pipes {
		if st, ok := pp.(*PipeStats); ok && !hasTimeBucket(st) {
			for _, f := range st.Funcs {
				if (f.Name == "rate" || f.Name == "rate_sum") && !p.hasTimeRange {
					return nil, fmt.Errorf("cannot run %s: "+f.Name+"() needs a _time filter with both bounds in the query, such as _time:[2026-01-01T00:00:00Z, 2026-01-01T01:00:00Z) or _time:1h", f.Result)
				}
			}
		}
	}
	return p, nil
}

// hasTimeBucket reports whether st groups by a _time bucket, whose step is
// what its rate() divides by.
func hasTimeBucket(st *PipeStats) bool {
	for _, b := range st.By {
		if b.Name == "_time" && b.BucketNs > 0 {
			return true
		}
	}
	return false
}

// walkFilter calls fn on f and every filter under it (AND, OR and NOT
// children), depth first; a nil f is skipped.
func walkFilter(f Filter, fn func(Filter)) {
	if f == nil {
		return
	}
	fn(f)
	switch f := f.(type) {
	case *FilterAnd:
		for _, c := range f.Filters {
			walkFilter(c, fn)
		}
	case *FilterOr:
		for _, c := range f.Filters {
			walkFilter(c, fn)
		}
	case *FilterNot:
		walkFilter(f.Filter, fn)
	}
}

// forEachFilter calls fn on every filter node of q: the query's filter and
// the filters of pipes (filter, and the if () conditions), depth first.
func forEachFilter(q *Query, fn func(Filter)) {
	walk := func(f Filter) { walkFilter(f, fn) }
	walk(q.Filter)
	if o := q.Options; o != nil && o.GlobalFilter != nil {
		walk(o.GlobalFilter)
	}
	for _, p := range q.Pipes {
		switch p := p.(type) {
		case *PipeFilter:
			walk(p.Filter)
		case *PipeStats:
			for _, sf := range p.Funcs {
				walk(sf.If)
			}
		case *PipeExtract:
			walk(p.If)
		case *PipeExtractRegexp:
			walk(p.If)
		case *PipeUnpack:
			walk(p.If)
		case *PipeFormat:
			walk(p.If)
		case *PipeReplace:
			walk(p.If)
		case *PipeCollapseNums:
			walk(p.If)
		case *PipeUnpackSyslog:
			walk(p.If)
		case *PipeSetStreamFields:
			walk(p.If)
		}
	}
}

// fuseSortLimit rewrites "sort by (...) | limit N" (and "| offset M |
// limit N" after a sort) into one sort with offset and limit, so that sort
// keeps only the best offset+limit rows instead of all of them. The query
// itself is not changed.
func fuseSortLimit(q *Query) *Query {
	var pipes []Pipe
	changed := false
	for i := 0; i < len(q.Pipes); i++ {
		ps, ok := q.Pipes[i].(*PipeSort)
		if !ok || ps.Limit != 0 || ps.Offset != 0 {
			pipes = append(pipes, q.Pipes[i])
			continue
		}
		fused := *ps
		j := i + 1
		if j < len(q.Pipes) {
			if off, ok := q.Pipes[j].(*PipeOffset); ok {
				fused.Offset = off.N
				j++
			}
		}
		if j < len(q.Pipes) {
			if lim, ok := q.Pipes[j].(*PipeLimit); ok && lim.N > 0 {
				fused.Limit = lim.N
				pipes = append(pipes, &fused)
				i = j
				changed = true
				continue
			}
		}
		pipes = append(pipes, q.Pipes[i])
	}
	if !changed {
		return q
	}
	return &Query{Options: q.Options, Filter: q.Filter, Pipes: pipes, inherited: q.inherited}
}

func isFilterAll(f Filter) bool {
	_, ok := f.(*FilterAll)
	return ok || f == nil
}

// fixesFields reports whether p's output fields are fixed by p, so the output
// is no longer raw log rows.
func fixesFields(p Pipe) bool {
	switch p.(type) {
	case *PipeFields, *PipeStats, *PipeTop, *PipeUniq, *PipeFieldNames, *PipeFieldValues, *PipeFacets,
		*PipeGenerateSequence:
		return true
	}
	return false
}

// pipeNeeds returns the fields p's input must have for its output to have
// the fields in after.
func pipeNeeds(p Pipe, after fieldSet) fieldSet {
	var in fieldSet
	switch p := p.(type) {
	case *PipeFields:
		for _, f := range p.Fields {
			in.add(f)
		}
		return in
	case *PipeDelete:
		in = after
		for _, f := range p.Fields {
			in.remove(f)
		}
		return in
	case *PipeRename:
		in = after
		for _, pr := range p.Pairs {
			if strings.HasSuffix(pr.Src, "*") {
				return allFields()
			}
			in.remove(pr.Dst)
			in.add(pr.Src)
		}
		return in
	case *PipeCopy:
		in = after
		for _, pr := range p.Pairs {
			if strings.HasSuffix(pr.Src, "*") {
				return allFields()
			}
			in.add(pr.Src)
		}
		return in
	case *PipeFilter:
		in = after
		addIfNeeds(p.Filter, &in)
		return in
	case *PipeLimit, *PipeOffset:
		return after
	case *PipeStreamContext:
		// The rows it writes are read again; of those it is fed, it reads
		// the time and the stream.
		in.add("_time")
		in.add("_stream_id")
		in.add("_stream")
		return in
	case *PipeSort:
		if len(p.By) == 0 {
			return allFields() // rows sort by all their fields
		}
		in = after
		if p.Rank != "" {
			in.remove(p.Rank)
		}
		for _, s := range p.By {
			in.add(s.Name)
		}
		for _, f := range p.Partition {
			in.add(f)
		}
		return in
	case *PipeStats:
		for _, b := range p.By {
			in.add(b.Name)
		}
		for _, f := range p.Funcs {
			for _, name := range f.Fields {
				in.add(name)
			}
			if (f.Name == "row_min" || f.Name == "row_max") && len(f.Fields) <= 1 {
				return allFields()
			}
			if (f.Name == "row_any" || f.Name == "stddev" || f.Name == "rate_sum" || f.Name == "json_values") && len(f.Fields) == 0 {
				return allFields()
			}
			for _, s := range f.Sort {
				in.add(s.Name)
			}
			if (f.Name == "count_uniq" || f.Name == "values" || f.Name == "uniq_values" ||
				f.Name == "min" || f.Name == "max" || f.Name == "sum" || f.Name == "avg" || f.Name == "sum_len") && len(f.Fields) == 0 {
				return allFields()
			}
			addIfNeeds(f.If, &in)
		}
		return in
	case *PipeTop:
		for _, f := range p.By {
			in.add(f)
		}
		return in
	case *PipeUniq:
		for _, f := range p.By {
			in.add(f)
		}
		return in
	case *PipeFieldValues:
		in.add(p.Field)
		return in
	case *PipeFieldNames, *PipeFacets:
		return allFields()
	case *PipeExtract:
		in = after
		in.add(p.From)
		addIfNeeds(p.If, &in)
		return in
	case *PipeExtractRegexp:
		in = after
		in.add(p.From)
		addIfNeeds(p.If, &in)
		return in
	case *PipeUnpack:
		in = after
		in.add(p.From)
		addIfNeeds(p.If, &in)
		return in
	case *PipeMath:
		in = after
		for _, a := range p.Assigns {
			mathNeeds(a.Expr, &in)
		}
		return in
	case *PipeFormat:
		in = after
		for _, ph := range parseFormatPattern(p.Pattern) {
			if ph.field != "" {
				in.add(ph.field)
			}
		}
		addIfNeeds(p.If, &in)
		return in
	case *PipeLen:
		in = after
		in.add(p.Field)
		return in
	case *PipeReplace:
		in = after
		in.add(p.Field)
		addIfNeeds(p.If, &in)
		return in
	case *PipePack:
		if len(p.Fields) == 0 {
			return allFields()
		}
		in = after
		for _, f := range p.Fields {
			in.add(f)
		}
		return in
	case *PipeUnroll:
		in = after
		for _, f := range p.Fields {
			in.add(f)
		}
		return in
	case *PipeRunningStats:
		return p.needs(after)
	case *PipeJoin:
		in = after
		for _, f := range p.By {
			in.add(f)
		}
		return in
	case *PipeUnion:
		return after
	case *PipeCoalesce:
		in = after
		for _, f := range p.Fields {
			in.add(f)
		}
		return in
	case *PipeDecolorize:
		return after
	case *PipeHash:
		in = after
		in.add(p.Field)
		return in
	case *PipeJSONArrayLen:
		in = after
		in.add(p.Field)
		return in
	case *PipeJSONArrayConcat:
		in = after
		in.add(p.From)
		return in
	case *PipeCollapseNums:
		in = after
		if in.has(p.Field) {
			addIfNeeds(p.If, &in)
		}
		return in
	case *PipeTimeAdd:
		return after
	case *PipeSplit:
		in = after
		in.add(p.From)
		return in
	case *PipeUnpackWords:
		in = after
		in.add(p.From)
		return in
	case *PipeSample:
		return after
	case *PipeSetStreamFields:
		if !after.has("_stream") {
			return after
		}
		in = after
		if p.If != nil {
			addIfNeeds(p.If, &in) // rows it rejects keep their _stream
		} else {
			in.remove("_stream")
		}
		for _, f := range p.Fields {
			in.add(f)
		}
		return in
	case *PipeGenerateSequence:
		return in // reads nothing
	case *PipeUnpackSyslog:
		in = after
		in.add(p.From)
		addIfNeeds(p.If, &in)
		return in
	}
	return allFields()
}

// addIfNeeds adds the fields that f, the filter of a pipe or of an if,
// reads to in; a time filter there reads the row's _time, which must so
// reach the pipe (it never matched when no later pipe kept _time).
func addIfNeeds(f Filter, in *fieldSet) {
	if f != nil {
		var t bool
		filterNeeds(f, in, &t)
		if t {
			in.add("_time")
		}
	}
}

func mathNeeds(e *MathExpr, in *fieldSet) {
	if e == nil {
		return
	}
	if e.Op == "field" {
		in.add(e.Field)
	}
	for _, a := range e.Args {
		mathNeeds(a, in)
	}
}

// pipeNeedsTime reports whether p uses the parsed _time (buckets).
func pipeNeedsTime(p Pipe) bool {
	if _, ok := p.(*PipeStreamContext); ok {
		return true
	}
	if st, ok := p.(*PipeStats); ok {
		for _, b := range st.By {
			if b.Name == "_time" {
				return true
			}
		}
	}
	return false
}

// filterNeeds adds the fields f reads to in; a _time filter sets needTime.
func filterNeeds(f Filter, in *fieldSet, needTime *bool) {
	switch f := f.(type) {
	case *FilterAnd:
		for _, c := range f.Filters {
			filterNeeds(c, in, needTime)
		}
	case *FilterOr:
		for _, c := range f.Filters {
			filterNeeds(c, in, needTime)
		}
	case *FilterNot:
		filterNeeds(f.Filter, in, needTime)
	case *FilterTime, *FilterDayRange, *FilterWeekRange:
		*needTime = true
	case *FilterStream:
		in.add("_stream")
	case *FilterStreamID:
		in.add("_stream_id")
		in.add("_stream")
	case *FilterFieldCompare:
		in.add(f.Field)
		in.add(f.Other)
	default:
		if field, ok := filterField(f); ok {
			in.add(field)
		}
	}
}

// filterField returns the field that a leaf filter (phrase, prefix, exact,
// in, contains, seq, regexp, comparison, the ranges) reads; ok is false for
// the logical filters, *, time filters and those of two fields (eq_field).
func filterField(f Filter) (field string, ok bool) {
	switch f := f.(type) {
	case *FilterPhrase:
		return f.Field, true
	case *FilterPrefix:
		return f.Field, true
	case *FilterExact:
		return f.Field, true
	case *FilterIn:
		return f.Field, true
	case *FilterContainsAny:
		return f.Field, true
	case *FilterContainsAll:
		return f.Field, true
	case *FilterSeq:
		return f.Field, true
	case *FilterRegexp:
		return f.Field, true
	case *FilterCompare:
		return f.Field, true
	case *FilterRange:
		return f.Field, true
	case *FilterLenRange:
		return f.Field, true
	case *FilterStringRange:
		return f.Field, true
	case *FilterIPv4Range:
		return f.Field, true
	case *FilterIPv6Range:
		return f.Field, true
	case *FilterCommonCase:
		return f.Field, true
	case *FilterJSONArrayContainsAny:
		return f.Field, true
	case *FilterPatternMatch:
		return f.Field, true
	}
	return "", false
}

// requiredLiteral returns a string that every line matching f contains in
// its raw bytes, or "" if there is none the prefilter can rely on. A JSON line
// may spell the string with escapes; the executor therefore also treats every
// line containing a backslash as a candidate.
func requiredLiteral(f Filter) string {
	lit := ""
	switch f := f.(type) {
	case *FilterAnd:
		for _, c := range f.Filters {
			if l := requiredLiteral(c); len(l) > len(lit) {
				lit = l
			}
		}
		return lit
	case *FilterPhrase:
		if !f.CaseInsensitive {
			lit = f.Phrase
		}
		return usableLiteral(f.Field, lit)
	case *FilterPrefix:
		if !f.CaseInsensitive {
			lit = f.Prefix
		}
		return usableLiteral(f.Field, lit)
	case *FilterExact:
		return usableLiteral(f.Field, f.Value)
	case *FilterContainsAll:
		for _, p := range f.Phrases {
			if len(p) > len(lit) {
				lit = p
			}
		}
		return usableLiteral(f.Field, lit)
	case *FilterSeq:
		for _, p := range f.Phrases {
			if len(p) > len(lit) {
				lit = p
			}
		}
		return usableLiteral(f.Field, lit)
	case *FilterRegexp:
		if l, ok := regexpLiteral(f.Expr); ok {
			return usableLiteral(f.Field, l)
		}
	case *FilterPatternMatch:
		// Every text between the placeholders is in a matching value.
		return usableLiteral(f.Field, newPatternMatcher(f.Pattern, f.Func).longestText())
	case *FilterStream:
		// A line in the stream has the tag's value in its _stream field,
		// as written when quoting leaves it alone: printable ASCII but '"'
		// and '\'. (A line without _stream is in {}, where every tag is "".)
		if len(f.Or) == 1 {
			for _, t := range f.Or[0] {
				if t.Op == "=" && len(t.Value) > len(lit) && !strings.ContainsFunc(t.Value, func(r rune) bool {
					return r < 0x20 || r > 0x7e || r == '"' || r == '\\'
				}) {
					lit = t.Value
				}
			}
		}
		return lit
	}
	return ""
}

// verbatimPiece returns the longest piece of lit between the bytes JSON
// puts between tokens ([ ] { } , :), which a line holds as is when a
// value holds lit: a value that is a JSON array or object is matched as
// compact text (`[1,2,3]`), where the line may spell it with spaces (`[1,
// 2, 3]`), and such spaces only ever sit next to one of those bytes.
func verbatimPiece(lit string) string {
	if !strings.ContainsAny(lit, "[]{},:") {
		return lit
	}
	best := ""
	for _, piece := range strings.FieldsFunc(lit, func(r rune) bool { return strings.ContainsRune("[]{},:", r) }) {
		if len(piece) > len(best) {
			best = piece
		}
	}
	return best
}

// usableLiteral drops literals the raw line may not contain even when the
// field's value does: values of _time (reformatted) and, for _msg, text that
// the default "missing _msg field" message supplies.
func usableLiteral(field, lit string) string {
	if lit == "" || field == "_time" {
		return ""
	}
	if field == "_msg" && strings.Contains(missingMsg, lit) {
		return ""
	}
	return lit
}

// topTimeRange returns the _time range that every row of the query must fall
// in, from _time filters ANDed at the top level.
func topTimeRange(f Filter) (lo, hi int64, ok bool) {
	switch f := f.(type) {
	case *FilterTime:
		return f.Min, f.Max, true
	case *FilterAnd:
		for _, c := range f.Filters {
			if l, h, k := topTimeRange(c); k {
				if !ok {
					lo, hi, ok = l, h, true
				} else {
					lo, hi = max(lo, l), min(hi, h)
				}
			}
		}
	}
	return lo, hi, ok
}
