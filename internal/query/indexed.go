package query

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/segindex"
)

// This file reads spate serve segments through their sidecar indexes
// (package segindex): which blocks a query reads and how (indexJobs), the
// workers that read them (scanJobs), blocks read from their lines
// (lineBlock) and blocks ruled out by token blooms (requiredTokens). The
// rows of blocks read from hot columns are made in columns.go.

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
	// frames: of a block of several frames, those to decode (bit i for
	// frame i), the others ruled out by their blooms; 0: all.
	frames uint64
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
	nreqs := requiredNumbers(e.p.filter)
	streams := pr.HasStreams() && e.p.opts.StoreFields
	var bloom []byte
	fields, colsOK := e.p.columnFields()
	jobs.fields = fields
	if colsOK {
		e.fast = e.p.fastPaths(fields)
	}
	ordered := e.order != nil && !e.p.opts.Unordered
	leading := true
	var reqIDs []int
	var blockJobs []segJob
	for i, name := range inputs {
		var seg *idxSegment
		if leading {
			seg = e.indexSegment(i, name, fields, colsOK)
		}
		if seg != nil {
			reqIDs = reqIDs[:0]
			for _, rq := range reqs {
				reqIDs = append(reqIDs, seg.ix.FieldID(rq.field))
			}
			var segAbsent bool
			if len(reqs) > 0 {
				segAbsent, bloom = segmentTokensAbsent(seg.ix, reqs, reqIDs, bloom)
			}
			var timeSkipped, valSkipped, tokSkipped, skippedRows int64
			needLines := false
			blockJobs = blockJobs[:0]
			for b := range seg.ix.Blocks {
				blk := &seg.ix.Blocks[b]
				skip := blk.Flags&segindex.FlagTime != 0 && pr.SkipTimes(blk.MinTime, blk.MaxTime)
				if skip {
					timeSkipped++
				} else if len(nreqs) > 0 && numbersAbsent(seg.ix, blk, nreqs) || streams && streamsAbsent(pr, blk) {
					skip = true
					valSkipped++
				}
				var frames uint64
				if !skip && len(reqs) > 0 {
					if segAbsent {
						skip = true
						tokSkipped++
					} else if skip, bloom = tokensAbsent(seg.ix, b, reqs, reqIDs, bloom); skip {
						tokSkipped++
					} else if !seg.cols && len(blk.Frames) > 1 && len(blk.Frames) <= 64 {
						if frames, bloom = framesWanted(seg.ix, blk, reqs, bloom); frames == 0 {
							skip = true
							tokSkipped++
						}
					}
				}
				if skip {
					skippedRows += int64(blk.Rows)
					if ordered {
						blockJobs = append(blockJobs, segJob{seg: seg, block: b, skip: true})
					}
					continue
				}
				if frames == 1<<len(blk.Frames)-1 {
					frames = 0 // all of them
				}
				blockJobs = append(blockJobs, segJob{seg: seg, block: b, frames: frames})
				needLines = needLines || !seg.cols
			}
			// The .zst is opened only when a block needs its lines (a
			// needle query rules most segments out by their sidecars).
			if !needLines || e.openLines(seg) {
				indexed = true
				jobs.segs = append(jobs.segs, seg)
				jobs.jobs = append(jobs.jobs, blockJobs...)
				e.colSkipped.Add(timeSkipped)
				e.valSkipped.Add(valSkipped)
				e.tokSkipped.Add(tokSkipped)
				e.colSkippedRows.Add(skippedRows)
				if ordered {
					if err := e.order.done(i, seg.ix.RawSize); err != nil && !errors.Is(err, errStop) {
						e.order.fail(err)
					}
				}
				continue
			}
		}
		leading = !ordered
		rest = append(rest, name)
		restIdx = append(restIdx, i)
	}
	return jobs, rest, restIdx, indexed
}

// indexSegment returns input i as an idxSegment, or nil when it has no
// usable sidecar (or its lines cannot be read: no opener).
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
	return seg
}

// openLines opens the .zst of seg, to read blocks from its lines, and
// reports whether it still matches the sidecar (false: it was rewritten
// since the sidecar was opened; read it as a file).
func (e *executor) openLines(seg *idxSegment) bool {
	f, limit, err := e.open(seg.name)
	if err != nil {
		return false
	}
	ix := seg.ix
	fi, err := f.Stat()
	if err != nil || fi.Size() != ix.ZstSize || fi.ModTime().UnixNano() != ix.ZstMtime || (limit >= 0 && limit != ix.RawSize) {
		f.Close()
		return false
	}
	seg.f = f
	return true
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
				raw:  make([][]byte, len(jobs.fields)),
				cols: make([]segindex.StringColumn, len(jobs.fields)),
				has:  make([]bool, len(jobs.fields)),
			}
			getColScratch(cw)
			defer putColScratch(cw)
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

