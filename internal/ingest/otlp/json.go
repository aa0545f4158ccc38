package otlp

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/spate-io/spate/internal/ndjson"
	"google.golang.org/protobuf/encoding/protowire"
)

// DecodeJSON decodes an ExportLogsServiceRequest in the OTLP/JSON encoding
// (the protobuf JSON mapping with the OTLP rules): field names in
// lowerCamelCase or as in the .proto, traceId and spanId as hex (not
// base64), 64-bit integers as strings or numbers (exponents allowed when
// the value is whole), severityNumber as a number or its enum name,
// bytesValue in base64 (standard or URL alphabet, padded or not), doubles
// as numbers or "NaN", "Infinity", "-Infinity". Unknown fields are
// skipped; null is an absent field (an empty message in a list). The body
// is turned into the protobuf encoding a protobuf library would marshal
// for the same data (scalars at their zero value left out, oneof members
// and messages kept) and checked as DecodeProtobuf checks it, so that it
// gives the same Rows. The Request does not alias body. Cost: one pass
// over body and one over the protobuf it makes, about as large.
func DecodeJSON(body []byte) (*Request, error) {
	j := jsonDec{in: body, out: make([]byte, 0, len(body)/2)}
	if err := j.request(); err != nil {
		return nil, fmt.Errorf("otlp: JSON: %w at byte %d", err, j.pos)
	}
	j.ws()
	if j.pos != len(j.in) {
		return nil, fmt.Errorf("otlp: JSON: data after the request at byte %d", j.pos)
	}
	return DecodeProtobuf(j.out)
}

// jsonDec reads JSON from in and writes protobuf to out.
type jsonDec struct {
	in    []byte
	pos   int
	out   []byte
	key   []byte // the decoded current key
	tmp   []byte
	depth int
}

var (
	errEOF       = errors.New("unexpected end of JSON")
	errSyntax    = errors.New("invalid JSON")
	errNotObject = errors.New("expected a JSON object")
	errNotArray  = errors.New("expected a JSON array")
	errNotString = errors.New("expected a JSON string")
	errNotNumber = errors.New("expected a number")
	errRange     = errors.New("number out of range")
	errOneof     = errors.New("AnyValue has more than one value")
)

