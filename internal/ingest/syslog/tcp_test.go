package syslog

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/testcert"
)

// serveTCP runs ServeTCP on a fresh 127.0.0.1 listener (wrapped by wrap,
// if set) and returns its address, and a stop func that cancels it and
// returns its result.
func serveTCP(t *testing.T, cfg Config, sink Sink, st *Stats, log *slog.Logger, wrap func(net.Listener) net.Listener) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if wrap != nil {
		ln = wrap(ln)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- ServeTCP(ctx, ln, cfg, sink, log, st) }()
	var once sync.Once
	var serr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case serr = <-errc:
			case <-time.After(10 * time.Second):
				serr = errors.New("ServeTCP did not return")
			}
		})
		return serr
	}
	t.Cleanup(func() { stop() })
	return addr, stop
}

func msg5424(host string, i int) string {
	return fmt.Sprintf("<14>1 2023-06-03T17:42:32Z %s app %d - - m%d", host, i, i)
}

// TestServeTCP sends from several connections at once, one of which sends
// garbage and is closed while the others go on.
func TestServeTCP(t *testing.T) {
	col := newCollector(t)
	var st Stats
	addr, stop := serveTCP(t, Config{FlushLines: 7}, col.sink, &st, nil, nil)
	const conns, per = 4, 500
	var wg sync.WaitGroup
	for c := range conns {
		wg.Go(func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			var b strings.Builder
			for i := range per {
				m := msg5424(fmt.Sprint("h", c), i)
				if c%2 == 0 {
					fmt.Fprintf(&b, "%s\n", m)
				} else {
					fmt.Fprintf(&b, "%d %s", len(m), m)
				}
			}
			io.WriteString(conn, b.String())
		})
	}
	bad, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(bad, "12x garbage\n")
	bad.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := bad.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("garbage connection: read %v, want EOF (closed by the server)", err)
	}
	bad.Close()
	wg.Wait()
	msgs := col.wait(t, conns*per, 5*time.Second)
	if err := stop(); err != nil {
		t.Errorf("ServeTCP: %v", err)
	}
	seen := map[string]int{}
	for _, m := range msgs {
		seen[m]++
	}
	for i := range per {
		if seen[fmt.Sprint("m", i)] != conns {
			t.Fatalf("m%d stored %d times, want %d", i, seen[fmt.Sprint("m", i)], conns)
		}
	}
	if st.Connections.Load() != conns+1 || st.OpenConnections.Load() != 0 || st.BadFrames.Load() != 1 || st.Messages.Load() != conns*per {
		t.Errorf("stats: connections %d, open %d, bad frames %d, messages %d", st.Connections.Load(), st.OpenConnections.Load(), st.BadFrames.Load(), st.Messages.Load())
	}
}

// TestServeTCPIdleFlush checks that the line of a sender that then goes
// quiet (connection left open) is stored within about a second: at once
// by default, and after FlushInterval when IdleFlush is long.
func TestServeTCPIdleFlush(t *testing.T) {
	for _, cfg := range []Config{{}, {IdleFlush: time.Hour}} {
		col := newCollector(t)
		addr, _ := serveTCP(t, cfg, col.sink, nil, nil, nil)
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		io.WriteString(conn, msg5424("h", 1)+"\n")
		limit := 1500 * time.Millisecond
		if cfg.IdleFlush > 0 {
			limit = 2 * time.Second // FlushInterval (1 s) and slack for a loaded machine
		}
		col.wait(t, 1, limit)
		t.Logf("IdleFlush %v: stored after %v", cfg.IdleFlush, time.Since(start))
		// The connection stays usable after a flush on idle.
		io.WriteString(conn, msg5424("h", 2)+"\n")
		col.wait(t, 2, limit)
	}
}

