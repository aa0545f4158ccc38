package query

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// PipeExtract applies a pattern with <name> placeholders to From (default
// _msg): "extract [if (f)] \"ip=<ip> \" [from f] [keep_original_fields]
// [skip_empty_results]". "<_>" matches without storing.
type PipeExtract struct {
	If                 Filter
	Pattern            string
	From               string
	KeepOriginalFields bool
	SkipEmptyResults   bool
}

// PipeExtractRegexp is extract with an RE2 expression whose named groups
// (?P<name>...) become fields: "extract_regexp [if (f)] \"re\" [from f]".
type PipeExtractRegexp struct {
	If                 Filter
	Expr               string
	From               string
	KeepOriginalFields bool
	SkipEmptyResults   bool
}

func (*PipeExtract) isPipe() {}

func (*PipeExtractRegexp) isPipe() {}

func (p *PipeExtract) String() string {
	return "extract" + ifString(p.If) + " " + strconv.Quote(p.Pattern) + fromString(p.From) +
		keepSkipString(p.KeepOriginalFields, p.SkipEmptyResults)
}

func (p *PipeExtractRegexp) String() string {
	return "extract_regexp" + ifString(p.If) + " " + strconv.Quote(p.Expr) + fromString(p.From) +
		keepSkipString(p.KeepOriginalFields, p.SkipEmptyResults)
}

// parseExtractPipe parses extract and extract_regexp:
// "extract [if (f)] "pattern" [from f] [keep_original_fields] [skip_empty_results]".
func (p *parser) parseExtractPipe(name string) (Pipe, error) {
	p.next()
	var iff Filter
	if p.isKw("if") {
		f, err := p.parseIf()
		if err != nil {
			return nil, err
		}
		iff = f
	}
	from := "_msg"
	if p.isKw("from") {
		p.next()
		f, err := p.parseFieldName("field after 'from'")
		if err != nil {
			return nil, err
		}
		from = f
	}
	patPos := p.cur().pos
	pattern, err := p.compound(stopsGeneric, "pattern")
	if err != nil {
		return nil, err
	}
	if p.isKw("from") {
		p.next()
		f, err := p.parseFieldName("field after 'from'")
		if err != nil {
			return nil, err
		}
		from = f
	}
	keep, skip := p.parseKeepSkip()
	if name == "extract" {
		if err := p.checkExtractPattern(patPos, pattern); err != nil {
			return nil, err
		}
		return &PipeExtract{If: iff, Pattern: pattern, From: from, KeepOriginalFields: keep, SkipEmptyResults: skip}, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, p.errorHint(patPos, "the syntax is RE2: https://github.com/google/re2/wiki/Syntax",
			"invalid regexp %q: %s", pattern, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	named := slices.ContainsFunc(re.SubexpNames(), func(s string) bool { return s != "" })
	if !named {
		return nil, p.errorHint(patPos, `name a group like this: (?P<name>[0-9]+)`,
			"the regexp %q of extract_regexp has no named group", pattern)
	}
	return &PipeExtractRegexp{If: iff, Expr: pattern, From: from, KeepOriginalFields: keep, SkipEmptyResults: skip}, nil
}

// checkExtractPattern checks that an extract pattern has at least one named
// placeholder such as <ip> (<_> matches without storing).
func (p *parser) checkExtractPattern(pos int, pattern string) error {
	for _, name := range patternFields(pattern) {
		if name != "_" && name != "" {
			return nil
		}
	}
	return p.errorHint(pos, `name a placeholder like this: "ip=<ip> "`,
		"the pattern %q of extract must have at least one named placeholder <name>", pattern)
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
