package query

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// This file parses the filter expression: OR of ANDs of (possibly negated)
// leaf filters, with parentheses. NOT binds tighter than AND, and AND
// tighter than OR. Whitespace between filters means AND. A field name before
// ':' applies to the leaf after it, or to every leaf of a parenthesized group
// ("service:(auth OR billing)").

// parseOr parses "a OR b OR ..." up to '|', ')' or the end. field is the
// field of the enclosing "field:(...)" group, or "" for none.
func (p *parser) parseOr(field string) (Filter, error) {
	var fs []Filter
	for {
		f, err := p.parseAnd(field)
		if err != nil {
			return nil, err
		}
		if o, ok := f.(*FilterOr); ok {
			fs = append(fs, o.Filters...)
		} else {
			fs = append(fs, f)
		}
		if !p.isKw("or") {
			break
		}
		orPos := p.cur().pos
		p.next()
		if p.isTrailer() {
			return nil, p.errorf(orPos, "missing filter after 'or'")
		}
	}
	if len(fs) == 1 {
		return fs[0], nil
	}
	return &FilterOr{Filters: fs}, nil
}

// parseAnd parses "a b", "a AND b" up to OR, '|', ')' or the end.
func (p *parser) parseAnd(field string) (Filter, error) {
	var fs []Filter
	for {
		f, err := p.parseGeneric(field)
		if err != nil {
			return nil, err
		}
		if a, ok := f.(*FilterAnd); ok {
			fs = append(fs, a.Filters...)
		} else {
			fs = append(fs, f)
		}
		if p.isTrailer() || p.isKw("or") {
			break
		}
		if p.isKw("and") {
			andPos := p.cur().pos
			p.next()
			if p.isTrailer() {
				return nil, p.errorf(andPos, "missing filter after 'and'")
			}
		}
	}
	if len(fs) == 1 {
		return fs[0], nil
	}
	return &FilterAnd{Filters: fs}, nil
}

// checkAdjacent fails when the current token is glued to the previous one in
// a way that makes the query ambiguous, such as `foo(bar)` or `"a"b`.
func (p *parser) checkAdjacent() error {
	t := p.cur()
	if t.space || p.i == 0 {
		return nil
	}
	prev := &p.toks[p.i-1]
	if prev.kind == lexPunct {
		switch prev.text {
		case "|", ":", "(", "!", "-":
			return nil
		}
	}
	if t.kind == lexPunct && t.text == "(" && tokIsKw(prev, "not", "and", "or") {
		return nil
	}
	return p.errorHint(t.pos, "separate filters with whitespace, or put the whole value in quotes",
		"missing whitespace between %q and %q", prev.raw, t.raw)
}

// parseGeneric parses one leaf filter, a negation or a parenthesized group.
func (p *parser) parseGeneric(field string) (Filter, error) {
	t := p.cur()
	if t.kind == lexEOF {
		return nil, p.errorf(t.pos, "missing filter; got end of query")
	}
	if err := p.checkAdjacent(); err != nil {
		return nil, err
	}
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer p.leave()
	if t.kind == lexPunct {
		switch t.text {
		case "*":
			return p.parseStar(field)
		case "(":
			return p.parseGroup(field)
		case ">", "<":
			return p.parseCompare(field)
		case "=":
			p.next()
			return p.parseExactValue(field)
		case "!=":
			p.next()
			f, err := p.parseExactValue(field)
			if err != nil {
				return nil, err
			}
			return &FilterNot{Filter: f}, nil
		case "~":
			return p.parseTilde(field)
		case "!~":
			f, err := p.parseTilde(field)
			if err != nil {
				return nil, err
			}
			return &FilterNot{Filter: f}, nil
		case "!", "-":
			return p.parseNot(field)
		case "{":
			if field != "" && field != "_msg" {
				return nil, p.errorf(t.pos, "a stream filter {...} cannot apply to field %s", quoteToken(field))
			}
			return p.parseStreamFilter()
		case "=~":
			return nil, p.errorHint(t.pos, `write field:~"regexp"`, "unexpected '=~'")
		case ",", ")", "[", "]", "|":
			return nil, p.errorf(t.pos, "unexpected %s; expecting a filter", p.describe())
		}
	}
	if t.kind == lexWord {
		name := strings.ToLower(t.text)
		next := p.peek(1)
		isCall := next.kind == lexPunct && (next.text == "(" || name == "range" && next.text == "[")
		switch {
		case name == "not":
			return p.parseNot(field)
		case isCall && slices.Contains(unsupportedFilterFuncs, name):
			return nil, p.unsupportedFilter(t.pos, name)
		case isCall && slices.Contains(supportedFilterFuncs, name):
			return p.parseFilterFunc(field, name)
		}
	}
	return p.parsePhrase(field)
}

