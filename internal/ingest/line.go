package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/spate-io/spate/internal/bytesutil"
	"github.com/spate-io/spate/internal/logstream"
	"github.com/spate-io/spate/internal/ndjson"
	"github.com/spate-io/spate/internal/segment"
	"github.com/spate-io/spate/internal/timeparse"
)

// Processor checks lines and builds the bytes to store for one request's
// Params. It is not safe for concurrent use; reuse one per goroutine.
//
// A line is kept when it is a valid JSON object (RFC 8259, valid UTF-8, as
// ndjson.Iter checks it) whose time field, if present and non-empty,
// parses. Without Params.Rewrites the stored line is the received line byte
// for byte, plus `"_time":"<now>"` as its first field when it has no time
// field. With Rewrites it is rebuilt flat (nested keys dotted, as queries
// see them): _time first (normalised RFC 3339 UTC), then, with
// StreamFields, _stream and _stream_id as VictoriaLogs makes them (see
// internal/logstream), then the fields in line order with _msg renamed,
// ignored fields dropped and extra fields last.
type Processor struct {
	p        Params
	tenant   segment.Tenant
	rewrite  bool
	timeKeys []string // candidate time fields, most preferred first
	it       ndjson.Iter
	out      []byte
	scratch  []byte // the _stream text
	canon    []byte // the canonical stream tags
	// The stream fields of the current line, with non-empty values: refs
	// into tagBuf, which holds the values; tags is scratch for rebuild.
	tagRefs []tagRef
	tagBuf  []byte
	tags    []logstream.Tag
	// own is the line's own top-level _stream value, when hasOwn.
	own    []byte
	hasOwn bool
	// nested: some time, stream or (when rewriting) message field has a
	// dot, so nested leaves must be looked at too; otherwise only
	// top-level keys can match.
	nested bool
}

// tagRef is one stream field of a line, its value at tagBuf[off:end].
type tagRef struct {
	name     string
	off, end int
}

// NewProcessor returns a Processor for the lines of tenant t sent with p.
func NewProcessor(p Params, t segment.Tenant) *Processor {
	pr := &Processor{p: p, tenant: t, rewrite: p.Rewrites()}
	if p.TimeField != "" {
		pr.timeKeys = []string{p.TimeField}
	} else {
		pr.timeKeys = timeparse.DefaultFields
	}
	keys := append(append([]string(nil), pr.timeKeys...), p.StreamFields...)
	if pr.rewrite {
		keys = append(keys, p.MsgFields...)
	}
	for _, k := range keys {
		pr.nested = pr.nested || strings.Contains(k, ".")
	}
	return pr
}

// BadLineError says why a line was rejected.
type BadLineError struct {
	Msg    string
	Offset int // byte offset in the line, or -1
}

func (e *BadLineError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("%s at column %d", e.Msg, e.Offset+1)
	}
	return e.Msg
}

// Process checks line (without its '\n'; a trailing '\r' is dropped) and
// returns the line to store, without its '\n' (Batch.Add adds it), and its
// time in Unix nanoseconds; now is the time for lines without one. The
// returned slice is line itself when the line is stored as received (no
// copy), else owned by the Processor; either way it is valid until the next
// call or until line changes. A bad line returns a *BadLineError. Cost: one
// validating walk of the line (two with Rewrites); no allocation once warm.
//
// A time field whose value is empty, null, "0" or "-", or a time of 0,
// counts as absent, and the line gets the ingestion time unless another
// time field has one, as in VictoriaLogs. Without Params.TimeField, such a
// value, or one that is no time, in a field other than _time (ts, time,
// ...) is an ordinary field: VictoriaLogs reads only _time then. Stored as
// received, such a line keeps its fields but a top-level _time holding
// such a value gets the time written in its place, so that queries read
// the time the line was given.
func (pr *Processor) Process(line []byte, now int64) ([]byte, int64, error) {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	sc, err := pr.scan(line, now)
	if err != nil {
		return nil, 0, err
	}
	if pr.rewrite {
		return pr.rebuild(line, sc), sc.ts, nil
	}
	if sc.timeSet {
		// Fast path: stored as received.
		return line, sc.ts, nil
	}
	out := pr.out[:0]
	if sc.nowEnd > 0 {
		// _time is there but holds no time: write the time in its place.
		out = append(out, line[:sc.nowStart]...)
		out = append(out, '"')
		out = timeparse.AppendRFC3339(out, sc.ts)
		out = append(out, '"')
		out = append(out, line[sc.nowEnd:]...)
		pr.out = out
		return out, sc.ts, nil
	}
	// No _time: it becomes the first field.
	i := bytes.IndexByte(line, '{') // the walk found an object
	out = append(out, line[:i+1]...)
	out = append(out, `"_time":"`...)
	out = timeparse.AppendRFC3339(out, sc.ts)
	out = append(out, '"')
	if rest := bytes.TrimLeft(line[i+1:], " \t\r\n"); len(rest) == 0 || rest[0] != '}' {
		out = append(out, ',')
	}
	out = append(out, line[i+1:]...)
	pr.out = out
	return out, sc.ts, nil
}

