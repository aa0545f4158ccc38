package server

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/spate-io/spate/internal/segment"
)

// route wraps an API handler in what every /insert (and, later, /select)
// endpoint shares, outermost first:
//
//   - metrics: spate_http_requests_total{path,code} and the duration
//     histogram, recorded when the status is written, before the client can
//     see the answer (so a client that reads /metrics after its answer finds
//     its request counted);
//   - shutdown: 503 with Retry-After while the server is closing;
//   - auth: with AuthTokens set, a missing or wrong bearer token gets 401;
//   - tenant: the AccountID and ProjectID headers (decimal uint32, default
//     0) select the tenant, which handlers get with tenantOf; anything else
//     gets 400, as VictoriaLogs answers.
func (s *Server) route(path string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, m: s.m, path: path, start: time.Now()}
		if s.closing.Load() {
			sw.Header().Set("Retry-After", s.retryAfter())
			writeError(sw, http.StatusServiceUnavailable, "the server is shutting down")
			return
		}
		if !s.authorized(r) {
			sw.Header().Set("WWW-Authenticate", `Bearer realm="spate"`)
			writeError(sw, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		t, err := segment.ParseTenantHeaders(r.Header.Get("AccountID"), r.Header.Get("ProjectID"))
		if err != nil {
			writeError(sw, http.StatusBadRequest, err.Error())
			return
		}
		h(sw, r.WithContext(context.WithValue(r.Context(), tenantKey{}, t)))
	})
}

type tenantKey struct{}

// tenantOf returns the tenant route found in r's headers.
func tenantOf(r *http.Request) segment.Tenant {
	t, _ := r.Context().Value(tenantKey{}).(segment.Tenant)
	return t
}

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

// statusWriter records a request's metrics when its status is written.
// Unwrap lets http.ResponseController reach the connection (flushes, read
// deadlines, full duplex).
type statusWriter struct {
	http.ResponseWriter
	m     *serverMetrics
	path  string
	start time.Time
	code  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
		w.m.request(w.path, code, time.Since(w.start))
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
