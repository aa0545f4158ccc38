package query

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spate-io/spate/internal/timeparse"
)

// This file holds the stats pipe, written
//
//	stats [by (f1, _time:1m, _time:1d offset 3h, num:10)] func(...) [if (filter)] [as name], ...
//
// "by" may be left out ("stats (level) count()") and so may "stats" itself
// ("| count() as n"). Without "as", the result name is the function's text as
// VictoriaLogs prints it ("count(*)", "max(bytes)", "count(*) if (level:error)").
// The functions are in pipe_stats_func.go and stats_*.go; the spilling of
// groups to temp files is in pipe_stats_spill.go.

// PipeStats aggregates: "stats by (a, _time:1m) count() as n, sum(b)". The
// keyword "by" and even "stats" may be omitted ("stats (a) count()",
// "| count() as n").
type PipeStats struct {
	By    []ByField
	Funcs []StatsFunc
}

// ByField is one "by" key of stats. For "_time:1m" Bucket is "1m" and
// BucketNs the step in nanoseconds; for a numeric field "f:10" BucketNum is
// the step. The offset ("by (_time:1d offset 3h)", written as OffsetText)
// works as a time zone: buckets start at floor((v+off)/step)*step-off, so
// these days start at 21:00 UTC. _time buckets use Offset, in nanoseconds;
// numeric buckets use OffsetNum, which may be fractional ("f:0.5 offset
// 0.25"). Bucket is "" when there is no bucket.
type ByField struct {
	Name       string
	Bucket     string
	BucketNs   int64
	BucketNum  float64
	Offset     int64
	OffsetNum  float64
	OffsetText string
}

func (*PipeStats) isPipe() {}

// String prints a by field of stats: "level", "_time:1m", "_time:1d offset 3h".
func (bf *ByField) String() string {
	s := quoteToken(bf.Name)
	if bf.Bucket != "" {
		s += ":" + numText(bf.Bucket)
		if bf.OffsetText != "" {
			s += " offset " + numText(bf.OffsetText)
		}
	}
	return s
}

func (p *PipeStats) String() string {
	var b strings.Builder
	b.WriteString("stats")
	if len(p.By) > 0 {
		b.WriteString(" by (")
		for i := range p.By {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.By[i].String())
		}
		b.WriteString(")")
	}
	for i := range p.Funcs {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(" ")
		b.WriteString(p.Funcs[i].String())
	}
	return b.String()
}

// parseStatsKeywordPipe parses "stats ...".
func (p *parser) parseStatsKeywordPipe(_ string) (Pipe, error) {
	p.next()
	return p.parseStatsPipe()
}

// parseStatsPipe parses a stats pipe after the optional "stats" keyword.
func (p *parser) parseStatsPipe() (Pipe, error) {
	ps := &PipeStats{}
	if p.isKw("by") || p.isPunct("(") {
		if p.isKw("by") {
			p.next()
		}
		by, err := p.parseStatsBy()
		if err != nil {
			return nil, err
		}
		ps.By = by
	}
	if p.isTrailer() {
		return nil, p.errorHint(p.cur().pos, "for example: stats count() as n", "missing stats function; got %s", p.describe())
	}
	for {
		pos := p.cur().pos
		sf, err := p.parseStatsFunc()
		if err != nil {
			return nil, err
		}
		for _, bf := range ps.By {
			if bf.Name == sf.Result {
				return nil, p.errorf(pos, "the result name %q of %s is also a 'by' field", sf.Result, sf.callString())
			}
		}
		for _, prev := range ps.Funcs {
			if prev.Result == sf.Result {
				return nil, p.errorHint(pos, "name the results with 'as'", "duplicate result name %q in stats", sf.Result)
			}
		}
		ps.Funcs = append(ps.Funcs, sf)
		if p.isTrailer() {
			return ps, nil
		}
		if !p.isPunct(",") {
			return nil, p.errorf(p.cur().pos, "unexpected %s after %s; expecting ',' or '|'", p.describe(), sf.callString())
		}
		p.next()
	}
}