// writtenPrefix starts every line RowWriter writes for a row with a time.
const writtenPrefix = `{"_time":"`

// processWritten is Process for a line RowWriter wrote with a time, which
// is valid JSON by construction: it reads the time and the _stream from
// the first fields instead of scanning the line, and checks no more than
// that the line ends in '}'. ok is false when the line does not start or
// end as such a line does, or the Params rewrite lines: then call
// Process. Stream reports the line's _stream as after Process.
func (pr *Processor) processWritten(line []byte) (out []byte, ts int64, ok bool) {
	if pr.rewrite || !bytes.HasPrefix(line, []byte(writtenPrefix)) || line[len(line)-1] != '}' {
		return nil, 0, false
	}
	rest := line[len(writtenPrefix):]
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return nil, 0, false
	}
	if ts, ok = timeparse.Parse(bytesutil.ToUnsafeString(rest[:q])); !ok {
		return nil, 0, false
	}
	rest = rest[q+1:]
	pr.hasOwn = false
	const streamKey = `,"_stream":"`
	if bytes.HasPrefix(rest, []byte(streamKey)) {
		rest = rest[len(streamKey):]
		end := ndjson.StringEnd(rest)
		if end == len(rest) {
			return nil, 0, false
		}
		var err error
		if pr.own, err = ndjson.AppendUnescape(pr.own[:0], rest[:end]); err != nil {
			return nil, 0, false
		}
		pr.hasOwn = true
	}
	return line, ts, true
}

// Stream returns the _stream of the line Process last stored: the one it
// wrote (with Params.StreamFields), else the line's own top-level _stream
// value, else nil (the line is in the stream {}). It is valid until the
// next Process.
func (pr *Processor) Stream() []byte {
	switch {
	case len(pr.p.StreamFields) > 0:
		return pr.scratch
	case pr.hasOwn && len(pr.own) > 0:
		return pr.own
	}
	return nil
}

// scanResult is what scan found in a line.
type scanResult struct {
	ts int64 // the line's time, or now
	// timeKey is the index in Processor.timeKeys of the field that gave ts,
	// or of the most preferred one that was present without a time (it is
	// consumed when rewriting), or -1.
	timeKey int
	// timeSet: ts comes from the line, and a stored-as-received line
	// already says so (its _time, if any, is that time or a real time).
	timeSet bool
	// nowStart:nowEnd is the raw value of a top-level _time field holding
	// no time (empty, null, "0" or "-"), quotes included; nowEnd is 0 if
	// there is none.
	nowStart, nowEnd int
	// msg is the index in Params.MsgFields of the first one present with a
	// non-empty value (found when rewriting), or len(MsgFields).
	msg int
}

