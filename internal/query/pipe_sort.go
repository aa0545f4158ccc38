package query

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// SortField is one key of a sort.
type SortField struct {
	Name string
	Desc bool
}

// PipeSort sorts rows: "sort by (a, b desc) [desc] [partition by (p, q)]
// [offset N] [limit M] [rank [as r]]" (also "sort (a)" and "order by").
// Desc reverses the whole order (the trailing "desc"). Limit 0 means no
// limit.
//
// With Partition, rows are sorted, offset and limited within each group of
// equal partition values, and the groups come out in VictoriaLogs' order
// of their keys (appendPartitionKey); a partition needs a limit. Rank, if not
// "", names a field set to each row's 1-based place in its order (counting
// the rows offset skips), put first in the row.
type PipeSort struct {
	By        []SortField
	Desc      bool
	Partition []string
	Offset    int64
	Limit     int64
	Rank      string
}

func (*PipeSort) isPipe() {}

func (p *PipeSort) String() string {
	var b strings.Builder
	b.WriteString("sort")
	if len(p.By) > 0 {
		writeSortBy(&b, p.By)
	}
	if p.Desc {
		b.WriteString(" desc")
	}
	if len(p.Partition) > 0 {
		b.WriteString(" partition by (" + joinFieldPatterns(p.Partition) + ")")
	}
	if p.Offset > 0 {
		b.WriteString(" offset " + strconv.FormatInt(p.Offset, 10))
	}
	if p.Limit > 0 {
		b.WriteString(" limit " + strconv.FormatInt(p.Limit, 10))
	}
	b.WriteString(rankString(p.Rank))
	return b.String()
}

// rankString prints a sort's or top's rank option: "", " rank" or
// " rank as r".
func rankString(rank string) string {
	switch rank {
	case "":
		return ""
	case "rank":
		return " rank"
	}
	return " rank as " + quoteToken(rank)
}

// parseRank parses "rank [[as] name]" (the name is "rank" without one);
// the current token is "rank". As in VictoriaLogs, any word but "limit"
// after it is the name: "rank offset" names the field offset.
func (p *parser) parseRank() (string, error) {
	p.next()
	if p.isKw("as") {
		p.next()
		return p.parseFieldName("rank field name")
	}
	if p.isTrailer() || p.isKw("limit") {
		return "rank", nil
	}
	return p.parseFieldName("rank field name")
}

// parsePartition parses "partition [by] (a, b)"; the current token is
// "partition".
func (p *parser) parsePartition(pipe string) ([]string, error) {
	p.next()
	if p.isKw("by") {
		p.next()
	}
	return p.parseFieldPatterns("partition field of "+pipe, true, false)
}

// parseSortPipe parses "sort [by] (a, b desc) [desc] [offset N] [limit N]".
// parseSortFields parses "(a, b desc, c asc)", the fields of pipe's by
// clause.
func (p *parser) parseSortFields(pipe string) ([]SortField, error) {
	if err := p.expectPunct("(", "after '"+pipe+" by'"); err != nil {
		return nil, err
	}
	var by []SortField
	for !p.isPunct(")") {
		name, err := p.parseFieldName("sort field")
		if err != nil {
			return nil, err
		}
		sf := SortField{Name: name}
		if p.isKw("desc") {
			p.next()
			sf.Desc = true
		} else if p.isKw("asc") {
			p.next()
		}
		by = append(by, sf)
		if p.isPunct(")") {
			break
		}
		if !p.isPunct(",") {
			return nil, p.errorf(p.cur().pos, "missing ',' or ')' in '%s by (...)'; got %s", pipe, p.describe())
		}
		p.next()
	}
	p.next()
	return by, nil
}

