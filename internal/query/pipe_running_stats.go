package query

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// PipeRunningStats adds statistics of the rows so far to every row:
// "running_stats [by (a, b)] count() as n, sum(x) as s". Rows are grouped
// by the by-fields' values and, within a group, ordered by their _time
// text; each row gets the functions' values over its group's rows up to
// and including itself. With Total ("total_stats ..."), each row gets the
// values over its whole group instead.
//
// As in VictoriaLogs v1.52.1, the groups come out in the order of their
// keys (appendPartitionKey: a shorter first value first), a result
// replaces a field of the same name, and rows within a group are ordered
// by the text of their _time (so "00:00:03.5Z" comes before
// "00:00:03Z"), which is read only when the output needs it: otherwise,
// and for rows with equal times, they keep their input order (VictoriaLogs
// leaves it unspecified; its storage order is by time within a stream).
// The pipe holds every row until its input ends.
type PipeRunningStats struct {
	Total bool
	By    []string
	Funcs []RunningFunc
}

// RunningFunc is one function of running_stats or total_stats.
//
// Name is count, sum, min, max, first or last. Fields are the field
// arguments of count, sum, min and max (names and prefix patterns; none
// means all fields), and the one field of first and last. Offset is the
// "offset N" of first (the value of the group's row N, counting from 0)
// and last (the value of the row N before the current one). Result is the
// output field.
type RunningFunc struct {
	Name   string
	Fields []string
	Offset int64
	Result string
}

func (*PipeRunningStats) isPipe() {}

// callString prints the function without its result name: "count(*)",
// "first(x) offset 2". Without "as", it is the result name.
func (f *RunningFunc) callString() string {
	args := "*"
	if len(f.Fields) > 0 {
		args = joinFieldPatterns(f.Fields)
	}
	s := f.Name + "(" + args + ")"
	if f.Offset > 0 {
		s += " offset " + strconv.FormatInt(f.Offset, 10)
	}
	return s
}

func (p *PipeRunningStats) String() string {
	s := "running_stats"
	if p.Total {
		s = "total_stats"
	}
	if len(p.By) > 0 {
		s += " by (" + joinFieldPatterns(p.By) + ")"
	}
	for i, f := range p.Funcs {
		if i > 0 {
			s += ","
		}
		s += " " + f.callString() + " as " + quoteToken(f.Result)
	}
	return s
}

// runningFuncNames are the functions running_stats and total_stats take.
var runningFuncNames = []string{"count", "first", "last", "max", "min", "sum"}

// parseRunningStatsPipe parses "running_stats [by] (a, b) func(...)
// [offset N] [as] [result], ..." and total_stats.
func (p *parser) parseRunningStatsPipe(name string) (Pipe, error) {
	p.next()
	ps := &PipeRunningStats{Total: name == "total_stats"}
	if p.isKw("by") || p.isPunct("(") {
		if p.isKw("by") {
			p.next()
		}
		by, err := p.parseFieldPatterns(name+" by field", true, false)
		if err != nil {
			return nil, err
		}
		ps.By = by
	}
	seen := make(map[string]bool)
	for {
		t := p.cur()
		fname := strings.ToLower(t.text)
		if t.kind != lexWord || !slices.Contains(runningFuncNames, fname) {
			return nil, p.errorHint(t.pos, name+" takes "+strings.Join(runningFuncNames, ", "),
				"missing %s function; got %s", name, p.describe())
		}
		p.next()
		if !p.isPunct("(") {
			return nil, p.errorf(p.cur().pos, "missing '(' after %s function %q; got %s", name, fname, p.describe())
		}
		argsPos := p.cur().pos
		args, err := p.parseFieldPatterns("argument of "+fname+"()", true, fname != "first" && fname != "last")
		if err != nil {
			return nil, err
		}
		f := RunningFunc{Name: fname, Fields: allFieldsAsNil(args)}
		if fname == "first" || fname == "last" {
			if len(args) != 1 {
				return nil, p.errorf(argsPos, "%s() takes one field; got %d", fname, len(args))
			}
			f.Fields = args
			if p.isKw("offset") {
				p.next()
				if f.Offset, err = p.parseCount("offset"); err != nil {
					return nil, err
				}
			}
		}
		if p.isTrailer() || p.isPunct(",") {
			f.Result = f.callString()
		} else {
			if p.isKw("as") {
				p.next()
			}
			if f.Result, err = p.parseFieldName("result name"); err != nil {
				return nil, err
			}
		}
		if seen[f.Result] {
			return nil, p.errorf(t.pos, "%s: two functions have the result name %s", name, quoteToken(f.Result))
		}
		seen[f.Result] = true
		ps.Funcs = append(ps.Funcs, f)
		if p.isTrailer() {
			return ps, nil
		}
		if err := p.expectPunct(",", "between "+name+" functions"); err != nil {
			return nil, err
		}
	}
}

// needs returns the fields the pipe reads for an output that needs after:
// after without the results, plus the by-fields and the functions' fields.
func (p *PipeRunningStats) needs(after fieldSet) fieldSet {
	in := after
	for _, f := range p.Funcs {
		in.remove(f.Result)
	}
	for _, b := range p.By {
		in.add(b)
	}
	for _, f := range p.Funcs {
		if len(f.Fields) == 0 && f.Name != "count" {
			return allFields()
		}
		for _, name := range f.Fields {
			in.add(name)
		}
	}
	return in
}

