package server

import (
	"fmt"
	"mime"
	"net/http"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/ingest/otlp"
	"github.com/spate-io/spate/internal/ndjson"
)

// handleOTLP serves POST /insert/opentelemetry/v1/logs, OTLP/HTTP logs
// (https://opentelemetry.io/docs/specs/otlp/#otlphttp) in JSON
// (application/json; VictoriaLogs refuses it) or protobuf (any other
// Content-Type, as VictoriaLogs reads it), gzip or zstd compressed or not. The
// whole request is checked before any of it is stored: a bad one gets 400
// and stores nothing. Success is 200 with an ExportLogsServiceResponse in
// the request's encoding, with partial_success when some records were
// rejected; failures carry a google.rpc.Status, and 429 and 503 a
// Retry-After, which OTLP exporters honour.
func (s *Server) handleOTLP(w http.ResponseWriter, r *http.Request) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	isJSON := mt == "application/json"
	spec, release := s.wholeSpec(tenantOf(r), func(data []byte, p *ingest.Params) (func(func(*ingest.Row) error) error, func() error, error) {
		// _msg_field never takes a resource attribute, as in VictoriaLogs.
		msgFields := p.MsgFields
		p.MsgFields = nil
		if isJSON {
			req, err := otlp.DecodeJSON(data)
			if err != nil {
				return nil, nil, fmt.Errorf("cannot read the OTLP logs request: %w", err)
			}
			return ingest.RenameMsgField(msgFields, req.Rows), nil, nil
		}
		// Protobuf: decoded before it is checked, so that a request whose
		// rows fit in a few chunks is walked once; one that fails is
		// refused whole all the same.
		check := func() error {
			if _, err := otlp.DecodeProtobuf(data); err != nil {
				return fmt.Errorf("cannot read the OTLP logs request: %w", err)
			}
			return nil
		}
		return ingest.RenameMsgField(msgFields, otlp.Unchecked(data).Rows), check, nil
	})
	defer release()
	s.serveProtocol(w, r, &spec, "POST", func(code int, rep *insertReport) {
		ct := "application/x-protobuf"
		if isJSON {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		if code == http.StatusOK || (code == http.StatusBadRequest && rep.Accepted == 0 && rep.Rejected > 0) {
			// Every record was read: some may have been rejected (a line
			// over the size limit), which is a partial success.
			msg := ""
			if rep.Rejected > 0 && len(rep.Errors) > 0 {
				msg = fmt.Sprintf("%d log records rejected; the first: record %d: %s", rep.Rejected, rep.Errors[0].Line, rep.Errors[0].Error)
			}
			w.WriteHeader(http.StatusOK)
			w.Write(otlp.AppendResponse(nil, isJSON, rep.Rejected, msg))
			return
		}
		w.WriteHeader(code)
		w.Write(appendRPCStatus(nil, isJSON, code, rep.Error))
	})
}

// appendRPCStatus appends the google.rpc.Status OTLP/HTTP failures carry
// (code=1, message=2), in JSON or protobuf, with the gRPC code of the HTTP
// status.
func appendRPCStatus(dst []byte, json bool, httpCode int, msg string) []byte {
	code := 13 // INTERNAL
	switch httpCode {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusMethodNotAllowed:
		code = 3 // INVALID_ARGUMENT
	case http.StatusTooManyRequests:
		code = 8 // RESOURCE_EXHAUSTED
	case http.StatusServiceUnavailable:
		code = 14 // UNAVAILABLE
	case http.StatusRequestTimeout:
		code = 4 // DEADLINE_EXCEEDED
	case http.StatusUnauthorized:
		code = 16 // UNAUTHENTICATED
	case http.StatusForbidden:
		code = 7 // PERMISSION_DENIED
	}
	if json {
		dst = fmt.Appendf(dst, `{"code":%d,"message":`, code)
		dst = ndjson.AppendQuoted(dst, msg)
		return append(dst, '}')
	}
	dst = protowire.AppendTag(dst, 1, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(code))
	dst = protowire.AppendTag(dst, 2, protowire.BytesType)
	return protowire.AppendString(dst, msg)
}
