package query

import (
	"encoding/binary"
	"strings"

	"github.com/axiomhq/hyperloglog"
)

// parseCountUniqArgs parses the fields of count_uniq and count_uniq_hash:
// at least one, each a name (VictoriaLogs refuses "*" and patterns here).
func (p *parser) parseCountUniqArgs(sf *StatsFunc, args []string, argsPos int) error {
	if len(args) == 0 {
		return p.errorHint(argsPos, "for example: "+sf.Name+"(user_id)", "%s() needs at least one field", sf.Name)
	}
	for _, a := range args {
		if strings.HasSuffix(a, "*") {
			return p.errorf(argsPos, "%s() takes no field pattern such as %q (VictoriaLogs refuses it too): name the fields", sf.Name, a)
		}
	}
	sf.Fields = args
	return nil
}

// newCountUniqHashColumn compiles count_uniq_hash. VictoriaLogs counts
// the distinct 64-bit hashes of the values, and of one field it reads
// integers as numbers ("1_000" and "1000" are one value; "01" is text) and
// _time as its timestamp. spate counts the same distinct values exactly, as
// count_uniq does (a hash collision would make VictoriaLogs' count lower,
// about once in 2^64 pairs).
func newCountUniqHashColumn(_ *plan, _ *PipeStats, f StatsFunc, fields []string, mem *memTracker) (statsColumn, error) {
	return &stateColumn{newFunc: func() statsState {
		s := newUniqState(fields, f.Limit, mem)
		s.ints = len(fields) == 1
		return s
	}}, nil
}

// newCountUniqColumn compiles count_uniq. Of one field, VictoriaLogs
// counts an integer by its number ("1_000" and "1000" are one value; "01"
// is text) and _time by its timestamp, as count_uniq_hash does; of
// several, the values' texts.
func newCountUniqColumn(_ *plan, _ *PipeStats, f StatsFunc, fields []string, mem *memTracker) (statsColumn, error) {
	return &stateColumn{newFunc: func() statsState {
		s := newUniqState(fields, f.Limit, mem)
		s.ints = len(fields) == 1
		return s
	}}, nil
}

// uniqState implements count_uniq: an exact set of value tuples until the
// memory tracker asks for a HyperLogLog sketch.
type uniqState struct {
	fields []string
	limit  int64
	set    groupTable // the distinct value tuples, as keys (until hll)
	hll    *hyperloglog.Sketch
	mem    *memTracker
	key    []byte
	// ints (count_uniq and count_uniq_hash of one field) keys an integer
	// value by its number and _time by its timestamp: appendIntKey.
	ints bool
}

func newUniqState(fields []string, limit int64, mem *memTracker) *uniqState {
	return &uniqState{fields: fields, limit: limit, mem: mem}
}

func (s *uniqState) update(r *Row) {
	k := s.key[:0]
	empty := true
	if s.ints {
		v := r.Get(s.fields[0])
		if v == "" {
			return
		}
		k = appendIntKey(k, s.fields[0], v, r)
		empty = false
	} else if len(s.fields) == 0 {
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
	s.add(k)
}

// add adds the value tuple k (copied), unless the set is at its limit.
func (s *uniqState) add(k []byte) {
	if s.limit > 0 && int64(s.set.len()) >= s.limit {
		if _, ok := s.set.find(k); !ok {
			return
		}
	}
	if _, added := s.set.findOrAdd(k); !added {
		return
	}
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
	for g := range s.set.len() {
		s.hll.Insert(s.set.key(g))
	}
	s.set = groupTable{}
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
	for g := range os.set.len() {
		if s.limit > 0 && int64(s.set.len()) >= s.limit {
			break
		}
		s.set.findOrAdd(os.set.key(g))
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
	return formatNumber(float64(s.set.len()))
}

// appendIntKey appends the count_uniq_hash key of the non-empty value v of
// field in r: a tag byte, then an integer's 8 bytes ('u' for a
// non-negative one as VictoriaLogs' tryParseUint64 reads it, also _time's
// Unix nanoseconds; 'n' for a negative one), else the text ('s').
func appendIntKey(dst []byte, field, v string, r *Row) []byte {
	if field == "_time" {
		if t, ok := rowTime(r); ok {
			return binary.LittleEndian.AppendUint64(append(dst, 'u'), uint64(t))
		}
	}
	if n, ok := parseUintDigitsLit(v); ok {
		return binary.LittleEndian.AppendUint64(append(dst, 'u'), n)
	}
	if v[0] == '-' {
		if n, ok := parseUintDigitsLit(v[1:]); ok && n <= 1<<63 {
			return binary.LittleEndian.AppendUint64(append(dst, 'n'), -n)
		}
	}
	return append(append(dst, 's'), v...)
}
