package query

import (
	"strings"
	"unicode/utf8"
)

// PipeSplit splits From (default _msg) at each Separator into a JSON array
// of strings stored in Result (default From): "split sep [from f] [as
// r]". As in VictoriaLogs, an empty separator splits into characters, an
// empty value gives [""] (and [] with an empty separator), and a value
// ending in the separator has an empty last element.
type PipeSplit struct {
	Separator    string
	From, Result string
}

func (*PipeSplit) isPipe() {}

func (p *PipeSplit) String() string {
	s := "split " + quoteToken(p.Separator)
	if p.From != "_msg" {
		s += " from " + quoteToken(p.From)
	}
	if p.Result != p.From {
		s += " as " + quoteToken(p.Result)
	}
	return s
}

// parseSplitPipe parses "split sep [[from] f] [[as] r]".
func (p *parser) parseSplitPipe(_ string) (Pipe, error) {
	p.next()
	if p.isTrailer() || p.isKw("as", "from") {
		return nil, p.errorHint(p.cur().pos, `for example: split ", " from tags as list`, "missing split separator; got %s", p.describe())
	}
	sep, err := p.compound(stopsGeneric, "split separator")
	if err != nil {
		return nil, err
	}
	ps := &PipeSplit{Separator: sep, From: "_msg"}
	if !p.isTrailer() && !p.isKw("as") {
		if p.isKw("from") {
			p.next()
		}
		if ps.From, err = p.parseFieldName("field after 'from'"); err != nil {
			return nil, err
		}
	}
	ps.Result = ps.From
	if !p.isTrailer() {
		if p.isKw("as") {
			p.next()
		}
		if ps.Result, err = p.parseFieldName("result field"); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

func (p *PipeSplit) newProcessor(_ *plan, next processor) (processor, error) {
	return &splitProc{p: p, next: next}, nil
}

type splitProc struct {
	p    *PipeSplit
	next processor
	buf  []byte
}

func (p *splitProc) push(r *Row) error {
	p.buf = appendSplitJSON(p.buf[:0], r.Get(p.p.From), p.p.Separator)
	r.Set(p.p.Result, unsafeString(p.buf))
	return p.next.push(r)
}

func (p *splitProc) flush() error { return p.next.flush() }

// appendSplitJSON appends the JSON array of the pieces of s between
// occurrences of sep (of its characters when sep is empty).
func appendSplitJSON(dst []byte, s, sep string) []byte {
	dst = append(dst, '[')
	n := 0
	elem := func(v string) {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendJSONStringVL(dst, v)
	}
	if sep == "" {
		for len(s) > 0 {
			_, size := utf8.DecodeRuneInString(s)
			r := s[:size]
			if size == 1 && r[0] >= utf8.RuneSelf {
				r = "\uFFFD" // as a Go range over the string reads it
			}
			elem(r)
			s = s[size:]
		}
		return append(dst, ']')
	}
	for {
		i := strings.Index(s, sep)
		if i < 0 {
			elem(s)
			break
		}
		elem(s[:i])
		s = s[i+len(sep):]
	}
	return append(dst, ']')
}
