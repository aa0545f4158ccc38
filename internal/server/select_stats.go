package server

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spate-io/spate/internal/ndjson"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/timeparse"
)

// The endpoints that answer with counts over time: /hits, /stats_query and
// /stats_query_range (the latter two in Prometheus' query API shape).

// durationArg reads a LogsQL duration arg, def when absent.
func durationArg(r *http.Request, name, def string) (int64, error) {
	v := r.FormValue(name)
	if v == "" {
		v = def
	}
	ns, ok := query.ParseDuration(v)
	if !ok {
		return 0, errors.New("cannot parse duration from the arg '" + name + "=" + v + "'")
	}
	return ns, nil
}

// stepArgs reads the step (required, > 0) and offset (default 0) args of
// hits and stats_query_range.
func stepArgs(r *http.Request) (step, offset int64, err error) {
	if step, err = durationArg(r, "step", ""); err != nil {
		return 0, 0, err
	}
	if step <= 0 {
		return 0, 0, errors.New("'step' must be bigger than zero")
	}
	offset, err = durationArg(r, "offset", "0s")
	return step, offset, err
}

// hitsSeries is one line of the /hits answer: the counts of one set of
// field values per time bucket.
type hitsSeries struct {
	total uint64
	ts    []int64
	hits  []uint64
}

// handleHits is /select/logsql/hits: the number of matching logs per step
// (buckets shifted by offset), per distinct values of the field args (the
// fields_limit most frequent, the rest summed under {}), with every bucket
// between start and end present, zeros included.
func (s *Server) handleHits(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	a, err := s.parseSelectArgs(r)
	if err != nil {
		return err
	}
	step, offset, err := stepArgs(r)
	if err != nil {
		return err
	}
	fields := r.Form["field"]
	fieldsLimit, err := positiveIntArg(r, "fields_limit")
	if err != nil {
		return err
	}
	// Pipes after the first that may change _time are dropped, then
	// "stats by (_time:step offset off, fields...) count() hits".
	for i, p := range a.q.Pipes {
		probe := query.Query{Pipes: []query.Pipe{p}}
		if !probe.CanReturnLastN() {
			a.q.Pipes = a.q.Pipes[:i]
			break
		}
	}
	hitsName := "hits"
	for slices.Contains(fields, hitsName) {
		hitsName += "s"
	}
	by := []query.ByField{query.TimeBucket(step, offset)}
	for _, f := range fields {
		by = append(by, query.ByField{Name: f})
	}
	a.q.AddPipes(&query.PipeStats{By: by, Funcs: []query.StatsFunc{{Name: "count", Result: hitsName}}})
	m := map[string]*hitsSeries{}
	var key []byte
	_, err = s.run(ctx, a, a.q, sinkFunc(func(row *query.Row) error {
		ts, ok := timeparse.ParseRFC3339(row.Get("_time"))
		if !ok {
			return nil
		}
		n, _ := strconv.ParseUint(row.Get(hitsName), 10, 64)
		key = append(key[:0], '{')
		for i, f := range fields {
			if i > 0 {
				key = append(key, ',')
			}
			key = ndjson.AppendQuoted(key, f)
			key = append(key, ':')
			key = ndjson.AppendQuoted(key, row.Get(f))
		}
		key = append(key, '}')
		hs := m[string(key)]
		if hs == nil {
			hs = &hitsSeries{}
			m[string(key)] = hs
		}
		hs.ts = append(hs.ts, ts)
		hs.hits = append(hs.hits, n)
		hs.total += n
		return nil
	}))
	if err != nil {
		return err
	}
	m = topHitsSeries(m, fieldsLimit)
	if err := addZeroHits(m, a.startAligned, a.endAligned, step, offset); err != nil {
		return err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := []byte(`{"hits":[`)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		hs := m[k]
		idx := byTime(hs.ts)
		b = append(b, `{"fields":`...)
		b = append(b, k...)
		b = append(b, `,"timestamps":[`...)
		for j, x := range idx {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = timeparse.AppendRFC3339(b, hs.ts[x])
			b = append(b, '"')
		}
		b = append(b, `],"values":[`...)
		for j, x := range idx {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendUint(b, hs.hits[x], 10)
		}
		b = append(b, `],"total":`...)
		b = strconv.AppendUint(b, hs.total, 10)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	writeSelectHeaders(w.Header(), a, "application/json")
	_, err = w.Write(b)
	return err
}

// byTime returns the indexes of ts in time order (stable for equal times),
// to write series whose points are kept as parallel slices.
func byTime(ts []int64) []int {
	idx := make([]int, len(ts))
	for j := range idx {
		idx[j] = j
	}
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(ts[x], ts[y]) })
	return idx
}

