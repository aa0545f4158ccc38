package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spate-io/spate/internal/segment"
)

// route wraps an API handler in what every /insert and /select endpoint
// shares, outermost first:
//
//   - metrics: spate_http_requests_total{path,code} and the duration
//     histogram, recorded when the status is written, before the client can
//     see the answer (so a client that reads /metrics after its answer finds
//     its request counted);
//   - shutdown: 503 with Retry-After while the server is closing;
//   - auth: with AuthTokens set, a missing or wrong bearer token gets 401,
//     and a token that may not do what path needs gets 403 (write under
//     /insert/, read under /select/, both elsewhere; see routeNeeds);
//   - tenant: the AccountID and ProjectID headers (decimal uint32, default
//     0) select the tenant, which handlers get with tenantOf; anything else
//     gets 400, as VictoriaLogs answers. A token bound to a tenant acts in
//     it when neither header is set, gets 403 when they name another
//     tenant, and gets 403 at /select/tenant_ids; handlers see the binding
//     with boundTenant.
//
// path is the URL path h serves (the metrics label, and what decides the
// permission); the token table is built once here, not per request.
func (s *Server) route(path string, h http.HandlerFunc) http.Handler {
	need, allTenants := routeNeeds(path)
	auth := newAuthTable(s.cfg.AuthTokens)
	pm := s.m.pathMetrics(path)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, m: pm, start: time.Now()}
		if s.closing.Load() {
			sw.Header().Set("Retry-After", s.retryAfter())
			writeError(sw, http.StatusServiceUnavailable, "the server is shutting down")
			return
		}
		tok := auth.lookup(r)
		if tok == nil {
			sw.Header().Set("WWW-Authenticate", `Bearer realm="spate"`)
			writeError(sw, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		if p := tok.perm(); p&need != need {
			writeError(sw, http.StatusForbidden, fmt.Sprintf("the bearer token may only %s; %s needs %s", p, path, need))
			return
		}
		if tok.Bound && allTenants {
			writeError(sw, http.StatusForbidden, fmt.Sprintf("the bearer token is bound to tenant %s; %s lists every tenant", tok.Tenant, path))
			return
		}
		account, project := r.Header.Get("AccountID"), r.Header.Get("ProjectID")
		t, err := segment.ParseTenantHeaders(account, project)
		if err != nil {
			writeError(sw, http.StatusBadRequest, err.Error())
			return
		}
		ctx := r.Context()
		if tok.Bound {
			if account == "" && project == "" {
				t = tok.Tenant
			} else if t != tok.Tenant {
				writeError(sw, http.StatusForbidden, fmt.Sprintf("the bearer token is bound to tenant %s; the AccountID and ProjectID headers name %s", tok.Tenant, t))
				return
			}
			ctx = context.WithValue(ctx, boundKey{}, tok.Tenant)
		} else if t == (segment.Tenant{}) {
			h(sw, r) // tenantOf gives the default tenant: no copy of r
			return
		}
		h(sw, r.WithContext(context.WithValue(ctx, tenantKey{}, t)))
	})
}

type tenantKey struct{}

// contextWithTenant returns ctx with t as the tenant tenantOf gives.
func contextWithTenant(ctx context.Context, t segment.Tenant) context.Context {
	return context.WithValue(ctx, tenantKey{}, t)
}

// tenantOf returns the tenant route chose for r: its headers', or its
// token's bound tenant; the default tenant (0:0) when none is recorded.
func tenantOf(r *http.Request) segment.Tenant {
	t, _ := r.Context().Value(tenantKey{}).(segment.Tenant)
	return t
}

// statusWriter records a request's metrics when its status is written.
// Unwrap lets http.ResponseController reach the connection (flushes, read
// deadlines, full duplex).
type statusWriter struct {
	http.ResponseWriter
	m     *pathMetrics
	start time.Time
	code  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
		w.m.request(code, time.Since(w.start))
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

// ReadFrom passes io.ReaderFrom through, so that a file copied to the
// answer (fileserve, through http.ServeContent) goes out with sendfile(2).
func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return io.Copy(w.ResponseWriter, r)
}
