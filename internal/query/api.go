package query

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// This file holds what the VictoriaLogs HTTP API (spate serve's /select)
// needs to know about a parsed query and the changes it makes to one: the
// time range of its start and end args, the rows it may return last-first,
// the fields it returns, the labels of a stats query. Each follows
// VictoriaLogs v1.52.1 (lib/logstorage's Query methods of the same names).

// ParseDuration parses a LogsQL duration such as "5m", "1h30m", "1.5s" or
// "1d" into nanoseconds. A leading '-' makes it negative.
func ParseDuration(s string) (int64, bool) { return parseDurationLit(s) }

// AddTimeFilter narrows q and its subqueries to logs with start <= _time
// <= end (nanoseconds, both inclusive), in front of their other filters.
// A query whose options say ignore_global_time_filter=true is passed by.
func (q *Query) AddTimeFilter(start, end int64) {
	text := fmt.Sprintf("[%s,%s]", preciseTime(start), preciseTime(end))
	f := &FilterTime{Min: start, Max: end, Text: text}
	q.visitQueries(func(q *Query) {
		if o := q.EffectiveOptions(); o == nil || o.IgnoreGlobalTimeFilter == nil || !*o.IgnoreGlobalTimeFilter {
			q.addFilter(shiftTimeFilters(f, q.timeOffset()))
		}
	})
}

func preciseTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000000Z")
}

// AddFilter ANDs f in front of the filters of q and of its subqueries
// (the time range and extra filters of a request apply to them too, as in
// VictoriaLogs).
func (q *Query) AddFilter(f Filter) {
	q.visitQueries(func(q *Query) { q.addFilter(f) })
}

func (q *Query) addFilter(f Filter) {
	switch t := q.Filter.(type) {
	case nil, *FilterAll:
		q.Filter = f
	case *FilterAnd:
		q.Filter = &FilterAnd{Filters: append([]Filter{f}, t.Filters...)}
	default:
		q.Filter = &FilterAnd{Filters: []Filter{f, t}}
	}
}

// TimeRange returns the _time range q's top-level time filters allow, with
// math.MinInt64 and math.MaxInt64 for open ends.
func (q *Query) TimeRange() (lo, hi int64) {
	lo, hi = math.MinInt64, math.MaxInt64
	narrow := func(f Filter) {
		if ft, ok := f.(*FilterTime); ok {
			lo, hi = max(lo, ft.Min), min(hi, ft.Max)
		}
	}
	if fa, ok := q.Filter.(*FilterAnd); ok {
		for _, f := range fa.Filters {
			narrow(f)
		}
	} else {
		narrow(q.Filter)
	}
	return lo, hi
}

// DropPipes removes every pipe (the ignore_pipes arg).
func (q *Query) DropPipes() { q.Pipes = nil }

// AddPipes appends pipes to q.
func (q *Query) AddPipes(p ...Pipe) { q.Pipes = append(q.Pipes, p...) }

// CanReturnLastN reports whether every pipe keeps each row's _time, so
// that "the last N rows" means the N with the highest _time: then the query
// API answers limit=N with "| sort by (_time) desc | limit N".
func (q *Query) CanReturnLastN() bool {
	for _, p := range q.Pipes {
		if !keepsTime(p) {
			return false
		}
	}
	return true
}

func keepsTime(p Pipe) bool {
	switch t := p.(type) {
	case *PipeFields:
		return matchesAny(t.Fields, "_time")
	case *PipeDelete:
		return !matchesAny(t.Fields, "_time")
	case *PipeRename:
		for _, pr := range t.Pairs {
			if matchesAny([]string{pr.Src}, "_time") || matchesAny([]string{pr.Dst}, "_time") {
				return false
			}
		}
		return true
	case *PipeCopy:
		for _, pr := range t.Pairs {
			if matchesAny([]string{pr.Dst}, "_time") {
				return false
			}
		}
		return true
	case *PipeFormat:
		return t.Result != "_time"
	case *PipeLen:
		return t.Result != "_time"
	case *PipeReplace:
		return t.Field != "_time"
	case *PipePack:
		return t.Result != "_time"
	case *PipeRunningStats:
		return !slices.ContainsFunc(t.Funcs, func(f RunningFunc) bool { return f.Result == "_time" })
	case *PipeCoalesce:
		return t.Result != "_time"
	case *PipeHash:
		return t.Result != "_time"
	case *PipeJSONArrayLen:
		return t.Result != "_time"
	case *PipeJSONArrayConcat:
		return t.Result != "_time"
	case *PipeSplit:
		return t.Result != "_time"
	case *PipeUnpackWords:
		return t.Result != "_time"
	case *PipeFilter, *PipeExtract, *PipeExtractRegexp, *PipeUnpack, *PipeMath, *PipeUnroll, *PipeDropEmptyFields,
		*PipeDecolorize, *PipeCollapseNums, *PipeTimeAdd, *PipeUnpackSyslog,
		*PipeSetStreamFields: // as VictoriaLogs says, even at _time
		return true
	}
	return false
}

