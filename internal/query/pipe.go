package query

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
)

// processor is a compiled pipe. push receives one row; the row and its
// strings are valid only during the call, so a processor that keeps a row
// clones it. flush is called once after the last row: barrier processors emit
// then, and every processor then flushes its successor.
//
// A worker's processors are used by that worker alone; the processors after
// the barrier run on one goroutine at a time.
type processor interface {
	push(r *Row) error
	flush() error
}

func defaultWorkers() int { return runtime.GOMAXPROCS(0) }

// newProcessor compiles one pipe feeding next: every pipe type spate runs
// has a newProcessor method, beside its processor.
func newProcessor(p *plan, pipe Pipe, next processor) (processor, error) {
	if pc, ok := pipe.(pipeCompiler); ok {
		return pc.newProcessor(p, next)
	}
	return nil, fmt.Errorf("pipe %q is not supported by spate", pipe.String())
}

// pipeCompiler is a pipe that compiles itself into a processor.
type pipeCompiler interface {
	newProcessor(p *plan, next processor) (processor, error)
}

// sinkProc hands rows to the Sink. For raw log rows it puts the fields in
// VictoriaLogs' order: _time, _msg, then the rest by name.
type sinkProc struct {
	sink    Sink
	raw     bool
	all     bool // sink is an allRowsSink
	scratch Row
}

func newSinkProc(sink Sink, raw bool) *sinkProc {
	_, all := sink.(allRowsSink)
	if _, any := sink.(anyFieldOrderSink); any {
		raw = false
	}
	return &sinkProc{sink: sink, raw: raw, all: all}
}

// anyFieldOrderSink is a Sink that takes a log's fields in any order:
// logs are not put in printing order (sortRawFields) for it.
type anyFieldOrderSink interface {
	Sink
	anyFieldOrder()
}

// allRowsSink is a Sink that is also given the rows that have no
// non-empty field, which VictoriaLogs returns to no client but uses
// itself: a subquery's values and rows (subqueryValues).
type allRowsSink interface {
	Sink
	takesEmptyRows()
}

func (s *sinkProc) push(r *Row) error {
	if s.all {
		return s.write(r)
	}
	empty := true
	for i := range r.Fields {
		if r.Fields[i].Value != "" {
			empty = false
			break
		}
	}
	if empty {
		// VictoriaLogs returns no row that has no non-empty field.
		return nil
	}
	return s.write(r)
}

func (s *sinkProc) write(r *Row) error {
	if !s.raw {
		return s.sink.WriteRow(r)
	}
	s.scratch.CopyFrom(r)
	sortRawFields(s.scratch.Fields)
	return s.sink.WriteRow(&s.scratch)
}

// sortRawFields puts a log's fields in the order logs are printed in:
// _time, _msg, then the others by name.
func sortRawFields(fs []Field) {
	slices.SortStableFunc(fs, func(a, b Field) int {
		ra, rb := rawRank(a.Name), rawRank(b.Name)
		if ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Name, b.Name)
	})
}

func rawRank(name string) int {
	switch name {
	case "_time":
		return 0
	case "_msg":
		return 1
	}
	return 2
}

func (s *sinkProc) flush() error {
	if f, ok := s.sink.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// matchName reports whether name matches pattern, which may end in '*'.
func matchName(pattern, name string) bool {
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(name, p)
	}
	return pattern == name
}

func compileIf(f Filter) (matcher, error) {
	if f == nil {
		return nil, nil
	}
	return compileFilter(f)
}

func fieldOrMsg(f string) string {
	if f == "" {
		return "_msg"
	}
	return f
}