// runningProc implements running_stats and total_stats: it keeps every
// row (cloned), then groups, orders and annotates them at flush.
type runningProc struct {
	p             *PipeRunningStats
	rows          []*Row
	size, maxSize int64
	next          processor
}

func (p *PipeRunningStats) newProcessor(pl *plan, next processor) (processor, error) {
	return &runningProc{p: p, maxSize: pl.opts.MaxMemory, next: next}, nil
}

func (r *runningProc) push(row *Row) error {
	c := row.Clone()
	r.rows = append(r.rows, c)
	r.size += rowSize(c)
	return r.checkSize()
}

func (r *runningProc) checkSize() error {
	if r.maxSize > 0 && r.size > r.maxSize {
		return fmt.Errorf("%s holds %d rows, over the %d MiB a query may use; narrow the filter or the time range: %w",
			r.name(), len(r.rows), r.maxSize>>20, ErrMemoryLimit)
	}
	return nil
}

func (r *runningProc) name() string {
	if r.p.Total {
		return "total_stats"
	}
	return "running_stats"
}

func (r *runningProc) merge(o processor) error {
	o2 := o.(*runningProc)
	r.rows = append(r.rows, o2.rows...)
	r.size += o2.size
	return r.checkSize()
}

type runningRow struct {
	key  string
	time string // _time's text
	row  *Row
}

func (r *runningProc) flush() error {
	rows := make([]runningRow, len(r.rows))
	var key []byte
	for i, row := range r.rows {
		key = appendPartitionKey(key[:0], row, r.p.By)
		rows[i] = runningRow{key: string(key), time: row.Get("_time"), row: row}
	}
	r.rows = nil
	slices.SortStableFunc(rows, func(a, b runningRow) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		if c := strings.Compare(a.time, b.time); c != 0 {
			return c
		}
		switch {
		case a.row.pos.less(b.row.pos):
			return -1
		case b.row.pos.less(a.row.pos):
			return 1
		}
		return 0
	})
	states := make([]runningState, len(r.p.Funcs))
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && rows[end].key == rows[start].key {
			end++
		}
		group := rows[start:end]
		for i := range states {
			states[i] = runningState{f: &r.p.Funcs[i], sum: math.NaN()}
		}
		if r.p.Total {
			for _, g := range group {
				for i := range states {
					states[i].update(g.row)
				}
			}
		}
		for _, g := range group {
			for i := range states {
				if !r.p.Total {
					states[i].update(g.row)
				}
			}
			// The results are set after every function has read the row:
			// a result may share a name with another's field.
			for i := range states {
				g.row.Set(states[i].f.Result, states[i].result())
			}
			if err := r.next.push(g.row); err != nil {
				if err == errStop {
					return r.next.flush()
				}
				return err
			}
		}
		start = end
	}
	return r.next.flush()
}

// runningState is one function's state over the rows of a group so far.
type runningState struct {
	f       *RunningFunc
	n       uint64   // count; rows seen, for first
	sum     float64  // NaN until a number is added
	val     string   // min, max, first
	valKey  valueKey // min and max: val's key
	has     bool     // val is set
	history []string // last: the last Offset+1 values
}

func (s *runningState) update(r *Row) {
	f := s.f
	switch f.Name {
	case "count":
		if len(f.Fields) == 0 || anyValue(r, f.Fields) {
			s.n++
		}
	case "sum":
		eachRunningValue(r, f.Fields, func(v string) {
			if x, ok := parseDecimalLit(v); ok {
				if math.IsNaN(s.sum) {
					s.sum = x
				} else {
					s.sum += x
				}
			}
		})
	case "min", "max":
		eachRunningValue(r, f.Fields, func(v string) {
			k := keyOf(v)
			if !s.has || (f.Name == "min" && lessKey(&k, &s.valKey)) || (f.Name == "max" && lessKey(&s.valKey, &k)) {
				s.val = strings.Clone(v)
				s.valKey = keyOf(s.val)
				s.has = true
			}
		})
	case "first":
		if int64(s.n) == f.Offset {
			s.val = strings.Clone(r.Get(f.Fields[0]))
		}
		s.n++
	case "last":
		s.history = append(s.history, strings.Clone(r.Get(f.Fields[0])))
		if n := int64(len(s.history)); n > f.Offset+1 {
			s.history = s.history[n-f.Offset-1:]
		}
	}
}

func (s *runningState) result() string {
	switch s.f.Name {
	case "count":
		return strconv.FormatUint(s.n, 10)
	case "sum":
		return strconv.FormatFloat(s.sum, 'f', -1, 64)
	case "last":
		if int64(len(s.history)) <= s.f.Offset {
			return ""
		}
		return s.history[int64(len(s.history))-s.f.Offset-1]
	}
	return s.val
}

// eachRunningValue calls fn with the values VictoriaLogs' running
// functions read from r: one named field's value ("" when r lacks it);
// otherwise the non-empty value of every field of r that one of fields
// names or matches as a prefix pattern (all fields for none). For the
// latter, VictoriaLogs also reads "" from each field that other rows of
// the same storage block have, which depends on its layout.
func eachRunningValue(r *Row, fields []string, fn func(v string)) {
	if len(fields) == 1 && !isPattern(fields[0]) {
		fn(r.Get(fields[0]))
		return
	}
	for i := range r.Fields {
		f := &r.Fields[i]
		if f.Value != "" && (len(fields) == 0 || slices.ContainsFunc(fields, func(p string) bool { return matchName(p, f.Name) })) {
			fn(f.Value)
		}
	}
}