// scan validates line and finds its time: the value of the most preferred
// time field present with a time, or now. With Rewrites it also picks the
// stream fields.
func (pr *Processor) scan(line []byte, now int64) (scanResult, error) {
	it := &pr.it
	it.Reset(line)
	sc := scanResult{timeKey: -1, msg: len(pr.p.MsgFields)}
	findMsg := pr.rewrite && sc.msg > 0
	found := -1 // index of the time key that gave a time or an error
	emptyKey := -1
	var timeErr error
	pr.tagRefs, pr.tagBuf = pr.tagRefs[:0], pr.tagBuf[:0]
	pr.hasOwn = false
	for it.Next() {
		if !pr.nested && it.Depth() > 0 {
			continue // Fast path: a dotless name is never a nested key.
		}
		k := it.Key()
		for i := 0; i < len(pr.timeKeys) && (found < 0 || i < found); i++ {
			if string(k) != pr.timeKeys[i] {
				continue
			}
			v := it.Value()
			now := timeparse.MeansNow(v)
			t, ok := int64(0), false
			if !now {
				t, ok = timeparse.Parse(bytesutil.ToUnsafeString(v))
				now = ok && t == 0 // VictoriaLogs: 1970-01-01T00:00:00Z, "0.0"
			}
			if pr.p.TimeField == "" && i > 0 && (!ok || now) {
				// Not a time, in a field VictoriaLogs does not read as
				// the time (only _time unless named): an ordinary field.
				break
			}
			if now {
				if emptyKey < 0 || i < emptyKey {
					emptyKey = i
				}
				if sc.nowEnd == 0 && i == 0 && pr.timeKeys[0] == "_time" && it.Depth() == 0 {
					raw := it.Raw()
					sc.nowStart = cap(line) - cap(raw)
					sc.nowEnd = sc.nowStart + len(raw)
					if it.Kind() == ndjson.KindString {
						sc.nowStart--
						sc.nowEnd++
					}
				}
				break
			}
			if ok {
				sc.ts, found, timeErr = t, i, nil
			} else {
				found = i
				timeErr = &BadLineError{Msg: fmt.Sprintf("cannot parse time field %q: %q is not RFC 3339 or a Unix timestamp", pr.timeKeys[i], v), Offset: -1}
			}
			break
		}
		if findMsg {
			for i := 0; i < sc.msg; i++ {
				if string(k) == pr.p.MsgFields[i] && len(it.Value()) > 0 {
					sc.msg = i
					break
				}
			}
		}
		if len(k) == len("_stream") && string(k) == "_stream" && it.Depth() == 0 && !pr.hasOwn {
			// The line's own stream, kept unless StreamFields make one.
			pr.own = append(pr.own[:0], it.Value()...)
			pr.hasOwn = true
		}
		for _, f := range pr.p.StreamFields {
			if string(k) == f {
				if v := it.Value(); len(v) > 0 {
					off := len(pr.tagBuf)
					pr.tagBuf = append(pr.tagBuf, v...)
					pr.tagRefs = append(pr.tagRefs, tagRef{f, off, len(pr.tagBuf)})
				}
			}
		}
	}
	if err := it.Err(); err != nil {
		if se, ok := errors.AsType[*ndjson.SyntaxError](err); ok {
			return sc, &BadLineError{Msg: "invalid JSON: " + se.Msg, Offset: se.Offset}
		}
		return sc, &BadLineError{Msg: "invalid JSON: " + err.Error(), Offset: -1}
	}
	if timeErr != nil {
		return sc, timeErr
	}
	switch {
	case found >= 0:
		sc.timeKey, sc.timeSet = found, sc.nowEnd == 0
	default:
		sc.ts, sc.timeKey = now, emptyKey
	}
	return sc, nil
}

