package server

import (
	"bytes"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/segment"
)

// serverMetrics are one Server's Prometheus metrics, in their own registry
// so that several servers (tests) do not share counters. All methods are
// safe for concurrent use.
type serverMetrics struct {
	reg           *prometheus.Registry
	handler       http.Handler
	lines         *prometheus.CounterVec // by result
	storedBytes   prometheus.Counter
	bodyBytes     prometheus.Counter
	throttled     prometheus.Counter
	drainedBytes  prometheus.Counter
	requests      *prometheus.CounterVec   // by path and code
	reqDuration   *prometheus.HistogramVec // by path
	batchLines    prometheus.Histogram
	batchBytes    prometheus.Histogram
	batchRequests prometheus.Histogram
	writeSeconds  prometheus.Histogram
	fsyncSeconds  prometheus.Histogram
	writeErrors   prometheus.Counter
	queryQueued   prometheus.Counter
	queryBytes    prometheus.Counter
	queryLines    prometheus.Counter
	tailDropped   prometheus.Counter
	queryPaced    prometheus.Counter
	// queryBlocks counts blocks of indexed segments by how queries read
	// them: columns, lines, skipped_time, skipped_tokens, fallback.
	queryBlocks *prometheus.CounterVec
	files       *filesMetrics

	uploadsFinished prometheus.Counter
	uploadsBytes    prometheus.Counter
	uploadsExpired  prometheus.Counter
}

func newServerMetrics(s *Server) *serverMetrics {
	reg := prometheus.NewRegistry()
	f := promauto{reg}
	counts := prometheus.ExponentialBuckets(1, 4, 10)         // 1 .. 262144
	sizes := prometheus.ExponentialBuckets(1024, 4, 9)        // 1 KiB .. 64 MiB
	seconds := prometheus.ExponentialBuckets(0.0001, 2.5, 14) // 100µs .. ~15s
	m := &serverMetrics{
		reg:           reg,
		lines:         f.counterVec("spate_ingest_lines_total", "Lines received by result: accepted (stored) or rejected (bad).", "result"),
		storedBytes:   f.counter("spate_ingest_stored_bytes_total", "Bytes of lines stored, as written to segments."),
		bodyBytes:     f.counter("spate_ingest_body_bytes_total", "Bytes of request bodies read, after decompression."),
		throttled:     f.counter("spate_ingest_throttled_total", "Requests answered 429 or 503 because the queue or the in-flight memory was full."),
		drainedBytes:  f.counter("spate_ingest_drained_bytes_total", "Body bytes read and discarded after an early answer (429, 4xx), so that clients can read it."),
		requests:      f.counterVec("spate_http_requests_total", "API requests by path and status code.", "path", "code"),
		reqDuration:   f.histogramVec("spate_http_request_duration_seconds", "Time from a request's start to its answer's status, by path.", seconds, "path"),
		batchLines:    f.histogram("spate_write_batch_lines", "Lines per group-commit batch.", counts),
		batchBytes:    f.histogram("spate_write_batch_bytes", "Bytes per group-commit batch.", sizes),
		batchRequests: f.histogram("spate_write_batch_requests", "Requests per group-commit batch.", counts),
		writeSeconds:  f.histogram("spate_write_seconds", "Time in write(2) per batch.", seconds),
		fsyncSeconds:  f.histogram("spate_fsync_seconds", "Time in fsync per batch (--fsync batch).", seconds),
		writeErrors:   f.counter("spate_write_errors_total", "Batches that failed to write or fsync."),
		queryQueued:   f.counter("spate_select_queued_total", "Queries that waited for a free slot (--max-concurrent-queries)."),
		queryBytes:    f.counter("spate_select_read_bytes_total", "Bytes of segments read by queries."),
		queryLines:    f.counter("spate_select_matched_rows_total", "Log lines that matched the filters of queries."),
		tailDropped:   f.counter("spate_select_tail_dropped_total", "Live tails ended because their client stopped reading or went away."),
		queryPaced:    f.counter("spate_select_paced_seconds_total", "Time queries waited so that ingestion keeps the CPUs (--query-share)."),
		queryBlocks: f.counterVec("spate_select_index_blocks_total",
			"Blocks of segments with a sidecar index, by how queries read them: from hot columns, from their lines, skipped by time range, by numeric ranges or streams (values) or by token blooms, or from lines because their columns could not be read (fallback).", "how"),
	}
	m.files = newFilesMetrics(f, seconds)
	m.uploadsFinished = f.counter("spate_uploads_finished_total", "tus uploads completed and moved to the files directory.")
	m.uploadsBytes = f.counter("spate_uploads_finished_bytes_total", "Bytes of the tus uploads completed.")
	m.uploadsExpired = f.counter("spate_uploads_expired_total", "Unfinished tus uploads deleted after --uploads-expire without data.")
	stat := func(name, help string, v func(st segment.Stats) float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			if s.store == nil {
				return 0
			}
			return v(s.store.Stats())
		}))
	}
	stat("spate_queue_bytes", "Bytes accepted and not yet written.", func(st segment.Stats) float64 { return float64(st.QueueBytes) })
	stat("spate_queue_requests", "Requests waiting for the writer.", func(st segment.Stats) float64 { return float64(st.QueueRequests) })
	stat("spate_segments_active", "Segments open for writing.", func(st segment.Stats) float64 { return float64(st.ActiveSegments) })
	stat("spate_segments", "Segment files in the data directory.", func(st segment.Stats) float64 { return float64(st.Segments) })
	stat("spate_segment_bytes", "Bytes of segment files (compressed size for sealed ones).", func(st segment.Stats) float64 { return float64(st.SegmentBytes) })
	stat("spate_compress_pending", "Sealed segments waiting for compression.", func(st segment.Stats) float64 { return float64(st.CompressPending) })
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "spate_queue_limit_bytes", Help: "The queue bound (--max-queue)."},
			func() float64 { return float64(s.cfg.Segment.MaxQueueBytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "spate_select_running", Help: "Queries running now."},
			func() float64 { return float64(len(s.querySlots)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "spate_select_limit", Help: "Queries that may run at once (--max-concurrent-queries)."},
			func() float64 { return float64(cap(s.querySlots)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "spate_select_share_while_ingesting", Help: "Share of the CPUs queries may use while a request is being ingested (--query-share)."},
			func() float64 { return min(s.cfg.QueryShare, 1) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "spate_inflight_bytes", Help: "Memory reserved by request chunks being read, checked and queued."},
			func() float64 { return float64(s.pipe.MemoryUsed()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "spate_inflight_limit_bytes", Help: "The in-flight bound (--max-inflight)."},
			func() float64 { return float64(s.pipe.Config().MemoryBytes) }),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(),
		pageFaults{
			minor: prometheus.NewDesc("process_minor_pagefaults_total", "Page faults served without I/O (/proc/self/stat minflt).", nil, nil),
			major: prometheus.NewDesc("process_major_pagefaults_total", "Page faults that needed I/O (/proc/self/stat majflt).", nil, nil),
		},
	)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slogPrinter{s}})
	return m
}

