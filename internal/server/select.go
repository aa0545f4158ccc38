package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/logstream"
	"github.com/spate-io/spate/internal/ndjson"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/segment"
	"github.com/spate-io/spate/internal/storescan"
)

// This file is the VictoriaLogs querying API, /select/logsql/*, over the
// data directory: each request parses its LogsQL query, adds what its args
// ask for (start, end, limit, the pipe the endpoint stands for) to the
// parsed query as VictoriaLogs v1.52.1 does (app/vlselect/logsql), runs it
// over a snapshot of the tenant's segments (internal/storescan) and writes
// the answer in VictoriaLogs' shape. Live tailing is in tail.go, the stats
// endpoints in select_stats.go.

// Query defaults, as VictoriaLogs' -search.* flags.
const (
	// DefaultMaxQueryDuration bounds a query's run time; a request's
	// timeout arg may lower it (-search.maxQueryDuration).
	DefaultMaxQueryDuration = 30 * time.Second
	// DefaultMaxQueueDuration is how long a query waits for one of the
	// MaxConcurrentQueries slots before it gets 503
	// (-search.maxQueueDuration).
	DefaultMaxQueueDuration = 10 * time.Second
	// MaxQueryLen caps the query arg (-search.maxQueryLen).
	MaxQueryLen = 16 << 10
	// DefaultQueryShare is the share of the CPUs queries may use while a
	// request is being ingested (Config.QueryShare).
	DefaultQueryShare = 0.25
	// DefaultQueryMemory is the memory one query's exact stats state may
	// hold before count_uniq and quantiles switch to sketches and stats
	// groups spill to disk (query.Options.MaxMemory).
	DefaultQueryMemory = 64 << 20
)

// defaultMaxConcurrentQueries is VictoriaLogs' default: twice the CPUs on
// small machines, at most 16.
func defaultMaxConcurrentQueries() int {
	n := runtime.GOMAXPROCS(0)
	if n <= 4 {
		n *= 2
	}
	return min(n, 16)
}

// selectArgs are the args every /select/logsql endpoint shares, with the
// query they produce (VictoriaLogs' commonArgs).
type selectArgs struct {
	q      *query.Query
	tenant segment.Tenant
	// ts is the query's timestamp: relative times count back from it,
	// and stats_query reports it. From the time arg, else end, else now.
	ts int64
	// startAligned and endAligned are the start and end args (end made
	// inclusive) aligned to step, or MinInt64/MaxInt64 when absent.
	startAligned, endAligned int64
	began                    time.Time
	// approx lists the results the request's queries computed with
	// sketches (query.Stats.Approximate), for the Spate-Approximate header.
	approx []string
	// partial lists the peers whose data an answer merged from
	// --select-peers leaves out (Config.AllowPartial).
	partial []string
}

// approxHeader names the results computed with sketches instead of
// exactly (past --query-memory); a header, or a trailer of /query.
const approxHeader = "Spate-Approximate"

// httpError is an error with the status VictoriaLogs answers it with.
type httpError struct {
	code int
	err  error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

// parseSelectArgs reads the common args of r (VictoriaLogs'
// parseCommonArgsExt): query, start, end, time, ignore_pipes,
// extra_filters, extra_stream_filters; the tenant is the one route found.
func (s *Server) parseSelectArgs(r *http.Request) (*selectArgs, error) {
	a := &selectArgs{tenant: tenantOf(r), began: time.Now()}
	now := s.cfg.Now().UnixNano()
	start, startOK, err := timeArg(r, "start", now)
	if err != nil {
		return nil, err
	}
	end, endOK, err := timeArg(r, "end", now)
	if err != nil {
		return nil, err
	}
	if endOK && end != math.MinInt64 {
		end-- // end is exclusive
	}
	ts, timeOK, err := timeArg(r, "time", now)
	if err != nil {
		return nil, err
	}
	if !timeOK {
		ts = now
		if endOK {
			ts = end
		}
	}
	a.ts = ts
	qs := r.FormValue("query")
	if qs == "" {
		return nil, errors.New("`query` arg cannot be empty")
	}
	if len(qs) > MaxQueryLen {
		return nil, fmt.Errorf("the `query` arg length cannot exceed %d bytes; the current query length is %d bytes", MaxQueryLen, len(qs))
	}
	a.q, err = query.Parse(qs, time.Unix(0, ts))
	if err != nil {
		return nil, fmt.Errorf("cannot parse `query` arg [%s]: %w", qs, err)
	}
	if v := r.FormValue("ignore_pipes"); v != "" {
		ignore, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("cannot parse ignore_pipes=%q as bool: %w", v, err)
		}
		if ignore {
			a.q.DropPipes()
		}
	}
	if startOK || endOK {
		if !startOK {
			start = math.MinInt64
		}
		if !endOK {
			end = math.MaxInt64
		}
		if step, ok := query.ParseDuration(r.FormValue("step")); ok {
			off, _ := query.ParseDuration(r.FormValue("offset"))
			start, end = alignToStep(start, end, step, off)
		}
		a.q.AddTimeFilter(start, end)
	}
	a.startAligned, a.endAligned = int64(math.MinInt64), int64(math.MaxInt64)
	if startOK {
		a.startAligned = start
	}
	if endOK {
		a.endAligned = end
	}
	for _, v := range r.Form["extra_filters"] {
		f, err := parseExtraFilters(v, false, ts)
		if err != nil {
			return nil, err
		}
		if f != nil {
			a.q.AddFilter(f)
		}
	}
	for _, v := range r.Form["extra_stream_filters"] {
		f, err := parseExtraFilters(v, true, ts)
		if err != nil {
			return nil, err
		}
		if f != nil {
			a.q.AddFilter(f)
		}
	}
	return a, nil
}

