package query

import (
	"regexp"
	"slices"
	"strings"

	"github.com/spate-io/spate/internal/logstream"
)

// This file evaluates the stream filters, {...} and _stream_id:, on rows.
// A row's stream is its _stream field ("{}" when missing), parsed as
// VictoriaLogs' streamName.parse does; its stream ID is its _stream_id
// field, or else the ID of that stream in the query's tenant.

// maxStreamCache bounds the per-worker caches of decisions by _stream text:
// logs repeat few streams, so most rows cost one map lookup.
const maxStreamCache = 4096

// matchStream evaluates a FilterStream. It caches its decision per distinct
// _stream text; a worker owns its matcher.
type matchStream struct {
	or    [][]streamTag
	cache map[string]bool
	tags  []logstream.Tag
}

// streamTag is a compiled StreamTagFilter.
type streamTag struct {
	name   string
	op     string
	value  string
	values []string
	any    bool
	re     *regexp.Regexp // =~ and !~: anchored at both ends
}

func newMatchStream(f *FilterStream) (*matchStream, error) {
	m := &matchStream{cache: map[string]bool{}}
	for _, g := range f.Or {
		var tags []streamTag
		for _, t := range g {
			st := streamTag{name: t.Name, op: t.Op, value: t.Value, values: t.Values, any: t.Any}
			if t.Op == "=~" || t.Op == "!~" {
				re, err := regexp.Compile("^(?:" + t.Value + ")$")
				if err != nil {
					return nil, err
				}
				st.re = re
			}
			tags = append(tags, st)
		}
		m.or = append(m.or, tags)
	}
	return m, nil
}

func (m *matchStream) match(r *Row) bool {
	s := rowStream(r)
	if v, ok := m.cache[s]; ok {
		return v
	}
	v := m.eval(s)
	if len(m.cache) >= maxStreamCache {
		clear(m.cache)
	}
	m.cache[strings.Clone(s)] = v
	return v
}

// eval decides the filter for the stream text s.
func (m *matchStream) eval(s string) bool {
	tags, ok := logstream.Parse(m.tags[:0], s)
	m.tags = tags[:0]
	if !ok {
		return false
	}
	for _, g := range m.or {
		if slices.IndexFunc(g, func(t streamTag) bool { return !t.match(logstream.Value(tags, t.name)) }) < 0 {
			return true
		}
	}
	return false
}

func (t *streamTag) match(v string) bool {
	switch t.op {
	case "=":
		return v == t.value
	case "!=":
		return v != t.value
	case "=~":
		return t.re.MatchString(v)
	case "!~":
		return !t.re.MatchString(v)
	case "in":
		return t.any || slices.Contains(t.values, v)
	case "not_in":
		return !t.any && !slices.Contains(t.values, v)
	}
	panic("BUG: unknown stream tag operation " + t.op)
}

// rowStream returns the row's _stream, "{}" when it has none.
func rowStream(r *Row) string {
	if s := r.Get("_stream"); s != "" {
		return s
	}
	return "{}"
}

// matchStreamID evaluates a FilterStreamID.
type matchStreamID struct {
	ids              []string
	account, project uint32
	cache            map[string]string // _stream text -> ID, for rows without _stream_id
	tags             []logstream.Tag
	buf              []byte
}

func (m *matchStreamID) match(r *Row) bool {
	id := r.Get("_stream_id")
	if id == "" {
		id = m.derive(rowStream(r))
	}
	return slices.Contains(m.ids, id)
}

// derive returns the ID of the stream whose text is s, or "" if s does not
// parse.
func (m *matchStreamID) derive(s string) string {
	if id, ok := m.cache[s]; ok {
		return id
	}
	tags, ok := logstream.Parse(m.tags[:0], s)
	id := ""
	if ok {
		logstream.Sort(tags)
		m.buf = logstream.AppendCanonical(m.buf[:0], tags)
		id = string(logstream.AppendID(nil, m.account, m.project, m.buf))
	}
	m.tags = tags[:0]
	if len(m.cache) >= maxStreamCache {
		clear(m.cache)
	}
	m.cache[strings.Clone(s)] = id
	return id
}
