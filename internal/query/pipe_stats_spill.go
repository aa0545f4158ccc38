package query

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/axiomhq/hyperloglog"
	"github.com/cespare/xxhash/v2"
)

// Spilling: external hash aggregation for stats with many groups.
//
// A statsProc whose group table passes its memory budget writes the table
// out as one run of a temp file and starts an empty one, reusing the
// table's memory. A run holds the groups' keys and partial states sorted
// into spillParts partitions by key hash, each partition a contiguous
// section. When the last row is in, every table still in memory is spilled
// too, and the partitions are aggregated separately: a partition's sections
// from every run are folded into one small table (one goroutine per CPU,
// each on its own partitions), and the partitions' groups go down the
// pipeline in partition order. Memory is then about budget + a few
// partitions' groups instead of every group of every worker,
// and results stay exact: partial counts and sums add up the same way the
// workers' tables merge without spilling.
//
// Only the flat numeric functions spill (count, count_empty, rate, sum_len,
// sum, avg: spillColumn). A stats pipe with any other function keeps its
// groups in memory, where --max-memory governs it.
//
// The temp file is unlinked as soon as it is created, so nothing is left
// behind if the process dies; release closes it.

// spillParts is the number of hash partitions of a run. The final phase
// holds one partition's groups at a time: 2.6 million groups need about
// 20,000 per partition.
const spillParts = 128

// maxSortedSpilled is the most spilled records that flushSpilled reads
// back into one table to sort (a variable for tests).
var maxSortedSpilled int64 = defaultMaxSortedGroups

// maxSortedSpilledGroups is the most groups that flushSpilled holds back
// from its partitions to sort (a variable for tests).
var maxSortedSpilledGroups = defaultMaxSortedGroups

// spillColumn is a statsColumn whose per-group state can be written to a
// run and folded back (partialColumn: a run's records are those of a
// node's partial state) and whose memory is counted.
type spillColumn interface {
	partialColumn
	// reset drops every group, keeping the memory.
	reset()
	// memBytes is the memory the column's groups use (not its spare
	// capacity, which reset keeps for the next groups).
	memBytes() int64
}

// spillRun is one table written out: partition p is the bytes
// [offs[p], offs[p+1]) of f, or of mem for a run held in memory (a node's
// partial state, Merger.AddPartial).
type spillRun struct {
	f    *os.File
	mem  []byte
	offs [spillParts + 1]int64
}

