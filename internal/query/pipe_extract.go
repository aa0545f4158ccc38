package query

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/spate-io/spate/internal/ndjson"
)

// patternPart is one piece of an extract or format pattern: literal text
// followed by an optional placeholder.
type patternPart struct {
	lit      string
	field    string // "" for a trailing literal or an anonymous "<_>"
	modifier string // format only: uc, lc, q, ...
	hasField bool
}

// parseFormatPattern splits "a<x>b<uc:y>" into parts. "<<" is not special;
// a '<' without a matching '>' is literal.
func parseFormatPattern(s string) []patternPart {
	var parts []patternPart
	var lit strings.Builder
	for len(s) > 0 {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			lit.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			lit.WriteString(s)
			break
		}
		lit.WriteString(s[:i])
		name := s[i+1 : i+j]
		s = s[i+j+1:]
		pp := patternPart{lit: lit.String(), hasField: true}
		lit.Reset()
		if k := strings.IndexByte(name, ':'); k >= 0 {
			pp.modifier, name = name[:k], name[k+1:]
		}
		if name != "_" && name != "" {
			pp.field = name
		}
		parts = append(parts, pp)
	}
	if lit.Len() > 0 || len(parts) == 0 {
		parts = append(parts, patternPart{lit: lit.String()})
	}
	return parts
}

// extractPattern matches "text<a>text<b>..." against a value.
type extractPattern struct {
	parts  []patternPart
	fields []string // the named placeholders, in order
	values []string // results of the last apply, per placeholder part
}

func newExtractPattern(s string) (*extractPattern, error) {
	ep := &extractPattern{parts: parseFormatPattern(s)}
	for _, p := range ep.parts {
		if p.hasField && p.field != "" {
			ep.fields = append(ep.fields, p.field)
		}
	}
	if len(ep.fields) == 0 {
		return nil, fmt.Errorf("pattern %q has no <field> placeholder", s)
	}
	ep.values = make([]string, len(ep.parts))
	return ep, nil
}

// apply matches v: the first part's text is searched anywhere, each
// placeholder takes the text up to the next part's text (or the rest of the
// value for the last one). A placeholder whose text starts with a quoted
// string takes the unquoted string. Placeholders that do not match are "".
func (ep *extractPattern) apply(v string) {
	clear(ep.values)
	parts := ep.parts
	if len(parts) == 0 {
		return
	}
	if first := parts[0].lit; first != "" {
		i := strings.Index(v, first)
		if i < 0 {
			return
		}
		v = v[i+len(first):]
	}
	for i, p := range parts {
		if !p.hasField {
			break
		}
		next := ""
		if i+1 < len(parts) {
			next = parts[i+1].lit
		}
		if len(v) > 0 && v[0] == '"' {
			if q, err := strconv.QuotedPrefix(v); err == nil {
				if uq, err := strconv.Unquote(q); err == nil {
					rest := v[len(q):]
					if next == "" || strings.HasPrefix(rest, next) {
						ep.values[i] = uq
						v = rest[len(next):]
						continue
					}
				}
			}
		}
		if next == "" {
			if i+1 < len(parts) && parts[i+1].hasField {
				// Two placeholders in a row: the first takes nothing.
				continue
			}
			ep.values[i] = v
			v = ""
			continue
		}
		j := strings.Index(v, next)
		if j < 0 {
			return
		}
		ep.values[i] = v[:j]
		v = v[j+len(next):]
	}
}

type extractProc struct {
	ifm     matcher
	from    string
	ep      *extractPattern
	keep    bool
	skip    bool
	next    processor
	arena   arena
	re      *regexp.Regexp
	names   []string
	matches []int
}

func (p *PipeExtract) newProcessor(_ *plan, next processor) (processor, error) {
	return newExtractProc(p, next)
}

