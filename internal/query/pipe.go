package query

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/spate-io/spate/internal/ndjson"
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

// newProcessor compiles one pipe feeding next.
func newProcessor(p *plan, pipe Pipe, next processor) (processor, error) {
	switch pp := pipe.(type) {
	case *PipeFields:
		return &fieldsProc{names: pp.Fields, next: next}, nil
	case *PipeDelete:
		return &deleteProc{names: pp.Fields, next: next}, nil
	case *PipeRename:
		return &renameProc{pairs: pp.Pairs, next: next}, nil
	case *PipeCopy:
		return &renameProc{pairs: pp.Pairs, copy: true, next: next}, nil
	case *PipeFilter:
		m, err := compileFilter(pp.Filter)
		if err != nil {
			return nil, err
		}
		return &filterProc{m: m, next: next}, nil
	case *PipeLimit:
		return &limitProc{n: pp.N, next: next}, nil
	case *PipeOffset:
		return &offsetProc{n: pp.N, next: next}, nil
	case *PipeSort:
		return newSortProc(pp, p.opts.MaxMemory, next), nil
	case *PipeStats:
		return newStatsProc(p, pp, next)
	case *PipeTop:
		return newTopProc(pp, next), nil
	case *PipeUniq:
		return newUniqProc(pp, next), nil
	case *PipeFieldValues:
		return newFieldValuesProc(pp, next), nil
	case *PipeFieldNames:
		return newFieldNamesProc(pp, next), nil
	case *PipeFacets:
		return newFacetsProc(pp, next), nil
	case *PipeExtract:
		return newExtractProc(pp, next)
	case *PipeExtractRegexp:
		return newExtractRegexpProc(pp, next)
	case *PipeUnpack:
		return newUnpackProc(pp, next)
	case *PipeMath:
		return &mathProc{assigns: pp.Assigns, next: next}, nil
	case *PipeFormat:
		return newFormatProc(pp, next)
	case *PipeLen:
		return &lenProc{field: pp.Field, result: pp.Result, next: next}, nil
	case *PipeUnroll:
		return &unrollProc{fields: pp.Fields, next: next}, nil
	}
	return nil, fmt.Errorf("pipe %q is not supported by spate", pipe.String())
}

// sinkProc hands rows to the Sink. For raw log rows it puts the fields in
// VictoriaLogs' order: _time, _msg, then the rest by name.
type sinkProc struct {
	sink    Sink
	raw     bool
	scratch Row
}

func (s *sinkProc) push(r *Row) error {
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
	if !s.raw {
		return s.sink.WriteRow(r)
	}
	s.scratch.CopyFrom(r)
	slices.SortStableFunc(s.scratch.Fields, func(a, b Field) int {
		ra, rb := rawRank(a.Name), rawRank(b.Name)
		if ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Name, b.Name)
	})
	return s.sink.WriteRow(&s.scratch)
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

type fieldsProc struct {
	names   []string
	next    processor
	scratch Row
}

func (p *fieldsProc) push(r *Row) error {
	s := &p.scratch
	s.Reset()
	s.pos = r.pos
	for _, n := range p.names {
		if !strings.HasSuffix(n, "*") {
			if i := r.index(n); i >= 0 && s.index(n) < 0 {
				s.Fields = append(s.Fields, r.Fields[i])
			}
			continue
		}
		for _, f := range r.Fields {
			if matchName(n, f.Name) && s.index(f.Name) < 0 {
				s.Fields = append(s.Fields, f)
			}
		}
	}
	if s.index("_time") >= 0 {
		s.Time, s.HasTime = r.Time, r.HasTime
	}
	return p.next.push(s)
}

func (p *fieldsProc) flush() error { return p.next.flush() }

type deleteProc struct {
	names []string
	next  processor
}

func (p *deleteProc) push(r *Row) error {
	j := 0
	for _, f := range r.Fields {
		del := false
		for _, n := range p.names {
			if matchName(n, f.Name) {
				del = true
				break
			}
		}
		if del {
			if f.Name == "_time" {
				r.HasTime = false
			}
			continue
		}
		r.Fields[j] = f
		j++
	}
	r.Fields = r.Fields[:j]
	return p.next.push(r)
}

