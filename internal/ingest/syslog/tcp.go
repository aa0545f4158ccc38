package syslog

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Sink stores a batch of n NDJSON lines, each ending in '\n', and returns
// once they are durable. It may block: that is the backpressure (a TCP
// connection is not read while its Sink call runs; UDP datagrams are
// dropped once the queued batches are full). It must not keep lines after
// it returns. It should retry transient failures itself: an error means
// the lines are lost (a TCP connection is then closed, after a log.Warn).
// Sink is called from many goroutines at once (one per connection).
type Sink func(ctx context.Context, lines []byte, n int) error

// readBuf is the initial size of a connection's read buffer; it grows up
// to MaxLineBytes and a little more for a long message.
const readBuf = 64 << 10

// ServeTCP serves syslog on the connections ln accepts (a TLS listener
// from tls.NewListener, a Unix socket listener work as well), one
// goroutine each, until ctx is done or ln fails or is closed. Each
// connection's lines go to sink in batches (see Config); st (may be nil)
// counts, log (may be nil) gets a Warn for each connection closed for bad
// input or a failed Sink call, and one per 10 s at most for skipped
// messages.
//
// When ctx is done, ServeTCP closes ln and every connection, hands each
// connection's batch of lines read so far to sink, and returns nil once
// all are done; Sink calls get a context cancelled Config.DrainTimeout
// after ctx is done, so that ServeTCP returns within about that time.
// When ln fails, it does the same and returns the Accept error (one
// wrapping net.ErrClosed if ln was closed). Memory: per connection, a
// 64 KiB read buffer (up to MaxLineBytes for long messages) and one batch.
func ServeTCP(ctx context.Context, ln net.Listener, cfg Config, sink Sink, log *slog.Logger, st *Stats) error {
	s := newServer(ctx, cfg, sink, log, st)
	defer s.cancelSinks()
	connCtx, stopConns := context.WithCancel(ctx)
	stopLn := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopLn()
	var wg sync.WaitGroup
	var err error
	delay := time.Duration(0)
	for {
		c, aerr := ln.Accept()
		if aerr != nil {
			if ctx.Err() != nil {
				break
			}
			if errors.Is(aerr, net.ErrClosed) {
				err = aerr
				break
			}
			// Out of file descriptors and the like: wait and retry.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Warn("syslog: accept failed; retrying", "addr", ln.Addr().String(), "err", aerr, "delay", delay)
			select {
			case <-time.After(delay):
				continue
			case <-ctx.Done():
			}
			break
		}
		delay = 0
		s.st.Connections.Add(1)
		s.st.OpenConnections.Add(1)
		wg.Go(func() {
			defer s.st.OpenConnections.Add(-1)
			s.serveConn(connCtx, c)
		})
	}
	stopConns()
	wg.Wait()
	return err
}

// server is what ServeTCP and ServeUDP share.
type server struct {
	cfg  Config
	sink Sink
	log  *slog.Logger
	st   *Stats
	// sinkCtx is for Sink calls: cancelled DrainTimeout after the serving
	// context is done, or when serving returns.
	sinkCtx     context.Context
	cancelSinks func()
	lastWarn    atomic.Int64 // unix seconds of the last rate-limited warning
}

func newServer(ctx context.Context, cfg Config, sink Sink, log *slog.Logger, st *Stats) *server {
	s := &server{cfg: cfg.withDefaults(), sink: sink, log: log, st: st}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.st == nil {
		s.st = new(Stats)
	}
	sinkCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var timer atomic.Pointer[time.Timer]
	stop := context.AfterFunc(ctx, func() { timer.Store(time.AfterFunc(s.cfg.DrainTimeout, cancel)) })
	s.sinkCtx = sinkCtx
	s.cancelSinks = func() {
		stop()
		if t := timer.Load(); t != nil {
			t.Stop()
		}
		cancel()
	}
	return s
}

// warnLimited logs at most one warning per 10 s.
func (s *server) warnLimited(msg string, args ...any) {
	now := time.Now().Unix()
	last := s.lastWarn.Load()
	if now-last < 10 || !s.lastWarn.CompareAndSwap(last, now) {
		return
	}
	s.log.Warn(msg, args...)
}

// batch is lines waiting for the Sink.
type batch struct {
	lines []byte
	n     int
	start time.Time // when its first line came
}

func (b *batch) reset() { b.lines, b.n = b.lines[:0], 0 }