// timeArg parses the time arg name of r in any form VictoriaLogs takes:
// RFC 3339 with or without a zone (local time then), the partial dates
// 2026, 2026-01, 2026-01-02, 2026-01-02T15, 2026-01-02T15:04, Unix
// seconds, milliseconds, microseconds or nanoseconds (told apart by
// magnitude, fractions allowed), "now", and durations back from now ("5m",
// "-5m", "now-1h").
func timeArg(r *http.Request, name string, now int64) (int64, bool, error) {
	s := r.FormValue(name)
	if s == "" {
		return 0, false, nil
	}
	ns, err := parseTimeArg(s, now)
	if err != nil {
		return 0, false, fmt.Errorf("cannot parse %s=%s: %w", name, s, err)
	}
	return ns, true, nil
}

func parseTimeArg(s string, now int64) (int64, error) {
	return query.ParseTime(s, now, time.Local)
}

func subSaturated(a, b int64) int64 {
	if b >= 0 && a < math.MinInt64+b {
		return math.MinInt64
	}
	if b < 0 && a > math.MaxInt64+b {
		return math.MaxInt64
	}
	return a - b
}

// alignToStep widens [start, end] to whole steps of buckets that begin at
// offset (VictoriaLogs' alignStartEndToStep): start down to its bucket's
// first nanosecond, end up to its bucket's last.
func alignToStep(start, end, step, offset int64) (int64, int64) {
	if step <= 0 {
		return start, end
	}
	start = subSaturated(start, -offset)
	if start >= 0 {
		start -= start % step
	} else {
		start = subSaturated(start, step+start%step)
	}
	start = subSaturated(start, offset)
	end = subSaturated(end, -offset)
	if end <= 0 {
		end -= end % step
	} else {
		end = subSaturated(end, -(step - end%step))
	}
	end = subSaturated(end, offset)
	if end > math.MinInt64 {
		end--
	}
	return start, end
}

// parseExtraFilters parses an extra_filters (or, with stream set,
// extra_stream_filters) arg: LogsQL, or a JSON object of field to value or
// array of values.
func parseExtraFilters(s string, stream bool, ts int64) (query.Filter, error) {
	if s == "" {
		return nil, nil
	}
	if strings.HasPrefix(s, `{"`) {
		kvs, err := parseExtraFiltersJSON(s)
		if err != nil {
			return nil, err
		}
		parts := make([]string, len(kvs))
		for i, kv := range kvs {
			switch {
			case stream && len(kv.values) == 1:
				parts[i] = fmt.Sprintf("%q=%q", kv.key, kv.values[0])
			case stream:
				alts := make([]string, len(kv.values))
				for j, v := range kv.values {
					alts[j] = regexp.QuoteMeta(v)
				}
				parts[i] = fmt.Sprintf("%q=~%q", kv.key, strings.Join(alts, "|"))
			case len(kv.values) == 1:
				parts[i] = fmt.Sprintf("%q:=%q", kv.key, kv.values[0])
			default:
				alts := make([]string, len(kv.values))
				for j, v := range kv.values {
					alts[j] = strconv.Quote(v)
				}
				parts[i] = fmt.Sprintf("%q:in(%s)", kv.key, strings.Join(alts, ","))
			}
		}
		if stream {
			s = "{" + strings.Join(parts, ",") + "}"
		} else {
			s = strings.Join(parts, " ")
		}
	}
	f, err := query.ParseFilter(s, time.Unix(0, ts))
	if err != nil {
		return nil, fmt.Errorf("cannot parse extra filters [%s]: %w", s, err)
	}
	return f, nil
}

type extraFilter struct {
	key    string
	values []string
}

