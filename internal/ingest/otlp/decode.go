package otlp

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/spate-io/spate/internal/bytesutil"
	"github.com/spate-io/spate/internal/ingest"
	"google.golang.org/protobuf/encoding/protowire"
)

// field is one protobuf field read by next.
type field struct {
	num  uint64
	typ  protowire.Type
	u    uint64 // the value of a varint, fixed64 or fixed32
	data []byte // the payload of a length-delimited field
}

var (
	errTruncated = errors.New("truncated field")
	errVarint    = errors.New("bad varint")
)

// fast reads the most common field, a length-delimited one with a
// one-byte tag and length, from the start of *b into f and advances *b
// past it, or returns false and leaves both for nextSlow. Inlined.
func (f *field) fast(b *[]byte) bool {
	p := *b
	if len(p) < 2 || p[0]&0x87 != 2 || p[1] >= 0x80 || int(p[1]) > len(p)-2 {
		return false
	}
	n := 2 + int(p[1])
	f.num, f.typ, f.data = uint64(p[0]>>3), protowire.BytesType, p[2:n]
	*b = p[n:]
	return true
}

// nextSlow reads the field at the start of b into f and returns the rest
// of b: any field, where fast reads only the most common one. As
// VictoriaLogs (easyproto), it takes field number 0 and numbers up to
// 2^32-1 and rejects groups (wire types 3 and 4) and wire types 6 and 7.
// The walks call fast first, then nextSlow when fast declines.
func nextSlow(b []byte, f *field) ([]byte, error) {
	tag, n := protowire.ConsumeVarint(b)
	if n < 0 {
		return nil, errVarint
	}
	b = b[n:]
	f.num, f.typ = tag>>3, protowire.Type(tag&7)
	if f.num > math.MaxUint32 {
		return nil, fmt.Errorf("field number %d out of range", f.num)
	}
	switch f.typ {
	case protowire.VarintType:
		f.u, n = protowire.ConsumeVarint(b)
		if n < 0 {
			return nil, errVarint
		}
		return b[n:], nil
	case protowire.Fixed64Type:
		if len(b) < 8 {
			return nil, errTruncated
		}
		f.u = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		return b[8:], nil
	case protowire.Fixed32Type:
		if len(b) < 4 {
			return nil, errTruncated
		}
		f.u = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24
		return b[4:], nil
	case protowire.BytesType:
		l, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return nil, errVarint
		}
		b = b[n:]
		if uint64(len(b)) < l {
			return nil, errTruncated
		}
		f.data = b[:l]
		return b[l:], nil
	}
	return nil, fmt.Errorf("unsupported wire type %d of field %d", f.typ, f.num)
}

// wrongType is the error for field num of the wrong wire type.
func wrongType(what string, f *field) error {
	return fmt.Errorf("%s (field %d) has wire type %d", what, f.num, f.typ)
}

// first returns the payload of the first field num in b, which must be
// length-delimited, as easyproto.GetMessageData and GetString read it: the
// scan stops there.
func first(b []byte, num uint64, what string) ([]byte, bool, error) {
	var f field
	for len(b) > 0 {
		var err error
		if !f.fast(&b) {
			if b, err = nextSlow(b, &f); err != nil {
				return nil, false, err
			}
		}
		if f.num == num {
			if f.typ != protowire.BytesType {
				return nil, false, wrongType(what, &f)
			}
			return f.data, true, nil
		}
	}
	return nil, false, nil
}

// decoder walks a request. With check set it only validates it and
// counts records, building no fields; otherwise it calls emit for each
// record. The walk is the same, so that Rows meets no error that the
// check passed.
type decoder struct {
	check   bool
	records int
	emit    func(*ingest.Row) error
	emitErr error // emit's error, which stopped the walk
	row     ingest.Row
	fields  []ingest.Field
	// buf holds the values and names made here, which fields alias. It
	// is cut back to a mark (and overwritten) only once the fields made
	// after the mark are out of use: after each record, ScopeLogs and
	// ResourceLogs. When append moves it, the strings made before keep
	// the old array, alive and unchanged.
	buf []byte
	kvs []member // JSON object members being rendered
}

type member struct{ key, val []byte }

func str(b []byte) string { return bytesutil.ToUnsafeString(b) }

