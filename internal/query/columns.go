package query

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/klauspost/compress/zstd"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/segindex"
	"github.com/spate-io/spate/internal/timeparse"
)

// NewIndexLines returns a segindex.LineReader that reads a line's fields
// exactly as a query with default Options does (JSON objects, _msg and
// _time taken from their usual fields), so that a segment's hot columns
// hold the values a scan of its lines would see. A _time counts (timeOK)
// only when it reads the same in every time zone. The reader is not safe
// for concurrent use.
func NewIndexLines() segindex.LineReader {
	p := &plan{opts: Options{TimeZone: time.UTC}, need: allFields(), needTime: true}
	var a arena
	rb := newRecordBuilder(p, &a)
	var row Row
	other := time.FixedZone("index-check", 7*3600+1800)
	return func(line []byte, emit func(name, value string)) (int64, bool, bool) {
		a.reset()
		bad, plain := rb.badLines, rb.plainLines
		rb.build(line, &row)
		ok := rb.badLines == bad && rb.plainLines == plain
		timeOK := row.HasTime
		// The value as the line has it: row's _time is written again in
		// UTC, whatever the line held.
		if tx := rb.timeText; timeOK && !strings.HasSuffix(tx, "Z") {
			// Slow path: a value that is not UTC RFC 3339 (as ingestion
			// writes them) reads the same in another zone, or not.
			t2, ok2 := timeparse.ParseIn(tx, other)
			timeOK = ok2 && t2 == row.Time && !timeparse.MeansNow([]byte(tx))
		}
		for _, f := range row.Fields {
			emit(f.Name, f.Value)
		}
		return row.Time, timeOK, ok
	}
}

// IndexNumbers parses a value as numeric filters do, for the numeric
// ranges of segment sidecars (segment.Options.IndexNumbers).
func IndexNumbers(s string) (float64, bool) { return mathNumber(s) }

// columnStatsFuncs are the stats functions whose result does not depend on
// the order rows arrive in or on fields the query does not name, so a
// query with them may read rows from hot columns.
var columnStatsFuncs = map[string]bool{
	"avg": true, "count": true, "count_empty": true, "count_uniq": true, "histogram": true, "max": true, "median": true,
	"min": true, "quantile": true, "rate": true, "sum": true, "sum_len": true, "uniq_values": true,
}

// columnFields returns the fields a query reads when its rows may come
// from a segment's hot columns instead of its lines: only filters before a
// stats pipe of order-independent functions, every field named (no
// patterns), not the _time text, and the default Options for
// reading lines (those the columns were built with). ok is false otherwise.
func (p *plan) columnFields() (fields []string, ok bool) {
	o := &p.opts
	if !p.defaultReading() || o.Every > 0 {
		return nil, false
	}
	st, isStats := p.barrier.(*PipeStats)
	if !isStats {
		return nil, false
	}
	for _, f := range st.Funcs {
		if !columnStatsFuncs[f.Name] {
			return nil, false
		}
	}
	for _, pp := range p.pre {
		if _, ok := pp.(*PipeFilter); !ok {
			return nil, false
		}
	}
	need := p.need
	if slices.ContainsFunc(st.By, isTimeBucket) {
		// Time buckets read Row.Time, which the _time column gives: the
		// _time text is needed only if something else reads it.
		cp := *st
		cp.By = slices.DeleteFunc(slices.Clone(st.By), isTimeBucket)
		need = pipeNeeds(&cp, fieldSet{})
		for j := len(p.pre) - 1; j >= 0; j-- {
			need = pipeNeeds(p.pre[j], need)
		}
		var nt bool
		filterNeeds(p.filter, &need, &nt)
	}
	if need.all || len(need.prefixes) > 0 {
		return nil, false
	}
	for _, n := range need.names {
		switch n {
		case "_time":
			return nil, false
		case "_stream", "_stream_id":
			if o.StoreFields {
				return nil, false // derived for lines without one (see Options.StoreFields)
			}
		}
	}
	return need.names, true
}

func isTimeBucket(b ByField) bool { return b.Name == "_time" && b.BucketNs > 0 }

