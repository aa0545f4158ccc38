package query

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
)

// statsProc implements stats: rows are grouped by the by-fields, and each
// group keeps one state per function. Each worker has its own statsProc; they
// are merged at the end. Group keys are built in a reused buffer and looked up
// without allocating; only a new group allocates.
type statsProc struct {
	p      *plan
	st     *PipeStats
	funcs  []statsFuncSpec
	groups map[string]*statsGroup
	order  []*statsGroup // groups in creation order
	key    []byte
	next   processor
	// count is added by the count-only fast path, which never builds rows.
	count int64
	mem   *memTracker
}

// statsFuncSpec is a compiled stats function; it makes a fresh state per
// group.
type statsFuncSpec struct {
	f       StatsFunc
	ifm     matcher
	newFunc func() statsState
}

// statsGroup is one group's by-values and function states.
type statsGroup struct {
	key    string
	by     []string
	states []statsState
	pos    rowPos
}

// statsState is one function's running state in one group.
type statsState interface {
	update(r *Row)
	merge(o statsState)
	result() string
}

func newStatsProc(p *plan, st *PipeStats, next processor) (processor, error) {
	sp := &statsProc{p: p, st: st, groups: map[string]*statsGroup{}, next: next, mem: newMemTracker(p)}
	for _, f := range st.Funcs {
		spec := statsFuncSpec{f: f}
		var err error
		if spec.ifm, err = compileIf(f.If); err != nil {
			return nil, err
		}
		if spec.newFunc, err = newStatsFunc(p, f, sp.mem); err != nil {
			return nil, err
		}
		sp.funcs = append(sp.funcs, spec)
	}
	return sp, nil
}

// addCount adds n rows with no fields: the count-only fast path.
func (s *statsProc) addCount(n int64) { s.count += n }

func (s *statsProc) push(r *Row) error {
	g := s.group(r)
	for i := range s.funcs {
		if m := s.funcs[i].ifm; m != nil && !m.match(r) {
			continue
		}
		g.states[i].update(r)
	}
	return nil
}

// group finds or creates r's group.
func (s *statsProc) group(r *Row) *statsGroup {
	k := s.key[:0]
	for _, b := range s.st.By {
		if b.Bucket != "" {
			v, ok := s.bucket(r, b)
			if ok {
				k = append(k, 1)
				k = binary.LittleEndian.AppendUint64(k, uint64(v))
				continue
			}
		}
		v := r.Get(b.Name)
		k = binary.AppendUvarint(k, uint64(len(v)))
		k = append(k, v...)
	}
	s.key = k
	if g, ok := s.groups[string(k)]; ok {
		return g
	}
	g := &statsGroup{key: string(k), pos: r.pos}
	for _, b := range s.st.By {
		g.by = append(g.by, s.byValue(r, b))
	}
	for i := range s.funcs {
		g.states = append(g.states, s.funcs[i].newFunc())
	}
	s.groups[g.key] = g
	s.order = append(s.order, g)
	s.mem.add(int64(len(g.key)) + 64)
	return g
}

// bucket returns the bucket start of a _time or numeric bucketed by-field,
// as int64 bits (time in ns, numbers as float64 bits).
func (s *statsProc) bucket(r *Row, b ByField) (int64, bool) {
	if b.Name == "_time" && b.BucketNs > 0 {
		t, ok := rowTime(r)
		if !ok {
			return 0, false
		}
		return floorDiv(t-b.Offset, b.BucketNs)*b.BucketNs + b.Offset, true
	}
	if b.BucketNum > 0 {
		n, ok := parseNumber(r.Get(b.Name))
		if !ok {
			return 0, false
		}
		v := math.Floor(n/b.BucketNum) * b.BucketNum
		return int64(math.Float64bits(v)), true
	}
	if b.BucketNs > 0 {
		n, ok := parseNumber(r.Get(b.Name))
		if !ok {
			return 0, false
		}
		v := math.Floor(n/float64(b.BucketNs)) * float64(b.BucketNs)
		return int64(math.Float64bits(v)), true
	}
	return 0, false
}

