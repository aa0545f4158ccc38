// Package server is `spate serve`: an HTTP server that ingests NDJSON logs
// into durable segment files (internal/segment) through the ingest
// pipeline (internal/ingest), with backpressure, Prometheus metrics, health
// checks and pprof on an admin listener.
//
// Contract: a 200 from an ingest endpoint means the whole body was read and
// every line it counts as accepted is stored (and, with segment.SyncBatch,
// fsynced). Any other status says in its JSON body how many lines were
// stored: a request is taken in chunks, so a body cut short (a client that
// goes away, a line past --max-request-size, a storage failure) keeps the
// lines of its first chunks. A 429 is decided before any of the body is
// read, so it stores nothing. Memory is bounded by
// ingest.Config.MemoryBytes (chunks being read and checked) plus the segment
// queue (segment.Options.MaxQueueBytes); a request that cannot get room for
// its first chunk gets 429 with Retry-After, and the rest of its body is
// read and discarded (up to a bound) so that the client can read the answer.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"

	"github.com/spate-io/spate/internal/fileserve"
	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/kafka"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/segment"
	"github.com/spate-io/spate/internal/ui"
)

// Config configures a Server. Zero fields mean the defaults.
type Config struct {
	// DataDir holds the segment files. Without it the server has no
	// /insert and /select endpoints, and FilesDir is required.
	DataDir string
	// FilesDir, if set, is served read-only at /files/ (see fileserve),
	// with Files' options.
	FilesDir string
	Files    fileserve.Options
	// NoIndex writes no sidecar indexes beside compressed segments (see
	// package segindex); queries then read every segment's lines. Sidecars
	// already written are still used while they match their segments.
	NoIndex bool
	// FilesData serves DataDir itself, read-only, at /data/ (the raw
	// segments, by tenant and day; metadata and lock files are hidden as
	// dotfiles). It holds every tenant's logs: tokens bound to a tenant
	// get 403 there.
	FilesData bool
	// Uploads takes tus resumable uploads at /uploads/ into FilesDir (see
	// uploads.go); UploadsMaxSize caps one upload (0: no cap; more gets
	// 413); UploadsOverwrite lets a finished upload replace a file.
	// UploadsExpire deletes an unfinished upload that received nothing
	// for that long (the tus expiration extension; 0: never).
	Uploads          bool
	UploadsMaxSize   int64
	UploadsOverwrite bool
	UploadsExpire    time.Duration
	// Segment configures the store; its Observe hook is set by the server.
	Segment segment.Options
	// Ingest configures the pipeline: chunk size, line limit, memory for
	// chunks in flight (--max-inflight), workers.
	Ingest ingest.Config
	// MaxRequestBytes caps one request body after decompression; 0 means
	// no limit. A body over it gets 413 once the limit is reached (at once
	// when its Content-Length says so), keeping the lines before it.
	MaxRequestBytes int64
	// ReadTimeout is how long a client may send nothing while its body is
	// read; the request then ends with 408, keeping its complete lines.
	// Default 60s. ReadHeaderTimeout (headers) defaults to 10s,
	// IdleTimeout (keep-alive) to 2m.
	ReadTimeout, ReadHeaderTimeout, IdleTimeout time.Duration
	// RetryAfter is the Retry-After of 429 and 503 answers; default 1s.
	RetryAfter time.Duration
	// AuthTokens, if any, are the bearer tokens /insert and /select
	// requests must carry, each with its tenant and permissions (see
	// AuthToken, and ParseAuthTokens for the --auth-token-file format).
	AuthTokens []AuthToken
	// MaxConcurrentQueries is how many /select queries run at once
	// (default: twice the CPUs on up to 4 of them, at most 16, as
	// VictoriaLogs); others wait up to MaxQueueDuration (default 10s), then
	// get 503. MaxQueryDuration (default 30s) bounds each query; a request's
	// timeout arg may lower it.
	MaxConcurrentQueries               int
	MaxQueryDuration, MaxQueueDuration time.Duration
	// QueryMemory is the memory each query's exact stats state may use
	// before it switches to sketches or spills (query.Options.MaxMemory);
	// default DefaultQueryMemory. QueryWorkers is the goroutines scanning
	// for each query (0: one per CPU). TempDir is for spill files.
	QueryMemory  int64
	QueryWorkers int
	TempDir      string
	// QueryShare is the share of the CPUs (0 to 1) queries may use while a
	// request is being ingested; 0 means DefaultQueryShare, 1 or more no
	// limit. Queries run at full speed when nothing is being ingested.
	QueryShare float64
	// Kafka, if set, makes the server a gateway: the lines it takes
	// (every /insert/ protocol and syslog) are checked as always, then
	// produced to Kafka, and a request is acknowledged once Kafka has all
	// of its lines. It excludes DataDir: a gateway stores nothing itself
	// and answers no queries. Close closes it.
	Kafka *kafka.Producer
	// SelectPeers makes the server answer /select/logsql/* by fanning the
	// query out to these storage nodes (base URLs: spate serve --data or
	// spate consume) and merging their answers (see peers.go). It excludes
	// DataDir and Kafka. A peer that fails fails the query, naming it,
	// unless AllowPartial: then the answer leaves its data out and says
	// so in the Spate-Partial-Response header. PeerToken, if set, is the
	// bearer token sent to the peers.
	SelectPeers  []string
	AllowPartial bool
	PeerToken    string
	// NoInsert serves no /insert endpoints: a storage node (spate
	// consume) takes its lines from Kafka only, and answers queries.
	NoInsert bool
	// Ready, if set, is one more check of /readyz (a storage node's
	// Kafka): an error makes it 503 with the error.
	Ready func(context.Context) error
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Now returns the ingestion time of lines without one; nil: time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() (Config, error) {
	if c.DataDir == "" && c.FilesDir == "" && c.Kafka == nil && len(c.SelectPeers) == 0 {
		return c, errors.New("cannot start the server: no data directory, no files directory, no Kafka to produce to and no peers to query")
	}
	if len(c.SelectPeers) > 0 && (c.DataDir != "" || c.Kafka != nil) {
		return c, errors.New("cannot start the server: a server that queries peers stores nothing itself; give it no data directory and no Kafka")
	}
	if c.DataDir != "" && c.Kafka != nil {
		return c, errors.New("cannot start the server: a Kafka gateway stores nothing itself; give it no data directory")
	}
	if c.Uploads && c.FilesDir == "" {
		return c, errors.New("cannot take uploads: they go to the files directory, and there is none")
	}
	if c.FilesData && c.DataDir == "" {
		return c, errors.New("cannot serve the data directory's files: no data directory")
	}
	if c.MaxRequestBytes < 0 {
		return c, errors.New("cannot start the server: negative size limit")
	}
	if err := checkAuthTokens(c.AuthTokens); err != nil {
		return c, err
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = time.Minute
	}
	if c.ReadHeaderTimeout == 0 {
		c.ReadHeaderTimeout = 10 * time.Second
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 2 * time.Minute
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = time.Second
	}
	if c.MaxConcurrentQueries <= 0 {
		c.MaxConcurrentQueries = defaultMaxConcurrentQueries()
	}
	if c.MaxQueryDuration <= 0 {
		c.MaxQueryDuration = DefaultMaxQueryDuration
	}
	if c.MaxQueueDuration <= 0 {
		c.MaxQueueDuration = DefaultMaxQueueDuration
	}
	if c.QueryMemory <= 0 {
		c.QueryMemory = DefaultQueryMemory
	}
	if c.QueryShare <= 0 {
		c.QueryShare = DefaultQueryShare
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Ingest.Now == nil {
		c.Ingest.Now = c.Now
	}
	return c, nil
}

// Server is one spate server over one data directory. Its handlers are
// safe for concurrent use.
type Server struct {
	cfg     Config
	log     *slog.Logger
	store   *segment.Store
	pipe    *ingest.Pipeline
	files   *fileserve.Handler // nil without FilesDir
	data    *fileserve.Handler // nil without FilesData
	uploads http.Handler       // nil without Uploads
	m       *serverMetrics
	closing atomic.Bool
	started time.Time
	// querySlots holds one token per running /select query.
	querySlots chan struct{}
	// ingesting counts the ingest requests in flight; pacer slows queries
	// down while it is not zero.
	ingesting atomic.Int64
	pacer     *queryPacer
	// ui is the web page at /ui/; nil without a data directory.
	ui *ui.Handler
	// wholeMem bounds the memory of request bodies decoded whole (Loki,
	// OpenTelemetry): see readWhole.
	wholeMem *semaphore.Weighted
	syslogState
	// done is closed when the server begins to shut down: live tails end.
	done     chan struct{}
	doneOnce sync.Once
}

// New opens the data directory (recovering it, see segment.Open), starts
// the ingest pipeline and returns a Server ready to serve. Close it to
// flush and release the directory.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, started: time.Now(),
		querySlots: make(chan struct{}, cfg.MaxConcurrentQueries), done: make(chan struct{})}
	if s.pipe, err = ingest.NewPipeline(cfg.Ingest); err != nil {
		return nil, err
	}
	s.wholeMem = semaphore.NewWeighted(max(s.pipe.Config().MemoryBytes, s.wholeBodyLimit()+1))
	if cfg.DataDir != "" || len(cfg.SelectPeers) > 0 {
		if s.ui, err = ui.NewHandler("/ui/"); err != nil {
			return nil, fmt.Errorf("cannot load the web page: %w", err)
		}
	}
	s.m = newServerMetrics(s)
	if k := cfg.Kafka; k != nil {
		s.m.reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "spate_kafka_records_total", Help: "Records the gateway produced to Kafka, by result: acknowledged, or failed (Kafka did not take them).", ConstLabels: prometheus.Labels{"result": "acknowledged"}},
				func() float64 { n, _, _ := k.Stats(); return float64(n) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "spate_kafka_records_total", Help: "Records the gateway produced to Kafka, by result: acknowledged, or failed (Kafka did not take them).", ConstLabels: prometheus.Labels{"result": "failed"}},
				func() float64 { _, n, _ := k.Stats(); return float64(n) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "spate_kafka_bytes_total", Help: "Bytes of records Kafka acknowledged (gateway)."},
				func() float64 { _, _, n := k.Stats(); return float64(n) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "spate_kafka_records_in_flight", Help: "Records handed to Kafka and not yet acknowledged (gateway)."},
				func() float64 { return float64(k.InFlight()) }),
		)
	}
	if cfg.QueryShare < 1 {
		s.pacer = newQueryPacer(cfg.QueryShare, func() bool { return s.ingesting.Load() > 0 })
		s.pacer.waited = func(d time.Duration) { s.m.queryPaced.Add(d.Seconds()) }
	}
	if cfg.FilesDir != "" {
		if s.files, err = fileserve.New(cfg.FilesDir, "/files/", cfg.Files); err != nil {
			s.closeHandles()
			return nil, err
		}
	}
	if cfg.Uploads {
		if s.uploads, err = s.newUploads(); err != nil {
			s.closeHandles()
			return nil, err
		}
	}
	if cfg.DataDir == "" {
		return s, nil
	}
	if cfg.FilesData {
		o := fileserve.Options{Browse: cfg.Files.Browse, CacheControl: "no-cache", CompressMin: -1}
		if s.data, err = fileserve.New(cfg.DataDir, "/data/", o); err != nil {
			s.closeHandles()
			return nil, err
		}
	}
	so := cfg.Segment
	if so.Logger == nil {
		so.Logger = cfg.Logger
	}
	so.Observe = s.m.observeBatch
	if so.IndexLines == nil && !cfg.NoIndex {
		so.IndexLines, so.IndexNumbers = query.NewIndexLines(), query.IndexNumbers
	}
	if so.MaxQueueBytes == 0 {
		so.MaxQueueBytes = segment.DefaultMaxQueueBytes
	}
	// A chunk's lines, rebuilt, must always fit in the queue.
	so.MaxQueueBytes = max(so.MaxQueueBytes, 4*int64(s.pipe.Config().ChunkBytes))
	s.cfg.Segment = so
	s.store, err = segment.Open(cfg.DataDir, so)
	if err != nil {
		s.closeHandles()
		return nil, fmt.Errorf("cannot open data directory: %w", err)
	}
	return s, nil
}