// defaultReading reports whether the query reads lines as sidecars were
// built (NewIndexLines): JSON, _msg and _time from their usual fields, time
// values detected. Only then do a sidecar's columns, time ranges and
// blooms describe the rows the query sees.
func (p *plan) defaultReading() bool {
	o := &p.opts
	return p.timeOffset == 0 && o.MsgField == "" && o.TimeField == "" && o.TimeFormat == (timeparse.Layout{}) &&
		!slices.ContainsFunc(o.InputFormats, func(f InputFormat) bool { return f.Kind != FormatJSON })
}

// colWorker is what one worker needs to read blocks from columns.
type colWorker struct {
	dec   *zstd.Decoder
	zbuf  []byte
	raw   [][]byte // decompressed column of each field
	cols  []segindex.StringColumn
	has   []bool // the block has a column for the field
	tbuf  []byte
	times []int64
	lines []byte // a block's lines, when its columns fail (blockLines)
	cbuf  []byte // column frames read (where the sidecar is not mapped)
	// Fast paths: which dictionary ids the filter matches; histogram's
	// counts and the radix of each by-field.
	match   []bool
	cands   []int32 // literalRows' rows
	counts  []int64
	radix   []int
	buckets []int64 // histogram's _time bucket starts in the block
}

// colScratch is what colWorkers keep between queries: a zstd decoder and
// the buffers a block's frame is read and decoded into (a block's lines
// are about a MiB: allocating and zeroing them anew costs a needle query
// more than finding its block).
type colScratch struct {
	dec         *zstd.Decoder
	zbuf, lines []byte
}

var colScratches = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		panic(fmt.Sprintf("cannot create zstd decoder: %v", err))
	}
	return &colScratch{dec: d}
}}

// maxPooledLines bounds the line buffer a colScratch keeps.
const maxPooledLines = 8 << 20

// getColScratch sets cw's decoder and buffers from the pool;
// putColScratch gives them back.
func getColScratch(cw *colWorker) {
	sc := colScratches.Get().(*colScratch)
	cw.dec, cw.zbuf, cw.lines = sc.dec, sc.zbuf, sc.lines
}

func putColScratch(cw *colWorker) {
	sc := &colScratch{dec: cw.dec}
	if cap(cw.lines) <= maxPooledLines && cap(cw.zbuf) <= maxPooledLines {
		sc.zbuf, sc.lines = cw.zbuf[:0], cw.lines[:0]
	}
	colScratches.Put(sc)
}

