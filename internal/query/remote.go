package query

// Queries over several nodes (spate serve --select-peers): each node runs
// the part of the query that works on its own rows, and one node merges
// their answers and runs the rest, as the workers of one run are merged
// (see executor.finish). PlanRemote splits a query; a stats pipe's state
// crosses the network in the partial format below, anything else as rows.
//
// Partial format (Options.Partial writes it, Merger.AddPartial reads it):
//
//	"spate-partial-2\n"
//	uvarint len, the stats pipe's text      (both sides must agree)
//	the records, in partition order (partOf, as spill runs are): per record
//	  uvarint len, group key, then per function: uvarint len, state
//	  (a key may have several records in a partition: their states merge)
//	trailer: uvarint records,
//	  spillParts uvarint lengths (bytes of each partition's groups),
//	  uvarint count, then that many uvarint len + text: approximations noted
//	8 bytes, little-endian: the trailer's offset
//
// A node's state is so one spill run, held in memory: the merge folds
// partition p of every node's state at once into a table that stays in
// the cache, as a spilled stats pipe folds its runs (flushSpilled). The
// node writes it as it goes, and the trailer, which says where each
// partition ends, comes last. A stream whose lengths do not add up was
// cut short or is not this format: the merge refuses it.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/axiomhq/hyperloglog"

	"github.com/spate-io/spate/internal/ndjson"
)

const partialMagic = "spate-partial-2\n"

// errPartialFormat is a partial stream that cannot be read.
var errPartialFormat = errors.New("malformed partial stats state")

// RemotePlan is a query split for several nodes.
type RemotePlan struct {
	// Remote is what each node runs. With Partial it ends with a stats
	// pipe, and nodes answer with its state (Options.Partial); otherwise
	// they answer with their result rows.
	Remote  *Query
	Partial bool

	q     *Query
	local []Pipe // run over the merged rows (or after the merged stats)
	stats *PipeStats
}

// PlanRemote splits q: the filter and the pipes that work row by row go
// to the nodes. When the first pipe that needs every row is stats, it goes
// too (as partial state) and the pipes after it run on the merged state;
// a limit, or a sort with a limit, goes too and runs again over the
// merged rows (the first N of the union are among the nodes' first N);
// any other such pipe runs over the merged rows only.
func PlanRemote(q *Query) *RemotePlan {
	q = fuseSortLimit(q)
	rp := &RemotePlan{q: q}
	i := 0
	for i < len(q.Pipes) && !isBarrier(q.Pipes[i]) {
		i++
	}
	remote := slices.Clone(q.Pipes[:i])
	rp.local = q.Pipes[i:]
	if i < len(q.Pipes) {
		switch b := q.Pipes[i].(type) {
		case *PipeStats:
			remote = append(remote, b)
			rp.Partial, rp.stats = true, b
			rp.local = q.Pipes[i+1:]
		case *PipeLimit:
			remote = append(remote, b)
		case *PipeSort:
			if b.Limit > 0 {
				top := *b
				top.Limit, top.Offset, top.Rank = b.Limit+b.Offset, 0, ""
				remote = append(remote, &top)
			}
		}
	}
	rp.Remote = &Query{Options: q.EffectiveOptions(), Filter: q.Filter, Pipes: remote}
	return rp
}

// Merger merges the nodes' answers to a RemotePlan and runs the rest of
// the query, writing the result rows to a sink. Its Add methods are safe
// for concurrent use (they take turns); Finish comes after all of them.
type Merger struct {
	rp   *RemotePlan
	p    *plan
	mu   sync.Mutex
	head processor // where rows go (rows mode)
	// stats is the merged stats pipe (partial mode): the nodes' states
	// are its runs, held in memory until Finish folds them a partition at
	// a time (flushSpilled).
	stats   *statsProc
	runs    []*spillRun
	records int64 // groups over runs
	done    bool  // a limit was reached: later rows are dropped
	rows    int64
	notes   []string
}