// unsupportedFilter returns the error for a VictoriaLogs filter that spate
// does not implement.
func (p *parser) unsupportedFilter(pos int, name string) error {
	return p.errorf(pos, "filter %q is not supported by spate", name)
}

// parseNot parses "NOT f", "!f" and "-f". A double negation cancels out.
func (p *parser) parseNot(field string) (Filter, error) {
	t := p.cur()
	p.next()
	if p.isTrailer() {
		return nil, p.errorf(p.cur().pos, "missing filter after %q", t.raw)
	}
	f, err := p.parseGeneric(field)
	if err != nil {
		return nil, err
	}
	if n, ok := f.(*FilterNot); ok {
		return n.Filter, nil
	}
	return &FilterNot{Filter: f}, nil
}

// parseGroup parses "(...)".
func (p *parser) parseGroup(field string) (Filter, error) {
	open := p.cur().pos
	p.next()
	f, err := p.parseOr(field)
	if err != nil {
		return nil, err
	}
	if !p.isPunct(")") {
		return nil, p.errorHint(p.cur().pos, fmt.Sprintf("close the '(' at column %d", p.column(open)),
			"missing ')'; got %s", p.describe())
	}
	p.next()
	return f, nil
}

// column returns the 1-based rune column of byte offset pos.
func (p *parser) column(pos int) int {
	return (&ParseError{Query: p.src, Pos: pos}).Column()
}

// parseStar parses "*" (every row), "field:*" (non-empty values) and
// "*substring*".
func (p *parser) parseStar(field string) (Filter, error) {
	pos := p.cur().pos
	p.next()
	if p.isPunct(":") && !p.cur().space && field == "" {
		return nil, p.unsupportedFilter(pos, "*:...")
	}
	if p.cur().space || p.isTrailer() {
		if field == "" {
			return &FilterAll{}, nil
		}
		return &FilterPrefix{Field: field}, nil
	}
	// "*substring*" matches values containing the substring anywhere.
	s, err := p.compound(stopsPhrase, "substring after '*'")
	if err != nil {
		return nil, err
	}
	if !p.isPunct("*") || p.cur().space {
		return nil, p.errorHint(p.cur().pos, fmt.Sprintf("write *%s* for a substring filter", s),
			"missing '*' at the end of *%s", s)
	}
	p.next()
	return &FilterRegexp{Field: canonicalField(field), Expr: regexp.QuoteMeta(s)}, nil
}

// parseCompare parses ">v", ">=v", "<v" and "<=v" (the field is already
// read).
func (p *parser) parseCompare(field string) (Filter, error) {
	op := p.cur().text
	p.next()
	if p.isPunct("=") && !p.cur().space {
		op += "="
		p.next()
	}
	s, err := p.compound(stopsGeneric, "value after '"+op+"'")
	if err != nil {
		return nil, err
	}
	f := &FilterCompare{Field: canonicalField(field), Op: op}
	if n, ok := parseBoundLit(s); ok {
		f.Num = n
		f.Text = s
	} else {
		f.IsString = true
		f.Value = s
	}
	return f, nil
}

