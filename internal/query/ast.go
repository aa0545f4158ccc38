package query

// This file defines the syntax tree of a LogsQL query. The parser
// (parser.go) builds it, String() prints it back as canonical LogsQL (parsing
// that text gives an equal tree), and the planner (plan.go) compiles it into
// the executable form. The tree is plain data: no methods here evaluate
// anything. The node of each pipe is in the pipe's own file (pipe_limit.go,
// ...), with its String(), its parser and its processor.
//
// Field names are stored as written after unquoting. A filter without a field
// applies to "_msg", and the parser stores "_msg" explicitly, so Field is never
// empty in a parsed tree.

// Query is a parsed LogsQL query: a filter followed by pipes.
type Query struct {
	Options *QueryOptions // "options(...)", nil without
	Filter  Filter        // never nil; FilterAll for "*"
	Pipes   []Pipe

	// inherited are the options of the query holding this subquery, in
	// effect when it has none of its own (EffectiveOptions).
	inherited *QueryOptions
}

// Filter is a node of the filter expression.
type Filter interface {
	String() string
	isFilter()
}

// FilterAll matches every row: "*".
type FilterAll struct{}

// FilterAnd matches rows that every child matches: "a b", "a AND b".
type FilterAnd struct{ Filters []Filter }

// FilterOr matches rows that any child matches: "a OR b".
type FilterOr struct{ Filters []Filter }

// FilterNot inverts its child: "NOT a", "-a", "!a". "f:!=v" parses as
// FilterNot{FilterExact{f, v}}.
type FilterNot struct{ Filter Filter }

// FilterPhrase matches values containing Phrase at token boundaries: a bare
// word ("error") or a quoted phrase ("cache miss"). A boundary is required
// before the phrase only if its first rune is a token rune (letter, digit or
// '_'), and after it only if its last rune is one. An empty Phrase ("f:\"\"")
// matches empty and missing values. CaseInsensitive is set by i(...).
type FilterPhrase struct {
	Field           string
	Phrase          string
	CaseInsensitive bool
}

// FilterPrefix matches values containing a token that starts with Prefix:
// "err*", "\"cache mi\"*". An empty Prefix ("f:*") matches any non-empty
// value. CaseInsensitive is set by i(...).
type FilterPrefix struct {
	Field           string
	Prefix          string
	CaseInsensitive bool
}

// FilterExact matches values equal to Value (="v"), or starting with it when
// Prefix is set (="v"*). Value "" with Prefix false matches empty and missing
// values.
type FilterExact struct {
	Field  string
	Value  string
	Prefix bool
}

// FilterIn matches values equal to any of Values: "f:in(a, b)". Values that
// parse as numbers also match values that are numerically equal ("500"
// matches 500.0).
//
// With Sub, "f:in(QUERY | fields x)", the values are those of SubField in
// the subquery's result, which ResolveSubqueries puts in Values (and
// clears Sub) before the query runs.
type FilterIn struct {
	Field    string
	Values   []string
	Sub      *Query
	SubField string
}

// FilterContainsAny matches values containing any of Phrases (each with
// FilterPhrase semantics): "contains_any(a, \"b c\")". Sub and SubField
// are as in FilterIn.
type FilterContainsAny struct {
	Field    string
	Phrases  []string
	Sub      *Query
	SubField string
}

// FilterContainsAll matches values containing all of Phrases. Sub and
// SubField are as in FilterIn.
type FilterContainsAll struct {
	Field    string
	Phrases  []string
	Sub      *Query
	SubField string
}

// FilterSeq matches values containing Phrases in this order: "seq(a, b)".
type FilterSeq struct {
	Field   string
	Phrases []string
}

// FilterRegexp matches values in which the RE2 expression Expr finds a match
// (unanchored, case-sensitive unless the expression says otherwise): "~\"re\"".
type FilterRegexp struct {
	Field string
	Expr  string
}

// FilterCompare is a one-sided comparison: "status:>=500", "level:<\"error\"".
// Op is one of ">", ">=", "<", "<=". If IsString is set (the value was
// quoted), values compare as byte strings against Value; otherwise Num holds
// the parsed number (units such as KiB, 1_000 and 1e3 already applied) and
// only values that parse as numbers match. Text is the number as written, for
// String().
type FilterCompare struct {
	Field    string
	Op       string
	IsString bool
	Value    string
	Num      float64
	Text     string
}

// FilterRange matches numeric values in a range: "range(1, 5]", bounds may be
// -inf and inf. LoInc and HiInc say whether each bound is included. LoText and
// HiText are the bounds as written, for String().
type FilterRange struct {
	Field          string
	Lo, Hi         float64
	LoInc, HiInc   bool
	LoText, HiText string
}

// FilterTime restricts _time to [Min, Max], both inclusive, in Unix
// nanoseconds: "_time:5m", "_time:[A, B)", "_time:>=A", "_time:2026-01-02Z".
// The parser resolves relative durations against the time passed to Parse and
// widens a bound written at coarse precision to cover the whole unit it names
// (so "_time:<=2026-01-01T00:01:00Z" includes 00:01:00.999). Text is the
// filter as written after "_time:", for String().
type FilterTime struct {
	Min, Max int64
	Text     string
}

// FilterStream matches logs whose stream satisfies any of Or, each a list of
// tag filters that must all hold: `{app="api"}`, `{app="api", env=~"prod.*"
// or zone!="x"}`, written bare or after "_stream:". A log's stream is its
// _stream field, {name="value",...} as VictoriaLogs writes it (spate serve
// writes it with _stream_fields), and {} when it has none; a missing tag
// reads as "". A _stream that does not parse matches nothing.
type FilterStream struct {
	Or [][]StreamTagFilter
}

// StreamTagFilter is one tag filter inside {...}. Op is "=", "!=", "=~",
// "!~" (Value is the string or the regexp, which must match the whole
// value), "in" or "not_in" (Values, or Any for "in(*)": every value,
// including "").
type StreamTagFilter struct {
	Name   string
	Op     string
	Value  string
	Values []string
	Any    bool
}

// FilterStreamID matches logs whose _stream_id is one of IDs:
// "_stream_id:0000...", "_stream_id:in(A, B)" (In). A log without a
// _stream_id field has the ID of its stream (see FilterStream) in the
// tenant Options name.
type FilterStreamID struct {
	IDs []string
	In  bool
	// Sub and SubField are as in FilterIn: "_stream_id:in(QUERY | fields
	// _stream_id)" until ResolveSubqueries puts the values in IDs.
	Sub      *Query
	SubField string

	// The tenant for IDs of logs without _stream_id, from Options; set by
	// the planner (not part of the query text).
	account, project uint32
}

func (*FilterAll) isFilter()         {}
func (*FilterStream) isFilter()      {}
func (*FilterStreamID) isFilter()    {}
func (*FilterAnd) isFilter()         {}
func (*FilterOr) isFilter()          {}
func (*FilterNot) isFilter()         {}
func (*FilterPhrase) isFilter()      {}
func (*FilterPrefix) isFilter()      {}
func (*FilterExact) isFilter()       {}
func (*FilterIn) isFilter()          {}
func (*FilterContainsAny) isFilter() {}
func (*FilterContainsAll) isFilter() {}
func (*FilterSeq) isFilter()         {}
func (*FilterRegexp) isFilter()      {}
func (*FilterCompare) isFilter()     {}
func (*FilterRange) isFilter()       {}
func (*FilterTime) isFilter()        {}

// Pipe is one stage after the filter.
type Pipe interface {
	String() string
	isPipe()
}
