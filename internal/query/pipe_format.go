package query

import (
	"net/url"
	"strconv"
	"strings"
)

// PipeFormat builds a field from a pattern: "format [if (f)] \"<a>:<uc:b>\" as
// r [keep_original_fields] [skip_empty_results]". Placeholders may carry
// modifiers (uc, lc, q, ...). Result defaults to _msg.
type PipeFormat struct {
	If                 Filter
	Pattern            string
	Result             string
	KeepOriginalFields bool
	SkipEmptyResults   bool
}

func (*PipeFormat) isPipe() {}

func (p *PipeFormat) String() string {
	s := "format" + ifString(p.If) + " " + strconv.Quote(p.Pattern)
	if p.Result != "" && p.Result != "_msg" {
		s += " as " + quoteToken(p.Result)
	}
	return s + keepSkipString(p.KeepOriginalFields, p.SkipEmptyResults)
}

// parseFormatPipe parses "format [if (f)] "pattern" [as result]
// [keep_original_fields] [skip_empty_results]".
func (p *parser) parseFormatPipe(_ string) (Pipe, error) {
	p.next()
	pf := &PipeFormat{Result: "_msg"}
	if p.isKw("if") {
		f, err := p.parseIf()
		if err != nil {
			return nil, err
		}
		pf.If = f
	}
	pos := p.cur().pos
	pattern, err := p.compound(stopsGeneric, "pattern")
	if err != nil {
		return nil, err
	}
	for _, name := range patternFields(pattern) {
		if strings.HasSuffix(name, "*") {
			return nil, p.errorf(pos, "the pattern %q of format cannot use a '*' pattern <%s>", pattern, name)
		}
	}
	pf.Pattern = pattern
	if p.isKw("as") {
		p.next()
		name, err := p.parseFieldName("result field after 'as'")
		if err != nil {
			return nil, err
		}
		pf.Result = name
	}
	pf.KeepOriginalFields, pf.SkipEmptyResults = p.parseKeepSkip()
	return pf, nil
}

func (p *PipeFormat) newProcessor(_ *plan, next processor) (processor, error) {
	return newFormatProc(p, next)
}

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
			b = appendJSONStringVL(b, v)
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

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