func newExtractProc(p *PipeExtract, next processor) (processor, error) {
	ep, err := newExtractPattern(p.Pattern)
	if err != nil {
		return nil, fmt.Errorf("cannot use 'extract' pipe: %w", err)
	}
	ifm, err := compileIf(p.If)
	if err != nil {
		return nil, err
	}
	return &extractProc{ifm: ifm, from: fieldOrMsg(p.From), ep: ep, keep: p.KeepOriginalFields, skip: p.SkipEmptyResults, next: next}, nil
}

func (p *PipeExtractRegexp) newProcessor(_ *plan, next processor) (processor, error) {
	return newExtractRegexpProc(p, next)
}

func newExtractRegexpProc(p *PipeExtractRegexp, next processor) (processor, error) {
	re, err := regexp.Compile(p.Expr)
	if err != nil {
		return nil, fmt.Errorf("cannot use 'extract_regexp' pipe: %w", err)
	}
	ifm, err := compileIf(p.If)
	if err != nil {
		return nil, err
	}
	ep := &extractProc{ifm: ifm, from: fieldOrMsg(p.From), re: re, keep: p.KeepOriginalFields, skip: p.SkipEmptyResults, next: next}
	for _, n := range re.SubexpNames() {
		ep.names = append(ep.names, n)
	}
	return ep, nil
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

func (p *extractProc) push(r *Row) error {
	if p.ifm != nil && !p.ifm.match(r) {
		return p.next.push(r)
	}
	p.arena.reset()
	v := p.arena.addString(r.Get(p.from))
	if p.re != nil {
		p.matches = p.re.FindStringSubmatchIndex(v)
		for i, name := range p.names {
			if name == "" {
				continue
			}
			val := ""
			if p.matches != nil && p.matches[2*i] >= 0 {
				val = v[p.matches[2*i]:p.matches[2*i+1]]
			}
			p.set(r, name, val)
		}
		return p.next.push(r)
	}
	p.ep.apply(v)
	for i, part := range p.ep.parts {
		if part.hasField && part.field != "" {
			p.set(r, part.field, p.ep.values[i])
		}
	}
	return p.next.push(r)
}

// set stores one extracted value, honouring keep_original_fields and
// skip_empty_results.
func (p *extractProc) set(r *Row, name, val string) {
	if (val == "" && p.skip) || p.keep {
		if r.Get(name) != "" {
			return
		}
	}
	r.Set(name, val)
}

func (p *extractProc) flush() error { return p.next.flush() }

// formatProc implements format.
type formatProc struct {
	ifm    matcher
	parts  []patternPart
	result string
	keep   bool
	skip   bool
	next   processor
	buf    []byte
	arena  arena
}

func (p *PipeFormat) newProcessor(_ *plan, next processor) (processor, error) {
	return newFormatProc(p, next)
}

func newFormatProc(p *PipeFormat, next processor) (processor, error) {
	ifm, err := compileIf(p.If)
	if err != nil {
		return nil, err
	}
	return &formatProc{ifm: ifm, parts: parseFormatPattern(p.Pattern), result: fieldOrMsg(p.Result),
		keep: p.KeepOriginalFields, skip: p.SkipEmptyResults, next: next}, nil
}

func (p *formatProc) push(r *Row) error {
	if p.ifm != nil && !p.ifm.match(r) {
		return p.next.push(r)
	}
	p.arena.reset()
	b := p.buf[:0]
	for _, part := range p.parts {
		b = append(b, part.lit...)
		if !part.hasField || part.field == "" {
			continue
		}
		v := r.Get(part.field)
		switch part.modifier {
		case "uc":
			b = append(b, strings.ToUpper(v)...)
		case "lc":
			b = append(b, strings.ToLower(v)...)
		case "q":
			b = ndjson.AppendQuoted(b, v)
		case "urlencode":
			b = append(b, urlQueryEscape(v)...)
		default:
			b = append(b, v...)
		}
	}
	p.buf = b
	val := p.arena.add(b)
	if (val == "" && p.skip) || p.keep {
		if r.Get(p.result) != "" {
			return p.next.push(r)
		}
	}
	r.Set(p.result, val)
	return p.next.push(r)
}

func (p *formatProc) flush() error { return p.next.flush() }