// TestServeTCPBackpressure blocks the sink: the sender blocks eventually
// (the connection is not read), and nothing is lost once it unblocks.
func TestServeTCPBackpressure(t *testing.T) {
	col := newCollector(t)
	release := make(chan struct{})
	var calls atomic.Int64
	sink := func(ctx context.Context, lines []byte, n int) error {
		calls.Add(1)
		<-release
		return col.sink(ctx, lines, n)
	}
	addr, stop := serveTCP(t, Config{}, sink, nil, nil, nil)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(msg5424("h", 1) + " " + strings.Repeat("p", 150) + "\n")
	var written atomic.Int64 // whole lines
	var halt atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer conn.Close()
		for !halt.Load() {
			if _, err := conn.Write(line); err != nil {
				t.Error(err)
				return
			}
			written.Add(1)
		}
	}()
	// Blocked: no progress for half a second.
	last := int64(-1)
	for n := written.Load(); n != last; n = written.Load() {
		last = n
		time.Sleep(500 * time.Millisecond)
		if n > 1e7 {
			t.Fatal("the sender never blocked")
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("%d sink calls, want 1 (blocked)", calls.Load())
	}
	t.Logf("sender blocked after %d lines (%d KiB)", last, last*int64(len(line))/1024)
	halt.Store(true)
	close(release)
	<-done
	lines := int(written.Load())
	col.wait(t, lines, 10*time.Second)
	stop()
	if got := len(col.msgs()); got != lines {
		t.Errorf("stored %d lines, sent %d", got, lines)
	}
}

// TestServeTCPShutdown cancels while a batch is pending: it is stored,
// and ServeTCP returns nil.
func TestServeTCPShutdown(t *testing.T) {
	col := newCollector(t)
	var st Stats
	addr, stop := serveTCP(t, Config{IdleFlush: time.Hour, FlushInterval: time.Hour}, col.sink, &st, nil, nil)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i := range 10 {
		io.WriteString(conn, msg5424("h", i)+"\n")
	}
	for st.Bytes.Load() == 0 || len(col.msgs()) > 0 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := len(col.msgs()); got != 10 {
		t.Errorf("stored %d lines at shutdown, want 10", got)
	}
}

// TestServeTCPSinkError: a failing sink closes the connection, with a
// warning.
func TestServeTCPSinkError(t *testing.T) {
	col := newCollector(t)
	col.err = errors.New("disk on fire")
	var st Stats
	var mu sync.Mutex
	var logBuf strings.Builder
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logBuf}, nil))
	addr, _ := serveTCP(t, Config{}, col.sink, &st, log, nil)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, msg5424("h", 1)+"\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read %v, want EOF", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if st.SinkErrors.Load() != 1 || !strings.Contains(logBuf.String(), "disk on fire") {
		t.Errorf("sink errors %d, log %q", st.SinkErrors.Load(), logBuf.String())
	}
}

// TestServeTCPTLS serves over tls.NewListener: octet-counted and
// '\n'-ended messages, and the idle flush, work as over plain TCP.
func TestServeTCPTLS(t *testing.T) {
	c := testcert.New(t, "spate test")
	cert, pool := c.TLS, c.Pool
	col := newCollector(t)
	var st Stats
	addr, stop := serveTCP(t, Config{}, col.sink, &st, nil, func(ln net.Listener) net.Listener {
		return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}})
	})
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	m := msg5424("tls", 1)
	fmt.Fprintf(conn, "%d %s%s\n", len(m), m, msg5424("tls", 2))
	col.wait(t, 2, 1500*time.Millisecond) // idle flush through TLS
	var b strings.Builder
	for i := 3; i <= 2000; i++ {
		fmt.Fprintf(&b, "%s\n", msg5424("tls", i))
	}
	io.WriteString(conn, b.String())
	conn.Close()
	msgs := col.wait(t, 2000, 5*time.Second)
	if msgs[0] != "m1" || msgs[1999] != "m2000" {
		t.Errorf("first %q, last %q", msgs[0], msgs[1999])
	}
	if err := stop(); err != nil {
		t.Error(err)
	}
}

// TestServeTCPListenerClosed: closing the listener ends ServeTCP with an
// error wrapping net.ErrClosed, after its connections.
func TestServeTCPListenerClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	col := newCollector(t)
	errc := make(chan error, 1)
	go func() {
		errc <- ServeTCP(context.Background(), ln, Config{IdleFlush: time.Hour, FlushInterval: time.Hour}, col.sink, nil, nil)
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, msg5424("h", 1)+"\n")
	time.Sleep(100 * time.Millisecond)
	ln.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("ServeTCP: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeTCP did not return")
	}
	if len(col.msgs()) != 1 {
		t.Errorf("pending line not stored")
	}
}
