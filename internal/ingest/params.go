// Package ingest turns a body of NDJSON log lines into acknowledged,
// stored lines, whatever protocol brought it: the Pipeline (pipeline.go)
// reads any io.Reader in chunks cut at line ends, checks them on all cores
// with a Processor (line.go: the VictoriaLogs-compatible ingestion
// parameters of params.go, the per-line check and rewrite, _stream and
// _stream_id), groups each chunk's lines by day with their summary
// (batch.go), and hands them in order to a Sink (a segment.Store, or later
// Kafka), waiting for their acknowledgement. It opens no files and no
// sockets: internal/server decodes HTTP requests and internal/segment
// stores the lines.
package ingest

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ErrParams marks a bad ingestion parameter (HTTP 400).
var ErrParams = errors.New("bad ingestion parameter")

// Params are the per-request ingestion options VictoriaLogs accepts as query
// args or VL-* headers (docs/victorialogs/data-ingestion/README.md in
// VictoriaMetrics/VictoriaLogs). The zero value stores lines as received.
type Params struct {
	// TimeField names the field holding the log time. Empty means the
	// fields `spate query` reads (_time, ts, time, timestamp, @timestamp),
	// and the line is kept as is; a named field other than _time is
	// consumed and replaced by _time, as VictoriaLogs does.
	TimeField string
	// MsgFields: the first non-empty one becomes _msg (renamed).
	MsgFields []string
	// StreamFields: their values make the _stream field,
	// {name="value",...}.
	StreamFields []string
	// IgnoreFields are dropped; a trailing '*' drops every field with that
	// prefix.
	IgnoreFields []string
	// DecolorizeFields have ANSI color sequences removed from their values.
	DecolorizeFields []string
	// ExtraFields are added to every line, replacing fields of the same
	// name.
	ExtraFields []Field
	// Debug logs the processed lines instead of storing them.
	Debug bool
}

// Field is one name and value.
type Field struct{ Name, Value string }

// Rewrites reports whether lines must be rebuilt rather than stored as
// received: any option other than a time field of _time.
func (p *Params) Rewrites() bool {
	return (p.TimeField != "" && p.TimeField != "_time") ||
		len(p.MsgFields) > 0 && !(len(p.MsgFields) == 1 && p.MsgFields[0] == "_msg") ||
		len(p.StreamFields) > 0 || len(p.IgnoreFields) > 0 ||
		len(p.DecolorizeFields) > 0 || len(p.ExtraFields) > 0
}

// ParseParams reads the ingestion parameters from query args and headers;
// a query arg wins over its header, as in VictoriaLogs. The tenant headers
// are not parameters: see segment.ParseTenantHeaders.
func ParseParams(q url.Values, h http.Header) (Params, error) {
	get := func(arg, header string) string {
		if v := q.Get(arg); v != "" {
			return v
		}
		return h.Get(header)
	}
	var p Params
	p.TimeField = strings.TrimSpace(get("_time_field", "VL-Time-Field"))
	if strings.Contains(p.TimeField, ",") {
		return p, fmt.Errorf("%w: _time_field takes one field, got %q", ErrParams, p.TimeField)
	}
	p.MsgFields = splitList(get("_msg_field", "VL-Msg-Field"))
	p.StreamFields = splitList(get("_stream_fields", "VL-Stream-Fields"))
	p.IgnoreFields = splitList(get("ignore_fields", "VL-Ignore-Fields"))
	p.DecolorizeFields = splitList(get("decolorize_fields", "VL-Decolorize-Fields"))
	for _, kv := range splitList(get("extra_fields", "VL-Extra-Fields")) {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return p, fmt.Errorf("%w: extra_fields wants name=value pairs, got %q", ErrParams, kv)
		}
		p.ExtraFields = append(p.ExtraFields, Field{name, value})
	}
	switch d := get("debug", "VL-Debug"); d {
	case "", "0", "false":
	case "1", "true":
		p.Debug = true
	default:
		return p, fmt.Errorf("%w: debug wants 0 or 1, got %q", ErrParams, d)
	}
	return p, nil
}

func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ignored reports whether name matches one of the patterns: equal, or with
// the prefix before a trailing '*'.
func ignored(patterns []string, name string) bool {
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