// CanLiveTail reports whether q can be tailed: its pipes work row by row
// (no stats, sort, limit, union and the like). A join and subqueries in
// filters can: their subqueries run once, before the tail starts
// (ResolveSubqueries), as in VictoriaLogs.
func (q *Query) CanLiveTail() bool {
	for _, p := range q.Pipes {
		switch p.(type) {
		case *PipeFields, *PipeDelete, *PipeRename, *PipeCopy, *PipeFilter, *PipeExtract,
			*PipeExtractRegexp, *PipeUnpack, *PipeMath, *PipeFormat, *PipeLen, *PipeUnroll,
			*PipeReplace, *PipeDropEmptyFields, *PipePack, *PipeCoalesce, *PipeDecolorize, *PipeHash,
			*PipeJSONArrayLen, *PipeJSONArrayConcat, *PipeCollapseNums, *PipeSplit, *PipeTimeAdd, *PipeUnpackWords,
			*PipeUnpackSyslog, *PipeSample, *PipeSetStreamFields, *PipeJoin:
		default:
			return false
		}
	}
	return true
}

// FixedFieldsOrder reports whether q's result rows have their fields in an
// order the query sets (a last fields pipe without wildcards, or stats, top,
// uniq, field_names, field_values, facets); otherwise the API sorts each
// row's fields by name, as VictoriaLogs does.
func (q *Query) FixedFieldsOrder() bool {
	for i := len(q.Pipes) - 1; i >= 0; i-- {
		switch t := q.Pipes[i].(type) {
		case *PipeFields:
			if !hasWildcard(t.Fields) {
				return true
			}
		case *PipeStats, *PipeTop, *PipeUniq, *PipeFieldNames, *PipeFieldValues, *PipeFacets, *PipeGenerateSequence:
			return true
		}
	}
	return false
}

// FixedFields returns the fields every result row has, in order, when the
// query fixes them: its last fields or stats pipe, followed only by sort,
// limit and offset.
func (q *Query) FixedFields() ([]string, bool) {
	for i := len(q.Pipes) - 1; i >= 0; i-- {
		switch t := q.Pipes[i].(type) {
		case *PipeSort, *PipeLimit, *PipeOffset:
		case *PipeFields:
			if hasWildcard(t.Fields) {
				return nil, false
			}
			return slices.Clone(t.Fields), true
		case *PipeStats:
			return statsResultFields(t), true
		default:
			return nil, false
		}
	}
	return nil, false
}

func statsResultFields(ps *PipeStats) []string {
	var out []string
	for _, b := range ps.By {
		out = append(out, b.Name)
	}
	for _, f := range ps.Funcs {
		out = append(out, f.Result)
	}
	return out
}