// promauto registers metrics as it makes them.
type promauto struct{ reg *prometheus.Registry }

func (p promauto) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	p.reg.MustRegister(c)
	return c
}

func (p promauto) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	p.reg.MustRegister(c)
	return c
}

func (p promauto) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	p.reg.MustRegister(h)
	return h
}

func (p promauto) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	p.reg.MustRegister(h)
	return h
}

// observeBatch is the segment store's Observe hook.
func (m *serverMetrics) observeBatch(b segment.BatchInfo) {
	if b.Err != nil {
		m.writeErrors.Inc()
		return
	}
	m.batchLines.Observe(float64(b.Lines))
	m.batchBytes.Observe(float64(b.Bytes))
	m.batchRequests.Observe(float64(b.Requests))
	m.writeSeconds.Observe(b.Write.Seconds())
	if b.Sync > 0 {
		m.fsyncSeconds.Observe(b.Sync.Seconds())
	}
}

// request counts one answered API request.
// pathMetrics are one route's request metrics, with the labels of the
// common answer resolved once.
type pathMetrics struct {
	m        *serverMetrics
	path     string
	ok       prometheus.Counter  // requests{path,200}
	duration prometheus.Observer // request_duration{path}
}

func (m *serverMetrics) pathMetrics(path string) *pathMetrics {
	return &pathMetrics{m: m, path: path, ok: m.requests.WithLabelValues(path, "200"), duration: m.reqDuration.WithLabelValues(path)}
}

func (p *pathMetrics) request(code int, d time.Duration) {
	if code == http.StatusOK {
		p.ok.Inc()
	} else {
		p.m.requests.WithLabelValues(p.path, strconv.Itoa(code)).Inc()
	}
	p.duration.Observe(d.Seconds())
}

// handleMetrics writes the server's metrics and the process's (RSS, CPU,
// page faults, file descriptors, Go runtime) in Prometheus text format.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	s.m.handler.ServeHTTP(w, r)
}

// pageFaults collects the process's page faults, which the standard
// process collector lacks; they show mmap and page-cache effects.
type pageFaults struct{ minor, major *prometheus.Desc }

func (p pageFaults) Describe(ch chan<- *prometheus.Desc) { ch <- p.minor; ch <- p.major }

func (p pageFaults) Collect(ch chan<- prometheus.Metric) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return // not Linux: no such metric
	}
	// Fields after the parenthesised command name: state is field 3,
	// minflt field 10, majflt field 12 (proc(5)).
	if i := bytes.LastIndexByte(data, ')'); i >= 0 {
		f := bytes.Fields(data[i+1:])
		if len(f) > 9 {
			minflt, _ := strconv.ParseFloat(string(f[7]), 64)
			majflt, _ := strconv.ParseFloat(string(f[9]), 64)
			ch <- prometheus.MustNewConstMetric(p.minor, prometheus.CounterValue, minflt)
			ch <- prometheus.MustNewConstMetric(p.major, prometheus.CounterValue, majflt)
		}
	}
}

// slogPrinter sends promhttp's errors to the server log.
type slogPrinter struct{ s *Server }

func (p slogPrinter) Println(v ...any) { p.s.log.Error("metrics", "err", v) }

// queryDone counts a finished query's work.
func (m *serverMetrics) queryDone(st query.Stats) {
	m.queryBytes.Add(float64(st.Bytes))
	m.queryLines.Add(float64(st.Matched))
	for how, n := range map[string]int64{"columns": st.ColumnBlocks, "lines": st.LineBlocks, "skipped_time": st.SkippedBlocks,
		"skipped_tokens": st.TokenSkippedBlocks, "skipped_values": st.ValueSkippedBlocks, "fallback": st.ColumnFallbacks} {
		if n > 0 {
			m.queryBlocks.WithLabelValues(how).Add(float64(n))
		}
	}
}
