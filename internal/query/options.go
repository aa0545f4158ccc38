package query

import (
	"math"
	"strconv"
	"strings"
)

// QueryOptions are a query's "options(...)" prefix, as VictoriaLogs
// v1.52.1 reads it: "options(concurrency=2, ignore_global_time_filter=true)
// QUERY". A subquery takes the options of the query that holds it, and
// overrides those it names in options of its own.
//
//   - Concurrency caps the workers that run the query (0: the default).
//   - ParallelReaders caps the inputs read at once (0: the default).
//   - IgnoreGlobalTimeFilter, when set and true, keeps the request's time
//     range (start, end; spate query --since, --until) off the query:
//     AddTimeFilter passes it by.
//   - AllowPartialResponse, when set, overrides spate serve
//     --allow-partial for the query.
//   - GlobalFilter, "global_filter=(FILTER)", must match too: the query
//     and its subqueries run with the filter "GlobalFilter AND their
//     filter" (not the filter pipes).
//   - TimeOffset, "time_offset=1h" (nanoseconds, as written in
//     TimeOffsetText), moves the query into the past: the time filters of
//     its filter and the request's time range select logs TimeOffset
//     earlier (open ends stay open), and the logs that pass it reach the
//     pipes (and the answer) with TimeOffset added to their _time; the
//     filter pipes that come first see the logs' own times, as part of
//     the filter (see headChain).
type QueryOptions struct {
	Concurrency            int
	ParallelReaders        int
	IgnoreGlobalTimeFilter *bool
	AllowPartialResponse   *bool
	GlobalFilter           Filter
	TimeOffset             int64
	TimeOffsetText         string
}

// timeOffset returns the time_offset in effect for q, 0 for none.
func (q *Query) timeOffset() int64 {
	if o := q.EffectiveOptions(); o != nil {
		return o.TimeOffset
	}
	return 0
}

// shiftTimeFilters returns f with its time filters (at any depth of AND,
// OR and NOT, not inside subqueries) moved off earlier: _time:[a, b]
// selects [a-off, b-off], a day or week range's offset grows by off. The
// copies keep their text, so the query prints as written. f itself is not
// changed.
func shiftTimeFilters(f Filter, off int64) Filter {
	if off == 0 {
		return f
	}
	switch t := f.(type) {
	case *FilterTime:
		// An open end (_time:>X) stays open, as in VictoriaLogs.
		c := *t
		if t.Min != math.MinInt64 {
			c.Min = addNoOverflow(t.Min, -off)
		}
		if t.Max != math.MaxInt64 {
			c.Max = addNoOverflow(t.Max, -off)
		}
		return &c
	case *FilterDayRange:
		c := *t
		c.Offset = addNoOverflow(t.Offset, off)
		return &c
	case *FilterWeekRange:
		c := *t
		c.Offset = addNoOverflow(t.Offset, off)
		return &c
	case *FilterAnd:
		c := &FilterAnd{Filters: make([]Filter, len(t.Filters))}
		for i, x := range t.Filters {
			c.Filters[i] = shiftTimeFilters(x, off)
		}
		return c
	case *FilterOr:
		c := &FilterOr{Filters: make([]Filter, len(t.Filters))}
		for i, x := range t.Filters {
			c.Filters[i] = shiftTimeFilters(x, off)
		}
		return c
	case *FilterNot:
		return &FilterNot{Filter: shiftTimeFilters(t.Filter, off)}
	}
	return f
}

// EffectiveOptions returns the options in effect for q: its own, else
// those of the query that holds it, else nil.
func (q *Query) EffectiveOptions() *QueryOptions {
	if q.Options != nil {
		return q.Options
	}
	return q.inherited
}

// String prints "options(...)", the options in VictoriaLogs' order.
func (o *QueryOptions) String() string {
	var a []string
	if o.Concurrency > 0 {
		a = append(a, "concurrency="+strconv.Itoa(o.Concurrency))
	}
	if o.ParallelReaders > 0 {
		a = append(a, "parallel_readers="+strconv.Itoa(o.ParallelReaders))
	}
	if o.IgnoreGlobalTimeFilter != nil {
		a = append(a, "ignore_global_time_filter="+strconv.FormatBool(*o.IgnoreGlobalTimeFilter))
	}
	if o.AllowPartialResponse != nil {
		a = append(a, "allow_partial_response="+strconv.FormatBool(*o.AllowPartialResponse))
	}
	if o.TimeOffsetText != "" {
		a = append(a, "time_offset="+o.TimeOffsetText)
	}
	if o.GlobalFilter != nil {
		a = append(a, "global_filter=("+o.GlobalFilter.String()+")")
	}
	return "options(" + strings.Join(a, ", ") + ")"
}

