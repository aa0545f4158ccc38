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
	"slices"
	"strconv"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/segment"
)

// maxReportedErrors is how many bad lines a response names.
const maxReportedErrors = 10

// ingestReport is the JSON body of every ingest response.
type ingestReport struct {
	Accepted int         `json:"accepted"`
	Rejected int         `json:"rejected"`
	Errors   []lineError `json:"errors,omitempty"`
	Debug    bool        `json:"debug,omitempty"` // lines were logged, not stored
	Error    string      `json:"error,omitempty"` // why the request failed
}

// lineError names a rejected line by its 1-based number in the body.
type lineError struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
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

// reqState is the reusable memory of one ingest request.
type reqState struct {
	body  []byte
	batch ingest.Batch
	gz    *gzip.Reader
	zd    *zstd.Decoder
}

// maxPooledBytes: larger buffers are dropped after a request rather than
// pinned in the pool.
const maxPooledBytes = 4 << 20

// handleIngest serves POST /insert/jsonline and /api/v1/ingest.
func (s *Server) handleIngest(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	code, rep := s.ingest(w, r)
	if code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(int(max(1, s.cfg.RetryAfter.Round(time.Second)/time.Second))))
	}
	writeJSON(w, code, rep)
	s.m.request(r.URL.Path, code, time.Since(start))
	if rep.Rejected > 0 {
		s.log.Warn("rejected lines", "path", r.URL.Path, "remote", r.RemoteAddr,
			"accepted", rep.Accepted, "rejected", rep.Rejected, "first_line", rep.Errors[0].Line, "first_error", rep.Errors[0].Error)
	}
}

