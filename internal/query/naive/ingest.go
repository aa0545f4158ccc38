package naive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// missingMsg is VictoriaLogs' _msg for a log without a (non-empty) message.
const missingMsg = "missing _msg field; see https://docs.victoriametrics.com/victorialogs/keyconcepts/#message-field"

// Candidate field names tried, in order, when Options leave a name empty.
var (
	autoMsgFields  = []string{"msg", "message", "log"}
	autoTimeFields = []string{"ts", "time", "timestamp", "@timestamp"}
)

// field is one flattened name=value pair in source order.
type field struct{ name, value string }

// parseLogLine turns one log line into a row, as VictoriaLogs' jsonline
// ingestion would store it:
//
//   - A line that is not one valid JSON object (or is not valid UTF-8) is
//     plain text: _msg is the whole line and there is no other field.
//     (VictoriaLogs drops such lines at ingestion; spate keeps them.)
//   - Nested objects are flattened with '.', an empty object gives no field,
//     an array keeps its compact JSON text, booleans become "true"/"false",
//     null becomes empty (missing), a number keeps its source text, and when
//     a name repeats the last value wins.
//   - The time field is consumed into _time, printed as RFC3339Nano UTC. A
//     line without a time field has no _time: spate reads files, there is no
//     ingestion time to fall back on. A time that cannot be parsed leaves
//     the line without _time and keeps the field under its own name.
//   - The message field becomes _msg; a missing or empty one gives missingMsg.
func parseLogLine(line string, opts Options) row {
	fields, ok := parseJSONObject(line)
	if !ok {
		return row{"_msg": line}
	}
	r := make(row, len(fields)+2)
	for _, f := range fields {
		r[f.name] = f.value // the last value of a repeated name wins
	}
	for name, v := range r {
		if v == "" {
			delete(r, name)
		}
	}

	timeField := pickField(r, opts.TimeField, autoTimeFields)
	if v, ok := r[timeField]; ok && timeField != "" {
		if ns, ok := parseLogTimestamp(v); ok {
			delete(r, timeField)
			r["_time"] = formatTime(ns)
		}
	}

	msgField := pickField(r, opts.MsgField, autoMsgFields)
	msg := ""
	if msgField != "" {
		msg = r[msgField]
		delete(r, msgField)
	}
	if msg == "" {
		msg = missingMsg
	}
	r["_msg"] = msg
	return r
}

// pickField returns name if set, else the first candidate present in r.
func pickField(r row, name string, candidates []string) string {
	if name != "" {
		return name
	}
	for _, c := range candidates {
		if r[c] != "" {
			return c
		}
	}
	return ""
}

// parseJSONObject parses s as one JSON object and returns its flattened
// fields in source order; ok is false if s is not exactly one valid JSON
// object or is not valid UTF-8.
func parseJSONObject(s string) ([]field, bool) {
	t := strings.TrimSpace(s)
	if t == "" || t[0] != '{' || !utf8.ValidString(s) || !json.Valid([]byte(s)) {
		return nil, false
	}
	fields, err := flattenObject(nil, "", []byte(t))
	if err != nil {
		return nil, false
	}
	return fields, true
}

// flattenObject appends the fields of the JSON object text obj to dst, names
// prefixed with prefix.
func flattenObject(dst []field, prefix string, obj []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key is not a string")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		raw = bytes.TrimSpace(raw)
		name := prefix + key
		switch raw[0] {
		case '{':
			dst, err = flattenObject(dst, name+".", raw)
			if err != nil {
				return nil, err
			}
		case '[':
			var buf bytes.Buffer
			if err := json.Compact(&buf, raw); err != nil {
				return nil, err
			}
			dst = append(dst, field{name, buf.String()})
		case '"':
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, err
			}
			dst = append(dst, field{name, v})
		case 'n':
			dst = append(dst, field{name, ""})
		default: // true, false or a number: keep the source text
			dst = append(dst, field{name, string(raw)})
		}
	}
	return dst, nil
}

// parseLogTimestamp parses the value of the time field into Unix
// nanoseconds: RFC3339 with any offset and fraction, or a Unix timestamp
// (integer or with a fraction, as a JSON number or a string) whose unit is
// guessed from its magnitude as VictoriaLogs does: below 2^31 seconds, below
// 2^31*1e3 milliseconds, below 2^31*1e6 microseconds, else nanoseconds.
// An empty value or "0" (VictoriaLogs: "use the ingestion time") is not a
// time here.
func parseLogTimestamp(s string) (int64, bool) {
	if s == "" || s == "0" {
		return 0, false
	}
	if len(s) > 4 && s[4] == '-' {
		return parseTime(s)
	}
	const lim = float64(1 << 31)
	if strings.Contains(s, ".") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, false
		}
		switch {
		case f < lim && f >= -lim:
			return int64(f * 1e9), true
		case f < lim*1e3 && f >= -lim*1e3:
			return int64(f * 1e6), true
		case f < lim*1e6 && f >= -lim*1e6:
			return int64(f * 1e3), true
		}
		if f >= 1<<63 || f < -(1<<63) {
			return 0, false
		}
		return int64(f), true
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	const ilim = int64(1 << 31)
	switch {
	case n < ilim && n >= -ilim:
		return n * 1e9, true
	case n < ilim*1e3 && n >= -ilim*1e3:
		return n * 1e6, true
	case n < ilim*1e6 && n >= -ilim*1e6:
		return n * 1e3, true
	}
	return n, true
}