// columnBlock reads one block from its columns on worker w.
func (e *executor) columnBlock(w *workerState, cw *colWorker, j segJob, fields []string) error {
	ix := j.seg.ix
	blk := &ix.Blocks[j.block]
	if e.acc != nil {
		e.gate.RLock()
		defer e.gate.RUnlock()
	}
	if pr := e.p.opts.Progress; pr != nil {
		defer pr.Add(blk.ZLen) // the .zst's bytes, which the total counts
	}
	if e.p.countOnly {
		e.colBlocks.Add(1)
		e.colLineBytes.Add(blk.RawLen)
		n := int64(blk.Rows)
		w.lines += n
		w.matched += n
		w.barrier.(*statsProc).addCount(n)
		return nil
	}
	var err error
	// Fast path: a count of every row of the block by one field (into one
	// _time bucket, if any) reads the by-field's counts of rows per value,
	// which a packed column holds: no ids, no times (histogramCounts).
	counts := e.countsOnly(w, blk)
	for i, id := range j.seg.ids {
		cw.has[i] = false
		if id < 0 || !blk.Has(id) {
			continue
		}
		ref, _ := blk.Column(id)
		if cw.raw[i], err = e.readColumn(cw, ix, ref, cw.raw[i]); err == nil {
			ok := false
			if counts && len(e.fast.hist) == 1 && i == e.fast.hist[0] {
				ok, err = segindex.ParseCounts(cw.raw[i], blk.Rows, &cw.cols[i])
				counts = ok // not packed: counted from its ids
			}
			if !ok {
				err = segindex.ParseString(cw.raw[i], blk.Rows, &cw.cols[i])
			}
		}
		if err != nil {
			return e.columnFallback(w, cw, j, fmt.Errorf("column %s: %w", fields[i], err))
		}
		cw.has[i] = true
	}
	if counts {
		e.colBlocks.Add(1)
		e.colLineBytes.Add(blk.RawLen)
		return e.histogramCounts(w, cw, blk, fields)
	}
	needTime := e.p.needTime
	if needTime {
		if cw.tbuf, err = e.readColumn(cw, ix, blk.Time, cw.tbuf); err == nil {
			cw.times, err = segindex.ParseTime(cw.tbuf, blk.Rows, cw.times)
		}
		if err != nil {
			return e.columnFallback(w, cw, j, fmt.Errorf("_time column: %w", err))
		}
	}
	e.colBlocks.Add(1)
	e.colLineBytes.Add(blk.RawLen)
	row := &w.row
	fast := &e.fast
	// Fast path: a filter that reads one field, a dictionary column, is
	// evaluated once per value (match, by id); a field no row of the block
	// has, once for the block.
	var match []bool
	fi := fast.filterField
	allMatch := fast.filterAll
	// A filter's top-level time range that holds the whole block is true
	// of every row: evaluated once with a time inside it.
	inRange := fast.timeRange && blk.MinTime >= fast.tmin && blk.MaxTime <= fast.tmax
	switch {
	case fast.timeRange && !inRange:
		fi = -1 // Slow path: the block straddles the range's ends.
	case inRange && fast.restAll:
		allMatch = true
	}
	if fi >= 0 {
		switch {
		case !cw.has[fi]:
			row.Fields, row.Time, row.HasTime = row.Fields[:0], blk.MinTime, inRange
			if !w.filter.match(row) {
				w.lines += int64(blk.Rows)
				return nil
			}
			fi, allMatch = -1, true
		case cw.cols[fi].IsDict():
			c := &cw.cols[fi]
			match = append(cw.match[:0], false)
			row.Fields, row.Time, row.HasTime = row.Fields[:0], blk.MinTime, inRange
			match[0] = w.filter.match(row)
			for _, v := range c.Dict {
				row.Fields = append(row.Fields[:0], Field{Name: fields[fi], Value: v})
				match = append(match, w.filter.match(row))
			}
			cw.match = match
		}
	}
	if fast.hist != nil && (allMatch || match != nil) {
		if done, err := e.histogram(w, cw, blk, fields, match, fi); done || err != nil {
			return err
		}
	}
	// Fast paths: the rows that may match, listed first. With a filter of
	// one field, a dictionary column of byte ids, those whose id matches;
	// a plain column and a literal the filter needs (plan.literal), those
	// whose value holds it, found in the whole column at once.
	var cands []int32
	useCands := false
	switch {
	case match != nil:
		if ids, ok := cw.cols[fi].ByteIDs(); ok {
			cands, useCands = cw.cands[:0], true
			for r, id := range ids[:blk.Rows] {
				if match[id] {
					cands = append(cands, int32(r))
				}
			}
		}
	case fi >= 0 && !allMatch && fast.lit != nil && cw.has[fi] && !cw.cols[fi].IsDict():
		cands, useCands = literalRows(cw.cands[:0], &cw.cols[fi], cw.raw[fi], fast.lit), true
	}
	n := blk.Rows
	if useCands {
		cw.cands = cands
		w.lines += int64(blk.Rows - len(cands))
		n = len(cands)
	}
	for k := range n {
		r := k
		if useCands {
			r = int(cands[k])
		}
		if match != nil && !match[cw.cols[fi].ID(r)] {
			w.lines++
			continue
		}
		row.Fields = row.Fields[:0]
		for i, name := range fields {
			if cw.has[i] {
				if v, ok := cw.cols[i].Value(r); ok {
					row.Fields = append(row.Fields, Field{Name: name, Value: v})
				}
			}
		}
		row.HasTime = needTime
		if needTime {
			row.Time = cw.times[r]
		}
		w.lines++
		if match == nil && !allMatch && !w.filter.match(row) {
			continue
		}
		w.matched++
		row.pos = rowPos{input: j.seg.input, off: blk.RawOff + int64(r)}
		if err := w.head.push(row); err != nil {
			return err
		}
	}
	return nil
}

