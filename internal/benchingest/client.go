package benchingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxResponse bounds the response body a client reads and keeps; the rest
// is drained unread so that the connection can be reused.
const maxResponse = 1 << 20

// run is the state the clients of one Run share. Apart from the atomics
// and the mutex-guarded failure, it is read-only once the clients start.
type run struct {
	cfg      *Config
	client   *http.Client
	url      string
	bodies   []body
	total    int64     // bodies to send in volume mode; -1 in duration mode
	deadline time.Time // duration mode: no body is started after it
	cancel   context.CancelFunc

	next atomic.Int64 // index of the next body to send, modulo len(bodies)

	mu       sync.Mutex
	failures int   // failed requests (not 429) so far
	stopErr  error // set when failures reached MaxErrors; ends the run
}

// clientStats is what one client measured. Each client owns its own, so
// the hot loop shares no counters; Run merges them at the end.
type clientStats struct {
	requests        int64
	ok              int64
	throttled       int64
	failed          int64
	transportErrors int64
	acceptedLines   int64
	rejectedLines   int64
	acceptedBytes   int64
	wireBytes       int64
	status          map[int]int64
	lat             []time.Duration // of successful requests
}

// ingestResponse is the part of the server's JSON reply a client needs.
// The per-line errors are skipped without being decoded.
type ingestResponse struct {
	Accepted *int64 `json:"accepted"`
	Rejected int64  `json:"rejected"`
}

// take returns the next body to send, or false when the run is over: the
// volume is sent, the duration is up, or the run was stopped.
func (r *run) take(ctx context.Context) (*body, bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	if r.total < 0 && !time.Now().Before(r.deadline) {
		return nil, false
	}
	i := r.next.Add(1) - 1
	if r.total >= 0 && i >= r.total {
		return nil, false
	}
	return &r.bodies[i%int64(len(r.bodies))], true
}

// fail records a failed request. It returns true when the run must stop
// because MaxErrors failures have been seen; the first such call sets the
// run's error and cancels the other clients' requests.
func (r *run) fail(err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures++
	if r.stopErr == nil && r.failures >= r.cfg.MaxErrors {
		r.stopErr = fmt.Errorf("stopped after %d failed requests; the last: %w", r.failures, err)
		r.cancel()
	}
	return r.stopErr != nil
}

// loop is one client: it sends bodies until take says stop. A 429 makes it
// wait (Retry-After, capped at MaxBackoff) and send the same body again, so
// that in volume mode exactly the planned bodies are accepted. Any other
// failure drops the body and counts towards MaxErrors.
func (r *run) loop(ctx context.Context, st *clientStats) {
	var resp bytes.Buffer
	resp.Grow(4 << 10)
	for {
		b, ok := r.take(ctx)
		if !ok {
			return
		}
	attempts:
		for {
			start := time.Now()
			status, retryAfter, err := r.post(ctx, b, &resp)
			lat := time.Since(start)
			st.requests++
			if err != nil {
				if ctx.Err() != nil {
					return // stopped (or cancelled) while in flight: not a failure of this request
				}
				st.transportErrors++
				if r.fail(err) {
					return
				}
				break
			}
			st.status[status]++
			switch {
			case status >= 200 && status < 300:
				acc, rej, err := r.cfg.Protocol.parseReply(resp.Bytes(), b.lines)
				if err != nil {
					st.failed++
					if r.fail(err) {
						return
					}
					break attempts
				}
				st.ok++
				st.acceptedLines += acc
				st.rejectedLines += rej
				st.acceptedBytes += int64(len(b.raw))
				st.wireBytes += int64(len(b.wire))
				st.lat = append(st.lat, lat)
				break attempts
			case status == http.StatusTooManyRequests:
				st.throttled++
				if !sleep(ctx, retryDelay(retryAfter, time.Now(), r.cfg.MaxBackoff)) {
					return
				}
				if r.total < 0 && !time.Now().Before(r.deadline) {
					return // duration mode: time is up; the body was not accepted
				}
			default:
				st.failed++
				if r.fail(fmt.Errorf("server replied %d %s: %s", status, http.StatusText(status), serverMessage(resp.Bytes()))) {
					return
				}
				break attempts
			}
		}
	}
}

// post sends one body and reads the reply into resp (reset first, at most
// maxResponse bytes kept). It drains and closes the response body so that
// the keep-alive connection is reused. err is non-nil only when no HTTP
// reply was read.
func (r *run) post(ctx context.Context, b *body, resp *bytes.Buffer) (status int, retryAfter string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(b.wire))
	if err != nil {
		return 0, "", fmt.Errorf("cannot make a request to %s: %w", r.url, err)
	}
	req.Header.Set("Content-Type", r.cfg.Protocol.contentType())
	if r.cfg.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	if r.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.cfg.Token)
	}
	res, err := r.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	resp.Reset()
	_, err = resp.ReadFrom(io.LimitReader(res.Body, maxResponse))
	if err == nil {
		_, err = io.Copy(io.Discard, res.Body)
	}
	if err != nil {
		return 0, "", fmt.Errorf("cannot read the reply to a request: %w", err)
	}
	return res.StatusCode, res.Header.Get("Retry-After"), nil
}

// parseResponse returns the accepted and rejected line counts of a 2xx
// reply. An empty reply (VictoriaLogs sends none) counts every line of the
// body as accepted.
func parseResponse(p []byte, lines int64) (accepted, rejected int64, err error) {
	if len(bytes.TrimSpace(p)) == 0 {
		return lines, 0, nil
	}
	var v ingestResponse
	if err := json.Unmarshal(p, &v); err != nil {
		return 0, 0, fmt.Errorf("cannot parse the server's reply %q: %w", serverMessage(p), err)
	}
	if v.Accepted == nil {
		return 0, 0, fmt.Errorf("cannot parse the server's reply %q: no \"accepted\" count", serverMessage(p))
	}
	return *v.Accepted, v.Rejected, nil
}

// serverMessage returns the reply body for an error message: trimmed,
// and cut to 300 bytes.
func serverMessage(p []byte) string {
	s := strings.TrimSpace(string(p))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		s = "(empty reply)"
	}
	return s
}

// retryDelay returns how long to wait after a 429 whose Retry-After header
// is h: delay-seconds ("2") or an HTTP date, relative to now. The result
// is within [0, maxWait]; a missing or unparsable header means maxWait.
// The cap keeps a benchmark from idling for the whole second a server
// typically asks for: the server's queue drains in less.
func retryDelay(h string, now time.Time, maxWait time.Duration) time.Duration {
	h = strings.TrimSpace(h)
	d := maxWait
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		d = time.Duration(min(max(secs, 0), int64(maxWait/time.Second)+1)) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxWait)
}

// sleep waits for d or until ctx is done; it reports whether the whole
// wait passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
