// Package loki decodes Loki push requests (the bodies of POST
// /insert/loki/api/v1/push, JSON or snappy-compressed protobuf) into
// ingest.Rows with the fields VictoriaLogs v1.52.1 stores for them
// (app/vlinsert/loki in VictoriaMetrics/VictoriaLogs).
//
// Each entry of each stream becomes one Row, in request order, its fields
// in this order:
//
//   - the stream's labels, in request order, empty values included: the
//     Row's stream fields (Row.Stream counts them), unless the request
//     names _stream_fields (Options.HasStreamFields: Stream is -1);
//   - the entry's structured metadata (the third element of a JSON values
//     item, or EntryAdapter.structuredMetadata), in request order;
//   - the message: "_msg" with the line as sent, or, when
//     Options.ParseMessage is set (VictoriaLogs' default) and the line
//     trimmed of white space is a JSON object ({...}), the object's fields
//     flattened (see Rows); then the first non-empty field among the
//     metadata and those fields named in Options.MsgFields (the request's
//     _msg_field) is renamed "_msg".
//
// In JSON, a label or metadata value that is not a string is its JSON text
// without white space (null is "null"); in protobuf the labels are one
// string in Prometheus syntax, {job="x", level="info"}, parsed as
// VictoriaLogs parses it (see DecodeProtobuf). A label or metadata name ""
// is given as "_msg", the name VictoriaLogs stores it under.
//
// Time is the entry's timestamp in Unix nanoseconds: JSON's is a string of
// seconds, milliseconds, micro- or nanoseconds told apart by magnitude,
// fractions and exponents allowed; protobuf's is a
// google.protobuf.Timestamp, seconds*1e9+nanos. Time 0 (an empty string, a
// missing timestamp, or one that works out to 0) means none: the caller
// stamps the ingestion time, as VictoriaLogs stamps time.Now().
//
// The HTTP handler, as VictoriaLogs': a body whose Content-Type
// IsJSONContentType is DecodeJSON's, any other DecodeProtobuf's after
// Snappy when it has no Content-Encoding (with one, such as gzip or zstd,
// that encoding instead of snappy). It answers 204 No Content on success
// (also for a request with no streams or no entries) and 400 with the
// error's text otherwise. Unlike VictoriaLogs, which stores the entries
// before the first bad one and then answers 400, DecodeJSON and
// DecodeProtobuf check the whole body first: a bad body gives an error
// and no rows.
//
// The caller applies the request's other ingestion parameters to the rows
// (_stream_fields, ignore_fields, decolorize_fields, extra_fields), but
// not _msg_field, which VictoriaLogs applies only here and only to rows
// whose message was parsed as JSON.
package loki

import (
	"strings"
	"sync"

	"github.com/spate-io/spate/internal/bytesutil"
	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/ndjson"
)

// Options are the per-request settings of the rows' fields.
type Options struct {
	// ParseMessage turns a message that is a JSON object into fields.
	// VictoriaLogs does by default: it is off when the request says
	// disable_message_parsing=true (or header
	// VL-Loki-Disable-Message-Parsing), or the server runs with
	// -loki.disableMessageParsing.
	ParseMessage bool
	// MessageFieldsPrefix is put before the names of the fields parsed
	// from a message: the request's message_fields_prefix (or header
	// VL-Loki-Message-Fields-Prefix), else -loki.messageFieldsPrefix.
	MessageFieldsPrefix string
	// MsgFields is the request's _msg_field list (empty names removed):
	// in rows whose message was parsed, the first non-empty field among
	// the metadata and message fields with the first of these names that
	// has one is renamed "_msg".
	MsgFields []string
	// PreserveKeys is the request's preserve_json_keys list: a nested
	// object of a parsed message at one of these dotted paths is kept as
	// one field holding its JSON text instead of being flattened.
	PreserveKeys []string
	// HasStreamFields is set when the request names _stream_fields:
	// VictoriaLogs then takes the stream from those fields, not from the
	// labels, and rows have Stream -1.
	HasStreamFields bool
}