func (d *decoder) add(name, value string) {
	if d.check {
		return
	}
	if name == "" {
		name = "_msg" // VictoriaLogs' canonical name of ""
	}
	d.fields = append(d.fields, ingest.Field{Name: name, Value: value})
}

// made returns buf[n:] as a string: a value just appended to buf.
func (d *decoder) made(n int) string { return str(d.buf[n:]) }

// request walks ExportLogsServiceRequest{repeated ResourceLogs
// resource_logs = 1}.
func (d *decoder) request(b []byte) error {
	var f field
	for i := 0; len(b) > 0; {
		var err error
		if !f.fast(&b) {
			if b, err = nextSlow(b, &f); err != nil {
				return fmt.Errorf("otlp: ExportLogsServiceRequest: %w", err)
			}
		}
		if f.num != 1 {
			continue
		}
		if f.typ != protowire.BytesType {
			return fmt.Errorf("otlp: %w", wrongType("resource_logs", &f))
		}
		if err := d.resourceLogs(f.data); err != nil {
			return fmt.Errorf("otlp: resource_logs[%d]: %w", i, err)
		}
		i++
	}
	return nil
}

// resourceLogs walks ResourceLogs{Resource resource = 1; repeated
// ScopeLogs scope_logs = 2}: the (first) resource first, wherever it is.
func (d *decoder) resourceLogs(b []byte) error {
	d.fields, d.buf = d.fields[:0], d.buf[:0]
	res, ok, err := first(b, 1, "resource")
	if err != nil {
		return err
	}
	if ok {
		if err := d.resource(res); err != nil {
			return fmt.Errorf("resource: %w", err)
		}
	}
	stream, mark := len(d.fields), len(d.buf)
	var f field
	for i := 0; len(b) > 0; {
		if !f.fast(&b) {
			if b, err = nextSlow(b, &f); err != nil {
				return err
			}
		}
		if f.num != 2 {
			continue
		}
		if f.typ != protowire.BytesType {
			return wrongType("scope_logs", &f)
		}
		if err := d.scopeLogs(f.data, stream); err != nil {
			return fmt.Errorf("scope_logs[%d]: %w", i, err)
		}
		d.fields, d.buf = d.fields[:stream], d.buf[:mark]
		i++
	}
	return nil
}

// resource walks Resource{repeated KeyValue attributes = 1}.
func (d *decoder) resource(b []byte) error {
	return d.attributes(b, 1, "", 0)
}

// attributes walks the repeated KeyValue field num of b.
func (d *decoder) attributes(b []byte, num uint64, prefix string, depth int) error {
	var f field
	var err error
	for len(b) > 0 {
		if !f.fast(&b) {
			if b, err = nextSlow(b, &f); err != nil {
				return err
			}
		}
		if f.num != num {
			continue
		}
		if f.typ != protowire.BytesType {
			return wrongType("attributes", &f)
		}
		if err := d.keyValue(f.data, prefix, depth); err != nil {
			return err
		}
	}
	return nil
}

// scopeLogs walks ScopeLogs{InstrumentationScope scope = 1; repeated
// LogRecord log_records = 2}: the (first) scope first.
func (d *decoder) scopeLogs(b []byte, stream int) error {
	scope, ok, err := first(b, 1, "scope")
	if err != nil {
		return err
	}
	if ok {
		if err := d.scope(scope); err != nil {
			return fmt.Errorf("scope: %w", err)
		}
	}
	common, mark := len(d.fields), len(d.buf)
	var f field
	for i := 0; len(b) > 0; {
		if !f.fast(&b) {
			if b, err = nextSlow(b, &f); err != nil {
				return err
			}
		}
		if f.num != 2 {
			continue
		}
		if f.typ != protowire.BytesType {
			return wrongType("log_records", &f)
		}
		if err := d.logRecord(f.data, stream, common); err != nil {
			return fmt.Errorf("log_records[%d]: %w", i, err)
		}
		d.fields, d.buf = d.fields[:common], d.buf[:mark]
		i++
	}
	return nil
}