// parseStatsBy parses "(f1, _time:1m offset 1h, num:10)".
func (p *parser) parseStatsBy() ([]ByField, error) {
	if err := p.expectPunct("(", "after 'stats by'"); err != nil {
		return nil, err
	}
	var by []ByField
	for !p.isPunct(")") {
		name, err := p.compound(stopsByField, "field name in 'by (...)'")
		if err != nil {
			return nil, err
		}
		bf := ByField{Name: canonicalField(name)}
		if p.isPunct(":") {
			p.next()
			if err := p.parseBucket(&bf); err != nil {
				return nil, err
			}
		}
		by = append(by, bf)
		if p.isPunct(")") {
			break
		}
		if !p.isPunct(",") {
			return nil, p.errorf(p.cur().pos, "missing ',' or ')' in 'by (...)'; got %s", p.describe())
		}
		p.next()
	}
	p.next()
	return by, nil
}

// parseBucket parses the "1m" or "1d offset 3h" after "field:" in by (...).
func (p *parser) parseBucket(bf *ByField) error {
	pos := p.cur().pos
	s, err := p.compound(stopsGeneric, "bucket size after '"+bf.Name+":'")
	if err != nil {
		return err
	}
	if s == "year" || s == "month" {
		bf.Bucket = s
		return p.parseBucketOffset(bf)
	}
	step, ok := parseBucketSizeLit(s)
	if !ok {
		return p.errorHint(pos, "use a duration such as 1m or 1h, a byte size such as 1KiB, or a positive number",
			"cannot parse bucket size %q for field %q", s, bf.Name)
	}
	bf.Bucket = s
	bf.BucketNum = step
	if bf.Name == "_time" {
		bf.BucketNs = int64(min(math.Round(step), math.MaxInt64))
		if bf.BucketNs < 1 {
			return p.errorf(pos, "bucket size %q for _time must be at least 1ns", s)
		}
	}
	return p.parseBucketOffset(bf)
}

// parseBucketOffset parses the optional "offset D" of a bucket.
func (p *parser) parseBucketOffset(bf *ByField) error {
	if !p.isKw("offset") {
		return nil
	}
	p.next()
	pos := p.cur().pos
	s, err := p.compound(stopsGeneric, "offset")
	if err != nil {
		return err
	}
	off, ok := parseBucketOffsetLit(s)
	if !ok || math.IsNaN(off) || math.Abs(off) >= math.MaxInt64 {
		return p.errorf(pos, "cannot parse bucket offset %q as a number, duration or byte size", s)
	}
	bf.Offset = int64(off) // VictoriaLogs truncates a fractional _time offset
	bf.OffsetNum = off
	bf.OffsetText = s
	return nil
}

// parseBucketSizeLit parses a bucket size: a named unit ("hour"), a
// positive number, a duration (in nanoseconds), a byte size or an IPv4 mask
// ("/24", the number of addresses it spans).
func parseBucketSizeLit(s string) (float64, bool) {
	switch s {
	case "nanosecond":
		return 1, true
	case "microsecond":
		return nsPerMicrosecond, true
	case "millisecond":
		return nsPerMillisecond, true
	case "second":
		return nsPerSecond, true
	case "minute":
		return nsPerMinute, true
	case "hour":
		return nsPerHour, true
	case "day":
		return nsPerDay, true
	case "week":
		return nsPerWeek, true
	}
	if f, ok := parseDecimalLit(s); ok {
		return f, f > 0
	}
	if ns, ok := parseDurationLit(s); ok {
		return float64(ns), ns > 0
	}
	if n, ok := parseBytesLit(s); ok {
		return float64(n), n > 0
	}
	if mask, ok := strings.CutPrefix(s, "/"); ok {
		n, ok := parseUintDigitsLit(mask)
		if ok && n <= 32 {
			return float64(uint64(1) << (32 - n)), true
		}
	}
	return 0, false
}

// parseBucketOffsetLit parses a bucket offset: a number, a duration (in
// nanoseconds) or a byte size.
func parseBucketOffsetLit(s string) (float64, bool) {
	if f, ok := parseDecimalLit(s); ok {
		return f, true
	}
	if ns, ok := parseDurationLit(s); ok {
		return float64(ns), true
	}
	if n, ok := parseBytesLit(s); ok {
		return float64(n), true
	}
	return 0, false
}

