package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/segment"
)

// insertReport is the JSON body of every ingest answer.
type insertReport struct {
	Accepted int64              `json:"accepted"`
	Rejected int64              `json:"rejected"`
	Lines    int64              `json:"lines"` // lines of the body dealt with, from the first
	Errors   []ingest.LineError `json:"errors,omitempty"`
	Debug    bool               `json:"debug,omitempty"` // lines were logged, not stored
	Error    string             `json:"error,omitempty"` // why the request failed or stopped early
}

// acceptedTypes are the request Content-Types taken as NDJSON. curl's
// default for --data-binary (x-www-form-urlencoded) is among them so that
// `curl --data-binary @file` works.
var acceptedTypes = map[string]bool{
	"":                                  true,
	"application/json":                  true,
	"application/x-ndjson":              true,
	"application/ndjson":                true,
	"application/jsonl":                 true,
	"application/x-jsonlines":           true,
	"application/jsonlines":             true,
	"application/stream+json":           true,
	"text/plain":                        true,
	"application/octet-stream":          true,
	"application/x-www-form-urlencoded": true,
}

// Bounds of the read-and-discard after an early answer (see finishBody).
const (
	drainMaxBytes = 128 << 20
	drainMaxTime  = 10 * time.Second
)

// handleInsert serves POST (and PUT, for curl -T) /insert/jsonline and
// /api/v1/ingest: it streams the body through the ingest pipeline into the
// store and answers with an insertReport. An answer given before the body
// is read to its end (429, 4xx) is flushed first, then the rest of the body
// is read and discarded, up to a bound, so that clients that send the whole
// body before reading (most do) see the answer instead of a reset.
func (s *Server) handleInsert(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	s.ingesting.Add(1)
	defer s.ingesting.Add(-1)
	rc := http.NewResponseController(w)
	rc.EnableFullDuplex()
	body := &bodyReader{r: r.Body, rc: rc, idle: s.cfg.ReadTimeout}
	var rep insertReport
	code := s.insert(r, body, &rep)
	switch code {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", s.retryAfter())
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", "POST, PUT")
	}
	rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
	writeJSON(w, code, &rep)
	if !body.eof {
		s.finishBody(r, rc, body)
	}
	if rep.Rejected > 0 {
		s.log.Warn("rejected lines", "path", r.URL.Path, "remote", r.RemoteAddr, "accepted", rep.Accepted,
			"rejected", rep.Rejected, "first_line", rep.Errors[0].Line, "first_error", rep.Errors[0].Error)
	}
	if code >= 500 {
		s.log.Error("ingest request failed", "path", r.URL.Path, "remote", r.RemoteAddr, "code", code,
			"accepted", rep.Accepted, "lines", rep.Lines, "err", rep.Error, "duration", time.Since(start))
	}
}

