package query

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spate-io/spate/internal/ndjson"
)

// PipeUnroll splits JSON-array fields into one row per element: "unroll (a,
// b)" (also "unroll by (a)").
type PipeUnroll struct{ Fields []string }

func (*PipeUnroll) isPipe() {}

func (p *PipeUnroll) String() string { return "unroll (" + joinFieldPatterns(p.Fields) + ")" }

// parseUnrollPipe parses "unroll [by] (a, b)".
func (p *parser) parseUnrollPipe(_ string) (Pipe, error) {
	p.next()
	if p.isKw("if") {
		return nil, p.errorf(p.cur().pos, "'if' in unroll pipe is not supported by spate")
	}
	pos := p.cur().pos
	fields, err := p.parseByList("unroll")
	if err != nil {
		return nil, err
	}
	if len(fields) == 0 {
		return nil, p.errorHint(pos, "for example: unroll (tags)", "missing fields in unroll pipe")
	}
	return &PipeUnroll{Fields: fields}, nil
}

func (p *PipeUnroll) newProcessor(_ *plan, next processor) (processor, error) {
	return &unrollProc{fields: p.Fields, next: next}, nil
}

// unrollProc emits one row per element of JSON-array fields, and one with
// the fields empty for a row without elements.
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
	// A row whose fields hold no array element (absent, not an array, [])
	// stays, once, with them empty: as in VictoriaLogs.
	n = max(n, 1)
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
