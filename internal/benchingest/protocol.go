package benchingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/spate-io/spate/internal/ndjson"
	"github.com/spate-io/spate/internal/timeparse"
)

// Protocol is how the generated lines are sent: the same log lines, so the
// MB/s of every protocol counts the same payload (the NDJSON lines' bytes).
type Protocol string

// The protocols of Config.Protocol.
const (
	// JSONLine: the lines as they are, to /insert/jsonline.
	JSONLine Protocol = "jsonline"
	// Elasticsearch: a bulk body, each line a document after
	// {"create":{}}, to /insert/elasticsearch/_bulk.
	Elasticsearch Protocol = "elasticsearch"
	// Loki: a Loki push request in protobuf, snappy-compressed, as Promtail
	// sends it: one stream per service (its label), each line an entry
	// with the line's _time as its timestamp and the line as its text (a
	// JSON message, which VictoriaLogs and spate parse into fields).
	Loki Protocol = "loki"
	// OTLP: an OpenTelemetry ExportLogsServiceRequest in protobuf, as the
	// OTLP/HTTP exporters send it: one resource per service
	// (service.name), each line a record with its _time, _msg as the body
	// and its other fields as string attributes.
	OTLP Protocol = "otlp"
)

// Protocols lists the protocols, the default first.
var Protocols = []Protocol{JSONLine, Elasticsearch, Loki, OTLP, Syslog}

// path returns the protocol's endpoint path.
func (p Protocol) path() string {
	switch p {
	case Elasticsearch:
		return "/insert/elasticsearch/_bulk"
	case Loki:
		return "/insert/loki/api/v1/push"
	case OTLP:
		return "/insert/opentelemetry/v1/logs"
	}
	return DefaultPath
}

// contentType returns the Content-Type its bodies are sent with.
func (p Protocol) contentType() string {
	switch p {
	case Loki, OTLP:
		return "application/x-protobuf"
	}
	return "application/x-ndjson"
}

// encode returns the request body of the NDJSON lines raw (each ending in
// '\n') in protocol p. Cost: one parse of every line for Loki and OTLP;
// done before the clock starts.
func (p Protocol) encode(raw []byte) ([]byte, error) {
	switch p {
	case JSONLine, "":
		return raw, nil
	case Elasticsearch:
		out := make([]byte, 0, len(raw)+bytes.Count(raw, []byte{'\n'})*len(`{"create":{}}`+"\n"))
		for line := range bytes.Lines(raw) {
			out = append(out, `{"create":{}}`+"\n"...)
			out = append(out, line...)
		}
		return out, nil
	case Loki:
		return encodeLoki(raw)
	case OTLP:
		return encodeOTLP(raw)
	case Syslog:
		return encodeSyslog(raw)
	}
	return nil, fmt.Errorf("unknown protocol %q; want one of %v", p, Protocols)
}

// parsedLine is one generated line: its time (_time, ts, time or
// timestamp), service, host, message (_msg, msg or message) and other
// fields, flattened.
type parsedLine struct {
	line    []byte // without '\n'
	time    int64
	service string
	host    string
	msg     string
	fields  [][2]string
}

// parseLines reads every line of raw with the ndjson iterator. A time
// field that is not an RFC 3339 time is kept as an ordinary field (the
// server then stamps the line). Its error is a *lineError.
func parseLines(raw []byte) ([]parsedLine, error) {
	var it ndjson.Iter
	var out []parsedLine
	n := 0
	for line := range bytes.Lines(raw) {
		n++
		line = bytes.TrimSuffix(line, []byte{'\n'})
		pl := parsedLine{line: line}
		it.Reset(line)
		for it.Next() {
			k, v := string(it.Key()), string(it.Value())
			if pl.time == 0 && (k == "_time" || k == "ts" || k == "time" || k == "timestamp") {
				if t, ok := timeparse.ParseRFC3339(v); ok {
					pl.time = t
					continue
				}
			}
			switch {
			case pl.msg == "" && (k == "_msg" || k == "msg" || k == "message"):
				pl.msg = v
			default:
				switch k {
				case "service":
					pl.service = v
				case "host":
					pl.host = v
				}
				pl.fields = append(pl.fields, [2]string{k, v})
			}
		}
		if err := it.Err(); err != nil {
			return nil, &lineError{Line: n, Err: err}
		}
		out = append(out, pl)
	}
	return out, nil
}

