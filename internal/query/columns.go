package query

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

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
		if tx := row.Get("_time"); timeOK && !strings.HasSuffix(tx, "Z") {
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

// columnStatsFuncs are the stats functions whose result does not depend on
// the order rows arrive in or on fields the query does not name, so a
// query with them may read rows from hot columns.
var columnStatsFuncs = map[string]bool{
	"avg": true, "count": true, "count_empty": true, "count_uniq": true, "max": true, "median": true,
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
	return o.MsgField == "" && o.TimeField == "" && o.TimeFormat == (timeparse.Layout{}) &&
		!slices.ContainsFunc(o.InputFormats, func(f InputFormat) bool { return f.Kind != FormatJSON })
}

// idxSegment is an input with a sidecar index, read block by block: from
// its hot columns, or from its lines (each frame decoded alone).
type idxSegment struct {
	input int
	name  string
	ix    *segindex.Index
	cols  bool     // rows come from columns
	ids   []int    // with cols: the field id of each column field (-1: no row has it)
	f     *os.File // without cols: the .zst, checked against the sidecar
}

// segJob is one block of an idxSegment.
type segJob struct {
	seg   *idxSegment
	block int
	// skip: a block the sidecar rules out, handed on as skipped bytes so
	// that rows in file order still cover the input (ordered queries).
	skip bool
}

// segJobs are the blocks a run reads through sidecars, in input order.
type segJobs struct {
	jobs   []segJob
	fields []string // the column fields, for segments read from columns
	segs   []*idxSegment
}

func (j *segJobs) close() {
	for _, s := range j.segs {
		if s.f != nil {
			s.f.Close()
		}
	}
}

// indexJobs splits inputs into blocks read through sidecar indexes and the
// rest (with their original indexes). A segment with a sidecar is read from
// its hot columns when the query allows it and every block it does not
// skip has them (see columnFields), else from its lines block by block;
// either way its blocks outside the query's time range are skipped. Rows
// in file order (an ordered query) need the indexed segments to come
// before the others, so only the leading ones are. indexed is false when
// no input is read through its sidecar (rest is inputs).
func (e *executor) indexJobs(inputs []string) (jobs *segJobs, rest []string, restIdx []int, indexed bool) {
	jobs = &segJobs{}
	if e.p.opts.Index == nil || !e.p.defaultReading() {
		return jobs, inputs, nil, false
	}
	pr, err := NewPruner(e.p.q)
	if err != nil {
		return jobs, inputs, nil, false
	}
	reqs := requiredTokens(e.p.filter)
	var bloom []byte
	fields, colsOK := e.p.columnFields()
	jobs.fields = fields
	if colsOK {
		e.fast = e.p.fastPaths(fields)
	}
	ordered := e.order != nil && !e.p.opts.Unordered
	leading := true
	for i, name := range inputs {
		var seg *idxSegment
		if leading {
			seg = e.indexSegment(i, name, fields, colsOK)
		}
		if seg == nil {
			leading = !ordered
			rest = append(rest, name)
			restIdx = append(restIdx, i)
			continue
		}
		indexed = true
		jobs.segs = append(jobs.segs, seg)
		for b := range seg.ix.Blocks {
			blk := &seg.ix.Blocks[b]
			skip := blk.Flags&segindex.FlagTime != 0 && pr.SkipTimes(blk.MinTime, blk.MaxTime)
			if skip {
				e.colSkipped.Add(1)
			} else if len(reqs) > 0 {
				if skip, bloom = tokensAbsent(seg.ix, blk, reqs, bloom); skip {
					e.tokSkipped.Add(1)
				}
			}
			if skip {
				e.colSkippedRows.Add(int64(blk.Rows))
				if ordered {
					jobs.jobs = append(jobs.jobs, segJob{seg: seg, block: b, skip: true})
				}
				continue
			}
			jobs.jobs = append(jobs.jobs, segJob{seg: seg, block: b})
		}
		if ordered {
			if err := e.order.done(i, seg.ix.RawSize); err != nil && !errors.Is(err, errStop) {
				e.order.fail(err)
			}
		}
	}
	return jobs, rest, restIdx, indexed
}

// indexSegment returns input i as an idxSegment, or nil when it has no
// usable sidecar (or its .zst no longer matches it).
func (e *executor) indexSegment(i int, name string, fields []string, colsOK bool) *idxSegment {
	ix := e.p.opts.Index(name)
	if ix == nil {
		return nil
	}
	seg := &idxSegment{input: i, name: name, ix: ix}
	if colsOK && columnsCover(ix, fields, e.p.needTime) {
		seg.cols = true
		for _, f := range fields {
			seg.ids = append(seg.ids, ix.FieldID(f))
		}
		return seg
	}
	if e.open == nil {
		return nil
	}
	f, limit, err := e.open(name)
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() != ix.ZstSize || fi.ModTime().UnixNano() != ix.ZstMtime || (limit >= 0 && limit != ix.RawSize) {
		// Rewritten since the sidecar was opened: read it as a file.
		f.Close()
		return nil
	}
	seg.f = f
	return seg
}

// columnsCover reports whether every block of ix has a column (or no
// row) for each of fields, and a _time column when needTime.
func columnsCover(ix *segindex.Index, fields []string, needTime bool) bool {
	ids := make([]int, len(fields))
	for i, f := range fields {
		ids[i] = ix.FieldID(f)
	}
	for b := range ix.Blocks {
		blk := &ix.Blocks[b]
		if blk.Flags&segindex.FlagColumns == 0 || (needTime && blk.Flags&segindex.FlagTime == 0) {
			return false
		}
		for _, id := range ids {
			if id < 0 || !blk.Has(id) {
				continue
			}
			if _, ok := blk.Column(id); !ok {
				return false
			}
		}
	}
	return true
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
	match  []bool
	counts []int64
	radix  []int
}

var colDecoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		panic(fmt.Sprintf("cannot create zstd decoder: %v", err))
	}
	return d
}}