// lineBlock decodes block j's frames (all, or those j.frames names) and
// hands their lines to worker wid as chunks; frames ruled out are handed
// on as skipped bytes.
func (e *executor) lineBlock(wid int, cw *colWorker, j segJob) error {
	blk := &j.seg.ix.Blocks[j.block]
	damaged := func(err error) error {
		return fmt.Errorf("%s: block %d: %w (the segment or its sidecar is damaged: `spate index --force` rebuilds the sidecar, `--no-index` reads without it)", j.seg.name, j.block, err)
	}
	e.blockLines.Add(1)
	if j.frames == 0 {
		raw, err := readFrame(j.seg.f, blk.ZOff, blk.ZLen, blk.RawLen, cw)
		if err != nil {
			return damaged(err)
		}
		e.blockBytes.Add(blk.RawLen)
		return e.chunk(wid, &fileread.Chunk{Input: j.seg.input, Name: j.seg.name, Seq: int64(j.block), Offset: blk.RawOff, Data: raw})
	}
	zoff, roff := blk.ZOff, blk.RawOff
	skipOff, skipLen := roff, int64(0)
	for i, fr := range blk.Frames {
		if j.frames&(1<<i) == 0 {
			if skipLen == 0 {
				skipOff = roff
			}
			skipLen += fr.RawLen
			e.frameSkipped.Add(1)
			e.colSkippedRows.Add(int64(fr.Rows))
		} else {
			if skipLen > 0 {
				if err := e.chunk(wid, &fileread.Chunk{Input: j.seg.input, Name: j.seg.name, Seq: int64(j.block), Offset: skipOff, Skip: skipLen}); err != nil {
					return err
				}
				skipLen = 0
			}
			raw, err := readFrame(j.seg.f, zoff, fr.ZLen, fr.RawLen, cw)
			if err != nil {
				return damaged(fmt.Errorf("frame %d: %w", i, err))
			}
			e.blockBytes.Add(fr.RawLen)
			if err := e.chunk(wid, &fileread.Chunk{Input: j.seg.input, Name: j.seg.name, Seq: int64(j.block), Offset: roff, Data: raw}); err != nil {
				return err
			}
		}
		zoff, roff = zoff+fr.ZLen, roff+fr.RawLen
	}
	if skipLen > 0 {
		return e.chunk(wid, &fileread.Chunk{Input: j.seg.input, Name: j.seg.name, Seq: int64(j.block), Offset: skipOff, Skip: skipLen})
	}
	return nil
}