// Request is a decoded push request, checked whole. Its strings alias the
// body passed to DecodeJSON or DecodeProtobuf, which must not be modified
// while the Request is used, or buffers of its own. A Request is
// read-only: Rows may be called any number of times, also concurrently.
// It holds about 32 bytes per entry and 32 per label and metadata field.
type Request struct {
	streams []stream
	entries []entry
	fields  []ingest.Field // labels and metadata of all the streams
}

type stream struct {
	labels, nLabels int32 // fields[labels:labels+nLabels]
	entriesEnd      int32 // its entries end at entries[entriesEnd]; they start where the previous stream's end
}

type entry struct {
	time          int64
	msg           string
	meta, metaEnd int32 // fields[meta:metaEnd]
}

// Entries returns how many entries the request holds: the number of Rows
// that Rows emits.
func (r *Request) Entries() int { return len(r.entries) }

// maxFieldNameSize is VictoriaLogs' limit on field names (logstorage's
// maxFieldNameSize): message objects whose keys would make longer names
// are not flattened.
const maxFieldNameSize = 128

// Rows calls emit with one Row per entry, in request order, with the
// fields described in the package comment, and returns emit's first
// error, at which it stops.
//
// A message is parsed when o.ParseMessage is set and the message, trimmed
// of leading and trailing Unicode white space, starts with '{', ends with
// '}' and is valid JSON for VictoriaLogs' parser (fastjson, looser than
// RFC 8259; nesting up to 300). Its fields, in source order, duplicates
// kept (also of label and metadata names): a nested object's fields are
// named "outer.inner" (an empty nested object gives none); a string is
// decoded; a number, bool or array is its JSON text as written, less the
// white space outside strings; null is left out; o.MessageFieldsPrefix
// starts every name; a name that works out to "" is "_msg". An object
// whose dotted path is in o.PreserveKeys, or one with a key that would
// make a name longer than 128 bytes (not counting the prefix), is one
// field holding its JSON text (named by its path; at the top, the prefix,
// or "_msg"). A message that is not parsed is "_msg", untrimmed.
//
// The *Row, its Fields and the strings made for them (decoded or joined
// names and values of parsed messages) are reused once emit returns: emit
// must copy what it keeps. Other strings alias the Request. Cost: one pass
// over each message; no allocation once warm (Rows keeps its buffers in a
// pool).
func (r *Request) Rows(o Options, emit func(*ingest.Row) error) error {
	st := getRowsState()
	defer putRowsState(st)
	st.o = o
	e := 0
	for _, s := range r.streams {
		labels := r.fields[s.labels : s.labels+s.nLabels]
		stream := len(labels)
		if o.HasStreamFields {
			stream = -1
		}
		for ; e < int(s.entriesEnd); e++ {
			en := &r.entries[e]
			st.buf = st.buf[:0]
			fields := append(st.fields[:0], labels...)
			fields = append(fields, r.fields[en.meta:en.metaEnd]...)
			fields, parsed := st.appendMessage(fields, en.msg)
			if parsed {
				renameMsgField(fields[len(labels):], o.MsgFields)
			}
			st.fields = fields
			st.row = ingest.Row{Time: en.time, Fields: fields, Stream: stream}
			if err := emit(&st.row); err != nil {
				return err
			}
		}
	}
	return nil
}

// renameMsgField renames to "_msg" the first field with a non-empty
// value named by the first name of names that has one.
func renameMsgField(fields []ingest.Field, names []string) {
	for _, n := range names {
		for i := range fields {
			if fields[i].Name == n && fields[i].Value != "" {
				fields[i].Name = "_msg"
				return
			}
		}
	}
}

// rowsState is Rows' scratch space.
type rowsState struct {
	row     ingest.Row
	fields  []ingest.Field
	buf     []byte // names and values made for the current row
	prefix  []byte // dotted path of the object being flattened, with its trailing '.'
	scratch []byte
	tree    jtree
	it      ndjson.Iter // walks the messages that are strict JSON (see appendIter)
	o       Options     // of the current Rows call
}

var rowsStatePool sync.Pool

func getRowsState() *rowsState {
	st, _ := rowsStatePool.Get().(*rowsState)
	if st == nil {
		st = new(rowsState)
	}
	return st
}