func (s *statsProc) byValue(r *Row, b ByField) string {
	if b.Bucket != "" {
		if v, ok := s.bucket(r, b); ok {
			if b.Name == "_time" && b.BucketNs > 0 {
				return formatTime(v)
			}
			return formatNumber(math.Float64frombits(uint64(v)))
		}
	}
	return strings.Clone(r.Get(b.Name))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func (s *statsProc) merge(o processor) {
	os := o.(*statsProc)
	s.count += os.count
	for _, og := range os.order {
		g, ok := s.groups[og.key]
		if !ok {
			s.groups[og.key] = og
			s.order = append(s.order, og)
			continue
		}
		if og.pos.less(g.pos) {
			g.pos = og.pos
		}
		for i := range g.states {
			g.states[i].merge(og.states[i])
		}
	}
}

func (s *statsProc) approximations() []string { return s.mem.approximations() }

func (s *statsProc) flush() error {
	if s.count > 0 || (len(s.st.By) == 0 && len(s.groups) == 0) {
		// Without by-fields there is always exactly one result row.
		var r Row
		g := s.group(&r)
		for i := range g.states {
			if c, ok := g.states[i].(*countState); ok {
				c.n += s.count
			}
		}
		s.count = 0
	}
	groups := s.order
	slices.SortStableFunc(groups, func(a, b *statsGroup) int {
		for i := range a.by {
			if c := compareNatural(a.by[i], b.by[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	var out Row
	for _, g := range groups {
		out.Reset()
		for i, b := range s.st.By {
			out.Set(b.Name, g.by[i])
		}
		for i, f := range s.funcs {
			out.Set(f.f.Result, g.states[i].result())
		}
		out.pos = g.pos
		if err := s.next.push(&out); err != nil {
			if err == errStop {
				break
			}
			return err
		}
	}
	return s.next.flush()
}

// newStatsFunc returns a constructor of f's per-group state.
func newStatsFunc(p *plan, f StatsFunc, mem *memTracker) (func() statsState, error) {
	fields := f.Fields
	if len(fields) == 1 && fields[0] == "*" {
		fields = nil
	}
	switch f.Name {
	case "count":
		return func() statsState { return &countState{fields: fields} }, nil
	case "count_empty":
		return func() statsState { return &countEmptyState{fields: fields} }, nil
	case "count_uniq":
		return func() statsState { return newUniqState(fields, f.Limit, mem) }, nil
	case "sum":
		return func() statsState { return &sumState{fields: fields, sum: math.NaN()} }, nil
	case "avg":
		return func() statsState { return &avgState{fields: fields} }, nil
	case "min":
		return func() statsState { return &minMaxState{fields: fields, min: true} }, nil
	case "max":
		return func() statsState { return &minMaxState{fields: fields} }, nil
	case "median":
		return func() statsState { return newQuantileState(fields, 0.5, mem) }, nil
	case "quantile":
		return func() statsState { return newQuantileState(fields, f.Phi, mem) }, nil
	case "values":
		return func() statsState { return &valuesState{fields: fields, limit: f.Limit, mem: mem} }, nil
	case "uniq_values":
		return func() statsState {
			return &uniqValuesState{fields: fields, limit: f.Limit, set: map[string]struct{}{}, mem: mem}
		}, nil
	case "row_min", "row_max":
		if len(f.Fields) == 0 {
			return nil, fmt.Errorf("%s needs a field to compare", f.Name)
		}
		return func() statsState {
			return &rowMinMaxState{field: f.Fields[0], fields: f.Fields[1:], min: f.Name == "row_min"}
		}, nil
	case "rate":
		secs := float64(p.timeMax-p.timeMin+1) / 1e9
		if p.timeMax == math.MaxInt64 || p.timeMin == math.MinInt64 || secs <= 0 {
			return nil, fmt.Errorf("cannot compute %s: the query's _time filter must have both bounds", f.Result)
		}
		return func() statsState { return &rateState{secs: secs} }, nil
	case "sum_len":
		return func() statsState { return &sumLenState{fields: fields} }, nil
	}
	return nil, fmt.Errorf("stats function %q is not supported by spate", f.Name)
}

// eachValue calls fn with the values of fields in r, or of every field when
// fields is empty.
func eachValue(r *Row, fields []string, fn func(v string)) {
	if len(fields) == 0 {
		for _, f := range r.Fields {
			fn(f.Value)
		}
		return
	}
	for _, f := range fields {
		fn(r.Get(f))
	}
}

type countState struct {
	fields []string
	n      int64
}

func (s *countState) update(r *Row) {
	if len(s.fields) == 0 {
		s.n++
		return
	}
	for _, f := range s.fields {
		if r.Get(f) != "" {
			s.n++
			return
		}
	}
}
func (s *countState) merge(o statsState) { s.n += o.(*countState).n }
func (s *countState) result() string     { return formatNumber(float64(s.n)) }

type countEmptyState struct {
	fields []string
	n      int64
}

func (s *countEmptyState) update(r *Row) {
	for _, f := range s.fields {
		if r.Get(f) != "" {
			return
		}
	}
	s.n++
}
func (s *countEmptyState) merge(o statsState) { s.n += o.(*countEmptyState).n }
func (s *countEmptyState) result() string     { return formatNumber(float64(s.n)) }

type sumState struct {
	fields []string
	sum    float64 // NaN until a number is seen
}

func (s *sumState) update(r *Row) {
	if len(s.fields) == 1 {
		// Fast path: one field, no closure.
		if n, ok := parseNumber(r.Get(s.fields[0])); ok {
			s.add(n)
		}
		return
	}
	eachValue(r, s.fields, func(v string) {
		if n, ok := parseNumber(v); ok {
			s.add(n)
		}
	})
}
func (s *sumState) add(n float64) {
	if math.IsNaN(s.sum) {
		s.sum = 0
	}
	s.sum += n
}
func (s *sumState) merge(o statsState) {
	if os := o.(*sumState); !math.IsNaN(os.sum) {
		s.add(os.sum)
	}
}
func (s *sumState) result() string { return formatNumber(s.sum) }

type avgState struct {
	fields []string
	sum    float64
	n      int64
}

func (s *avgState) update(r *Row) {
	if len(s.fields) == 1 {
		if n, ok := parseNumber(r.Get(s.fields[0])); ok {
			s.sum += n
			s.n++
		}
		return
	}
	eachValue(r, s.fields, func(v string) {
		if n, ok := parseNumber(v); ok {
			s.sum += n
			s.n++
		}
	})
}
func (s *avgState) merge(o statsState) {
	os := o.(*avgState)
	s.sum += os.sum
	s.n += os.n
}
func (s *avgState) result() string {
	if s.n == 0 {
		return "NaN"
	}
	return formatNumber(s.sum / float64(s.n))
}

// minMaxState keeps the smallest or largest value: numerically when both
// parse as numbers, otherwise as strings. Empty values take part in min.
type minMaxState struct {
	fields []string
	min    bool
	has    bool
	val    string
}

func (s *minMaxState) update(r *Row) {
	if len(s.fields) == 1 {
		s.add(r.Get(s.fields[0]))
		return
	}
	eachValue(r, s.fields, s.add)
}

func (s *minMaxState) add(v string) {
	if !s.min && v == "" {
		return
	}
	if !s.has {
		s.has, s.val = true, strings.Clone(v)
		return
	}
	if s.min && lessValue(v, s.val) || !s.min && lessValue(s.val, v) {
		s.val = strings.Clone(v)
	}
}

func (s *minMaxState) merge(o statsState) {
	if os := o.(*minMaxState); os.has {
		s.add(os.val)
	}
}
func (s *minMaxState) result() string { return s.val }

type rateState struct {
	secs float64
	n    int64
}

func (s *rateState) update(*Row)        { s.n++ }
func (s *rateState) merge(o statsState) { s.n += o.(*rateState).n }
func (s *rateState) result() string     { return formatNumber(float64(s.n) / s.secs) }

type sumLenState struct {
	fields []string
	n      int64
}

func (s *sumLenState) update(r *Row) {
	eachValue(r, s.fields, func(v string) { s.n += int64(len(v)) })
}
func (s *sumLenState) merge(o statsState) { s.n += o.(*sumLenState).n }
func (s *sumLenState) result() string     { return formatNumber(float64(s.n)) }

// valuesState keeps every value in file order.
type valuesState struct {
	fields []string
	limit  int64
	vals   []posValue
	mem    *memTracker
}

type posValue struct {
	pos rowPos
	v   string
}

func (s *valuesState) update(r *Row) {
	eachValue(r, s.fields, func(v string) {
		if v == "" || (s.limit > 0 && int64(len(s.vals)) >= s.limit) {
			return
		}
		s.vals = append(s.vals, posValue{r.pos, strings.Clone(v)})
		s.mem.add(int64(len(v)) + 40)
	})
}
func (s *valuesState) merge(o statsState) { s.vals = append(s.vals, o.(*valuesState).vals...) }
func (s *valuesState) result() string {
	slices.SortStableFunc(s.vals, func(a, b posValue) int {
		if a.pos.less(b.pos) {
			return -1
		}
		if b.pos.less(a.pos) {
			return 1
		}
		return 0
	})
	vals := s.vals
	if s.limit > 0 && int64(len(vals)) > s.limit {
		vals = vals[:s.limit]
	}
	b := []byte{'['}
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, v.v)
	}
	return string(append(b, ']'))
}

// uniqValuesState keeps the distinct non-empty values, printed sorted.
type uniqValuesState struct {
	fields []string
	limit  int64
	set    map[string]struct{}
	mem    *memTracker
}

func (s *uniqValuesState) update(r *Row) {
	eachValue(r, s.fields, func(v string) {
		if v == "" {
			return
		}
		if _, ok := s.set[v]; ok {
			return
		}
		if s.limit > 0 && int64(len(s.set)) >= s.limit {
			return
		}
		s.set[strings.Clone(v)] = struct{}{}
		s.mem.add(int64(len(v)) + 48)
	})
}
func (s *uniqValuesState) merge(o statsState) {
	for v := range o.(*uniqValuesState).set {
		if s.limit > 0 && int64(len(s.set)) >= s.limit {
			break
		}
		s.set[v] = struct{}{}
	}
}
func (s *uniqValuesState) result() string {
	vals := make([]string, 0, len(s.set))
	for v := range s.set {
		vals = append(vals, v)
	}
	slices.SortFunc(vals, compareNatural)
	b := []byte{'['}
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, v)
	}
	return string(append(b, ']'))
}

// rowMinMaxState keeps the fields of the row with the smallest or largest
// value of field (empty values are skipped).
type rowMinMaxState struct {
	field  string
	fields []string
	min    bool
	has    bool
	val    string
	pos    rowPos
	row    []Field
}

func (s *rowMinMaxState) update(r *Row) {
	v := r.Get(s.field)
	if v == "" {
		return
	}
	if s.has && !s.better(v, r.pos) {
		return
	}
	s.has, s.val, s.pos = true, strings.Clone(v), r.pos
	s.row = s.row[:0]
	if len(s.fields) == 0 {
		for _, f := range r.Fields {
			s.row = append(s.row, Field{strings.Clone(f.Name), strings.Clone(f.Value)})
		}
		return
	}
	for _, f := range s.fields {
		s.row = append(s.row, Field{f, strings.Clone(r.Get(f))})
	}
}

// better reports whether v at pos beats the kept value (ties: earlier row).
func (s *rowMinMaxState) better(v string, pos rowPos) bool {
	if v == s.val {
		return pos.less(s.pos)
	}
	if s.min {
		return lessValue(v, s.val)
	}
	return lessValue(s.val, v)
}

func (s *rowMinMaxState) merge(o statsState) {
	os := o.(*rowMinMaxState)
	if os.has && (!s.has || s.better(os.val, os.pos)) {
		s.has, s.val, s.pos, s.row = true, os.val, os.pos, os.row
	}
}

func (s *rowMinMaxState) result() string {
	if !s.has {
		return ""
	}
	b := []byte{'{'}
	n := 0
	for _, f := range s.row {
		if f.Value == "" {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendJSONString(b, f.Name)
		b = append(b, ':')
		b = appendJSONString(b, f.Value)
	}
	return string(append(b, '}'))
}
