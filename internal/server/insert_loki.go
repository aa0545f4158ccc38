package server

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/ingest/loki"
	"github.com/spate-io/spate/internal/segment"
)

// handleLoki serves POST /insert/loki/api/v1/push (Promtail, Grafana
// Alloy, the Loki Docker driver): a push in JSON (Content-Type
// application/json), or in protobuf compressed with snappy's block format
// (any other Content-Type, as VictoriaLogs reads it). The whole body is checked before
// any of it is stored: a bad one gets 400 and stores nothing. Labels are
// the stream fields unless _stream_fields says otherwise; a message that is
// a JSON object becomes fields, as in VictoriaLogs. Success is 204 No
// Content. X-Scope-OrgID names the tenant ("account" or
// "account:project") when the AccountID and ProjectID headers do not.
func (s *Server) handleLoki(w http.ResponseWriter, r *http.Request) {
	r, err := lokiTenant(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	isJSON := mt == "application/json"
	opts, err := lokiOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var release func()
	defer func() {
		if release != nil {
			release()
		}
	}()
	spec := insertSpec{
		emptyOK: true,
		lines: func(body io.Reader, p *ingest.Params) (io.Reader, error) {
			data, rel, err := s.readWhole(body)
			if err != nil {
				return nil, err
			}
			release = rel
			var req *loki.Request
			if isJSON {
				req, err = loki.DecodeJSON(data)
			} else {
				var raw []byte
				if raw, err = loki.Snappy(nil, data, int(s.wholeBodyLimit())); err == nil {
					req, err = loki.DecodeProtobuf(raw)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("cannot read the Loki push: %w", err)
			}
			opts.MsgFields, opts.HasStreamFields = p.MsgFields, len(p.StreamFields) > 0
			// The entries carry their own time, and _msg_field applies to
			// parsed messages only (above), as in VictoriaLogs.
			p.TimeField, p.MsgFields = "", nil
			return ingest.RowReader(tenantOf(r), func(emit func(*ingest.Row) error) error {
				return req.Rows(opts, emit)
			}), nil
		},
	}
	s.serveProtocol(w, r, &spec, func(code int, rep *insertReport) {
		if code == http.StatusOK {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		http.Error(w, rep.Error, code)
	})
}

// lokiOptions reads the Loki-specific request settings: message parsing
// (disable_message_parsing / VL-Loki-Disable-Message-Parsing), the prefix
// of parsed fields (message_fields_prefix / VL-Loki-Message-Fields-Prefix)
// and preserve_json_keys / VL-Preserve-JSON-Keys.
func lokiOptions(r *http.Request) (loki.Options, error) {
	get := func(arg, header string) string {
		if v := r.URL.Query().Get(arg); v != "" {
			return v
		}
		return r.Header.Get(header)
	}
	o := loki.Options{ParseMessage: true, MessageFieldsPrefix: get("message_fields_prefix", "VL-Loki-Message-Fields-Prefix")}
	if v := get("disable_message_parsing", "VL-Loki-Disable-Message-Parsing"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return o, fmt.Errorf("cannot parse disable_message_parsing=%q: want true or false", v)
		}
		o.ParseMessage = !b
	}
	for _, k := range strings.Split(get("preserve_json_keys", "VL-Preserve-JSON-Keys"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			o.PreserveKeys = append(o.PreserveKeys, k)
		}
	}
	return o, nil
}

// lokiTenant applies X-Scope-OrgID, Loki's tenant header, when route found
// no tenant in AccountID and ProjectID: "A" or "A:P". A token bound to a
// tenant allows only that one.
func lokiTenant(r *http.Request) (*http.Request, error) {
	org := strings.TrimSpace(r.Header.Get("X-Scope-OrgID"))
	if org == "" || r.Header.Get("AccountID") != "" || r.Header.Get("ProjectID") != "" {
		return r, nil
	}
	account, project, _ := strings.Cut(org, ":")
	t, err := segment.ParseTenantHeaders(account, project)
	if err != nil {
		return r, fmt.Errorf("cannot parse X-Scope-OrgID %q as a tenant (ACCOUNT or ACCOUNT:PROJECT, decimal): %w", org, err)
	}
	if b, ok := boundTenant(r); ok && b != t {
		return r, fmt.Errorf("the bearer token is bound to tenant %s; X-Scope-OrgID names %s", b, t)
	}
	return r.WithContext(contextWithTenant(r.Context(), t)), nil
}

// serveProtocol runs insertWith for a protocol whose answer is its own:
// answer writes it from the status and report (after any 429's
// Retry-After is set). The rest of an unread body is drained as for
// /insert/jsonline.
func (s *Server) serveProtocol(w http.ResponseWriter, r *http.Request, spec *insertSpec, answer func(code int, rep *insertReport)) {
	start := time.Now()
	s.ingesting.Add(1)
	defer s.ingesting.Add(-1)
	rc := http.NewResponseController(w)
	rc.EnableFullDuplex()
	body := &bodyReader{r: r.Body, rc: rc, idle: s.cfg.ReadTimeout}
	var rep insertReport
	code := s.insertWith(r, body, &rep, spec)
	switch code {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", s.retryAfter())
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", "POST")
	}
	rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
	answer(code, &rep)
	if !body.eof {
		s.finishBody(r, rc, body)
	}
	if code >= 400 {
		level := s.log.Warn
		if code >= 500 {
			level = s.log.Error
		}
		level("ingest request failed", "path", r.URL.Path, "remote", r.RemoteAddr, "code", code,
			"accepted", rep.Accepted, "rejected", rep.Rejected, "err", rep.Error, "duration", time.Since(start))
	}
}