func (p *deleteProc) flush() error { return p.next.flush() }

// renameProc implements rename and copy.
type renameProc struct {
	pairs []RenamePair
	copy  bool
	next  processor
	buf   []Field
	arena arena
}

func (p *renameProc) push(r *Row) error {
	p.arena.reset()
	for _, pr := range p.pairs {
		src, hasPrefix := strings.CutSuffix(pr.Src, "*")
		if !hasPrefix {
			i := r.index(pr.Src)
			if pr.Src == pr.Dst {
				continue
			}
			if i < 0 {
				// A missing source makes the destination empty (missing) too.
				r.Delete(pr.Dst)
				continue
			}
			v := r.Fields[i].Value
			wasTime := pr.Src == "_time" && r.HasTime
			t := r.Time
			if !p.copy {
				r.Delete(pr.Src)
			}
			r.Set(pr.Dst, v)
			if pr.Dst == "_time" && wasTime {
				r.Time, r.HasTime = t, true
			}
			continue
		}
		dst := strings.TrimSuffix(pr.Dst, "*")
		p.buf = p.buf[:0]
		for _, f := range r.Fields {
			if strings.HasPrefix(f.Name, src) {
				p.buf = append(p.buf, f)
			}
		}
		for _, f := range p.buf {
			if !p.copy {
				r.Delete(f.Name)
			}
		}
		for _, f := range p.buf {
			name := p.arena.addString(dst + f.Name[len(src):])
			r.Set(name, f.Value)
		}
	}
	return p.next.push(r)
}

func (p *renameProc) flush() error { return p.next.flush() }

type filterProc struct {
	m    matcher
	next processor
}

func (p *filterProc) push(r *Row) error {
	if !p.m.match(r) {
		return nil
	}
	return p.next.push(r)
}

func (p *filterProc) flush() error { return p.next.flush() }

type limitProc struct {
	n, seen int64
	next    processor
}

func (p *limitProc) push(r *Row) error {
	if p.seen >= p.n {
		return errStop
	}
	p.seen++
	if err := p.next.push(r); err != nil {
		return err
	}
	if p.seen >= p.n {
		return errStop
	}
	return nil
}

func (p *limitProc) flush() error { return p.next.flush() }

type offsetProc struct {
	n, seen int64
	next    processor
}

func (p *offsetProc) push(r *Row) error {
	if p.seen < p.n {
		p.seen++
		return nil
	}
	return p.next.push(r)
}

func (p *offsetProc) flush() error { return p.next.flush() }

type lenProc struct {
	field, result string
	next          processor
	buf           []byte
}

func (p *lenProc) push(r *Row) error {
	p.buf = appendNumber(p.buf[:0], float64(len(r.Get(p.field))))
	r.Set(p.result, unsafeString(p.buf))
	return p.next.push(r)
}

func (p *lenProc) flush() error { return p.next.flush() }

// unrollProc emits one row per element of JSON-array fields.
type unrollProc struct {
	fields  []string
	next    processor
	scratch Row
	arena   arena
	vals    [][]string
	it      ndjson.Iter
}

func (p *unrollProc) push(r *Row) error {
	p.arena.reset()
	p.vals = p.vals[:0]
	n := 0
	for _, f := range p.fields {
		vs := splitJSONArray(&p.it, &p.arena, r.Get(f))
		p.vals = append(p.vals, vs)
		n = max(n, len(vs))
	}
	for i := 0; i < n; i++ {
		p.scratch.CopyFrom(r)
		for j, f := range p.fields {
			v := ""
			if i < len(p.vals[j]) {
				v = p.vals[j][i]
			}
			p.scratch.Set(f, v)
		}
		if err := p.next.push(&p.scratch); err != nil {
			return err
		}
	}
	return nil
}

func (p *unrollProc) flush() error { return p.next.flush() }