// add encodes msg into b, or counts it as skipped; remote is for the
// log.
func (s *server) add(b *batch, e *Encoder, msg []byte, now time.Time, remote any) {
	lines, err := e.Append(b.lines, msg, now)
	if err != nil {
		s.st.BadTime.Add(1)
		s.warnLimited("syslog: message skipped", "remote", remote, "reason", err)
		return
	}
	if b.n == 0 {
		b.start = time.Now()
	}
	b.lines = lines
	b.n++
}

func (s *server) full(b *batch) bool {
	return b.n >= s.cfg.FlushLines || len(b.lines) >= s.cfg.FlushBytes
}

// flush hands b to the Sink and resets it.
func (s *server) flush(b *batch) error {
	if b.n == 0 {
		return nil
	}
	err := s.sink(s.sinkCtx, b.lines, b.n)
	if err != nil {
		s.st.SinkErrors.Add(1)
	} else {
		s.st.Batches.Add(1)
		s.st.Messages.Add(int64(b.n))
	}
	b.reset()
	return err
}

// serveConn reads c until EOF, an error or bad input, or ctx is done.
func (s *server) serveConn(ctx context.Context, c net.Conn) {
	var remote any = c.RemoteAddr().String()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer c.Close()
	var (
		e        = NewEncoder(s.cfg)
		b        batch
		buf      = make([]byte, min(readBuf, s.cfg.MaxLineBytes+maxCountDigits+8))
		r, w     int
		eof      bool
		failed   bool // a read failed: stop after the whole frames read
		skipping bool // in a line over the limit, up to its '\n'
		deadline bool // a read deadline is set
		now      = s.cfg.Now()
		max      = s.cfg.MaxLineBytes
	)
	closeWith := func(reason string, err error) {
		s.log.Warn("syslog: closing connection", "remote", remote, "reason", reason, "err", err)
	}
	for {
		// Everything whole in buf[r:w].
	frames:
		for {
			if skipping {
				i := bytes.IndexByte(buf[r:w], '\n')
				if i < 0 {
					r = w
					break
				}
				r += i + 1
				skipping = false
			}
			kind, msg, adv, err := nextFrame(buf[r:w], eof, max)
			r += adv
			switch kind {
			case needMore:
				break frames
			case gotMsg:
				s.add(&b, e, msg, now, remote)
				if s.full(&b) {
					if err := s.flush(&b); err != nil {
						closeWith("sink failed", err)
						return
					}
				}
			case skipLine, skipRest:
				s.st.Dropped.Add(1)
				s.warnLimited("syslog: message skipped", "remote", remote, "reason", "line over the limit", "limit", max)
				skipping = kind == skipRest
			case badFrame:
				s.st.BadFrames.Add(1)
				if ferr := s.flush(&b); ferr != nil {
					closeWith("sink failed", ferr)
					return
				}
				closeWith("bad frame", err)
				return
			}
		}
		if eof || failed {
			if err := s.flush(&b); err != nil {
				closeWith("sink failed", err)
			}
			return
		}
		// Room to read: move the unread part to the front, grow for a
		// long frame.
		if r == w {
			r, w = 0, 0
		} else if r > 0 && w == len(buf) {
			w = copy(buf, buf[r:w])
			r = 0
		}
		if w == len(buf) {
			// Not at the largest size, or nextFrame would have found
			// something.
			nb := make([]byte, min(2*len(buf), max+maxCountDigits+8))
			w = copy(nb, buf[r:w])
			r = 0
			buf = nb
		}
		// Flush an old batch; else wait for more at most IdleFlush (or
		// until the batch is FlushInterval old).
		if b.n > 0 {
			t := time.Now()
			due := b.start.Add(s.cfg.FlushInterval)
			if !t.Before(due) {
				if err := s.flush(&b); err != nil {
					closeWith("sink failed", err)
					return
				}
			} else {
				if idle := t.Add(s.cfg.IdleFlush); idle.Before(due) {
					due = idle
				}
				c.SetReadDeadline(due)
				deadline = true
			}
		}
		if b.n == 0 && deadline {
			c.SetReadDeadline(time.Time{})
			deadline = false
		}
		n, err := c.Read(buf[w:])
		w += n
		s.st.Bytes.Add(int64(n))
		now = s.cfg.Now()
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil:
			if err := s.flush(&b); err != nil {
				closeWith("sink failed", err)
				return
			}
		case err == io.EOF:
			eof = true
		default:
			// Closed by ctx, reset by the peer, a TLS error: keep the
			// whole frames read, then stop.
			if ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				s.log.Debug("syslog: connection read failed", "remote", remote, "err", err)
			}
			failed = true
		}
	}
}
