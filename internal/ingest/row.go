package ingest

import (
	"bufio"
	"errors"
	"io"
	"slices"
	"sync"

	"github.com/spate-io/spate/internal/bytesutil"
	"github.com/spate-io/spate/internal/logstream"
	"github.com/spate-io/spate/internal/ndjson"
	"github.com/spate-io/spate/internal/segment"
	"github.com/spate-io/spate/internal/timeparse"
)

// Row is one log record decoded from a protocol that is not NDJSON
// (Loki push, OpenTelemetry, syslog): what VictoriaLogs' LogMessageProcessor
// AddRow takes. RowWriter turns it into the NDJSON line the Pipeline
// stores, so that every protocol ends in the same validated, acknowledged
// path as /insert/jsonline.
type Row struct {
	// Time is the log time in Unix nanoseconds; 0 means none: the line gets
	// the ingestion time, as VictoriaLogs gives it.
	Time int64
	// Fields in order. Fields with empty values are left out, as
	// VictoriaLogs leaves them out. Names _time, _stream and _stream_id are
	// reserved and left out too.
	Fields []Field
	// Stream is how many of the first Fields are the row's stream fields
	// (for Loki, its labels); -1 means none of its own: the request's
	// _stream_fields, if any, decide.
	Stream int
}

// RowWriter turns Rows into the NDJSON lines the Pipeline stores. It is
// not safe for concurrent use; its zero value writes for the default
// tenant.
type RowWriter struct {
	// Tenant is the tenant whose _stream_id the lines get.
	Tenant segment.Tenant
	tags   []logstream.Tag
	// text is the _stream of the last row with stream fields; canon its
	// canonical form.
	text, canon []byte
	// The stream of the last row, kept because consecutive rows mostly
	// share one (a Loki stream's entries, an OpenTelemetry resource's
	// records): lastKey holds its non-empty stream fields as they came
	// (owned copies: a decoder may reuse its buffers), lastTenant the
	// tenant, and streamJSON the rendered `"_stream":…,"_stream_id":"…"`.
	lastKey    []byte
	lastTenant segment.Tenant
	streamJSON []byte
	hasLast    bool
	// streams keeps the rendered streams of earlier rows, for rows whose
	// stream differs from the last one's but came before (a syslog
	// connection from a relay interleaves hosts and programs): keyed by
	// the lastKey encoding of their stream fields, for tenant
	// streamsTenant. It holds at most maxStreamCacheBytes of keys and
	// values, and is emptied when a new stream would exceed that.
	streams       map[string]cachedStream
	streamsBytes  int
	streamsTenant segment.Tenant
}

// cachedStream is one entry of RowWriter.streams: the
// `"_stream":…,"_stream_id":"…"` of a stream and its _stream text.
type cachedStream struct {
	json, text []byte
}

// maxStreamCacheBytes bounds what RowWriter.streams holds, its entries'
// bytes and overhead (about 200 streams of three short fields), so that a
// server with many syslog connections keeps about 64 KiB per connection
// at most (the map's buckets, kept when it is emptied, add to that).
const maxStreamCacheBytes = 64 << 10

// streamEntryOverhead is about what a RowWriter.streams entry costs
// beyond its bytes: the map slot, the string and slice headers and the
// allocations' rounding.
const streamEntryOverhead = 112

// Append appends r as one NDJSON line (with its '\n'): _time first when
// set, then _stream and _stream_id when r.Stream >= 0 (as VictoriaLogs
// makes them from the non-empty stream fields, "{}" for none), then the
// fields as JSON strings. Cost: one pass over the fields, the stream
// fields' sort and hash only when they differ from the previous row's; no
// allocation once warm.
func (w *RowWriter) Append(dst []byte, r *Row) []byte {
	return w.appendAt(dst, r, r.Time)
}

// stream returns the _stream of the line just written for r, nil if it has
// none (r.Stream < 0). It is valid until the next Append.
func (w *RowWriter) stream(r *Row) []byte {
	if r.Stream < 0 {
		return nil
	}
	return w.text
}

