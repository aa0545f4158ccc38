package query

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// This file holds the entry points of the LogsQL parser, the token helpers it
// is built from and the tables of known names. The grammar follows
// VictoriaLogs v1.26 (docs/victorialogs/LogsQL.md and lib/logstorage/parser.go,
// pipe_*.go, stats_*.go): a filter, then pipes separated by '|'. Filters are
// in parser_filter.go, pipes in parser_pipe.go and each pipe's file
// (pipe_limit.go, ...), stats functions in pipe_stats_func.go and their
// stats_*.go files, _time filters in parse_time.go and number literals in
// parse_number.go.

// Parse parses a LogsQL query. now resolves relative time filters such as
// _time:5m (to [now-5m, now]). Every error is a *ParseError and matches
// ErrParse with errors.Is.
//
// Parse is safe for concurrent use; the returned tree shares nothing with
// other calls.
func Parse(s string, now time.Time) (*Query, error) {
	if !utf8.ValidString(s) {
		// Invalid UTF-8 cannot round-trip through String(): a word holding
		// it would become a regexp, which RE2 refuses.
		pos := 0
		for pos < len(s) {
			r, size := utf8.DecodeRuneInString(s[pos:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			pos += size
		}
		return nil, &ParseError{Query: s, Pos: pos, Msg: "the query is not valid UTF-8"}
	}
	p := newParser(s, now)
	q, err := p.parseQuery()
	if err != nil {
		return nil, err
	}
	return q, nil
}

// ParseFilter parses a LogsQL query that has no pipes and returns its
// filter.
func ParseFilter(s string, now time.Time) (Filter, error) {
	q, err := Parse(s, now)
	if err != nil {
		return nil, err
	}
	if len(q.Pipes) > 0 {
		// The filter parsed, so the first '|' token starts the pipes.
		pos := 0
		for _, t := range lexQuery(s) {
			if t.kind == lexPunct && t.text == "|" {
				pos = t.pos
				break
			}
		}
		return nil, &ParseError{Query: s, Pos: pos, Msg: "unexpected pipes after the filter"}
	}
	return q.Filter, nil
}

// parser walks the tokens of one query.
type parser struct {
	src  string
	toks []lexToken
	i    int
	// now is the time passed to Parse, in Unix nanoseconds.
	now int64
	// zoneOffset is the offset of now's zone from UTC, in nanoseconds:
	// the default offset of day_range and week_range.
	zoneOffset int64
	// depth counts the nesting of filters and math operands; see enter.
	depth int
	// options are the query options in effect where the parser is: those
	// of the query being parsed, else of the query holding it.
	options *QueryOptions
}

// maxParseDepth bounds the nesting of parentheses, negations and unary
// minus, so that a hostile query cannot exhaust the goroutine stack.
const maxParseDepth = 1000

// enter records one more level of nesting at pos and fails past
// maxParseDepth. Every successful enter must be paired with leave.
func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > maxParseDepth {
		return p.errorf(pos, "the query is nested too deeply: more than %d levels", maxParseDepth)
	}
	return nil
}

// leave undoes one enter.
func (p *parser) leave() { p.depth-- }

func newParser(s string, now time.Time) *parser {
	_, zone := now.Zone()
	return &parser{src: s, toks: lexQuery(s), now: now.UnixNano(), zoneOffset: int64(zone) * int64(time.Second)}
}

// cur returns the current token; at the end it is the lexEOF token.
func (p *parser) cur() *lexToken { return &p.toks[p.i] }

// peek returns the token n places after the current one (lexEOF past the
// end).
func (p *parser) peek(n int) *lexToken {
	return &p.toks[min(p.i+n, len(p.toks)-1)]
}

// next moves to the next token; it stays on lexEOF.
func (p *parser) next() {
	if p.i < len(p.toks)-1 {
		p.i++
	}
}

func (p *parser) atEOF() bool { return p.cur().kind == lexEOF }

// isPunct reports whether the current token is the operator s.
func (p *parser) isPunct(s string) bool {
	t := p.cur()
	return t.kind == lexPunct && t.text == s
}

// isKw reports whether the current token is an unquoted word equal to one of
// words, ignoring case.
func (p *parser) isKw(words ...string) bool {
	return tokIsKw(p.cur(), words...)
}

func tokIsKw(t *lexToken, words ...string) bool {
	if t.kind != lexWord {
		return false
	}
	for _, w := range words {
		if strings.EqualFold(t.text, w) {
			return true
		}
	}
	return false
}

// isTrailer reports whether the current token ends a filter or a pipe: '|',
// ')' or the end of the query.
func (p *parser) isTrailer() bool {
	return p.atEOF() || p.isPunct("|") || p.isPunct(")")
}

// describe names the current token for error messages.
func (p *parser) describe() string {
	t := p.cur()
	if t.kind == lexEOF {
		return "end of query"
	}
	return strconv.Quote(t.raw)
}

// errorf returns a *ParseError at byte offset pos.
func (p *parser) errorf(pos int, format string, args ...any) error {
	return &ParseError{Query: p.src, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// errorHint returns a *ParseError with a hint.
func (p *parser) errorHint(pos int, hint, format string, args ...any) error {
	return &ParseError{Query: p.src, Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// expectPunct consumes the operator s or fails, naming what it belongs to.
func (p *parser) expectPunct(s, context string) error {
	if !p.isPunct(s) {
		return p.errorf(p.cur().pos, "missing '%s' %s; got %s", s, context, p.describe())
	}
	p.next()
	return nil
}

// Stop sets for compound tokens: the single-rune operators that end them.
const (
	// stopsPhrase ends a word or phrase of a filter after "field:".
	stopsPhrase = "*,()[]|"
	// stopsPhraseNoField ends a word that may be a field name.
	stopsPhraseNoField = "*,()[]|:"
	// stopsGeneric ends regexps, numbers, times and patterns.
	stopsGeneric = ",()[]|"
	// stopsFuncArg ends the arguments of in(), i(), exact() and the value
	// after '='.
	stopsFuncArg = "*,()|"
	// stopsField ends a field name (or prefix pattern) in a pipe.
	stopsField = ",()[]|*"
	// stopsByField ends a field name of "stats by (...)".
	stopsByField = ",()[]|*:"
	// stopsRowName and stopsRowValue end the names and values of
	// rows({name: value, ...}).
	stopsRowName  = ",()[]{}|*:="
	stopsRowValue = ",(){}|"
	// stopsMath ends an operand of a math expression.
	stopsMath = ",()[]|+-*/%^&"
)

// isStop reports whether t is one of the single-rune operators in stops.
func isStop(t *lexToken, stops string) bool {
	return t.kind == lexPunct && len(t.text) == 1 && strings.IndexByte(stops, t.text[0]) >= 0
}

// compound reads a compound token: the current token and every following
// token glued to it (no whitespace in between) up to a token in stops. A
// quoted string stands alone and is returned unquoted. what names the
// expected value for error messages.
func (p *parser) compound(stops, what string) (string, error) {
	s, _, err := p.compoundQ(stops, what)
	return s, err
}

// compoundQ is compound that also reports whether the value was a quoted
// string.
func (p *parser) compoundQ(stops, what string) (string, bool, error) {
	t := p.cur()
	switch {
	case t.kind == lexEOF:
		return "", false, p.errorf(t.pos, "missing %s; got end of query", what)
	case t.kind == lexBadQuote:
		return "", false, p.errorHint(t.pos, "write a quote inside a value as \\\" or put the value in backquotes", "%s", t.err)
	case t.kind == lexQuoted:
		p.next()
		return t.text, true, nil
	case isStop(t, stops):
		return "", false, p.errorf(t.pos, "missing %s; got %s", what, p.describe())
	}
	var b strings.Builder
	b.WriteString(t.raw)
	p.next()
	for {
		t := p.cur()
		if t.space || t.kind == lexEOF || t.kind == lexQuoted || isStop(t, stops) {
			return b.String(), false, nil
		}
		b.WriteString(t.raw)
		p.next()
	}
}

// parseQuery parses the whole query.
func (p *parser) parseQuery() (*Query, error) {
	t := p.cur()
	switch {
	case t.kind == lexEOF:
		return nil, p.errorHint(t.pos, `use "*" to select all logs`, "empty query")
	case p.isPunct("|"):
		return nil, p.errorHint(t.pos, `start the query with "*" to select all logs: * | ...`, "missing filter before '|'")
	case t.kind == lexWord && isPipeName(t.text) && (p.peek(1).space || p.peek(1).kind == lexEOF):
		// A standalone pipe name at the start is most likely a forgotten
		// "* |" (VictoriaLogs refuses it too); "limit:5" and "top-level"
		// are fine.
		return nil, p.errorHint(t.pos, fmt.Sprintf(`start the query with "* | %s ..." or put the word in quotes: %q`, t.text, t.text),
			"the query cannot start with pipe name %q", t.text)
	}

	opts, err := p.parseOptionsPrefix()
	if err != nil {
		return nil, err
	}
	if opts != nil {
		p.options = opts
	}
	f, err := p.parseOr("")
	if err != nil {
		return nil, err
	}
	if p.isPunct(")") {
		return nil, p.errorf(p.cur().pos, "unexpected ')' without a matching '('")
	}
	if opts != nil {
		f = shiftTimeFilters(f, opts.TimeOffset)
	}
	q := &Query{Options: opts, Filter: f}
	for p.isPunct("|") {
		p.next()
		if p.atEOF() {
			return nil, p.errorf(p.cur().pos, "missing pipe after '|'")
		}
		pipePos := p.cur().pos
		pp, err := p.parsePipe()
		if err != nil {
			return nil, err
		}
		q.Pipes = append(q.Pipes, pp)
		if !p.atEOF() && !p.isPunct("|") {
			return nil, p.errorHint(p.cur().pos, "separate pipes with '|'",
				"unexpected %s after pipe %q", p.describe(), strings.TrimSpace(p.src[pipePos:p.cur().pos]))
		}
	}
	if !p.atEOF() {
		return nil, p.errorf(p.cur().pos, "unexpected %s", p.describe())
	}
	return q, nil
}

// canonicalField returns the field name VictoriaLogs uses for name: "" is
// the message field _msg.
func canonicalField(name string) string {
	if name == "" {
		return "_msg"
	}
	return name
}

// Known names. Unsupported VictoriaLogs names are recognised so that the
// error says "not supported by spate" instead of "unknown". The supported
// pipes are the names in getPipeParsers, the supported stats functions
// those in getStatsFuncDefs.
var (
	unsupportedPipes = []string{
		"block_stats", "blocks_count", "query_stats",
		"stats_remote",
	}
	unsupportedStatsFuncs = []string{}
	supportedFilterFuncs  = []string{
		"contains_all", "contains_any", "contains_common_case", "eq_field", "equals_common_case",
		"exact", "i", "in", "ipv4_range", "ipv6_range", "json_array_contains_any", "le_field",
		"len_range", "lt_field", "pattern_match", "pattern_match_full", "pattern_match_prefix",
		"pattern_match_suffix", "range", "re", "seq", "string_range",
	}
	// value_type matches the encoding VictoriaLogs chose for a column in a
	// storage block (const, dict, uint8, ...), which depends on the other
	// rows stored in that block: see docs/query.md.
	unsupportedFilterFuncs = []string{"value_type"}
	supportedMathFuncs     = []string{"abs", "ceil", "exp", "floor", "ln", "max", "min", "now", "rand", "round"}
	unsupportedMathFuncs   = []string{}
)

// isPipeName reports whether s names a VictoriaLogs pipe.
func isPipeName(s string) bool {
	s = strings.ToLower(s)
	_, ok := getPipeParsers()[s]
	return ok || slices.Contains(unsupportedPipes, s)
}

// isStatsFuncName reports whether s names a VictoriaLogs stats function.
func isStatsFuncName(s string) bool {
	s = strings.ToLower(s)
	_, ok := getStatsFuncDefs()[s]
	return ok || slices.Contains(unsupportedStatsFuncs, s)
}

var (
	reservedWords     map[string]bool
	reservedWordsOnce sync.Once
)

// isReservedWord reports whether s, in lower case, is a word that String()
// quotes when it is a value or a field name, because the parser gives it a
// meaning. The words are gathered on first use, from the pipe and stats
// function tables among others (see getPipeParsers).
func isReservedWord(s string) bool {
	reservedWordsOnce.Do(initReservedWords)
	return reservedWords[s]
}

func initReservedWords() {
	m := map[string]bool{}
	lists := [][]string{
		supportedPipeNames(), unsupportedPipes, supportedStatsFuncNames(), unsupportedStatsFuncs,
		supportedFilterFuncs, unsupportedFilterFuncs, supportedMathFuncs, unsupportedMathFuncs,
		{
			"and", "or", "not", "xor", "default", "if", "by", "as", "from", "with", "hits",
			"rank", "limit", "offset", "desc", "asc", "now", "options", "partition", "switch",
			"case", "fields", "result_prefix", "keep_original_fields", "skip_empty_results",
			"max_values_per_field", "max_value_len", "keep_const_fields", "inf", "nan",
			"day_range", "week_range",
		},
	}
	for _, l := range lists {
		for _, w := range l {
			m[w] = true
		}
	}
	reservedWords = m
}

// sortedNames returns the names of a table such as getPipeParsers, sorted.
func sortedNames[V any](table map[string]V) []string {
	names := make([]string, 0, len(table))
	for name := range table {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// hintCloseNames returns a "did you mean ..." hint for the misspelt name, or
// "" if no known name is close.
func hintCloseNames(name string, known ...[]string) string {
	name = strings.ToLower(name)
	var close []string
	for _, l := range known {
		for _, k := range l {
			maxD := 1
			if len(name) > 4 {
				maxD = 2
			}
			d := editDistance(name, k)
			if d <= maxD || len(name) >= 3 && len(k) >= 3 && (strings.HasPrefix(k, name) || strings.HasPrefix(name, k)) {
				close = append(close, strconv.Quote(k))
			}
		}
	}
	if len(close) == 0 {
		return ""
	}
	slices.Sort(close)
	close = slices.Compact(close)
	if len(close) > 5 {
		close = close[:5]
	}
	return "did you mean " + strings.Join(close, " or ") + "?"
}

// editDistance returns the Levenshtein distance between a and b in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