// Store returns the data directory's store, nil without one. Lines
// appended to it directly (spate consume does) are served like any other.
func (s *Server) Store() *segment.Store { return s.store }

// MustRegister adds collectors to the server's /metrics; it panics on a
// name already registered, as prometheus.Registry.MustRegister does.
func (s *Server) MustRegister(cs ...prometheus.Collector) { s.m.reg.MustRegister(cs...) }

// Handler returns the public API: ingestion, health and metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	if s.files != nil {
		mux.Handle("/files/", s.route("/files/", s.countFiles(s.files)))
	}
	if s.data != nil {
		mux.Handle("/data/", s.route("/data/", s.countFiles(s.data)))
	}
	if s.uploads != nil {
		mux.Handle("/uploads/", s.route("/uploads/", s.uploads.ServeHTTP))
	}
	if (s.store != nil || s.cfg.Kafka != nil) && !s.cfg.NoInsert {
		s.insertRoutes(mux)
	}
	if s.store != nil || len(s.cfg.SelectPeers) > 0 {
		s.dataRoutes(mux)
	}
	if s.store != nil {
		mux.Handle("/internal/select/partial", s.route("/internal/select/partial", s.selectHandler(s.handlePartial)))
	}
	if s.ui != nil {
		mux.Handle("/ui/", s.ui)
	}
	mux.HandleFunc("/healthz", s.handleHealth)
	mux.HandleFunc("/readyz", s.handleReady)
	mux.HandleFunc("/metrics", s.handleMetrics)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && s.ui != nil {
			// The web page: the address a browser is given.
			u := "/ui/"
			if r.URL.RawQuery != "" {
				u += "?" + r.URL.RawQuery
			}
			http.Redirect(w, r, u, http.StatusFound)
			return
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("no endpoint %s; see `spate serve --help`", r.URL.Path))
	})
	return mux
}

