package query

import (
	"math"
	"slices"
	"strings"
	"sync"
)

// This file parses the stats pipe:
//
//	stats [by (f1, _time:1m, _time:1d offset 3h, num:10)] func(...) [if (filter)] [as name], ...
//
// "by" may be left out ("stats (level) count()") and so may "stats" itself
// ("| count() as n"). Without "as", the result name is the function's text as
// VictoriaLogs prints it ("count(*)", "max(bytes)", "count(*) if (level:error)").

// parseStatsKeywordPipe parses "stats ...".
func (p *parser) parseStatsKeywordPipe(_ string) (Pipe, error) {
	p.next()
	return p.parseStatsPipe()
}

// parseStatsPipe parses a stats pipe after the optional "stats" keyword.
func (p *parser) parseStatsPipe() (Pipe, error) {
	ps := &PipeStats{}
	if p.isKw("by") || p.isPunct("(") {
		if p.isKw("by") {
			p.next()
		}
		by, err := p.parseStatsBy()
		if err != nil {
			return nil, err
		}
		ps.By = by
	}
	if p.isTrailer() {
		return nil, p.errorHint(p.cur().pos, "for example: stats count() as n", "missing stats function; got %s", p.describe())
	}
	for {
		pos := p.cur().pos
		sf, err := p.parseStatsFunc()
		if err != nil {
			return nil, err
		}
		for _, bf := range ps.By {
			if bf.Name == sf.Result {
				return nil, p.errorf(pos, "the result name %q of %s is also a 'by' field", sf.Result, sf.callString())
			}
		}
		for _, prev := range ps.Funcs {
			if prev.Result == sf.Result {
				return nil, p.errorHint(pos, "name the results with 'as'", "duplicate result name %q in stats", sf.Result)
			}
		}
		ps.Funcs = append(ps.Funcs, sf)
		if p.isTrailer() {
			return ps, nil
		}
		if !p.isPunct(",") {
			return nil, p.errorf(p.cur().pos, "unexpected %s after %s; expecting ',' or '|'", p.describe(), sf.callString())
		}
		p.next()
	}
}

// parseStatsBy parses "(f1, _time:1m offset 1h, num:10)".
func (p *parser) parseStatsBy() ([]ByField, error) {
	if err := p.expectPunct("(", "after 'stats by'"); err != nil {
		return nil, err
	}
	var by []ByField
	for !p.isPunct(")") {
		name, err := p.compound(stopsByField, "field name in 'by (...)'")
		if err != nil {
			return nil, err
		}
		bf := ByField{Name: canonicalField(name)}
		if p.isPunct(":") {
			p.next()
			if err := p.parseBucket(&bf); err != nil {
				return nil, err
			}
		}
		by = append(by, bf)
		if p.isPunct(")") {
			break
		}
		if !p.isPunct(",") {
			return nil, p.errorf(p.cur().pos, "missing ',' or ')' in 'by (...)'; got %s", p.describe())
		}
		p.next()
	}
	p.next()
	return by, nil
}

// parseBucket parses the "1m" or "1d offset 3h" after "field:" in by (...).
func (p *parser) parseBucket(bf *ByField) error {
	pos := p.cur().pos
	s, err := p.compound(stopsGeneric, "bucket size after '"+bf.Name+":'")
	if err != nil {
		return err
	}
	if s == "year" || s == "month" {
		return p.errorf(pos, "bucket %q is not supported by spate", s)
	}
	step, ok := parseBucketSizeLit(s)
	if !ok {
		return p.errorHint(pos, "use a duration such as 1m or 1h, a byte size such as 1KiB, or a positive number",
			"cannot parse bucket size %q for field %q", s, bf.Name)
	}
	bf.Bucket = s
	bf.BucketNum = step
	if bf.Name == "_time" {
		bf.BucketNs = int64(min(math.Round(step), math.MaxInt64))
		if bf.BucketNs < 1 {
			return p.errorf(pos, "bucket size %q for _time must be at least 1ns", s)
		}
	}
	if !p.isKw("offset") {
		return nil
	}
	p.next()
	pos = p.cur().pos
	s, err = p.compound(stopsGeneric, "offset")
	if err != nil {
		return err
	}
	off, ok := parseBucketOffsetLit(s)
	if !ok || math.IsNaN(off) || math.Abs(off) >= math.MaxInt64 {
		return p.errorf(pos, "cannot parse bucket offset %q as a number, duration or byte size", s)
	}
	bf.Offset = int64(off) // VictoriaLogs truncates a fractional _time offset
	bf.OffsetNum = off
	bf.OffsetText = s
	return nil
}