// topHitsSeries keeps the limit series with the most hits and sums the
// others into one series keyed {} (VictoriaLogs' getTopHitsSeries).
func topHitsSeries(m map[string]*hitsSeries, limit int) map[string]*hitsSeries {
	if limit <= 0 || limit >= len(m) {
		return m
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortStableFunc(keys, func(x, y string) int {
		if c := cmp.Compare(m[y].total, m[x].total); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	other := map[int64]uint64{}
	for _, k := range keys[limit:] {
		hs := m[k]
		for i, ts := range hs.ts {
			other[ts] += hs.hits[i]
		}
	}
	out := make(map[string]*hitsSeries, limit+1)
	for _, k := range keys[:limit] {
		out[k] = m[k]
	}
	o := &hitsSeries{}
	for ts, n := range other {
		o.ts = append(o.ts, ts)
		o.hits = append(o.hits, n)
		o.total += n
	}
	out["{}"] = o
	return out
}

// maxHitsBuckets bounds the buckets of one /hits answer: a step far too
// small for the time range would otherwise fill memory with zeros.
const maxHitsBuckets = 1_000_000

// addZeroHits adds a 0 for every bucket between start and end (or the
// first and last bucket seen, for an open end) that a series lacks. It
// fails if that makes more than maxHitsBuckets buckets in all.
func addZeroHits(m map[string]*hitsSeries, start, end, step, offset int64) error {
	if start == math.MinInt64 {
		start = math.MaxInt64
		for _, hs := range m {
			start = min(start, slices.Min(hs.ts))
		}
	}
	if end == math.MaxInt64 {
		end = math.MinInt64
		for _, hs := range m {
			end = max(end, slices.Max(hs.ts))
		}
	}
	start, end = alignToStep(start, end, step, offset)
	if start > end {
		return nil
	}
	if n := uint64(end-start)/uint64(step) + 1; len(m) > 0 && n > maxHitsBuckets/uint64(len(m)) {
		return fmt.Errorf("step=%s over [%s, %s] makes %d buckets for each of %d series, more than the %d a hits answer may have; use a bigger step or a shorter time range",
			time.Duration(step), timeparse.FormatRFC3339(start), timeparse.FormatRFC3339(end), n, len(m), maxHitsBuckets)
	}
	for _, hs := range m {
		have := make(map[int64]bool, len(hs.ts))
		for _, ts := range hs.ts {
			have[ts] = true
		}
		for ts := start; ts <= end; ts += step {
			if !have[ts] {
				hs.ts = append(hs.ts, ts)
				hs.hits = append(hs.hits, 0)
			}
			if ts+step < ts {
				break
			}
		}
	}
	return nil
}

// statsLabel is one label of a stats series.
type statsLabel struct{ name, value string }

// statsSeries is one series of a stats_query_range answer (or one sample
// of a stats_query answer).
type statsSeries struct {
	key    string
	name   string
	labels []statsLabel
	ts     []int64
	values []string
}

// collectStats runs a stats query and groups its result columns into
// series: each metric column of each row is a sample of the series named
// after the column and labelled with the row's label columns. The sample
// time is the row's _time when it has one (a step's bucket), else ts.
func (s *Server) collectStats(ctx context.Context, a *selectArgs, labels []string, ts int64) ([]*statsSeries, error) {
	m := map[string]*statsSeries{}
	var order []*statsSeries
	_, err := s.run(ctx, a, a.q, sinkFunc(func(row *query.Row) error {
		t, timed := ts, false
		var ls []statsLabel
		for _, f := range row.Fields {
			if f.Name == "_time" {
				if ns, ok := timeparse.ParseRFC3339(f.Value); ok {
					t, timed = ns, true
					continue
				}
			}
			if slices.Contains(labels, f.Name) {
				ls = append(ls, statsLabel{strings.Clone(f.Name), strings.Clone(f.Value)})
			}
		}
		col := 0
		for _, f := range row.Fields {
			if slices.Contains(labels, f.Name) || f.Name == "_time" && timed {
				continue
			}
			key := binary.BigEndian.AppendUint32(nil, uint32(col))
			key = append(key, f.Name...)
			key = appendLabelsJSON(key, ls)
			ss := m[string(key)]
			if ss == nil {
				ss = &statsSeries{key: string(key), name: strings.Clone(f.Name), labels: ls}
				m[string(key)] = ss
				order = append(order, ss)
			}
			ss.ts = append(ss.ts, t)
			ss.values = append(ss.values, strings.Clone(f.Value))
			col++
		}
		return nil
	}))
	return order, err
}

func appendLabelsJSON(b []byte, ls []statsLabel) []byte {
	b = append(b, '{')
	for i, l := range ls {
		if i > 0 {
			b = append(b, ',')
		}
		b = ndjson.AppendQuoted(b, l.name)
		b = append(b, ':')
		b = ndjson.AppendQuoted(b, l.value)
	}
	return append(b, '}')
}

// appendMetric appends {"__name__":name,label:value,...}.
func appendMetric(b []byte, ss *statsSeries) []byte {
	b = append(b, `{"__name__":`...)
	b = ndjson.AppendQuoted(b, ss.name)
	for _, l := range ss.labels {
		b = append(b, ',')
		b = ndjson.AppendQuoted(b, l.name)
		b = append(b, ':')
		b = ndjson.AppendQuoted(b, l.value)
	}
	return append(b, '}')
}

// appendPoint appends [unix seconds, "value"] as Prometheus writes it.
func appendPoint(b []byte, ts int64, v string) []byte {
	b = append(b, '[')
	f := float64(ts) / 1e9
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		b = strconv.AppendInt(b, int64(f), 10)
	} else {
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	b = append(b, ',')
	b = ndjson.AppendQuoted(b, v)
	return append(b, ']')
}

// promError is a stats endpoint's error, in Prometheus' shape; 422 unless
// the error says otherwise.
func promError(w *errWriter, err error) {
	code := http.StatusUnprocessableEntity
	var he *httpError
	if errors.As(err, &he) {
		code = he.code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b := []byte(`{"status":"error","errorType":"`)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `","error":`...)
	b = ndjson.AppendQuoted(b, err.Error())
	b = append(b, '}')
	w.Write(b)
}

// promHandler runs h and answers its errors in Prometheus' shape (the
// client-gone and timeout cases are left to selectHandler).
func promHandler(h func(context.Context, http.ResponseWriter, *http.Request) error) func(context.Context, http.ResponseWriter, *http.Request) error {
	return func(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
		err := h(ctx, w, r)
		if err == nil || ctx.Err() != nil || errors.Is(err, errClientGone) {
			return err
		}
		ew, ok := w.(*errWriter)
		if !ok || ew.sent {
			return err
		}
		promError(ew, err)
		return nil
	}
}

// handleStatsQuery is /select/logsql/stats_query: the result of a query
// ending in stats at one time, as a Prometheus instant vector.
func (s *Server) handleStatsQuery(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	a, err := s.parseSelectArgs(r)
	if err != nil {
		return err
	}
	labels, err := a.q.StatsLabels(0, 0)
	if err != nil {
		return err
	}
	series, err := s.collectStats(ctx, a, labels, a.ts)
	if err != nil {
		return err
	}
	b := []byte(`{"status":"success","data":{"resultType":"vector","result":[`)
	n := 0
	for _, ss := range series {
		for i := range ss.ts {
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, `{"metric":`...)
			b = appendMetric(b, ss)
			b = append(b, `,"value":`...)
			b = appendPoint(b, ss.ts[i], ss.values[i])
			b = append(b, '}')
		}
	}
	b = append(b, "]}}"...)
	writeSelectHeaders(w.Header(), a, "application/json")
	_, err = w.Write(b)
	return err
}

// handleStatsQueryRange is /select/logsql/stats_query_range: a query
// ending in stats, per step between start and end, as a Prometheus range
// vector (a matrix).
func (s *Server) handleStatsQueryRange(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	a, err := s.parseSelectArgs(r)
	if err != nil {
		return err
	}
	step, offset, err := stepArgs(r)
	if err != nil {
		return err
	}
	labels, err := a.q.StatsLabels(step, offset)
	if err != nil {
		return err
	}
	series, err := s.collectStats(ctx, a, labels, a.ts)
	if err != nil {
		return err
	}
	slices.SortFunc(series, func(x, y *statsSeries) int { return strings.Compare(x.key, y.key) })
	b := []byte(`{"status":"success","data":{"resultType":"matrix","result":[`)
	for i, ss := range series {
		if i > 0 {
			b = append(b, ',')
		}
		idx := byTime(ss.ts)
		b = append(b, `{"metric":`...)
		b = appendMetric(b, ss)
		b = append(b, `,"values":[`...)
		for j, x := range idx {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendPoint(b, ss.ts[x], ss.values[x])
		}
		b = append(b, "]}"...)
	}
	b = append(b, "]}}"...)
	writeSelectHeaders(w.Header(), a, "application/json")
	_, err = w.Write(b)
	return err
}