// appendAt is Append with ts as the row's time (0: no _time field).
func (w *RowWriter) appendAt(dst []byte, r *Row, ts int64) []byte {
	dst = append(dst, '{')
	first := true
	if ts != 0 {
		first = false
		dst = append(dst, `"_time":"`...)
		dst = timeparse.AppendRFC3339(dst, ts)
		dst = append(dst, '"')
	}
	if r.Stream >= 0 {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, w.streamFields(r.Fields[:min(r.Stream, len(r.Fields))])...)
	}
	for _, f := range r.Fields {
		if f.Value == "" || f.Name == "" || reserved(f.Name) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendField(dst, f.Name, f.Value)
	}
	return append(dst, '}', '\n')
}

// appendField appends "name":"value", quoted as ndjson.AppendQuoted
// quotes. Fast path: both plain, one copy each into room made once.
func appendField(dst []byte, name, value string) []byte {
	if !ndjson.Plain(name) || !ndjson.Plain(value) {
		dst = ndjson.AppendQuoted(dst, name)
		dst = append(dst, ':')
		return ndjson.AppendQuoted(dst, value)
	}
	n := len(dst)
	need := len(name) + len(value) + 5
	if cap(dst)-n < need {
		dst = slices.Grow(dst, need)
	}
	dst = dst[:n+need]
	b := dst[n:]
	b[0] = '"'
	i := 1 + copy(b[1:], name)
	b[i], b[i+1], b[i+2] = '"', ':', '"'
	copy(b[i+3:], value)
	b[len(b)-1] = '"'
	return dst
}

// streamFields returns the `"_stream":…,"_stream_id":"…"` of the stream
// fields fs, from the last row's when they are the same, else from
// w.streams when an earlier row had them, else made anew (a sort, the
// text and a hash) and added to w.streams; valid until the next call.
func (w *RowWriter) streamFields(fs []Field) []byte {
	if w.hasLast && w.lastTenant == w.Tenant && w.sameStream(fs) {
		return w.streamJSON
	}
	tags := w.tags[:0]
	key := w.lastKey[:0]
	for _, f := range fs {
		if f.Value != "" && !reserved(f.Name) {
			tags = append(tags, logstream.Tag{Name: f.Name, Value: f.Value})
			key = appendKeyPart(appendKeyPart(key, f.Name), f.Value)
		}
	}
	w.lastKey, w.lastTenant, w.hasLast = key, w.Tenant, true
	if w.streamsTenant != w.Tenant {
		clear(w.streams)
		w.streamsBytes, w.streamsTenant = 0, w.Tenant
	}
	if c, ok := w.streams[bytesutil.ToUnsafeString(key)]; ok {
		clear(tags)
		w.tags = tags[:0]
		w.streamJSON = append(w.streamJSON[:0], c.json...)
		w.text = append(w.text[:0], c.text...)
		return w.streamJSON
	}
	out := appendStream(w.streamJSON[:0], tags, w.Tenant, &w.text, &w.canon)
	clear(tags)
	w.tags = tags[:0]
	w.streamJSON = out
	size := len(key) + len(out) + len(w.text) + streamEntryOverhead
	if w.streamsBytes+size > maxStreamCacheBytes {
		clear(w.streams)
		w.streamsBytes = 0
	}
	if size <= maxStreamCacheBytes {
		if w.streams == nil {
			w.streams = make(map[string]cachedStream)
		}
		w.streams[string(key)] = cachedStream{json: slices.Clone(out), text: slices.Clone(w.text)}
		w.streamsBytes += size
	}
	return out
}

