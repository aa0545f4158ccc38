package loki

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/ingest"
)

var parse = Options{ParseMessage: true}

// sample is a push with string labels only, so that both encodings
// can carry it.
var sample = []tStream{
	{labels: fs("job", "api", "level", "info", "empty", ""), entries: []tEntry{
		tAt(1764115200123456789, "plain line"),
		tAt(1764115201000000000, `{"msg":"hi","a":{"b":1,"c":null},"arr":[1, "x"]}`, f("trace_id", "abc"), f("n", "5")),
		tAt(0, "no time"),
		tAt(1764115202000000000, "", f("only", "meta")),
	}},
	{labels: nil, entries: []tEntry{tAt(1764115203000000000, "no labels")}},
	{labels: fs("job", "empty stream")},
	{labels: fs("q", "a\"b\\c\n\té", "job", "other"), entries: []tEntry{
		tAt(1764115204000000001, "  {\"message\":\"padded\"}\n", f("message", "meta message")),
	}},
}

func TestSameRowsJSONProtobuf(t *testing.T) {
	jb, pb := encodeJSON(sample), encodeProtobuf(sample)
	for _, o := range []Options{{}, parse, {ParseMessage: true, MsgFields: []string{"message"}, MessageFieldsPrefix: "p_", HasStreamFields: true}} {
		jr, err := decodeRows(t, true, jb, o)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := decodeRows(t, false, pb, o)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(jr, pr) {
			t.Fatalf("options %+v:\njson     %v\nprotobuf %v", o, jr, pr)
		}
	}
	rows, _ := decodeRows(t, false, pb, parse)
	want := []tRow{
		{1764115200123456789, 3, fs("job", "api", "level", "info", "empty", "", "_msg", "plain line")},
		{1764115201000000000, 3, fs("job", "api", "level", "info", "empty", "", "trace_id", "abc", "n", "5", "msg", "hi", "a.b", "1", "arr", `[1,"x"]`)},
		{0, 3, fs("job", "api", "level", "info", "empty", "", "_msg", "no time")},
		{1764115202000000000, 3, fs("job", "api", "level", "info", "empty", "", "only", "meta", "_msg", "")},
		{1764115203000000000, 0, fs("_msg", "no labels")},
		{1764115204000000001, 2, fs("q", "a\"b\\c\n\té", "job", "other", "message", "meta message", "message", "padded")},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("got  %v\nwant %v", rows, want)
	}
	// _msg_field renames the first non-empty one among metadata and
	// message fields; -1 streams with _stream_fields.
	rows, _ = decodeRows(t, false, pb, Options{ParseMessage: true, MsgFields: []string{"message"}, HasStreamFields: true})
	if got := rows[5]; got.Stream != -1 || !reflect.DeepEqual(got.Fields, fs("q", "a\"b\\c\n\té", "job", "other", "_msg", "meta message", "message", "padded")) {
		t.Fatalf("%v", got)
	}
}

func TestPromLabels(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []ingest.Field // nil: error
	}{
		{`{}`, fs()},
		{`  {}  `, fs()},
		{"\t{a=\"b\"}\n", fs("a", "b")},
		{`{job="x", level="info"}`, fs("job", "x", "level", "info")},
		{`{job="x",level="info"}`, fs("job", "x", "level", "info")},
		{`{job="x",  level="info"}`, fs("job", "x", " level", "info")},
		{`{ job="x"}`, fs(" job", "x")},
		{`{a="b",}`, fs("a", "b")},
		{`{a="b", }`, fs("a", "b")},
		{`{a=""}`, fs("a", "")},
		{`{="v"}`, fs("_msg", "v")},
		{`{a="x\"y\\z\n\t\u00e9\x41\101"}`, fs("a", "x\"y\\z\n\téAA")},
		{`{a=",}={"}`, fs("a", ",}={")},
		{"{a=`raw\\n`}", fs("a", `raw\n`)},
		{`{a='b'}`, fs("a", "b")},
		{`{a.b-c/d="1"}`, fs("a.b-c/d", "1")},
		{``, nil},
		{`   `, nil},
		{`{`, nil},
		{`a="b"`, nil},
		{`{a="b"`, nil},
		{`{a="b"}}`, nil},
		{`{a}`, nil},
		{`{a=b}`, nil},
		{`{a= "b"}`, nil},
		{`{a ="b" }`, nil},
		{`{a="b"c="d"}`, nil},
		{`{a="b" , c="d"}`, nil},
		{`{a='bc'}`, nil},
		{`{a="\q"}`, nil},
		{`{a="b`, nil},
	} {
		var r Request
		err := r.appendPromLabels(c.in)
		if c.want == nil {
			if err == nil {
				t.Errorf("%q: no error, got %q", c.in, r.fields)
			}
			continue
		}
		if err != nil || !slices.Equal(r.fields, c.want) && len(c.want)+len(r.fields) > 0 {
			t.Errorf("%q: got %q, %v; want %q", c.in, r.fields, err, c.want)
		}
	}
}

