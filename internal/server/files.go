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
	return m
}

// countFiles wraps a file handler with the file metrics.
func (s *Server) countFiles(h http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m := s.m.files
		m.active.Inc()
		defer m.active.Dec()
		start := time.Now()
		cw := &countWriter{ResponseWriter: w}
		h.ServeHTTP(cw, r)
		code := cw.code
		if code == 0 {
			code = http.StatusOK
		}
		m.requests.WithLabelValues(r.Method, strconv.Itoa(code)).Inc()
		enc := w.Header().Get("Content-Encoding")
		if enc == "" {
			enc = "identity"
		}
		m.sent.WithLabelValues(enc).Add(float64(cw.n))
		switch code {
		case http.StatusPartialContent:
			m.ranges.Inc()
		case http.StatusNotModified:
			m.notModified.Inc()
		}
		m.seconds.Observe(time.Since(start).Seconds())
	}
}

// countWriter counts the body bytes of an answer and keeps its status;
// ReadFrom passes through, so that sendfile still works.
type countWriter struct {
	http.ResponseWriter
	code int
	n    int64
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
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *countWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	n, err := io.Copy(w.ResponseWriter, r)
	w.n += n
	return n, err
}

func (w *countWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
