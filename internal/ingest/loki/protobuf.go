package loki

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/klauspost/compress/snappy"
	"github.com/spate-io/spate/internal/bytesutil"
	"github.com/spate-io/spate/internal/ingest"
	"google.golang.org/protobuf/encoding/protowire"
)

// Snappy decodes a snappy block (Loki compresses protobuf pushes with the
// block format, not the framed one) into dst's storage when it is large
// enough, else into a new slice, and returns the decoded bytes. A block
// that says it decodes to more than maxBytes (if maxBytes > 0) is refused
// from its header, before any allocation, so that a small body cannot
// claim gigabytes; VictoriaLogs limits it to -loki.maxRequestSize (64 MiB
// by default). Blocks using the S2 extensions of klauspost/compress are
// refused, as github.com/golang/snappy (VictoriaLogs' decoder) refuses
// them: the blocks refused and the bytes decoded are those of klauspost's
// snappy.DecodeStrict (FuzzSnappy), about 1.3x as fast on logs (see
// decodeSnappyBlock). Cost: one pass, no allocation when dst is large
// enough.
func Snappy(dst, body []byte, maxBytes int) ([]byte, error) {
	n, err := snappy.DecodedLen(body)
	if err != nil {
		return nil, fmt.Errorf("cannot read snappy header: %w", err)
	}
	if maxBytes > 0 && n > maxBytes {
		return nil, fmt.Errorf("too big data size %d exceeding %d bytes", n, maxBytes)
	}
	// The length varint, which DecodedLen has read (at most 5 bytes).
	_, k := binary.Uvarint(body)
	body = body[k:]
	if n <= cap(dst) {
		dst = dst[:n]
	} else {
		dst = make([]byte, n)
	}
	if !decodeSnappyBlock(dst, body) {
		return nil, fmt.Errorf("cannot decompress snappy block: %w", snappy.ErrCorrupt)
	}
	return dst, nil
}

// DecodeProtobuf decodes and checks a whole Loki push request in the
// protobuf encoding (already snappy-decoded: see Snappy), as VictoriaLogs
// reads it:
//
//	PushRequest    {repeated StreamAdapter streams = 1}
//	StreamAdapter  {string labels = 1; repeated EntryAdapter entries = 2; uint64 hash = 3}
//	EntryAdapter   {Timestamp timestamp = 1; string line = 2; repeated LabelPairAdapter structuredMetadata = 3}
//	LabelPairAdapter {string name = 1; string value = 2}
//	Timestamp      {int64 seconds = 1; int32 nanos = 2}
//
// Unknown fields are skipped (the hash too); wire types 3 and 4 (groups)
// and 6, 7 are errors, as is a known field of the wrong wire type, a
// truncated field, and nanos that do not fit 32 bits (so negative nanos,
// which are sign-extended to 64 bits). A stream must have labels; the
// first labels field counts. Of repeated timestamp and line fields the
// last counts. A metadata pair must have both name and value, and is left
// out when either is empty; it is only read up to its first name and
// value (VictoriaLogs looks each up, ignoring what follows both).
//
// The labels are Prometheus syntax, as VictoriaLogs parses it: white
// space around the whole is trimmed; then '{', pairs separated by ",",
// each followed by at most one space, an optional trailing ",", '}'. A
// name is everything up to the next '=' (nothing is trimmed or checked);
// a value is a Go string literal ("..." with Go escapes, `...`, or a
// one-character '.'). "{}" has no labels; "" is an error.
//
// On error it returns no Request (and so no rows). Strings alias body,
// but for label values with escapes. Cost: one pass over body, a few
// allocations (the Request's slices).
func DecodeProtobuf(body []byte) (*Request, error) {
	r := &Request{}
	if n := countEntries(body); n > 0 {
		r.entries = make([]entry, 0, n)
	}
	if err := r.decodePush(body); err != nil {
		return nil, fmt.Errorf("cannot decode PushRequest: %w", err)
	}
	return r, nil
}

// pbReader reads the fields of a protobuf message, as VictoriaMetrics'
// easyproto reads them: field number 0 is allowed, numbers up to 2^32-1.
type pbReader struct {
	b    []byte // the rest of the message
	num  uint32 // the field read by next
	typ  protowire.Type
	data []byte // its contents, for BytesType
	val  uint64 // its value, for the other types
}

