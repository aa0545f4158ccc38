package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/spate-io/spate/internal/inflate"
	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/kafka"
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
	s.serveProtocol(w, r, &jsonlineSpec, "POST, PUT", func(code int, rep *insertReport) {
		writeJSON(w, code, rep)
	})
}

// serveProtocol runs insertWith for one request of the protocol spec
// describes and lets answer write the answer from the status and report
// (after Retry-After is set for 429 and 503, and Allow, to allow, for
// 405). The rest of a body left unread is then drained (see finishBody).
// Rejected lines are logged as a warning, failures of the server as
// errors, other client errors as warnings; 429s only count in metrics.
func (s *Server) serveProtocol(w http.ResponseWriter, r *http.Request, spec *insertSpec, allow string, answer func(code int, rep *insertReport)) {
	start := time.Now()
	s.ingesting.Add(1)
	defer s.ingesting.Add(-1)
	rc := http.NewResponseController(w)
	rc.EnableFullDuplex()
	body := &bodyReader{r: r.Body, rc: rc, idle: s.cfg.ReadTimeout}
	var rep insertReport
	code := s.insertWith(r, body, &rep, spec)
	switch code {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", s.retryAfter())
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", allow)
	}
	rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
	answer(code, &rep)
	if !body.eof {
		s.finishBody(r, rc, body)
	}
	switch {
	case code >= 500:
		s.log.Error("ingest request failed", "path", r.URL.Path, "remote", r.RemoteAddr, "code", code,
			"accepted", rep.Accepted, "lines", rep.Lines, "err", rep.Error, "duration", time.Since(start))
	case rep.Rejected > 0:
		s.log.Warn("rejected lines", "path", r.URL.Path, "remote", r.RemoteAddr, "accepted", rep.Accepted,
			"rejected", rep.Rejected, "first_line", rep.Errors[0].Line, "first_error", rep.Errors[0].Error)
	case code >= 400 && code != http.StatusTooManyRequests:
		s.log.Warn("ingest request refused", "path", r.URL.Path, "remote", r.RemoteAddr, "code", code, "err", rep.Error)
	}
}

// insertSpec says how one protocol's request bodies become NDJSON lines.
type insertSpec struct {
	// types are the accepted media types (Content-Type); an absent
	// Content-Type is always accepted, and nil accepts any (the body's
	// decoder judges it, as in VictoriaLogs). typeHint ends the 415
	// message.
	types    map[string]bool
	typeHint string
	// allErrors: Result.Errors names every rejected line.
	allErrors bool
	// emptyOK: a request without lines succeeds (a push with no
	// entries); else it is a 400.
	emptyOK bool
	// lines turns the decoded body into the NDJSON lines to store; nil:
	// the body is NDJSON. Its error is the client's (400), or an
	// *ingest.ReadError, or ingest.ErrBodyTooLarge, or ingest.ErrBusy.
	// It may change the request's parameters p for the lines it makes.
	lines func(body io.Reader, p *ingest.Params) (io.Reader, error)
}

// jsonlineSpec is /insert/jsonline's: NDJSON bodies.
var jsonlineSpec = insertSpec{types: acceptedTypes, typeHint: "send NDJSON as application/x-ndjson (or application/json, text/plain)"}

// insert reads and stores one request, filling rep, and returns the status.
func (s *Server) insert(r *http.Request, body *bodyReader, rep *insertReport) int {
	return s.insertWith(r, body, rep, &jsonlineSpec)
}

