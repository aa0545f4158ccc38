package query

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// PipeReplace replaces text in a field (default _msg): "replace [if (f)]
// ("old", "new") [at field] [limit N]" replaces each occurrence of old, the
// first N with a limit; with Regexp, "replace_regexp [if (f)] ("re",
// "$1x") [at field] [limit N]" each match of the RE2 expression old, new
// expanded as regexp.Expand does ($1, ${name}). As in VictoriaLogs, an
// empty old replaces nothing, and a row without the field is left alone.
type PipeReplace struct {
	Regexp   bool
	If       Filter
	Old, New string
	Field    string
	Limit    int64
}

func (*PipeReplace) isPipe() {}

func (p *PipeReplace) String() string {
	s := "replace"
	if p.Regexp {
		s += "_regexp"
	}
	s += ifString(p.If) + " (" + strconv.Quote(p.Old) + ", " + strconv.Quote(p.New) + ")"
	if p.Field != "_msg" {
		s += " at " + quoteToken(p.Field)
	}
	if p.Limit > 0 {
		s += " limit " + strconv.FormatInt(p.Limit, 10)
	}
	return s
}

// parseReplacePipe parses replace and replace_regexp.
func (p *parser) parseReplacePipe(name string) (Pipe, error) {
	p.next()
	pr := &PipeReplace{Regexp: name == "replace_regexp", Field: "_msg"}
	if p.isKw("if") {
		f, err := p.parseIf()
		if err != nil {
			return nil, err
		}
		pr.If = f
	}
	if err := p.expectPunct("(", "after '"+name+"'"); err != nil {
		return nil, err
	}
	pos := p.cur().pos
	old, err := p.compound(stopsFuncArg, "the text to replace")
	if err != nil {
		return nil, err
	}
	if err := p.expectPunct(",", "between the arguments of "+name+"()"); err != nil {
		return nil, err
	}
	nw := ""
	if !p.isPunct(")") {
		if nw, err = p.compound(stopsFuncArg, "the replacement"); err != nil {
			return nil, err
		}
	}
	if err := p.expectPunct(")", "at the end of "+name+"(...)"); err != nil {
		return nil, err
	}
	if pr.Regexp {
		if _, err := regexp.Compile(old); err != nil {
			return nil, p.errorf(pos, "cannot compile the regexp %q of %s: %v", old, name, err)
		}
	}
	pr.Old, pr.New = old, nw
	if p.isKw("at") {
		p.next()
		if pr.Field, err = p.parseFieldName("field after 'at'"); err != nil {
			return nil, err
		}
	}
	if p.isKw("limit") {
		p.next()
		if pr.Limit, err = p.parseCount("limit"); err != nil {
			return nil, err
		}
	}
	return pr, nil
}

func (p *PipeReplace) newProcessor(_ *plan, next processor) (processor, error) {
	ifm, err := compileIf(p.If)
	if err != nil {
		return nil, err
	}
	rp := &replaceProc{p: p, ifm: ifm, next: next}
	if p.Regexp {
		if rp.re, err = regexp.Compile(p.Old); err != nil {
			return nil, fmt.Errorf("cannot compile regexp %q: %w", p.Old, err)
		}
	}
	return rp, nil
}

// replaceProc implements replace and replace_regexp.
type replaceProc struct {
	p     *PipeReplace
	ifm   matcher
	re    *regexp.Regexp
	next  processor
	buf   []byte
	arena arena
}

func (p *replaceProc) push(r *Row) error {
	if p.ifm != nil && !p.ifm.match(r) {
		return p.next.push(r)
	}
	v := r.Get(p.p.Field)
	if v == "" {
		return p.next.push(r)
	}
	p.arena.reset()
	if p.re != nil {
		p.buf = appendReplaceRegexp(p.buf[:0], v, p.re, p.p.New, p.p.Limit)
	} else {
		p.buf = appendReplace(p.buf[:0], v, p.p.Old, p.p.New, p.p.Limit)
	}
	r.Set(p.p.Field, p.arena.add(p.buf))
	return p.next.push(r)
}

func (p *replaceProc) flush() error { return p.next.flush() }

// appendReplace appends s with each occurrence of old replaced by nw, the
// first limit of them when limit > 0.
func appendReplace(dst []byte, s, old, nw string, limit int64) []byte {
	if old == "" {
		return append(dst, s...)
	}
	for n := int64(0); limit <= 0 || n < limit; n++ {
		i := strings.Index(s, old)
		if i < 0 {
			break
		}
		dst = append(append(dst, s[:i]...), nw...)
		s = s[i+len(old):]
	}
	return append(dst, s...)
}

// appendReplaceRegexp appends s with each match of re replaced by the
// expansion of tmpl, the first limit of them when limit > 0.
func appendReplaceRegexp(dst []byte, s string, re *regexp.Regexp, tmpl string, limit int64) []byte {
	n := -1
	if limit > 0 {
		n = int(min(limit, 1<<30))
	}
	prev := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, n) {
		dst = append(dst, s[prev:m[0]]...)
		dst = re.ExpandString(dst, tmpl, s, m)
		prev = m[1]
	}
	return append(dst, s[prev:]...)
}

// PipeDropEmptyFields drops the fields with empty values, and the rows left
// with no field: "drop_empty_fields".
type PipeDropEmptyFields struct{}

func (*PipeDropEmptyFields) isPipe()        {}
func (*PipeDropEmptyFields) String() string { return "drop_empty_fields" }

func (p *parser) parseDropEmptyFieldsPipe(string) (Pipe, error) {
	p.next()
	return &PipeDropEmptyFields{}, nil
}

func (p *PipeDropEmptyFields) newProcessor(_ *plan, next processor) (processor, error) {
	return &dropEmptyProc{next: next}, nil
}

type dropEmptyProc struct{ next processor }

func (p *dropEmptyProc) push(r *Row) error {
	fs := r.Fields[:0]
	for _, f := range r.Fields {
		if f.Value != "" {
			fs = append(fs, f)
		}
	}
	r.Fields = fs
	if len(fs) == 0 {
		return nil
	}
	return p.next.push(r)
}

func (p *dropEmptyProc) flush() error { return p.next.flush() }
