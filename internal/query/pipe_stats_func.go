package query

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// This file holds what every stats function has: its syntax (StatsFunc),
// its parsing and printing, and the table of the functions spate supports
// (getStatsFuncDefs), whose entries are in stats_*.go.

// StatsFunc is one function of stats: "count() if (level:error) as errors".
// Name is the function (count, count_empty, count_uniq, sum, avg, min, max,
// median, quantile, values, uniq_values, row_min, row_max, row_any, any,
// field_min, field_max, stddev, rate, rate_sum, sum_len, histogram,
// json_values).
// Fields are its field arguments; "*" or none means all fields where that is
// meaningful. Phi is the quantile's first argument, PhiText as written. Limit
// is the optional "limit N" of count_uniq, count_uniq_hash, values,
// uniq_values and json_values (0: none); Sort is json_values' optional
// "sort by (...)".
// If is the optional per-function filter. Result is the output name; the
// parser fills it with the function's String() (without " as ...") when no
// "as" is given, as VictoriaLogs does ("count(*)").
type StatsFunc struct {
	Name    string
	Fields  []string
	Phi     float64
	PhiText string
	Limit   int64
	Sort    []SortField // json_values' "sort by (...)"
	If      Filter
	Result  string
}

// callString prints the function with its arguments, sort and limit, without the
// if filter and result name: "count(*)", "quantile(0.5, x)",
// "count_uniq(a) limit 10". Without "as", this (plus " if (...)") is the
// result name.
func (sf *StatsFunc) callString() string {
	var args string
	if argsString := getStatsFuncDefs()[sf.Name].argsString; argsString != nil {
		args = argsString(sf)
	} else {
		args = "*"
		if len(sf.Fields) > 0 {
			args = joinFieldPatterns(sf.Fields)
		}
	}
	s := sf.Name + "(" + args + ")" + sortFieldsString(sf.Sort)
	if sf.Limit > 0 {
		s += " limit " + strconv.FormatInt(sf.Limit, 10)
	}
	return s
}

// String prints "func(args) [if (filter)] as result".
func (sf *StatsFunc) String() string {
	s := sf.callString()
	if sf.If != nil {
		s += " if (" + sf.If.String() + ")"
	}
	return s + " as " + quoteToken(sf.Result)
}

// statsFuncDef is one stats function of the table (getStatsFuncDefs): how
// its arguments are parsed and printed, and how it is compiled.
type statsFuncDef struct {
	// parseArgs checks the arguments written inside "name(...)", as
	// parseFieldPatterns read them from argsPos, and stores them in sf
	// (whose Name is set).
	parseArgs func(p *parser, sf *StatsFunc, args []string, argsPos int) error
	// argsString prints the arguments for callString; nil prints the
	// fields, or "*" for none.
	argsString func(sf *StatsFunc) string
	// sort says the function takes an optional "sort by (...)" (or
	// "order by", "by" optional) after the arguments.
	sort bool
	// limit says the function takes an optional "limit N" after the
	// arguments (and the sort).
	limit bool
	// newColumn compiles f, a function of st, into a column; fields are
	// f.Fields, nil for all fields.
	newColumn func(p *plan, st *PipeStats, f StatsFunc, fields []string, mem *memTracker) (statsColumn, error)
}

var (
	statsFuncDefs     map[string]statsFuncDef
	statsFuncDefsOnce sync.Once
)

// getStatsFuncDefs returns every stats function spate supports, by name:
// the one table of stats functions. isStatsFuncName, the hints for
// misspelt names and the words String() quotes take their names from it.
// Like getPipeParsers, it is built on first use.
func getStatsFuncDefs() map[string]statsFuncDef {
	statsFuncDefsOnce.Do(initStatsFuncDefs)
	return statsFuncDefs
}