// statsProc implements stats: rows are grouped by the by-fields, and each
// function keeps one column of per-group state. Each worker has its own
// statsProc; they are merged at the end.
//
// Groups live in a groupTable: keys in one byte arena, found through an
// open-addressing index, all free of pointers, so millions of groups cost
// the garbage collector nothing to scan. Simple functions (count, sum, avg,
// rate, count_empty, sum_len) keep flat numeric columns; the others keep one
// state object per group.
type statsProc struct {
	p     *plan
	st    *PipeStats
	funcs []statsFuncSpec
	cols  []statsColumn
	tab   groupTable
	key   []byte
	out   Row      // emit's reused row
	vals  []string // emit's reused function results
	next  processor
	// count is added by the count-only fast path, which never builds rows.
	count int64
	mem   *memTracker

	// budget is the memory s's groups may hold before they spill to a
	// temp file (0: never); set only when every column can spill. See
	// pipe_stats_spill.go.
	budget    int64
	nextCheck int
	spill     *spillState
}

// statsFuncSpec is a compiled stats function.
type statsFuncSpec struct {
	f       StatsFunc
	ifm     matcher
	newFunc func() statsState
}

// Key tags of a by-value in a group key.
const (
	keyValue      = 0 // uvarint length, then the value's bytes
	keyTimeBucket = 1 // 8 bytes: bucket start in Unix ns
	keyNumBucket  = 2 // 8 bytes: float64 bits of the bucket start
)

func (p *PipeStats) newProcessor(pl *plan, next processor) (processor, error) {
	return newStatsProc(pl, p, next)
}

// newColumns returns empty columns for s's functions, whose states count
// their memory in mem.
func (s *statsProc) newColumns(mem *memTracker) ([]statsColumn, error) {
	cols := make([]statsColumn, 0, len(s.st.Funcs))
	for _, f := range s.st.Funcs {
		col, err := newStatsColumn(s.p, s.st, f, mem)
		if err != nil {
			return nil, err
		}
		cols = append(cols, col)
	}
	return cols, nil
}

func newStatsProc(p *plan, st *PipeStats, next processor) (processor, error) {
	sp := &statsProc{p: p, st: st, next: next, mem: newMemTracker(p)}
	for _, f := range st.Funcs {
		spec := statsFuncSpec{f: f}
		var err error
		if spec.ifm, err = compileIf(f.If); err != nil {
			return nil, err
		}
		sp.funcs = append(sp.funcs, spec)
	}
	var err error
	if sp.cols, err = sp.newColumns(sp.mem); err != nil {
		return nil, err
	}
	if sp.canSpill() {
		sp.budget = p.opts.GroupMemory
		if sp.budget == 0 {
			sp.budget = DefaultGroupMemory
		}
	}
	return sp, nil
}

// addCount adds n rows with no fields: the count-only fast path.
func (s *statsProc) addCount(n int64) { s.count += n }

// addGroupCount adds n rows like r to r's group, for a stats pipe whose
// functions are all count() (see colFast.hist): as n pushes of r, in one.
func (s *statsProc) addGroupCount(r *Row, n int64) error {
	g := s.group(r)
	for _, c := range s.cols {
		cc, ok := c.(*countColumn)
		if !ok || cc.empty || cc.sumLen || len(cc.fields) > 0 && !(len(cc.fields) == 1 && cc.fields[0] == "*") {
			return fmt.Errorf("BUG: addGroupCount on %T", c)
		}
		cc.n[g] += n
	}
	return s.maybeSpill()
}

func (s *statsProc) push(r *Row) error {
	g := s.group(r)
	for i := range s.funcs {
		if m := s.funcs[i].ifm; m != nil && !m.match(r) {
			continue
		}
		s.cols[i].update(g, r)
	}
	return s.maybeSpill()
}

// group finds or creates r's group and returns its index.
func (s *statsProc) group(r *Row) int {
	k := s.key[:0]
	for _, b := range s.st.By {
		if b.Bucket != "" {
			if v, isTime, ok := s.bucket(r, b); ok {
				tag := byte(keyNumBucket)
				if isTime {
					tag = keyTimeBucket
				}
				k = append(k, tag)
				k = binary.LittleEndian.AppendUint64(k, uint64(v))
				continue
			}
		}
		v := r.Get(b.Name)
		k = append(k, keyValue)
		k = binary.AppendUvarint(k, uint64(len(v)))
		k = append(k, v...)
	}
	s.key = k
	g, added := s.tab.findOrAdd(k)
	if added {
		for _, c := range s.cols {
			c.grow(g + 1)
		}
		if s.budget <= 0 {
			// A spilling table's memory is bounded by its budget instead:
			// counting its groups would push other stats into sketches.
			s.mem.add(int64(len(k)) + 40)
		}
	}
	return g
}

