package query

import (
	"slices"
	"strconv"
	"strings"
)

// PipeFieldNames returns one row per field name with a hits count:
// "field_names [as name]". ResultName defaults to "name".
type PipeFieldNames struct{ ResultName string }

func (*PipeFieldNames) isPipe() {}

func (p *PipeFieldNames) String() string {
	return "field_names as " + quoteToken(p.ResultName)
}

// parseFieldNamesPipe parses "field_names [as] [name]".
func (p *parser) parseFieldNamesPipe(_ string) (Pipe, error) {
	p.next()
	name, err := p.parseOptionalResult("name")
	if err != nil {
		return nil, err
	}
	return &PipeFieldNames{ResultName: name}, nil
}

func (p *PipeFieldNames) newProcessor(pl *plan, next processor) (processor, error) {
	f := newFieldNamesProc(p, next)
	f.logs = readsLogs(pl.q.Pipes, p)
	return f, nil
}

// readsLogs reports whether the pipe at is fed logs as read, with their
// fields: every pipe before it keeps or drops whole rows (filter, limit,
// offset, sort).
func readsLogs(pipes []Pipe, at Pipe) bool {
	for _, pp := range pipes {
		switch pp.(type) {
		case *PipeFilter, *PipeLimit, *PipeOffset, *PipeSort:
			continue
		}
		return pp == at
	}
	return false
}

// fieldNamesProc implements field_names: every field name with the number of
// rows where it has a value.
//
// Maps here are keyed by strings that own their memory and updated through
// pointers: assigning to an existing key with a string that aliases the
// worker's arena would make the map keep the alias (Go updates string keys
// on assignment).
type fieldNamesProc struct {
	p     *PipeFieldNames
	names map[string]*int64
	rows  int64
	logs  bool // fed logs as read (readsLogs): each is in a stream
	next  processor
}

func newFieldNamesProc(p *PipeFieldNames, next processor) *fieldNamesProc {
	return &fieldNamesProc{p: p, names: map[string]*int64{}, next: next}
}

func (f *fieldNamesProc) push(r *Row) error {
	f.rows++
	for _, fl := range r.Fields {
		if fl.Value == "" {
			continue
		}
		n := f.names[fl.Name]
		if n == nil {
			n = new(int64)
			f.names[strings.Clone(fl.Name)] = n
		}
		*n++
	}
	return nil
}

func (f *fieldNamesProc) merge(o processor) error {
	of := o.(*fieldNamesProc)
	f.rows += of.rows
	for k, v := range of.names {
		if n := f.names[k]; n != nil {
			*n += *v
		} else {
			f.names[k] = v
		}
	}
	return nil
}

func (f *fieldNamesProc) flush() error {
	name := f.p.ResultName
	if name == "" {
		name = "name"
	}
	keys := make([]string, 0, len(f.names)+2)
	for k := range f.names {
		keys = append(keys, k)
	}
	if f.rows > 0 && f.logs {
		// Every log belongs to a stream in VictoriaLogs' model; spate reads
		// files without stream fields, so every log is in the stream {}, as
		// when VictoriaLogs ingests them without _stream_fields. (Not
		// stored in names: flush may run again, for snapshots.)
		for _, k := range []string{"_stream", "_stream_id"} {
			if f.names[k] == nil {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	var out Row
	for _, k := range keys {
		hits := f.rows
		if n := f.names[k]; n != nil {
			hits = *n
		}
		out.Reset()
		out.Set(name, k)
		out.Set("hits", strconv.FormatInt(hits, 10))
		if err := f.next.push(&out); err != nil {
			if err == errStop {
				break
			}
			return err
		}
	}
	return f.next.flush()
}