func putRowsState(st *rowsState) {
	// Drop the references into requests, so that the pool keeps none
	// alive.
	clear(st.fields[:cap(st.fields)])
	st.fields = st.fields[:0]
	st.row = ingest.Row{}
	st.tree.s = ""
	st.it.Reset(nil)
	st.o = Options{}
	rowsStatePool.Put(st)
}

// appendMessage appends the fields of message msg and reports whether it
// was parsed as a JSON object.
func (st *rowsState) appendMessage(fields []ingest.Field, msg string) ([]ingest.Field, bool) {
	if !st.o.ParseMessage {
		return append(fields, ingest.Field{Name: "_msg", Value: msg}), false
	}
	m := strings.TrimSpace(msg)
	if len(m) < 2 || m[0] != '{' || m[len(m)-1] != '}' {
		return append(fields, ingest.Field{Name: "_msg", Value: msg}), false
	}
	if out, ok := st.appendIter(fields, m); ok {
		return out, true
	}
	root, err := st.tree.parse(m)
	if err != nil {
		return append(fields, ingest.Field{Name: "_msg", Value: msg}), false
	}
	st.prefix = st.prefix[:0]
	return st.flatten(fields, root), true
}

// appendIter appends the fields of the JSON object m as parse and flatten
// would, but walking m with ndjson.Iter, which is about twice as fast on
// logs, and reports whether it did. It declines, leaving fields and st.buf
// as they were, for the messages whose fields it could get wrong: m is not
// strict JSON (RFC 8259, valid UTF-8; fastjson takes more), a key has an
// escape (fastjson unescapes them its own way, see
// ndjson.AppendUnescapeLenient), Options.PreserveKeys is set or a name
// would be longer than maxFieldNameSize (keepWhole), m holds an empty
// object (whose key would count in keepWhole without giving a leaf), or
// m has 300 brackets or more (fastjson's depth limit). Strict JSON means
// the same leaves, in the same order, for both parsers: dotted names,
// nulls and empty objects left out, numbers and literals as written,
// arrays compacted, duplicates kept.
func (st *rowsState) appendIter(fields []ingest.Field, m string) ([]ingest.Field, bool) {
	if len(st.o.PreserveKeys) > 0 || strings.Count(m, "{")+strings.Count(m, "[") >= maxDepth || hasEmptyObject(m) {
		return fields, false
	}
	n0, b0 := len(fields), len(st.buf)
	it := &st.it
	it.Reset(bytesutil.ToUnsafeBytes(m))
	for it.Next() {
		key := it.Key()
		if it.KeyEscaped() || len(key) > maxFieldNameSize {
			return fields[:n0], st.decline(b0)
		}
		kind := it.Kind()
		if kind == ndjson.KindNull {
			continue
		}
		var name string
		switch {
		case st.o.MessageFieldsPrefix != "":
			start := len(st.buf)
			st.buf = append(append(st.buf, st.o.MessageFieldsPrefix...), key...)
			name = st.str(start)
		case len(key) == 0:
			name = "_msg"
		case it.Depth() == 0:
			name = bytesutil.ToUnsafeString(key) // a top-level plain key aliases m
		default:
			start := len(st.buf)
			st.buf = append(st.buf, key...)
			name = st.str(start)
		}
		var value string
		switch {
		case kind == ndjson.KindString && it.Escaped():
			start := len(st.buf)
			st.buf = ndjson.AppendUnescapeLenient(st.buf, bytesutil.ToUnsafeString(it.Raw()))
			value = st.str(start)
		case kind == ndjson.KindArray:
			start := len(st.buf)
			st.buf = append(st.buf, it.Value()...)
			value = st.str(start)
		default:
			value = bytesutil.ToUnsafeString(it.Raw())
		}
		fields = append(fields, ingest.Field{Name: name, Value: value})
	}
	if it.Err() != nil {
		return fields[:n0], st.decline(b0)
	}
	return fields, true
}

// decline drops what appendIter added to st.buf and returns false.
func (st *rowsState) decline(b0 int) bool {
	st.buf = st.buf[:b0]
	return false
}