// bucket returns the bucket start of a _time or numeric bucketed by-field,
// as int64 bits (time in ns, numbers as float64 bits), and whether it is
// a time. The offset works as a time zone, as in VictoriaLogs since
// v1.52: v falls in the bucket floor((v+off)/step)*step - off, so
// "_time:1d offset 3h" starts its days at 21:00 UTC (midnight at UTC+3).
// Buckets named "week" start on Monday (VictoriaLogs shifts them by 3 days
// from the Thursday of 1970-01-01); "1w" and "7d" do not; "month" and
// "year" are calendar months and years in UTC. In another field, as in
// VictoriaLogs, an integer or a decimal is bucketed as a number (by 1 for
// month and year) and an RFC 3339 time ('T' or a space; without a zone,
// UTC) as a time. (VictoriaLogs buckets IPv4 addresses and durations
// too; spate leaves them as they are.)
func (s *statsProc) bucket(r *Row, b ByField) (v int64, isTime, ok bool) {
	calendar := b.Bucket == "month" || b.Bucket == "year"
	if b.Name == "_time" {
		t, ok := rowTime(r)
		if !ok {
			return 0, false, false
		}
		return bucketTime(t, b, b.BucketNs), true, true
	}
	step := b.BucketNum
	if step <= 0 && b.BucketNs > 0 {
		step = float64(b.BucketNs)
	}
	if calendar {
		step = 1
	}
	if step <= 0 {
		return 0, false, false
	}
	val := r.Get(b.Name)
	n, i, isInt, ok := parseBucketNumber(val)
	if !ok {
		if len(val) < 19 || val[4] != '-' || val[7] != '-' || !isDigit(val[0]) {
			return 0, false, false
		}
		t, ok := parseTimestampLit(val)
		if !ok {
			return 0, false, false
		}
		return bucketTime(t, b, max(int64(min(step, math.MaxInt64)), 1)), true, true
	}
	if isInt {
		// VictoriaLogs buckets integers in integer arithmetic: a fractional
		// step or offset is truncated, and a step below 1 becomes 1.
		istep := int64(1)
		if step >= 1 {
			istep = int64(min(step, 1<<62))
		}
		return int64(math.Float64bits(float64(floorDiv(i+b.Offset, istep)*istep - b.Offset))), false, true
	}
	f := math.Floor((n+b.OffsetNum)/step)*step - b.OffsetNum
	return int64(math.Float64bits(f)), false, true
}

// bucketTime returns the start of the bucket of b (step ns, or a calendar
// month or year) that holds the time t.
func bucketTime(t int64, b ByField, step int64) int64 {
	switch b.Bucket {
	case "month", "year":
		return truncateCalendar(t+b.Offset, b.Bucket == "year") - b.Offset
	case "week":
		off := b.Offset + 3*nsPerDay
		return floorDiv(t+off, step)*step - off
	}
	return floorDiv(t+b.Offset, step)*step - b.Offset
}

// truncateCalendar returns the start of the UTC month (or year) that holds
// t, in Unix nanoseconds: the buckets "_time:month" and "_time:year" (the
// offset works as a time zone, as for other buckets).
func truncateCalendar(t int64, year bool) int64 {
	u := time.Unix(0, t).UTC()
	m := u.Month()
	if year {
		m = time.January
	}
	return time.Date(u.Year(), m, 1, 0, 0, 0, 0, time.UTC).UnixNano()
}

