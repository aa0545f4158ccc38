package query

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// This file prints the syntax tree as canonical LogsQL (each pipe's String()
// is in the pipe's file, using the helpers here). Parsing the output
// of Query.String() with the same "now" gives a tree equal (reflect.DeepEqual)
// to the printed one. The canonical form:
//
//   - follows VictoriaLogs' own printing, so that default stats result
//     names such as "count(*) if (error)" match it: a leaf filter on _msg has
//     no field prefix ("error", "=x", "~\"re\""), except "_msg:*", which is
//     not "*" (every row);
//   - writes AND as a space, OR as " or " and NOT as "!", with parentheses
//     only where precedence needs them;
//   - quotes words, field names and values only when they are not plain
//     words or when the parser would take them for keywords ("and", "in");
//   - always quotes regexps, patterns and string comparison values;
//   - writes numbers, _time filters and buckets as they were written.

// quoteToken returns s unchanged if it lexes back as one word that is not a
// keyword, and strconv.Quote(s) otherwise.
func quoteToken(s string) string {
	if isWordText(s) && !isReservedWord(strings.ToLower(s)) {
		return s
	}
	return strconv.Quote(s)
}

// quoteFieldPattern prints a field name or a prefix pattern ending in '*'
// such as "http*" or `"my field"*`.
func quoteFieldPattern(s string) string {
	if prefix, ok := strings.CutSuffix(s, "*"); ok {
		if prefix == "" {
			return "*"
		}
		return quoteToken(prefix) + "*"
	}
	return quoteToken(s)
}

// quoteFilterField prints the field name of a leaf filter. _time, _stream and
// _stream_id are quoted so that they do not start the special filters.
func quoteFilterField(s string) string {
	switch s {
	case "_time", "_stream", "_stream_id":
		return strconv.Quote(s)
	}
	return quoteToken(s)
}

// leafField prints the "field:" prefix of a leaf filter, or "" for _msg.
func leafField(field string) string {
	if field == "_msg" {
		return ""
	}
	return quoteFilterField(field) + ":"
}

// quoteStringValue prints the value of a string comparison; values that
// start like a number are quoted too, so that they stay strings.
func quoteStringValue(s string) string {
	if isNumberPrefixLit(s) {
		return strconv.Quote(s)
	}
	return quoteToken(s)
}

