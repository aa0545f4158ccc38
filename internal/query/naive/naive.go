// Package naive is a slow, simple reference evaluator of LogsQL: the oracle
// the real engine (package query) is checked against.
//
// It materialises every log line as a map from field name to text value and
// runs the filter and each pipe over the whole list, one row at a time,
// following VictoriaLogs v1.26.0's observed semantics (see
// shared/conformance/README.md). There are no indexes, no column types, no
// shortcuts and no concurrency: clarity over speed. It shares no code with
// the engine; from package query it uses only the syntax tree and Parse.
//
// Where VictoriaLogs' behaviour depends on its storage layout (block
// boundaries, sampling, worker count) the oracle picks the exact,
// layout-free answer and says so next to the code. Notable choices:
//
//   - Rows keep file order unless a pipe sorts them. (VictoriaLogs returns
//     rows grouped by stream and block, and `limit` without `sort` keeps the
//     newest rows; here it keeps the first rows in file order.)
//   - A number keeps its source text ("1470.0"); VictoriaLogs prints numbers
//     of a purely numeric column block canonically ("1470"). Comparisons that
//     treat values as numbers are unaffected.
//   - median and quantile are exact (VictoriaLogs samples above 10,000
//     values per worker).
//   - A line without a time field has no _time (there is no ingestion time).
//     A line that is not a JSON object, or whose time does not parse, is
//     kept (VictoriaLogs drops both at ingestion); see parseLogLine.
//   - A result row with no non-empty field is not returned, as VictoriaLogs
//     returns none.
//   - field_names fed logs as stored (the first pipe, or after filter,
//     limit, offset and sort only) lists _stream and _stream_id, which every
//     stored VictoriaLogs log has; rows here do not carry them otherwise.
package naive

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spate-io/spate/internal/query"
)

// Options configures how log lines become rows.
type Options struct {
	// MsgField is the field that becomes _msg. Empty: per line, the first
	// of msg, message and log that is present and non-empty.
	MsgField string
	// TimeField is the field that becomes _time. Empty: per line, the first
	// of ts, time, timestamp and @timestamp that is present and non-empty.
	TimeField string
	// Now is what a math now() returns. Relative _time filters are resolved
	// by query.Parse, not here.
	Now time.Time
	// AccountID and ProjectID are the tenant of the logs, for the
	// _stream_id of logs without one.
	AccountID, ProjectID uint32
}

// row is one log entry or result row: field name to value. An empty value
// and a missing field are the same thing; set keeps empty values out.
type row map[string]string

func (r row) set(name, value string) {
	if value == "" {
		delete(r, name)
		return
	}
	r[name] = value
}

func (r row) clone() row {
	c := make(row, len(r))
	for k, v := range r {
		c[k] = v
	}
	return c
}

// Run evaluates q over lines, each one log line without its '\n', and
// returns the result rows with their values as text. Empty fields are left
// out of the rows, and a row left with no field at all is not returned
// (VictoriaLogs returns no such rows: "uniq by (a, b)" has no row for logs
// lacking both, and "stats values(f) | unroll (f)" none for empty values).
// Lines that are empty after trimming a trailing '\r' (or that hold only
// white space) are skipped.
//
// The cost is O(lines) memory for the materialised rows plus whatever the
// pipes keep; Run is meant for test inputs of tens of thousands of lines.
func Run(q *query.Query, lines []string, opts Options) ([]map[string]string, error) {
	return run(q, parseLines(lines, opts), opts)
}

// parseLines turns log lines into rows, skipping empty lines. A line of
// spaces is not empty: it is a plain-text log (spate reads files, where it
// is a line like any other; only "" and "\r" are not logs).
func parseLines(lines []string, opts Options) []row {
	var rows []row
	for _, line := range lines {
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			continue
		}
		rows = append(rows, parseLogLine(line, opts))
	}
	return rows
}