// finalFilter returns the filter q runs with: its own, after the global
// filter of its options, if any.
func (q *Query) finalFilter() Filter {
	if o := q.EffectiveOptions(); o != nil && o.GlobalFilter != nil {
		return &FilterAnd{Filters: []Filter{o.GlobalFilter, q.Filter}}
	}
	return q.Filter
}

// parseOptionsPrefix parses a query's "options(...)" prefix if it has one.
func (p *parser) parseOptionsPrefix() (*QueryOptions, error) {
	if p.isKw("options") && p.peek(1).kind == lexPunct && p.peek(1).text == "(" {
		return p.parseQueryOptions()
	}
	return nil, nil
}

// parseQueryOptions parses "options(name=value, ...)"; the current token
// is "options".
func (p *parser) parseQueryOptions() (*QueryOptions, error) {
	p.next()
	if err := p.expectPunct("(", "after 'options'"); err != nil {
		return nil, err
	}
	// A subquery's options start from those of the query around it, as
	// VictoriaLogs reads them: it overrides only the ones it names.
	o := &QueryOptions{}
	if p.options != nil {
		*o = *p.options
	}
	for !p.isPunct(")") {
		pos := p.cur().pos
		name, err := p.compound(stopsRowName, "option name in options(...)")
		if err != nil {
			return nil, err
		}
		switch name {
		case "concurrency", "parallel_readers", "ignore_global_time_filter", "allow_partial_response", "global_filter", "time_offset":
		default:
			return nil, p.errorf(pos, "unknown query option %q; want concurrency, parallel_readers, ignore_global_time_filter, allow_partial_response, time_offset or global_filter", name)
		}
		if !p.isPunct("=") {
			return nil, p.errorf(p.cur().pos, "missing '=' after option %q; got %s", name, p.describe())
		}
		p.next()
		vpos := p.cur().pos
		if name == "global_filter" {
			sq, err := p.parseSubquery("global_filter")
			if err != nil {
				return nil, err
			}
			if len(sq.Pipes) > 0 {
				return nil, p.errorf(vpos, "global_filter in options(...) takes a filter, not pipes: global_filter=(%s)", sq)
			}
			o.GlobalFilter = sq.Filter
			if err := p.endOption(); err != nil {
				return nil, err
			}
			continue
		}
		v, err := p.compound(stopsGeneric, "value of option "+name)
		if err != nil {
			return nil, err
		}
		switch name {
		case "time_offset":
			d, ok := parseDurationLit(v)
			if !ok {
				return nil, p.errorf(vpos, "cannot parse 'time_offset=%s' as a duration", v)
			}
			o.TimeOffset, o.TimeOffsetText = d, v
		case "concurrency", "parallel_readers":
			n, ok := parseUintLit(v)
			if !ok || n > 1<<20 {
				return nil, p.errorf(vpos, "cannot parse '%s=%s' as an unsigned integer", name, v)
			}
			if name == "concurrency" {
				o.Concurrency = int(n)
			} else {
				o.ParallelReaders = int(n)
			}
		case "ignore_global_time_filter", "allow_partial_response":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, p.errorf(vpos, "cannot parse '%s=%s' as a boolean", name, v)
			}
			if name == "ignore_global_time_filter" {
				o.IgnoreGlobalTimeFilter = &b
			} else {
				o.AllowPartialResponse = &b
			}
		}
		if err := p.endOption(); err != nil {
			return nil, err
		}
	}
	p.next()
	return o, nil
}

// endOption passes the ',' after an option, or checks that ')' follows.
func (p *parser) endOption() error {
	if p.isPunct(",") {
		p.next()
	} else if !p.isPunct(")") {
		return p.errorf(p.cur().pos, "missing ',' or ')' in options(...); got %s", p.describe())
	}
	return nil
}