// next reads the next field; the caller checks len(r.b) > 0 first.
func (r *pbReader) next() error {
	b := r.b
	// Fast path: a one-byte tag of a length-delimited field with a
	// one-byte length.
	if len(b) >= 2 && b[0] < 0x80 && b[0]&7 == byte(protowire.BytesType) && b[1] < 0x80 {
		n := int(b[1])
		if len(b)-2 < n {
			return r.fail(fmt.Sprintf("cannot read field #%d: %d bytes left, need %d", b[0]>>3, len(b)-2, n))
		}
		r.num, r.typ, r.data, r.b = uint32(b[0]>>3), protowire.BytesType, b[2:2+n], b[2+n:]
		return nil
	}
	tag, n := protowire.ConsumeVarint(b)
	if n < 0 {
		return r.fail("cannot read field tag")
	}
	b = b[n:]
	if tag>>3 > math.MaxUint32 {
		return r.fail(fmt.Sprintf("field number %d is bigger than 2^32-1", tag>>3))
	}
	r.num, r.typ = uint32(tag>>3), protowire.Type(tag&7)
	switch r.typ {
	case protowire.VarintType:
		if r.val, n = protowire.ConsumeVarint(b); n < 0 {
			return r.fail(fmt.Sprintf("cannot read varint of field #%d", r.num))
		}
		r.b = b[n:]
	case protowire.Fixed64Type:
		if len(b) < 8 {
			return r.fail(fmt.Sprintf("cannot read i64 of field #%d", r.num))
		}
		r.val, r.b = binary.LittleEndian.Uint64(b), b[8:]
	case protowire.Fixed32Type:
		if len(b) < 4 {
			return r.fail(fmt.Sprintf("cannot read i32 of field #%d", r.num))
		}
		r.val, r.b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
	case protowire.BytesType:
		l, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return r.fail(fmt.Sprintf("cannot read length of field #%d", r.num))
		}
		b = b[n:]
		if uint64(len(b)) < l {
			return r.fail(fmt.Sprintf("cannot read field #%d: %d bytes left, need %d", r.num, len(b), l))
		}
		r.data, r.b = b[:l], b[l:]
	default:
		return r.fail(fmt.Sprintf("unsupported wire type %d of field #%d", r.typ, r.num))
	}
	return nil
}

func (r *pbReader) fail(msg string) error {
	r.b = nil
	return errors.New(msg)
}

// countEntries returns the number of entries of a PushRequest, or 0 if it
// is malformed, looking only at the streams' fields: a cheap pass that
// saves growing the entries slice.
func countEntries(b []byte) int {
	n := 0
	for p := (pbReader{b: b}); len(p.b) > 0; {
		if p.next() != nil {
			return 0
		}
		if p.num != 1 || p.typ != protowire.BytesType {
			continue
		}
		for s := (pbReader{b: p.data}); len(s.b) > 0; {
			if s.next() != nil {
				return 0
			}
			if s.num == 2 {
				n++
			}
		}
	}
	return n
}

func (r *Request) decodePush(b []byte) error {
	for f := (pbReader{b: b}); len(f.b) > 0; {
		if err := f.next(); err != nil {
			return err
		}
		if f.num == 1 {
			if f.typ != protowire.BytesType {
				return errors.New("cannot read Stream data")
			}
			if err := r.decodeStream(f.data); err != nil {
				return fmt.Errorf("cannot unmarshal Stream: %w", err)
			}
		}
	}
	return nil
}

func (r *Request) decodeStream(b []byte) error {
	var labels string
	found := false
	s := stream{labels: -1}
	for f := (pbReader{b: b}); len(f.b) > 0; {
		if err := f.next(); err != nil {
			return err
		}
		switch f.num {
		case 1:
			if found {
				continue
			}
			found = true
			if f.typ != protowire.BytesType {
				return fmt.Errorf("labels field has wire type %d, want %d", f.typ, protowire.BytesType)
			}
			labels = bytesutil.ToUnsafeString(f.data)
			s.labels = int32(len(r.fields))
			if err := r.appendPromLabels(labels); err != nil {
				return fmt.Errorf("cannot parse labels %q: %w", labels, err)
			}
			s.nLabels = int32(len(r.fields)) - s.labels
		case 2:
			if f.typ != protowire.BytesType {
				return errors.New("cannot read Entry data")
			}
			if err := r.decodeEntry(f.data); err != nil {
				return fmt.Errorf("cannot unmarshal Entry: %w", err)
			}
		}
	}
	if !found {
		return errors.New("missing labels")
	}
	s.entriesEnd = int32(len(r.entries))
	r.streams = append(r.streams, s)
	return nil
}