// literalRows appends to dst the rows of the plain column c (decoded
// from raw, which its values alias) whose value contains lit, in order.
func literalRows(dst []int32, c *segindex.StringColumn, raw []byte, lit *finder) []int32 {
	if len(raw) == 0 {
		return dst
	}
	base := uintptr(unsafe.Pointer(&raw[0]))
	rows := c.Rows()
	r, pos := 0, 0
	for pos < len(raw) {
		h := lit.index(raw[pos:])
		if h < 0 {
			break
		}
		h += pos
		end := h + len(lit.lit)
		// The row whose value ends at or past the hit's end: the hit is
		// in it if it also starts at or after the value's start.
		var off int
		for ; r < rows; r++ {
			v, _ := c.Value(r)
			if len(v) > 0 {
				off = int(uintptr(unsafe.Pointer(unsafe.StringData(v))) - base)
				if off+len(v) >= end {
					break
				}
			}
		}
		if r == rows {
			break
		}
		if h >= off {
			dst = append(dst, int32(r))
			v, _ := c.Value(r)
			pos = off + len(v)
			r++
		} else {
			pos = off // the hit crosses into the value: search from its start
		}
	}
	return dst
}

// colFast is what the fast paths of columnBlock need of a run, worked
// out once (see fastPaths).
type colFast struct {
	// filterAll: the filter matches every row (and there are no pipes
	// before stats). filterField: the index (in the column fields) of the
	// one field the filter reads, or -1.
	filterAll   bool
	filterField int
	// lit: with filterField, a literal every matching value contains
	// (plan.literal), searched in a plain column's whole buffer.
	lit *finder
	// hist: the column-field indexes of the stats pipe's by-fields when
	// it only counts rows (count() and nothing else, no pipes before it,
	// no buckets but one of _time): a block's rows are then counted per
	// combination of dictionary ids (and _time bucket: timeBucket). nil
	// otherwise.
	hist       []int
	timeBucket *ByField
	// timeRange: the filter reads the time only in top-level _time filters,
	// whose ranges meet in [tmin, tmax]; restAll: it has no other
	// condition.
	timeRange, restAll bool
	tmin, tmax         int64
}

// timeOnlyAtTop reports whether every _time filter in f is one of its
// top-level conjuncts, and none is a day_range or week_range.
func timeOnlyAtTop(f Filter) bool {
	top := 0
	for _, c := range topConjuncts(f) {
		if _, ok := c.(*FilterTime); ok {
			top++
		}
	}
	all := 0
	walkFilter(f, func(f Filter) {
		switch f.(type) {
		case *FilterTime, *FilterDayRange, *FilterWeekRange:
			all++ // any reader of the time
		}
	})
	return top == all
}

// fastPaths works out colFast for the column fields.
func (p *plan) fastPaths(fields []string) colFast {
	f := colFast{filterField: -1}
	if len(p.pre) > 0 {
		return f
	}
	f.filterAll = isFilterAll(p.filter)
	var need fieldSet
	var needTime bool
	filterNeeds(p.filter, &need, &needTime)
	if needTime && p.hasTimeRange && timeOnlyAtTop(p.filter) {
		// The time is read only by top-level _time filters: a block inside
		// their range passes them all (see columnBlock).
		f.timeRange, f.tmin, f.tmax, needTime = true, p.timeMin, p.timeMax, false
		f.restAll = len(need.names) == 0 && !slices.ContainsFunc(topConjuncts(p.filter), func(c Filter) bool {
			_, isTime := c.(*FilterTime)
			return !isTime && !isFilterAll(c)
		})
	}
	if !needTime && !need.all && len(need.prefixes) == 0 && len(need.names) == 1 {
		f.filterField = slices.Index(fields, need.names[0])
		if f.filterField >= 0 && p.literal != nil {
			f.lit = newFinder(p.literal)
		}
	}
	st, ok := p.barrier.(*PipeStats)
	if !ok {
		return f
	}
	for _, fn := range st.Funcs {
		if fn.Name != "count" || fn.If != nil || !(len(fn.Fields) == 0 || (len(fn.Fields) == 1 && fn.Fields[0] == "*")) {
			return f
		}
	}
	hist := []int{}
	for _, b := range st.By {
		if isTimeBucket(b) && f.timeBucket == nil {
			f.timeBucket = &b
			continue
		}
		i := slices.Index(fields, b.Name)
		if b.Bucket != "" || i < 0 {
			f.timeBucket = nil
			return f
		}
		hist = append(hist, i)
	}
	f.hist = hist
	return f
}