// hasEmptyObject reports whether m has a '{' whose next byte other than
// JSON white space is '}' (also inside strings: a false alarm only costs
// appendIter's speed).
func hasEmptyObject(m string) bool {
	for i := strings.IndexByte(m, '{'); i >= 0; {
		j := skipWS(m, i+1)
		if j < len(m) && m[j] == '}' {
			return true
		}
		k := strings.IndexByte(m[i+1:], '{')
		if k < 0 {
			return false
		}
		i += 1 + k
	}
	return false
}

// str returns the bytes of st.buf from start as a string; st.buf is only
// appended to while the row is built, so the string stays intact until
// the next row.
func (st *rowsState) str(start int) string {
	return bytesutil.ToUnsafeString(st.buf[start:])
}

// key returns the decoded contents of string node n, aliasing the
// parsed text when it has no escapes.
func (st *rowsState) key(n int32) string {
	raw := st.tree.raw(n)
	if !st.tree.nodes[n].esc {
		return raw
	}
	start := len(st.buf)
	st.buf = ndjson.AppendUnescapeLenient(st.buf, raw)
	return st.str(start)
}

// name returns the field name of key k at the current path.
func (st *rowsState) name(k string) string {
	if st.o.MessageFieldsPrefix == "" && len(st.prefix) == 0 {
		if k == "" {
			return "_msg"
		}
		return k
	}
	start := len(st.buf)
	st.buf = append(st.buf, st.o.MessageFieldsPrefix...)
	st.buf = append(st.buf, st.prefix...)
	st.buf = append(st.buf, k...)
	if len(st.buf) == start {
		return "_msg"
	}
	return st.str(start)
}

// flatten appends the fields of object obj at path st.prefix.
func (st *rowsState) flatten(fields []ingest.Field, obj int32) []ingest.Field {
	t := &st.tree
	kids := t.children(obj)
	if st.keepWhole(kids) {
		// One field: the object's JSON text with its keys decoded and
		// quoted again, named by its path.
		p := len(st.prefix)
		if p > 0 {
			st.prefix = st.prefix[:p-1]
		}
		name := st.name("")
		start := len(st.buf)
		st.buf = t.appendObject(st.buf, obj, true)
		st.prefix = st.prefix[:p]
		return append(fields, ingest.Field{Name: name, Value: st.str(start)})
	}
	for i := 0; i < len(kids); i += 2 {
		v := kids[i+1]
		switch t.nodes[v].kind {
		case jNull:
			continue
		case jObject:
			p := len(st.prefix)
			st.prefix = append(st.prefix, st.key(kids[i])...)
			st.prefix = append(st.prefix, '.')
			fields = st.flatten(fields, v)
			st.prefix = st.prefix[:p]
			continue
		}
		name := st.name(st.key(kids[i]))
		var value string
		if t.nodes[v].kind == jString {
			value = st.key(v)
		} else {
			start := len(st.buf)
			st.buf = t.appendRaw(st.buf, v)
			value = st.str(start)
		}
		fields = append(fields, ingest.Field{Name: name, Value: value})
	}
	return fields
}

// keepWhole reports whether the object with children kids is kept as one
// field rather than flattened: a key would make a name longer than
// maxFieldNameSize, or its path is one of the preserved keys.
func (st *rowsState) keepWhole(kids []int32) bool {
	t := &st.tree
	longest := 0
	for i := 0; i < len(kids); i += 2 {
		raw := t.raw(kids[i])
		n := len(raw)
		if t.nodes[kids[i]].esc {
			st.scratch = ndjson.AppendUnescapeLenient(st.scratch[:0], raw)
			n = len(st.scratch)
		}
		longest = max(longest, n)
	}
	if len(st.prefix)+longest > maxFieldNameSize {
		return true
	}
	if len(st.prefix) == 0 {
		return false
	}
	path := st.prefix[:len(st.prefix)-1]
	for _, k := range st.o.PreserveKeys {
		if string(path) == k {
			return true
		}
	}
	return false
}

func hasBackslash(s string) bool { return strings.IndexByte(s, '\\') >= 0 }