func (s *Server) ingest(w http.ResponseWriter, r *http.Request) (int, *ingestReport) {
	rep := &ingestReport{}
	fail := func(code int, format string, args ...any) (int, *ingestReport) {
		rep.Error = fmt.Sprintf(format, args...)
		return code, rep
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return fail(http.StatusMethodNotAllowed, "use POST with an NDJSON body")
	}
	if !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="spate"`)
		return fail(http.StatusUnauthorized, "missing or wrong bearer token")
	}
	if s.closing.Load() {
		return fail(http.StatusServiceUnavailable, "the server is shutting down")
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !acceptedTypes[mt] {
			return fail(http.StatusUnsupportedMediaType, "unsupported Content-Type %q: send NDJSON as application/x-ndjson (or application/json, text/plain)", ct)
		}
	}
	params, err := ingest.ParseParams(r.URL.Query(), r.Header)
	if err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}

	st, _ := s.reqPool.Get().(*reqState)
	if st == nil {
		st = &reqState{}
	}
	defer s.putReqState(st)
	var held int64
	defer func() { s.inflight.release(held) }()

	// Read the whole body first: a request is stored all or nothing.
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxRequestBytes)
	var src io.Reader = body
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		if st.gz == nil {
			st.gz = new(gzip.Reader)
		}
		if err := st.gz.Reset(body); err != nil {
			return s.readFailed(rep, err, "gzip")
		}
		src = st.gz
	case "zstd":
		if st.zd == nil {
			st.zd, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderMaxMemory(uint64(s.cfg.MaxRequestBytes)), zstd.WithDecoderMaxWindow(8<<20))
			if err != nil {
				return fail(http.StatusInternalServerError, "cannot start a zstd decoder")
			}
		}
		if err := st.zd.Reset(body); err != nil {
			return s.readFailed(rep, err, "zstd")
		}
		src = st.zd
	default:
		return fail(http.StatusUnsupportedMediaType, "unsupported Content-Encoding %q: use gzip, zstd or none", enc)
	}
	buf := st.body[:0]
	limit := s.cfg.MaxRequestBytes
	for {
		// Each body byte is held twice, as read and in the batch, and
		// counts against the in-flight budget before it is read.
		const step = 256 << 10
		if need := 2 * int64(len(buf)+step); need > held {
			if !s.inflight.tryAcquire(need - held) {
				st.body = buf
				s.m.throttled.Inc()
				return fail(http.StatusTooManyRequests, "too many bytes in flight; retry later")
			}
			held = need
		}
		buf = slices.Grow(buf, step)
		n, err := src.Read(buf[len(buf) : len(buf)+step])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			st.body = buf
			return fail(http.StatusRequestEntityTooLarge, "request body is larger than %d bytes (after decompression); split it", limit)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			st.body = buf
			return s.readFailed(rep, err, r.Header.Get("Content-Encoding"))
		}
	}
	st.body = buf
	s.m.bodyBytes.Add(float64(len(buf)))

	// Check every line.
	pr := ingest.NewProcessor(params)
	batch := &st.batch
	batch.Reset()
	now := s.cfg.Now().UnixNano()
	lineNo := 0
	for rest := buf; len(rest) > 0; {
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			line, rest = rest, nil
		}
		lineNo++
		if len(line) > s.cfg.MaxLineBytes {
			return fail(http.StatusRequestEntityTooLarge, "line %d is %d bytes, more than the limit of %d", lineNo, len(line), s.cfg.MaxLineBytes)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // empty lines are skipped, as VictoriaLogs does
		}
		out, ts, err := pr.Process(line, now)
		if err != nil {
			rep.Rejected++
			if len(rep.Errors) < maxReportedErrors {
				rep.Errors = append(rep.Errors, lineError{lineNo, err.Error()})
			}
			continue
		}
		batch.Add(out, ts)
	}
	rep.Accepted = batch.Lines
	s.m.lines.WithLabelValues("rejected").Add(float64(rep.Rejected))
	if rep.Accepted == 0 {
		if rep.Rejected == 0 {
			return fail(http.StatusBadRequest, "empty body: send NDJSON lines")
		}
		rep.Accepted = 0
		return fail(http.StatusBadRequest, "no valid lines")
	}
	if params.Debug {
		for _, g := range batch.Groups() {
			for line := range bytes.Lines(g.Lines) {
				s.log.Info("debug: would store", "day", g.Day, "line", string(bytes.TrimSuffix(line, []byte{'\n'})))
			}
		}
		rep.Debug = true
		return http.StatusOK, rep
	}

	// Store, and wait for the group commit.
	if err := s.store.Append(r.Context(), batch.Groups()); err != nil {
		accepted := rep.Accepted
		rep.Accepted = 0
		switch {
		case errors.Is(err, segment.ErrQueueFull):
			s.m.throttled.Inc()
			return fail(http.StatusTooManyRequests, "the write queue is full; retry later")
		case errors.Is(err, segment.ErrTooLarge):
			return fail(http.StatusRequestEntityTooLarge, "request is larger than the write queue")
		case errors.Is(err, segment.ErrClosed):
			return fail(http.StatusServiceUnavailable, "the server is shutting down")
		case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			// The client went away; the lines may still be written, but it
			// was not told so and will resend.
			s.log.Warn("client gone before its lines were committed", "remote", r.RemoteAddr, "lines", accepted)
			return fail(http.StatusServiceUnavailable, "request cancelled before the lines were committed")
		default:
			s.log.Error("cannot store lines", "err", err, "lines", accepted)
			return fail(http.StatusInternalServerError, "cannot store lines: internal error (see the server log)")
		}
	}
	s.m.lines.WithLabelValues("accepted").Add(float64(batch.Lines))
	s.m.storedBytes.Add(float64(batch.Bytes))
	return http.StatusOK, rep
}

// readFailed maps an error reading or decompressing a body to a response.
func (s *Server) readFailed(rep *ingestReport, err error, enc string) (int, *ingestReport) {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		rep.Error = fmt.Sprintf("request body is larger than %d bytes; split it", mbe.Limit)
		return http.StatusRequestEntityTooLarge, rep
	case errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded):
		rep.Error = fmt.Sprintf("cannot decompress zstd body: %v (the limit is %d bytes)", err, s.cfg.MaxRequestBytes)
		return http.StatusRequestEntityTooLarge, rep
	case enc != "" && enc != "identity":
		rep.Error = fmt.Sprintf("cannot decompress %s body: %v", enc, err)
		return http.StatusBadRequest, rep
	default:
		rep.Error = fmt.Sprintf("cannot read request body: %v", err)
		return http.StatusBadRequest, rep
	}
}

func (s *Server) putReqState(st *reqState) {
	if cap(st.body) > maxPooledBytes || st.batch.Cap() > maxPooledBytes {
		st.body = nil
		st.batch = ingest.Batch{}
	}
	st.body = st.body[:0]
	s.reqPool.Put(st)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, &ingestReport{Error: msg})
}