// maxHistogram caps the combinations of dictionary ids histogram counts
// in one array.
const maxHistogram = 1 << 16

// histogram counts a block's matching rows (all, or those whose id
// matches, by match, in column fi) per combination of the by-fields'
// dictionary ids, and adds each combination's count to the worker's stats
// group, without making rows. It reports false, doing nothing, when a
// by-field is a plain column or the combinations are too many.
func (e *executor) histogram(w *workerState, cw *colWorker, blk *segindex.Block, fields []string, match []bool, fi int) (bool, error) {
	sp, ok := w.barrier.(*statsProc)
	if !ok || w.head != processor(sp) {
		return false, nil
	}
	hist := e.fast.hist
	size := 1
	cw.radix = cw.radix[:0]
	for _, h := range hist {
		n := 1
		if cw.has[h] {
			if !cw.cols[h].IsDict() {
				return false, nil
			}
			n = len(cw.cols[h].Dict) + 1
		}
		cw.radix = append(cw.radix, n)
		size *= n
		if size > maxHistogram {
			return false, nil
		}
	}
	// With a _time bucket, counts holds size counters per bucket start in
	// the block (rows come in time order: few buckets, in runs), added as
	// matching rows meet them.
	tb := e.fast.timeBucket
	cw.buckets = cw.buckets[:0]
	if tb == nil {
		cw.counts = append(cw.counts[:0], make([]int64, size)...)
	} else {
		cw.counts = cw.counts[:0]
	}
	var matched int64
	last := -1
	if tb == nil && len(hist) <= 1 {
		// Fast paths: no bucket and at most one by-field, ids of a byte.
		var hIDs, mIDs []byte
		hOK, mOK := true, true
		if len(hist) == 1 && cw.has[hist[0]] {
			hIDs, hOK = cw.cols[hist[0]].ByteIDs()
		}
		if match != nil {
			mIDs, mOK = cw.cols[fi].ByteIDs()
		}
		if hOK && mOK {
			matched = countByteIDs(cw.counts, hIDs, mIDs, match, blk.Rows)
			goto emit
		}
	}
	if tb == nil && len(hist) == 2 && match == nil && cw.has[hist[0]] && cw.has[hist[1]] {
		// Fast path: two by-fields, every row, ids of a byte.
		a, aOK := cw.cols[hist[0]].ByteIDs()
		b, bOK := cw.cols[hist[1]].ByteIDs()
		if aOK && bOK {
			rb, counts := cw.radix[1], cw.counts
			b = b[:len(a)]
			for r, x := range a {
				counts[int(x)*rb+int(b[r])]++
			}
			matched = int64(len(a))
			goto emit
		}
	}
	for r := range blk.Rows {
		if match != nil && !match[cw.cols[fi].ID(r)] {
			continue
		}
		key := 0
		if tb != nil {
			row := &w.row
			row.Time, row.HasTime = cw.times[r], true
			start, _, ok := sp.bucket(row, *tb)
			if !ok {
				return false, nil // nothing counted yet is lost: the caller goes on row by row
			}
			if last < 0 || cw.buckets[last] != start {
				if last = slices.Index(cw.buckets, start); last < 0 {
					if (len(cw.buckets)+1)*size > maxHistogram {
						return false, nil
					}
					cw.buckets = append(cw.buckets, start)
					cw.counts = append(cw.counts, make([]int64, size)...)
					last = len(cw.buckets) - 1
				}
			}
			key = last
		}
		for k, h := range hist {
			key *= cw.radix[k]
			if cw.has[h] {
				key += int(cw.cols[h].ID(r))
			}
		}
		cw.counts[key]++
		matched++
	}
emit:
	row := &w.row
	for key, n := range cw.counts {
		if n == 0 {
			continue
		}
		row.Fields, row.HasTime = row.Fields[:0], false
		rest := key
		for k := len(hist) - 1; k >= 0; k-- {
			id := rest % cw.radix[k]
			rest /= cw.radix[k]
			if id > 0 {
				row.Fields = append(row.Fields, Field{Name: fields[hist[k]], Value: cw.cols[hist[k]].Dict[id-1]})
			}
		}
		if tb != nil {
			// rest is the bucket's index: its start falls in it.
			row.Time, row.HasTime = cw.buckets[rest], true
		}
		if err := sp.addGroupCount(row, n); err != nil {
			return true, err
		}
	}
	w.lines += int64(blk.Rows)
	w.matched += matched
	return true, nil
}