// insertWith is insert for the protocol spec describes.
func (s *Server) insertWith(r *http.Request, body *bodyReader, rep *insertReport, spec *insertSpec) int {
	fail := func(code int, format string, args ...any) int {
		rep.Error = fmt.Sprintf(format, args...)
		return code
	}
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		return fail(http.StatusMethodNotAllowed, "use POST (or PUT) with an NDJSON body")
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && spec.types != nil {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !spec.types[mt] {
			return fail(http.StatusUnsupportedMediaType, "unsupported Content-Type %q: %s", ct, spec.typeHint)
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
	if s.queueFull() {
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
	maxBytes := s.cfg.MaxRequestBytes
	var decoded *capReader // counts the decoded body when lines are made from it
	if spec.lines != nil {
		decoded = &capReader{r: src, left: math.MaxInt64}
		if maxBytes > 0 {
			decoded.left = maxBytes
			maxBytes = 0 // the lines made from the body are not capped
		}
		src = decoded
		lines, err := spec.lines(src, &params)
		if err != nil {
			ticket.Release()
			var re *ingest.ReadError
			switch {
			case errors.As(err, &re):
				return s.readFailed(rep, body, enc, re.Err)
			case errors.Is(err, ingest.ErrBodyTooLarge):
				return fail(http.StatusRequestEntityTooLarge, "request body is larger than %d bytes (after decompression); split it", s.wholeBodyLimit())
			case errors.Is(err, ingest.ErrBusy):
				s.m.throttled.Inc()
				return fail(http.StatusTooManyRequests, "%v; retry later", err)
			}
			return fail(http.StatusBadRequest, "%v", err)
		}
		if c, ok := lines.(io.Closer); ok {
			defer c.Close()
		}
		src = lines
	}
	sink := s.sink()
	if params.Debug {
		sink = debugSink{s}
		rep.Debug = true
	}
	// Not r.Context(): net/http cancels it when the client goes away or
	// stalls, and the lines read before that are still to be stored. Waits
	// for memory or queue room are bounded by the pipeline's MaxWait.
	ctx := context.WithoutCancel(r.Context())
	res := s.pipe.Ingest(ctx, ticket, &ingest.Request{Body: src, Params: params, Tenant: tenantOf(r), Sink: sink, MaxBytes: maxBytes, AllErrors: spec.allErrors})
	rep.Accepted, rep.Rejected, rep.Lines, rep.Errors = res.Accepted, res.Rejected, res.Lines, res.Errors
	if decoded != nil {
		s.m.bodyBytes.Add(float64(decoded.n))
	} else {
		s.m.bodyBytes.Add(float64(res.BodyBytes))
	}
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
	if spec.emptyOK {
		return http.StatusOK
	}
	return fail(http.StatusBadRequest, "empty body: send NDJSON lines")
}

// ingestFailed maps the error that ended a request early to a status and
// a message that says what was kept.
func (s *Server) ingestFailed(rep *insertReport, body *bodyReader, enc string, err error) int {
	kept := fmt.Sprintf("; the first %d lines were dealt with (%d stored, %d rejected)", rep.Lines, rep.Accepted, rep.Rejected)
	var ce *ingest.CheckError
	switch {
	case errors.As(err, &ce):
		// A request decoded before it was checked, refused whole: as
		// if its check had come first.
		rep.Error = ce.Err.Error()
		return http.StatusBadRequest
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
	case errors.Is(err, kafka.ErrUnavailable):
		s.m.throttled.Inc()
		rep.Error = fmt.Sprintf("Kafka did not take the lines: %v%s", err, kept)
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

// getGzip returns a gzip reader (of every member, as compress/gzip's
// Multistream) to Reset on a body. Its input buffer is 256 KiB: the
// pipeline reads decoded bodies in chunks of MiBs.
func getGzip() *inflate.Reader {
	if zr, ok := gzipPool.Get().(*inflate.Reader); ok {
		return zr
	}
	return new(inflate.Reader)
}

func putGzip(zr *inflate.Reader) {
	zr.Reset(nil)
	gzipPool.Put(zr)
}

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

// wholeSpec returns the insertSpec of a protocol whose requests are
// decoded whole (protobuf, a JSON document): the body is read with
// readWhole, decode checks it and returns the producer of its rows, which
// become the lines stored for tenant t; or, returning a check too, leaves
// the check for later (ingest.UncheckedRowReader: a request that fails it
// is refused whole, 400 with check's error). decode may change the request's
// parameters; _time_field is dropped, as rows carry their own time, and
// the rows' own stream fields lose those ignore_fields and extra_fields
// name (ingest.RowsParams), as in VictoriaLogs. A
// request without rows succeeds. Call release once the request is
// answered: it gives back the body's memory, which the rows alias.
func (s *Server) wholeSpec(t segment.Tenant, decode func(data []byte, p *ingest.Params) (rows func(emit func(*ingest.Row) error) error, check func() error, err error)) (spec insertSpec, release func()) {
	var rel func()
	release = func() {
		if rel != nil {
			rel()
		}
	}
	spec = insertSpec{
		emptyOK: true,
		lines: func(body io.Reader, p *ingest.Params) (io.Reader, error) {
			data, r, err := s.readWhole(body)
			if err != nil {
				return nil, err
			}
			rel = r
			rows, check, err := decode(data, p)
			if err != nil {
				return nil, err
			}
			p.TimeField = ""
			if check != nil {
				return ingest.UncheckedRowReader(t, ingest.RowsParams(p, rows), check), nil
			}
			return ingest.RowReader(t, ingest.RowsParams(p, rows)), nil
		},
	}
	return spec, release
}

// capReader reads at most left bytes of r, then fails with
// ingest.ErrBodyTooLarge if r has more; n counts the bytes read.
type capReader struct {
	r    io.Reader
	left int64
	n    int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		n, err := io.ReadFull(c.r, one[:])
		if n > 0 {
			return 0, ingest.ErrBodyTooLarge
		}
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	c.n += int64(n)
	return n, err
}

// defaultWholeBody caps a body that must be decoded whole (protobuf, a
// JSON document) when --max-request-size is not set: VictoriaLogs' default
// for Loki and OpenTelemetry requests.
const defaultWholeBody = 64 << 20

// wholeBodyLimit is the largest body readWhole takes.
func (s *Server) wholeBodyLimit() int64 {
	if m := s.cfg.MaxRequestBytes; m > 0 {
		return m
	}
	return defaultWholeBody
}

// readWhole reads a body that must be decoded whole into memory counted
// against --max-inflight's budget for such bodies (s.wholeMem): a body
// that finds no room fails with ingest.ErrBusy (HTTP 429), one over
// wholeBodyLimit with ingest.ErrBodyTooLarge (413). release gives the
// memory back; call it once the decoded body is no longer used.
func (s *Server) readWhole(body io.Reader) (data []byte, release func(), err error) {
	limit := s.wholeBodyLimit()
	var held int64
	release = func() {
		if held > 0 {
			s.wholeMem.Release(held)
			held = 0
		}
	}
	const step = 1 << 20
	buf := make([]byte, 0, 64<<10)
	for {
		if len(buf) == cap(buf) {
			next := min(int64(max(2*cap(buf), step)), limit+1)
			if need := next - held; need > 0 {
				if !s.wholeMem.TryAcquire(need) {
					release()
					return nil, nil, fmt.Errorf("%w: no memory for one more whole request body", ingest.ErrBusy)
				}
				held += need
			}
			buf = append(buf, make([]byte, int(next)-len(buf))...)[:len(buf)]
		}
		n, rerr := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			release()
			return nil, nil, ingest.ErrBodyTooLarge
		}
		switch {
		case rerr == io.EOF:
			return buf, release, nil
		case errors.Is(rerr, ingest.ErrBodyTooLarge):
			release()
			return nil, nil, rerr
		case rerr != nil:
			release()
			return nil, nil, &ingest.ReadError{Err: rerr}
		}
	}
}
