package syslog

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"time"
)

// maxDatagram is the read buffer of ServeUDP: the largest UDP payload.
const maxDatagram = 64 << 10

// ServeUDP serves syslog datagrams read from pc (a UDP or unixgram
// socket) until ctx is done or pc fails or is closed. Each datagram is
// framed as a TCP stream is (it may hold several messages) and its lines
// are gathered into batches (see Config), which one goroutine hands to
// sink in order. At most Config.UDPQueue full batches wait for it: when
// the Sink falls behind and they are all full, datagrams are read and
// dropped, counted in Stats.UDPDropped, so memory stays bounded
// (UDPQueue+1 batches of about FlushBytes, and a 64 KiB buffer). Sink errors are counted and logged (at most one
// warning per 10 s), and serving goes on.
//
// When ctx is done ServeUDP closes pc, hands the batches it holds to the
// Sink (whose context is cancelled Config.DrainTimeout later) and returns
// nil; when pc is closed it does the same and returns the error (wrapping
// net.ErrClosed). Other read errors are logged and reading goes on.
func ServeUDP(ctx context.Context, pc net.PacketConn, cfg Config, sink Sink, log *slog.Logger, st *Stats) error {
	s := newServer(ctx, cfg, sink, log, st)
	defer s.cancelSinks()
	stopPC := context.AfterFunc(ctx, func() { pc.Close() })
	defer stopPC()

	// free holds the batches not in use; queue the full ones, for the
	// sink goroutine.
	nb := s.cfg.UDPQueue + 1
	free := make(chan *batch, nb)
	queue := make(chan *batch, nb)
	for range nb {
		free <- new(batch)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for b := range queue {
			if err := s.flush(b); err != nil {
				s.warnLimited("syslog: sink failed; UDP lines lost", "addr", pc.LocalAddr().String(), "err", err)
			}
			free <- b
		}
	}()

	var (
		e        = NewEncoder(s.cfg)
		cur      *batch
		buf      = make([]byte, maxDatagram)
		deadline bool
		err      error
	)
	handOff := func() {
		if cur != nil && cur.n > 0 {
			queue <- cur // never blocks: queue has room for every batch
			cur = nil
		}
	}
	for {
		if cur != nil && cur.n > 0 {
			t := time.Now()
			due := cur.start.Add(s.cfg.FlushInterval)
			if !t.Before(due) {
				handOff()
			} else {
				if idle := t.Add(s.cfg.IdleFlush); idle.Before(due) {
					due = idle
				}
				pc.SetReadDeadline(due)
				deadline = true
			}
		}
		if (cur == nil || cur.n == 0) && deadline {
			pc.SetReadDeadline(time.Time{})
			deadline = false
		}
		n, addr, rerr := pc.ReadFrom(buf)
		if rerr != nil {
			switch {
			case ctx.Err() != nil:
			case errors.Is(rerr, os.ErrDeadlineExceeded):
				handOff()
				continue
			case !errors.Is(rerr, net.ErrClosed):
				// A transient error (ICMP feedback and the like), as
				// VictoriaLogs: log and go on.
				s.warnLimited("syslog: UDP read failed", "addr", pc.LocalAddr().String(), "err", rerr)
				time.Sleep(10 * time.Millisecond)
				continue
			default:
				err = rerr
			}
			break
		}
		s.st.Datagrams.Add(1)
		s.st.Bytes.Add(int64(n))
		if cur == nil {
			select {
			case cur = <-free:
			default:
				s.st.UDPDropped.Add(1)
				continue
			}
		}
		s.datagram(cur, e, buf[:n], addr)
		if s.full(cur) {
			handOff()
		}
	}
	handOff()
	close(queue)
	<-done
	return err
}

// datagram adds the messages of the datagram d to b.
func (s *server) datagram(b *batch, e *Encoder, d []byte, addr net.Addr) {
	now := s.cfg.Now()
	for len(d) > 0 {
		kind, msg, adv, err := nextFrame(d, true, s.cfg.MaxLineBytes)
		d = d[adv:]
		switch kind {
		case needMore:
			return
		case gotMsg:
			s.add(b, e, msg, now, addr)
		case skipLine, skipRest:
			s.st.Dropped.Add(1)
			s.warnLimited("syslog: message skipped", "remote", addr, "reason", "line over the limit", "limit", s.cfg.MaxLineBytes)
		case badFrame:
			s.st.BadFrames.Add(1)
			s.warnLimited("syslog: rest of datagram dropped", "remote", addr, "reason", "bad frame", "err", err)
			return
		}
	}
}