// scanJobs runs jobs on the workers, in parallel, in order as far as the
// workers take them: each block's rows are made from its columns, or its
// frame is decoded and scanned as a chunk, and go through the filter and
// pipes as a scan's rows would.
func (e *executor) scanJobs(ctx context.Context, jobs *segJobs) error {
	var next atomic.Int64
	errs := make([]error, len(e.workers))
	var wg sync.WaitGroup
	for wid := range e.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cw := &colWorker{
				dec:  colDecoders.Get().(*zstd.Decoder),
				raw:  make([][]byte, len(jobs.fields)),
				cols: make([]segindex.StringColumn, len(jobs.fields)),
				has:  make([]bool, len(jobs.fields)),
			}
			defer colDecoders.Put(cw.dec)
			for !e.stopped.Load() && ctx.Err() == nil {
				j := int(next.Add(1) - 1)
				if j >= len(jobs.jobs) {
					return
				}
				job := jobs.jobs[j]
				began := time.Now()
				var err error
				switch {
				case job.skip:
					blk := &job.seg.ix.Blocks[job.block]
					err = e.chunk(wid, &fileread.Chunk{Input: job.seg.input, Name: job.seg.name, Seq: int64(job.block), Offset: blk.RawOff, Skip: blk.RawLen})
				case job.seg.cols:
					err = e.columnBlock(e.workers[wid], cw, job, jobs.fields)
				default:
					err = e.lineBlock(wid, cw, job)
				}
				if errors.Is(err, fileread.Stop) || errors.Is(err, errStop) {
					e.stopped.Store(true)
					return
				}
				if err != nil {
					errs[wid] = err
					e.stopped.Store(true)
					return
				}
				if e.pace != nil {
					e.pace(ctx, time.Since(began))
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// lineBlock decodes the frame of block j alone and hands its lines to
// worker wid as a chunk.
func (e *executor) lineBlock(wid int, cw *colWorker, j segJob) error {
	blk := &j.seg.ix.Blocks[j.block]
	raw, err := readFrame(j.seg.f, blk, cw)
	if err != nil {
		return fmt.Errorf("%s: block %d: %w (the segment or its sidecar is damaged: `spate index --force` rebuilds the sidecar, `--no-index` reads without it)", j.seg.name, j.block, err)
	}
	e.blockLines.Add(1)
	e.blockBytes.Add(blk.RawLen)
	return e.chunk(wid, &fileread.Chunk{Input: j.seg.input, Name: j.seg.name, Seq: int64(j.block), Offset: blk.RawOff, Data: raw})
}

// readFrame reads and decodes the frame of blk from f into cw.lines.
func readFrame(f *os.File, blk *segindex.Block, cw *colWorker) ([]byte, error) {
	if int64(cap(cw.zbuf)) < blk.ZLen {
		cw.zbuf = make([]byte, blk.ZLen)
	}
	cw.zbuf = cw.zbuf[:blk.ZLen]
	if _, err := f.ReadAt(cw.zbuf, blk.ZOff); err != nil {
		return nil, fmt.Errorf("cannot read frame: %w", err)
	}
	raw, err := cw.dec.DecodeAll(cw.zbuf, cw.lines[:0])
	cw.lines = raw
	if err != nil {
		return nil, fmt.Errorf("cannot decode frame: %w", err)
	}
	if int64(len(raw)) != blk.RawLen {
		return nil, fmt.Errorf("frame holds %d bytes, the index says %d", len(raw), blk.RawLen)
	}
	return raw, nil
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
		defer pr.Add(blk.RawLen)
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
	for i, id := range j.seg.ids {
		cw.has[i] = false
		if id < 0 || !blk.Has(id) {
			continue
		}
		ref, _ := blk.Column(id)
		if cw.raw[i], err = e.readColumn(cw, ix, ref, cw.raw[i]); err == nil {
			err = segindex.ParseString(cw.raw[i], blk.Rows, &cw.cols[i])
		}
		if err != nil {
			return e.columnFallback(w, cw, j, fmt.Errorf("column %s: %w", fields[i], err))
		}
		cw.has[i] = true
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
	if fi >= 0 {
		switch {
		case !cw.has[fi]:
			row.Fields, row.HasTime = row.Fields[:0], false
			if !w.filter.match(row) {
				w.lines += int64(blk.Rows)
				return nil
			}
			fi, allMatch = -1, true
		case cw.cols[fi].IsDict():
			c := &cw.cols[fi]
			match = append(cw.match[:0], false)
			row.Fields, row.HasTime = row.Fields[:0], false
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
	for r := range blk.Rows {
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

// colFast is what the fast paths of columnBlock need of a run, worked
// out once (see fastPaths).
type colFast struct {
	// filterAll: the filter matches every row (and there are no pipes
	// before stats). filterField: the index (in the column fields) of the
	// one field the filter reads, or -1.
	filterAll   bool
	filterField int
	// hist: the column-field indexes of the stats pipe's by-fields when
	// it only counts rows (count() and nothing else, no pipes before it,
	// no buckets): a block's rows are then counted per combination of
	// dictionary ids. nil otherwise.
	hist []int
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
	if !needTime && !need.all && len(need.prefixes) == 0 && len(need.names) == 1 {
		f.filterField = slices.Index(fields, need.names[0])
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
		i := slices.Index(fields, b.Name)
		if b.Bucket != "" || i < 0 {
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
	counts := cw.counts[:0]
	for range size {
		counts = append(counts, 0)
	}
	cw.counts = counts
	var matched int64
	for r := range blk.Rows {
		if match != nil && !match[cw.cols[fi].ID(r)] {
			continue
		}
		key := 0
		for k, h := range hist {
			key *= cw.radix[k]
			if cw.has[h] {
				key += int(cw.cols[h].ID(r))
			}
		}
		counts[key]++
		matched++
	}
	row := &w.row
	for key, n := range counts {
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
		if err := sp.addGroupCount(row, n); err != nil {
			return true, err
		}
	}
	w.lines += int64(blk.Rows)
	w.matched += matched
	return true, nil
}

// readColumn reads and decompresses one column frame into dst.
func (e *executor) readColumn(cw *colWorker, ix *segindex.Index, ref segindex.ColumnRef, dst []byte) ([]byte, error) {
	var err error
	var frame []byte
	if frame, cw.cbuf, err = ix.ReadColumn(ref, cw.cbuf); err != nil {
		return dst, err
	}
	e.colBytes.Add(ref.Len)
	out, err := cw.dec.DecodeAll(frame, dst[:0])
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
	raw, err := readFrame(f, blk, cw)
	if err != nil {
		return fail(err)
	}
	e.colFallbacks.Add(1)
	return e.scanAll(w, &fileread.Chunk{Input: j.seg.input, Name: j.seg.name, Offset: blk.RawOff, Data: raw})
}

// tokenReq says a row can match only if its field holds, as tokens, every
// hash of one of alts.
type tokenReq struct {
	field string
	alts  [][]uint64
}

// requiredTokens returns what the filter's top-level conjuncts need of
// tokens (words, phrases, exact values, case-sensitive), for token blooms
// (segindex.HasBloom) to rule blocks out.
func requiredTokens(f Filter) []tokenReq {
	top := []Filter{f}
	if a, ok := f.(*FilterAnd); ok {
		top = a.Filters
	}
	var reqs []tokenReq
	for _, f := range top {
		var field string
		var alts [][]uint64
		all := func(ss ...string) {
			var hs []uint64
			for _, s := range ss {
				hs = segindex.AppendTokenHashes(hs, s)
			}
			alts = [][]uint64{hs}
		}
		switch f := f.(type) {
		case *FilterPhrase:
			if !f.CaseInsensitive {
				field = f.Field
				all(f.Phrase)
			}
		case *FilterPrefix:
			if !f.CaseInsensitive {
				field = f.Field
				alts = [][]uint64{wholeTokens(f.Prefix)}
			}
		case *FilterExact:
			field = f.Field
			if f.Prefix {
				alts = [][]uint64{wholeTokens(f.Value)}
			} else {
				all(f.Value)
			}
		case *FilterContainsAll:
			field = f.Field
			all(f.Phrases...)
		case *FilterSeq:
			field = f.Field
			all(f.Phrases...)
		case *FilterContainsAny:
			field = f.Field
			for _, p := range f.Phrases {
				alts = append(alts, segindex.AppendTokenHashes(nil, p))
			}
		case *FilterIn:
			field = f.Field
			for _, v := range f.Values {
				alts = append(alts, segindex.AppendTokenHashes(nil, v))
			}
		}
		if field == "" || strings.HasSuffix(field, "*") || !segindex.HasBloom(field) || len(alts) == 0 ||
			slices.ContainsFunc(alts, func(hs []uint64) bool { return len(hs) == 0 }) {
			continue // a value without tokens could match
		}
		reqs = append(reqs, tokenReq{field: field, alts: alts})
	}
	return reqs
}

// wholeTokens returns the hashes of the tokens of a prefix that are whole
// in any value it starts: all but a last one that the value may go on.
func wholeTokens(prefix string) []uint64 {
	hs := segindex.AppendTokenHashes(nil, prefix)
	if r, _ := utf8.DecodeLastRuneInString(prefix); len(hs) > 0 && segindex.IsTokenRune(r) {
		hs = hs[:len(hs)-1]
	}
	return hs
}

// tokensAbsent reports whether the blooms of blk rule out every row for
// one of reqs: the field is absent from the block, has no tokens, or its
// bloom lacks a token of every alternative. A bloom that cannot be read
// rules nothing out. buf is reused for blooms and returned.
func tokensAbsent(ix *segindex.Index, blk *segindex.Block, reqs []tokenReq, buf []byte) (bool, []byte) {
	for _, rq := range reqs {
		id := ix.FieldID(rq.field)
		if id < 0 || !blk.Has(id) {
			return true, buf
		}
		ref, ok := blk.Bloom(id)
		if !ok {
			return true, buf
		}
		bloom, nbuf, err := ix.ReadBloom(ref, buf)
		buf = nbuf
		if err != nil {
			continue
		}
		if !slices.ContainsFunc(rq.alts, func(hs []uint64) bool {
			for _, h := range hs {
				if !segindex.BloomHas(bloom, h) {
					return false
				}
			}
			return true
		}) {
			return true, buf
		}
	}
	return false, buf
}
