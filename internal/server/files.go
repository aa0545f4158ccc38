package server

import (
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The file service's metrics, around fileserve.

// filesMetrics are the /files/ and /data/ counters.
type filesMetrics struct {
	requests    *prometheus.CounterVec // by method and code
	sent        *prometheus.CounterVec // body bytes by Content-Encoding
	ranges      prometheus.Counter
	notModified prometheus.Counter
	active      prometheus.Gauge
	seconds     prometheus.Histogram

	getOK        prometheus.Counter // requests{GET,200}
	sentIdentity prometheus.Counter // sent{identity}
}

func newFilesMetrics(f promauto, seconds []float64) *filesMetrics {
	m := &filesMetrics{
		requests:    f.counterVec("spate_files_requests_total", "File requests (/files/, /data/) by method and status code.", "method", "code"),
		sent:        f.counterVec("spate_files_sent_bytes_total", "Body bytes of file answers by Content-Encoding (identity, zstd, br, gzip).", "encoding"),
		ranges:      f.counter("spate_files_range_requests_total", "File answers with a range (206)."),
		notModified: f.counter("spate_files_not_modified_total", "File answers 304 Not Modified."),
		active:      prometheus.NewGauge(prometheus.GaugeOpts{Name: "spate_files_active", Help: "File answers being sent now."}),
		seconds:     f.histogram("spate_files_duration_seconds", "Time from a file request to the end of its answer.", seconds),
	}
	f.reg.MustRegister(m.active)
	m.getOK = m.requests.WithLabelValues(http.MethodGet, "200")
	m.sentIdentity = m.sent.WithLabelValues("identity")
	return m
}

// countFiles wraps a file handler with the file metrics.
func (s *Server) countFiles(h http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m := s.m.files
		m.active.Inc()
		defer m.active.Dec()
		start := time.Now()
		cw := &countWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: filesWriteTimeout}
		h.ServeHTTP(cw, r)
		code := cw.code
		if code == 0 {
			code = http.StatusOK
		}
		if code == http.StatusOK && r.Method == http.MethodGet {
			m.getOK.Inc() // the common case, without a label lookup
		} else {
			m.requests.WithLabelValues(r.Method, strconv.Itoa(code)).Inc()
		}
		if enc := w.Header()["Content-Encoding"]; len(enc) > 0 {
			m.sent.WithLabelValues(enc[0]).Add(float64(cw.n))
		} else {
			m.sentIdentity.Add(float64(cw.n))
		}
		switch code {
		case http.StatusPartialContent:
			m.ranges.Inc()
		case http.StatusNotModified:
			m.notModified.Inc()
		}
		m.seconds.Observe(time.Since(start).Seconds())
	}
}

// filesWriteTimeout is how long a file answer may wait for its client to
// take the next piece (a Write, or sendfile's next 4 MiB) before the
// connection is closed: a client that stalls frees its goroutine, and a
// slow one that keeps reading is never cut. A variable for tests.
var filesWriteTimeout = 30 * time.Second

// sendfileChunk is how much one sendfile call may send before the write
// deadline is moved on.
const sendfileChunk = 4 << 20

// countWriter counts the body bytes of an answer and keeps its status;
// ReadFrom passes through, so that sendfile still works. Each write (each
// sendfileChunk of a ReadFrom) gets timeout to complete.
type countWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	code    int
	n       int64
}

func (w *countWriter) deadline() {
	w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
}

func (w *countWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *countWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.deadline()
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

// ReadFrom sends r, a file or a file cut to a length (what
// http.ServeContent passes), in sendfileChunk pieces, each under its own
// deadline; every piece is a file behind at most one io.LimitedReader, the
// shape net/http hands to sendfile(2).
func (w *countWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	src, left := r, int64(-1)
	if lr, ok := r.(*io.LimitedReader); ok {
		src, left = lr.R, lr.N
	}
	var total int64
	for left != 0 {
		piece := int64(sendfileChunk)
		if left > 0 {
			piece = min(piece, left)
		}
		w.deadline()
		n, err := io.Copy(w.ResponseWriter, &io.LimitedReader{R: src, N: piece})
		total += n
		w.n += n
		if left > 0 {
			left -= n
		}
		if err != nil || n < piece {
			if lr, ok := r.(*io.LimitedReader); ok {
				lr.N -= total
			}
			return total, err
		}
	}
	if lr, ok := r.(*io.LimitedReader); ok {
		lr.N -= total
	}
	return total, nil
}

func (w *countWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
