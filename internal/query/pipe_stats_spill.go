package query

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"sync"
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
// run and folded back.
type spillColumn interface {
	statsColumn
	// appendSpill appends group g's state to dst.
	appendSpill(dst []byte, g int) []byte
	// readSpill folds a state written by appendSpill into group g and
	// returns the bytes after it.
	readSpill(g int, src []byte) ([]byte, error)
	// reset drops every group, keeping the memory.
	reset()
	// fresh returns an empty column computing the same function.
	fresh() statsColumn
	// memBytes is the memory the column's groups use (not its spare
	// capacity, which reset keeps for the next groups).
	memBytes() int64
}

// spillRun is one table written out: partition p is the bytes
// [offs[p], offs[p+1]) of f.
type spillRun struct {
	f    *os.File
	offs [spillParts + 1]int64
}

// spillState is a statsProc's spilled runs and the files that hold them
// (its own and those adopted from merged workers).
type spillState struct {
	runs    []*spillRun
	files   []*os.File
	own     *os.File // this statsProc's temp file, nil until the first spill
	ownSize int64    // bytes written to own; runs are appended
	records int64    // groups written, over all runs
	buf     []byte
	order   []uint32 // scratch: group indexes sorted by partition
	parts   []uint8  // scratch: partition of each group
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

const spillCheckEvery = 256

// spillTable writes s's groups as one run and empties the table.
func (s *statsProc) spillTable() error {
	n := s.tab.len()
	if n == 0 {
		return nil
	}
	sp := s.spill
	if sp == nil {
		sp = &spillState{}
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
	// Counting sort of the groups by partition.
	sp.parts = slices.Grow(sp.parts[:0], n)[:n]
	var counts [spillParts + 1]int
	for g := range n {
		p := spillPart(s.tab.hash(g))
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
			k := s.tab.key(int(g))
			buf = binary.AppendUvarint(buf, uint64(len(k)))
			buf = append(buf, k...)
			for _, c := range s.cols {
				buf = c.(spillColumn).appendSpill(buf, int(g))
			}
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

// spillPart is the partition of a key hash: its top bits, which the
// table's slot index (the low bits) does not use.
func spillPart(h uint64) uint8 { return uint8(h >> 57) }

// adopt takes over o's runs and files (o is a merged worker's statsProc).
func (sp *spillState) adopt(o *spillState) {
	sp.runs = append(sp.runs, o.runs...)
	sp.files = append(sp.files, o.files...)
	sp.records += o.records
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
// stats function, spillColumns all). buf is scratch, grown as needed.
// Several goroutines may read the runs at once (ReadAt).
func readPart(tab *groupTable, cols []statsColumn, runs []*spillRun, buf *[]byte, p int) error {
	for _, run := range runs {
		n := run.offs[p+1] - run.offs[p]
		if n == 0 {
			continue
		}
		if int64(cap(*buf)) < n {
			*buf = make([]byte, n)
		}
		b := (*buf)[:n]
		if _, err := run.f.ReadAt(b, run.offs[p]); err != nil {
			if errors.Is(err, io.EOF) {
				err = errSpillFormat
			}
			return fmt.Errorf("stats: read spilled groups: %w", err)
		}
		for len(b) > 0 {
			kl, w := binary.Uvarint(b)
			if w <= 0 || kl > uint64(len(b)-w) {
				return errSpillFormat
			}
			k := b[w : w+int(kl)]
			b = b[w+int(kl):]
			g, added := tab.findOrAdd(k)
			if added {
				for _, c := range cols {
					c.grow(g + 1)
				}
			}
			for _, c := range cols {
				var err error
				if b, err = c.(spillColumn).readSpill(g, b); err != nil {
					return err
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
	// Many groups: goroutine k aggregates partitions k, k+n, k+2n... and
	// formats their results; this goroutine emits the partitions in order,
	// so the output order does not depend on scheduling.
	n := min(runtime.GOMAXPROCS(0), spillParts)
	sorter, topCol := s.topKIndex()
	parts := make([]chan spilledPart, n)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for k := range parts {
		parts[k] = make(chan spilledPart, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			groups := 0 // in this goroutine's last partition
			for p := k; p < spillParts; p += n {
				var sp spilledPart
				cols := make([]statsColumn, len(s.cols))
				for i, c := range s.cols {
					cols[i] = c.(spillColumn).fresh()
				}
				// Partitions hold about as many groups as each other
				// (keys are spread by hash): sizing the index for the last
				// one's saves growing it from empty every time.
				sp.tab.presize(groups)
				sp.err = readPart(&sp.tab, cols, s.spill.runs, &buf, p)
				groups = sp.tab.len()
				if sorter != nil {
					// The emitting goroutine formats only the groups
					// the sort after keeps (statsProc.topK).
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
				case parts[k] <- sp:
				case <-done:
					return
				}
				if sp.err != nil {
					return
				}
			}
		}()
	}
	defer func() {
		close(done)
		wg.Wait()
	}()
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
	for p := 0; p < spillParts; p++ {
		sp := <-parts[p%n]
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

func (c *countColumn) fresh() statsColumn {
	return &countColumn{fields: c.fields, empty: c.empty, rate: c.rate, sumLen: c.sumLen}
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

func (c *sumColumn) fresh() statsColumn { return &sumColumn{fields: c.fields, avg: c.avg} }

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

// reserve makes room for n more groups whose keys hold keyBytes bytes,
// so that adding them rehashes at most once, here, and copies no keys:
// for a merge that knows how many groups are coming (an upper bound:
// some may already be in the table).
func (t *groupTable) reserve(n, keyBytes int) {
	if n <= 0 {
		return
	}
	t.keys = slices.Grow(t.keys, keyBytes)
	t.off = slices.Grow(t.off, n)
	want := max(64, 1<<bits.Len(uint(2*(len(t.off)+n))))
	if want > len(t.slots) {
		if !t.seeded {
			t.seed, t.seeded = groupSeed, true
		}
		t.rehash(want)
	}
}

// hash returns group g's key hash.
func (t *groupTable) hash(g int) uint64 { return maphash.Bytes(t.seed, t.key(g)) }

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