func initStatsFuncDefs() {
	statsFuncDefs = map[string]statsFuncDef{
		"any":             {parseArgs: (*parser).parseAnyArgs, newColumn: newAnyColumn},
		"avg":             {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newSumColumn},
		"count":           {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newCountColumn},
		"count_empty":     {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newCountEmptyColumn},
		"count_uniq":      {parseArgs: (*parser).parseCountUniqArgs, limit: true, newColumn: newCountUniqColumn},
		"field_max":       {parseArgs: (*parser).parseFieldMinMaxArgs, argsString: rowMinMaxArgsString, newColumn: newRowMinMaxColumn},
		"field_min":       {parseArgs: (*parser).parseFieldMinMaxArgs, argsString: rowMinMaxArgsString, newColumn: newRowMinMaxColumn},
		"histogram":       {parseArgs: (*parser).parseHistogramArgs, newColumn: newHistogramColumn},
		"count_uniq_hash": {parseArgs: (*parser).parseCountUniqArgs, limit: true, newColumn: newCountUniqHashColumn},
		"json_values":     {parseArgs: (*parser).parseJSONValuesArgs, sort: true, limit: true, newColumn: newJSONValuesColumn},
		"max":             {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newMinMaxColumn},
		"median":          {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newQuantileColumn},
		"min":             {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newMinMaxColumn},
		"quantile":        {parseArgs: (*parser).parseQuantileArgs, argsString: quantileArgsString, newColumn: newQuantileColumn},
		"rate":            {parseArgs: (*parser).parseRateArgs, argsString: rateArgsString, newColumn: newRateColumn},
		"rate_sum":        {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newRateSumColumn},
		"row_max":         {parseArgs: (*parser).parseRowMinMaxArgs, argsString: rowMinMaxArgsString, newColumn: newRowMinMaxColumn},
		"row_min":         {parseArgs: (*parser).parseRowMinMaxArgs, argsString: rowMinMaxArgsString, newColumn: newRowMinMaxColumn},
		"row_any":         {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newRowAnyColumn},
		"stddev":          {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newStddevColumn},
		"sum":             {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newSumColumn},
		"sum_len":         {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newSumLenColumn},
		"uniq_values":     {parseArgs: (*parser).parseStatsFieldArgs, limit: true, newColumn: newUniqValuesColumn},
		"values":          {parseArgs: (*parser).parseStatsFieldArgs, limit: true, newColumn: newValuesColumn},
	}
}

// supportedStatsFuncNames returns the names in getStatsFuncDefs, sorted.
func supportedStatsFuncNames() []string { return sortedNames(getStatsFuncDefs()) }

// parseStatsFunc parses "func(args) [limit N] [if (filter)] [as] [name]".
func (p *parser) parseStatsFunc() (StatsFunc, error) {
	t := p.cur()
	if t.kind != lexWord {
		return StatsFunc{}, p.errorHint(t.pos, "for example: stats count() as n", "missing stats function; got %s", p.describe())
	}
	name := strings.ToLower(t.text)
	if slices.Contains(unsupportedStatsFuncs, name) {
		return StatsFunc{}, p.errorf(t.pos, "stats function %q is not supported by spate", name)
	}
	def, ok := getStatsFuncDefs()[name]
	if !ok {
		return StatsFunc{}, p.errorHint(t.pos, hintCloseNames(name, supportedStatsFuncNames(), unsupportedStatsFuncs),
			"unknown stats function %q", t.text)
	}
	p.next()
	if !p.isPunct("(") {
		return StatsFunc{}, p.errorHint(p.cur().pos, "write "+name+"(...)", "missing '(' after stats function %q; got %s", name, p.describe())
	}
	argsPos := p.cur().pos
	args, err := p.parseFieldPatterns("argument of "+name+"()", true, true)
	if err != nil {
		return StatsFunc{}, err
	}
	sf := StatsFunc{Name: name}
	if err := def.parseArgs(p, &sf, args, argsPos); err != nil {
		return StatsFunc{}, err
	}
	if def.sort && (p.isKw("sort") || p.isKw("order")) {
		p.next()
		if p.isKw("by") {
			p.next()
		}
		if sf.Sort, err = p.parseSortFields(name + " sort"); err != nil {
			return StatsFunc{}, err
		}
	}
	if def.limit && p.isKw("limit") {
		p.next()
		if sf.Limit, err = p.parseCount("limit"); err != nil {
			return StatsFunc{}, err
		}
	}
	if p.isKw("if") {
		if sf.If, err = p.parseIf(); err != nil {
			return StatsFunc{}, err
		}
	}
	if p.isKw("switch") {
		return StatsFunc{}, p.errorf(p.cur().pos, "'switch' in stats is not supported by spate")
	}
	if p.isTrailer() || p.isPunct(",") {
		sf.Result = sf.callString()
		if sf.If != nil {
			sf.Result += " if (" + sf.If.String() + ")"
		}
		return sf, nil
	}
	if p.isKw("as") {
		p.next()
	}
	if sf.Result, err = p.parseFieldName("result name"); err != nil {
		return StatsFunc{}, err
	}
	return sf, nil
}

// parseStatsFieldArgs takes the arguments as the fields; none or "*" means
// all fields.
func (p *parser) parseStatsFieldArgs(sf *StatsFunc, args []string, _ int) error {
	sf.Fields = allFieldsAsNil(args)
	return nil
}

// allFieldsAsNil returns nil when fields is empty or holds "*" (all fields),
// and fields otherwise.
func allFieldsAsNil(fields []string) []string {
	if len(fields) == 0 || slices.Contains(fields, "*") {
		return nil
	}
	return fields
}