func (j *jsonDec) ws() {
	for j.pos < len(j.in) {
		switch j.in[j.pos] {
		case ' ', '\t', '\n', '\r':
			j.pos++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, 0 at the end.
func (j *jsonDec) peek() byte {
	j.ws()
	if j.pos < len(j.in) {
		return j.in[j.pos]
	}
	return 0
}

// null consumes a null if one is next.
func (j *jsonDec) null() bool {
	if j.peek() == 'n' && strings.HasPrefix(str(j.in[j.pos:]), "null") {
		j.pos += 4
		return true
	}
	return false
}

// object starts reading an object ('{' is next, or null: ok is false).
func (j *jsonDec) object() (ok bool, err error) {
	if j.null() {
		return false, nil
	}
	if j.peek() != '{' {
		return false, errNotObject
	}
	j.pos++
	return true, nil
}

// member reads the next member's key of the object being read, and its
// ':'; more is false at the closing '}'.
func (j *jsonDec) member(first bool) (more bool, err error) {
	c := j.peek()
	if c == '}' {
		j.pos++
		return false, nil
	}
	if !first {
		if c != ',' {
			return false, j.syntax()
		}
		j.pos++
		j.ws()
	}
	raw, err := j.rawString()
	if err != nil {
		return false, err
	}
	if j.key, err = ndjson.AppendUnescape(j.key[:0], raw); err != nil {
		return false, err
	}
	if j.peek() != ':' {
		return false, j.syntax()
	}
	j.pos++
	return true, nil
}

// array starts reading an array ('[' is next, or null: ok is false).
func (j *jsonDec) array() (ok bool, err error) {
	if j.null() {
		return false, nil
	}
	if j.peek() != '[' {
		return false, errNotArray
	}
	j.pos++
	return true, nil
}

// elem moves to the next element of the array being read; more is false
// at the closing ']'.
func (j *jsonDec) elem(first bool) (more bool, err error) {
	c := j.peek()
	if c == ']' {
		j.pos++
		return false, nil
	}
	if !first {
		if c != ',' {
			return false, j.syntax()
		}
		j.pos++
	}
	return true, nil
}

func (j *jsonDec) syntax() error {
	if j.pos >= len(j.in) {
		return errEOF
	}
	return fmt.Errorf("%w: unexpected %q", errSyntax, j.in[j.pos])
}

// rawString reads a string and returns its contents, undecoded.
func (j *jsonDec) rawString() ([]byte, error) {
	if j.peek() != '"' {
		return nil, errNotString
	}
	i := j.pos + 1
	for i < len(j.in) {
		switch j.in[i] {
		case '"':
			raw := j.in[j.pos+1 : i]
			j.pos = i + 1
			return raw, nil
		case '\\':
			i += 2
		default:
			i++
		}
	}
	j.pos = len(j.in)
	return nil, errEOF
}

// str reads a string and returns it decoded (in tmp, or in place when it
// has no escapes).
func (j *jsonDec) str() ([]byte, error) {
	raw, err := j.rawString()
	if err != nil {
		return nil, err
	}
	j.tmp, err = ndjson.AppendUnescape(j.tmp[:0], raw)
	return j.tmp, err
}

// rawNumber reads a number as its JSON text.
func (j *jsonDec) rawNumber() ([]byte, error) {
	j.ws()
	start := j.pos
	if n := numberLen(j.in[j.pos:]); n > 0 {
		j.pos += n
		return j.in[start:j.pos], nil
	}
	return nil, errNotNumber
}

// numberLen returns the length of the JSON number at the start of b, or 0.
func numberLen(b []byte) int {
	i := 0
	digits := func() int {
		k := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - k
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return 0
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return 0
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0
		}
	}
	return i
}

// numText reads a number or a string holding one and returns its text.
func (j *jsonDec) numText() ([]byte, error) {
	if j.peek() != '"' {
		return j.rawNumber()
	}
	s, err := j.str()
	if err != nil {
		return nil, err
	}
	if len(s) == 0 || numberLen(s) != len(s) {
		return nil, errNotNumber
	}
	return s, nil
}

// wholeNumber returns the value of number text s when it is a whole
// number (1e3 and 1000.0 are), as a big.Int.
func wholeNumber(s []byte) (*big.Int, error) {
	// Bound the work big.Rat may do (1e999999999 is a whole number).
	if len(s) > 64 {
		return nil, errRange
	}
	if i := strings.IndexAny(str(s), "eE"); i >= 0 {
		if e, err := strconv.Atoi(str(s[i+1:])); err != nil || e > 64 || e < -64 {
			return nil, errRange
		}
	}
	r, ok := new(big.Rat).SetString(string(s))
	if !ok || !r.IsInt() {
		return nil, errNotNumber
	}
	return r.Num(), nil
}

func (j *jsonDec) uint64Val() (uint64, error) {
	s, err := j.numText()
	if err != nil {
		return 0, err
	}
	if v, err := strconv.ParseUint(str(s), 10, 64); err == nil {
		return v, nil
	}
	n, err := wholeNumber(s)
	if err != nil {
		return 0, err
	}
	if n.Sign() < 0 || !n.IsUint64() {
		return 0, errRange
	}
	return n.Uint64(), nil
}

func (j *jsonDec) int64Val(lo, hi int64) (int64, error) {
	s, err := j.numText()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(str(s), 10, 64)
	if err != nil {
		n, err := wholeNumber(s)
		if err != nil {
			return 0, err
		}
		if !n.IsInt64() {
			return 0, errRange
		}
		v = n.Int64()
	}
	if v < lo || v > hi {
		return 0, errRange
	}
	return v, nil
}

func (j *jsonDec) doubleVal() (float64, error) {
	if j.peek() == '"' {
		s, err := j.str()
		if err != nil {
			return 0, err
		}
		switch string(s) {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		if len(s) == 0 || numberLen(s) != len(s) {
			return 0, errNotNumber
		}
		return parseFloat(s)
	}
	s, err := j.rawNumber()
	if err != nil {
		return 0, err
	}
	return parseFloat(s)
}

func parseFloat(s []byte) (float64, error) {
	v, err := strconv.ParseFloat(str(s), 64)
	if err != nil {
		return 0, errRange
	}
	return v, nil
}

// severityNumber reads a SeverityNumber: a number or an enum name.
func (j *jsonDec) severityNumber() (int64, error) {
	if j.peek() == '"' {
		save := j.pos
		s, err := j.str()
		if err != nil {
			return 0, err
		}
		if v, ok := severityByName(string(s)); ok {
			return v, nil
		}
		j.pos = save
	}
	return j.int64Val(math.MinInt32, math.MaxInt32)
}

// severityByName returns the value of a SeverityNumber name, such as
// SEVERITY_NUMBER_INFO2.
func severityByName(s string) (int64, bool) {
	s, ok := strings.CutPrefix(s, "SEVERITY_NUMBER_")
	if !ok {
		return 0, false
	}
	if s == "UNSPECIFIED" {
		return 0, true
	}
	k := int64(0)
	if n := len(s); n > 0 && s[n-1] >= '2' && s[n-1] <= '4' {
		k = int64(s[n-1] - '1')
		s = s[:n-1]
	}
	for i, name := range [...]string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"} {
		if s == name {
			return int64(i)*4 + 1 + k, true
		}
	}
	return 0, false
}

// skip reads any value.
func (j *jsonDec) skip() error {
	switch c := j.peek(); c {
	case '{', '[':
		if j.depth++; j.depth > MaxDepth {
			return ErrDepth
		}
		j.pos++
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		for first := true; ; first = false {
			var more bool
			var err error
			if closing == '}' {
				more, err = j.member(first)
			} else {
				more, err = j.elem(first)
			}
			if err != nil {
				return err
			}
			if !more {
				break
			}
			if err := j.skip(); err != nil {
				return err
			}
		}
		j.depth--
		return nil
	case '"':
		_, err := j.str()
		return err
	case 't', 'f', 'n':
		for _, lit := range [...]string{"true", "false", "null"} {
			if strings.HasPrefix(str(j.in[j.pos:]), lit) {
				j.pos += len(lit)
				return nil
			}
		}
		return j.syntax()
	default:
		_, err := j.rawNumber()
		if err != nil {
			return j.syntax()
		}
		return nil
	}
}

// Writing protobuf.

// open starts the length-delimited field num and returns where its
// contents start, for close.
func (j *jsonDec) open(num protowire.Number) int {
	j.out = protowire.AppendTag(j.out, num, protowire.BytesType)
	j.out = append(j.out, 0) // the length, if under 128
	return len(j.out)
}

var zeros [binaryMaxVarintLen]byte

const binaryMaxVarintLen = 10

// close ends the field opened at start: it writes its length, moving the
// contents when the length takes more than a byte.
func (j *jsonDec) close(start int) {
	n := len(j.out) - start
	if n < 0x80 {
		j.out[start-1] = byte(n)
		return
	}
	k := protowire.SizeVarint(uint64(n))
	j.out = append(j.out, zeros[:k-1]...)
	copy(j.out[start-1+k:], j.out[start:start+n])
	protowire.AppendVarint(j.out[:start-1], uint64(n))
}

// cancel removes the field opened at start, tagged at mark.
func (j *jsonDec) cancel(mark int) { j.out = j.out[:mark] }

// stringField writes the string field num, left out when empty (the
// proto3 default) unless keep.
func (j *jsonDec) stringField(num protowire.Number, keep bool) error {
	if j.null() {
		return nil
	}
	raw, err := j.rawString()
	if err != nil {
		return err
	}
	mark := len(j.out)
	start := j.open(num)
	if j.out, err = ndjson.AppendUnescape(j.out, raw); err != nil {
		return err
	}
	if len(j.out) == start && !keep {
		j.cancel(mark)
		return nil
	}
	j.close(start)
	return nil
}

// hexField writes the bytes field num from a hex string (traceId,
// spanId), left out when empty.
func (j *jsonDec) hexField(num protowire.Number) error {
	if j.null() {
		return nil
	}
	s, err := j.str()
	if err != nil {
		return err
	}
	if len(s) == 0 {
		return nil
	}
	mark := len(j.out)
	start := j.open(num)
	if j.out, err = hex.AppendDecode(j.out, s); err != nil {
		j.cancel(mark)
		return fmt.Errorf("bad hex id: %w", err)
	}
	j.close(start)
	return nil
}

// bytesField writes the bytes field num from base64 (always: a oneof
// member).
func (j *jsonDec) bytesField(num protowire.Number) error {
	s, err := j.str()
	if err != nil {
		return err
	}
	enc := base64.StdEncoding
	if strings.ContainsAny(str(s), "-_") {
		enc = base64.URLEncoding
	}
	if len(s)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
	}
	start := j.open(num)
	if j.out, err = enc.AppendDecode(j.out, s); err != nil {
		return fmt.Errorf("bad base64: %w", err)
	}
	j.close(start)
	return nil
}

// message writes the message field num with body, left out when null.
func (j *jsonDec) message(num protowire.Number, body func() error) error {
	if j.null() {
		return nil
	}
	start := j.open(num)
	if err := body(); err != nil {
		return err
	}
	j.close(start)
	return nil
}

// list writes each element of an array as the message field num.
func (j *jsonDec) list(num protowire.Number, body func() error) error {
	ok, err := j.array()
	if !ok || err != nil {
		return err
	}
	for first := true; ; first = false {
		more, err := j.elem(first)
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
		start := j.open(num)
		if !j.null() {
			if err := body(); err != nil {
				return err
			}
		}
		j.close(start)
	}
}

// members calls fn for each member of an object, with its key in j.key;
// fn reads the value. An object that is null calls fn for none.
func (j *jsonDec) members(fn func(key string) error) error {
	ok, err := j.object()
	if !ok || err != nil {
		return err
	}
	if j.depth++; j.depth > MaxDepth {
		return ErrDepth
	}
	for first := true; ; first = false {
		more, err := j.member(first)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		if err := fn(str(j.key)); err != nil {
			return err
		}
	}
	j.depth--
	return nil
}

// The messages. Each reads an object (or null) and writes its fields.

func (j *jsonDec) request() error {
	return j.members(func(key string) error {
		switch key {
		case "resourceLogs", "resource_logs":
			return j.list(1, j.resourceLogs)
		}
		return j.skip()
	})
}

func (j *jsonDec) resourceLogs() error {
	return j.members(func(key string) error {
		switch key {
		case "resource":
			return j.message(1, j.resource)
		case "scopeLogs", "scope_logs":
			return j.list(2, j.scopeLogs)
		}
		return j.skip()
	})
}

func (j *jsonDec) resource() error {
	return j.members(func(key string) error {
		if key == "attributes" {
			return j.list(1, j.keyValue)
		}
		return j.skip()
	})
}

func (j *jsonDec) scopeLogs() error {
	return j.members(func(key string) error {
		switch key {
		case "scope":
			return j.message(1, j.scope)
		case "logRecords", "log_records":
			return j.list(2, j.logRecord)
		}
		return j.skip()
	})
}

func (j *jsonDec) scope() error {
	return j.members(func(key string) error {
		switch key {
		case "name":
			return j.stringField(1, false)
		case "version":
			return j.stringField(2, false)
		case "attributes":
			return j.list(3, j.keyValue)
		}
		return j.skip()
	})
}

func (j *jsonDec) logRecord() error {
	return j.members(func(key string) error {
		switch key {
		case "timeUnixNano", "time_unix_nano", "observedTimeUnixNano", "observed_time_unix_nano":
			if j.null() {
				return nil
			}
			v, err := j.uint64Val()
			if err != nil || v == 0 {
				return err
			}
			num := protowire.Number(1)
			if key[0] == 'o' {
				num = 11
			}
			j.out = protowire.AppendTag(j.out, num, protowire.Fixed64Type)
			j.out = protowire.AppendFixed64(j.out, v)
		case "severityNumber", "severity_number":
			if j.null() {
				return nil
			}
			v, err := j.severityNumber()
			if err != nil || v == 0 {
				return err
			}
			j.out = protowire.AppendTag(j.out, 2, protowire.VarintType)
			j.out = protowire.AppendVarint(j.out, uint64(v))
		case "severityText", "severity_text":
			return j.stringField(3, false)
		case "body":
			return j.message(5, j.anyValue)
		case "attributes":
			return j.list(6, j.keyValue)
		case "traceId", "trace_id":
			return j.hexField(9)
		case "spanId", "span_id":
			return j.hexField(10)
		case "eventName", "event_name":
			return j.stringField(12, false)
		default:
			return j.skip()
		}
		return nil
	})
}

func (j *jsonDec) keyValue() error {
	return j.members(func(key string) error {
		switch key {
		case "key":
			return j.stringField(1, false)
		case "value":
			return j.message(2, j.anyValue)
		}
		return j.skip()
	})
}

func (j *jsonDec) anyValue() error {
	set := false
	return j.members(func(key string) error {
		switch key {
		case "stringValue", "string_value", "boolValue", "bool_value",
			"intValue", "int_value", "doubleValue", "double_value",
			"arrayValue", "array_value", "kvlistValue", "kvlist_value",
			"bytesValue", "bytes_value":
		default:
			return j.skip()
		}
		if j.null() {
			return nil
		}
		if set {
			return errOneof
		}
		set = true
		switch key {
		case "stringValue", "string_value":
			return j.stringField(1, true)
		case "boolValue", "bool_value":
			var v uint64
			switch {
			case strings.HasPrefix(str(j.in[j.pos:]), "true"):
				v, j.pos = 1, j.pos+4
			case strings.HasPrefix(str(j.in[j.pos:]), "false"):
				j.pos += 5
			default:
				return fmt.Errorf("boolValue: %w", j.syntax())
			}
			j.out = protowire.AppendTag(j.out, 2, protowire.VarintType)
			j.out = protowire.AppendVarint(j.out, v)
		case "intValue", "int_value":
			v, err := j.int64Val(math.MinInt64, math.MaxInt64)
			if err != nil {
				return fmt.Errorf("intValue: %w", err)
			}
			j.out = protowire.AppendTag(j.out, 3, protowire.VarintType)
			j.out = protowire.AppendVarint(j.out, uint64(v))
		case "doubleValue", "double_value":
			v, err := j.doubleVal()
			if err != nil {
				return fmt.Errorf("doubleValue: %w", err)
			}
			j.out = protowire.AppendTag(j.out, 4, protowire.Fixed64Type)
			j.out = protowire.AppendFixed64(j.out, math.Float64bits(v))
		case "arrayValue", "array_value":
			return j.message(5, j.arrayValue)
		case "kvlistValue", "kvlist_value":
			return j.message(6, j.kvlistValue)
		case "bytesValue", "bytes_value":
			return j.bytesField(7)
		}
		return nil
	})
}

func (j *jsonDec) arrayValue() error {
	return j.members(func(key string) error {
		if key == "values" {
			return j.list(1, j.anyValue)
		}
		return j.skip()
	})
}

func (j *jsonDec) kvlistValue() error {
	return j.members(func(key string) error {
		if key == "values" {
			return j.list(1, j.keyValue)
		}
		return j.skip()
	})
}
