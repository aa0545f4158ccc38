package server

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/ingest/syslog"
	"github.com/spate-io/spate/internal/kafka"
)

// Syslog says which syslog listeners to serve (see ServeSyslog).
type Syslog struct {
	// TCP, if not nil, takes syslog over TCP (or TLS, when it is a
	// tls.NewListener); UDP, if not nil, over UDP.
	TCP net.Listener
	UDP net.PacketConn
	// Config says how messages become lines: time zone, stream fields,
	// tenant, line limit, batching.
	Config syslog.Config
}

// ServeSyslog serves the syslog listeners of sy until ctx is done, each
// message stored through the ingest pipeline into the store with the
// guarantees of /insert/jsonline. Backpressure: a batch waits (and its TCP
// connection is not read) while the pipeline or the write queue is full,
// and is retried until it is stored; over UDP, datagrams that arrive
// while the queue of batches is full are dropped and counted
// (spate_syslog_dropped_total{reason="udp_queue_full"}). Call it before
// Serve, which waits for the listeners to finish their last batches before
// it returns. The listeners are closed when ctx is done.
func (s *Server) ServeSyslog(ctx context.Context, sy Syslog) {
	ctx, cancel := context.WithCancel(ctx)
	s.syslogMu.Lock()
	s.syslogCancel = append(s.syslogCancel, cancel)
	s.syslogMu.Unlock()
	st := &syslog.Stats{}
	s.registerSyslogMetrics(st)
	sink := s.syslogSink(sy.Config)
	run := func(name string, serve func() error) {
		s.syslogWG.Go(func() {
			if err := serve(); err != nil && ctx.Err() == nil {
				s.log.Error("syslog listener stopped", "listener", name, "err", err)
			}
		})
	}
	if sy.TCP != nil {
		run("tcp", func() error { return syslog.ServeTCP(ctx, sy.TCP, sy.Config, sink, s.log, st) })
	}
	if sy.UDP != nil {
		run("udp", func() error { return syslog.ServeUDP(ctx, sy.UDP, sy.Config, sink, s.log, st) })
	}
}

// syslogSink stores batches of syslog lines, retrying while the server is
// busy (the part of a batch stored before ErrBusy is not sent again), until
// it is stored or ctx is done.
func (s *Server) syslogSink(cfg syslog.Config) syslog.Sink {
	return func(ctx context.Context, lines []byte, n int) error {
		wait := 10 * time.Millisecond
		for len(lines) > 0 {
			if !s.queueFull() {
				if ticket, ok := s.pipe.Admit(int64(len(lines))); ok {
					res := s.pipe.Ingest(context.WithoutCancel(ctx), ticket, &ingest.Request{
						Body: bytes.NewReader(lines), Tenant: cfg.Tenant, Sink: s.sink(), Written: true,
					})
					s.m.lines.WithLabelValues("accepted").Add(float64(res.Accepted))
					s.m.lines.WithLabelValues("rejected").Add(float64(res.Rejected))
					s.m.storedBytes.Add(float64(res.StoredBytes))
					if res.Err == nil {
						return nil
					}
					if !errors.Is(res.Err, ingest.ErrBusy) && !errors.Is(res.Err, kafka.ErrUnavailable) {
						return res.Err
					}
					lines = dropLines(lines, res.Lines)
				}
			}
			s.m.throttled.Inc()
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(wait):
			}
			wait = min(2*wait, time.Second)
		}
		return nil
	}
}

// dropLines returns lines without its first n lines.
func dropLines(lines []byte, n int64) []byte {
	for ; n > 0 && len(lines) > 0; n-- {
		i := bytes.IndexByte(lines, '\n')
		if i < 0 {
			return nil
		}
		lines = lines[i+1:]
	}
	return lines
}

// registerSyslogMetrics exports st.
func (s *Server) registerSyslogMetrics(st *syslog.Stats) {
	s.syslogMetrics.Do(func() {
		reg := s.m.reg
		counter := func(name, help string, v func() int64, labels prometheus.Labels) {
			reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, func() float64 { return float64(v()) }))
		}
		counter("spate_syslog_connections_total", "Syslog TCP connections accepted.", st.Connections.Load, nil)
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "spate_syslog_open_connections", Help: "Syslog TCP connections being served."},
			func() float64 { return float64(st.OpenConnections.Load()) }))
		counter("spate_syslog_datagrams_total", "Syslog UDP datagrams received, dropped ones too.", st.Datagrams.Load, nil)
		counter("spate_syslog_bytes_total", "Syslog bytes received: TCP payload after TLS, and datagrams.", st.Bytes.Load, nil)
		counter("spate_syslog_messages_total", "Syslog messages stored.", st.Messages.Load, nil)
		const dropped = "spate_syslog_dropped_total"
		const help = "Syslog messages not stored, by reason: too_long (over --max-line-size), bad_time (a timestamp that does not parse), bad_frame (a bad octet count: the TCP connection is closed, the rest of a datagram dropped), udp_queue_full (datagrams dropped while storage was behind), store_error (batches that could not be stored)."
		counter(dropped, help, st.Dropped.Load, prometheus.Labels{"reason": "too_long"})
		counter(dropped, help, st.BadTime.Load, prometheus.Labels{"reason": "bad_time"})
		counter(dropped, help, st.BadFrames.Load, prometheus.Labels{"reason": "bad_frame"})
		counter(dropped, help, st.UDPDropped.Load, prometheus.Labels{"reason": "udp_queue_full"})
		counter(dropped, help, st.SinkErrors.Load, prometheus.Labels{"reason": "store_error"})
	})
}

// syslogState is the Server's part for ServeSyslog.
type syslogState struct {
	syslogWG      sync.WaitGroup // the listeners' goroutines
	syslogMetrics sync.Once
	syslogMu      sync.Mutex
	syslogCancel  []context.CancelFunc // stop the listeners
}

// stopSyslog stops the syslog listeners and waits for their last batches.
func (s *Server) stopSyslog() {
	s.syslogMu.Lock()
	for _, c := range s.syslogCancel {
		c()
	}
	s.syslogMu.Unlock()
	s.syslogWG.Wait()
}
