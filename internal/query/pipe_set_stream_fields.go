package query

import (
	"slices"
	"strconv"
	"strings"
)

// PipeSetStreamFields makes the row's fields that match Fields (names or
// prefix patterns, "*" for all) its stream: "set_stream_fields [if (f)]
// a, b*". As in VictoriaLogs v1.52.1, _stream becomes
// {name="value",...} of those with a value, sorted by name, each value
// quoted as Go quotes it, and _stream_id is cleared; rows the if filter
// rejects keep both. A pattern matches the fields the row carries, which
// include _msg, _time, _stream and _stream_id when a pattern (or a later
// pipe) reads them.
type PipeSetStreamFields struct {
	If     Filter
	Fields []string
}

func (*PipeSetStreamFields) isPipe() {}

func (p *PipeSetStreamFields) String() string {
	return "set_stream_fields" + ifString(p.If) + " " + joinFieldPatterns(p.Fields)
}

// parseSetStreamFieldsPipe parses "set_stream_fields [if (f)] a, b*".
func (p *parser) parseSetStreamFieldsPipe(_ string) (Pipe, error) {
	p.next()
	ps := &PipeSetStreamFields{}
	var err error
	if p.isKw("if") {
		if ps.If, err = p.parseIf(); err != nil {
			return nil, err
		}
	}
	if ps.Fields, err = p.parseFieldPatterns("field name", false, true); err != nil {
		return nil, err
	}
	return ps, nil
}

func (p *PipeSetStreamFields) newProcessor(_ *plan, next processor) (processor, error) {
	ifm, err := compileIf(p.If)
	if err != nil {
		return nil, err
	}
	return &setStreamFieldsProc{ifm: ifm, fields: p.Fields, next: next}, nil
}

// setStreamFieldsProc implements set_stream_fields.
type setStreamFieldsProc struct {
	ifm    matcher
	fields []string
	next   processor
	tags   []Field // the current row's stream fields, aliasing it
	buf    []byte
}

func (p *setStreamFieldsProc) push(r *Row) error {
	if p.ifm != nil && !p.ifm.match(r) {
		return p.next.push(r)
	}
	p.tags = p.tags[:0]
	for _, f := range r.Fields {
		if f.Value != "" && slices.ContainsFunc(p.fields, func(pat string) bool { return matchName(pat, f.Name) }) {
			p.tags = append(p.tags, f)
		}
	}
	slices.SortFunc(p.tags, func(a, b Field) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
	p.buf = append(p.buf[:0], '{')
	for i, f := range p.tags {
		if i > 0 {
			p.buf = append(p.buf, ',')
		}
		p.buf = append(p.buf, f.Name...)
		p.buf = append(p.buf, '=')
		p.buf = strconv.AppendQuote(p.buf, f.Value)
	}
	p.buf = append(p.buf, '}')
	clear(p.tags) // they alias the row
	r.Set("_stream", unsafeString(p.buf))
	r.Set("_stream_id", "")
	return p.next.push(r)
}

func (p *setStreamFieldsProc) flush() error { return p.next.flush() }
