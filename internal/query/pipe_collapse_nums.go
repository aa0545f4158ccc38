package query

import "strings"

// PipeCollapseNums replaces the numbers in a field (default _msg) with
// "<N>": "collapse_nums [if (f)] [at field] [prettify]". A number is a run
// of decimal and hex digits that starts and ends a word (or sits next to
// one of the unit or prefix letters VictoriaLogs allows: 0x<N>, <N>ms,
// v<N>); a run with hex letters must have an even length of at least 4.
// prettify then names common shapes: <UUID>, <IP4>, <TIME>, <DATE>,
// <DATETIME>. As in VictoriaLogs, a row the if filter rejects is left
// alone, and a row without the field gets it empty.
type PipeCollapseNums struct {
	If       Filter
	Field    string
	Prettify bool
}

func (*PipeCollapseNums) isPipe() {}

func (p *PipeCollapseNums) String() string {
	s := "collapse_nums" + ifString(p.If)
	if p.Field != "_msg" {
		s += " at " + quoteToken(p.Field)
	}
	if p.Prettify {
		s += " prettify"
	}
	return s
}

// parseCollapseNumsPipe parses "collapse_nums [if (f)] [at field] [prettify]".
func (p *parser) parseCollapseNumsPipe(_ string) (Pipe, error) {
	p.next()
	pc := &PipeCollapseNums{Field: "_msg"}
	if p.isKw("if") {
		f, err := p.parseIf()
		if err != nil {
			return nil, err
		}
		pc.If = f
	}
	if p.isKw("at") {
		p.next()
		var err error
		if pc.Field, err = p.parseFieldName("field after 'at'"); err != nil {
			return nil, err
		}
	}
	if p.isKw("prettify") {
		p.next()
		pc.Prettify = true
	}
	return pc, nil
}

func (p *PipeCollapseNums) newProcessor(_ *plan, next processor) (processor, error) {
	ifm, err := compileIf(p.If)
	if err != nil {
		return nil, err
	}
	return &collapseNumsProc{p: p, ifm: ifm, next: next}, nil
}

type collapseNumsProc struct {
	p         *PipeCollapseNums
	ifm       matcher
	next      processor
	buf, buf2 []byte
}

func (p *collapseNumsProc) push(r *Row) error {
	if p.ifm != nil && !p.ifm.match(r) {
		return p.next.push(r)
	}
	p.buf = appendCollapsedNums(p.buf[:0], r.Get(p.p.Field))
	if p.p.Prettify {
		p.buf, p.buf2 = appendPrettified(p.buf, p.buf2)
	}
	r.Set(p.p.Field, unsafeString(p.buf))
	return p.next.push(r)
}

func (p *collapseNumsProc) flush() error { return p.next.flush() }

// appendCollapsedNums appends s with every number replaced by "<N>".
func appendCollapsedNums(dst []byte, s string) []byte {
	i := 0
	for i < len(s) {
		start := numStart(s, i)
		if start < 0 {
			break
		}
		end := start
		for end < len(s) && isHexDigit(s[end]) {
			end++
		}
		dst = append(dst, s[i:start]...)
		if collapsible(s, start, end) {
			dst = append(dst, "<N>"...)
		} else {
			dst = append(dst, s[start:end]...)
		}
		i = end
	}
	return append(dst, s[i:]...)
}

// collapsible reports whether the run s[start:end] is a number: what
// follows it is not a word byte, or is a unit letter; and a run with hex
// letters has an even length of at least 4.
func collapsible(s string, start, end int) bool {
	if end < len(s) && isTokenByte(s[end]) && strings.IndexByte("_TZsmhun", s[end]) < 0 {
		return false
	}
	run := s[start:end]
	for i := 0; i < len(run); i++ {
		if run[i] > '9' {
			return len(run) >= 4 && len(run)%2 == 0
		}
	}
	return true
}

// prettifySteps are prettify's replacements, applied in order to the whole
// text, each with what it swallows after a match.
var prettifySteps = []struct {
	old, nw string
	tail    func(s string) int
}{
	{"<N>-<N>-<N>-<N>-<N>", "<UUID>", nil},
	{"<N>.<N>.<N>.<N>", "<IP4>", nil},
	{"<N>:<N>:<N>", "<TIME>", subsecondsTail},
	{"<N>-<N>-<N>", "<DATE>", nil},
	{"<N>/<N>/<N>", "<DATE>", nil},
	{"<DATE>T<TIME>", "<DATETIME>", zoneTail},
	{"<DATE> <TIME>", "<DATETIME>", zoneTail},
}

func subsecondsTail(s string) int {
	if strings.HasPrefix(s, ".<N>") || strings.HasPrefix(s, ",<N>") {
		return 4
	}
	return 0
}

func zoneTail(s string) int {
	switch {
	case strings.HasPrefix(s, "Z"):
		return 1
	case strings.HasPrefix(s, "-<N>:<N>"), strings.HasPrefix(s, "+<N>:<N>"):
		return 8
	}
	return 0
}

// appendPrettified applies prettifySteps to b, using tmp as scratch; it
// returns the result and the other buffer.
func appendPrettified(b, tmp []byte) (out, spare []byte) {
	for _, st := range prettifySteps {
		s := unsafeString(b)
		if !strings.Contains(s, st.old) {
			continue
		}
		tmp = tmp[:0]
		for {
			n := strings.Index(s, st.old)
			if n < 0 {
				break
			}
			tmp = append(append(tmp, s[:n]...), st.nw...)
			s = s[n+len(st.old):]
			if st.tail != nil {
				s = s[st.tail(s):]
			}
		}
		tmp = append(tmp, s...)
		b, tmp = tmp, b
	}
	return b, tmp
}
