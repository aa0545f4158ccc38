// Package otlp decodes OpenTelemetry OTLP/HTTP logs requests
// (ExportLogsServiceRequest, in the protobuf or the JSON encoding) into
// ingest.Rows with the fields VictoriaLogs v1.52.1 stores for them
// (app/vlinsert/opentelemetry in VictoriaMetrics/VictoriaLogs), and writes
// the ExportLogsServiceResponse.
//
// Each log record becomes one Row, fields in this order:
//
//   - the resource attributes: the Row's stream fields (Row.Stream counts
//     them), then "event_name" when the record has one (a stream field too);
//   - "scope.name" and "scope.version" when the ScopeLogs has a scope
//     ("unknown" when the scope leaves them out), then the scope attributes
//     as "scope.attributes.<key>";
//   - in the record's wire order: the body (a string, int, double, bool or
//     bytes body is "_msg"; a kvlist body gives its keys as top-level
//     fields; an array body is "_msg" as JSON), the attributes, "trace_id"
//     and "span_id" (lowercase hex);
//   - "severity_number" (decimal, "0" when absent) and "severity_text" (the
//     record's, or when empty the name of the number: "Trace" .. "Fatal4",
//     "Unspecified").
//
// Attribute values: strings as they are, ints in decimal, doubles in the
// shortest 'f' form ("0.55", "NaN", "+Inf"), bools "true"/"false", bytes in
// padded standard base64, arrays as JSON, kvlists flattened to
// "<key>.<subkey>" fields. A KeyValue without a key or without a value is
// left out; an attribute key "" is the message (_msg). Time is
// time_unix_nano, else observed_time_unix_nano, else 0 (the caller stamps
// the ingestion time, as VictoriaLogs stamps time.Now()). Flags, dropped
// counts, schema URLs and the observed time are not stored.
//
// The caller applies the request's ingestion parameters: VictoriaLogs
// renames _msg_field among the non-stream fields, and with _stream_fields
// ignores Row.Stream (-1).
package otlp

import (
	"errors"
	"strconv"
	"sync"

	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/ndjson"
	"google.golang.org/protobuf/encoding/protowire"
)

// Request is a decoded ExportLogsServiceRequest, checked whole. Its
// strings alias the body passed to DecodeProtobuf (which must then not be
// modified while the Request is used) or a buffer of its own (DecodeJSON).
// A Request is read-only: Rows may be called any number of times, also
// concurrently.
type Request struct {
	pb      []byte // the request in the protobuf encoding
	records int
}

// ErrDepth is returned for values nested deeper than MaxDepth.
var ErrDepth = errors.New("otlp: values nested too deeply")

// MaxDepth bounds the nesting of AnyValue arrays and kvlists (and of JSON
// values), as protobuf-go bounds recursion, so that a hostile body cannot
// exhaust the stack. VictoriaLogs has no bound.
const MaxDepth = 10000

// DecodeProtobuf checks the whole ExportLogsServiceRequest in body (the
// protobuf encoding): a truncated or malformed body returns an error and
// no Request, so that no row of it is stored (HTTP 400 at the caller).
// Unknown fields are skipped. The Request aliases body, which must not be
// modified while the Request is used. Cost: one pass over body, no
// allocation but the Request.
func DecodeProtobuf(body []byte) (*Request, error) {
	d := getDecoder(nil)
	defer putDecoder(d)
	d.check = true
	if err := d.request(body); err != nil {
		return nil, err
	}
	return &Request{pb: body, records: d.records}, nil
}

// Unchecked returns the Request of body without checking it: its Rows
// walks body for the first time, and returns the error DecodeProtobuf
// would (after the rows before it), a malformed body never giving a row
// past its first error. For callers that hold rows back until Rows
// returns (ingest.UncheckedRowReader), so that a valid request is walked
// once. Records returns -1. body must not be modified while the Request
// is used.
func Unchecked(body []byte) *Request {
	return &Request{pb: body, records: -1}
}

// Records returns how many log records the request holds: the number of
// Rows that Rows emits; -1 for an Unchecked Request.
func (r *Request) Records() int { return r.records }

// Rows calls emit with one Row per log record, in request order, with the
// Fields VictoriaLogs v1.52.1 stores for it (see the package comment), and
// returns emit's first error, at which it stops (or, for an Unchecked
// Request, the request's first decoding error). The *Row, its Fields and
// the strings of the Fields that are not in the request as such (numbers,
// hex, base64, JSON, dotted names) are reused once emit returns: emit must
// copy what it keeps. Cost: one pass over the request; it allocates only
// to grow buffers it reuses across calls.
func (r *Request) Rows(emit func(*ingest.Row) error) error {
	d := getDecoder(emit)
	defer putDecoder(d)
	err := d.request(r.pb)
	if d.emitErr != nil {
		return d.emitErr // as emit returned it, not wrapped
	}
	return err
}

var decoderPool sync.Pool

func getDecoder(emit func(*ingest.Row) error) *decoder {
	d, _ := decoderPool.Get().(*decoder)
	if d == nil {
		d = new(decoder)
	}
	d.emit = emit
	return d
}

func putDecoder(d *decoder) {
	// Drop the references into the body, so that the pool keeps no
	// request alive.
	clear(d.fields[:cap(d.fields)])
	clear(d.kvs[:cap(d.kvs)])
	*d = decoder{fields: d.fields[:0], buf: d.buf[:0], kvs: d.kvs[:0]}
	decoderPool.Put(d)
}

// AppendResponse appends the ExportLogsServiceResponse body to dst: in the
// JSON encoding when json is set, else in the protobuf encoding. With
// rejected == 0 and msg == "" it is the full success response (an empty
// message, "{}" in JSON); otherwise it has a partial_success with
// rejected_log_records (JSON: "rejectedLogRecords" as a string, as the
// protobuf JSON mapping writes int64) and error_message, each left out
// when zero.
func AppendResponse(dst []byte, json bool, rejected int64, msg string) []byte {
	if json {
		if rejected == 0 && msg == "" {
			return append(dst, "{}"...)
		}
		dst = append(dst, `{"partialSuccess":{`...)
		if rejected != 0 {
			dst = append(dst, `"rejectedLogRecords":"`...)
			dst = strconv.AppendInt(dst, rejected, 10)
			dst = append(dst, '"')
			if msg != "" {
				dst = append(dst, ',')
			}
		}
		if msg != "" {
			dst = append(dst, `"errorMessage":`...)
			dst = ndjson.AppendQuoted(dst, msg)
		}
		return append(dst, "}}"...)
	}
	if rejected == 0 && msg == "" {
		return dst
	}
	n := 0
	if rejected != 0 {
		n += 1 + protowire.SizeVarint(uint64(rejected))
	}
	if msg != "" {
		n += 1 + protowire.SizeBytes(len(msg))
	}
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(n))
	if rejected != 0 {
		dst = protowire.AppendTag(dst, 1, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(rejected))
	}
	if msg != "" {
		dst = protowire.AppendTag(dst, 2, protowire.BytesType)
		dst = protowire.AppendString(dst, msg)
	}
	return dst
}
