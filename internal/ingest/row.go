package ingest

import (
	"bufio"
	"io"

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
	Tenant      segment.Tenant
	tags        []logstream.Tag
	text, canon []byte
}

// Append appends r as one NDJSON line (with its '\n'): _time first when
// set, then _stream and _stream_id when r.Stream >= 0 (as VictoriaLogs
// makes them from the non-empty stream fields, "{}" for none), then the
// fields as JSON strings. Cost: one pass over the fields; no allocation
// once warm.
func (w *RowWriter) Append(dst []byte, r *Row) []byte {
	dst = append(dst, '{')
	first := true
	sep := func() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
	}
	if r.Time != 0 {
		sep()
		dst = append(dst, `"_time":"`...)
		dst = timeparse.AppendRFC3339(dst, r.Time)
		dst = append(dst, '"')
	}
	if r.Stream >= 0 {
		tags := w.tags[:0]
		for _, f := range r.Fields[:min(r.Stream, len(r.Fields))] {
			if f.Value != "" && !reserved(f.Name) {
				tags = append(tags, logstream.Tag{Name: f.Name, Value: f.Value})
			}
		}
		logstream.Sort(tags)
		w.text = logstream.AppendText(w.text[:0], tags)
		w.canon = logstream.AppendCanonical(w.canon[:0], tags)
		sep()
		dst = append(dst, `"_stream":`...)
		dst = ndjson.AppendQuoted(dst, bytesutil.ToUnsafeString(w.text))
		dst = append(dst, `,"_stream_id":"`...)
		dst = logstream.AppendID(dst, w.Tenant.AccountID, w.Tenant.ProjectID, w.canon)
		dst = append(dst, '"')
		clear(tags)
		w.tags = tags[:0]
	}
	for _, f := range r.Fields {
		if f.Value == "" || f.Name == "" || reserved(f.Name) {
			continue
		}
		sep()
		dst = ndjson.AppendQuoted(dst, f.Name)
		dst = append(dst, ':')
		dst = ndjson.AppendQuoted(dst, f.Value)
	}
	return append(dst, '}', '\n')
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
func RowReader(t segment.Tenant, decode func(emit func(*Row) error) error) io.ReadCloser {
	pr, pw := io.Pipe()
	rr := &rowReader{pr: pr, done: make(chan struct{})}
	go func() {
		defer close(rr.done)
		bw := bufio.NewWriterSize(pw, 64<<10)
		var line []byte
		w := RowWriter{Tenant: t}
		err := decode(func(r *Row) error {
			line = w.Append(line[:0], r)
			_, err := bw.Write(line)
			return err
		})
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err) // nil: io.EOF for the reader
	}()
	return rr
}

type rowReader struct {
	pr   *io.PipeReader
	done chan struct{}
}

func (r *rowReader) Read(p []byte) (int, error) { return r.pr.Read(p) }

func (r *rowReader) Close() error {
	r.pr.CloseWithError(io.ErrClosedPipe)
	<-r.done
	return nil
}
