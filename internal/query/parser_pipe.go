package query

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// This file parses the pipes after the filter: parsePipe looks the pipe's
// name up in the table of parse functions (getPipeParsers), each in its
// pipe's file (pipe_limit.go, ...), and the helpers here read what several
// pipes share: counts, "if (...)", field names and lists.

// pipeParseFunc parses one pipe. The current token is the pipe's name;
// name is that name in lower case, as the table lists it (some pipes quote
// it in errors).
type pipeParseFunc func(p *parser, name string) (Pipe, error)

var (
	pipeParsers     map[string]pipeParseFunc
	pipeParsersOnce sync.Once
)

// getPipeParsers returns the parse function of every pipe name and alias
// spate supports: the one table of its pipes. isPipeName, the hints for
// misspelt names and the words String() quotes take their names from it.
// It is built on first use, as VictoriaLogs builds its own, and not by a
// variable's initializer: the parse functions refer (through quoteToken)
// to the reserved words, which are made from these names, and Go refuses
// such an initialization cycle.
func getPipeParsers() map[string]pipeParseFunc {
	pipeParsersOnce.Do(initPipeParsers)
	return pipeParsers
}

func initPipeParsers() {
	pipeParsers = map[string]pipeParseFunc{
		"coalesce":          (*parser).parseCoalescePipe,
		"collapse_nums":     (*parser).parseCollapseNumsPipe,
		"copy":              (*parser).parseCopyPipe,
		"decolorize":        (*parser).parseDecolorizePipe,
		"generate_sequence": (*parser).parseGenerateSequencePipe,
		"hash":              (*parser).parseHashPipe,
		"json_array_concat": (*parser).parseJSONArrayConcatPipe,
		"json_array_len":    (*parser).parseJSONArrayLenPipe,
		"drop_empty_fields": (*parser).parseDropEmptyFieldsPipe,
		"first":             (*parser).parseFirstLastPipe,
		"last":              (*parser).parseFirstLastPipe,
		"pack_json":         (*parser).parsePackPipe,
		"pack_logfmt":       (*parser).parsePackPipe,
		"join":              (*parser).parseJoinPipe,
		"union":             (*parser).parseUnionPipe,
		"stream_context":    (*parser).parseStreamContextPipe,
		"replace":           (*parser).parseReplacePipe,
		"running_stats":     (*parser).parseRunningStatsPipe,
		"total_stats":       (*parser).parseRunningStatsPipe,
		"replace_regexp":    (*parser).parseReplacePipe,
		"cp":                (*parser).parseCopyPipe,
		"del":               (*parser).parseDeletePipe,
		"delete":            (*parser).parseDeletePipe,
		"drop":              (*parser).parseDeletePipe,
		"eval":              (*parser).parseMathPipe,
		"extract":           (*parser).parseExtractPipe,
		"extract_regexp":    (*parser).parseExtractPipe,
		"facets":            (*parser).parseFacetsPipe,
		"field_names":       (*parser).parseFieldNamesPipe,
		"field_values":      (*parser).parseFieldValuesPipe,
		"fields":            (*parser).parseFieldsPipe,
		"filter":            (*parser).parseFilterPipe,
		"format":            (*parser).parseFormatPipe,
		"head":              (*parser).parseLimitPipe,
		"keep":              (*parser).parseFieldsPipe,
		"len":               (*parser).parseLenPipe,
		"limit":             (*parser).parseLimitPipe,
		"math":              (*parser).parseMathPipe,
		"mv":                (*parser).parseRenamePipe,
		"offset":            (*parser).parseOffsetPipe,
		"order":             (*parser).parseSortPipe,
		"rename":            (*parser).parseRenamePipe,
		"rm":                (*parser).parseDeletePipe,
		"sample":            (*parser).parseSamplePipe,
		"set_stream_fields": (*parser).parseSetStreamFieldsPipe,
		"skip":              (*parser).parseOffsetPipe,
		"sort":              (*parser).parseSortPipe,
		"split":             (*parser).parseSplitPipe,
		"stats":             (*parser).parseStatsKeywordPipe,
		"time_add":          (*parser).parseTimeAddPipe,
		"top":               (*parser).parseTopPipe,
		"uniq":              (*parser).parseUniqPipe,
		"unpack_json":       (*parser).parseUnpackPipe,
		"unpack_logfmt":     (*parser).parseUnpackPipe,
		"unpack_syslog":     (*parser).parseUnpackSyslogPipe,
		"unpack_words":      (*parser).parseUnpackWordsPipe,
		"unroll":            (*parser).parseUnrollPipe,
		"where":             (*parser).parseFilterPipe,
	}
}

