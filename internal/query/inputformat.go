package query

import (
	"slices"
	"strconv"
	"strings"

	"github.com/spate-io/spate/internal/bytesutil"
	"github.com/spate-io/spate/internal/syslogline"
	"github.com/spate-io/spate/internal/timeparse"
)

// Input format kinds (InputFormat.Kind).
const (
	FormatJSON   = ""       // JSON objects are fields; other lines are plain text
	FormatLogfmt = "logfmt" // key=value pairs
	FormatCSV    = "csv"    // separated values named by a header line
	FormatPlain  = "plain"  // every line is plain text (_msg)
	FormatSyslog = "syslog" // RFC 5424 or RFC 3164 lines, fields as VictoriaLogs names them
)

// InputFormat says how the lines of one input become fields.
type InputFormat struct {
	Kind string
	// Header names the columns of a csv input: its first line, which is
	// not a log (the line at offset 0 is skipped). Comma is the separator
	// (',' or '\t'). Values are RFC 4180: a value in double quotes may
	// hold the separator and "" for a quote. Columns past the header are
	// named field_N (from 1); missing ones are absent.
	Header []string
	Comma  byte
}

// String names the format: "json", "logfmt", "csv", "tsv" or "plain".
func (f InputFormat) String() string {
	switch f.Kind {
	case FormatJSON:
		return "json"
	case FormatCSV:
		if f.Comma == '\t' {
			return "tsv"
		}
	}
	return f.Kind
}

// buildAs is build for a line of an input in format f (nil: JSON). off is
// the line's offset in its input: a csv header (off 0) is no log, and
// buildAs reports false for it.
func (b *recordBuilder) buildAs(f *InputFormat, line []byte, off int64, r *Row) bool {
	if f == nil || f.Kind == FormatJSON {
		return b.build(line, r)
	}
	r.Reset()
	s := strings.TrimSuffix(unsafeString(line), "\r")
	switch f.Kind {
	case FormatLogfmt:
		b.kv = parseLogfmt(b.kv[:0], s, b.arena)
		if len(b.kv) == 0 {
			b.plainLines++
			b.plain(line, r)
			return true
		}
	case FormatCSV:
		if off == 0 {
			return false
		}
		b.kv = b.kv[:0]
		vals, ok := splitCSV(b.vals[:0], s, f.Comma, b.arena)
		b.vals = vals
		if !ok {
			b.badLines++
			b.plain(line, r)
			return true
		}
		for i, v := range vals {
			b.kv = append(b.kv, Field{Name: csvColumn(f.Header, i, b.arena), Value: v})
		}
	case FormatSyslog:
		b.kv = b.kv[:0]
		syslogline.Parse(s, b.addKV)
	default: // FormatPlain
		b.plainLines++
		b.plain(line, r)
		return true
	}
	b.fields(b.kv, r)
	return true
}

// csvColumn names column i of a CSV input: its name in header, or field_N
// (from 1) past the header's end, kept in a.
func csvColumn(header []string, i int, a *arena) string {
	if i < len(header) {
		return header[i]
	}
	return a.addString("field_" + strconv.Itoa(i+1))
}

// addKV appends a pair to b.kv.
func (b *recordBuilder) addKV(name, value string) {
	b.kv = append(b.kv, Field{Name: name, Value: value})
}

// fields sets a structured log's fields from kv (names and values valid
// while the row is): the best message and time candidates become _msg and
// _time, the rest are fields when the query needs them.
func (b *recordBuilder) fields(kv []Field, r *Row) {
	msgPrio, timePrio := len(b.msgFields), len(b.timeFields)
	mi, ti := -1, -1
	for i := range kv {
		if p := slices.Index(b.msgFields, kv[i].Name); p >= 0 && p < msgPrio {
			msgPrio, mi = p, i
		}
		if p := slices.Index(b.timeFields, kv[i].Name); p >= 0 && p < timePrio &&
			!(p > 0 && b.autoTime && kv[i].Value != "" && timeparse.MeansNow(bytesutil.ToUnsafeBytes(kv[i].Value))) {
			// ("0" or "-" in ts, time, ... is an ordinary field, as
			// in build.)
			timePrio, ti = p, i
		}
	}
	for i, f := range kv {
		if i != mi && i != ti && b.need.has(f.Name) {
			r.Set(f.Name, f.Value)
		}
	}
	var msg, msgName, tm, timeName string
	if mi >= 0 {
		msg, msgName = kv[mi].Value, kv[mi].Name
	}
	if ti >= 0 {
		tm, timeName = kv[ti].Value, kv[ti].Name
	}
	b.finish(r, msg, msgName, tm, timeName, timeparse.MeansNow(bytesutil.ToUnsafeBytes(tm)))
}

// parseLogfmt appends the pairs of a logfmt line to dst: `k=v k2="a b"
// flag`, a key without '=' having an empty value. A value in double quotes
// is unquoted as a Go string (into a); a broken quote leaves the rest as
// it is.
func parseLogfmt(dst []Field, s string, a *arena) []Field {
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return dst
		}
		end := strings.IndexAny(s, " \t=")
		if end < 0 {
			return append(dst, Field{Name: s})
		}
		key := s[:end]
		if s[end] != '=' {
			dst = append(dst, Field{Name: key})
			s = s[end:]
			continue
		}
		s = s[end+1:]
		if len(s) > 0 && s[0] == '"' {
			if q, err := strconv.QuotedPrefix(s); err == nil {
				v := q[1 : len(q)-1]
				if strings.IndexByte(v, '\\') >= 0 {
					if uq, err := strconv.Unquote(q); err == nil {
						v = a.addString(uq)
					}
				}
				dst = append(dst, Field{Name: key, Value: v})
				s = s[len(q):]
				continue
			}
		}
		vend := strings.IndexAny(s, " \t")
		if vend < 0 {
			vend = len(s)
		}
		dst = append(dst, Field{Name: key, Value: s[:vend]})
		s = s[vend:]
	}
}