// rebuild writes the flattened line with the Params applied; line was
// validated by scan.
func (pr *Processor) rebuild(line []byte, sc scanResult) []byte {
	p := &pr.p
	// The message: the first MsgFields entry with a non-empty value, which
	// scan found.
	msgKey := ""
	if sc.msg < len(p.MsgFields) {
		msgKey = p.MsgFields[sc.msg]
	}
	out := append(pr.out[:0], `{"_time":"`...)
	out = timeparse.AppendRFC3339(out, sc.ts)
	out = append(out, '"')
	if len(p.StreamFields) > 0 {
		out = pr.appendStream(out, msgKey)
	}
	msgDone := false
	it := &pr.it
	it.Reset(line)
	for it.Next() {
		k := bytesutil.ToUnsafeString(it.Key())
		if k == "" {
			k = "_msg" // VictoriaLogs' name of a top-level empty key
		}
		switch {
		case k == "_time" || (sc.timeKey >= 0 && k == pr.timeKeys[sc.timeKey]):
			continue // replaced by the normalised _time
		case msgKey != "" && k == msgKey && !msgDone:
			k = "_msg"
			msgDone = true
		case msgKey != "" && k == "_msg":
			continue // replaced by the message field
		case len(p.StreamFields) > 0 && (k == "_stream" || k == "_stream_id"):
			continue // made anew from the stream fields
		case ignored(p.IgnoreFields, k) || p.extra(k):
			continue
		}
		out = append(out, ',')
		out = ndjson.AppendQuoted(out, k)
		out = append(out, ':')
		switch {
		case it.Kind() == ndjson.KindString && containsName(p.DecolorizeFields, k):
			out = ndjson.AppendQuoted(out, bytesutil.ToUnsafeString(stripANSI(it.Value())))
		case it.Kind() == ndjson.KindString:
			out = append(out, '"')
			out = append(out, it.Raw()...)
			out = append(out, '"')
		default:
			out = append(out, it.Raw()...)
		}
	}
	for _, f := range p.ExtraFields {
		out = append(out, ',')
		out = ndjson.AppendQuoted(out, f.Name)
		out = append(out, ':')
		out = ndjson.AppendQuoted(out, f.Value)
	}
	out = append(out, '}')
	pr.out = out
	return out
}

// appendStream appends the _stream and _stream_id fields of the line
// scan has just walked: the tags are its stream fields with non-empty
// values (every occurrence, as VictoriaLogs takes them), an extra field of
// the same name replacing them; those ignore_fields names are left out, as
// VictoriaLogs' GetLogRows leaves them out of its stream fields. The
// field that becomes _msg (the first non-empty msgKey) is not a stream
// field any more, as VictoriaLogs renames it before it builds the stream.
func (pr *Processor) appendStream(out []byte, msgKey string) []byte {
	tags := pr.tags[:0]
	for _, r := range pr.tagRefs {
		if msgKey != "" && r.name == msgKey {
			msgKey = "" // renamed _msg: this occurrence only
			continue
		}
		if !pr.p.extra(r.name) && !ignored(pr.p.IgnoreFields, r.name) {
			tags = append(tags, logstream.Tag{Name: r.name, Value: bytesutil.ToUnsafeString(pr.tagBuf[r.off:r.end])})
		}
	}
	for _, f := range pr.p.ExtraFields {
		if f.Value != "" && containsName(pr.p.StreamFields, f.Name) {
			tags = append(tags, logstream.Tag{Name: f.Name, Value: f.Value})
		}
	}
	out = appendStream(append(out, ','), tags, pr.tenant, &pr.scratch, &pr.canon)
	clear(tags)
	pr.tags = tags[:0]
	return out
}

func (p *Params) extra(name string) bool {
	for _, f := range p.ExtraFields {
		if f.Name == name {
			return true
		}
	}
	return false
}

func containsName(list []string, name string) bool {
	for _, s := range list {
		if s == name {
			return true
		}
	}
	return false
}

// stripANSI returns s without ANSI escape sequences (ESC '[' parameters and
// a final byte, and two-byte ESC sequences): s itself when it has none,
// else a new slice.
func stripANSI(s []byte) []byte {
	if bytes.IndexByte(s, 0x1b) < 0 {
		return s
	}
	out := s[:0:0]
	for i := 0; i < len(s); i++ {
		if s[i] != 0x1b {
			out = append(out, s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j // skip the final byte too
			continue
		}
		i++ // ESC and one byte
	}
	return out
}
