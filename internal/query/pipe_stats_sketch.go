package query

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/axiomhq/hyperloglog"
)

// sketchAccuracy is the relative accuracy of quantile sketches (DDSketch:
// every returned quantile is within 1% of a value of the right rank).
const sketchAccuracy = 0.01

// memTracker counts the bytes held by exact stats state across all workers
// of a run and says when to switch to sketches: from the start with
// Options.Approx, or once Options.MaxMemory is exceeded.
type memTracker struct {
	shared *memShared
	local  int64 // bytes not yet added to shared (one tracker per worker)
}

// memFlush is how many bytes a tracker gathers before adding them to the
// shared count: an atomic add per new group made two workers fight over one
// cache line.
const memFlush = 1 << 20

// memShared is the run-wide part of memTracker.
type memShared struct {
	limit  int64
	used   atomic.Int64
	approx atomic.Bool
	mu     sync.Mutex
	why    map[string]struct{}
}

func newMemTracker(p *plan) *memTracker {
	if p.mem == nil {
		p.mem = &memShared{limit: p.opts.MaxMemory, why: map[string]struct{}{}}
		if p.opts.Approx {
			p.mem.approx.Store(true)
		}
	}
	return &memTracker{shared: p.mem}
}

// add records n more bytes of exact state.
func (m *memTracker) add(n int64) {
	m.local += n
	s := m.shared
	if m.local < memFlush && (s.limit == 0 || 8*m.local < s.limit) {
		return
	}
	if u := s.used.Add(m.local); s.limit > 0 && u > s.limit && !s.approx.Load() {
		s.approx.Store(true)
	}
	m.local = 0
}

// sketch reports whether exact states should now turn into sketches.
func (m *memTracker) sketch() bool { return m.shared.approx.Load() }

// note records that a result is approximate.
func (m *memTracker) note(what string) {
	s := m.shared
	s.mu.Lock()
	s.why[what] = struct{}{}
	s.mu.Unlock()
}

func (m *memTracker) approximations() []string {
	s := m.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	reason := "--approx"
	if s.limit > 0 && s.used.Load() > s.limit {
		reason = fmt.Sprintf("exact state passed --max-memory=%d bytes", s.limit)
	}
	for w := range s.why {
		out = append(out, w+": "+reason)
	}
	slices.Sort(out)
	return out
}

// uniqState implements count_uniq: an exact set of value tuples until the
// memory tracker asks for a HyperLogLog sketch.
type uniqState struct {
	fields []string
	limit  int64
	set    map[string]struct{}
	hll    *hyperloglog.Sketch
	mem    *memTracker
	key    []byte
}

func newUniqState(fields []string, limit int64, mem *memTracker) *uniqState {
	return &uniqState{fields: fields, limit: limit, set: map[string]struct{}{}, mem: mem}
}

func (s *uniqState) update(r *Row) {
	k := s.key[:0]
	empty := true
	if len(s.fields) == 0 {
		for _, f := range r.Fields {
			k = binary.AppendUvarint(k, uint64(len(f.Value)))
			k = append(k, f.Value...)
			empty = empty && f.Value == ""
		}
	} else {
		for _, f := range s.fields {
			v := r.Get(f)
			k = binary.AppendUvarint(k, uint64(len(v)))
			k = append(k, v...)
			empty = empty && v == ""
		}
	}
	s.key = k
	if empty {
		return
	}
	if s.hll != nil {
		s.hll.Insert(k)
		return
	}
	if _, ok := s.set[string(k)]; ok {
		return
	}
	if s.limit > 0 && int64(len(s.set)) >= s.limit {
		return
	}
	s.set[string(k)] = struct{}{}
	s.mem.add(int64(len(k)) + 48)
	if s.mem.sketch() {
		s.toSketch()
	}
}

func (s *uniqState) toSketch() {
	if s.hll != nil {
		return
	}
	s.hll = hyperloglog.New16()
	for k := range s.set {
		s.hll.Insert([]byte(k))
	}
	s.set = nil
	s.mem.note("count_uniq")
}

func (s *uniqState) merge(o statsState) {
	os := o.(*uniqState)
	if s.hll != nil || os.hll != nil {
		s.toSketch()
		os.toSketch()
		_ = s.hll.Merge(os.hll) // both are New16 sketches: Merge cannot fail
		return
	}
	for k := range os.set {
		if s.limit > 0 && int64(len(s.set)) >= s.limit {
			break
		}
		s.set[k] = struct{}{}
	}
}

func (s *uniqState) result() string {
	if s.hll != nil {
		n := s.hll.Estimate()
		if s.limit > 0 && int64(n) > s.limit {
			n = uint64(s.limit)
		}
		return formatNumber(float64(n))
	}
	return formatNumber(float64(len(s.set)))
}

// quantileState implements quantile and median the way VictoriaLogs defines
// them: the value at index int(phi*n) of all values sorted, where empty
// values count and sort lowest, numbers sort by value, and other text sorts
// after the numbers. It is exact (every value kept) until the memory tracker
// asks for a DDSketch of the numbers.
type quantileState struct {
	fields []string
	phi    float64
	empty  int64
	nums   []float64
	strs   []string
	// texts holds the text of numbers written otherwise than formatNumber
	// writes them ("3.0", "1139.940", "1e3"), the first seen for each
	// value: the answer is a value as the logs have it, as in
	// VictoriaLogs, which keeps the texts.
	texts  map[float64]string
	sk     *ddsketch.DDSketch
	nSk    int64  // numbers in the sketch
	nStr   int64  // texts counted once sketched
	maxStr string // the largest text, kept once sketched
	mem    *memTracker
}