// parseFirstLastPipe parses "first [N] [by (a, b desc)]", the first N
// rows (1 by default) in that order, and "last ...", the last N: VictoriaLogs
// v1.52.1's shorthands for "sort by (...) [desc] limit N".
func (p *parser) parseFirstLastPipe(name string) (Pipe, error) {
	p.next()
	ps := &PipeSort{Limit: 1, Desc: name == "last"}
	if !p.isKw("by") && !p.isPunct("(") && !p.isTrailer() {
		n, err := p.parseCount(name)
		if err != nil {
			return nil, err
		}
		if n < 1 {
			return nil, p.errorf(p.cur().pos, "the number of rows of %s must be at least 1", name)
		}
		ps.Limit = n
	}
	if p.isKw("by") || p.isPunct("(") {
		if p.isKw("by") {
			p.next()
		}
		by, err := p.parseSortFields(name)
		if err != nil {
			return nil, err
		}
		ps.By = by
	}
	if p.isKw("partition") {
		part, err := p.parsePartition(name)
		if err != nil {
			return nil, err
		}
		ps.Partition = part
	}
	if p.isKw("rank") {
		rank, err := p.parseRank()
		if err != nil {
			return nil, err
		}
		ps.Rank = rank
	}
	return ps, nil
}

func (p *parser) parseSortPipe(_ string) (Pipe, error) {
	p.next()
	ps := &PipeSort{}
	hasBy := p.isKw("by")
	if hasBy {
		p.next()
	}
	if p.isPunct("(") || hasBy {
		by, err := p.parseSortFields("sort")
		if err != nil {
			return nil, err
		}
		ps.By = by
	}
	if p.isKw("desc") {
		p.next()
		ps.Desc = true
	} else if p.isKw("asc") {
		p.next()
	}
	seenOffset, seenLimit := false, false
	for {
		switch {
		case p.isKw("offset"):
			if seenOffset {
				return nil, p.errorf(p.cur().pos, "duplicate 'offset' in sort pipe")
			}
			seenOffset = true
			p.next()
			n, err := p.parseCount("offset")
			if err != nil {
				return nil, err
			}
			ps.Offset = n
		case p.isKw("limit"):
			if seenLimit {
				return nil, p.errorf(p.cur().pos, "duplicate 'limit' in sort pipe")
			}
			seenLimit = true
			p.next()
			n, err := p.parseCount("limit")
			if err != nil {
				return nil, err
			}
			ps.Limit = n
		case p.isKw("partition"):
			if len(ps.Partition) > 0 {
				return nil, p.errorf(p.cur().pos, "duplicate 'partition by' in sort pipe")
			}
			part, err := p.parsePartition("sort")
			if err != nil {
				return nil, err
			}
			ps.Partition = part
		case p.isKw("rank"):
			if ps.Rank != "" {
				return nil, p.errorf(p.cur().pos, "duplicate 'rank' in sort pipe")
			}
			rank, err := p.parseRank()
			if err != nil {
				return nil, err
			}
			ps.Rank = rank
		default:
			if len(ps.Partition) > 0 && ps.Limit <= 0 {
				return nil, p.errorHint(p.cur().pos, "for example: sort by (_time desc) partition by (host) limit 3",
					"missing 'limit' for 'partition by' in sort pipe")
			}
			return ps, nil
		}
	}
}

// sortProc implements sort. Rows are cloned and kept; with a limit only the
// best offset+limit rows are kept (the list is cut back whenever it doubles),
// so "sort ... limit N" holds O(N) rows, not all of them. Ties keep file
// order.
type sortProc struct {
	by     []SortField
	desc   bool
	offset int64
	limit  int64
	rank   string
	// slack is how many rows past offset+limit are kept before the list
	// is cut back (1024; a partition's few).
	slack int
	rows  []*Row
	worst *Row // with a limit: the last of the best rows after a cut
	// worstNum is worst's sort value as a plain number, when it is one
	// (worstOK), worked out for worstFor (see rejectsNumber). When it is
	// not, worstSide is how every plain number compares with it
	// (compareNatural: -1 or 1), or 0 when that depends on the number.
	worstNum  float64
	worstOK   bool
	worstSide int
	worstFor  *Row
	keyA      []byte // compare's scratch, for a sort without fields
	keyB      []byte
	idxA      []int
	idxB      []int
	next      processor
	// size is the bytes the kept rows hold (about); maxSize, if > 0, is
	// Options.MaxMemory: past it the sort fails with ErrMemoryLimit.
	size, maxSize int64
}