// run evaluates q over parsed logs. It leaves logs alone: the rows passing
// the filter are copied before the pipes (which modify rows) see them.
func run(q *query.Query, logs []row, opts Options) ([]map[string]string, error) {
	rows, err := runRows(q, logs, opts)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]string, 0, len(rows))
	for _, r := range rows {
		m := make(map[string]string, len(r))
		for k, v := range r {
			if v != "" {
				m[k] = v
			}
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
	return out, nil
}

// runRows is run without the last step: its rows include those with no
// field, which a subquery's values and rows include.
func runRows(q *query.Query, logs []row, opts Options) ([]row, error) {
	if err := checkStreamContext(q); err != nil {
		return nil, err
	}
	ev := &evaluator{opts: opts, regexps: make(map[string]*regexp.Regexp), logs: logs}
	ev.timeMin, ev.timeMax, ev.hasTimeRange = topLevelTimeRange(q.Filter)

	filter := q.Filter
	if o := q.EffectiveOptions(); o != nil && o.GlobalFilter != nil {
		filter = &query.FilterAnd{Filters: []query.Filter{o.GlobalFilter, q.Filter}}
	}
	var off int64 // time_offset: added to the _time of the rows that pass
	if o := q.EffectiveOptions(); o != nil {
		off = o.TimeOffset
	}
	// With an offset, the filter pipes right after the filter see the
	// logs' own times, as part of the filter (VictoriaLogs merges them
	// into it).
	lead := 0
	for off != 0 && lead < len(q.Pipes) {
		pf, ok := q.Pipes[lead].(*query.PipeFilter)
		if !ok {
			break
		}
		filter = &query.FilterAnd{Filters: []query.Filter{filter, pf.Filter}}
		lead++
	}
	var rows []row
	for _, r := range logs {
		if ev.match(filter, r) {
			c := r.clone()
			if t, ok := parseTime(c["_time"]); ok && off != 0 {
				c["_time"] = time.Unix(0, t+off).UTC().Format(time.RFC3339Nano)
			}
			rows = append(rows, c)
		}
		if ev.err != nil {
			return nil, ev.err
		}
	}

	stored := true // the rows are logs as stored: nothing has changed their fields
	for _, p := range q.Pipes[lead:] {
		var err error
		rows, err = ev.applyPipe(p, rows, stored)
		switch p.(type) {
		case *query.PipeFilter, *query.PipeLimit, *query.PipeOffset, *query.PipeSort:
		default:
			stored = false
		}
		if err == nil {
			err = ev.err
		}
		if err != nil {
			return nil, fmt.Errorf("cannot apply pipe %q: %w", p.String(), err)
		}
	}
	return rows, nil
}

// subquery runs q, a subquery, over the same logs, and returns its rows
// (with those that have no field).
func (ev *evaluator) subquery(q *query.Query) []row {
	rows, err := runRows(q, ev.logs, ev.opts)
	if err != nil && ev.err == nil {
		ev.err = fmt.Errorf("subquery [%s]: %w", q, err)
	}
	return rows
}

// subqueryValues returns the distinct values of field in q's rows, "" for
// a row without it; computed once per subquery.
func (ev *evaluator) subqueryValues(q *query.Query, field string) []string {
	if vals, ok := ev.subValues[q]; ok {
		return vals
	}
	var vals []string
	for _, r := range ev.subquery(q) {
		if !slices.Contains(vals, r[field]) {
			vals = append(vals, r[field])
		}
	}
	if ev.subValues == nil {
		ev.subValues = make(map[*query.Query][]string)
	}
	ev.subValues[q] = vals
	return vals
}

// evaluator holds what one Run needs across rows: options, compiled
// regexps, the query's time range (for rate) and the first error met inside
// a filter (a bad regexp), which Run reports.
type evaluator struct {
	opts    Options
	regexps map[string]*regexp.Regexp
	err     error

	hasTimeRange     bool
	timeMin, timeMax int64

	// logs are the logs the query runs over, which its subqueries read
	// too; subValues caches subqueryValues.
	logs      []row
	subValues map[*query.Query][]string
}

// regexp returns the compiled expr, recording a compile error in ev.err.
func (ev *evaluator) regexp(expr string) *regexp.Regexp {
	if re, ok := ev.regexps[expr]; ok {
		return re
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		if ev.err == nil {
			ev.err = fmt.Errorf("cannot compile regexp %q: %w", expr, err)
		}
		re = nil
	}
	ev.regexps[expr] = re
	return re
}

// topLevelTimeRange returns the _time range the query's filter imposes on
// every row: a FilterTime at the top, or the intersection of the FilterTime
// children of a top-level AND. It is what rate() divides by.
func topLevelTimeRange(f query.Filter) (lo, hi int64, ok bool) {
	lo, hi = math.MinInt64, math.MaxInt64
	switch f := f.(type) {
	case *query.FilterTime:
		return f.Min, f.Max, true
	case *query.FilterAnd:
		for _, c := range f.Filters {
			if t, isTime := c.(*query.FilterTime); isTime {
				lo = max(lo, t.Min)
				hi = min(hi, t.Max)
				ok = true
			}
		}
	}
	return lo, hi, ok
}