func TestStructuredMetadata(t *testing.T) {
	// JSON: any value type; names and values decoded; in order,
	// duplicates kept; an empty object is no metadata.
	body := `{"streams":[{"stream":{"a":"1"},"values":[
		["1","m",{"s":"x\ty","n":1.50,"t":true,"z":null,"o":{"k" : [1, 2]},"k\u0041":"v","":"e","s":"dup","empty":""}],
		["2","m",{}]]}]}`
	rows, err := decodeRows(t, true, []byte(body), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []tRow{
		{1e9, 1, fs("a", "1", "s", "x\ty", "n", "1.50", "t", "true", "z", "null", "o", `{"k":[1,2]}`, "kA", "v", "_msg", "e", "s", "dup", "empty", "", "_msg", "m")},
		{2e9, 1, fs("a", "1", "_msg", "m")},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("got  %v\nwant %v", rows, want)
	}
	// Protobuf: pairs with an empty name or value are left out; a pair
	// without name or value is an error; fields after the first name and
	// value of a pair are not looked at.
	pair := func(b ...[]byte) []byte { return slices.Concat(b...) }
	name, value := pbString(nil, 1, "n"), pbString(nil, 2, "v")
	for _, c := range []struct {
		pair []byte
		want []ingest.Field // nil: error
	}{
		{pair(name, value), fs("n", "v")},
		{pair(value, name), fs("n", "v")},
		{pair(name, value, pbString(nil, 1, "other")), fs("n", "v")},
		{pair(name, value, []byte{0xff}), fs("n", "v")},
		{pair(name, pbString(nil, 5, "x"), value), fs("n", "v")},
		{pair(pbString(nil, 1, ""), value), fs()},
		{pair(name, pbString(nil, 2, "")), fs()},
		{pair(name), nil},
		{pair(value), nil},
		{nil, nil},
		{pair(name, []byte{0xff}, value), nil},
		{pair(pbVarint(nil, 1, 1), value), nil},
		{pair(name, pbVarint(nil, 2, 1)), nil},
	} {
		entry := pbBytes(pbString(nil, 2, "m"), 3, c.pair)
		body := pbBytes(nil, 1, pbBytes(pbString(nil, 1, `{}`), 2, entry))
		rows, err := decodeRows(t, false, body, Options{})
		if c.want == nil {
			if err == nil {
				t.Errorf("%x: no error: %v", c.pair, rows)
			}
			continue
		}
		if err != nil {
			t.Errorf("%x: %v", c.pair, err)
			continue
		}
		if got := rows[0].Fields; !reflect.DeepEqual(got, append(c.want, f("_msg", "m"))) {
			t.Errorf("%x: got %q, want %q", c.pair, got, c.want)
		}
	}
}

func TestMessage(t *testing.T) {
	long := strings.Repeat("k", 129)
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + `"v"` + strings.Repeat("}", n) }
	for _, c := range []struct {
		o    Options
		msg  string
		want []ingest.Field
	}{
		{parse, "plain", fs("_msg", "plain")},
		{parse, "", fs("_msg", "")},
		{parse, `{"a":"b"}`, fs("a", "b")},
		{Options{}, `{"a":"b"}`, fs("_msg", `{"a":"b"}`)},
		{parse, " \u00a0{\"a\":\"b\"}\r\n", fs("a", "b")},
		{parse, `{"a":{"b":{"c":"d"}},"e":1}`, fs("a.b.c", "d", "e", "1")},
		{parse, `{"n":1.50,"t":true,"f":false,"z":null,"arr":[1, "x\u0041" , {"k" : null}, []]}`,
			fs("n", "1.50", "t", "true", "f", "false", "arr", `[1,"x\u0041",{"k":null},[]]`)},
		{parse, `{"s":"a\nb\u00e9\"\ud83d\ude00","q\u0041":"v","u":"\ud800x\u12"}`, fs("s", "a\nbé\"😀", "qA", "v", "u", `\ud800x\u12`)},
		{parse, `{"a":"\q\/"}`, fs("a", `\q/`)},
		{parse, `{"":"x"}`, fs("_msg", "x")},
		{parse, `{"a":{"":"x"}}`, fs("a.", "x")},
		{parse, `{"a":{},"b":{"c":{}}}`, fs()},
		{parse, `{}`, fs()},
		{parse, `{"a":1,"a":2}`, fs("a", "1", "a", "2")},
		{parse, `{"a":01.2.3,"b":NaN,"c":-Inf,"d":+1,"e":1e5}`, fs("a", "01.2.3", "b", "NaN", "c", "-Inf", "d", "+1", "e", "1e5")},
		{parse, "{\"a\":\"x\x01\xff\"}", fs("a", "x\x01\xff")},
		{parse, `{bad}`, fs("_msg", `{bad}`)},
		{parse, `{"a":1} {"b":2}`, fs("_msg", `{"a":1} {"b":2}`)},
		{parse, `{"a":1,}`, fs("_msg", `{"a":1,}`)},
		{parse, `{"a":tru}`, fs("_msg", `{"a":tru}`)},
		{parse, `[1]`, fs("_msg", `[1]`)},
		{parse, `{"a":"b"`, fs("_msg", `{"a":"b"`)},
		{parse, `{"a":"b"}x`, fs("_msg", `{"a":"b"}x`)},
		{parse, `x{"a":"b"}`, fs("_msg", `x{"a":"b"}`)},
		// fastjson nests values up to 300 deep: the message object is 1,
		// "v" is n+1.
		{parse, deep(300), fs("_msg", deep(300))},
		// A prefix starts every name.
		{Options{ParseMessage: true, MessageFieldsPrefix: "p."}, `{"a":{"b":1},"":"x","c":"d"}`, fs("p.a.b", "1", "p.", "x", "p.c", "d")},
		// Preserved keys keep an object whole, its keys decoded and
		// quoted again (strconv.Quote when needed), nested ones as sent.
		{Options{ParseMessage: true, PreserveKeys: []string{"a", "d.e"}}, `{"a":{"b\u0041":{"c\u0041" : 1},"t\tx":2,"x\u0001":3},"d":{"e":{"f":2},"g":3},"h":{"a":{"i":4}}}`,
			fs("a", `{"bA":{"c\u0041":1},"t\tx":2,"x\x01":3}`, "d.e", `{"f":2}`, "d.g", "3", "h.a.i", "4")},
		{Options{ParseMessage: true, PreserveKeys: []string{"a"}}, `{"a":{}}`, fs("a", `{}`)},
		// A key making a name over 128 bytes keeps its object whole.
		{parse, `{"` + long + `":1,"b":"x y"}`, fs("_msg", `{"`+long+`":1,"b":"x y"}`)},
		{Options{ParseMessage: true, MessageFieldsPrefix: "p"}, `{"` + long + `":1}`, fs("p", `{"`+long+`":1}`)},
		{parse, `{"` + long[:128] + `":1}`, fs(long[:128], "1")},
		{parse, `{"a":{"` + long[:126] + `":1}}`, fs("a."+long[:126], "1")},
		{parse, `{"a":{"` + long[:127] + `":1}}`, fs("a", `{"`+long[:127]+`":1}`)},
	} {
		body := pbBytes(nil, 1, pbBytes(pbString(nil, 1, `{}`), 2, pbString(nil, 2, c.msg)))
		rows, err := decodeRows(t, false, body, c.o)
		if err != nil {
			t.Fatal(err)
		}
		if got := rows[0].Fields; !slices.Equal(got, c.want) && len(got)+len(c.want) > 0 {
			t.Errorf("%+v %q:\ngot  %q\nwant %q", c.o, c.msg, got, c.want)
		}
	}
}