// insert reads and stores one request, filling rep, and returns the status.
func (s *Server) insert(r *http.Request, body *bodyReader, rep *insertReport) int {
	fail := func(code int, format string, args ...any) int {
		rep.Error = fmt.Sprintf(format, args...)
		return code
	}
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		return fail(http.StatusMethodNotAllowed, "use POST (or PUT) with an NDJSON body")
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !acceptedTypes[mt] {
			return fail(http.StatusUnsupportedMediaType, "unsupported Content-Type %q: send NDJSON as application/x-ndjson (or application/json, text/plain)", ct)
		}
	}
	enc := r.Header.Get("Content-Encoding")
	switch enc {
	case "", "identity", "gzip", "x-gzip", "zstd":
	default:
		return fail(http.StatusUnsupportedMediaType, "unsupported Content-Encoding %q: use gzip, zstd or none", enc)
	}
	params, err := ingest.ParseParams(r.URL.Query(), r.Header)
	if err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}
	// Decide before reading the body where the headers allow it.
	size := int64(-1)
	if enc == "" || enc == "identity" {
		size = r.ContentLength
	}
	if m := s.cfg.MaxRequestBytes; m > 0 && size > m {
		return fail(http.StatusRequestEntityTooLarge, "request body is %d bytes, more than --max-request-size=%d; split it", size, m)
	}
	if st := s.store.Stats(); st.QueueBytes >= s.cfg.Segment.MaxQueueBytes {
		s.m.throttled.Inc()
		return fail(http.StatusTooManyRequests, "the write queue is full; retry later")
	}
	ticket, ok := s.pipe.Admit(size)
	if !ok {
		s.m.throttled.Inc()
		return fail(http.StatusTooManyRequests, "too many bytes in flight; retry later")
	}

	var src io.Reader = body
	switch enc {
	case "gzip", "x-gzip":
		zr := getGzip()
		defer putGzip(zr)
		if err := zr.Reset(body); err != nil {
			ticket.Release()
			return s.readFailed(rep, body, enc, err)
		}
		zr.Multistream(true)
		src = zr
	case "zstd":
		zr, err := getZstd()
		if err != nil {
			ticket.Release()
			return fail(http.StatusInternalServerError, "cannot start a zstd decoder")
		}
		defer putZstd(zr)
		if err := zr.Reset(body); err != nil {
			ticket.Release()
			return s.readFailed(rep, body, enc, err)
		}
		src = zr
	}
	var sink ingest.Sink = ingest.StoreSink{Store: s.store}
	if params.Debug {
		sink = debugSink{s}
		rep.Debug = true
	}
	// Not r.Context(): net/http cancels it when the client goes away or
	// stalls, and the lines read before that are still to be stored. Waits
	// for memory or queue room are bounded by the pipeline's MaxWait.
	ctx := context.WithoutCancel(r.Context())
	res := s.pipe.Ingest(ctx, ticket, &ingest.Request{Body: src, Params: params, Tenant: tenantOf(r), Sink: sink, MaxBytes: s.cfg.MaxRequestBytes})
	rep.Accepted, rep.Rejected, rep.Lines, rep.Errors = res.Accepted, res.Rejected, res.Lines, res.Errors
	s.m.bodyBytes.Add(float64(res.BodyBytes))
	s.m.lines.WithLabelValues("rejected").Add(float64(res.Rejected))
	if !params.Debug {
		s.m.lines.WithLabelValues("accepted").Add(float64(res.Accepted))
		s.m.storedBytes.Add(float64(res.StoredBytes))
	}
	if res.Err != nil {
		return s.ingestFailed(rep, body, enc, res.Err)
	}
	switch {
	case rep.Accepted > 0:
		return http.StatusOK
	case rep.Rejected > 0:
		return fail(http.StatusBadRequest, "no valid lines")
	}
	return fail(http.StatusBadRequest, "empty body: send NDJSON lines")
}

// ingestFailed maps the error that ended a request early to a status and
// a message that says what was kept.
func (s *Server) ingestFailed(rep *insertReport, body *bodyReader, enc string, err error) int {
	kept := fmt.Sprintf("; the first %d lines were dealt with (%d stored, %d rejected)", rep.Lines, rep.Accepted, rep.Rejected)
	switch {
	case errors.Is(err, ingest.ErrBodyTooLarge):
		rep.Error = fmt.Sprintf("request body is larger than --max-request-size=%d bytes (after decompression)%s", s.cfg.MaxRequestBytes, kept)
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ingest.ErrRead):
		var re *ingest.ReadError
		errors.As(err, &re)
		code := s.readFailed(rep, body, enc, re.Err)
		rep.Error += kept
		return code
	case errors.Is(err, ingest.ErrBusy):
		s.m.throttled.Inc()
		rep.Error = fmt.Sprintf("the server is overloaded: %v%s", err, kept)
		if rep.Lines == 0 && rep.Accepted == 0 {
			return http.StatusTooManyRequests
		}
		return http.StatusServiceUnavailable
	case errors.Is(err, segment.ErrClosed) || errors.Is(err, ingest.ErrClosed):
		rep.Error = "the server is shutting down" + kept
		return http.StatusServiceUnavailable
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		rep.Error = "request cancelled" + kept
		return http.StatusServiceUnavailable
	}
	s.log.Error("cannot store lines", "err", err)
	rep.Error = "cannot store lines: internal error (see the server log)" + kept
	return http.StatusInternalServerError
}

