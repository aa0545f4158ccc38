package query

import (
	"strconv"
	"strings"

	"github.com/spate-io/spate/internal/ndjson"
)

// PipeUnpack parses From (default _msg) as JSON (Format "json",
// "unpack_json") or logfmt (Format "logfmt", "unpack_logfmt") and sets the
// fields it holds: "unpack_json [if (f)] [from f] [fields (a, b)]
// [result_prefix p] [keep_original_fields] [skip_empty_results]". With
// Fields, only those are set, and the missing ones are set to "".
type PipeUnpack struct {
	Format             string
	If                 Filter
	From               string
	Fields             []string
	ResultPrefix       string
	KeepOriginalFields bool
	SkipEmptyResults   bool
}

func (*PipeUnpack) isPipe() {}

func (p *PipeUnpack) String() string {
	s := "unpack_" + p.Format + ifString(p.If) + fromString(p.From)
	if len(p.Fields) > 0 {
		s += " fields (" + joinFieldPatterns(p.Fields) + ")"
	}
	if p.ResultPrefix != "" {
		s += " result_prefix " + strconv.Quote(p.ResultPrefix)
	}
	return s + keepSkipString(p.KeepOriginalFields, p.SkipEmptyResults)
}

// parseUnpackPipe parses unpack_json and unpack_logfmt: "unpack_json [if
// (f)] [from f] [fields (a, b)] [result_prefix "p"] [keep_original_fields]
// [skip_empty_results]".
func (p *parser) parseUnpackPipe(name string) (Pipe, error) {
	p.next()
	pu := &PipeUnpack{Format: strings.TrimPrefix(name, "unpack_"), From: "_msg"}
	if p.isKw("if") {
		f, err := p.parseIf()
		if err != nil {
			return nil, err
		}
		pu.If = f
	}
	for {
		switch {
		case p.isKw("from"):
			p.next()
			f, err := p.parseFieldName("field after 'from'")
			if err != nil {
				return nil, err
			}
			pu.From = f
		case p.isKw("fields"):
			p.next()
			fields, err := p.parseFieldPatterns("field name", true, false)
			if err != nil {
				return nil, err
			}
			pu.Fields = fields
		case p.isKw("result_prefix"):
			p.next()
			s, err := p.compound(stopsGeneric, "prefix after 'result_prefix'")
			if err != nil {
				return nil, err
			}
			pu.ResultPrefix = s
		case p.isKw("keep_original_fields"):
			p.next()
			pu.KeepOriginalFields = true
		case p.isKw("skip_empty_results"):
			p.next()
			pu.SkipEmptyResults = true
		default:
			return pu, nil
		}
	}
}

// unpackProc implements unpack_json and unpack_logfmt.
type unpackProc struct {
	json   bool
	ifm    matcher
	from   string
	fields []string
	prefix string
	keep   bool
	skip   bool
	next   processor

	it    ndjson.Iter
	arena arena
	kv    []Field
	nb    []byte
}

func (p *PipeUnpack) newProcessor(_ *plan, next processor) (processor, error) {
	return newUnpackProc(p, next)
}

func newUnpackProc(p *PipeUnpack, next processor) (processor, error) {
	ifm, err := compileIf(p.If)
	if err != nil {
		return nil, err
	}
	return &unpackProc{json: p.Format == "json", ifm: ifm, from: fieldOrMsg(p.From), fields: p.Fields,
		prefix: p.ResultPrefix, keep: p.KeepOriginalFields, skip: p.SkipEmptyResults, next: next}, nil
}

func (p *unpackProc) push(r *Row) error {
	if p.ifm != nil && !p.ifm.match(r) {
		return p.next.push(r)
	}
	p.arena.reset()
	src := p.arena.addString(r.Get(p.from))
	p.kv = p.kv[:0]
	if p.json {
		p.unpackJSON(src)
	} else {
		p.unpackLogfmt(src)
	}
	if len(p.fields) > 0 {
		for _, f := range p.fields {
			v := ""
			for _, kv := range p.kv {
				if kv.Name == f {
					v = kv.Value
				}
			}
			p.set(r, f, v)
		}
		return p.next.push(r)
	}
	for _, kv := range p.kv {
		p.set(r, kv.Name, kv.Value)
	}
	return p.next.push(r)
}

func (p *unpackProc) set(r *Row, name, val string) {
	if p.prefix != "" {
		p.nb = append(append(p.nb[:0], p.prefix...), name...)
		name = p.arena.add(p.nb)
	}
	if (val == "" && p.skip) || p.keep {
		if r.Get(name) != "" {
			return
		}
	}
	r.Set(name, val)
}

func (p *unpackProc) unpackJSON(s string) {
	it := &p.it
	it.Reset([]byte(s))
	for it.Next() {
		name := p.arena.add(it.Key())
		var val string
		switch it.Kind() {
		case ndjson.KindNull:
		case ndjson.KindTrue:
			val = "true"
		case ndjson.KindFalse:
			val = "false"
		default:
			val = p.arena.add(it.Value())
		}
		p.kv = append(p.kv, Field{Name: name, Value: val})
	}
	if it.Err() != nil {
		p.kv = p.kv[:0]
	}
}

// unpackLogfmt parses `k=v k2="quoted v" flag` pairs (see parseLogfmt).
func (p *unpackProc) unpackLogfmt(s string) {
	p.kv = parseLogfmt(p.kv, s, &p.arena)
}

func (p *unpackProc) flush() error { return p.next.flush() }
