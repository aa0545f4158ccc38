package loki

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/spate-io/spate/internal/bytesutil"
	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/ndjson"
)

// IsJSONContentType reports whether a push with Content-Type ct is JSON,
// as VictoriaLogs tells: "application/json", maybe with parameters. Any
// other push is protobuf.
func IsJSONContentType(ct string) bool {
	return ct == "application/json" || strings.HasPrefix(ct, "application/json;")
}

// DecodeJSON decodes and checks a whole Loki push request in the JSON
// encoding:
//
//	{"streams":[{"stream":{"job":"x"},"values":[["<ts>","<line>",{<metadata>}],...]},...]}
//
// as VictoriaLogs parses it: the body must be valid JSON for fastjson (see
// fastjson.go) with a "streams" array; each stream an object with a
// "values" array and an optional "stream" object (the labels); each
// values item an array of 2 or 3 items: the timestamp (a string: "" for
// now, else see parseTimestamp), the line (a string), the structured
// metadata (an object). Anything else in the body is ignored; a body with
// no streams or no values decodes to no entries. On error it returns no
// Request (and so no rows). Strings without escapes alias body; the
// others are decoded into one buffer the Request owns. Cost: one parse of
// body, a few allocations (the Request's slices and that buffer).
func DecodeJSON(body []byte) (*Request, error) {
	if len(body) > math.MaxInt32 {
		return nil, errors.New("too big JSON request body")
	}
	d, _ := jsonDecoderPool.Get().(*jsonDecoder)
	if d == nil {
		d = new(jsonDecoder)
	}
	r, err := d.decode(bytesutil.ToUnsafeString(body))
	d.t.s = ""
	d.pend = d.pend[:0]
	jsonDecoderPool.Put(d)
	return r, err
}

type jsonDecoder struct {
	t       jtree
	r       *Request
	pend    []pending // strings to decode once the walk is over
	need    int       // bytes the pending strings take at most
	scratch []byte
}

var jsonDecoderPool sync.Pool

// pending is a string of the Request to be decoded from node into the
// Request's buffer: the name or value of fields[idx], or the message of
// entries[idx].
type pending struct {
	node int32
	idx  int32
	what uint8
}

const (
	pendName uint8 = iota
	pendValue
	pendMsg
)

func (d *jsonDecoder) decode(s string) (*Request, error) {
	t := &d.t
	root, err := t.parse(s)
	if err != nil {
		return nil, fmt.Errorf("cannot parse JSON request body: %w", err)
	}
	// Every entry is an array and every label or metadata field an
	// object member: sizing by those counts saves growing the slices.
	d.r = &Request{entries: make([]entry, 0, t.arrays), fields: make([]ingest.Field, 0, t.members)}
	d.need = 0
	unescaped := false
	streams := t.get(root, "streams", &unescaped, d.scratch)
	if streams < 0 {
		return nil, errors.New("missing `streams` item in the parsed JSON")
	}
	if t.nodes[streams].kind != jArray {
		return nil, fmt.Errorf("`streams` item in the parsed JSON must contain an array; got %s", d.excerpt(streams))
	}
	for _, sn := range t.children(streams) {
		if err := d.stream(sn); err != nil {
			return nil, err
		}
	}
	r := d.r
	d.r = nil
	if len(d.pend) > 0 {
		// The decoded strings are no longer than their JSON text, and
		// the texts do not overlap: one buffer of d.need bytes holds
		// them all without moving.
		buf := make([]byte, 0, d.need)
		for _, p := range d.pend {
			start := len(buf)
			if p.what == pendMsg || t.nodes[p.node].kind == jString {
				buf = ndjson.AppendUnescapeLenient(buf, t.raw(p.node))
			} else {
				buf = t.appendRaw(buf, p.node)
			}
			v := bytesutil.ToUnsafeString(buf[start:])
			switch p.what {
			case pendName:
				r.fields[p.idx].Name = nameOrMsg(v)
			case pendValue:
				r.fields[p.idx].Value = v
			default:
				r.entries[p.idx].msg = v
			}
		}
	}
	return r, nil
}

func nameOrMsg(name string) string {
	if name == "" {
		return "_msg"
	}
	return name
}