// countsOnly reports whether histogramCounts answers blk: the stats pipe
// heads the worker's pipes and only counts rows, by one field (colFast.hist)
// and at most a _time bucket that holds the whole block, and the filter
// matches every row of the block.
func (e *executor) countsOnly(w *workerState, blk *segindex.Block) bool {
	f := &e.fast
	if len(f.hist) > 1 || len(f.hist) == 0 && f.timeBucket == nil {
		return false // (a count of no fields nor bucket is plan.countOnly's)
	}
	sp, ok := w.barrier.(*statsProc)
	if !ok || w.head != processor(sp) {
		return false
	}
	hasTime := blk.Flags&segindex.FlagTime != 0
	if !f.filterAll && !(f.timeRange && f.restAll && hasTime && blk.MinTime >= f.tmin && blk.MaxTime <= f.tmax) {
		return false
	}
	if f.timeBucket != nil {
		_, ok := e.blockBucket(w, sp, blk)
		return ok
	}
	return true
}

// blockBucket returns the start of the _time bucket (colFast.timeBucket)
// that holds every row of blk; ok is false when its rows fall in more
// than one, or some have no time.
func (e *executor) blockBucket(w *workerState, sp *statsProc, blk *segindex.Block) (start int64, ok bool) {
	if blk.Flags&segindex.FlagTime == 0 {
		return 0, false
	}
	row := &w.row
	row.Fields, row.Time, row.HasTime = row.Fields[:0], blk.MinTime, true
	lo, _, ok := sp.bucket(row, *e.fast.timeBucket)
	if !ok {
		return 0, false
	}
	row.Time = blk.MaxTime
	hi, _, ok := sp.bucket(row, *e.fast.timeBucket)
	return lo, ok && hi == lo
}

// histogramCounts adds blk's rows to the stats groups of their by-field's
// values from the counts its packed column keeps (or all to the group
// without the field, when the block lacks it or the pipe counts by a
// _time bucket alone), in the block's one _time bucket if the pipe has
// one: the rows are not read (see countsOnly).
func (e *executor) histogramCounts(w *workerState, cw *colWorker, blk *segindex.Block, fields []string) error {
	sp := w.barrier.(*statsProc)
	h := -1
	if len(e.fast.hist) == 1 {
		h = e.fast.hist[0]
	}
	var start int64
	if e.fast.timeBucket != nil {
		var ok bool
		if start, ok = e.blockBucket(w, sp, blk); !ok {
			return errors.New("BUG: histogramCounts on a block of several buckets")
		}
	}
	row := &w.row
	emit := func(value string, has bool, n int64) error {
		row.Fields, row.HasTime = row.Fields[:0], false
		if has {
			row.Fields = append(row.Fields, Field{Name: fields[h], Value: value})
		}
		if e.fast.timeBucket != nil {
			row.Time, row.HasTime = start, true
		}
		return sp.addGroupCount(row, n)
	}
	if h < 0 || !cw.has[h] {
		if err := emit("", false, int64(blk.Rows)); err != nil {
			return err
		}
	} else {
		c := &cw.cols[h]
		for id, n := range c.Counts() {
			if n == 0 {
				continue
			}
			v := ""
			if id > 0 {
				v = c.Dict[id-1]
			}
			if err := emit(v, id > 0, int64(n)); err != nil {
				return err
			}
		}
	}
	w.lines += int64(blk.Rows)
	w.matched += int64(blk.Rows)
	return nil
}