// parseExtraFiltersJSON reads {"field":"value","other":["a","b"],...},
// keeping the fields in order.
func parseExtraFiltersJSON(s string) ([]extraFilter, error) {
	d := json.NewDecoder(strings.NewReader(s))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("cannot parse extra filters %q: want a JSON object", s)
	}
	var out []extraFilter
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("cannot parse extra filters %q: %w", s, err)
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return nil, fmt.Errorf("cannot parse extra filters %q: %w", s, err)
		}
		var one string
		var many []string
		switch {
		case json.Unmarshal(raw, &one) == nil:
			out = append(out, extraFilter{key, []string{one}})
		case json.Unmarshal(raw, &many) == nil:
			if len(many) > 0 {
				out = append(out, extraFilter{key, many})
			}
		default:
			return nil, fmt.Errorf("unexpected type of value for key %q: %s; want a string or an array of strings", key, raw)
		}
	}
	return out, nil
}

// selectHandler adapts a /select handler: CORS headers, the concurrency
// limit, the timeout arg, and VictoriaLogs' errors (400 with the message as
// text; 503 when the query outlives its time).
func (s *Server) selectHandler(h func(ctx context.Context, w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		setCORS(w)
		if err := r.ParseForm(); err != nil {
			http.Error(w, fmt.Sprintf("cannot parse request args: %s", err), http.StatusBadRequest)
			return
		}
		d := s.cfg.MaxQueryDuration
		if v := r.FormValue("timeout"); v != "" {
			t, ok := query.ParseDuration(v)
			if !ok {
				http.Error(w, fmt.Sprintf("cannot parse duration at 'timeout=%s' arg", v), http.StatusBadRequest)
				return
			}
			if t > 0 && time.Duration(t) < d {
				d = time.Duration(t)
			}
		}
		began := time.Now()
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		if !s.acquireQuery(ctx, w) {
			return
		}
		defer s.releaseQuery()
		ew := &errWriter{ResponseWriter: w}
		err := h(ctx, ew, r)
		if err == nil {
			return
		}
		code := http.StatusBadRequest
		var he *httpError
		switch {
		case errors.As(err, &he):
			code = he.code
		case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
			code = http.StatusServiceUnavailable
			err = fmt.Errorf("the request couldn't be executed in %.3f seconds; possible solutions: to increase spate serve --max-query-duration=%s; to pass bigger value to 'timeout' query arg",
				time.Since(began).Seconds(), s.cfg.MaxQueryDuration)
		case r.Context().Err() != nil:
			return // the client went away: nobody to tell
		}
		ew.fail(code, err.Error())
	}
}

// acquireQuery takes one of the MaxConcurrentQueries slots, waiting up to
// MaxQueueDuration; it answers 503 and returns false if none frees up.
func (s *Server) acquireQuery(ctx context.Context, w http.ResponseWriter) bool {
	select {
	case s.querySlots <- struct{}{}:
		return true
	default:
	}
	s.m.queryQueued.Inc()
	t := time.NewTimer(s.cfg.MaxQueueDuration)
	defer t.Stop()
	select {
	case s.querySlots <- struct{}{}:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	w.Header().Set("Retry-After", s.retryAfter())
	http.Error(w, fmt.Sprintf("couldn't start executing the request in %s, since %d concurrent queries are executed; reduce the query load or raise spate serve --max-concurrent-queries",
		s.cfg.MaxQueueDuration, cap(s.querySlots)), http.StatusServiceUnavailable)
	return false
}

func (s *Server) releaseQuery() { <-s.querySlots }

// setCORS sets the headers VictoriaLogs sends on /select answers.
func setCORS(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "*")
	h.Set("Access-Control-Allow-Headers", "*")
}

// errWriter remembers whether the answer has begun, so that an error is
// sent as a status when it can be, and otherwise appended to the body
// before the connection is cut (as VictoriaLogs does: the client sees the
// body end without the chunked terminator and knows it is incomplete).
type errWriter struct {
	http.ResponseWriter
	sent bool
}

func (w *errWriter) WriteHeader(code int) {
	w.sent = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *errWriter) Write(p []byte) (int, error) {
	w.sent = true
	return w.ResponseWriter.Write(p)
}

func (w *errWriter) Flush() {
	w.sent = true
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *errWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *errWriter) fail(code int, msg string) {
	if !w.sent {
		w.Header().Del("Content-Type")
		http.Error(w.ResponseWriter, msg, code)
		return
	}
	fmt.Fprintf(w.ResponseWriter, "\n%s\n", html.EscapeString(msg))
	http.NewResponseController(w.ResponseWriter).Flush()
	panic(http.ErrAbortHandler)
}

// writeSelectHeaders sets the headers VictoriaLogs adds to a finished
// answer: its duration and the tenant.
func writeSelectHeaders(h http.Header, a *selectArgs, contentType string) {
	h.Set("Content-Type", contentType)
	h.Set("VL-Request-Duration-Seconds", fmt.Sprintf("%.3f", time.Since(a.began).Seconds()))
	h.Set("AccountID", strconv.FormatUint(uint64(a.tenant.AccountID), 10))
	h.Set("ProjectID", strconv.FormatUint(uint64(a.tenant.ProjectID), 10))
	h.Set("Access-Control-Expose-Headers", "Vl-Request-Duration-Seconds, Accountid, Projectid, "+approxHeader+", "+partialHeader)
	if len(a.approx) > 0 {
		h.Set(approxHeader, strings.Join(a.approx, "; "))
	}
	if len(a.partial) > 0 {
		h.Set(partialHeader, strings.Join(a.partial, "; "))
	}
}