// parseBucketNumber parses s as a number that a numeric bucket rounds, the
// form VictoriaLogs accepts there: an optional minus, an integer part
// without leading zeros and an optional fraction. A plus sign, an exponent
// ("1.5e2") or a unit leave the value as it is. isInt reports an integer
// that fits in int64, returned as i.
func parseBucketNumber(s string) (f float64, i int64, isInt, ok bool) {
	j := 0
	if j < len(s) && s[j] == '-' {
		j++
	}
	start := j
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == start || (j-start > 1 && s[start] == '0') {
		return 0, 0, false, false
	}
	if j == len(s) {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return float64(n), n, true, true
		}
	} else {
		if s[j] != '.' || j+1 == len(s) {
			return 0, 0, false, false
		}
		for j++; j < len(s); j++ {
			if s[j] < '0' || s[j] > '9' {
				return 0, 0, false, false
			}
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, 0, false, err == nil
}

// validKey reports whether key encodes n by-values, as group makes them
// (for keys from elsewhere: a node's partial state).
func validKey(key []byte, n int) bool {
	for ; n > 0 && len(key) > 0; n-- {
		tag := key[0]
		key = key[1:]
		switch tag {
		case keyTimeBucket, keyNumBucket:
			if len(key) < 8 {
				return false
			}
			key = key[8:]
		case keyValue:
			l, w := binary.Uvarint(key)
			if w <= 0 || l > uint64(len(key)-w) {
				return false
			}
			key = key[w+int(l):]
		default:
			return false
		}
	}
	return n == 0 && len(key) == 0
}

// decodeKey appends the by-values encoded in key to dst.
func decodeKey(dst []string, key []byte) []string {
	for len(key) > 0 {
		tag := key[0]
		key = key[1:]
		switch tag {
		case keyTimeBucket:
			dst = append(dst, timeparse.FormatRFC3339(int64(binary.LittleEndian.Uint64(key))))
			key = key[8:]
		case keyNumBucket:
			dst = append(dst, formatNumber(math.Float64frombits(binary.LittleEndian.Uint64(key))))
			key = key[8:]
		default:
			n, w := binary.Uvarint(key)
			dst = append(dst, string(key[w:w+int(n)]))
			key = key[w+int(n):]
		}
	}
	return dst
}

// maxSortedGroups is the most stats rows that are sorted by their by-values
// before output, so that small results come out in a stable order. Larger
// results come in table order, like VictoriaLogs' (add | sort to order
// them); sorting millions of rows nobody asked to sort took seconds.
var maxSortedGroups = defaultMaxSortedGroups // a variable for tests

const defaultMaxSortedGroups = 100_000

// decodeKeyAlias is decodeKey with value strings that alias key.
func decodeKeyAlias(dst []string, key []byte) []string {
	for len(key) > 0 {
		tag := key[0]
		key = key[1:]
		switch tag {
		case keyTimeBucket, keyNumBucket:
			dst = decodeKey(dst, append([]byte{tag}, key[:8]...))
			key = key[8:]
		default:
			n, w := binary.Uvarint(key)
			dst = append(dst, unsafeString(key[w:w+int(n)]))
			key = key[w+int(n):]
		}
	}
	return dst
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func (s *statsProc) merge(o processor) error {
	os := o.(*statsProc)
	s.count += os.count
	if os.spill != nil {
		// The other worker spilled: its remaining groups follow its runs.
		if err := os.spillTable(); err != nil {
			return err
		}
		if s.spill == nil {
			s.spill = s.newSpillState()
		}
		s.spill.adopt(os.spill)
	}
	for og := 0; og < os.tab.len(); og++ {
		g, added := s.tab.findOrAdd(os.tab.key(og))
		if added {
			for _, c := range s.cols {
				c.grow(g + 1)
			}
		}
		for i, c := range s.cols {
			c.merge(g, os.cols[i], og)
		}
		if err := s.maybeSpill(); err != nil {
			return err
		}
	}
	os.tab = groupTable{}
	os.cols = nil
	return nil
}

func (s *statsProc) approximations() []string { return s.mem.approximations() }

func (s *statsProc) flush() error {
	s.foldCount()
	if s.spill != nil {
		return s.flushSpilled()
	}
	return s.flushTable()
}

// foldCount puts the rows of the count-only fast path into their group,
// and makes the one group of a stats pipe without by-fields (it always
// has exactly one result row).
func (s *statsProc) foldCount() {
	if s.count > 0 || (len(s.st.By) == 0 && s.tab.len() == 0) {
		var r Row
		g := s.group(&r)
		for _, c := range s.cols {
			c.addRows(g, s.count)
		}
		s.count = 0
	}
}

// emit sends group g, whose by-values are by, down the pipeline.
func (s *statsProc) emit(g int, by []string) error {
	vals := s.vals[:0]
	for _, c := range s.cols {
		vals = append(vals, c.result(g))
	}
	s.vals = vals
	return s.emitValues(by, vals)
}

// emitValues sends a group whose by-values are by and whose function
// results are vals down the pipeline.
func (s *statsProc) emitValues(by, vals []string) error {
	out := &s.out
	out.Reset()
	for i, b := range s.st.By {
		out.Set(b.Name, by[i])
	}
	for i, f := range s.funcs {
		out.Set(f.f.Result, vals[i])
	}
	return s.next.push(out)
}

// topKSkipped counts the groups emitTable skipped because the sort after
// it would drop them (statsProc.topK), for tests.
var topKSkipped atomic.Int64

// topKEnabled turns topK off in tests that compare with and without it.
var topKEnabled = true

// numericColumn is a stats column whose result is formatNumber of a
// number it can give without formatting it.
type numericColumn interface {
	number(g int) (float64, bool)
}

// topK returns the sort that follows s directly, with a limit and a first
// sort field that is a numeric function result of s, and that result's column:
// emitting can then skip the groups the sort would drop
// (sortProc.rejectsNumber) without making their rows. "stats by (path)
// sum(bytes) s | sort by (s desc) | limit 10" over a million paths makes
// about a thousand rows (those before the sort's first cut, and the few
// that beat its worst later) instead of a million. Otherwise it returns nil.
func (s *statsProc) topK() (*sortProc, numericColumn) {
	sp, i := s.topKIndex()
	if sp == nil {
		return nil, nil
	}
	return sp, s.cols[i].(numericColumn)
}

// topKIndex is topK with the index of the result's column in s.cols.
func (s *statsProc) topKIndex() (*sortProc, int) {
	if !topKEnabled {
		return nil, 0
	}
	sp, ok := s.next.(*sortProc)
	if !ok || sp.limit <= 0 || len(sp.by) == 0 {
		return nil, 0
	}
	name := sp.by[0].Name
	for _, b := range s.st.By {
		if b.Name == name {
			return nil, 0
		}
	}
	col := -1
	for i, f := range s.funcs {
		if f.f.Result == name {
			if _, ok := s.cols[i].(numericColumn); !ok || col >= 0 {
				return nil, 0 // not a number, or a name two results share
			}
			col = i
		}
	}
	if col < 0 {
		return nil, 0
	}
	return sp, col
}

// flushTable emits the groups of s's table (emitTable) and flushes the
// pipes after it.
func (s *statsProc) flushTable() error {
	if err := s.emitTable(true); err != nil {
		return err
	}
	return s.next.flush()
}

// emitTable emits the groups of s's table: sorted by their by-values when
// ordered and there are few, else in table order. A pipe after it that
// stops the query (errStop) ends the emitting without an error.
func (s *statsProc) emitTable(ordered bool) error {
	sorter, col := s.topK()
	skipped := 0
	defer func() { topKSkipped.Add(int64(skipped)) }()
	// rejected reports a group whose row the sort after s would drop.
	rejected := func(g int) bool {
		if sorter == nil {
			return false
		}
		v, ok := col.number(g)
		if ok && sorter.rejectsNumber(v) {
			skipped++
			return true
		}
		return false
	}
	if !ordered || s.tab.len() > maxSortedGroups {
		// Many groups: emit in table order, decoding each key into a reused
		// slice (its strings alias the table, which no longer changes).
		var by []string
		for g := 0; g < s.tab.len(); g++ {
			if rejected(g) {
				continue
			}
			by = decodeKeyAlias(by[:0], s.tab.key(g))
			if err := s.emit(g, by); err != nil {
				if err == errStop {
					break
				}
				return err
			}
		}
		return nil
	}
	type outGroup struct {
		g  int
		by []string
	}
	groups := make([]outGroup, s.tab.len())
	for g := range groups {
		groups[g] = outGroup{g: g, by: decodeKey(nil, s.tab.key(g))}
	}
	slices.SortFunc(groups, func(a, b outGroup) int { return compareBy(a.by, b.by) })
	for _, g := range groups {
		if rejected(g.g) {
			continue
		}
		if err := s.emit(g.g, g.by); err != nil {
			if err == errStop {
				break
			}
			return err
		}
	}
	return nil
}

// compareBy orders two groups' by-values (of the same stats pipe) field by
// field, in natural order.
func compareBy(a, b []string) int {
	for i := range a {
		if c := compareNatural(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// groupTable maps group keys to dense indexes 0, 1, 2, ... It holds no
// pointers: keys are copied into one arena, and an open-addressing index
// (load factor at most 1/2) points at them. Each slot holds the group's index
// and the top 32 bits of its key's hash, so a probe that meets another key
// usually rejects it without touching the key: with millions of groups every
// touch is a cache miss.
type groupTable struct {
	keys   []byte
	off    []uint64 // start of key g in keys; key g ends at off[g+1] or len(keys)
	slots  []uint64 // hash<<32 | (group index + 1); 0 is empty
	seed   maphash.Seed
	seeded bool
}

func (t *groupTable) len() int { return len(t.off) }

// key returns group g's key; it aliases the table until the next add.
func (t *groupTable) key(g int) []byte {
	end := uint64(len(t.keys))
	if g+1 < len(t.off) {
		end = t.off[g+1]
	}
	return t.keys[t.off[g]:end]
}

// findOrAdd returns k's group, adding it if new (added is then true).
func (t *groupTable) findOrAdd(k []byte) (g int, added bool) {
	return t.findOrAddHash(k, t.hashKey(k))
}

// hashKey returns k's hash in t, for findOrAddHash.
func (t *groupTable) hashKey(k []byte) uint64 {
	if !t.seeded {
		t.seed = groupSeed
		t.seeded = true
	}
	return maphash.Bytes(t.seed, k)
}

// find returns k's group, if k is in t.
func (t *groupTable) find(k []byte) (g int, ok bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	g, _, ok = t.probe(k, t.hashKey(k))
	return g, ok
}

// probe looks for k, whose hashKey is h, in t's non-empty index: its group
// when there (ok), else the empty slot where it would go.
func (t *groupTable) probe(k []byte, h uint64) (g int, slot uint64, ok bool) {
	tag := h &^ 0xffffffff
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := t.slots[i]
		if sl == 0 {
			return 0, i, false
		}
		if sl&^0xffffffff == tag {
			if g := int(uint32(sl) - 1); string(t.key(g)) == string(k) {
				return g, i, true
			}
		}
	}
}

// findOrAddHash is findOrAdd of k, whose hashKey is h.
func (t *groupTable) findOrAddHash(k []byte, h uint64) (g int, added bool) {
	if len(t.slots) == 0 {
		// Small: count_uniq keeps a table per group, often of a few keys.
		t.slots = make([]uint64, 8)
	}
	g, i, ok := t.probe(k, h)
	if ok {
		return g, false
	}
	g = len(t.off)
	t.off = append(growDouble(t.off, 1), uint64(len(t.keys)))
	t.keys = append(growDouble(t.keys, len(k)), k...)
	if 2*(g+1) > len(t.slots) {
		t.rehash(2 * len(t.slots))
	} else {
		t.slots[i] = h&^0xffffffff | uint64(g+1)
	}
	return g, true
}

// growDouble returns s with room for n more elements, at least doubling
// its capacity when it must grow. append grows large slices by 1.25x, and
// a table of millions of groups then spends more time copying its arrays
// than finding groups; doubling copies each element about once.
func growDouble[S ~[]E, E any](s S, n int) S {
	if len(s)+n <= cap(s) {
		return s
	}
	return slices.Grow(s, max(n, cap(s)))
}

// growZero returns s extended to length n (when shorter) with zeros, its
// capacity grown as growDouble grows it. Past len(s) the capacity may hold
// old values (after a reset), which it clears.
func growZero[S ~[]E, E any](s S, n int) S {
	old := len(s)
	if n <= old {
		return s
	}
	s = growDouble(s, n-old)[:n]
	clear(s[old:])
	return s
}

// rehash rebuilds the index with n slots, rehashing every key.
func (t *groupTable) rehash(n int) {
	t.slots = make([]uint64, n)
	mask := uint64(n - 1)
	for g := range t.off {
		h := maphash.Bytes(t.seed, t.key(g))
		i := h & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = h&^0xffffffff | uint64(g+1)
	}
}

// groupSeed seeds the hash of every table's slots (random per process: a
// key's partition, which nodes agree on, is partOf's).
var groupSeed = maphash.MakeSeed()