// readFailed maps an error reading or decompressing a body to a status:
// err is the body reader's own error, or the decompressor's.
func (s *Server) readFailed(rep *insertReport, body *bodyReader, enc string, err error) int {
	switch {
	case body.err != nil && errors.Is(err, body.err) && errors.Is(body.err, os.ErrDeadlineExceeded):
		rep.Error = fmt.Sprintf("the client sent nothing for --read-timeout=%v", s.cfg.ReadTimeout)
		return http.StatusRequestTimeout
	case body.err != nil && errors.Is(err, body.err):
		rep.Error = fmt.Sprintf("cannot read request body: %v", err)
		return http.StatusBadRequest
	case errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded):
		rep.Error = fmt.Sprintf("cannot decompress zstd body: %v (windows of at most 8 MiB)", err)
		return http.StatusRequestEntityTooLarge
	case enc != "" && enc != "identity":
		rep.Error = fmt.Sprintf("cannot decompress %s body: %v", enc, err)
		return http.StatusBadRequest
	}
	rep.Error = fmt.Sprintf("cannot read request body: %v", err)
	return http.StatusBadRequest
}

// finishBody deals with the unread rest of a body once the answer is
// written. A client that sent "Expect: 100-continue" and was never told to
// continue has sent no body: the connection just closes. Otherwise the
// answer is flushed, so that the client can read it, and the rest of the
// body is read and discarded, for at most drainMaxBytes and drainMaxTime,
// as nginx's lingering close does: a client that sends its whole body
// before it reads sees the answer, and the connection stays usable when
// the body ends within the bounds. Past them the connection is closed.
func (s *Server) finishBody(r *http.Request, rc *http.ResponseController, body *bodyReader) {
	if body.n == 0 && r.Header.Get("Expect") == "100-continue" {
		return
	}
	if err := rc.Flush(); err != nil {
		return
	}
	rc.SetReadDeadline(time.Now().Add(drainMaxTime))
	n, _ := io.Copy(io.Discard, io.LimitReader(r.Body, drainMaxBytes))
	s.m.drainedBytes.Add(float64(n))
}

// bodyReader reads a request body with an idle timeout: before a read, the
// connection's read deadline moves to idle from now (when a quarter of it
// has passed since it last moved, to keep the cost off the hot path). It
// records the wire bytes read, whether the body ended, and its own error.
type bodyReader struct {
	r    io.Reader
	rc   *http.ResponseController
	idle time.Duration
	set  time.Time // when the deadline last moved
	n    int64
	eof  bool
	err  error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.idle > 0 {
		if now := time.Now(); now.Sub(b.set) > b.idle/4 {
			b.rc.SetReadDeadline(now.Add(b.idle))
			b.set = now
		}
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	switch {
	case err == io.EOF:
		b.eof = true
	case err != nil:
		b.err = err
	}
	return n, err
}

// debugSink logs the lines it is given instead of storing them (the debug
// parameter).
type debugSink struct{ s *Server }

func (d debugSink) Enqueue(_ context.Context, groups []segment.Group) (ingest.Ack, error) {
	for _, g := range groups {
		for line := range bytes.Lines(g.Lines) {
			d.s.log.Info("debug: would store", "day", g.Day, "line", string(bytes.TrimSuffix(line, []byte{'\n'})))
		}
	}
	return doneAck{}, nil
}

type doneAck struct{}

func (doneAck) Wait(context.Context) error { return nil }
func (doneAck) Done() bool                 { return true }

// Pools of decompressors; see getGzip and getZstd.
var gzipPool, zstdPool sync.Pool

func getGzip() *gzip.Reader {
	if zr, ok := gzipPool.Get().(*gzip.Reader); ok {
		return zr
	}
	return new(gzip.Reader)
}

func putGzip(zr *gzip.Reader) { gzipPool.Put(zr) }

// getZstd returns a streaming zstd decoder that decodes on one goroutine
// with windows of at most 8 MiB, so that its memory is bounded.
func getZstd() (*zstd.Decoder, error) {
	if zr, ok := zstdPool.Get().(*zstd.Decoder); ok {
		return zr, nil
	}
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(8<<20), zstd.WithDecoderLowmem(true))
}

func putZstd(zr *zstd.Decoder) {
	zr.Reset(nil)
	zstdPool.Put(zr)
}

func (s *Server) retryAfter() string {
	return strconv.Itoa(int(max(1, s.cfg.RetryAfter.Round(time.Second)/time.Second)))
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, &insertReport{Error: msg})
}
