package benchingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/spate-io/spate/internal/gen"
)

// fakeServer implements the ingest contract of `spate serve`: it answers
// a share of requests with 429 at random (storing nothing), and otherwise
// stores every line and replies with the counts. It counts what it sent.
type fakeServer struct {
	t         *testing.T
	throttle  float64 // share of requests answered with 429
	status    int     // if set, every request gets this status and an error message
	emptyBody bool    // reply 200 with no body, as VictoriaLogs does

	mu        sync.Mutex
	rng       *rand.Rand
	sent429   int64
	lines     map[string]int // every stored line and how often
	nLines    int64
	conns     int // connections opened
	badHeader string
}

func newFake(t *testing.T, throttle float64) (*fakeServer, *httptest.Server) {
	f := &fakeServer{t: t, throttle: throttle, rng: rand.New(rand.NewPCG(1, 2)), lines: map[string]int{}}
	srv := httptest.NewUnstartedServer(f)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			f.mu.Lock()
			f.conns++
			f.mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" {
		f.mu.Lock()
		fmt.Fprintf(w, "# TYPE fake_lines_total counter\nfake_lines_total %d\nfake_up 1\n", f.nLines)
		f.mu.Unlock()
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, "bad gzip", http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path != "/insert/jsonline" || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-ndjson" {
		f.badHeader = r.Method + " " + r.URL.Path + " " + r.Header.Get("Content-Type")
	}
	if f.status != 0 {
		w.WriteHeader(f.status)
		fmt.Fprintf(w, `{"accepted":0,"rejected":0,"errors":[{"line":1,"error":"fake says no"}]}`)
		return
	}
	if f.rng.Float64() < f.throttle {
		f.sent429++
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	n := 0
	for line := range bytes.Lines(data) {
		f.lines[string(line)]++
		n++
	}
	f.nLines += int64(n)
	if f.emptyBody {
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"accepted": n, "rejected": 0, "errors": []any{}})
}