// appendStream sorts tags and appends the `"_stream":…,"_stream_id":"…"`
// VictoriaLogs makes of them for tenant t to out; *text and *canon are
// set to the stream's text and canonical form (their buffers reused).
func appendStream(out []byte, tags []logstream.Tag, t segment.Tenant, text, canon *[]byte) []byte {
	logstream.Sort(tags)
	*text = logstream.AppendText((*text)[:0], tags)
	*canon = logstream.AppendCanonical((*canon)[:0], tags)
	out = append(out, `"_stream":`...)
	out = ndjson.AppendQuoted(out, bytesutil.ToUnsafeString(*text))
	out = append(out, `,"_stream_id":"`...)
	out = logstream.AppendID(out, t.AccountID, t.ProjectID, *canon)
	return append(out, '"')
}

// appendKeyPart appends s with its length before it (4 bytes, little
// endian), the encoding of RowWriter.lastKey.
func appendKeyPart(dst []byte, s string) []byte {
	n := len(s)
	return append(append(dst, byte(n), byte(n>>8), byte(n>>16), byte(n>>24)), s...)
}

// sameStream reports whether the non-empty stream fields of fs are those
// lastKey holds, in the same order.
func (w *RowWriter) sameStream(fs []Field) bool {
	key := w.lastKey
	for _, f := range fs {
		if f.Value == "" || reserved(f.Name) {
			continue
		}
		for _, s := range [2]string{f.Name, f.Value} {
			if len(key) < 4+len(s) {
				return false
			}
			n := int(key[0]) | int(key[1])<<8 | int(key[2])<<16 | int(key[3])<<24
			if n != len(s) || string(key[4:4+n]) != s {
				return false
			}
			key = key[4+n:]
		}
	}
	return len(key) == 0
}

func reserved(name string) bool {
	return name == "_time" || name == "_stream" || name == "_stream_id"
}

// RowReader returns a reader of the NDJSON lines of the rows that decode
// emits for tenant t, produced on a goroutine of its own as they are read
// (memory: one 64 KiB buffer, whatever the number of rows). decode must
// return once emit returns an error. Closing the reader stops decode (its
// emit returns io.ErrClosedPipe) and waits for it to return. A decode
// error ends the reader with that error after the lines before it.
//
// Pipeline.Ingest given such a reader as a Request's Body, before any Read,
// takes the rows from decode directly when the request's Params do not
// rewrite lines: the same lines, without the text round trip.
func RowReader(t segment.Tenant, decode func(emit func(*Row) error) error) io.ReadCloser {
	return &rowReader{t: t, decode: decode}
}

// UncheckedRowReader is RowReader for a decode that does not check the
// whole request before it emits rows, so that it may fail after some: check
// checks the whole request, and must fail exactly when decode would (with
// the error to report). Nothing of a request that fails is stored; the
// Ingest Result's error is then a *CheckError. Pipeline.Ingest taking the
// rows directly holds them back until decode has returned, and runs check
// only if the request's rows pass maxPendingChunks chunks (or memory runs
// short): a request is then walked once where RowReader's callers walk it
// twice (a check, then the rows). Read as text, the reader runs check
// before decode.
func UncheckedRowReader(t segment.Tenant, decode func(emit func(*Row) error) error, check func() error) io.ReadCloser {
	return &rowReader{t: t, decode: decode, check: check}
}

type rowReader struct {
	t      segment.Tenant
	decode func(emit func(*Row) error) error
	check  func() error // UncheckedRowReader's; nil for RowReader

	once sync.Once
	pr   *io.PipeReader
	done chan struct{}
}

// errRowsTaken is what reading a rowReader whose rows Ingest took yields.
var errRowsTaken = errors.New("BUG: the rows were taken by Ingest")

// start runs decode on its goroutine, writing the lines into a pipe.
func (rr *rowReader) start() {
	rr.once.Do(func() {
		pr, pw := io.Pipe()
		rr.pr, rr.done = pr, make(chan struct{})
		go func() {
			defer close(rr.done)
			if rr.check != nil {
				if err := rr.check(); err != nil {
					pw.CloseWithError(&CheckError{Err: err})
					return
				}
			}
			bw := bufio.NewWriterSize(pw, 64<<10)
			var line []byte
			w := RowWriter{Tenant: rr.t}
			err := rr.decode(func(r *Row) error {
				line = w.Append(line[:0], r)
				_, err := bw.Write(line)
				return err
			})
			if err == nil {
				err = bw.Flush()
			}
			pw.CloseWithError(err) // nil: io.EOF for the reader
		}()
	})
}