// scope walks InstrumentationScope{string name = 1; string version = 2;
// repeated KeyValue attributes = 3}: name and version (their first
// occurrence, "unknown" when absent), then the attributes.
func (d *decoder) scope(b []byte) error {
	name, ok, err := first(b, 1, "name")
	if err != nil {
		return err
	}
	if ok {
		d.add("scope.name", str(name))
	} else {
		d.add("scope.name", "unknown")
	}
	version, ok, err := first(b, 2, "version")
	if err != nil {
		return err
	}
	if ok {
		d.add("scope.version", str(version))
	} else {
		d.add("scope.version", "unknown")
	}
	return d.attributes(b, 3, "scope.attributes", 0)
}

// logRecord walks a LogRecord and, unless checking, emits its row.
func (d *decoder) logRecord(b []byte, stream, common int) error {
	d.records++
	var (
		t, observed  uint64
		sevNum       int32
		sevText, evt []byte
		f            field
		err          error
	)
	for len(b) > 0 {
		if !f.fast(&b) {
			if b, err = nextSlow(b, &f); err != nil {
				return err
			}
		}
		switch f.num {
		case 1, 11: // time_unix_nano, observed_time_unix_nano
			if f.typ != protowire.Fixed64Type {
				return wrongType("time", &f)
			}
			if f.num == 1 {
				t = f.u
			} else {
				observed = f.u
			}
		case 2: // severity_number
			if f.typ != protowire.VarintType {
				return wrongType("severity_number", &f)
			}
			if f.u > math.MaxUint32 { // as easyproto: negative int32s too
				return fmt.Errorf("severity_number %d out of range", f.u)
			}
			sevNum = int32(uint32(f.u))
		case 3, 12: // severity_text, event_name
			if f.typ != protowire.BytesType {
				return wrongType("severity_text or event_name", &f)
			}
			if f.num == 3 {
				sevText = f.data
			} else {
				evt = f.data
			}
		case 5: // body
			if f.typ != protowire.BytesType {
				return wrongType("body", &f)
			}
			if err := d.anyValue(f.data, "", 0); err != nil {
				return fmt.Errorf("body: %w", err)
			}
		case 6: // attributes
			if f.typ != protowire.BytesType {
				return wrongType("attributes", &f)
			}
			if err := d.keyValue(f.data, "", 0); err != nil {
				return fmt.Errorf("attributes: %w", err)
			}
		case 9, 10: // trace_id, span_id
			if f.typ != protowire.BytesType {
				return wrongType("trace_id or span_id", &f)
			}
			if !d.check {
				n := len(d.buf)
				d.buf = hex.AppendEncode(d.buf, f.data)
				if f.num == 9 {
					d.add("trace_id", d.made(n))
				} else {
					d.add("span_id", d.made(n))
				}
			}
		}
	}
	if d.check {
		return nil
	}

	n := len(d.buf)
	d.buf = strconv.AppendInt(d.buf, int64(sevNum), 10)
	d.add("severity_number", d.made(n))
	if len(sevText) > 0 {
		d.add("severity_text", str(sevText))
	} else if sevNum >= 0 && int(sevNum) < len(severityNames) {
		d.add("severity_text", severityNames[sevNum])
	} else {
		d.add("severity_text", severityNames[0])
	}

	r := &d.row
	switch {
	case t > 0:
		r.Time = int64(t) // as VictoriaLogs: >= 2^63 wraps negative
	case observed > 0:
		r.Time = int64(observed)
	default:
		r.Time = 0
	}
	r.Stream = stream
	if len(evt) > 0 {
		// event_name is a stream field, after the resource's.
		d.fields = append(d.fields, ingest.Field{})
		copy(d.fields[stream+1:], d.fields[stream:])
		d.fields[stream] = ingest.Field{Name: "event_name", Value: str(evt)}
		r.Stream++
	}
	r.Fields = d.fields
	if err = d.emit(r); err != nil {
		d.emitErr = err
	}
	if len(evt) > 0 {
		copy(d.fields[stream:], d.fields[stream+1:common+1])
	}
	r.Fields = nil
	return err
}

// severityNames are the names of the SeverityNumbers, as VictoriaLogs
// (and the OpenTelemetry collector's pdata) spells them.
var severityNames = [...]string{
	"Unspecified",
	"Trace", "Trace2", "Trace3", "Trace4",
	"Debug", "Debug2", "Debug3", "Debug4",
	"Info", "Info2", "Info3", "Info4",
	"Warn", "Warn2", "Warn3", "Warn4",
	"Error", "Error2", "Error3", "Error4",
	"Fatal", "Fatal2", "Fatal3", "Fatal4",
}

