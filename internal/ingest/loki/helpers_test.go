package loki

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/spate-io/spate/internal/ingest"
	"google.golang.org/protobuf/encoding/protowire"
)

// tStream and tEntry describe a push request for the encoders below.
type tStream struct {
	labels []ingest.Field
	// promLabels, if set, is the protobuf labels string instead of the
	// one made from labels.
	promLabels string
	entries    []tEntry
}

type tEntry struct {
	ts    string // JSON timestamp
	sec   int64  // protobuf Timestamp; no timestamp field when both are 0
	nanos int32
	line  string
	meta  []ingest.Field
}

// tAt returns an entry at Unix nanoseconds ns (0: none) in both
// encodings.
func tAt(ns int64, line string, meta ...ingest.Field) tEntry {
	e := tEntry{line: line, meta: meta, sec: ns / 1e9, nanos: int32(ns % 1e9)}
	if ns != 0 {
		e.ts = strconv.FormatInt(ns, 10)
	}
	return e
}

func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func jsonObject(fs []ingest.Field) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonQuote(f.Name) + ":" + jsonQuote(f.Value))
	}
	b.WriteByte('}')
	return b.String()
}

func encodeJSON(streams []tStream) []byte {
	var b strings.Builder
	b.WriteString(`{"streams":[`)
	for i, s := range streams {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"stream":` + jsonObject(s.labels) + `,"values":[`)
		for j, e := range s.entries {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString("[" + jsonQuote(e.ts) + "," + jsonQuote(e.line))
			if len(e.meta) > 0 {
				b.WriteString("," + jsonObject(e.meta))
			}
			b.WriteByte(']')
		}
		b.WriteString("]}")
	}
	b.WriteString("]}")
	return []byte(b.String())
}

func promLabels(fs []ingest.Field) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Name + "=" + strconv.Quote(f.Value))
	}
	b.WriteByte('}')
	return b.String()
}

func pbBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func pbString(b []byte, num protowire.Number, v string) []byte {
	return pbBytes(b, num, []byte(v))
}

func pbVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// encodeProtobuf encodes streams as a PushRequest the way Loki clients
// do (empty strings and zero numbers left out).
func encodeProtobuf(streams []tStream) []byte {
	var out []byte
	for _, s := range streams {
		labels := s.promLabels
		if labels == "" {
			labels = promLabels(s.labels)
		}
		sb := pbString(nil, 1, labels)
		for _, e := range s.entries {
			var eb []byte
			if e.sec != 0 || e.nanos != 0 {
				var tb []byte
				if e.sec != 0 {
					tb = pbVarint(tb, 1, uint64(e.sec))
				}
				if e.nanos != 0 {
					tb = pbVarint(tb, 2, uint64(e.nanos))
				}
				eb = pbBytes(eb, 1, tb)
			}
			if e.line != "" {
				eb = pbString(eb, 2, e.line)
			}
			for _, m := range e.meta {
				eb = pbBytes(eb, 3, pbString(pbString(nil, 1, m.Name), 2, m.Value))
			}
			sb = pbBytes(sb, 2, eb)
		}
		sb = pbVarint(sb, 3, 12345) // hash, ignored
		out = pbBytes(out, 1, sb)
	}
	return out
}

// tRow is a copied Row.
type tRow struct {
	Time   int64
	Stream int
	Fields []ingest.Field
}

func (r tRow) String() string {
	return fmt.Sprintf("{time=%d stream=%d %q}", r.Time, r.Stream, r.Fields)
}

func collect(t testing.TB, r *Request, o Options) []tRow {
	t.Helper()
	var rows []tRow
	err := r.Rows(o, func(row *ingest.Row) error {
		rows = append(rows, tRow{row.Time, row.Stream, cloneFields(row.Fields)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != r.Entries() {
		t.Fatalf("Rows emitted %d rows, Entries says %d", len(rows), r.Entries())
	}
	return rows
}

func cloneFields(fs []ingest.Field) []ingest.Field {
	out := make([]ingest.Field, len(fs))
	for i, f := range fs {
		out[i] = ingest.Field{Name: strings.Clone(f.Name), Value: strings.Clone(f.Value)}
	}
	return out
}

func decodeRows(t testing.TB, json bool, body []byte, o Options) ([]tRow, error) {
	t.Helper()
	var r *Request
	var err error
	if json {
		r, err = DecodeJSON(body)
	} else {
		r, err = DecodeProtobuf(body)
	}
	if err != nil {
		if r != nil {
			t.Fatalf("a Request with error %v", err)
		}
		return nil, err
	}
	return collect(t, r, o), nil
}

func snappyEncode(b []byte) []byte { return snappy.Encode(nil, b) }

func f(name, value string) ingest.Field { return ingest.Field{Name: name, Value: value} }

func fs(kv ...string) []ingest.Field {
	out := make([]ingest.Field, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		out = append(out, f(kv[i], kv[i+1]))
	}
	return out
}