// run runs q over the tenant's segments in the data directory, writing
// result rows to sink. Each run reads a new snapshot, so it sees every
// line acknowledged before it began.
func (s *Server) run(ctx context.Context, a *selectArgs, q *query.Query, sink query.Sink) (query.Stats, error) {
	if err := s.resolveSubqueries(ctx, a, q); err != nil {
		return query.Stats{}, err
	}
	if len(s.cfg.SelectPeers) > 0 {
		return s.runPeers(ctx, a, q, sink)
	}
	snap, err := segment.OpenSnapshot(s.cfg.DataDir, a.tenant)
	if err != nil {
		return query.Stats{}, &httpError{http.StatusInternalServerError, fmt.Errorf("cannot read the data directory: %w", err)}
	}
	return s.runSnapshot(ctx, a, q, snap, sink)
}

// resolveSubqueries runs q's subqueries (join, union, in(...)), each as a
// query of its own over the tenant's logs (with the request's time range
// and extra filters, which q's subqueries were given), and puts their
// results in q; over --select-peers, they run on every node, and nodes are
// sent q with the results written out.
func (s *Server) resolveSubqueries(ctx context.Context, a *selectArgs, q *query.Query) error {
	if !q.HasSubqueries() {
		return nil
	}
	err := query.ResolveSubqueries(ctx, q, s.cfg.QueryMemory, func(ctx context.Context, sub *query.Query, sink query.Sink) error {
		_, err := s.run(ctx, a, sub, sink)
		return err
	})
	if err != nil && errors.Is(err, query.ErrMemoryLimit) {
		return &httpError{http.StatusUnprocessableEntity, fmt.Errorf("%w (spate serve --query-memory)", err)}
	}
	return err
}

// runSnapshot is run over the snapshot snap, which it closes.
func (s *Server) runSnapshot(ctx context.Context, a *selectArgs, q *query.Query, snap *segment.Snapshot, sink query.Sink) (query.Stats, error) {
	return s.runSnapshotOpts(ctx, a, q, snap, sink, nil)
}

// runSnapshotOpts is runSnapshot with the query options changed by set,
// if not nil.
func (s *Server) runSnapshotOpts(ctx context.Context, a *selectArgs, q *query.Query, snap *segment.Snapshot, sink query.Sink, set func(*query.Options)) (query.Stats, error) {
	in, err := storescan.New(a.tenant, q, true)
	if err != nil {
		snap.Close()
		return query.Stats{}, err
	}
	defer in.Close()
	var names []string
	in.AddSnapshot(s.cfg.DataDir, snap, func(name string, _ int64) { names = append(names, name) })
	// Sealed segments decode one block after another: read several at
	// once so that every core has work. Plain segments are read with pread
	// into the scan's buffers: mapped windows would count in the server's
	// RSS, for every query.
	cfg := fileread.Config{Open: in.Open, Workers: s.cfg.QueryWorkers, ParallelInputs: runtime.GOMAXPROCS(0), NoMmap: true}
	if s.pacer != nil {
		cfg.Pace = s.pacer.pace
	}
	opts := query.Options{
		AccountID: a.tenant.AccountID, ProjectID: a.tenant.ProjectID,
		MaxMemory: s.cfg.QueryMemory, TempDir: s.cfg.TempDir, StoreFields: true,
		// Rows in any order, as VictoriaLogs gives them: segments are read
		// in parallel whatever the query.
		Unordered: true,
		Index:     in.Index,
		// stream_context reads the logs around its matches again: from a
		// snapshot of its own, chosen by that query's time range, not
		// this one's.
		Rerun: func(sq *query.Query, sink query.Sink) error {
			_, err := s.run(ctx, a, sq, sink)
			return err
		},
	}
	if set != nil {
		set(&opts)
	}
	st, err := query.Run(ctx, q, names, cfg, opts, sink)
	s.m.queryDone(st)
	if len(st.Approximate) > 0 {
		a.approx = append(a.approx, st.Approximate...)
		s.log.Warn("query results computed with sketches", "query", q.String(), "approximate", strings.Join(st.Approximate, "; "))
	}
	if err != nil && ctx.Err() == nil {
		var he *httpError
		switch {
		case errors.As(err, &he), errors.Is(err, errClientGone):
		case errors.Is(err, query.ErrMemoryLimit):
			err = &httpError{http.StatusUnprocessableEntity, fmt.Errorf("cannot execute query [%s]: %w (spate serve --query-memory)", q, err)}
		default:
			err = &httpError{http.StatusBadRequest, fmt.Errorf("cannot execute query [%s]: %w", q, err)}
		}
	}
	if ctx.Err() != nil {
		return st, ctx.Err()
	}
	return st, err
}