// supportedPipeNames returns the names in getPipeParsers, sorted.
func supportedPipeNames() []string { return sortedNames(getPipeParsers()) }

// parsePipe parses one pipe; the current token is its first token.
func (p *parser) parsePipe() (Pipe, error) {
	t := p.cur()
	next := p.peek(1)
	if t.kind == lexWord {
		name := strings.ToLower(t.text)
		if parse, ok := getPipeParsers()[name]; ok {
			return parse(p, name)
		}
		if slices.Contains(unsupportedPipes, name) {
			return nil, p.errorf(t.pos, "pipe %q is not supported by spate", name)
		}
		if isStatsFuncName(name) || name == "by" {
			// "| count() as n" is stats without the keyword.
			return p.parseStatsPipe()
		}
		if next.kind == lexPunct && next.text == ":" {
			// "| level:error" is filter without the keyword.
			return p.parseFilterPipeNoKeyword()
		}
		return nil, p.errorHint(t.pos, hintCloseNames(name, supportedPipeNames(), unsupportedPipes, supportedStatsFuncNames()),
			"unknown pipe %q", t.text)
	}
	if p.isPunct("(") {
		// "| (level) count()" is stats without the keyword.
		return p.parseStatsPipe()
	}
	if t.kind == lexQuoted || t.kind == lexBadQuote || t.kind == lexPunct && t.text != ")" && t.text != "|" {
		return p.parseFilterPipeNoKeyword()
	}
	return nil, p.errorf(t.pos, "missing pipe; got %s", p.describe())
}

// parseCount parses the N of "limit N", "offset N" and similar options.
func (p *parser) parseCount(what string) (int64, error) {
	pos := p.cur().pos
	s, err := p.compound(stopsGeneric, "number after '"+what+"'")
	if err != nil {
		return 0, err
	}
	n, ok := parseUintLit(s)
	if !ok {
		return 0, p.errorHint(pos, fmt.Sprintf("%s takes a non-negative integer such as 10", what),
			"cannot parse %q as the number for '%s'", s, what)
	}
	return n, nil
}

// parseDurationArg parses the duration after the keyword after ("1h",
// "-30m") and returns it in nanoseconds and as written; what names it in
// the error for text that is not one, with hint.
func (p *parser) parseDurationArg(after, what, hint string) (int64, string, error) {
	pos := p.cur().pos
	s, err := p.compound(stopsGeneric, "duration after '"+after+"'")
	if err != nil {
		return 0, "", err
	}
	d, ok := parseDurationLit(s)
	if !ok {
		return 0, "", p.errorHint(pos, hint, "cannot parse %q as %s", s, what)
	}
	return d, s, nil
}

// parseIf parses "if (filter)"; the current token is "if".
func (p *parser) parseIf() (Filter, error) {
	p.next()
	if err := p.expectPunct("(", "after 'if'"); err != nil {
		return nil, err
	}
	if p.isPunct(")") {
		return nil, p.errorf(p.cur().pos, "missing filter inside 'if (...)'")
	}
	f, err := p.parseOr("")
	if err != nil {
		return nil, err
	}
	if err := p.expectPunct(")", "at the end of 'if (...)'"); err != nil {
		return nil, err
	}
	return f, nil
}

