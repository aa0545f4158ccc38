package benchhttp

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunLoad(t *testing.T) {
	body := strings.Repeat("x", 5000)
	mux := http.NewServeMux()
	mux.HandleFunc("/length", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		io.WriteString(w, body)
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < len(body); i += 1000 {
			io.WriteString(w, body[i:i+1000])
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, body)
	})
	mux.HandleFunc("/short", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body[:10]) })
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", 500) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	for _, path := range []string{"/length", "/chunked", "/close"} {
		windows := 0
		res, err := RunLoad(context.Background(), Load{
			Addr: addr, Paths: []string{path}, Sizes: []int64{int64(len(body))}, Conns: 3,
			Warmup: 20 * time.Millisecond, Duration: 150 * time.Millisecond,
			Window: func(bool) { windows++ },
		})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if res.Requests == 0 || res.Hist.Count() < res.Requests || windows != 2 {
			t.Fatalf("%s: %d requests, %d latencies, %d window calls", path, res.Requests, res.Hist.Count(), windows)
		}
		// Bytes are counted as they arrive, so the window may hold parts
		// of a response per connection at either edge.
		lo, hi := int64(res.Requests-3)*int64(len(body)), int64(res.Requests+3)*int64(len(body))
		if res.Bytes < lo || res.Bytes > hi {
			t.Errorf("%s: %d bytes for %d requests of %d", path, res.Bytes, res.Requests, len(body))
		}
		if path == "/close" && res.Dials <= 3 {
			t.Errorf("%s: %d dials: the client did not reconnect after Connection: close", path, res.Dials)
		} else if path != "/close" && res.Dials != 3 {
			t.Errorf("%s: %d dials, want one per connection", path, res.Dials)
		}
	}
	for path, want := range map[string]string{"/short": "body of 10 bytes, want 5000", "/fail": "status 500"} {
		_, err := RunLoad(context.Background(), Load{Addr: addr, Paths: []string{path}, Sizes: []int64{5000}, Conns: 2, Duration: time.Second})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", path, err, want)
		}
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	if _, err := RunLoad(context.Background(), Load{Addr: dead, Paths: []string{"/"}, Sizes: []int64{0}, Conns: 1, Duration: time.Second}); err == nil {
		t.Error("no error from a closed port")
	}
}

// BenchmarkClientGet measures the load generator's cost per 6 KiB
// response over loopback (the server's cost included).
func BenchmarkClientGet(b *testing.B) {
	body := Body()
	srv := httptest.NewServer(responseHandler("prebuilt"))
	defer srv.Close()
	st := &connStats{}
	var dials atomic.Int64
	cl := &client{addr: strings.TrimPrefix(srv.URL, "http://"), st: st, dials: &dials}
	if err := cl.dial(); err != nil {
		b.Fatal(err)
	}
	defer cl.close()
	req := []byte("GET /json HTTP/1.1\r\nHost: x\r\n\r\n")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := cl.get(req, int64(len(body))); err != nil {
			b.Fatal(err)
		}
	}
}