// errClientGone stops a query whose answer can no longer be written.
var errClientGone = errors.New("cannot write the answer: the client went away")

// emptyRowsArg=1 asks /select/logsql/query for the rows that have no
// non-empty field too ("{}"), which it leaves out otherwise: a spate front
// asks its peers for them (runPeers), since they count in what it merges.
const emptyRowsArg = "spate_empty_rows"

// sinkFunc adapts a function to query.Sink.
type sinkFunc func(r *query.Row) error

func (f sinkFunc) WriteRow(r *query.Row) error { return f(r) }

// handleQuery is /select/logsql/query: the matching logs as NDJSON (or
// CSV with format=csv), streamed as they are found. With limit=N the answer
// is the N newest (when the query keeps _time), after skipping offset.
func (s *Server) handleQuery(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	a, err := s.parseSelectArgs(r)
	if err != nil {
		return err
	}
	offset, err := positiveIntArg(r, "offset")
	if err != nil {
		return err
	}
	limit, err := positiveIntArg(r, "limit")
	if err != nil {
		return err
	}
	format := r.FormValue("format")
	if format != "" && format != "csv" {
		return fmt.Errorf("unexpected format=%q; expecting 'csv' or ''", format)
	}
	if limit > 0 {
		if a.q.CanReturnLastN() {
			a.q.AddPipes(&query.PipeSort{By: []query.SortField{{Name: "_time", Desc: true}}, Offset: int64(offset), Limit: int64(limit)})
		} else {
			if offset > 0 {
				a.q.AddPipes(&query.PipeOffset{N: int64(offset)})
			}
			a.q.AddPipes(&query.PipeLimit{N: int64(limit)})
		}
	}
	var csvFields []string
	if format == "csv" {
		fields, ok := a.q.FixedFields()
		if !ok {
			// Every field name the query's rows may have, sorted.
			names, err := s.fieldNames(ctx, a, a.q)
			if err != nil {
				return err
			}
			for _, n := range names {
				fields = append(fields, n.value)
			}
			slices.Sort(fields)
			a.q.AddPipes(&query.PipeFields{Fields: fields})
		}
		csvFields = fields
	}
	sortFields := format != "csv" && !a.q.FixedFieldsOrder()
	bw := selectWriters.Get().(*bufio.Writer)
	bw.Reset(w)
	defer func() {
		bw.Reset(nil)
		selectWriters.Put(bw)
	}()
	started := false
	begin := func() {
		if started {
			return
		}
		started = true
		if format == "csv" {
			writeSelectHeaders(w.Header(), a, "text/csv")
			bw.Write(appendCSVLine(nil, csvFields))
		} else {
			writeSelectHeaders(w.Header(), a, "application/stream+json")
		}
		// Whether results are approximate is known once the scan ends.
		w.Header().Set("Trailer", approxHeader+", "+partialHeader)
	}
	var buf []byte
	var fields []query.Field
	emptyRows := r.FormValue(emptyRowsArg) == "1"
	var sink query.Sink = sinkFunc(func(row *query.Row) error {
		begin()
		if format == "csv" {
			buf = buf[:0]
			for i, f := range csvFields {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = appendCSVField(buf, row.Get(f))
			}
			buf = append(buf, '\n')
		} else {
			fields = append(fields[:0], row.Fields...)
			if sortFields {
				slices.SortFunc(fields, func(x, y query.Field) int { return strings.Compare(x.Name, y.Name) })
			}
			buf = appendJSONRow(buf[:0], fields)
			if len(buf) == 0 && emptyRows {
				buf = append(buf, "{}\n"...)
			}
		}
		if _, err := bw.Write(buf); err != nil {
			return errClientGone
		}
		return nil
	})
	if emptyRows {
		sink = query.WithEmptyRows(sink)
	}
	_, err = s.run(ctx, a, a.q, sink)
	if err != nil {
		if started {
			bw.Flush()
		}
		return err
	}
	begin()
	if err := bw.Flush(); err != nil {
		return errClientGone
	}
	if len(a.approx) > 0 {
		w.Header().Set(approxHeader, strings.Join(a.approx, "; "))
	}
	if len(a.partial) > 0 {
		w.Header().Set(partialHeader, strings.Join(a.partial, "; "))
	}
	return nil
}

// selectWriters holds the 64 KiB buffers /select/logsql/query writes its
// rows through: one per query otherwise, most of what a millisecond
// query allocated.
var selectWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}