// parseOptionalResult reads a pipe's closing "[as] [result]": the result
// field, def when the pipe ends without one.
func (p *parser) parseOptionalResult(def string) (string, error) {
	if p.isKw("as") {
		p.next()
	}
	if p.isTrailer() {
		return def, nil
	}
	return p.parseFieldName("result field")
}

// parseFieldName reads a field name (not a pattern).
func (p *parser) parseFieldName(what string) (string, error) {
	pos := p.cur().pos
	name, pattern, err := p.parseFieldPattern(what)
	if err != nil {
		return "", err
	}
	if pattern {
		return "", p.errorf(pos, "%s cannot be a '*' pattern", what)
	}
	return name, nil
}

// parseFieldPattern reads a field name or a prefix pattern ending in '*'
// ("http*", `"my field"*`, "*"); pattern reports the latter.
func (p *parser) parseFieldPattern(what string) (name string, pattern bool, err error) {
	if p.isPunct("*") {
		p.next()
		return "*", true, nil
	}
	s, err := p.compound(stopsField, what)
	if err != nil {
		return "", false, err
	}
	if p.isPunct("*") && !p.cur().space {
		p.next()
		return s + "*", true, nil
	}
	return canonicalField(s), false, nil
}

// parseFieldPatterns reads "a, b, c*"; with parens set it reads "(a, b)"
// (possibly empty) instead. Patterns are refused unless allowPatterns.
func (p *parser) parseFieldPatterns(what string, parens, allowPatterns bool) ([]string, error) {
	if parens {
		if err := p.expectPunct("(", "before the "+what+" list"); err != nil {
			return nil, err
		}
		if p.isPunct(")") {
			p.next()
			return nil, nil
		}
	}
	var fields []string
	for {
		var f string
		var err error
		if allowPatterns {
			f, _, err = p.parseFieldPattern(what)
		} else {
			f, err = p.parseFieldName(what)
		}
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
		if !p.isPunct(",") {
			break
		}
		p.next()
	}
	if parens {
		if err := p.expectPunct(")", "at the end of the "+what+" list"); err != nil {
			return nil, err
		}
	}
	return fields, nil
}

// parseByList parses the field list of top, uniq and unroll: "by (a, b)",
// "(a, b)", "by a, b" or "a, b". A bare list ends before one of the option
// keywords stops. A '*' in the list means all fields and gives an empty
// list.
func (p *parser) parseByList(pipe string, stops ...string) ([]string, error) {
	hasBy := p.isKw("by")
	if hasBy {
		p.next()
	}
	var fields []string
	var err error
	switch {
	case p.isPunct("("):
		fields, err = p.parseFieldPatterns(pipe+" field", true, true)
	case !p.isTrailer() && !p.isKw(stops...):
		fields, err = p.parseFieldPatterns(pipe+" field", false, true)
	case hasBy:
		return nil, p.errorf(p.cur().pos, "missing fields after 'by' in %s pipe; got %s", pipe, p.describe())
	}
	if err != nil {
		return nil, err
	}
	if slices.Contains(fields, "*") {
		return nil, nil
	}
	for _, f := range fields {
		if strings.HasSuffix(f, "*") {
			return nil, p.errorf(p.cur().pos, "%s field %s cannot end with '*'", pipe, quoteFieldPattern(f))
		}
	}
	return fields, nil
}

// parseKeepSkip parses the optional keep_original_fields and
// skip_empty_results options in any order.
func (p *parser) parseKeepSkip() (keep, skip bool) {
	for {
		switch {
		case p.isKw("keep_original_fields"):
			keep = true
		case p.isKw("skip_empty_results"):
			skip = true
		default:
			return keep, skip
		}
		p.next()
	}
}

// parseOptionalParenField reads "f" or "(f)".
func (p *parser) parseOptionalParenField(what string) (string, error) {
	paren := p.isPunct("(")
	if paren {
		p.next()
	}
	name, err := p.parseFieldName(what)
	if err != nil {
		return "", err
	}
	if paren {
		if err := p.expectPunct(")", "after "+what); err != nil {
			return "", err
		}
	}
	return name, nil
}