// ErrMemoryLimit is the error of a query that would hold more rows in
// memory than Options.MaxMemory allows.
var ErrMemoryLimit = errors.New("the query needs more memory than allowed")

func (p *PipeSort) newProcessor(pl *plan, next processor) (processor, error) {
	if len(p.Partition) > 0 {
		return &partSortProc{ps: p, maxSize: pl.opts.MaxMemory, parts: make(map[string]*sortProc), next: next}, nil
	}
	return newSortProc(p, pl.opts.MaxMemory, next), nil
}

func newSortProc(p *PipeSort, maxSize int64, next processor) *sortProc {
	return &sortProc{by: p.By, desc: p.Desc, offset: p.Offset, limit: p.Limit, rank: p.Rank, slack: 1024, maxSize: maxSize, next: next}
}

// rowSize is about the memory a cloned row holds.
func rowSize(r *Row) int64 {
	n := int64(64 + 32*len(r.Fields))
	for _, f := range r.Fields {
		n += int64(len(f.Name) + len(f.Value))
	}
	return n
}

// checkSize cuts the rows to the best offset+limit when that frees memory,
// then fails if they still hold more than maxSize.
func (p *sortProc) checkSize() error {
	if p.maxSize <= 0 || p.size <= p.maxSize {
		return nil
	}
	if k := p.keep(); k >= 0 && len(p.rows) > k {
		p.sortRows()
		clear(p.rows[k:])
		p.rows = p.rows[:k]
		p.worst = p.rows[k-1]
		p.size = 0
		for _, r := range p.rows {
			p.size += rowSize(r)
		}
	}
	if p.size > p.maxSize {
		return fmt.Errorf("sort holds %d rows, over the %d MiB a query may use; narrow the filter or the time range, lower the limit, or aggregate with stats: %w",
			len(p.rows), p.maxSize>>20, ErrMemoryLimit)
	}
	return nil
}

func (p *sortProc) keep() int {
	if p.limit <= 0 {
		return -1
	}
	return int(p.offset + p.limit)
}

func (p *sortProc) push(r *Row) error {
	k := p.keep()
	if k >= 0 && p.worst != nil && p.compare(r, p.worst) >= 0 {
		// Fast path for top-N: r cannot enter the best k.
		return nil
	}
	c := r.Clone()
	p.rows = append(p.rows, c)
	p.size += rowSize(c)
	if err := p.checkSize(); err != nil {
		return err
	}
	if k >= 0 && len(p.rows) >= 2*k+p.slack {
		p.sortRows()
		clear(p.rows[k:])
		p.rows = p.rows[:k]
		p.worst = p.rows[k-1]
		p.size = 0
		for _, r := range p.rows {
			p.size += rowSize(r)
		}
	}
	return nil
}

// rejectsNumber reports whether a row whose first sort field has the value
// formatNumber(v) would sort strictly after the worst row kept, whatever its
// other fields, so that push would drop it: a stats pipe before the sort
// then need not make the row (see statsProc.topK). It answers false when it
// cannot tell without the row: no cut yet, a value that does not format
// as a plain number (NaN, ±Inf, exponents), which sort compares as text,
// or a worst value that is not a plain number and that plain numbers do
// not all sort on one side of.
//
// Exact: formatNumber prints the shortest text that parses back to v, so two
// plain numbers' texts compare as their values do, and equal values (whose
// rows tie and are ordered by their other fields) are never rejected. A
// plain number's text starts with '-' or a digit: compareNatural puts it
// after an empty value and before a text that starts with a byte past '9'
// ("NaN", "Inf", words), which is not a finite number either way it is read.
// So after a sum over no values (NaN) takes the last kept place of a
// descending sort, every number is rejected, where before none was.
func (p *sortProc) rejectsNumber(v float64) bool {
	if p.worst == nil || len(p.by) == 0 || !plainNumber(v) {
		return false
	}
	if p.worst != p.worstFor {
		p.worstFor = p.worst
		w := p.worst.Get(p.by[0].Name)
		p.worstNum, p.worstOK = parsePlainNumber(w)
		p.worstOK = p.worstOK && plainNumber(p.worstNum)
		p.worstSide = 0
		switch {
		case p.worstOK:
		case w == "":
			p.worstSide = 1
		case w[0] > '9':
			p.worstSide = -1
		}
	}
	var c int
	switch {
	case p.worstOK:
		c = cmp.Compare(v, p.worstNum)
	case p.worstSide != 0:
		c = p.worstSide
	default:
		return false
	}
	if p.by[0].Desc != p.desc {
		c = -c
	}
	return c > 0
}