// NewMerger starts merging for rp with opts (those of the query, as
// nodes run it), writing to sink.
func (rp *RemotePlan) NewMerger(opts Options, sink Sink) (*Merger, error) {
	opts.Partial = nil
	p, err := newPlan(rp.q, opts)
	if err != nil {
		return nil, err
	}
	m := &Merger{rp: rp, p: p}
	var term processor = newSinkProc(sink, p.rawRows)
	if rp.Partial {
		post, err := buildChain(p, slices.Clone(rp.local), term)
		if err != nil {
			return nil, err
		}
		sp, err := newStatsProc(p, rp.stats, post)
		if err != nil {
			return nil, err
		}
		m.stats = sp.(*statsProc)
		m.stats.budget = 0 // the merge spills nothing of its own
		return m, nil
	}
	if m.head, err = buildChain(p, slices.Clone(rp.local), term); err != nil {
		return nil, err
	}
	return m, nil
}

// AddPartial adds one node's complete partial stats state. It checks
// the whole state and adds nothing from one that fails; the groups are
// merged by Finish, which reads them from src: src must not change until
// Finish returns.
func (m *Merger) AddPartial(src []byte) error {
	if !m.rp.Partial {
		return errors.New("BUG: AddPartial on a plan without partial stats")
	}
	d := partialDecoder{b: src}
	if !bytes.HasPrefix(src, []byte(partialMagic)) {
		if v, ok := bytes.CutPrefix(src, []byte("spate-partial-")); ok {
			if i := bytes.IndexByte(v[:min(len(v), 8)], '\n'); i > 0 {
				return fmt.Errorf("%w: the node sent format %s, this server reads %s: run the same spate version on the front and its nodes", errPartialFormat, v[:i], partialMagic[len("spate-partial-"):len(partialMagic)-1])
			}
		}
		return fmt.Errorf("%w: no header", errPartialFormat)
	}
	d.pos = len(partialMagic)
	sig, err := d.blob()
	if err != nil {
		return err
	}
	if want := m.rp.stats.String(); string(sig) != want {
		return fmt.Errorf("%w: the node ran %q, not %q", errPartialFormat, sig, want)
	}
	start := d.pos
	if len(src)-start < 8 {
		return fmt.Errorf("%w: cut short", errPartialFormat)
	}
	end := len(src) - 8
	trailer := binary.LittleEndian.Uint64(src[end:])
	if trailer < uint64(start) || trailer > uint64(end) {
		return fmt.Errorf("%w: cut short", errPartialFormat)
	}
	t := partialDecoder{b: src[:end], pos: int(trailer)}
	records, err := t.uvarint()
	if err != nil || records > uint64(end)/2 {
		return fmt.Errorf("%w: bad record count", errPartialFormat)
	}
	run := &spillRun{mem: src}
	run.offs[0] = int64(start)
	for p := range spillParts {
		n, err := t.uvarint()
		if err != nil || n > trailer-uint64(run.offs[p]) {
			return fmt.Errorf("%w: bad partition length", errPartialFormat)
		}
		run.offs[p+1] = run.offs[p] + int64(n)
	}
	if run.offs[spillParts] != int64(trailer) {
		return fmt.Errorf("%w: partitions of %d bytes in %d", errPartialFormat, run.offs[spillParts]-int64(start), int64(trailer)-int64(start))
	}
	notes, err := readNotes(&t)
	if err != nil {
		return err
	}
	if t.pos != end {
		return fmt.Errorf("%w: bad trailer", errPartialFormat)
	}
	// Every record must read to its partition's end, a key of the by-values
	// and a state per function, so that Finish finds what it expects.
	nf, nby := len(m.stats.cols), len(m.rp.stats.By)
	seen := uint64(0)
	for p := range spillParts {
		r := partialDecoder{b: src[:run.offs[p+1]], pos: int(run.offs[p])}
		for r.pos < len(r.b) {
			k, err := r.blob()
			if err != nil {
				return err
			}
			if !validKey(k, nby) {
				return fmt.Errorf("%w: a bad group key", errPartialFormat)
			}
			for range nf {
				if _, err := r.blob(); err != nil {
					return err
				}
			}
			seen++
		}
	}
	if seen != records {
		return fmt.Errorf("%w: %d records, not %d", errPartialFormat, seen, records)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs = append(m.runs, run)
	m.records += int64(records)
	for _, n := range notes {
		if !slices.Contains(m.notes, n) {
			m.notes = append(m.notes, n)
		}
	}
	return nil
}

// readNotes reads the trailer's approximation notes.
func readNotes(d *partialDecoder) ([]string, error) {
	n, err := d.uvarint()
	if err != nil || n > 1000 {
		return nil, fmt.Errorf("%w: bad trailer", errPartialFormat)
	}
	var notes []string
	for range n {
		b, err := d.blob()
		if err != nil {
			return nil, err
		}
		notes = append(notes, string(b))
	}
	return notes, nil
}

// partialDecoder reads a partial stream held in memory. The slices it
// returns alias the stream.
type partialDecoder struct {
	b   []byte
	pos int
}

func (d *partialDecoder) byte() (byte, error) {
	if d.pos >= len(d.b) {
		return 0, io.ErrUnexpectedEOF
	}
	d.pos++
	return d.b[d.pos-1], nil
}

func (d *partialDecoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.pos:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad number", errPartialFormat)
	}
	d.pos += n
	return v, nil
}