// part returns the bytes of partition p of r: in place for a run in
// memory, else read into *buf (grown as needed). Several goroutines may
// read one run at once (ReadAt).
func (r *spillRun) part(p int, buf *[]byte) ([]byte, error) {
	if r.mem != nil {
		return r.mem[r.offs[p]:r.offs[p+1]], nil
	}
	n := r.offs[p+1] - r.offs[p]
	if int64(cap(*buf)) < n {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	if _, err := r.f.ReadAt(b, r.offs[p]); err != nil {
		if errors.Is(err, io.EOF) {
			err = errSpillFormat
		}
		return nil, fmt.Errorf("stats: read spilled groups: %w", err)
	}
	return b, nil
}

// A run's record, for one group: its key and each function's state, each
// as a uvarint length and the bytes (appendRecord). Records are in
// partition order: partOf(xxhash of the key).

// partitionOrder sorts tab's groups by partition (a counting sort):
// partition p's groups are sp.order[counts[p]:counts[p+1]].
func (sp *spillState) partitionOrder(tab *groupTable) (counts [spillParts + 1]int) {
	n := tab.len()
	sp.parts = slices.Grow(sp.parts[:0], n)[:n]
	for g := range n {
		h := xxhash.Sum64(tab.key(g))
		if sp.distinct != nil {
			sp.distinct.InsertHash(h)
		}
		p := partOf(h)
		sp.parts[g] = p
		counts[p+1]++
	}
	for p := 1; p <= spillParts; p++ {
		counts[p] += counts[p-1]
	}
	sp.order = slices.Grow(sp.order[:0], n)[:n]
	next := counts
	for g := range n {
		p := sp.parts[g]
		sp.order[next[p]] = uint32(g)
		next[p]++
	}
	return counts
}

// partOf is the partition of a group key of xxhash h: its top 7 bits,
// the same in every process (a node's partial state is partitioned as its
// spill runs are, and the merge reads partition p of every node at once).
// The table's slots use its maphash, which is unrelated.
func partOf(h uint64) uint8 { return uint8(h >> 57) }

// appendRecord appends group g of tab and cols (partialColumns all) as a
// run record.
func appendRecord(dst []byte, tab *groupTable, cols []statsColumn, g int, state *[]byte) []byte {
	dst = appendBlob(dst, tab.key(g))
	for _, c := range cols {
		*state = c.(partialColumn).appendState((*state)[:0], g)
		dst = appendBlob(dst, *state)
	}
	return dst
}

// spillState is a statsProc's spilled runs and the files that hold them
// (its own and those adopted from merged workers).
type spillState struct {
	runs    []*spillRun
	files   []*os.File
	own     *os.File // this statsProc's temp file, nil until the first spill
	ownSize int64    // bytes written to own; runs are appended
	records int64    // groups written, over all runs
	// distinct estimates how many different keys the runs hold (a key
	// is in several runs when its table filled more than once):
	// writePartial sends the runs as they are when they hold few repeats.
	// Nil in a run that is not partial.
	distinct *hyperloglog.Sketch
	buf      []byte
	order    []uint32 // scratch: group indexes sorted by partition
	parts    []uint8  // scratch: partition of each group
	state    []byte   // scratch: one state
}

// newSpillState returns the spill state of s, with distinct when s's
// state goes to a front (Options.Partial): a local run does not use it.
func (s *statsProc) newSpillState() *spillState {
	if s.p.opts.Partial == nil {
		return &spillState{}
	}
	return &spillState{distinct: hyperloglog.New14()}
}

var errSpillFormat = errors.New("stats spill: corrupt temp file")

// canSpill reports whether every column of s can spill.
func (s *statsProc) canSpill() bool {
	for _, c := range s.cols {
		if _, ok := c.(spillColumn); !ok {
			return false
		}
	}
	return len(s.st.By) > 0
}

// memBytes is the memory held by s's groups: its table and columns.
func (s *statsProc) memBytes() int64 {
	n := s.tab.memBytes()
	for _, c := range s.cols {
		n += c.(spillColumn).memBytes()
	}
	return n
}

// maybeSpill spills s's table when it holds more than s.budget bytes. It
// looks only every spillCheckEvery new groups, as memBytes is not free.
func (s *statsProc) maybeSpill() error {
	if s.budget <= 0 || s.tab.len() < s.nextCheck {
		return nil
	}
	s.nextCheck = s.tab.len() + spillCheckEvery
	if s.memBytes() <= s.budget {
		return nil
	}
	return s.spillTable()
}

// spillCheckEvery is how many new groups maybeSpill lets pass between
// looks (a variable for tests).
var spillCheckEvery = 256

// spillTable writes s's groups as one run and empties the table.
func (s *statsProc) spillTable() error {
	n := s.tab.len()
	if n == 0 {
		return nil
	}
	sp := s.spill
	if sp == nil {
		sp = s.newSpillState()
		s.spill = sp
	}
	if sp.own == nil {
		f, err := os.CreateTemp(s.p.opts.TempDir, "spate-stats-*.spill")
		if err != nil {
			return fmt.Errorf("stats: spill groups to a temp file: %w", err)
		}
		// Unlinked at once: the data lives as long as the open file.
		_ = os.Remove(f.Name())
		sp.own = f
		sp.files = append(sp.files, f)
	}
	counts := sp.partitionOrder(&s.tab)
	run := &spillRun{f: sp.own}
	buf := sp.buf[:0]
	pos := sp.ownSize
	flush := func() error {
		if _, err := sp.own.WriteAt(buf, pos); err != nil {
			return fmt.Errorf("stats: spill groups to a temp file: %w", err)
		}
		pos += int64(len(buf))
		buf = buf[:0]
		return nil
	}
	for p := 0; p < spillParts; p++ {
		run.offs[p] = pos + int64(len(buf))
		for _, g := range sp.order[counts[p]:counts[p+1]] {
			buf = appendRecord(buf, &s.tab, s.cols, int(g), &sp.state)
			if len(buf) >= 1<<20 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	run.offs[spillParts] = pos + int64(len(buf))
	if err := flush(); err != nil {
		return err
	}
	sp.buf = buf
	s.p.spilled.Add(pos - sp.ownSize)
	sp.ownSize = pos
	sp.runs = append(sp.runs, run)
	sp.records += int64(n)
	s.tab.reset()
	for _, c := range s.cols {
		c.(spillColumn).reset()
	}
	s.nextCheck = spillCheckEvery
	return nil
}

// adopt takes over o's runs and files (o is a merged worker's statsProc).
func (sp *spillState) adopt(o *spillState) {
	sp.runs = append(sp.runs, o.runs...)
	sp.files = append(sp.files, o.files...)
	sp.records += o.records
	if sp.distinct != nil && o.distinct != nil {
		sp.distinct.Merge(o.distinct)
	}
	o.runs, o.files = nil, nil
}

// release closes s's spill files. It is safe to call more than once.
func (s *statsProc) release() {
	if s.spill == nil {
		return
	}
	for _, f := range s.spill.files {
		f.Close()
	}
	s.spill.files = nil
	s.spill.runs = nil
}

// readPart folds partition p of runs into tab and cols (one column per
// stats function, partialColumns all). buf is scratch, grown as needed.
// Several goroutines may read the runs at once (ReadAt, or runs in memory).
func readPart(tab *groupTable, cols []statsColumn, runs []*spillRun, buf *[]byte, p int) error {
	for _, run := range runs {
		b, err := run.part(p, buf)
		if err != nil {
			return err
		}
		bad := errSpillFormat // what a record that does not read is
		if run.mem != nil {
			bad = errPartialFormat
		}
		d := partialDecoder{b: b}
		for d.pos < len(b) {
			k, err := d.blob()
			if err != nil {
				return fmt.Errorf("%w: %v", bad, err)
			}
			g, added := tab.findOrAdd(k)
			if added {
				for _, c := range cols {
					c.grow(g + 1)
				}
			}
			for _, c := range cols {
				state, err := d.blob()
				if err == nil {
					err = c.(partialColumn).mergeState(g, state)
				}
				if err != nil {
					return fmt.Errorf("%w: %v", bad, err)
				}
			}
		}
	}
	return nil
}

// spilledPart is one partition aggregated by flushSpilled's goroutines:
// its groups and, for group g, the function results vals[g*nf:(g+1)*nf],
// or, when a top-k sort follows (statsProc.topK), the columns to format
// the kept groups' results from (see formatted).
type spilledPart struct {
	tab  groupTable
	vals []string // the groups' formatted results; nil with a top-k sort after
	cols []statsColumn
	err  error
}

// formatted returns group g's results: from vals, or formatted from cols
// into scratch.
func (sp *spilledPart) formatted(g, nf int, scratch []string) []string {
	if sp.vals != nil {
		return sp.vals[g*nf : (g+1)*nf]
	}
	scratch = scratch[:0]
	for _, c := range sp.cols {
		scratch = append(scratch, c.result(g))
	}
	return scratch
}

// flushSpilled emits the groups of a spilled statsProc, one partition at a
// time. When the runs hold few records in all, it reads them all back into
// one table and lets flushTable emit them sorted, as without spilling.
// Otherwise partitions are held back until they pass
// maxSortedSpilledGroups groups, so that a result of fewer groups still
// comes out sorted: many rows over up to 100,000 keys spill many records.
func (s *statsProc) flushSpilled() error {
	defer s.release()
	if err := s.spillTable(); err != nil {
		return err
	}
	// A partition needs far fewer slots than a full table had.
	s.tab = groupTable{}
	if s.spill.records <= maxSortedSpilled {
		for p := 0; p < spillParts; p++ {
			if err := readPart(&s.tab, s.cols, s.spill.runs, &s.spill.buf, p); err != nil {
				return err
			}
		}
		return s.flushTable()
	}
	// Many groups: partitions are aggregated on every CPU and emitted here
	// in partition order, so the output order does not depend on
	// scheduling.
	sorter, topCol := s.topKIndex()
	// With a top-k sort after, this goroutine formats only the groups it
	// keeps (statsProc.topK).
	parts, stop := s.aggregateParts(sorter == nil)
	defer stop()
	var by, scratch []string
	nf := len(s.cols)
	skipped := 0
	defer func() { topKSkipped.Add(int64(skipped)) }()
	emitPart := func(sp *spilledPart) error {
		var col numericColumn
		if sorter != nil {
			col = sp.cols[topCol].(numericColumn)
		}
		for g := range sp.tab.len() {
			if col != nil {
				if v, ok := col.number(g); ok && sorter.rejectsNumber(v) {
					skipped++
					continue // the sort after s would drop this group's row
				}
			}
			by = decodeKeyAlias(by[:0], sp.tab.key(g))
			scratch = sp.formatted(g, nf, scratch)
			if err := s.emitValues(by, scratch); err != nil {
				return err
			}
		}
		return nil
	}
	var held []spilledPart // while sorting: the partitions so far
	heldGroups := 0
	sorting := true
	for range spillParts {
		sp := <-parts
		if sp.err != nil {
			return sp.err
		}
		var err error
		switch {
		case !sorting:
			err = emitPart(&sp)
		case heldGroups+sp.tab.len() <= maxSortedSpilledGroups:
			held = append(held, sp)
			heldGroups += sp.tab.len()
		default:
			// Too many groups to sort: emit in partition order.
			sorting = false
			for i := range held {
				if err = emitPart(&held[i]); err != nil {
					break
				}
			}
			held = nil
			if err == nil {
				err = emitPart(&sp)
			}
		}
		if err == errStop {
			return s.next.flush()
		}
		if err != nil {
			return err
		}
	}
	if sorting {
		if err := s.emitSortedParts(held); err != nil && err != errStop {
			return err
		}
	}
	return s.next.flush()
}

// aggregateParts aggregates the partitions of s's spilled runs, one
// goroutine per CPU (goroutine k takes partitions k, k+n, k+2n...), and
// returns them in partition order on parts: spillParts of them, or fewer
// after one with an error, which is the last. With format, each part's
// results are formatted on its goroutine (spilledPart.vals); otherwise
// the part keeps its columns. stop ends the goroutines (the caller may
// stop reading early) and waits for them.
func (s *statsProc) aggregateParts(format bool) (parts <-chan spilledPart, stop func()) {
	n := min(runtime.GOMAXPROCS(0), spillParts)
	outs := make([]chan spilledPart, n)
	ordered := make(chan spilledPart)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for k := range outs {
		outs[k] = make(chan spilledPart, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			groups := 0 // in this goroutine's last partition
			// States count their memory in a tracker of this goroutine's
			// (a tracker is not safe for concurrent use).
			mem := newMemTracker(s.p)
			for p := k; p < spillParts; p += n {
				var sp spilledPart
				cols, err := s.newColumns(mem)
				if err != nil {
					sp.err = err
				}
				// Partitions hold about as many groups as each other
				// (keys are spread by hash): sizing the index for the last
				// one's saves growing it from empty every time.
				sp.tab.presize(groups)
				if sp.err == nil {
					sp.err = readPart(&sp.tab, cols, s.spill.runs, &buf, p)
				}
				groups = sp.tab.len()
				if !format {
					sp.cols = cols
				} else if sp.err == nil {
					nf := len(cols)
					sp.vals = make([]string, sp.tab.len()*nf)
					for g := range sp.tab.len() {
						for i, c := range cols {
							sp.vals[g*nf+i] = c.result(g)
						}
					}
				}
				select {
				case outs[k] <- sp:
				case <-done:
					return
				}
				if sp.err != nil {
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for p := range spillParts {
			var sp spilledPart
			select {
			case sp = <-outs[p%n]:
			case <-done:
				return
			}
			select {
			case ordered <- sp:
			case <-done:
				return
			}
			if sp.err != nil {
				return
			}
		}
	}()
	return ordered, func() {
		close(done)
		wg.Wait()
	}
}

// emitSortedParts emits the groups of parts sorted by their by-values.
func (s *statsProc) emitSortedParts(parts []spilledPart) error {
	type outGroup struct {
		vals []string
		by   []string
	}
	nf := len(s.cols)
	var groups []outGroup
	for i := range parts {
		sp := &parts[i]
		for g := range sp.tab.len() {
			groups = append(groups, outGroup{vals: sp.formatted(g, nf, nil), by: decodeKey(nil, sp.tab.key(g))})
		}
	}
	slices.SortFunc(groups, func(a, b outGroup) int { return compareBy(a.by, b.by) })
	for _, g := range groups {
		if err := s.emitValues(g.by, g.vals); err != nil {
			return err
		}
	}
	return nil
}

// Column spill encodings: count-like columns write a varint; sum-like
// columns the float64 bits of the sum and a varint count.

func (c *countColumn) appendSpill(dst []byte, g int) []byte {
	return binary.AppendVarint(dst, c.n[g])
}

func (c *countColumn) readSpill(g int, src []byte) ([]byte, error) {
	v, w := binary.Varint(src)
	if w <= 0 {
		return nil, errSpillFormat
	}
	c.n[g] += v
	return src[w:], nil
}

func (c *countColumn) reset()          { c.n = c.n[:0] }
func (c *countColumn) memBytes() int64 { return 8 * int64(len(c.n)) }

func (c *sumColumn) appendSpill(dst []byte, g int) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(c.sum[g]))
	return binary.AppendVarint(dst, c.n[g])
}

func (c *sumColumn) readSpill(g int, src []byte) ([]byte, error) {
	if len(src) < 8 {
		return nil, errSpillFormat
	}
	c.sum[g] += math.Float64frombits(binary.LittleEndian.Uint64(src))
	v, w := binary.Varint(src[8:])
	if w <= 0 {
		return nil, errSpillFormat
	}
	c.n[g] += v
	return src[8+w:], nil
}

func (c *sumColumn) reset() { c.sum, c.n = c.sum[:0], c.n[:0] }
func (c *sumColumn) memBytes() int64 {
	return 16 * int64(len(c.n))
}

// presize gives an empty table an index for n groups at its load factor,
// so that adding up to n groups does not rehash.
func (t *groupTable) presize(n int) {
	if n > 0 && len(t.off) == 0 {
		t.slots = make([]uint64, max(64, 1<<bits.Len(uint(2*n))))
	}
}

// reset drops every group, keeping the memory.
func (t *groupTable) reset() {
	t.keys = t.keys[:0]
	t.off = t.off[:0]
	clear(t.slots)
}

// memBytes is the memory the table's groups use: their keys, offsets and
// the two slots each has at the index's load factor (spare capacity, which
// reset keeps, is not counted).
func (t *groupTable) memBytes() int64 {
	return int64(len(t.keys)) + 24*int64(len(t.off))
}