func (p *sortProc) compare(a, b *Row) int {
	if len(p.by) == 0 {
		// Without fields, rows sort by all of theirs, compared naturally
		// as one text (see appendAllFieldsKeys), as VictoriaLogs does; a
		// trailing desc reverses it.
		p.keyA, p.keyB, p.idxA, p.idxB = appendAllFieldsKeys(p.keyA[:0], p.keyB[:0], p.idxA[:0], p.idxB[:0], a, b)
		c := compareNatural(unsafeString(p.keyA), unsafeString(p.keyB))
		if p.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	for _, f := range p.by {
		var c int
		if f.Name == "_time" && a.HasTime && b.HasTime {
			// The parsed time of both: what compareNatural would find
			// from the text, without parsing it on every comparison.
			c = cmp.Compare(a.Time, b.Time)
		} else {
			c = compareNatural(a.Get(f.Name), b.Get(f.Name))
		}
		if f.Desc != p.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	if a.pos.less(b.pos) {
		return -1
	}
	if b.pos.less(a.pos) {
		return 1
	}
	// Rows made by stats have no file position: compare their fields so
	// that ties come out in the same order on every run.
	for i := 0; i < len(a.Fields) && i < len(b.Fields); i++ {
		if c := strings.Compare(a.Fields[i].Name, b.Fields[i].Name); c != 0 {
			return c
		}
		if c := strings.Compare(a.Fields[i].Value, b.Fields[i].Value); c != 0 {
			return c
		}
	}
	return len(a.Fields) - len(b.Fields)
}

func (p *sortProc) sortRows() {
	slices.SortStableFunc(p.rows, p.compare)
}

func (p *sortProc) merge(o processor) error {
	o2 := o.(*sortProc)
	p.rows = append(p.rows, o2.rows...)
	p.size += o2.size
	p.worst = nil
	return p.checkSize()
}

func (p *sortProc) flush() error {
	if err := p.emit(p.next); err != nil && err != errStop {
		return err
	}
	return p.next.flush()
}

// emit sorts the rows and pushes those that offset and limit keep to next,
// each with its rank if the sort has one. It returns errStop when next
// wants no more rows.
func (p *sortProc) emit(next processor) error {
	p.sortRows()
	rows := p.rows
	if int64(len(rows)) <= p.offset {
		rows = nil
	} else {
		rows = rows[p.offset:]
	}
	if p.limit > 0 && int64(len(rows)) > p.limit {
		rows = rows[:p.limit]
	}
	for i, r := range rows {
		if p.rank != "" {
			setFirst(r, p.rank, strconv.FormatInt(p.offset+int64(i)+1, 10))
		}
		if err := next.push(r); err != nil {
			return err
		}
	}
	return nil
}

// setFirst sets the named field to value and moves it to the front of r.
func setFirst(r *Row, name, value string) {
	if name == "_time" {
		r.HasTime = false
	}
	if i := r.index(name); i >= 0 {
		r.Fields = slices.Delete(r.Fields, i, i+1)
	}
	r.Fields = slices.Insert(r.Fields, 0, Field{Name: name, Value: value})
}

// partSortProc implements sort with partition by: a sortProc (with the
// sort's offset, limit and rank) per partition key, which holds at most a
// few rows past offset+limit. The memory limit counts them all.
type partSortProc struct {
	ps      *PipeSort
	maxSize int64
	size    int64
	parts   map[string]*sortProc
	key     []byte
	next    processor
}

// appendPartitionKey appends the partition key of the values of fields
// in r: each value's length as a uvarint, then the value, as VictoriaLogs
// builds it; ordered as bytes, the keys give its order of partitions
// (shorter first values first).
func appendPartitionKey(dst []byte, r *Row, fields []string) []byte {
	for _, f := range fields {
		v := r.Get(f)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
	}
	return dst
}

func (p *partSortProc) push(r *Row) error {
	p.key = appendPartitionKey(p.key[:0], r, p.ps.Partition)
	sp, ok := p.parts[string(p.key)]
	if !ok {
		sp = newSortProc(p.ps, 0, nil)
		sp.slack = 8
		p.parts[string(p.key)] = sp
		p.size += int64(len(p.key)) + 200
	}
	before := sp.size
	if err := sp.push(r); err != nil {
		return err
	}
	p.size += sp.size - before
	return p.checkSize()
}

func (p *partSortProc) checkSize() error {
	if p.maxSize > 0 && p.size > p.maxSize {
		return fmt.Errorf("sort with partition by holds %d partitions, over the %d MiB a query may use; narrow the filter or the time range, lower the limit, or partition by fewer values: %w",
			len(p.parts), p.maxSize>>20, ErrMemoryLimit)
	}
	return nil
}

func (p *partSortProc) merge(o processor) error {
	for k, osp := range o.(*partSortProc).parts {
		sp, ok := p.parts[k]
		if !ok {
			p.parts[k] = osp
			p.size += osp.size + int64(len(k)) + 200
			continue
		}
		before := sp.size
		if err := sp.merge(osp); err != nil {
			return err
		}
		p.size += sp.size - before
	}
	return p.checkSize()
}

func (p *partSortProc) flush() error {
	keys := make([]string, 0, len(p.parts))
	for k := range p.parts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := p.parts[k].emit(p.next); err != nil {
			if err == errStop {
				break
			}
			return err
		}
	}
	return p.next.flush()
}

// appendAllFieldsKeys appends to ka and kb the keys a sort without fields
// orders rows a and b by, compared naturally: "name":"value", for each
// field either row has, in VictoriaLogs' column order (_time, _stream_id,
// _stream, _msg, then by name), a field the row lacks as "" and each
// string quoted as appendJSONStringVL quotes. VictoriaLogs builds such a
// key of every column of the row's storage block; a field neither row has
// would add the same pair to both keys at the same place, so the two keys
// compare as VictoriaLogs' do for rows of one block. ia and ib are
// scratch space, returned for reuse.
func appendAllFieldsKeys(ka, kb []byte, ia, ib []int, a, b *Row) ([]byte, []byte, []int, []int) {
	ia, ib = sortedFieldIdx(ia, a), sortedFieldIdx(ib, b)
	x, y := 0, 0
	for x < len(ia) || y < len(ib) {
		var c int
		switch {
		case x == len(ia):
			c = 1
		case y == len(ib):
			c = -1
		default:
			c = compareLogFieldNames(a.Fields[ia[x]].Name, b.Fields[ib[y]].Name)
		}
		var name, va, vb string
		if c <= 0 {
			name, va = a.Fields[ia[x]].Name, a.Fields[ia[x]].Value
			x++
		}
		if c >= 0 {
			name, vb = b.Fields[ib[y]].Name, b.Fields[ib[y]].Value
			y++
		}
		ka = append(appendJSONFieldVL(ka, name, va), ',')
		kb = append(appendJSONFieldVL(kb, name, vb), ',')
	}
	return ka, kb, ia, ib
}

// sortedFieldIdx appends to dst the indexes of r's non-empty fields in
// compareLogFieldNames' order, each name once (its first field, as Get).
func sortedFieldIdx(dst []int, r *Row) []int {
	for i := range r.Fields {
		if r.Fields[i].Value != "" {
			dst = append(dst, i)
		}
	}
	slices.SortStableFunc(dst, func(x, y int) int { return compareLogFieldNames(r.Fields[x].Name, r.Fields[y].Name) })
	return slices.CompactFunc(dst, func(x, y int) bool { return r.Fields[x].Name == r.Fields[y].Name })
}