// numText prints a number as written, quoting it if it contains runes that
// would split it into several tokens (a timestamp with a space, say).
func numText(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsSpace(r) || strings.ContainsRune("\"'`,()[]|#*", r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// String returns the query as canonical LogsQL.
func (q *Query) String() string {
	var b strings.Builder
	if q.Options != nil {
		b.WriteString(q.Options.String())
		b.WriteString(" ")
	}
	if q.Filter == nil {
		b.WriteString("*")
	} else {
		b.WriteString(q.Filter.String())
	}
	for _, p := range q.Pipes {
		b.WriteString(" | ")
		b.WriteString(p.String())
	}
	return b.String()
}

func (*FilterAll) String() string { return "*" }

func (f *FilterAnd) String() string {
	a := make([]string, len(f.Filters))
	for i, c := range f.Filters {
		a[i] = c.String()
		switch c.(type) {
		case *FilterOr, *FilterAnd:
			a[i] = "(" + a[i] + ")"
		}
	}
	return strings.Join(a, " ")
}

func (f *FilterOr) String() string {
	a := make([]string, len(f.Filters))
	for i, c := range f.Filters {
		a[i] = c.String()
		if _, ok := c.(*FilterOr); ok {
			a[i] = "(" + a[i] + ")"
		}
	}
	return strings.Join(a, " or ")
}

func (f *FilterNot) String() string {
	s := f.Filter.String()
	switch f.Filter.(type) {
	case *FilterAnd, *FilterOr, *FilterNot:
		s = "(" + s + ")"
	}
	return "!" + s
}

func (f *FilterPhrase) String() string {
	if f.CaseInsensitive {
		return leafField(f.Field) + "i(" + quoteToken(f.Phrase) + ")"
	}
	return leafField(f.Field) + quoteToken(f.Phrase)
}

func (f *FilterPrefix) String() string {
	prefix := ""
	if f.Prefix != "" {
		prefix = quoteToken(f.Prefix)
	}
	if f.CaseInsensitive {
		return leafField(f.Field) + "i(" + prefix + "*)"
	}
	if prefix == "" {
		// "*" alone is FilterAll.
		return quoteFilterField(f.Field) + ":*"
	}
	return leafField(f.Field) + prefix + "*"
}

func (f *FilterExact) String() string {
	s := leafField(f.Field) + "=" + quoteToken(f.Value)
	if f.Prefix {
		s += "*"
	}
	return s
}

// joinTokens quotes every value where needed and joins them with ", ".
func joinTokens(values []string) string {
	a := make([]string, len(values))
	for i, v := range values {
		a[i] = quoteToken(v)
	}
	return strings.Join(a, ", ")
}

// joinFieldPatterns quotes field names and patterns and joins them with ", ".
func joinFieldPatterns(fields []string) string {
	a := make([]string, len(fields))
	for i, f := range fields {
		a[i] = quoteFieldPattern(f)
	}
	return strings.Join(a, ", ")
}

func (f *FilterStream) String() string {
	groups := make([]string, len(f.Or))
	for i, g := range f.Or {
		tags := make([]string, len(g))
		for j, t := range g {
			switch t.Op {
			case "in", "not_in":
				args := joinTokens(t.Values)
				if t.Any {
					args = "*"
				}
				tags[j] = quoteToken(t.Name) + " " + t.Op + "(" + args + ")"
			default:
				tags[j] = quoteToken(t.Name) + t.Op + strconv.Quote(t.Value)
			}
		}
		groups[i] = strings.Join(tags, ",")
	}
	return "{" + strings.Join(groups, " or ") + "}"
}

func (f *FilterStreamID) String() string {
	if f.In {
		return "_stream_id:in(" + argsOrSubquery(f.IDs, f.Sub) + ")"
	}
	return "_stream_id:" + quoteToken(f.IDs[0])
}

func (f *FilterIn) String() string {
	return leafField(f.Field) + "in(" + argsOrSubquery(f.Values, f.Sub) + ")"
}

func (f *FilterContainsAny) String() string {
	return leafField(f.Field) + "contains_any(" + argsOrSubquery(f.Phrases, f.Sub) + ")"
}

func (f *FilterContainsAll) String() string {
	return leafField(f.Field) + "contains_all(" + argsOrSubquery(f.Phrases, f.Sub) + ")"
}

// argsOrSubquery prints the arguments of in() and similar: the subquery
// when there is one, else the values.
func argsOrSubquery(values []string, sub *Query) string {
	if sub != nil {
		return sub.String()
	}
	return joinTokens(values)
}

func (f *FilterSeq) String() string {
	return leafField(f.Field) + "seq(" + joinTokens(f.Phrases) + ")"
}

func (f *FilterRegexp) String() string {
	return leafField(f.Field) + "~" + strconv.Quote(f.Expr)
}

func (f *FilterCompare) String() string {
	s := leafField(f.Field) + f.Op
	switch {
	case f.IsString:
		return s + quoteStringValue(f.Value)
	case f.Text != "":
		return s + numText(f.Text)
	}
	return s + strconv.FormatFloat(f.Num, 'g', -1, 64)
}

func (f *FilterRange) String() string {
	var b strings.Builder
	b.WriteString(leafField(f.Field))
	b.WriteString("range")
	if f.LoInc {
		b.WriteByte('[')
	} else {
		b.WriteByte('(')
	}
	b.WriteString(rangeBound(f.LoText, f.Lo))
	b.WriteString(", ")
	b.WriteString(rangeBound(f.HiText, f.Hi))
	if f.HiInc {
		b.WriteByte(']')
	} else {
		b.WriteByte(')')
	}
	return b.String()
}

// rangeBound prints a range() bound from its text, or from its value when
// the text is missing.
func rangeBound(text string, v float64) string {
	if text != "" {
		return numText(text)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// String prints "_time:" and Text. A FilterTime built without Text (not by
// the parser) prints its bounds at nanosecond precision.
func (f *FilterTime) String() string {
	if f.Text != "" {
		return "_time:" + f.Text
	}
	ns := func(t int64) string {
		return time.Unix(0, t).UTC().Format("2006-01-02T15:04:05.000000000Z")
	}
	switch {
	case f.Min == math.MinInt64 && f.Max == math.MaxInt64:
		return "*"
	case f.Min == math.MinInt64:
		return "_time:<=" + ns(f.Max)
	case f.Max == math.MaxInt64:
		return "_time:>=" + ns(f.Min)
	}
	return "_time:[" + ns(f.Min) + ", " + ns(f.Max) + "]"
}

// ifString prints " if (filter)" or "" for a nil filter.
func ifString(f Filter) string {
	if f == nil {
		return ""
	}
	return " if (" + f.String() + ")"
}

// fromString prints " from field", or "" for the default _msg.
func fromString(from string) string {
	if from == "" || from == "_msg" {
		return ""
	}
	return " from " + quoteToken(from)
}

// keepSkipString prints the keep_original_fields and skip_empty_results
// options.
func keepSkipString(keep, skip bool) string {
	s := ""
	if keep {
		s += " keep_original_fields"
	}
	if skip {
		s += " skip_empty_results"
	}
	return s
}