// TestRunVolume sends a volume through a server that throttles a third of
// the requests: every generated line must arrive exactly once, and the
// counts must agree with what the server did.
func TestRunVolume(t *testing.T) {
	const volume = 1 << 20
	var buf bytes.Buffer
	st, err := gen.Write(context.Background(), &buf, gen.Config{Seed: 5, Size: volume, Format: "ndjson"})
	if err != nil {
		t.Fatal(err)
	}
	for _, gz := range []bool{false, true} {
		t.Run(fmt.Sprintf("gzip=%v", gz), func(t *testing.T) {
			fake, srv := newFake(t, 0.3)
			res, err := Run(context.Background(), Config{URL: srv.URL, Clients: 4, Volume: volume, BatchBytes: 32 << 10, Gzip: gz, Seed: 5, MaxBackoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			fake.mu.Lock()
			defer fake.mu.Unlock()
			if fake.badHeader != "" {
				t.Fatalf("the server saw %q", fake.badHeader)
			}
			if res.AcceptedLines != st.Lines || res.PlannedLines != st.Lines || fake.nLines != st.Lines || res.PoolLines != st.Lines {
				t.Fatalf("accepted %d lines (planned %d, pool %d), the server stored %d; generated %d", res.AcceptedLines, res.PlannedLines, res.PoolLines, fake.nLines, st.Lines)
			}
			for line := range bytes.Lines(buf.Bytes()) {
				if fake.lines[string(line)] != 1 {
					t.Fatalf("line stored %d times: %s", fake.lines[string(line)], line)
				}
			}
			if res.AcceptedBytes != st.Bytes || res.PlannedBytes != st.Bytes {
				t.Fatalf("accepted %d bytes (planned %d), generated %d", res.AcceptedBytes, res.PlannedBytes, st.Bytes)
			}
			if fake.sent429 == 0 || res.Throttled != fake.sent429 || res.Status[429] != fake.sent429 {
				t.Fatalf("%d 429s counted (status map %d), the server sent %d", res.Throttled, res.Status[429], fake.sent429)
			}
			if res.OK != int64(res.Bodies) || res.Status[200] != res.OK || res.Requests != res.OK+res.Throttled || res.Failed+res.TransportErrors != 0 {
				t.Fatalf("requests %d, ok %d, bodies %d, statuses %v, failed %d", res.Requests, res.OK, res.Bodies, res.Status, res.Failed)
			}
			if want := float64(res.Throttled) / float64(res.Requests); res.ThrottleRate != want {
				t.Fatalf("429 rate %g, want %g", res.ThrottleRate, want)
			}
			if gz != (res.WireBytes < res.AcceptedBytes) || (!gz && res.WireBytes != res.AcceptedBytes) {
				t.Fatalf("gzip=%v: %d wire bytes for %d raw", gz, res.WireBytes, res.AcceptedBytes)
			}
			if res.MBps <= 0 || res.LinesPerSec <= 0 || res.LatencyMS.P50 <= 0 || res.LatencyMS.P50 > res.LatencyMS.P99 || res.LatencyMS.P99 > res.LatencyMS.Max {
				t.Fatalf("rates and latency: %+v", res)
			}
			// A request that finds no idle connection dials, and takes
			// whichever is ready first, so the start may open a few more
			// than one per client; after that, connections are reused.
			if fake.conns > 2*4 || int64(fake.conns) > res.Requests/4 {
				t.Fatalf("%d connections for 4 clients and %d requests: keep-alive is not working", fake.conns, res.Requests)
			}
			if res.ServerMetrics["fake_lines_total"] != float64(st.Lines) || len(res.ServerMetrics) != 1 {
				t.Fatalf("server metrics delta %v", res.ServerMetrics)
			}
		})
	}
}

// TestRunVolumeCycles sends three times the pool: every line arrives
// three times.
func TestRunVolumeCycles(t *testing.T) {
	fake, srv := newFake(t, 0)
	fake.emptyBody = true // and the VictoriaLogs reply: 200, no body
	res, err := Run(context.Background(), Config{URL: srv.URL + "/", Clients: 2, Volume: 3 * 100 << 10, PoolBytes: 100 << 10, BatchBytes: 8 << 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if res.AcceptedLines != 3*res.PoolLines || res.AcceptedBytes != 3*res.PoolBytes || fake.nLines != res.AcceptedLines {
		t.Fatalf("accepted %d lines, %d bytes; the pool has %d, %d; the server stored %d", res.AcceptedLines, res.AcceptedBytes, res.PoolLines, res.PoolBytes, fake.nLines)
	}
	for line, n := range fake.lines {
		if n != 3 {
			t.Fatalf("line stored %d times: %s", n, line)
		}
	}
}

func TestRunDuration(t *testing.T) {
	fake, srv := newFake(t, 0.1)
	start := time.Now()
	res, err := Run(context.Background(), Config{URL: srv.URL, Clients: 2, Duration: 200 * time.Millisecond, PoolBytes: 256 << 10, BatchBytes: 16 << 10, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("a 200ms run took %v", el)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if res.OK == 0 || res.AcceptedLines != fake.nLines || res.Throttled != fake.sent429 || res.WallSec < 0.2 || res.DurationSec != 0.2 || res.PlannedLines != 0 {
		t.Fatalf("ok %d, accepted %d lines, the server stored %d, 429s %d/%d, wall %.3fs", res.OK, res.AcceptedLines, fake.nLines, res.Throttled, fake.sent429, res.WallSec)
	}
	var out bytes.Buffer
	if err := WriteTable(&out, &res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"MB/s", "429 rate", "P99 ms", "replies by status: 200: ", "fake_lines_total +", "for 0.2s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunFailures(t *testing.T) {
	fake, srv := newFake(t, 0)
	fake.status = http.StatusServiceUnavailable
	res, err := Run(context.Background(), Config{URL: srv.URL, Clients: 2, Volume: 1 << 20, BatchBytes: 16 << 10})
	if err == nil || !strings.Contains(err.Error(), "stopped after 3 failed requests") || !strings.Contains(err.Error(), "503 Service Unavailable") || !strings.Contains(err.Error(), "fake says no") {
		t.Fatalf("error %v", err)
	}
	if res.Failed < 3 || res.Status[503] != res.Failed || res.AcceptedLines != 0 {
		t.Fatalf("failed %d, statuses %v", res.Failed, res.Status)
	}

	// No server at all.
	srv.Close()
	_, err = Run(context.Background(), Config{URL: srv.URL, Clients: 1, Volume: 64 << 10, BatchBytes: 16 << 10})
	if err == nil || !strings.Contains(err.Error(), "stopped after 3 failed requests") {
		t.Fatalf("no server: error %v", err)
	}

	// Cancellation ends a run that a server keeps throttling.
	fake2, srv2 := newFake(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err = Run(ctx, Config{URL: srv2.URL, Clients: 2, Volume: 64 << 10, BatchBytes: 16 << 10, MaxBackoff: time.Millisecond})
	if err != context.DeadlineExceeded || res.Throttled == 0 || res.AcceptedLines != 0 {
		t.Fatalf("cancelled: error %v, %d 429s (the server sent %d)", err, res.Throttled, fake2.sent429)
	}

	if _, err := Run(context.Background(), Config{URL: "localhost:9428"}); err == nil || !strings.Contains(err.Error(), "want http://HOST:PORT") {
		t.Fatalf("bad URL: %v", err)
	}
	if _, err := Run(context.Background(), Config{URL: srv2.URL, Clients: -1}); err == nil || !strings.Contains(err.Error(), "must not be negative") {
		t.Fatalf("negative clients: %v", err)
	}
}
