package query

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/DataDog/sketches-go/ddsketch"
)

// parseQuantileArgs parses "phi, field, ...".
func (p *parser) parseQuantileArgs(sf *StatsFunc, args []string, argsPos int) error {
	if len(args) == 0 {
		return p.errorHint(argsPos, "for example: quantile(0.95, latency)", "missing phi argument of quantile()")
	}
	phi, ok := parseDecimalLit(args[0])
	if !ok || phi < 0 || phi > 1 {
		return p.errorf(argsPos, "the phi argument of quantile() must be a number in the range [0..1]; got %q", args[0])
	}
	sf.Phi, sf.PhiText = phi, args[0]
	sf.Fields = allFieldsAsNil(args[1:])
	return nil
}

// quantileArgsString prints "phi, field, ...".
func quantileArgsString(sf *StatsFunc) string {
	args := sf.PhiText
	if args == "" {
		args = strconv.FormatFloat(sf.Phi, 'f', -1, 64)
	}
	if len(sf.Fields) > 0 {
		args += ", " + joinFieldPatterns(sf.Fields)
	}
	return args
}

// newQuantileColumn compiles quantile and median (phi 0.5).
func newQuantileColumn(_ *plan, _ *PipeStats, f StatsFunc, fields []string, mem *memTracker) (statsColumn, error) {
	phi := f.Phi
	if f.Name == "median" {
		phi = 0.5
	}
	return &stateColumn{newFunc: func() statsState { return newQuantileState(fields, phi, mem) }}, nil
}

// sketchAccuracy is the relative accuracy of quantile sketches (DDSketch:
// every returned quantile is within 1% of a value of the right rank).
const sketchAccuracy = 0.01

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
	if len(s.fields) == 1 && !isPattern(s.fields[0]) {
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
	n, isNum := anyNumber(v)
	if s.sk != nil {
		if isNum {
			_ = s.sk.Add(n) // only NaN fails, and anyNumber never returns NaN
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