// blob reads a length and that many bytes.
func (d *partialDecoder) blob() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil || n > uint64(len(d.b)-d.pos) {
		return nil, fmt.Errorf("%w: cut short", errPartialFormat)
	}
	b := d.b[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return b, nil
}

// rowReaders holds AddRows' readers: a front answers many small queries,
// each reading every node's rows, and a fresh 64 KiB buffer and 50 KiB
// Iter per node and query were most of what it allocated.
var rowReaders = sync.Pool{New: func() any { return &rowReader{br: bufio.NewReaderSize(nil, 64<<10)} }}

// rowReader is AddRows' state.
type rowReader struct {
	br   *bufio.Reader
	d    rowDecoder
	long []byte // a line longer than br's buffer
}

// AddRows pushes one node's result rows, NDJSON objects of string values
// as /select/logsql/query writes them (one per line), read from r to its
// end. A line that is not such an object fails it, naming the line.
func (m *Merger) AddRows(r io.Reader) error {
	if m.rp.Partial {
		return errors.New("BUG: AddRows on a plan with partial stats")
	}
	rr := rowReaders.Get().(*rowReader)
	rr.br.Reset(r)
	defer func() {
		rr.br.Reset(nil)
		if cap(rr.long) > 1<<20 || cap(rr.d.buf) > 1<<20 {
			// Not kept for the next query: a huge row's buffers.
			rr.long, rr.d = nil, rowDecoder{}
		}
		rowReaders.Put(rr)
	}()
	br, d := rr.br, &rr.d
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the reader's buffer: gathered here.
			rr.long = append(rr.long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				rr.long = append(rr.long, line...)
			}
			line = rr.long
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("cannot read a node's rows: %w", err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if derr := d.decode(line); derr != nil {
				return fmt.Errorf("cannot read a node's rows: line %d: %w", n, derr)
			}
			if perr := m.pushRow(&d.row); perr != nil {
				return perr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// pushRow pushes row through the merge's pipes, unless they have stopped.
func (m *Merger) pushRow(row *Row) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done {
		return nil
	}
	m.rows++
	err := m.head.push(row)
	if errors.Is(err, errStop) {
		m.done, err = true, nil
	}
	return err
}

// rowDecoder reads a node's result lines into row. The row's strings
// point into its buffer: valid until the next decode.
type rowDecoder struct {
	it   ndjson.Iter
	buf  []byte
	ends []int // per field: where its name ends in buf, then its value
	row  Row
}

// decode reads one line, a JSON object, into d.row, its fields in the
// line's order. Values are strings; null is an empty value, numbers are
// formatted as spate formats them and booleans as true or false (nodes
// write only strings). A nested object's fields are named with dots, as
// spate reads any line; an array is an error.
func (d *rowDecoder) decode(line []byte) error {
	d.row.Reset()
	d.buf, d.ends = d.buf[:0], d.ends[:0]
	d.it.Reset(line)
	for d.it.Next() {
		d.buf = append(d.buf, d.it.Key()...)
		d.ends = append(d.ends, len(d.buf))
		switch d.it.Kind() {
		case ndjson.KindString:
			d.buf = append(d.buf, d.it.Value()...)
		case ndjson.KindNumber:
			f, err := strconv.ParseFloat(unsafeString(d.it.Raw()), 64)
			if err != nil {
				return fmt.Errorf("field %q: %w", d.it.Key(), err)
			}
			d.buf = appendNumber(d.buf, f)
		case ndjson.KindTrue:
			d.buf = append(d.buf, "true"...)
		case ndjson.KindFalse:
			d.buf = append(d.buf, "false"...)
		case ndjson.KindNull:
		default:
			return fmt.Errorf("field %q: want a string value, got %s", d.it.Key(), d.it.Kind())
		}
		d.ends = append(d.ends, len(d.buf))
	}
	if err := d.it.Err(); err != nil {
		return err
	}
	// buf is complete: its strings can be taken now.
	s := unsafeString(d.buf)
	for i, prev := 0, 0; i < len(d.ends); i += 2 {
		d.row.Fields = append(d.row.Fields, Field{Name: s[prev:d.ends[i]], Value: s[d.ends[i]:d.ends[i+1]]})
		prev = d.ends[i+1]
	}
	return nil
}

// Finish ends the merge: the merged stats (or rows) go through the rest
// of the query to the sink. Stats.Matched counts the rows merged (rows
// mode); Approximate lists the nodes' approximations and the merge's.
func (m *Merger) Finish() (Stats, error) {
	var st Stats
	var err error
	if m.rp.Partial {
		s := m.stats
		if m.records > 0 {
			s.spill = &spillState{runs: m.runs, records: m.records}
			err = s.flushSpilled()
		} else {
			err = s.flush() // no group: a stats pipe without by-fields still has its row
		}
		st.Approximate = append(slices.Clone(m.notes), s.approximations()...)
	} else {
		err = m.head.flush()
		st.Matched = m.rows
	}
	if errors.Is(err, errStop) {
		err = nil
	}
	slices.Sort(st.Approximate)
	st.Approximate = slices.Compact(st.Approximate)
	return st, err
}

// partialWriters holds writePartial's 64 KiB buffers, one per node
// query otherwise.
var partialWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}

// writePartial writes s's merged state in the partial format; the run's
// approximation notes go in the trailer.
func (s *statsProc) writePartial(w io.Writer, notes []string) error {
	s.foldCount()
	for i, c := range s.cols {
		if _, ok := c.(partialColumn); !ok {
			return fmt.Errorf("stats function %s cannot be merged across nodes", s.funcs[i].f.Result)
		}
	}
	bw := partialWriters.Get().(*bufio.Writer)
	bw.Reset(w)
	defer func() {
		bw.Reset(nil)
		partialWriters.Put(bw)
	}()
	buf := append([]byte(partialMagic), 0)[:len(partialMagic)]
	buf = appendBlob(buf, []byte(s.st.String()))
	written := int64(0) // bytes of buf already written
	var lens [spillParts]uint64
	records := int64(0)
	var state []byte
	flush := func() error {
		if len(buf) < 32<<10 {
			return nil
		}
		if _, err := bw.Write(buf); err != nil {
			return err
		}
		written += int64(len(buf))
		buf = buf[:0]
		return nil
	}
	// add writes groups order of tab and cols as partition p's.
	add := func(p int, tab *groupTable, cols []statsColumn, order []uint32) error {
		for _, g := range order {
			n := len(buf)
			buf = appendRecord(buf, tab, cols, int(g), &state)
			lens[p] += uint64(len(buf) - n)
			if err := flush(); err != nil {
				return err
			}
		}
		records += int64(len(order))
		return nil
	}
	if s.spill == nil {
		var sp spillState
		counts := sp.partitionOrder(&s.tab)
		for p := range spillParts {
			if err := add(p, &s.tab, s.cols, sp.order[counts[p]:counts[p+1]]); err != nil {
				return err
			}
		}
	} else {
		defer s.release()
		if err := s.spillTable(); err != nil {
			return err
		}
		s.tab = groupTable{}
		sp := s.spill
		if sp.distinct != nil && float64(sp.records) <= partialUnfoldedRepeats*float64(sp.distinct.Estimate()) {
			// Few keys are in more than one run: the runs' records go
			// as they are, partition by partition, and the merge folds
			// them (it folds every node's records of a partition at
			// once anyway). Folding them here first, on one node's
			// cores, would be the same work again.
			for p := range spillParts {
				for _, run := range sp.runs {
					b, err := run.part(p, &sp.buf)
					if err != nil {
						return err
					}
					buf = append(buf, b...)
					lens[p] += uint64(len(b))
					if err := flush(); err != nil {
						return err
					}
				}
			}
			records = sp.records
		} else if err := s.writeFolded(add); err != nil {
			return err
		}
	}
	trailer := written + int64(len(buf))
	buf = binary.AppendUvarint(buf, uint64(records))
	for _, n := range lens {
		buf = binary.AppendUvarint(buf, n)
	}
	buf = binary.AppendUvarint(buf, uint64(len(notes)))
	for _, n := range notes {
		buf = appendBlob(buf, []byte(n))
	}
	buf = binary.LittleEndian.AppendUint64(buf, uint64(trailer))
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}

// partialUnfoldedRepeats is the most records per distinct key (as
// estimated) with which a node sends its spill runs unfolded (a variable
// for tests): by path over 1.3 M lines has 1.2 per key, a few hundred
// thousand users over millions of lines many more, which would multiply
// the bytes sent.
var partialUnfoldedRepeats = 1.5

// writeFolded calls add with each partition of s's spill runs, folded
// (the partitions aggregated one at a time on every CPU, each in the
// cache, as flushSpilled does).
func (s *statsProc) writeFolded(add func(p int, tab *groupTable, cols []statsColumn, order []uint32) error) error {
	parts, stop := s.aggregateParts(false)
	defer stop()
	var order []uint32
	for p := range spillParts {
		sp := <-parts
		if sp.err != nil {
			return sp.err
		}
		order = order[:0]
		for g := range sp.tab.len() {
			order = append(order, uint32(g))
		}
		if err := add(p, &sp.tab, sp.cols, order); err != nil {
			return err
		}
	}
	return nil
}

func appendBlob(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// maxBlob bounds one length in a partial stream, against corruption.
const maxBlob = 1 << 30

// partialColumn is a statsColumn whose per-group state crosses nodes.
type partialColumn interface {
	// appendState appends group g's state to dst.
	appendState(dst []byte, g int) []byte
	// mergeState folds one state written by appendState into group g.
	mergeState(g int, src []byte) error
}

// stateCodec is a statsState that partialColumn can carry.
type stateCodec interface {
	appendState(dst []byte) []byte
	// decodeState sets an empty state from src.
	decodeState(src []byte) error
}

func (c *countColumn) appendState(dst []byte, g int) []byte { return c.appendSpill(dst, g) }
func (c *countColumn) mergeState(g int, src []byte) error {
	rest, err := c.readSpill(g, src)
	if err == nil && len(rest) > 0 {
		err = errPartialFormat
	}
	return err
}

func (c *sumColumn) appendState(dst []byte, g int) []byte { return c.appendSpill(dst, g) }
func (c *sumColumn) mergeState(g int, src []byte) error {
	rest, err := c.readSpill(g, src)
	if err == nil && len(rest) > 0 {
		err = errPartialFormat
	}
	return err
}

func (c *stateColumn) appendState(dst []byte, g int) []byte {
	return c.states[g].(stateCodec).appendState(dst)
}

func (c *stateColumn) mergeState(g int, src []byte) error {
	if m, ok := c.states[g].(encodedMerger); ok {
		if done, err := m.mergeEncoded(src); done || err != nil {
			return err
		}
	}
	st := c.newFunc()
	sc, ok := st.(stateCodec)
	if !ok {
		return fmt.Errorf("%T cannot be merged across nodes", st)
	}
	if err := sc.decodeState(src); err != nil {
		return err
	}
	c.states[g].merge(st)
	return nil
}

// encodedMerger is a statsState that can fold an encoded state into
// itself without decoding it into a state of its own first (a set:
// insert each value). done is false when it cannot (a sketch), and the
// state is then decoded and merged.
type encodedMerger interface {
	mergeEncoded(src []byte) (done bool, err error)
}

// stateReader reads the fields of one encoded state.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, w := binary.Uvarint(r.b)
	if w <= 0 {
		r.err = errPartialFormat
		return 0
	}
	r.b = r.b[w:]
	return v
}

func (r *stateReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, w := binary.Varint(r.b)
	if w <= 0 {
		r.err = errPartialFormat
		return 0
	}
	r.b = r.b[w:]
	return v
}

// count reads a count of items, each at least one byte.
func (r *stateReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errPartialFormat
		return 0
	}
	return int(n)
}