// lineError is an error in line Line (1-based) of the lines being
// encoded.
type lineError struct {
	Line int
	Err  error
}

func (e *lineError) Error() string {
	return fmt.Sprintf("line %d is not a JSON object: %v", e.Line, e.Err)
}

func (e *lineError) Unwrap() error { return e.Err }

// byService groups lines by service, in order of first appearance.
func byService(lines []parsedLine) ([]string, map[string][]parsedLine) {
	var order []string
	groups := map[string][]parsedLine{}
	for _, l := range lines {
		if _, ok := groups[l.service]; !ok {
			order = append(order, l.service)
		}
		groups[l.service] = append(groups[l.service], l)
	}
	return order, groups
}

// encodeLoki builds a snappy-compressed Loki PushRequest
// (streams=1: labels=1, entries=2: timestamp=1 {seconds=1, nanos=2}, line=2).
func encodeLoki(raw []byte) ([]byte, error) {
	lines, err := parseLines(raw)
	if err != nil {
		return nil, err
	}
	order, groups := byService(lines)
	var req, stream, entry, ts []byte
	for _, svc := range order {
		stream = stream[:0]
		labels := fmt.Sprintf(`{job="spate-bench", service=%q}`, svc)
		stream = protowire.AppendTag(stream, 1, protowire.BytesType)
		stream = protowire.AppendString(stream, labels)
		for _, l := range groups[svc] {
			ts = ts[:0]
			ts = protowire.AppendTag(ts, 1, protowire.VarintType)
			ts = protowire.AppendVarint(ts, uint64(l.time/1e9))
			ts = protowire.AppendTag(ts, 2, protowire.VarintType)
			ts = protowire.AppendVarint(ts, uint64(l.time%1e9))
			entry = entry[:0]
			entry = protowire.AppendTag(entry, 1, protowire.BytesType)
			entry = protowire.AppendBytes(entry, ts)
			entry = protowire.AppendTag(entry, 2, protowire.BytesType)
			entry = protowire.AppendBytes(entry, l.line)
			stream = protowire.AppendTag(stream, 2, protowire.BytesType)
			stream = protowire.AppendBytes(stream, entry)
		}
		req = protowire.AppendTag(req, 1, protowire.BytesType)
		req = protowire.AppendBytes(req, stream)
	}
	return snappy.Encode(nil, req), nil
}

// encodeOTLP builds an ExportLogsServiceRequest: resource_logs=1 {resource=1
// {attributes=1}, scope_logs=2 {scope=1, log_records=2 {time_unix_nano=1,
// body=5, attributes=6}}}.
func encodeOTLP(raw []byte) ([]byte, error) {
	lines, err := parseLines(raw)
	if err != nil {
		return nil, err
	}
	order, groups := byService(lines)
	kv := func(dst []byte, field protowire.Number, k, v string) []byte {
		var any, pair []byte
		any = protowire.AppendTag(any, 1, protowire.BytesType)
		any = protowire.AppendString(any, v)
		pair = protowire.AppendTag(pair, 1, protowire.BytesType)
		pair = protowire.AppendString(pair, k)
		pair = protowire.AppendTag(pair, 2, protowire.BytesType)
		pair = protowire.AppendBytes(pair, any)
		dst = protowire.AppendTag(dst, field, protowire.BytesType)
		return protowire.AppendBytes(dst, pair)
	}
	var req []byte
	for _, svc := range order {
		var resource, scopeLogs, rl []byte
		resource = kv(resource, 1, "service.name", svc)
		scope := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "spate-bench")
		scopeLogs = protowire.AppendTag(scopeLogs, 1, protowire.BytesType)
		scopeLogs = protowire.AppendBytes(scopeLogs, scope)
		for _, l := range groups[svc] {
			var rec []byte
			rec = protowire.AppendTag(rec, 1, protowire.Fixed64Type)
			rec = protowire.AppendFixed64(rec, uint64(l.time))
			body := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), l.msg)
			rec = protowire.AppendTag(rec, 5, protowire.BytesType)
			rec = protowire.AppendBytes(rec, body)
			for _, f := range l.fields {
				if f[0] != "service" {
					rec = kv(rec, 6, f[0], f[1])
				}
			}
			scopeLogs = protowire.AppendTag(scopeLogs, 2, protowire.BytesType)
			scopeLogs = protowire.AppendBytes(scopeLogs, rec)
		}
		rl = protowire.AppendTag(rl, 1, protowire.BytesType)
		rl = protowire.AppendBytes(rl, resource)
		rl = protowire.AppendTag(rl, 2, protowire.BytesType)
		rl = protowire.AppendBytes(rl, scopeLogs)
		req = protowire.AppendTag(req, 1, protowire.BytesType)
		req = protowire.AppendBytes(req, rl)
	}
	return req, nil
}