// parseBucketSizeLit parses a bucket size: a named unit ("hour"), a
// positive number, a duration (in nanoseconds), a byte size or an IPv4 mask
// ("/24", the number of addresses it spans).
func parseBucketSizeLit(s string) (float64, bool) {
	switch s {
	case "nanosecond":
		return 1, true
	case "microsecond":
		return nsPerMicrosecond, true
	case "millisecond":
		return nsPerMillisecond, true
	case "second":
		return nsPerSecond, true
	case "minute":
		return nsPerMinute, true
	case "hour":
		return nsPerHour, true
	case "day":
		return nsPerDay, true
	case "week":
		return nsPerWeek, true
	}
	if f, ok := parseDecimalLit(s); ok {
		return f, f > 0
	}
	if ns, ok := parseDurationLit(s); ok {
		return float64(ns), ns > 0
	}
	if n, ok := parseBytesLit(s); ok {
		return float64(n), n > 0
	}
	if mask, ok := strings.CutPrefix(s, "/"); ok {
		n, ok := parseUintDigitsLit(mask)
		if ok && n <= 32 {
			return float64(uint64(1) << (32 - n)), true
		}
	}
	return 0, false
}

// parseBucketOffsetLit parses a bucket offset: a number, a duration (in
// nanoseconds) or a byte size.
func parseBucketOffsetLit(s string) (float64, bool) {
	if f, ok := parseDecimalLit(s); ok {
		return f, true
	}
	if ns, ok := parseDurationLit(s); ok {
		return float64(ns), true
	}
	if n, ok := parseBytesLit(s); ok {
		return float64(n), true
	}
	return 0, false
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
	// limit says the function takes an optional "limit N" after the
	// arguments.
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
		"avg":         {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newSumColumn},
		"count":       {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newCountColumn},
		"count_empty": {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newCountEmptyColumn},
		"count_uniq":  {parseArgs: (*parser).parseCountUniqArgs, limit: true, newColumn: newCountUniqColumn},
		"max":         {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newMinMaxColumn},
		"median":      {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newQuantileColumn},
		"min":         {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newMinMaxColumn},
		"quantile":    {parseArgs: (*parser).parseQuantileArgs, argsString: quantileArgsString, newColumn: newQuantileColumn},
		"rate":        {parseArgs: (*parser).parseRateArgs, argsString: rateArgsString, newColumn: newRateColumn},
		"row_max":     {parseArgs: (*parser).parseRowMinMaxArgs, argsString: rowMinMaxArgsString, newColumn: newRowMinMaxColumn},
		"row_min":     {parseArgs: (*parser).parseRowMinMaxArgs, argsString: rowMinMaxArgsString, newColumn: newRowMinMaxColumn},
		"sum":         {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newSumColumn},
		"sum_len":     {parseArgs: (*parser).parseStatsFieldArgs, newColumn: newSumLenColumn},
		"uniq_values": {parseArgs: (*parser).parseStatsFieldArgs, limit: true, newColumn: newUniqValuesColumn},
		"values":      {parseArgs: (*parser).parseStatsFieldArgs, limit: true, newColumn: newValuesColumn},
	}
}

// supportedStatsFuncNames returns the names in getStatsFuncDefs, sorted.
func supportedStatsFuncNames() []string {
	names := make([]string, 0, len(getStatsFuncDefs()))
	for name := range getStatsFuncDefs() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

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