// subName returns prefix.key, or key when prefix is empty.
func (d *decoder) subName(prefix string, key []byte) string {
	if prefix == "" || d.check {
		return str(key)
	}
	n := len(d.buf)
	d.buf = append(d.buf, prefix...)
	d.buf = append(d.buf, '.')
	d.buf = append(d.buf, key...)
	return d.made(n)
}

// keyValue walks KeyValue{string key = 1; AnyValue value = 2}, named
// prefix.key. As in VictoriaLogs, the first key and the first value count,
// and a KeyValue without a key or without a value adds nothing (its value
// is then not looked at).
func (d *decoder) keyValue(b []byte, prefix string, depth int) error {
	key, val, ok, err := splitKeyValue(b)
	if err != nil || !ok {
		return err
	}
	return d.anyValue(val, d.subName(prefix, key), depth)
}

// splitKeyValue returns the key and the value of KeyValue b, and whether
// it has both.
func splitKeyValue(b []byte) (key, val []byte, ok bool, err error) {
	var (
		f                field
		haveKey, haveVal bool
		valErr           error
	)
	for len(b) > 0 {
		if !f.fast(&b) {
			if b, err = nextSlow(b, &f); err != nil {
				return nil, nil, false, err
			}
		}
		switch f.num {
		case 1:
			if !haveKey {
				if f.typ != protowire.BytesType {
					return nil, nil, false, wrongType("key", &f)
				}
				key, haveKey = f.data, true
			}
		case 2:
			if !haveVal {
				haveVal = true
				if f.typ != protowire.BytesType {
					valErr = wrongType("value", &f)
				}
				val = f.data
			}
		}
	}
	if !haveKey {
		return nil, nil, false, nil
	}
	if valErr != nil {
		return nil, nil, false, valErr
	}
	return key, val, haveVal, nil
}

// anyValue walks AnyValue b as the field name: each of its values (a
// well-formed one has one) adds a field, a kvlist its members as
// name.key.
func (d *decoder) anyValue(b []byte, name string, depth int) error {
	if depth > MaxDepth {
		return ErrDepth
	}
	var f field
	var err error
	for len(b) > 0 {
		if !f.fast(&b) {
			if b, err = nextSlow(b, &f); err != nil {
				return err
			}
		}
		switch f.num {
		case 1: // string_value
			if f.typ != protowire.BytesType {
				return wrongType("string_value", &f)
			}
			d.add(name, str(f.data))
		case 2: // bool_value
			if f.typ != protowire.VarintType || f.u > 1 {
				return fmt.Errorf("bad bool_value")
			}
			if f.u == 1 {
				d.add(name, "true")
			} else {
				d.add(name, "false")
			}
		case 3: // int_value
			if f.typ != protowire.VarintType {
				return wrongType("int_value", &f)
			}
			if !d.check {
				n := len(d.buf)
				d.buf = strconv.AppendInt(d.buf, int64(f.u), 10)
				d.add(name, d.made(n))
			}
		case 4: // double_value
			if f.typ != protowire.Fixed64Type {
				return wrongType("double_value", &f)
			}
			if !d.check {
				n := len(d.buf)
				d.buf = strconv.AppendFloat(d.buf, math.Float64frombits(f.u), 'f', -1, 64)
				d.add(name, d.made(n))
			}
		case 5: // array_value, as JSON
			if f.typ != protowire.BytesType {
				return wrongType("array_value", &f)
			}
			n := len(d.buf)
			if err := d.arrayJSON(f.data, depth+1); err != nil {
				return err
			}
			if !d.check {
				d.add(name, d.made(n))
			}
		case 6: // kvlist_value, flattened
			if f.typ != protowire.BytesType {
				return wrongType("kvlist_value", &f)
			}
			if err := d.attributes(f.data, 1, name, depth+1); err != nil {
				return err
			}
		case 7: // bytes_value
			if f.typ != protowire.BytesType {
				return wrongType("bytes_value", &f)
			}
			if !d.check {
				n := len(d.buf)
				d.buf = base64.StdEncoding.AppendEncode(d.buf, f.data)
				d.add(name, d.made(n))
			}
		}
	}
	return nil
}
