package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPeerConns checks the fan-out's own HTTP client against net/http's
// server: answers with a length and chunked ones, kept-alive connections
// reused, a connection the server closed replaced, "Connection: close"
// honoured, a body left unread, and a request cancelled while its answer
// is on the wire.
func TestPeerConns(t *testing.T) {
	release := make(chan struct{})
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		q := r.Form.Get("query")
		switch q {
		case "chunked":
			for i := range 5 {
				io.WriteString(w, strings.Repeat(string(rune('a'+i)), 10000))
				w.(http.Flusher).Flush()
			}
		case "close":
			w.Header().Set("Connection", "close")
			io.WriteString(w, "bye")
		case "big":
			io.WriteString(w, strings.Repeat("x", 1<<20))
		case "hang":
			io.WriteString(w, "part")
			w.(http.Flusher).Flush()
			<-release
		default:
			io.WriteString(w, "echo "+q)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	defer close(release)

	p := &peerConns{idle: map[string][]*peerConn{}}
	ask := func(ctx context.Context, q string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/select/logsql/query", strings.NewReader("query="+q))
		if err != nil {
			return "", err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := p.do(ctx, req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	must := func(q, want string) {
		t.Helper()
		got, err := ask(context.Background(), q)
		if err != nil || got != want {
			t.Fatalf("%s: %.40q, %v; want %.40q", q, got, err, want)
		}
	}
	wantConns := func(n int64) {
		t.Helper()
		if got := conns.Load(); got != n {
			t.Fatalf("%d connections, want %d", got, n)
		}
	}

	for range 5 {
		must("one", "echo one")
	}
	wantConns(1)
	chunked := ""
	for i := range 5 {
		chunked += strings.Repeat(string(rune('a'+i)), 10000)
	}
	must("chunked", chunked)
	must("big", strings.Repeat("x", 1<<20))
	wantConns(1)

	// Concurrent requests each get a connection, and all are kept.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got, err := ask(context.Background(), "c"); err != nil || got != "echo c" {
				t.Errorf("concurrent: %q, %v", got, err)
			}
		})
	}
	wg.Wait()
	n := conns.Load()
	for range 8 {
		must("after", "echo after")
	}
	wantConns(n)

	// The server drops its idle connections: the next request replaces one.
	srv.CloseClientConnections()
	must("again", "echo again")
	wantConns(n + 1)

	// "Connection: close" is not kept.
	must("close", "bye")
	must("next", "echo next")
	wantConns(n + 2)

	// A body closed unread loses its connection (past a short tail).
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/", strings.NewReader("query=big"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := p.do(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	must("fresh", "echo fresh")
	wantConns(n + 3)

	// A request cancelled while its answer is on the wire fails at once.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := ask(ctx, "hang")
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("a cancelled request succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled request still waits after 5 s")
	}
	must("last", "echo last")

	// A peer that is not there.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	req, _ = http.NewRequest(http.MethodPost, deadURL+"/", strings.NewReader("query=x"))
	var op *net.OpError
	if _, err := p.do(context.Background(), req); !errors.As(err, &op) || op.Op != "dial" {
		t.Fatalf("a dead peer: %v", err)
	}
}
