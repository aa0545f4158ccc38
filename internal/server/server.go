// Package server is `spate serve`: an HTTP server that ingests NDJSON logs
// into durable segment files (internal/segment), with backpressure,
// Prometheus metrics, health checks and pprof on an admin listener.
//
// Contract: a 200 from an ingest endpoint means every line it counts as
// accepted is stored (and, with segment.SyncBatch, fsynced); any other
// status means nothing from that request was stored. Memory is bounded by
// Config.MaxInflightBytes (request bodies being read and checked) plus the
// segment queue (segment.Options.MaxQueueBytes); past either, requests get
// 429 with Retry-After.
package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spate-io/spate/internal/segment"
)

// Config configures a Server. Zero fields mean the defaults.
type Config struct {
	// DataDir holds the segment files; required.
	DataDir string
	// Segment configures the store; its Observe hook is set by the server.
	Segment segment.Options
	// MaxRequestBytes caps one request body after decompression; default
	// 32 MiB. Larger bodies get 413 and nothing is stored.
	MaxRequestBytes int64
	// MaxLineBytes caps one line; default 256 KiB (VictoriaLogs'
	// -insert.maxLineSizeBytes). A longer line fails the request with 413.
	MaxLineBytes int
	// MaxInflightBytes bounds the memory of requests being read and checked
	// (each byte of body counts twice: as read and as stored); default
	// 64 MiB. A request that cannot get room gets 429.
	MaxInflightBytes int64
	// ReadTimeout bounds reading a whole request, body included, so slow
	// clients cannot hold memory; default 60s. ReadHeaderTimeout defaults
	// to 10s, IdleTimeout to 2m.
	ReadTimeout, ReadHeaderTimeout, IdleTimeout time.Duration
	// RetryAfter is the Retry-After of 429 answers; default 1s.
	RetryAfter time.Duration
	// AuthTokens, if any, are the bearer tokens ingest requests must carry.
	AuthTokens []string
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Now returns the ingestion time of lines without one; nil: time.Now.
	Now func() time.Time
}

// Defaults for the zero fields of Config.
const (
	DefaultMaxRequestBytes  = 32 << 20
	DefaultMaxLineBytes     = 256 << 10
	DefaultMaxInflightBytes = 64 << 20
)

func (c Config) withDefaults() (Config, error) {
	if c.DataDir == "" {
		return c, errors.New("cannot start the server: no data directory")
	}
	if c.MaxRequestBytes < 0 || c.MaxLineBytes < 0 || c.MaxInflightBytes < 0 {
		return c, errors.New("cannot start the server: negative size limit")
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.MaxLineBytes == 0 {
		c.MaxLineBytes = DefaultMaxLineBytes
	}
	if c.MaxInflightBytes == 0 {
		c.MaxInflightBytes = DefaultMaxInflightBytes
	}
	// One request of the maximum size must always fit (each byte counts
	// twice, and reads go in 256 KiB steps).
	c.MaxInflightBytes = max(c.MaxInflightBytes, 2*c.MaxRequestBytes+1<<20)
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
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// Server is one spate server over one data directory. Its handlers are
// safe for concurrent use.
type Server struct {
	cfg      Config
	log      *slog.Logger
	store    *segment.Store
	m        *serverMetrics
	inflight budget
	closing  atomic.Bool
	reqPool  sync.Pool // *reqState
}

// New opens the data directory (recovering it, see segment.Open) and
// returns a Server ready to serve. Close it to flush and release the
// directory.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger}
	s.inflight.limit = cfg.MaxInflightBytes
	s.m = newServerMetrics(s)
	so := cfg.Segment
	if so.Logger == nil {
		so.Logger = cfg.Logger
	}
	so.Observe = s.m.observeBatch
	if so.MaxQueueBytes == 0 {
		so.MaxQueueBytes = segment.DefaultMaxQueueBytes
	}
	if so.MaxQueueBytes < cfg.MaxRequestBytes*2 {
		// A request of the maximum size must fit in the queue (its stored
		// form can be a little larger than its body).
		so.MaxQueueBytes = cfg.MaxRequestBytes * 2
	}
	s.store, err = segment.Open(cfg.DataDir, so)
	if err != nil {
		return nil, fmt.Errorf("cannot open data directory: %w", err)
	}
	return s, nil
}

// Handler returns the public API: ingestion, health and metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/insert/jsonline", s.handleIngest)
	mux.HandleFunc("/api/v1/ingest", s.handleIngest)
	mux.HandleFunc("/healthz", s.handleHealth)
	mux.HandleFunc("/readyz", s.handleReady)
	mux.HandleFunc("/metrics", s.handleMetrics)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no endpoint %s; see `spate serve --help`", r.URL.Path))
	})
	return mux
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
func (s *Server) Serve(ctx context.Context, ln, admin net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadTimeout:       s.cfg.ReadTimeout,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		WriteTimeout:      s.cfg.ReadTimeout + 30*time.Second,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
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
	s.closing.Store(true)
	if err := s.store.Close(); err != nil {
		return fmt.Errorf("cannot close data directory: %w", err)
	}
	return nil
}

// Store returns the segment store, for tests and stats.
func (s *Server) Store() *segment.Store { return s.store }

func (s *Server) authorized(r *http.Request) bool {
	if len(s.cfg.AuthTokens) == 0 {
		return true
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	good := 0
	for _, t := range s.cfg.AuthTokens {
		good |= subtle.ConstantTimeCompare([]byte(tok), []byte(t))
	}
	return good == 1
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
	st := s.store.Stats()
	if limit := s.queueLimit(); st.QueueBytes*10 > limit*9 {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "queue %d of %d bytes full\n", st.QueueBytes, limit)
		return
	}
	fmt.Fprintln(w, "ready")
}

func (s *Server) queueLimit() int64 {
	q := s.cfg.Segment.MaxQueueBytes
	if q == 0 {
		q = segment.DefaultMaxQueueBytes
	}
	return max(q, s.cfg.MaxRequestBytes*2)
}

// budget is a byte semaphore that never blocks.
type budget struct {
	used  atomic.Int64
	limit int64
}

func (b *budget) tryAcquire(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *budget) release(n int64) { b.used.Add(-n) }