// StatsLabels returns the label fields of a stats query (the last stats
// pipe's by fields and row_min/row_max results, as changed by the pipes
// after it), for /select/logsql/stats_query and stats_query_range. With
// step > 0 it first adds "_time:step offset offset" in front of every stats
// pipe's by fields, as stats_query_range does. It fails as VictoriaLogs
// does for queries without stats, with pipes after the stats that cannot be
// told apart per label set, or without metric fields.
func (q *Query) StatsLabels(step, offset int64) ([]string, error) {
	idx := -1
	for i := len(q.Pipes) - 1; i >= 0; i-- {
		if _, ok := q.Pipes[i].(*PipeStats); ok {
			idx = i
			break
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("missing `| stats ...` pipe in the query [%s]", q)
	}
	ps := q.Pipes[idx].(*PipeStats)
	if step > 0 {
		for _, p := range q.Pipes[:idx] {
			if _, ok := p.(*PipeStats); ok {
				continue
			}
			if !keepsTime(p) {
				return nil, fmt.Errorf("the pipe `| %s` cannot be put in front of `| %s`, since it may modify or delete `_time` field", p, ps)
			}
		}
		for _, p := range q.Pipes {
			if s, ok := p.(*PipeStats); ok {
				addTimeBucket(s, step, offset)
			}
		}
	}

	var labels []string
	metrics := map[string]bool{}
	addLabel := func(f string) {
		if !slices.Contains(labels, f) {
			labels = append(labels, f)
		}
		delete(metrics, f)
	}
	addMetric := func(f string) {
		if i := slices.Index(labels, f); i >= 0 {
			labels = slices.Delete(labels, i, i+1)
		}
		metrics[f] = true
	}
	for _, b := range ps.By {
		addLabel(b.Name)
	}
	for _, f := range ps.Funcs {
		switch f.Name {
		case "row_min", "row_max", "row_any":
			addLabel(f.Result)
		default:
			addMetric(f.Result)
		}
	}
	for _, p := range q.Pipes[idx+1:] {
		switch t := p.(type) {
		case *PipeFilter, *PipeSort:
		case *PipeLimit, *PipeOffset:
			if step > 0 {
				return nil, fmt.Errorf("the %s pipe isn't allowed in range queries, since it cannot be applied individualley per each step; step=%d", p, step)
			}
		case *PipeMath:
			for _, a := range t.Assigns {
				addMetric(a.Result)
			}
		case *PipeFields:
			labels = slices.DeleteFunc(labels, func(f string) bool { return !matchesAny(t.Fields, f) })
			for f := range metrics {
				if !matchesAny(t.Fields, f) {
					delete(metrics, f)
				}
			}
		case *PipeDelete:
			labels = slices.DeleteFunc(labels, func(f string) bool { return matchesAny(t.Fields, f) })
			for f := range metrics {
				if matchesAny(t.Fields, f) {
					delete(metrics, f)
				}
			}
		case *PipeCopy:
			for _, pr := range t.Pairs {
				for _, f := range slices.Clone(labels) {
					if dst, ok := renamed(pr, f); ok {
						addLabel(dst)
					}
				}
				for _, f := range maps(metrics) {
					if _, ok := renamed(RenamePair{Src: pr.Dst, Dst: pr.Dst}, f); ok {
						delete(metrics, f)
					}
					if dst, ok := renamed(pr, f); ok {
						addMetric(dst)
					}
				}
			}
		case *PipeRename:
			for _, pr := range t.Pairs {
				old := labels
				labels = nil
				for _, f := range old {
					if dst, ok := renamed(pr, f); ok {
						addLabel(dst)
					} else {
						addLabel(f)
					}
				}
				for _, f := range maps(metrics) {
					if _, ok := renamed(RenamePair{Src: pr.Dst, Dst: pr.Dst}, f); ok {
						delete(metrics, f)
					}
					if dst, ok := renamed(pr, f); ok {
						delete(metrics, f)
						addMetric(dst)
					}
				}
			}
		case *PipeFormat:
			addLabel(t.Result)
		case *PipeUnpack:
			if t.Format != "json" {
				return nil, fmt.Errorf("the %q pipe cannot be put after %q pipe in the query [%s]", p.String(), ps.String(), q)
			}
			if len(t.Fields) == 0 {
				return nil, fmt.Errorf("missing fields(...) after %q in the query [%s]", p.String(), q)
			}
			for _, f := range t.Fields {
				if strings.HasSuffix(f, "*") {
					return nil, fmt.Errorf("fields(...) at %q cannot contain wildcard filter; got %s; query [%s]", p.String(), f, q)
				}
				addLabel(f)
			}
		default:
			return nil, fmt.Errorf("the %q pipe cannot be put after %q pipe in the query [%s]", p.String(), ps.String(), q)
		}
	}
	if len(metrics) == 0 {
		return nil, fmt.Errorf("missing metric fields in the results of query [%s]", q)
	}
	return labels, nil
}

// maps returns a copy of m's keys, for loops that change m.
func maps(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TimeBucket is the stats by field "_time:step offset offset".
func TimeBucket(step, offset int64) ByField {
	b := ByField{Name: "_time", Bucket: formatNanos(step), BucketNs: step}
	if offset != 0 {
		b.Offset, b.OffsetText = offset, formatNanos(offset)
	}
	return b
}

// CompareNatural orders strings as sort does: numbers by value, times by
// time, other text byte-wise.
func CompareNatural(a, b string) int { return compareNatural(a, b) }

// addTimeBucket makes "_time:step offset offset" the first by field of ps,
// replacing any _time field it had.
func addTimeBucket(ps *PipeStats, step, offset int64) {
	by := []ByField{TimeBucket(step, offset)}
	for _, f := range ps.By {
		if f.Name != "_time" {
			by = append(by, f)
		}
	}
	ps.By = by
}

// formatNanos writes a duration in LogsQL syntax ("1h", "90s", "1500ms").
func formatNanos(ns int64) string {
	neg := ns < 0
	if neg {
		ns = -ns
	}
	units := []struct {
		name string
		n    int64
	}{{"w", 7 * 24 * 3600e9}, {"d", 24 * 3600e9}, {"h", 3600e9}, {"m", 60e9}, {"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for _, u := range units {
		if ns >= u.n {
			fmt.Fprintf(&b, "%d%s", ns/u.n, u.name)
			ns %= u.n
		}
	}
	if b.Len() == 0 || b.String() == "-" {
		b.WriteString("0s")
	}
	return b.String()
}

// matchesAny reports whether name matches one of the field patterns (a
// name, or a prefix ending in '*').
func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if pre, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(name, pre) {
				return true
			}
		} else if p == name {
			return true
		}
	}
	return false
}

func hasWildcard(fields []string) bool {
	for _, f := range fields {
		if strings.HasSuffix(f, "*") {
			return true
		}
	}
	return false
}

// renamed applies a rename pair (with its prefix patterns) to name.
func renamed(pr RenamePair, name string) (string, bool) {
	if pre, ok := strings.CutSuffix(pr.Src, "*"); ok {
		rest, ok := strings.CutPrefix(name, pre)
		if !ok {
			return "", false
		}
		return strings.TrimSuffix(pr.Dst, "*") + rest, true
	}
	if name != pr.Src {
		return "", false
	}
	return pr.Dst, true
}