// parseReply returns the accepted and rejected lines of a 2xx reply to a
// body of lines lines in protocol p.
func (p Protocol) parseReply(reply []byte, lines int64) (accepted, rejected int64, err error) {
	switch p {
	case Elasticsearch:
		if i := bytes.Index(reply, []byte(`"errors":`)); i >= 0 && bytes.HasPrefix(reply[i+len(`"errors":`):], []byte("false")) {
			// Fast path: no item failed; the items are not decoded (that
			// would cost the client more CPU than the server spends).
			return lines, 0, nil
		}
		var v struct {
			Errors bool                        `json:"errors"`
			Items  []map[string]map[string]any `json:"items"`
		}
		if err := json.Unmarshal(reply, &v); err != nil {
			return 0, 0, fmt.Errorf("cannot parse the bulk reply %q: %w", serverMessage(reply), err)
		}
		if int64(len(v.Items)) != lines {
			return 0, 0, fmt.Errorf("the bulk reply has %d items for %d documents", len(v.Items), lines)
		}
		for _, it := range v.Items {
			for _, res := range it {
				if s, _ := res["status"].(float64); s >= 300 {
					rejected++
				}
			}
		}
		return lines - rejected, rejected, nil
	case OTLP:
		// ExportLogsServiceResponse: partial_success=1 {rejected_log_records=1}.
		rej, err := otlpRejected(reply)
		if err != nil {
			return 0, 0, fmt.Errorf("cannot parse the OTLP reply %q: %w", serverMessage(reply), err)
		}
		return lines - rej, rej, nil
	case Loki:
		return lines, 0, nil // 204, no body
	}
	return parseResponse(reply, lines)
}

// otlpRejected reads rejected_log_records (partial_success=1 {1}) from an
// ExportLogsServiceResponse; absent is 0.
func otlpRejected(b []byte) (int64, error) {
	ps, err := protoField(b, 1, protowire.BytesType)
	if ps == nil || err != nil {
		return 0, err
	}
	v, err := protoField(ps, 1, protowire.VarintType)
	if v == nil || err != nil {
		return 0, err
	}
	n, _ := protowire.ConsumeVarint(v)
	return int64(n), nil
}

// protoField returns the encoded value of the first field num of wire type
// typ in the message b (for BytesType, its contents), or nil when there is
// none.
func protoField(b []byte, num protowire.Number, typ protowire.Type) ([]byte, error) {
	for len(b) > 0 {
		n2, t2, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		if n2 == num && t2 == typ && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, protowire.ParseError(n)
			}
			return v, nil
		}
		n = protowire.ConsumeFieldValue(n2, t2, b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		if n2 == num && t2 == typ {
			return b[:n], nil
		}
		b = b[n:]
	}
	return nil, nil
}

// ParseProtocol returns the protocol named s.
func ParseProtocol(s string) (Protocol, error) {
	p := Protocol(strings.ToLower(s))
	if p == "" {
		return JSONLine, nil
	}
	if !slices.Contains(Protocols, p) {
		return "", fmt.Errorf("unknown protocol %q; want one of %v", s, Protocols)
	}
	return p, nil
}