// countByteIDs adds to counts each of rows rows' by-field id (hIDs; all
// to counts[0] when nil: the block lacks the field, or there is no
// by-field), of the rows whose id in mIDs match allows (every row when
// mIDs is nil), and returns how many rows it counted. Ids are bytes (see
// segindex.StringColumn.ByteIDs).
func countByteIDs(counts []int64, hIDs, mIDs []byte, match []bool, rows int) int64 {
	switch {
	case mIDs == nil && hIDs == nil:
		counts[0] += int64(rows)
		return int64(rows)
	case mIDs == nil:
		// Four tables of counts, so that runs of one value (a service's
		// lines come together) do not wait on one counter's last add.
		var c [4][256]uint32
		ids := hIDs[:rows]
		i := 0
		for ; i+4 <= len(ids); i += 4 {
			c[0][ids[i]]++
			c[1][ids[i+1]]++
			c[2][ids[i+2]]++
			c[3][ids[i+3]]++
		}
		for ; i < len(ids); i++ {
			c[0][ids[i]]++
		}
		for id := range counts {
			counts[id] += int64(c[0][id]) + int64(c[1][id]) + int64(c[2][id]) + int64(c[3][id])
		}
		return int64(rows)
	case hIDs == nil:
		var n int64
		for _, id := range mIDs[:rows] {
			if match[id] {
				n++
			}
		}
		counts[0] += n
		return n
	}
	var n int64
	h := hIDs[:rows]
	for r, id := range mIDs[:rows] {
		if match[id] {
			counts[h[r]]++
			n++
		}
	}
	return n
}

// readColumn reads and decompresses one column frame into dst.
func (e *executor) readColumn(cw *colWorker, ix *segindex.Index, ref segindex.ColumnRef, dst []byte) ([]byte, error) {
	var err error
	var frame []byte
	if frame, cw.cbuf, err = ix.ReadColumn(ref, cw.cbuf); err != nil {
		return dst, err
	}
	e.colBytes.Add(ref.Len)
	out, err := segindex.DecodeColumn(cw.dec, frame, dst)
	if err != nil {
		return dst, fmt.Errorf("cannot decompress: %w (%w)", err, segindex.ErrCorrupt)
	}
	if int64(len(out)) != ref.RawLen {
		return out, fmt.Errorf("column is %d bytes, the index says %d: %w", len(out), ref.RawLen, segindex.ErrCorrupt)
	}
	return out, nil
}

// columnFallback reads block j from the segment's lines, after its columns
// failed with cause (a damaged sidecar): the frame is decoded and scanned
// as any chunk. The answer is the same; the sidecar is rebuilt at the
// store's next Open. It fails when the frame cannot be read either.
func (e *executor) columnFallback(w *workerState, cw *colWorker, j segJob, cause error) error {
	blk := &j.seg.ix.Blocks[j.block]
	fail := func(err error) error {
		return fmt.Errorf("%s: block %d: %w; and cannot read the block's lines: %w", j.seg.name, j.block, cause, err)
	}
	if e.open == nil {
		return fail(errors.New("no opener"))
	}
	f, _, err := e.open(j.seg.name)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	raw, err := readFrame(f, blk.ZOff, blk.ZLen, blk.RawLen, cw)
	if err != nil {
		return fail(err)
	}
	e.colFallbacks.Add(1)
	return e.scanAll(w, &fileread.Chunk{Input: j.seg.input, Name: j.seg.name, Offset: blk.RawOff, Data: raw})
}