func (r *stateReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errPartialFormat
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *stateReader) str() string { return string(r.bytes()) }

func (r *stateReader) float() float64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.err = errPartialFormat
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *stateReader) end() error {
	if r.err == nil && len(r.b) > 0 {
		r.err = errPartialFormat
	}
	return r.err
}

func appendStr(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendFloat(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}

func appendPos(dst []byte, p rowPos) []byte {
	return binary.AppendVarint(binary.AppendVarint(dst, int64(p.input)), p.off)
}

func (r *stateReader) pos() rowPos { return rowPos{input: int(r.varint()), off: r.varint()} }

func (s *minMaxState) appendState(dst []byte) []byte {
	if !s.has {
		return append(dst, 0)
	}
	return appendStr(append(dst, 1), s.val)
}

func (s *minMaxState) decodeState(src []byte) error {
	r := stateReader{b: src}
	if r.uvarint() == 1 {
		s.has, s.val = true, r.str()
		s.key = keyOf(s.val)
	}
	return r.end()
}

func (s *uniqState) appendState(dst []byte) []byte {
	if s.hll != nil {
		b, err := s.hll.MarshalBinary()
		if err != nil {
			panic(fmt.Sprintf("BUG: cannot encode a HyperLogLog sketch: %v", err))
		}
		return append(append(dst, 1), b...)
	}
	dst = append(dst, 0)
	dst = binary.AppendUvarint(dst, uint64(s.set.len()))
	for g := range s.set.len() {
		dst = appendBlob(dst, s.set.key(g))
	}
	return dst
}

func (s *uniqState) decodeState(src []byte) error {
	if len(src) == 0 {
		return errPartialFormat
	}
	if src[0] == 1 {
		s.hll = hyperloglog.New16()
		s.set = groupTable{}
		return s.hll.UnmarshalBinary(src[1:])
	}
	r := stateReader{b: src[1:]}
	n := r.count()
	for range n {
		k := r.bytes()
		if r.err != nil {
			break
		}
		s.set.findOrAdd(k)
	}
	return r.end()
}

func (s *uniqState) mergeEncoded(src []byte) (bool, error) {
	if len(src) == 0 || src[0] != 0 || s.hll != nil {
		return false, nil
	}
	r := stateReader{b: src[1:]}
	n := r.count()
	for range n {
		k := r.bytes()
		if r.err != nil {
			break
		}
		if s.limit > 0 && int64(s.set.len()) >= s.limit {
			if _, ok := s.set.find(k); !ok {
				break
			}
			continue
		}
		if _, added := s.set.findOrAdd(k); added {
			s.mem.add(int64(len(k)) + 48)
		}
	}
	if r.err != nil {
		return true, r.err
	}
	if s.mem.sketch() {
		s.toSketch()
	}
	return true, nil
}

func (s *quantileState) appendState(dst []byte) []byte {
	if s.sk != nil {
		dst = append(dst, 1)
		dst = binary.AppendVarint(dst, s.empty)
		dst = binary.AppendVarint(dst, s.nSk)
		dst = binary.AppendVarint(dst, s.nStr)
		dst = appendStr(dst, s.maxStr)
		var b []byte
		s.sk.Encode(&b, false)
		return append(dst, b...)
	}
	dst = append(dst, 0)
	dst = binary.AppendVarint(dst, s.empty)
	dst = binary.AppendUvarint(dst, uint64(len(s.nums)))
	for _, n := range s.nums {
		dst = appendFloat(dst, n)
	}
	dst = binary.AppendUvarint(dst, uint64(len(s.strs)))
	for _, v := range s.strs {
		dst = appendStr(dst, v)
	}
	dst = binary.AppendUvarint(dst, uint64(len(s.texts)))
	for n, t := range s.texts {
		dst = appendStr(appendFloat(dst, n), t)
	}
	return dst
}

func (s *quantileState) decodeState(src []byte) error {
	if len(src) == 0 {
		return errPartialFormat
	}
	r := stateReader{b: src[1:]}
	s.empty = r.varint()
	if src[0] == 1 {
		s.nSk, s.nStr, s.maxStr = r.varint(), r.varint(), r.str()
		if r.err != nil {
			return r.err
		}
		sk, err := ddsketch.NewDefaultDDSketch(sketchAccuracy)
		if err != nil {
			return err
		}
		if err := sk.DecodeAndMergeWith(r.b); err != nil {
			return err
		}
		s.sk = sk
		return nil
	}
	n := r.count()
	s.nums = make([]float64, 0, n)
	for range n {
		s.nums = append(s.nums, r.float())
	}
	n = r.count()
	for range n {
		s.strs = append(s.strs, r.str())
	}
	if n = r.count(); n > 0 {
		s.texts = make(map[float64]string, n)
	}
	for range n {
		f := r.float()
		s.texts[f] = r.str()
	}
	return r.end()
}

func (s *rowMinMaxState) appendState(dst []byte) []byte {
	if !s.has {
		return append(dst, 0)
	}
	dst = appendStr(append(dst, 1), s.val)
	dst = appendPos(dst, s.pos)
	dst = binary.AppendUvarint(dst, uint64(len(s.row)))
	for _, f := range s.row {
		dst = appendStr(appendStr(dst, f.Name), f.Value)
	}
	return dst
}

func (s *rowMinMaxState) decodeState(src []byte) error {
	r := stateReader{b: src}
	if r.uvarint() == 1 {
		s.has, s.val, s.pos = true, r.str(), r.pos()
		s.key = keyOf(s.val)
		n := r.count()
		for range n {
			s.row = append(s.row, Field{Name: r.str(), Value: r.str()})
		}
	}
	return r.end()
}

func (s *uniqValuesState) appendState(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s.set)))
	for v := range s.set {
		dst = appendStr(dst, v)
	}
	return dst
}

func (s *uniqValuesState) decodeState(src []byte) error {
	r := stateReader{b: src}
	n := r.count()
	if s.set == nil {
		s.set = make(map[string]struct{}, n)
	}
	for range n {
		s.set[r.str()] = struct{}{}
	}
	return r.end()
}

func (s *uniqValuesState) mergeEncoded(src []byte) (bool, error) {
	r := stateReader{b: src}
	n := r.count()
	for range n {
		v := r.bytes()
		if r.err != nil {
			break
		}
		if _, ok := s.set[string(v)]; ok {
			continue
		}
		if s.limit > 0 && int64(len(s.set)) >= s.limit {
			break
		}
		s.set[string(v)] = struct{}{}
		s.mem.add(int64(len(v)) + 48)
	}
	return true, r.err
}

func (s *valuesState) appendState(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s.vals)))
	for _, v := range s.vals {
		dst = appendStr(appendPos(dst, v.pos), v.v)
	}
	return dst
}

func (s *valuesState) decodeState(src []byte) error {
	r := stateReader{b: src}
	n := r.count()
	for range n {
		p := r.pos()
		s.vals = append(s.vals, posValue{pos: p, v: r.str()})
	}
	return r.end()
}