// appendJSONRow appends fields as one NDJSON line of string values,
// leaving out empty ones; a row with no value is left out entirely.
func appendJSONRow(dst []byte, fields []query.Field) []byte {
	n := len(dst)
	dst = append(dst, '{')
	for _, f := range fields {
		if f.Value == "" {
			continue
		}
		if len(dst) > n+1 {
			dst = append(dst, ',')
		}
		dst = ndjson.AppendQuoted(dst, f.Name)
		dst = append(dst, ':')
		dst = ndjson.AppendQuoted(dst, f.Value)
	}
	if len(dst) == n+1 {
		return dst[:n]
	}
	return append(dst, "}\n"...)
}

// appendCSVLine appends one CSV record of values.
func appendCSVLine(dst []byte, values []string) []byte {
	for i, v := range values {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendCSVField(dst, v)
	}
	return append(dst, '\n')
}

// appendCSVField quotes v when it holds a comma, quote or line break, as
// RFC 4180 and VictoriaLogs do.
func appendCSVField(dst []byte, v string) []byte {
	if !strings.ContainsAny(v, ",\"\r\n") {
		return append(dst, v...)
	}
	dst = append(dst, '"')
	dst = append(dst, strings.ReplaceAll(v, `"`, `""`)...)
	return append(dst, '"')
}