func TestDeepMessage(t *testing.T) {
	msg := strings.Repeat(`{"a":`, 299) + `"v"` + strings.Repeat("}", 299)
	body := pbBytes(nil, 1, pbBytes(pbString(nil, 1, `{}`), 2, pbString(nil, 2, msg)))
	rows, err := decodeRows(t, false, body, parse)
	if err != nil {
		t.Fatal(err)
	}
	// The name is longer than 128 bytes long before: the object at
	// a.a. ... (64 levels, 128 bytes of prefix) is kept whole.
	p := strings.Repeat("a.", 64)
	want := fs(p[:len(p)-1], strings.Repeat(`{"a":`, 299-64)+`"v"`+strings.Repeat("}", 299-64))
	if !reflect.DeepEqual(rows[0].Fields, want) {
		t.Fatalf("got %q", rows[0].Fields)
	}
}

func TestMsgFieldRename(t *testing.T) {
	o := Options{ParseMessage: true, MsgFields: []string{"m", "msg", "message"}}
	for _, c := range []struct {
		labels, meta []ingest.Field
		msg          string
		want         []ingest.Field // after the labels
	}{
		{nil, nil, `{"x":1,"msg":"hello","message":"other"}`, fs("x", "1", "_msg", "hello", "message", "other")},
		{nil, nil, `{"m":"","msg":"hello"}`, fs("m", "", "_msg", "hello")},
		{nil, fs("msg", "meta"), `{"m":"","msg":"hello"}`, fs("_msg", "meta", "m", "", "msg", "hello")},
		{fs("msg", "label"), nil, `{"msg":"hello"}`, fs("_msg", "hello")},
		{fs("msg", "label"), nil, `{"x":"y"}`, fs("x", "y")},
		{nil, fs("msg", "meta"), `not json`, fs("msg", "meta", "_msg", "not json")},
		{nil, nil, `{"message":"a","msg":"b"}`, fs("message", "a", "_msg", "b")},
		{nil, nil, `{"m":{"x":1}}`, fs("m.x", "1")},
	} {
		s := []tStream{{labels: c.labels, entries: []tEntry{tAt(1, c.msg, c.meta...)}}}
		for _, json := range []bool{true, false} {
			var body []byte
			if json {
				body = encodeJSON(s)
			} else {
				body = encodeProtobuf(s)
			}
			rows, err := decodeRows(t, json, body, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := rows[0].Fields[len(c.labels):]; !slices.Equal(got, c.want) || !slices.Equal(rows[0].Fields[:len(c.labels)], c.labels) {
				t.Errorf("json=%v %q %q: got %q, want %q", json, c.meta, c.msg, rows[0].Fields, c.want)
			}
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"", 0, true},
		{"0", 0, true},
		{"1764115200", 1764115200e9, true},
		{"1764115200123", 1764115200123e6, true},
		{"1764115200123456", 1764115200123456e3, true},
		{"1764115200123456789", 1764115200123456789, true},
		{"+1764115200", 1764115200e9, true},
		{"-1", -1e9, true},
		{"9223372036", 9223372036e9, true},
		{"9223372037", 9223372037e6, true},
		{"1764115200.5", 1764115200500e6, true},
		{"1764115200.123456", 1764115200123456e3, true},
		{"1764115200.1234567", 1764115200123456700, true},
		{"1.5", 1500e9, true}, // 1500 (thousandths) is taken as seconds
		{"-1.5", -1500e9, true},
		{"1.-5", 0, false}, // VictoriaMetrics' overflow check wraps
		{"1.7641152e9", 1764115200e9, true},
		{"1.7641152E9", 1764115200e9, true},
		{"1764115200123e6", 1764115200123e6, true},
		{"1e18", 1e18, true},
		{"1e19", 0, false},
		{"1.5e0", 0, false},
		{"1e-3", 0, false},
		{"1.", 0, false},
		{".5", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"0x10", 0, false},
		{"1_000", 0, false},
		{"abc", 0, false},
		{"99999999999999999999", 0, false},
		{"2026-11-26T00:00:00Z", 0, false},
	} {
		got, ok := parseTimestamp(c.in)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%q: got %d %v, want %d %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestProtobufTimestamp(t *testing.T) {
	ts := func(b ...[]byte) []byte {
		entry := pbBytes(pbString(nil, 2, "m"), 1, slices.Concat(b...))
		return pbBytes(nil, 1, pbBytes(pbString(nil, 1, `{}`), 2, entry))
	}
	for _, c := range []struct {
		body []byte
		want int64
		ok   bool
	}{
		{ts(pbVarint(nil, 1, 1764115200), pbVarint(nil, 2, 123)), 1764115200000000123, true},
		{ts(pbVarint(nil, 2, 5)), 5, true},
		{ts(), 0, true},
		{ts(pbVarint(nil, 1, 1), pbVarint(nil, 1, 2)), 2e9, true},
		{ts(pbVarint(nil, 1, uint64(1<<64-1))), -1e9, true},
		{ts(pbVarint(nil, 2, 1<<32-1)), -1, true},
		{ts(pbVarint(nil, 2, 1<<32)), 0, false},
		{ts(pbVarint(nil, 2, uint64(1<<64-1))), 0, false}, // nanos -1, sign-extended
		{ts(pbString(nil, 1, "x")), 0, false},
		{ts(pbVarint(nil, 7, 1), pbString(nil, 8, "x")), 0, true},
	} {
		rows, err := decodeRows(t, false, c.body, Options{})
		if (err == nil) != c.ok || err == nil && rows[0].Time != c.want {
			t.Errorf("%x: %v %v, want %d %v", c.body, rows, err, c.want, c.ok)
		}
	}
}

func TestEmitError(t *testing.T) {
	r, err := DecodeProtobuf(encodeProtobuf(sample))
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	n := 0
	err = r.Rows(parse, func(*ingest.Row) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 {
		t.Fatalf("%v %d", err, n)
	}
}

func TestRowsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	r, err := DecodeJSON(encodeJSON(sample))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{ParseMessage: true, MessageFieldsPrefix: "p.", MsgFields: []string{"msg"}}
	emit := func(*ingest.Row) error { return nil }
	if a := testing.AllocsPerRun(100, func() { _ = r.Rows(o, emit) }); a != 0 {
		t.Errorf("%v allocations per Rows", a)
	}
}

func TestSnappy(t *testing.T) {
	raw := encodeProtobuf(sample)
	comp := snappyEncode(raw)
	got, err := Snappy(nil, comp, 1<<20)
	if err != nil || string(got) != string(raw) {
		t.Fatalf("%v", err)
	}
	// dst's storage is used when large enough.
	dst := make([]byte, 0, len(raw))
	if got, err = Snappy(dst, comp, len(raw)); err != nil || &got[0] != &dst[:1][0] {
		t.Fatalf("%v", err)
	}
	if _, err := Snappy(nil, comp, len(raw)-1); err == nil || !strings.Contains(err.Error(), "too big") {
		t.Fatalf("oversize: %v", err)
	}
	// A 10-byte body claiming 4 GiB is refused from its header.
	bomb := []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0}
	if _, err := Snappy(nil, bomb, 64<<20); err == nil {
		t.Fatal("bomb accepted")
	}
	for _, bad := range [][]byte{nil, {0x80}, raw, comp[:len(comp)-1], append(slices.Clone(comp), 0)} {
		if _, err := Snappy(nil, bad, 1<<20); err == nil {
			t.Errorf("%x: no error", bad)
		}
	}
	// The empty block.
	if got, err := Snappy(nil, []byte{0}, 10); err != nil || len(got) != 0 {
		t.Fatalf("%q %v", got, err)
	}
	// A copy with offset 0 (an S2 extension) is refused, as by
	// golang/snappy: 3 literal bytes, then a copy-1 of length 4 at
	// offset 0.
	if _, err := Snappy(nil, []byte{7, 2 << 2, 'a', 'b', 'c', 0x01, 0x00}, 10); err == nil {
		t.Error("S2 repeat accepted")
	}
}

func TestIsJSONContentType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json": true, "application/json; charset=utf-8": true,
		"application/x-protobuf": false, "": false, "application/jsonx": false, "Application/JSON": false,
	} {
		if IsJSONContentType(ct) != want {
			t.Errorf("%q: %v", ct, !want)
		}
	}
}

func TestRowsConcurrent(t *testing.T) {
	r, err := DecodeJSON(encodeJSON(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := collect(t, r, vlOptions)
	done := make(chan []tRow)
	for range 4 {
		go func() {
			var rows []tRow
			for range 50 {
				rows = rows[:0]
				_ = r.Rows(vlOptions, func(row *ingest.Row) error {
					rows = append(rows, tRow{row.Time, row.Stream, cloneFields(row.Fields)})
					return nil
				})
			}
			done <- rows
		}()
	}
	for range 4 {
		if got := <-done; !reflect.DeepEqual(got, want) {
			t.Errorf("got %v", got)
		}
	}
}
