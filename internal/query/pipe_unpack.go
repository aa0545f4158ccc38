package query

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spate-io/spate/internal/ndjson"
)

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

// splitJSONArray returns the elements of a JSON array's text as values:
// strings unquoted, other elements as their compact JSON text. A value that
// is not a JSON array gives nil.
func splitJSONArray(it *ndjson.Iter, a *arena, s string) []string {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil
	}
	// Wrap the array in an object so the line iterator can walk it.
	wrapped := make([]byte, 0, len(s)+8)
	wrapped = append(wrapped, `{"a":`...)
	wrapped = append(wrapped, s...)
	wrapped = append(wrapped, '}')
	it.Reset(wrapped)
	if !it.Next() || it.Kind() != ndjson.KindArray {
		return nil
	}
	body := strings.TrimSpace(string(it.Value()))
	body = body[1 : len(body)-1]
	var out []string
	for len(strings.TrimSpace(body)) > 0 {
		elem, rest := nextJSONElement(body)
		elem = strings.TrimSpace(elem)
		if len(elem) > 0 && elem[0] == '"' {
			if uq, err := strconv.Unquote(elem); err == nil && utf8.ValidString(uq) {
				elem = uq
			} else if b, err := ndjson.AppendUnescape(nil, []byte(elem[1:len(elem)-1])); err == nil {
				elem = string(b)
			}
		} else if elem == "null" {
			elem = ""
		}
		out = append(out, a.addString(elem))
		body = rest
	}
	return out
}

// nextJSONElement splits the first element off a comma-separated list of
// valid compact JSON values.
func nextJSONElement(s string) (elem, rest string) {
	depth := 0
	inStr := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 0 {
				return s[:i], s[i+1:]
			}
		}
	}
	return s, ""
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
