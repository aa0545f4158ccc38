package server

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/spate-io/spate/internal/segment"
)

// serverMetrics are one Server's Prometheus metrics, in their own Set so
// that several servers (tests) do not share counters.
type serverMetrics struct {
	set           *metrics.Set
	acceptedLines *metrics.Counter
	acceptedBytes *metrics.Counter
	rejectedLines *metrics.Counter
	bodyBytes     *metrics.Counter
	throttled     *metrics.Counter
	reqDuration   *metrics.PrometheusHistogram
	batchLines    *metrics.PrometheusHistogram
	batchBytes    *metrics.PrometheusHistogram
	batchRequests *metrics.PrometheusHistogram
	writeSeconds  *metrics.PrometheusHistogram
	fsyncSeconds  *metrics.PrometheusHistogram
	writeErrors   *metrics.Counter

	mu       sync.Mutex
	requests map[string]*metrics.Counter // by path and code
}

func newServerMetrics(s *Server) *serverMetrics {
	set := metrics.NewSet()
	sizes := []float64{1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20}
	counts := []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144}
	m := &serverMetrics{
		set:           set,
		acceptedLines: set.NewCounter(`spate_ingest_lines_total{result="accepted"}`),
		rejectedLines: set.NewCounter(`spate_ingest_lines_total{result="rejected"}`),
		acceptedBytes: set.NewCounter(`spate_ingest_stored_bytes_total`),
		bodyBytes:     set.NewCounter(`spate_ingest_body_bytes_total`),
		throttled:     set.NewCounter(`spate_ingest_throttled_total`),
		reqDuration:   set.NewPrometheusHistogram(`spate_ingest_request_duration_seconds`),
		batchLines:    set.NewPrometheusHistogramExt(`spate_write_batch_lines`, counts),
		batchBytes:    set.NewPrometheusHistogramExt(`spate_write_batch_bytes`, sizes),
		batchRequests: set.NewPrometheusHistogramExt(`spate_write_batch_requests`, counts),
		writeSeconds:  set.NewPrometheusHistogram(`spate_write_seconds`),
		fsyncSeconds:  set.NewPrometheusHistogram(`spate_fsync_seconds`),
		writeErrors:   set.NewCounter(`spate_write_errors_total`),
		requests:      map[string]*metrics.Counter{},
	}
	stat := func(f func(st segment.Stats) float64) func() float64 {
		return func() float64 {
			if s.store == nil {
				return 0
			}
			return f(s.store.Stats())
		}
	}
	set.NewGauge(`spate_queue_bytes`, stat(func(st segment.Stats) float64 { return float64(st.QueueBytes) }))
	set.NewGauge(`spate_queue_requests`, stat(func(st segment.Stats) float64 { return float64(st.QueueRequests) }))
	set.NewGauge(`spate_queue_limit_bytes`, func() float64 { return float64(s.queueLimit()) })
	set.NewGauge(`spate_segments{state="active"}`, stat(func(st segment.Stats) float64 { return float64(st.ActiveSegments) }))
	set.NewGauge(`spate_segments{state="all"}`, stat(func(st segment.Stats) float64 { return float64(st.Segments) }))
	set.NewGauge(`spate_segment_bytes`, stat(func(st segment.Stats) float64 { return float64(st.SegmentBytes) }))
	set.NewGauge(`spate_compress_pending`, stat(func(st segment.Stats) float64 { return float64(st.CompressPending) }))
	set.NewGauge(`spate_inflight_bytes`, func() float64 { return float64(s.inflight.used.Load()) })
	set.NewGauge(`spate_inflight_limit_bytes`, func() float64 { return float64(s.inflight.limit) })
	return m
}

// observeBatch is the segment store's Observe hook.
func (m *serverMetrics) observeBatch(b segment.BatchInfo) {
	if b.Err != nil {
		m.writeErrors.Inc()
		return
	}
	m.batchLines.Update(float64(b.Lines))
	m.batchBytes.Update(float64(b.Bytes))
	m.batchRequests.Update(float64(b.Requests))
	m.writeSeconds.Update(b.Write.Seconds())
	if b.Sync > 0 {
		m.fsyncSeconds.Update(b.Sync.Seconds())
	}
}

// request counts one answered ingest request.
func (m *serverMetrics) request(path string, code int, d time.Duration) {
	key := fmt.Sprintf(`spate_ingest_requests_total{path=%q,code="%d"}`, path, code)
	m.mu.Lock()
	c := m.requests[key]
	if c == nil {
		c = m.set.GetOrCreateCounter(key)
		m.requests[key] = c
	}
	m.mu.Unlock()
	c.Inc()
	m.reqDuration.Update(d.Seconds())
}

// handleMetrics writes the server's metrics and the process's (RSS, page
// faults, CPU, file descriptors, Go runtime) in Prometheus text format.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.m.set.WritePrometheus(w)
	metrics.WriteProcessMetrics(w)
}