// insertRoutes adds the ingestion endpoints, into the data directory or
// Kafka.
func (s *Server) insertRoutes(mux *http.ServeMux) {
	mux.Handle("/insert/jsonline", s.route("/insert/jsonline", s.handleInsert))
	mux.Handle("/api/v1/ingest", s.route("/api/v1/ingest", s.handleInsert))
	mux.Handle("/insert/loki/api/v1/push", s.route("/insert/loki/api/v1/push", s.handleLoki))
	mux.Handle("/insert/loki/ready", s.route("/insert/loki/ready", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ready")) }))
	mux.Handle("/insert/opentelemetry/v1/logs", s.route("/insert/opentelemetry/v1/logs", s.handleOTLP))
	mux.Handle("/insert/elasticsearch", s.route("/insert/elasticsearch", s.handleElasticsearch))
	mux.Handle("/insert/elasticsearch/", s.route("/insert/elasticsearch/", s.handleElasticsearch))
}

// dataRoutes adds the query API of the data directory.
func (s *Server) dataRoutes(mux *http.ServeMux) {
	for path, h := range map[string]func(context.Context, http.ResponseWriter, *http.Request) error{
		"/select/logsql/query":               s.handleQuery,
		"/select/logsql/hits":                s.handleHits,
		"/select/logsql/stats_query":         promHandler(s.handleStatsQuery),
		"/select/logsql/stats_query_range":   promHandler(s.handleStatsQueryRange),
		"/select/logsql/facets":              s.handleFacets,
		"/select/logsql/field_names":         s.handleFieldNames,
		"/select/logsql/field_values":        s.handleFieldValues,
		"/select/logsql/streams":             s.handleStreams("_stream"),
		"/select/logsql/stream_ids":          s.handleStreams("_stream_id"),
		"/select/logsql/stream_field_names":  s.handleStreamFieldNames,
		"/select/logsql/stream_field_values": s.handleStreamFieldValues,
		"/select/logsql/query_time_range":    s.handleQueryTimeRange,
		"/select/tenant_ids":                 s.handleTenantIDs,
	} {
		mux.Handle(path, s.route(path, s.selectHandler(h)))
	}
	mux.Handle("/select/logsql/tail", s.route("/select/logsql/tail", s.handleTail))
	mux.HandleFunc("/select/buildinfo", s.handleBuildInfo)
}

// AdminHandler returns pprof and metrics, for a listener that is not
// exposed (pprof can cost CPU and reveal internals).
func (s *Server) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/metrics", s.handleMetrics)
	return mux
}

// Serve answers on ln (and pprof on admin, if not nil) until ctx is done,
// then shuts down gracefully: new requests get 503, requests in flight
// finish (up to 30s), the queue is written and fsynced and the store is
// closed. It returns nil after a clean shutdown.
//
// There is no whole-request read or write deadline, so that bodies of any
// size can stream in: a body read waits at most ReadTimeout for each piece
// (see handleInsert), and answers set their own write deadlines.
func (s *Server) Serve(ctx context.Context, ln, admin net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(s.stopTails)
	errc := make(chan error, 2)
	go func() { errc <- hs.Serve(ln) }()
	var as *http.Server
	if admin != nil {
		as = &http.Server{Handler: s.AdminHandler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { errc <- as.Serve(admin) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		err = fmt.Errorf("cannot serve: %w", err)
	}
	s.log.Info("shutting down", "reason", context.Cause(ctx))
	s.closing.Store(true)
	s.stopSyslog() // and wait for their last batches
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if e := hs.Shutdown(sctx); e != nil && err == nil {
		err = fmt.Errorf("cannot shut down: %w", e)
	}
	if as != nil {
		as.Close()
	}
	if e := s.Close(); e != nil && err == nil {
		err = e
	}
	return err
}

// Close stops ingestion, writes and fsyncs what is queued and closes the
// store. Safe to call more than once.
func (s *Server) Close() error {
	s.stopTails()
	s.stopSyslog()
	if s.closing.Swap(true) {
		return s.closeStore()
	}
	err := s.closeStore()
	s.closeHandles()
	if err != nil {
		return fmt.Errorf("cannot close data directory: %w", err)
	}
	return nil
}

// closeHandles stops the ingest pipeline and the uploads' sweeper and
// releases the file directories (everything New opens but the store).
func (s *Server) closeHandles() {
	s.stopTails()
	s.pipe.Close()
	if s.cfg.Kafka != nil {
		s.cfg.Kafka.Close()
	}
	if s.files != nil {
		s.files.Close()
	}
	if s.data != nil {
		s.data.Close()
	}
}

func (s *Server) closeStore() error {
	if s.store == nil {
		return nil
	}
	return s.store.Close()
}

// stopTails ends the live tails (they would keep a graceful shutdown
// waiting).
func (s *Server) stopTails() { s.doneOnce.Do(func() { close(s.done) }) }

// sink returns where checked lines go: Kafka for a gateway, else the
// store, waiting for queue room when it is full.
func (s *Server) sink() ingest.Sink {
	if s.cfg.Kafka != nil {
		return s.cfg.Kafka
	}
	return ingest.StoreSink{Store: s.store}
}

// queueFull reports whether the store's write queue is full (never for a
// gateway, whose producer waits for room in its own buffer).
func (s *Server) queueFull() bool {
	return s.store != nil && s.store.Stats().QueueBytes >= s.cfg.Segment.MaxQueueBytes
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// handleReady answers 503 while shutting down or while the queue is more
// than 90% full, so a load balancer sends traffic elsewhere.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if s.closing.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "shutting down")
		return
	}
	if k := s.cfg.Kafka; k != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := k.Ping(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "kafka: no broker answers: %v\n", err)
			return
		}
	}
	if s.cfg.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.cfg.Ready(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: %v\n", err)
			return
		}
	}
	if s.store == nil {
		fmt.Fprintln(w, "ready")
		return
	}
	st := s.store.Stats()
	if limit := s.cfg.Segment.MaxQueueBytes; st.QueueBytes*10 > limit*9 {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "queue %d of %d bytes full\n", st.QueueBytes, limit)
		return
	}
	fmt.Fprintln(w, "ready")
}