// readFrame reads the zlen bytes at zoff of f, one or more zstd frames,
// and decodes them into cw.lines, which must then hold rawLen bytes.
func readFrame(f *os.File, zoff, zlen, rawLen int64, cw *colWorker) ([]byte, error) {
	if int64(cap(cw.zbuf)) < zlen {
		cw.zbuf = make([]byte, zlen)
	}
	cw.zbuf = cw.zbuf[:zlen]
	if _, err := f.ReadAt(cw.zbuf, zoff); err != nil {
		return nil, fmt.Errorf("cannot read frame: %w", err)
	}
	raw, err := cw.dec.DecodeAll(cw.zbuf, cw.lines[:0])
	cw.lines = raw
	if err != nil {
		return nil, fmt.Errorf("cannot decode frame: %w", err)
	}
	if int64(len(raw)) != rawLen {
		return nil, fmt.Errorf("frame holds %d bytes, the index says %d", len(raw), rawLen)
	}
	return raw, nil
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
	var reqs []tokenReq
	for _, f := range topConjuncts(f) {
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
		case *FilterCommonCase:
			// contains_any or in() of the spellings.
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

// tokensAbsent reports whether the blooms of block b rule out every row
// for one of reqs (ids are their fields' ids in ix): the field is absent
// from the block, has no tokens, or its bloom lacks a token of every
// alternative. A bloom that cannot be read rules nothing out. buf is
// reused for blooms and returned.
func tokensAbsent(ix *segindex.Index, b int, reqs []tokenReq, ids []int, buf []byte) (bool, []byte) {
	for i, rq := range reqs {
		ref, ok := ix.BlockBloom(ids[i], b)
		if !ok {
			return true, buf
		}
		bloom, nbuf, err := ix.ReadBloom(ref, buf)
		buf = nbuf
		if err != nil {
			continue
		}
		if !slices.ContainsFunc(rq.alts, func(hs []uint64) bool { return bloomHasAll(bloom, hs) }) {
			return true, buf
		}
	}
	return false, buf
}

// segmentTokensAbsent is tokensAbsent for a whole segment, by its
// segment blooms: true rules out every block.
func segmentTokensAbsent(ix *segindex.Index, reqs []tokenReq, ids []int, buf []byte) (bool, []byte) {
	for i, rq := range reqs {
		ref, ok := ix.SegmentBloom(ids[i])
		if !ok {
			return true, buf
		}
		bloom, nbuf, err := ix.ReadBloom(ref, buf)
		buf = nbuf
		if err == nil && !slices.ContainsFunc(rq.alts, func(hs []uint64) bool { return bloomHasAll(bloom, hs) }) {
			return true, buf
		}
	}
	return false, buf
}

// bloomHasAll reports whether bloom may hold every hash of hs.
func bloomHasAll(bloom []byte, hs []uint64) bool {
	for _, h := range hs {
		if !segindex.BloomHas(bloom, h) {
			return false
		}
	}
	return true
}

// framesWanted returns the frames of blk, a block of 2 to 64 frames (a bit
// each), that the blooms per frame leave for reqs: all of them when it has
// no frame blooms of reqs' fields; 0 when they rule out every frame. A
// frame bloom that cannot be read rules nothing out. buf is reused for
// blooms and returned.
func framesWanted(ix *segindex.Index, blk *segindex.Block, reqs []tokenReq, buf []byte) (uint64, []byte) {
	want := uint64(1)<<len(blk.Frames) - 1
	for _, rq := range reqs {
		refs, ok := blk.FrameBloom(ix.FieldID(rq.field))
		if !ok {
			continue
		}
		var may uint64
		for i, ref := range refs {
			if ref.Len == 0 || want&(1<<i) == 0 {
				continue // no token of the field in the frame
			}
			bloom, nbuf, err := ix.ReadBloom(ref, buf)
			buf = nbuf
			if err != nil || slices.ContainsFunc(rq.alts, func(hs []uint64) bool { return bloomHasAll(bloom, hs) }) {
				may |= 1 << i
			}
		}
		want &= may
	}
	return want, buf
}

// numReq says a row can match only if its field holds a number in the
// interval from lo to hi (each bound included or not).
type numReq struct {
	field        string
	lo, hi       float64
	loInc, hiInc bool
}

// requiredNumbers returns the numeric intervals the filter's top-level
// conjuncts need (field:>N, field:<=N, field:range(A, B), ...), for blocks'
// numeric ranges to rule blocks out: such filters match only values that
// parse as numbers.
func requiredNumbers(f Filter) []numReq {
	var reqs []numReq
	for _, f := range topConjuncts(f) {
		r := numReq{lo: math.Inf(-1), hi: math.Inf(1), loInc: true, hiInc: true}
		switch f := f.(type) {
		case *FilterCompare:
			if f.IsString || math.IsNaN(f.Num) {
				continue
			}
			r.field = f.Field
			switch f.Op {
			case ">":
				r.lo, r.loInc = f.Num, false
			case ">=":
				r.lo = f.Num
			case "<":
				r.hi, r.hiInc = f.Num, false
			case "<=":
				r.hi = f.Num
			default:
				continue
			}
		case *FilterRange:
			if math.IsNaN(f.Lo) || math.IsNaN(f.Hi) {
				continue
			}
			r.field, r.lo, r.hi, r.loInc, r.hiInc = f.Field, f.Lo, f.Hi, f.LoInc, f.HiInc
		default:
			continue
		}
		if r.field == "" || strings.HasSuffix(r.field, "*") {
			continue
		}
		// A bound at an infinity holds it (see matchCompare).
		r.loInc = r.loInc || math.IsInf(r.lo, 0)
		r.hiInc = r.hiInc || math.IsInf(r.hi, 0)
		reqs = append(reqs, r)
	}
	return reqs
}

// numbersAbsent reports whether blk's numeric ranges rule out every row
// for one of reqs: the field is absent, none of its values is a number, or
// they all fall outside the interval. A field without a range rules
// nothing out.
func numbersAbsent(ix *segindex.Index, blk *segindex.Block, reqs []numReq) bool {
	for _, rq := range reqs {
		id := ix.FieldID(rq.field)
		if id < 0 || !blk.Has(id) {
			return true
		}
		n, ok := blk.Num(id)
		switch {
		case !ok:
		case !n.Any:
			return true
		case n.Max < rq.lo || (n.Max == rq.lo && !rq.loInc):
			return true
		case n.Min > rq.hi || (n.Min == rq.hi && !rq.hiInc):
			return true
		}
	}
	return false
}

// streamsAbsent reports whether the pruner rules out every stream blk's
// rows are in (when the block knows them).
func streamsAbsent(pr *Pruner, blk *segindex.Block) bool {
	if !blk.StreamsKnown || len(blk.Streams) == 0 {
		return false
	}
	for _, st := range blk.Streams {
		if !pr.SkipStream(st) {
			return false
		}
	}
	return true
}