// parseExactValue parses the value after '=' (already consumed): `v` or
// `"v"`, with an optional '*' for a prefix.
func (p *parser) parseExactValue(field string) (Filter, error) {
	v := ""
	if !p.atEOF() && !isStop(p.cur(), stopsFuncArg) {
		s, err := p.compound(stopsFuncArg, "value after '='")
		if err != nil {
			return nil, err
		}
		v = s
	}
	f := &FilterExact{Field: canonicalField(field), Value: v}
	if p.isPunct("*") && !p.cur().space {
		p.next()
		f.Prefix = true
	}
	return f, nil
}

// parseTilde parses `~"regexp"` (and the part after "!~").
func (p *parser) parseTilde(field string) (Filter, error) {
	p.next()
	pos := p.cur().pos
	s, err := p.compound(stopsGeneric, "regexp after '~'")
	if err != nil {
		return nil, err
	}
	return p.newRegexp(pos, field, s)
}

// newRegexp checks expr with regexp.Compile and returns the filter.
func (p *parser) newRegexp(pos int, field, expr string) (Filter, error) {
	if _, err := regexp.Compile(expr); err != nil {
		return nil, p.errorHint(pos, "the syntax is RE2: https://github.com/google/re2/wiki/Syntax",
			"invalid regexp %q: %s", expr, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return &FilterRegexp{Field: canonicalField(field), Expr: expr}, nil
}

// parseFilterFunc parses in(), contains_any(), contains_all(), seq(), i(),
// exact(), re() and range(); the current token is the name.
func (p *parser) parseFilterFunc(field, name string) (Filter, error) {
	field = canonicalField(field)
	namePos := p.cur().pos
	switch name {
	case "i", "exact":
		p.next() // name
		p.next() // (
		arg := ""
		if !p.isPunct("*") {
			s, err := p.compound(stopsFuncArg, "argument of "+name+"()")
			if err != nil {
				return nil, err
			}
			arg = s
		}
		prefix := false
		if p.isPunct("*") && !p.cur().space {
			p.next()
			prefix = true
		}
		if err := p.expectPunct(")", "at the end of "+name+"()"); err != nil {
			return nil, err
		}
		switch {
		case name == "exact":
			return &FilterExact{Field: field, Value: arg, Prefix: prefix}, nil
		case prefix:
			return &FilterPrefix{Field: field, Prefix: arg, CaseInsensitive: true}, nil
		default:
			return &FilterPhrase{Field: field, Phrase: arg, CaseInsensitive: true}, nil
		}
	case "range":
		return p.parseRange(field)
	}

	if (name == "in" || name == "contains_any" || name == "contains_all") && p.peekSubquery() {
		p.next() // name
		sub, err := p.parseSubquery(name + "()")
		if err != nil {
			return nil, err
		}
		subField, err := valuesField(sub)
		if err != nil {
			return nil, p.errorf(namePos, "cannot take the values of %s(%s): %v", name, sub, err)
		}
		switch name {
		case "in":
			return &FilterIn{Field: field, Sub: sub, SubField: subField}, nil
		case "contains_any":
			return &FilterContainsAny{Field: field, Sub: sub, SubField: subField}, nil
		}
		return &FilterContainsAll{Field: field, Sub: sub, SubField: subField}, nil
	}
	args, wildcard, err := p.parseArgList(name)
	if err != nil {
		return nil, err
	}
	switch name {
	case "in":
		if wildcard {
			return &FilterAll{}, nil
		}
		return &FilterIn{Field: field, Values: args}, nil
	case "contains_any":
		if wildcard {
			return &FilterAll{}, nil
		}
		return &FilterContainsAny{Field: field, Phrases: args}, nil
	case "contains_all":
		if wildcard {
			return &FilterAll{}, nil
		}
		return &FilterContainsAll{Field: field, Phrases: args}, nil
	case "seq":
		return &FilterSeq{Field: field, Phrases: args}, nil
	case "re":
		if len(args) != 1 {
			return nil, p.errorf(namePos, "re() needs exactly one argument; got %d", len(args))
		}
		return p.newRegexp(namePos, field, args[0])
	case "len_range", "string_range", "ipv4_range", "ipv6_range", "eq_field", "le_field", "lt_field":
		if wildcard {
			return nil, p.errorf(namePos, "%s() takes no '*'", name)
		}
		f, msg := parseBoundFilter(field, name, args)
		if f == nil {
			return nil, p.errorf(namePos, "%s", msg)
		}
		return f, nil
	}
	if wildcard {
		// As in VictoriaLogs, whose wildcard arguments are those above.
		return nil, p.errorHint(namePos, `write "*" for the text *`, "%s() takes no unquoted '*'", name)
	}
	switch name {
	case "contains_common_case", "equals_common_case":
		f, msg := newFilterCommonCase(field, args, name == "equals_common_case")
		if f == nil {
			return nil, p.errorf(namePos, "%s", msg)
		}
		return f, nil
	case "json_array_contains_any":
		return &FilterJSONArrayContainsAny{Field: field, Values: args}, nil
	case "pattern_match", "pattern_match_full", "pattern_match_prefix", "pattern_match_suffix":
		if len(args) != 1 {
			return nil, p.errorHint(namePos, "write "+name+"(\"<N> ms\")", "%s() needs exactly one argument, the pattern; got %d", name, len(args))
		}
		return &FilterPatternMatch{Field: field, Func: name, Pattern: args[0]}, nil
	}
	panic("BUG: unexpected filter function " + name)
}

// parseArgList parses "name(a, "b", 500)" for in() and similar; the current
// token is the name. wildcard reports an unquoted '*' argument.
func (p *parser) parseArgList(name string) (args []string, wildcard bool, err error) {
	namePos := p.cur().pos
	p.next() // name
	if p.hasSubquery() {
		return nil, false, p.unsupportedFilter(namePos, name+"(subquery)")
	}
	p.next() // (
	for !p.isPunct(")") {
		switch {
		case p.atEOF():
			return nil, false, p.errorHint(p.cur().pos, fmt.Sprintf("close the %s( at column %d", name, p.column(namePos)),
				"missing ')' at the end of %s()", name)
		case p.isPunct(","), p.isPunct("("):
			return nil, false, p.errorf(p.cur().pos, "unexpected %s in %s()", p.describe(), name)
		}
		arg := "*"
		if p.isPunct("*") {
			p.next()
			wildcard = name != "seq"
		} else {
			arg, err = p.compound(stopsFuncArg, "argument of "+name+"()")
			if err != nil {
				return nil, false, err
			}
		}
		args = append(args, arg)
		if p.isPunct(")") {
			break
		}
		if p.atEOF() {
			return nil, false, p.errorHint(p.cur().pos, fmt.Sprintf("close the %s( at column %d", name, p.column(namePos)),
				"missing ')' at the end of %s()", name)
		}
		if !p.isPunct(",") {
			return nil, false, p.errorf(p.cur().pos, "missing ',' or ')' after %q in %s(); got %s", arg, name, p.describe())
		}
		p.next()
	}
	p.next()
	return args, wildcard, nil
}

// hasSubquery reports whether the parentheses that start at the current
// token hold a '|', that is, a subquery such as "in(* | fields x)".
// peekSubquery is hasSubquery for the '(' after the current token (a
// function's name).
func (p *parser) peekSubquery() bool {
	p.i++
	defer func() { p.i-- }()
	return p.hasSubquery()
}

func (p *parser) hasSubquery() bool {
	depth := 0
	for _, t := range p.toks[p.i:] {
		if t.kind != lexPunct {
			continue
		}
		// Brackets count as parentheses: a range may open with one and
		// close with the other (range[1, 5), _time:[a, b)).
		switch t.text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
			if depth == 0 {
				return false
			}
		case "|":
			return true
		}
	}
	return false
}

// parseRange parses "range(lo, hi)" with '(' or '[' and ')' or ']'.
func (p *parser) parseRange(field string) (Filter, error) {
	p.next() // range
	open := p.cur().text
	p.next()
	lo, loText, err := p.parseRangeBound("lower")
	if err != nil {
		return nil, err
	}
	if err := p.expectPunct(",", "between the bounds of range()"); err != nil {
		return nil, err
	}
	hi, hiText, err := p.parseRangeBound("upper")
	if err != nil {
		return nil, err
	}
	if !p.isPunct(")") && !p.isPunct("]") {
		return nil, p.errorf(p.cur().pos, "range() must end with ')' or ']'; got %s", p.describe())
	}
	closing := p.cur().text
	p.next()
	return &FilterRange{
		Field: field, Lo: lo, Hi: hi,
		LoInc: open == "[", HiInc: closing == "]",
		LoText: loText, HiText: hiText,
	}, nil
}

// parseRangeBound reads one numeric bound of range().
func (p *parser) parseRangeBound(which string) (float64, string, error) {
	pos := p.cur().pos
	s, err := p.compound(stopsGeneric, which+" bound of range()")
	if err != nil {
		return 0, "", err
	}
	n, ok := parseBoundLit(s)
	if !ok {
		return 0, "", p.errorHint(pos, "bounds are numbers such as 10, -1.5, 1e3, 10KiB, 1.5s, -inf or inf",
			"cannot parse %s bound %q of range() as a number", which, s)
	}
	return n, s, nil
}

// parsePhrase parses a word, a quoted phrase, a prefix ("err*", `"cache
// mi"*`) or, when followed by ':', a field name and the filter after it.
func (p *parser) parsePhrase(field string) (Filter, error) {
	stops := stopsPhrase
	if field == "" {
		stops = stopsPhraseNoField
	}
	pos := p.cur().pos
	s, quoted, err := p.compoundQ(stops, "filter")
	if err != nil {
		return nil, err
	}
	if p.isPunct("*") && !p.cur().space {
		p.next()
		if field == "" && p.isPunct(":") && !p.cur().space {
			return nil, p.errorf(pos, "field name prefix filter %s:... is not supported", quoteToken(s)+"*")
		}
		return &FilterPrefix{Field: canonicalField(field), Prefix: s}, nil
	}
	if field != "" || !p.isPunct(":") {
		return &FilterPhrase{Field: canonicalField(field), Phrase: s}, nil
	}

	// s is a field name.
	p.next() // :
	if !quoted {
		switch s {
		case "_time":
			return p.parseTimeFilter()
		case "_stream":
			if !p.isPunct("{") {
				return nil, p.errorHint(p.cur().pos, `write _stream:{name="value"}`, "missing '{' after _stream:")
			}
			return p.parseStreamFilter()
		case "_stream_id":
			return p.parseStreamIDFilter(pos)
		}
	}
	if p.isTrailer() {
		return nil, p.errorHint(p.cur().pos, fmt.Sprintf(`write %s:"" for empty values or %s:* for non-empty ones`, quoteToken(s), quoteToken(s)),
			"missing filter after field name %s", quoteToken(s))
	}
	return p.parseGeneric(canonicalField(s))
}

// parseStreamFilter parses {tag op value, ... or ...}; the current token is
// '{'. Tag names and values are compound tokens or quoted strings, as in
// VictoriaLogs' parseStreamFilter.
func (p *parser) parseStreamFilter() (Filter, error) {
	open := p.cur().pos
	p.next() // {
	f := &FilterStream{}
	var group []StreamTagFilter
	for {
		if p.isPunct("}") {
			p.next()
			f.Or = append(f.Or, group)
			return f, nil
		}
		if p.atEOF() {
			return nil, p.errorHint(p.cur().pos, fmt.Sprintf("close the { at column %d", p.column(open)), "missing '}' at the end of the stream filter")
		}
		tag, err := p.parseStreamTag()
		if err != nil {
			return nil, err
		}
		group = append(group, tag)
		switch {
		case p.isPunct(","):
			p.next()
			if p.isPunct("}") {
				return nil, p.errorf(p.cur().pos, "missing stream tag filter after ','")
			}
		case p.isKw("or"):
			p.next()
			if p.isPunct("}") {
				return nil, p.errorf(p.cur().pos, "missing stream tag filter after 'or'")
			}
			f.Or = append(f.Or, group)
			group = nil
		case p.isPunct("}"):
		case p.atEOF():
			return nil, p.errorHint(p.cur().pos, fmt.Sprintf("close the { at column %d", p.column(open)), "missing '}' at the end of the stream filter")
		default:
			return nil, p.errorf(p.cur().pos, "unexpected %s in the stream filter; want ',', 'or' or '}'", p.describe())
		}
	}
}

// streamOps are the operators of a stream tag filter, besides in and
// not_in.
var streamOps = []string{"=", "!=", "=~", "!~"}

// parseStreamTag parses one "name op value" inside {...}.
func (p *parser) parseStreamTag() (StreamTagFilter, error) {
	var tag StreamTagFilter
	name, err := p.streamToken("stream tag name")
	if err != nil {
		return tag, err
	}
	tag.Name = name
	t := p.cur()
	switch {
	case t.kind == lexPunct && slices.Contains(streamOps, t.text):
		tag.Op = t.text
		p.next()
		if tag.Value, err = p.streamToken("value of stream tag " + quoteToken(name)); err != nil {
			return tag, err
		}
		if tag.Op == "=~" || tag.Op == "!~" {
			if _, err := regexp.Compile("^(?:" + tag.Value + ")$"); err != nil {
				return tag, p.errorf(t.pos, "invalid regexp %q for stream tag %s: %s", tag.Value, quoteToken(name),
					strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
		}
	case p.isKw("in", "not_in") && p.peek(1).kind == lexPunct && p.peek(1).text == "(":
		tag.Op = strings.ToLower(t.text)
		args, wildcard, err := p.parseArgList(tag.Op)
		if err != nil {
			return tag, err
		}
		if wildcard {
			tag.Any = true
		} else {
			tag.Values = args
		}
	default:
		return tag, p.errorf(t.pos, "unsupported operation %s after stream tag %s; want =, !=, =~, !~, in() or not_in()", p.describe(), quoteToken(name))
	}
	return tag, nil
}

// streamToken reads a tag name or value inside {...}: a quoted string, or
// the tokens glued together up to whitespace, an operator, ',', '{', '}'
// or parentheses.
func (p *parser) streamToken(what string) (string, error) {
	t := p.cur()
	switch {
	case t.kind == lexBadQuote:
		return "", p.errorHint(t.pos, "write a quote inside a value as \\\" or put the value in backquotes", "%s", t.err)
	case t.kind == lexQuoted:
		p.next()
		return t.text, nil
	case t.kind == lexEOF || isStreamStop(t):
		return "", p.errorf(t.pos, "missing %s; got %s", what, p.describe())
	}
	var b strings.Builder
	for {
		b.WriteString(t.raw)
		p.next()
		t = p.cur()
		if t.space || t.kind == lexEOF || t.kind == lexQuoted || isStreamStop(t) {
			return b.String(), nil
		}
	}
}

func isStreamStop(t *lexToken) bool {
	return t.kind == lexPunct && (slices.Contains(streamOps, t.text) || isStop(t, ",{}()|"))
}

// parseStreamIDFilter parses what follows "_stream_id:": an ID, or in(IDs).
func (p *parser) parseStreamIDFilter(pos int) (Filter, error) {
	if p.isKw("in") && p.peek(1).kind == lexPunct && p.peek(1).text == "(" {
		if p.peekSubquery() {
			inPos := p.cur().pos
			p.next()
			sub, err := p.parseSubquery("_stream_id:in()")
			if err != nil {
				return nil, err
			}
			subField, err := valuesField(sub)
			if err != nil {
				return nil, p.errorf(inPos, "cannot take the values of _stream_id:in(%s): %v", sub, err)
			}
			return &FilterStreamID{In: true, Sub: sub, SubField: subField}, nil
		}
		args, wildcard, err := p.parseArgList("in")
		if err != nil {
			return nil, err
		}
		if wildcard {
			return &FilterAll{}, nil
		}
		return &FilterStreamID{IDs: args, In: true}, nil
	}
	if p.isTrailer() {
		return nil, p.errorf(pos, "missing stream ID after _stream_id:")
	}
	id, err := p.compound(stopsFuncArg, "stream ID")
	if err != nil {
		return nil, err
	}
	return &FilterStreamID{IDs: []string{id}}, nil
}