// positiveIntArg reads a non-negative integer arg; absent means 0.
func positiveIntArg(r *http.Request, name string) (int, error) {
	v := r.FormValue(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("cannot parse %s=%q: %w", name, v, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("%q cannot be smaller than 0; got %d", name, n)
	}
	return n, nil
}

// valueHits is one value with its count, as the values endpoints return.
type valueHits struct {
	value string
	hits  uint64
}

// sortValueHits orders by hits, highest first, then value in natural order.
func sortValueHits(v []valueHits) {
	slices.SortStableFunc(v, func(a, b valueHits) int {
		if a.hits != b.hits {
			if a.hits > b.hits {
				return -1
			}
			return 1
		}
		return query.CompareNatural(a.value, b.value)
	})
}

// limitValueHits keeps the first limit values; past the limit the hits
// are not all known to VictoriaLogs, which answers 0 for each.
func limitValueHits(v []valueHits, limit int) []valueHits {
	if limit <= 0 || len(v) <= limit {
		return v
	}
	for i := range v {
		v[i].hits = 0
	}
	sortValueHits(v)
	return v[:limit]
}

// writeValuesWithHits writes {"values":[{"value":..,"hits":N},...]}.
func writeValuesWithHits(w http.ResponseWriter, a *selectArgs, v []valueHits) error {
	b := []byte(`{"values":[`)
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"value":`...)
		b = ndjson.AppendQuoted(b, x.value)
		b = append(b, `,"hits":`...)
		b = strconv.AppendUint(b, x.hits, 10)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	writeSelectHeaders(w.Header(), a, "application/json")
	_, err := w.Write(b)
	return err
}

// collectValues runs q, whose rows are (value, hits) pairs in the fields
// valueField and "hits", and returns them sorted.
func (s *Server) collectValues(ctx context.Context, a *selectArgs, q *query.Query, valueField string) ([]valueHits, error) {
	var out []valueHits
	_, err := s.run(ctx, a, q, sinkFunc(func(row *query.Row) error {
		h, _ := strconv.ParseUint(row.Get("hits"), 10, 64)
		out = append(out, valueHits{strings.Clone(row.Get(valueField)), h})
		return nil
	}))
	sortValueHits(out)
	return out, err
}

// fieldNames returns the field names of q's rows with the number of rows
// holding each.
func (s *Server) fieldNames(ctx context.Context, a *selectArgs, q *query.Query) ([]valueHits, error) {
	q2 := cloneQuery(q)
	q2.AddPipes(&query.PipeFieldNames{ResultName: "name"})
	return s.collectValues(ctx, a, q2, "name")
}

// fieldValues returns the values of field in q's rows with their hits.
func (s *Server) fieldValues(ctx context.Context, a *selectArgs, q *query.Query, field string) ([]valueHits, error) {
	q2 := cloneQuery(q)
	q2.AddPipes(&query.PipeFieldValues{Field: field})
	return s.collectValues(ctx, a, q2, field)
}

// handleFieldNames is /select/logsql/field_names: the field names of the
// matching logs, with hits; filter keeps the names containing it.
func (s *Server) handleFieldNames(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	a, err := s.parseSelectArgs(r)
	if err != nil {
		return err
	}
	names, err := s.fieldNames(ctx, a, a.q)
	if err != nil {
		return err
	}
	names = filterValues(names, r.FormValue("filter"))
	return writeValuesWithHits(w, a, names)
}

func filterValues(v []valueHits, sub string) []valueHits {
	if sub == "" {
		return v
	}
	return slices.DeleteFunc(v, func(x valueHits) bool { return !strings.Contains(x.value, sub) })
}

// fieldArgs reads the field (required) and limit args of the values
// endpoints.
func fieldArgs(r *http.Request) (field string, limit int, err error) {
	if field = r.FormValue("field"); field == "" {
		return "", 0, errors.New("missing 'field' query arg")
	}
	limit, err = positiveIntArg(r, "limit")
	return field, limit, err
}

// handleFieldValues is /select/logsql/field_values: the values of field in
// the matching logs with hits, highest first; filter keeps the values
// containing it; limit caps the answer.
func (s *Server) handleFieldValues(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	a, err := s.parseSelectArgs(r)
	if err != nil {
		return err
	}
	field, limit, err := fieldArgs(r)
	if err != nil {
		return err
	}
	v, err := s.fieldValues(ctx, a, a.q, field)
	if err != nil {
		return err
	}
	v = limitValueHits(filterValues(v, r.FormValue("filter")), limit)
	return writeValuesWithHits(w, a, v)
}

// handleStreams is /select/logsql/streams (and stream_ids with field
// _stream_id): the streams of the matching logs with hits.
func (s *Server) handleStreams(field string) func(context.Context, http.ResponseWriter, *http.Request) error {
	return func(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
		a, err := s.parseSelectArgs(r)
		if err != nil {
			return err
		}
		limit, err := positiveIntArg(r, "limit")
		if err != nil {
			return err
		}
		v, err := s.fieldValues(ctx, a, a.q, field)
		if err != nil {
			return err
		}
		return writeValuesWithHits(w, a, limitValueHits(v, limit))
	}
}

// streamFields calls fn with each tag of each stream in v and the
// stream's hits.
func streamFields(v []valueHits, fn func(name, value string, hits uint64)) {
	var tags []logstream.Tag
	for _, x := range v {
		var ok bool
		if tags, ok = logstream.Parse(tags[:0], x.value); !ok {
			continue
		}
		for _, t := range tags {
			fn(t.Name, t.Value, x.hits)
		}
	}
}

// handleStreamFieldNames is /select/logsql/stream_field_names: the tag
// names of the matching logs' streams, with hits.
func (s *Server) handleStreamFieldNames(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	a, err := s.parseSelectArgs(r)
	if err != nil {
		return err
	}
	filter := r.FormValue("filter")
	v, err := s.streamTagHits(ctx, a, func(name, _ string) (string, bool) {
		return name, filter == "" || strings.Contains(name, filter)
	})
	if err != nil {
		return err
	}
	return writeValuesWithHits(w, a, v)
}

// streamTagHits sums the hits of the matching logs' streams by the key
// pick gives each of their tags (false: leave the tag out), most first.
func (s *Server) streamTagHits(ctx context.Context, a *selectArgs, pick func(name, value string) (string, bool)) ([]valueHits, error) {
	streams, err := s.fieldValues(ctx, a, a.q, "_stream")
	if err != nil {
		return nil, err
	}
	m := map[string]uint64{}
	streamFields(streams, func(name, value string, hits uint64) {
		if k, ok := pick(name, value); ok {
			m[k] += hits
		}
	})
	return fromMap(m), nil
}

// handleStreamFieldValues is /select/logsql/stream_field_values: the
// values of one stream tag in the matching logs, with hits.
func (s *Server) handleStreamFieldValues(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	a, err := s.parseSelectArgs(r)
	if err != nil {
		return err
	}
	field, limit, err := fieldArgs(r)
	if err != nil {
		return err
	}
	filter := r.FormValue("filter")
	v, err := s.streamTagHits(ctx, a, func(name, value string) (string, bool) {
		return value, name == field && (filter == "" || strings.Contains(value, filter))
	})
	if err != nil {
		return err
	}
	if limit > 0 && len(v) > limit {
		v = v[:limit]
		for i := range v {
			v[i].hits = 0
		}
	}
	return writeValuesWithHits(w, a, v)
}

func fromMap(m map[string]uint64) []valueHits {
	v := make([]valueHits, 0, len(m))
	for k, h := range m {
		v = append(v, valueHits{k, h})
	}
	sortValueHits(v)
	return v
}

// handleFacets is /select/logsql/facets: for each field of the matching
// logs, its most frequent values with hits.
func (s *Server) handleFacets(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	a, err := s.parseSelectArgs(r)
	if err != nil {
		return err
	}
	p := &query.PipeFacets{N: 10}
	for _, arg := range []struct {
		name string
		dst  *int64
	}{{"limit", &p.N}, {"max_values_per_field", &p.MaxValuesPerField}, {"max_value_len", &p.MaxValueLen}} {
		n, err := positiveIntArg(r, arg.name)
		if err != nil {
			return err
		}
		if n > 0 {
			*arg.dst = int64(n)
		}
	}
	if v := r.FormValue("keep_const_fields"); v != "" {
		p.KeepConstFields, _ = strconv.ParseBool(v)
	}
	a.q.AddPipes(p)
	type entry struct {
		value, hits string
	}
	m := map[string][]entry{}
	_, err = s.run(ctx, a, a.q, sinkFunc(func(row *query.Row) error {
		name := strings.Clone(row.Get("field_name"))
		m[name] = append(m[name], entry{strings.Clone(row.Get("field_value")), strings.Clone(row.Get("hits"))})
		return nil
	}))
	if err != nil {
		return err
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	b := []byte(`{"facets":[`)
	for i, name := range names {
		if i > 0 {
			b = append(b, ',')
		}
		es := m[name]
		slices.SortStableFunc(es, func(x, y entry) int {
			if x.hits == y.hits {
				return strings.Compare(x.value, y.value)
			}
			return query.CompareNatural(y.hits, x.hits)
		})
		b = append(b, `{"field_name":`...)
		b = ndjson.AppendQuoted(b, name)
		b = append(b, `,"values":[`...)
		for j, e := range es {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"field_value":`...)
			b = ndjson.AppendQuoted(b, e.value)
			b = append(b, `,"hits":`...)
			b = append(b, e.hits...)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	b = append(b, "]}"...)
	writeSelectHeaders(w.Header(), a, "application/json")
	_, err = w.Write(b)
	return err
}

// handleQueryTimeRange is /select/logsql/query_time_range: the time range
// the query's own _time filters select, else the start and end args.
func (s *Server) handleQueryTimeRange(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	now := s.cfg.Now().UnixNano()
	qs := r.FormValue("query")
	if qs == "" {
		return errors.New("`query` arg cannot be empty")
	}
	q, err := query.Parse(qs, time.Unix(0, now))
	if err != nil {
		return fmt.Errorf("cannot parse `query` arg [%s]: %w", qs, err)
	}
	lo, hi := q.TimeRange()
	has := lo != math.MinInt64 || hi != math.MaxInt64
	if lo == math.MinInt64 {
		if v, ok, err := timeArg(r, "start", now); err != nil {
			return err
		} else if ok {
			lo = v
		}
	}
	if hi == math.MaxInt64 {
		if v, ok, err := timeArg(r, "end", now); err != nil {
			return err
		} else if ok {
			hi = v
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = fmt.Fprintf(w, `{"start":%q,"end":%q,"hasTimeFilter":%t}`,
		time.Unix(0, lo).UTC().Format(time.RFC3339Nano), time.Unix(0, hi).UTC().Format(time.RFC3339Nano), has)
	return err
}

// handleTenantIDs is /select/tenant_ids: the tenants with logs between the
// start and end args (whole days, as segments are kept by day).
func (s *Server) handleTenantIDs(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	if v := r.Header.Get("AccountID"); v != "" {
		return &httpError{http.StatusForbidden, fmt.Errorf("the /select/tenant_ids endpoint cannot be requested with non-empty AccountID=%q header", v)}
	}
	if _, bound := boundTenant(r); bound {
		return &httpError{http.StatusForbidden, errors.New("the /select/tenant_ids endpoint cannot be requested with a token bound to one tenant")}
	}
	now := s.cfg.Now().UnixNano()
	start, okStart, err := timeArg(r, "start", now)
	if err != nil {
		return err
	}
	end, okEnd, err := timeArg(r, "end", now)
	if err != nil {
		return err
	}
	if !okStart {
		start = math.MinInt64
	}
	if !okEnd {
		end = math.MaxInt64
	} else if end != math.MinInt64 {
		end--
	}
	if start > end {
		return fmt.Errorf("'start=%d' must be smaller than 'end=%d'", start, end)
	}
	if len(s.cfg.SelectPeers) > 0 {
		return s.peerTenantIDs(ctx, w, r)
	}
	files, err := segment.List(s.cfg.DataDir)
	if err != nil {
		return &httpError{http.StatusInternalServerError, fmt.Errorf("cannot obtain tenantIDs: %w", err)}
	}
	var tenants []segment.Tenant
	for _, f := range files {
		if f.Size == 0 || slices.Contains(tenants, f.Tenant) {
			continue
		}
		day, err := time.Parse(segment.DayLayout, f.Day)
		if err != nil {
			continue
		}
		lo, hi := day.UnixNano(), day.Add(24*time.Hour).UnixNano()-1
		if hi < start || lo > end {
			continue
		}
		tenants = append(tenants, f.Tenant)
	}
	b := []byte{'['}
	for i, t := range tenants {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"account_id":%d,"project_id":%d}`, t.AccountID, t.ProjectID)
	}
	b = append(b, ']')
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(b)
	return err
}

// handleBuildInfo is /select/buildinfo: the VictoriaLogs version spate
// answers as (clients such as Grafana's datasource check it).
func (s *Server) handleBuildInfo(w http.ResponseWriter, r *http.Request) {
	setCORS(w)
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed)
		fmt.Fprintf(w, `{"status":"error","msg":"method %q isn't allowed"}`, r.Method)
		return
	}
	fmt.Fprintf(w, `{"status":"success","data":{"version":%q}}`, CompatVersion)
}

// CompatVersion is the VictoriaLogs version whose API spate serves.
const CompatVersion = "v1.52.1"