// takeRows returns decode, for Ingest to run itself, if no Read has
// started the goroutine yet; the reader is then spent.
func (rr *rowReader) takeRows() (func(emit func(*Row) error) error, bool) {
	took := false
	rr.once.Do(func() {
		took = true
		pr, _ := io.Pipe()
		pr.CloseWithError(errRowsTaken)
		rr.pr, rr.done = pr, closedChan
	})
	return rr.decode, took
}

func (rr *rowReader) Read(p []byte) (int, error) {
	rr.start()
	return rr.pr.Read(p)
}

func (rr *rowReader) Close() error {
	rr.once.Do(func() {
		// Never read: nothing to stop, and decode never runs.
		pr, _ := io.Pipe()
		rr.pr, rr.done = pr, closedChan
	})
	rr.pr.CloseWithError(io.ErrClosedPipe)
	<-rr.done
	return nil
}

// RowsParams returns decode with each Row changed as VictoriaLogs'
// LogRows.MustAdd treats the stream fields of a row that has its own
// (Stream >= 0: Loki labels, OpenTelemetry resource attributes): the
// fields p drops or replaces (ignore_fields, and the names of
// extra_fields) are left out of them, so that they are not in _stream.
// The Processor drops or replaces the same names among the other fields.
// It returns decode itself when p names none of these. The Rows emit gets
// are copies, valid until emit returns; decode's are left as they are.
func RowsParams(p *Params, decode func(emit func(*Row) error) error) func(emit func(*Row) error) error {
	if len(p.IgnoreFields) == 0 && len(p.ExtraFields) == 0 {
		return decode
	}
	return func(emit func(*Row) error) error {
		var row Row
		var fields []Field
		return decode(func(r *Row) error {
			if r.Stream <= 0 {
				return emit(r)
			}
			n := min(r.Stream, len(r.Fields))
			fields = fields[:0]
			for _, f := range r.Fields[:n] {
				if !ignored(p.IgnoreFields, f.Name) && !p.extra(f.Name) {
					fields = append(fields, f)
				}
			}
			stream := len(fields)
			fields = append(fields, r.Fields[n:]...)
			row = Row{Time: r.Time, Fields: fields, Stream: stream}
			return emit(&row)
		})
	}
}

// RenameMsgField returns decode with, in each Row, the first non-empty
// field after its stream fields named by the first of names that has one
// renamed "_msg": VictoriaLogs' _msg_field for OpenTelemetry
// (logstorage.RenameField over fields[streamFieldsLen:]), which never
// takes a resource attribute. It returns decode itself when names is
// empty. The Rows emit gets are copies, valid until emit returns; decode's
// are left as they are.
func RenameMsgField(names []string, decode func(emit func(*Row) error) error) func(emit func(*Row) error) error {
	if len(names) == 0 {
		return decode
	}
	return func(emit func(*Row) error) error {
		var row Row
		var fields []Field
		return decode(func(r *Row) error {
			i := msgFieldIndex(r.Fields[max(r.Stream, 0):], names)
			if i < 0 {
				return emit(r)
			}
			fields = append(fields[:0], r.Fields...)
			fields[max(r.Stream, 0)+i].Name = "_msg"
			row = Row{Time: r.Time, Fields: fields, Stream: r.Stream}
			return emit(&row)
		})
	}
}

// msgFieldIndex returns the index in fields of the first non-empty field
// named by the first of names that has one, or -1.
func msgFieldIndex(fields []Field, names []string) int {
	for _, n := range names {
		for i, f := range fields {
			if f.Name == n && f.Value != "" {
				return i
			}
		}
	}
	return -1
}
