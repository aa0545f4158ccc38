package query

import (
	"strings"

	"github.com/spate-io/spate/internal/ndjson"
	"github.com/spate-io/spate/internal/syslogline"
)

// LineConverter rewrites the lines of a logfmt, CSV/TSV or syslog input as
// JSON objects with the same fields, in the same order, so that a stream
// that mixes the lines of several inputs (spate query -f) can be read as
// JSON: the fields, _msg and _time come out as reading the input in its own
// format gives them. Not safe for concurrent use.
type LineConverter struct {
	f    InputFormat
	a    arena
	kv   []Field
	vals []string
}

// NewLineConverter returns a converter for inputs of format f, or nil when
// their lines need none (JSON and plain text pass as they are).
func NewLineConverter(f InputFormat) *LineConverter {
	switch f.Kind {
	case FormatLogfmt, FormatCSV, FormatSyslog:
		return &LineConverter{f: f}
	}
	return nil
}

// Append appends line (without its newline), which starts at byte off of
// its input, to dst as a JSON object and a newline. It reports false for a
// line that is no log (a CSV header, at offset 0). A line that has no
// fields in the format (a logfmt line without pairs, a CSV line with a
// broken quote) is appended as it is, to be read as plain text.
func (c *LineConverter) Append(dst, line []byte, off int64) ([]byte, bool) {
	c.a.reset()
	s := strings.TrimSuffix(unsafeString(line), "\r")
	c.kv = c.kv[:0]
	switch c.f.Kind {
	case FormatLogfmt:
		c.kv = parseLogfmt(c.kv, s, &c.a)
	case FormatCSV:
		if off == 0 {
			return dst, false
		}
		vals, ok := splitCSV(c.vals[:0], s, c.f.Comma, &c.a)
		c.vals = vals
		if ok {
			for i, v := range vals {
				c.kv = append(c.kv, Field{Name: csvColumn(c.f.Header, i, &c.a), Value: v})
			}
		}
	case FormatSyslog:
		syslogline.Parse(s, func(name, value string) {
			c.kv = append(c.kv, Field{Name: name, Value: value})
		})
	}
	if len(c.kv) == 0 {
		dst = append(dst, line...)
		return append(dst, '\n'), true
	}
	dst = append(dst, '{')
	for i, f := range c.kv {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = ndjson.AppendQuoted(dst, f.Name)
		dst = append(dst, ':')
		dst = ndjson.AppendQuoted(dst, f.Value)
	}
	return append(dst, '}', '\n'), true
}