func (r *Request) decodeEntry(b []byte) error {
	var e entry
	e.meta = int32(len(r.fields))
	for f := (pbReader{b: b}); len(f.b) > 0; {
		if err := f.next(); err != nil {
			return err
		}
		switch f.num {
		case 1:
			if f.typ != protowire.BytesType {
				return errors.New("cannot read Timestamp data")
			}
			var err error
			if e.time, err = decodeTimestamp(f.data); err != nil {
				return fmt.Errorf("cannot unmarshal Timestamp: %w", err)
			}
		case 2:
			if f.typ != protowire.BytesType {
				return errors.New("cannot read Line")
			}
			e.msg = bytesutil.ToUnsafeString(f.data)
		case 3:
			if f.typ != protowire.BytesType {
				return errors.New("cannot read StructuredMetadata")
			}
			if err := r.decodeLabelPair(f.data); err != nil {
				return fmt.Errorf("cannot unmarshal StructuredMetadata: %w", err)
			}
		}
	}
	e.metaEnd = int32(len(r.fields))
	r.entries = append(r.entries, e)
	return nil
}

func decodeTimestamp(b []byte) (int64, error) {
	var secs int64
	var nanos int32
	for f := (pbReader{b: b}); len(f.b) > 0; {
		if err := f.next(); err != nil {
			return 0, err
		}
		switch f.num {
		case 1:
			if f.typ != protowire.VarintType {
				return 0, errors.New("cannot read Seconds")
			}
			secs = int64(f.val)
		case 2:
			if f.typ != protowire.VarintType || f.val > math.MaxUint32 {
				return 0, errors.New("cannot read Nanos")
			}
			nanos = int32(uint32(f.val))
		}
	}
	return secs*1e9 + int64(nanos), nil
}

// decodeLabelPair appends the structured metadata pair in b, unless its
// name or value is empty. Like VictoriaLogs, which looks up the first
// name and the first value each from the start, it reads b only up to
// both: what follows is not checked.
func (r *Request) decodeLabelPair(b []byte) error {
	var name, value string
	var haveName, haveValue bool
	for f := (pbReader{b: b}); len(f.b) > 0 && !(haveName && haveValue); {
		if err := f.next(); err != nil {
			return err
		}
		switch {
		case f.num == 1 && !haveName:
			if f.typ != protowire.BytesType {
				return errors.New("cannot read name: wrong wire type")
			}
			name, haveName = bytesutil.ToUnsafeString(f.data), true
		case f.num == 2 && !haveValue:
			if f.typ != protowire.BytesType {
				return errors.New("cannot read value: wrong wire type")
			}
			value, haveValue = bytesutil.ToUnsafeString(f.data), true
		}
	}
	if !haveName {
		return errors.New("missing name")
	}
	if !haveValue {
		return errors.New("missing value")
	}
	if name != "" && value != "" {
		r.fields = append(r.fields, ingest.Field{Name: name, Value: value})
	}
	return nil
}

// appendPromLabels appends the labels of s, {name="value", ...}, to
// r.fields (see DecodeProtobuf for the syntax).
func (r *Request) appendPromLabels(s string) error {
	s = strings.TrimSpace(s)
	if len(s) < 2 {
		return fmt.Errorf("too short string to parse: %q", s)
	}
	if s[0] != '{' {
		return fmt.Errorf("missing `{` at the beginning of %q", s)
	}
	if s[len(s)-1] != '}' {
		return fmt.Errorf("missing `}` at the end of %q", s)
	}
	s = s[1 : len(s)-1]
	for len(s) > 0 {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return fmt.Errorf("cannot find `=` char for label value at %s", s)
		}
		name := s[:eq]
		s = s[eq+1:]
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return fmt.Errorf("cannot parse value for label %q at %s: %w", name, s, err)
		}
		s = s[len(q):]
		value, err := strconv.Unquote(q)
		if err != nil {
			return fmt.Errorf("cannot unquote value %s for label %q: %w", q, name, err)
		}
		r.fields = append(r.fields, ingest.Field{Name: nameOrMsg(name), Value: value})
		if s == "" {
			break
		}
		if s[0] != ',' {
			return fmt.Errorf("missing `,` char at %s", s)
		}
		s = strings.TrimPrefix(s[1:], " ")
	}
	return nil
}