func newQuantileState(fields []string, phi float64, mem *memTracker) *quantileState {
	return &quantileState{fields: fields, phi: phi, mem: mem}
}

func (s *quantileState) update(r *Row) {
	if len(s.fields) == 1 {
		s.add(r.Get(s.fields[0]))
		return
	}
	eachValue(r, s.fields, s.add)
}

func (s *quantileState) add(v string) {
	if v == "" {
		s.empty++
		return
	}
	n, isNum := parseNumber(v)
	if s.sk != nil {
		if isNum {
			_ = s.sk.Add(n) // only NaN fails, and parseNumber never returns NaN
			s.nSk++
		} else {
			s.nStr++
			if s.maxStr == "" || lessNatural(s.maxStr, v) {
				s.maxStr = strings.Clone(v)
			}
		}
		return
	}
	if isNum {
		s.nums = append(s.nums, n)
		s.mem.add(8)
		if !plainNumberText(v) {
			if _, ok := s.texts[n]; !ok && differsFromFormat(v, n) {
				if s.texts == nil {
					s.texts = map[float64]string{}
				}
				s.texts[n] = strings.Clone(v)
				s.mem.add(int64(len(v)) + 48)
			}
		}
	} else {
		s.strs = append(s.strs, strings.Clone(v))
		s.mem.add(int64(len(v)) + 16)
	}
	if s.mem.sketch() {
		s.toSketch()
	}
}

func (s *quantileState) toSketch() {
	if s.sk != nil {
		return
	}
	sk, err := ddsketch.NewDefaultDDSketch(sketchAccuracy)
	if err != nil {
		panic(fmt.Sprintf("BUG: cannot make a DDSketch: %v", err))
	}
	s.sk = sk
	for _, n := range s.nums {
		_ = s.sk.Add(n)
	}
	s.nSk = int64(len(s.nums))
	s.nums, s.texts = nil, nil
	for _, v := range s.strs {
		s.nStr++
		if s.maxStr == "" || lessNatural(s.maxStr, v) {
			s.maxStr = v
		}
	}
	s.strs = nil
	s.mem.note("quantile/median")
}

func (s *quantileState) merge(o statsState) {
	os := o.(*quantileState)
	s.empty += os.empty
	if s.sk != nil || os.sk != nil {
		s.toSketch()
		os.toSketch()
		_ = s.sk.MergeWith(os.sk) // same accuracy: cannot fail
		s.nSk += os.nSk
		s.nStr += os.nStr
		if s.maxStr == "" || lessNatural(s.maxStr, os.maxStr) {
			s.maxStr = os.maxStr
		}
		return
	}
	s.nums = append(s.nums, os.nums...)
	s.strs = append(s.strs, os.strs...)
	for n, t := range os.texts {
		if _, ok := s.texts[n]; !ok {
			if s.texts == nil {
				s.texts = map[float64]string{}
			}
			s.texts[n] = t
		}
	}
}

func (s *quantileState) result() string {
	if s.sk != nil {
		total := s.empty + s.nSk + s.nStr
		if total == 0 {
			return ""
		}
		idx := s.index(total)
		switch {
		case idx < s.empty:
			return ""
		case idx < s.empty+s.nSk:
			q := float64(idx-s.empty) / float64(max(s.nSk-1, 1))
			v, err := s.sk.GetValueAtQuantile(min(q, 1))
			if err != nil {
				return ""
			}
			return formatNumber(v)
		}
		return s.maxStr
	}
	total := s.empty + int64(len(s.nums)) + int64(len(s.strs))
	if total == 0 {
		return ""
	}
	idx := s.index(total)
	if idx < s.empty {
		return ""
	}
	idx -= s.empty
	if idx < int64(len(s.nums)) {
		slices.Sort(s.nums)
		if t, ok := s.texts[s.nums[idx]]; ok {
			return t
		}
		return formatNumber(s.nums[idx])
	}
	idx -= int64(len(s.nums))
	slices.SortFunc(s.strs, compareNatural)
	return s.strs[idx]
}

func (s *quantileState) index(total int64) int64 {
	phi := s.phi
	if math.IsNaN(phi) || phi < 0 {
		phi = 0
	}
	idx := int64(phi * float64(total))
	if idx >= total {
		idx = total - 1
	}
	return idx
}

// plainNumberText reports whether v, a number's text, is surely what
// formatNumber writes for its value: an optional '-', then digits without
// a leading zero (or a single 0), then optionally '.' and digits that do
// not end in 0, at most 15 digits in all. Other texts are compared with
// formatNumber's (differsFromFormat).
func plainNumberText(v string) bool {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	start, digits, dot := i, 0, false
	for ; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	switch {
	case digits == 0 || digits > 15:
		return false
	case v[start] == '0' && len(v) > start+1 && v[start+1] != '.':
		return false // a leading zero
	case v[start] == '.':
		return false
	case dot && (v[len(v)-1] == '0' || v[len(v)-1] == '.'):
		return false // trailing fractional zeros
	case v == "-0" || strings.HasPrefix(v, "-0.") && strings.Trim(v[3:], "0") == "":
		return false
	}
	return true
}

// differsFromFormat reports whether v differs from the text formatNumber
// writes for n.
func differsFromFormat(v string, n float64) bool {
	var buf [32]byte
	return string(appendNumber(buf[:0], n)) != v
}
