package server

import (
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

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
	spec, release := s.wholeSpec(tenantOf(r), func(data []byte, p *ingest.Params) (func(func(*ingest.Row) error) error, func() error, error) {
		var req *loki.Request
		var err error
		if isJSON {
			req, err = loki.DecodeJSON(data)
		} else {
			var raw []byte
			if raw, err = loki.Snappy(nil, data, int(s.wholeBodyLimit())); err == nil {
				req, err = loki.DecodeProtobuf(raw)
			}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("cannot read the Loki push: %w", err)
		}
		opts.MsgFields, opts.HasStreamFields = p.MsgFields, len(p.StreamFields) > 0
		// _msg_field applies to parsed messages only (above), as in
		// VictoriaLogs.
		p.MsgFields = nil
		return func(emit func(*ingest.Row) error) error { return req.Rows(opts, emit) }, nil, nil
	})
	defer release()
	s.serveProtocol(w, r, &spec, "POST", func(code int, rep *insertReport) {
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