func (d *jsonDecoder) stream(sn int32) error {
	t := &d.t
	r := d.r
	unescaped := false
	s := stream{labels: int32(len(r.fields))}
	if lv := t.get(sn, "stream", &unescaped, d.scratch); lv >= 0 {
		if t.nodes[lv].kind != jObject {
			return fmt.Errorf("`stream` item in the parsed JSON must contain an object; got %s", d.excerpt(lv))
		}
		d.appendFields(lv)
	}
	s.nLabels = int32(len(r.fields)) - s.labels
	vv := t.get(sn, "values", &unescaped, d.scratch)
	if vv < 0 {
		return fmt.Errorf("missing `values` item in the parsed `stream` object %s", d.excerpt(sn))
	}
	if t.nodes[vv].kind != jArray {
		return fmt.Errorf("`values` item in the parsed JSON must contain an array; got %s", d.excerpt(vv))
	}
	for _, line := range t.children(vv) {
		if t.nodes[line].kind != jArray {
			return fmt.Errorf("unexpected contents of `values` item; want array; got %s", d.excerpt(line))
		}
		items := t.children(line)
		if len(items) < 2 || len(items) > 3 {
			return fmt.Errorf("unexpected number of values in `values` item array %s; got %d want 2 or 3", d.excerpt(line), len(items))
		}
		if t.nodes[items[0]].kind != jString {
			return fmt.Errorf("unexpected log timestamp type for %s; want string", d.excerpt(items[0]))
		}
		raw := t.raw(items[0])
		ts := raw
		if hasBackslash(raw) {
			d.scratch = ndjson.AppendUnescapeLenient(d.scratch[:0], raw)
			ts = bytesutil.ToUnsafeString(d.scratch)
		}
		ns, ok := parseTimestamp(ts)
		if !ok {
			return fmt.Errorf("cannot parse log timestamp %s: cannot parse unix timestamp %q", d.excerpt(items[0]), ts)
		}
		e := entry{time: ns, meta: int32(len(r.fields))}
		if len(items) == 3 {
			if t.nodes[items[2]].kind != jObject {
				return fmt.Errorf("unexpected structured metadata type for %s; want JSON object", d.excerpt(items[2]))
			}
			d.appendFields(items[2])
		}
		e.metaEnd = int32(len(r.fields))
		if t.nodes[items[1]].kind != jString {
			return fmt.Errorf("unexpected log message type for %s; want string", d.excerpt(items[1]))
		}
		if raw := t.raw(items[1]); hasBackslash(raw) {
			d.defer1(items[1], len(r.entries), pendMsg)
		} else {
			e.msg = raw
		}
		r.entries = append(r.entries, e)
	}
	s.entriesEnd = int32(len(r.entries))
	r.streams = append(r.streams, s)
	return nil
}

// appendFields appends the keys and values of object obj to the Request's
// fields: keys decoded, string values decoded, other values as their JSON
// text without white space.
func (d *jsonDecoder) appendFields(obj int32) {
	t := &d.t
	r := d.r
	kids := t.children(obj)
	for i := 0; i < len(kids); i += 2 {
		var f ingest.Field
		if raw := t.raw(kids[i]); hasBackslash(raw) {
			d.defer1(kids[i], len(r.fields), pendName)
		} else {
			f.Name = nameOrMsg(raw)
		}
		v := kids[i+1]
		switch nd := &t.nodes[v]; nd.kind {
		case jString:
			if raw := t.raw(v); hasBackslash(raw) {
				d.defer1(v, len(r.fields), pendValue)
			} else {
				f.Value = raw
			}
		case jObject, jArray:
			d.defer1(v, len(r.fields), pendValue)
		default:
			f.Value = t.raw(v)
		}
		r.fields = append(r.fields, f)
	}
}

func (d *jsonDecoder) defer1(node int32, idx int, what uint8) {
	d.pend = append(d.pend, pending{node: node, idx: int32(idx), what: what})
	nd := &d.t.nodes[node]
	d.need += int(nd.end - nd.start)
}

// excerpt returns node's JSON text for an error message, quoted and cut
// to 100 bytes.
func (d *jsonDecoder) excerpt(node int32) string {
	nd := &d.t.nodes[node]
	start, end := int(nd.start), int(nd.end)
	if nd.kind == jString {
		start, end = start-1, end+1
	}
	s := d.t.s[start:end]
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return strconv.Quote(s)
}