// splitCSV appends the values of one line separated by comma to dst (RFC
// 4180 quoting; unescaped values alias s, escaped ones go into a). It
// reports false for a quote that is not closed or not followed by the
// separator.
func splitCSV(dst []string, s string, comma byte, a *arena) ([]string, bool) {
	for {
		if len(s) == 0 || s[0] != '"' {
			j := strings.IndexByte(s, comma)
			if j < 0 {
				return append(dst, s), true
			}
			dst = append(dst, s[:j])
			s = s[j+1:]
			continue
		}
		// Quoted: up to the quote not doubled.
		i, escaped := 1, false
		for {
			k := strings.IndexByte(s[i:], '"')
			if k < 0 {
				return dst, false
			}
			i += k
			if i+1 < len(s) && s[i+1] == '"' {
				escaped = true
				i += 2
				continue
			}
			break
		}
		v := s[1:i]
		if escaped {
			buf := a.appendBuf(len(v))
			for j := 0; j < len(v); j++ {
				buf = append(buf, v[j])
				if v[j] == '"' {
					j++ // the second of a pair
				}
			}
			v = a.take(buf)
		}
		dst = append(dst, v)
		s = s[i+1:]
		if len(s) == 0 {
			return dst, true
		}
		if s[0] != comma {
			return dst, false
		}
		s = s[1:]
	}
}

// Sniff guesses the format of an input from its first bytes (head; a
// partial last line is ignored): JSON (or plain text) unless most of the
// first lines are logfmt pairs, or the first line is a header of two or
// more names that most of the next lines match in count, separated by
// tabs or commas. binary reports a NUL byte in head: ripgrep's test for a
// file that is not text.
func Sniff(head []byte) (f InputFormat, binary bool) {
	if strings.IndexByte(unsafeString(head), 0) >= 0 {
		return InputFormat{}, true
	}
	text := unsafeString(head)
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	} else if len(head) >= 64<<10 {
		return InputFormat{}, false // one long partial line: nothing to judge
	}
	var lines []string
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) != "" {
			lines = append(lines, line)
		}
		if len(lines) == 32 {
			break
		}
	}
	if len(lines) == 0 {
		return InputFormat{}, false
	}
	json := 0
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " \t"), "{") {
			json++
		}
	}
	if 2*json >= len(lines) {
		return InputFormat{}, false
	}
	sys := 0
	for _, l := range lines {
		if syslogline.Looks(l) {
			sys++
		}
	}
	if 5*sys >= 4*len(lines) {
		return InputFormat{Kind: FormatSyslog}, false
	}
	if f, ok := sniffCSV(lines); ok {
		return f, false
	}
	logfmt := 0
	var a arena
	var kv []Field
	for _, l := range lines {
		kv = parseLogfmt(kv[:0], l, &a)
		pairs := 0
		for _, p := range kv {
			if p.Value != "" && fieldName(p.Name) {
				pairs++
			}
		}
		if pairs >= 2 && 10*pairs >= 7*len(kv) {
			logfmt++
		}
	}
	if 5*logfmt >= 4*len(lines) {
		return InputFormat{Kind: FormatLogfmt}, false
	}
	return InputFormat{}, false
}

// sniffCSV reports a header line (names separated by tabs or commas, two
// or more) that at least 4 in 5 of the next lines, and one at least,
// match in column count.
func sniffCSV(lines []string) (InputFormat, bool) {
	if len(lines) < 2 {
		return InputFormat{}, false
	}
	comma := byte(',')
	if strings.IndexByte(lines[0], '\t') >= 0 {
		comma = '\t'
	}
	var a arena
	header, ok := splitCSV(nil, lines[0], comma, &a)
	if !ok || len(header) < 2 {
		return InputFormat{}, false
	}
	for _, h := range header {
		if !fieldName(h) {
			return InputFormat{}, false
		}
	}
	match := 0
	for _, l := range lines[1:] {
		if v, ok := splitCSV(nil, l, comma, &a); ok && len(v) == len(header) {
			match++
		}
	}
	if 5*match < 4*(len(lines)-1) {
		return InputFormat{}, false
	}
	names := make([]string, len(header))
	for i, h := range header {
		names[i] = strings.Clone(h)
	}
	return InputFormat{Kind: FormatCSV, Header: names, Comma: comma}, true
}

// fieldName reports whether s looks like a field name: letters, digits,
// '_', '.', '-', '@', starting with a letter, '_' or '@', at most 64 bytes.
func fieldName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '@':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// SplitHeader splits a csv header line into its names (copies).
func SplitHeader(line string, comma byte) []string {
	var a arena
	vals, _ := splitCSV(nil, line, comma, &a)
	names := make([]string, len(vals))
	for i, v := range vals {
		names[i] = strings.Clone(strings.TrimSpace(v))
	}
	return names
}
