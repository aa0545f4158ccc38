package naive

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/spate-io/spate/internal/query"
)

// checkStreamContext refuses a stream_context pipe that has a pipe other
// than filter before it, as VictoriaLogs does.
func checkStreamContext(q *query.Query) error {
	for i, p := range q.Pipes {
		if _, ok := p.(*query.PipeStreamContext); !ok {
			continue
		}
		for _, before := range q.Pipes[:i] {
			if _, ok := before.(*query.PipeFilter); !ok {
				return fmt.Errorf("stream_context after the %s pipe", before)
			}
		}
	}
	return nil
}

// ctxRow is a log near a time fed to stream_context.
type ctxRow struct {
	t int64
	r row
}

// ctxLess orders by time, then by the fields sorted by name (name, then
// value), then by their number.
func ctxLess(a, b ctxRow) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	fa, fb := sortedFields(a.r), sortedFields(b.r)
	for i := 0; i < len(fa) && i < len(fb); i++ {
		if fa[i][0] != fb[i][0] {
			return fa[i][0] < fb[i][0]
		}
		if fa[i][1] != fb[i][1] {
			return fa[i][1] < fb[i][1]
		}
	}
	return len(fa) < len(fb)
}

func sortedFields(r row) [][2]string {
	var fs [][2]string
	for k, v := range r {
		if v != "" {
			fs = append(fs, [2]string{k, v})
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i][0] < fs[j][0] })
	return fs
}

// streamContext is stream_context over rows, the logs fed: for each
// stream, the logs of ev.logs around each time, as query.PipeStreamContext
// describes it, in the simplest way: every log of the stream within the
// window, sorted, picked per time.
func (ev *evaluator) streamContext(p *query.PipeStreamContext, rows []row) ([]row, error) {
	byStream := map[string][]int64{}
	for _, r := range rows {
		t, ok := parseTime(r["_time"])
		if !ok {
			return nil, fmt.Errorf("stream_context: a log without _time")
		}
		id := r["_stream_id"]
		if id == "" {
			id = ev.streamID(streamOf(r))
		}
		byStream[id] = append(byStream[id], t)
	}
	if len(byStream) > 100 {
		return nil, fmt.Errorf("stream_context: %d streams", len(byStream))
	}
	var ids []string
	for id, ts := range byStream {
		if len(ts) > 1000 {
			return nil, fmt.Errorf("stream_context: %d logs of one stream", len(ts))
		}
		slices.Sort(ts)
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := byStream[ids[i]][0], byStream[ids[j]][0]
		if a != b {
			return a < b
		}
		return ids[i] < ids[j]
	})
	var out []row
	for _, id := range ids {
		times := byStream[id]
		// Window before the first and after the last time; an end on a
		// whole second takes in that second; a negative window, no bound.
		lo, hi := times[0], times[len(times)-1]
		if p.Before > 0 {
			lo -= p.Window
		}
		if p.After > 0 {
			hi += p.Window
		}
		if hi%1e9 == 0 {
			hi += 1e9 - 1
		}
		if p.Window < 0 {
			lo, hi = math.MinInt64, math.MaxInt64
		}
		var logs []ctxRow
		for _, l := range ev.logs {
			sid := l["_stream_id"]
			if sid == "" {
				sid = ev.streamID(streamOf(l))
			}
			t, ok := parseTime(l["_time"])
			if ok && sid == id && t >= lo && t <= hi {
				logs = append(logs, ctxRow{t, l})
			}
		}
		sort.SliceStable(logs, func(i, j int) bool { return ctxLess(logs[i], logs[j]) })
		var groups [][]ctxRow
		var last *ctxRow
		for i, at := range times {
			var before, matched, after []ctxRow
			for _, l := range logs {
				// Only logs strictly between the times before and after.
				if i > 0 && l.t <= times[i-1] || i+1 < len(times) && l.t >= times[i+1] {
					continue
				}
				switch {
				case l.t < at:
					before = append(before, l)
				case l.t > at:
					after = append(after, l)
				default:
					matched = append(matched, l)
				}
			}
			// logs is sorted: the nearest before are at the end, after at
			// the start.
			before = before[max(0, len(before)-int(p.Before)):]
			after = after[:min(len(after), int(p.After))]
			g := slices.Concat(before, matched, after)
			if last != nil {
				for len(g) > 0 && !ctxLess(*last, g[0]) {
					g = g[1:]
				}
			}
			if len(g) == 0 {
				continue
			}
			groups = append(groups, g)
			last = &g[len(g)-1]
		}
		for _, g := range groups {
			for _, l := range g {
				out = append(out, l.r.clone())
			}
			if len(ids) > 1 || len(groups) > 1 {
				end := g[len(g)-1]
				d := row{}
				d.set("_time", time.Unix(0, end.t+1).UTC().Format(time.RFC3339Nano))
				d.set("_stream_id", id)
				d.set("_stream", streamOf(end.r))
				d.set("_msg", "---")
				out = append(out, d)
			}
		}
	}
	return out, nil
}
