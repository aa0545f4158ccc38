package loki

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// jsonCases are JSON bodies and whether VictoriaLogs v1.52.1 takes them
// (204) or not (400); with -vl, TestVLStatus checks this against it.
var jsonCases = []struct {
	body    string
	ok      bool
	entries int
}{
	{`{"streams":[]}`, true, 0},
	{` {"streams":[]} `, true, 0},
	{`{"streams":[],"other":{"x":[1,2,{"y":null}]}}`, true, 0},
	{`{"streams":[{"values":[]}]}`, true, 0},
	{`{"streams":[{"stream":{},"values":[]}]}`, true, 0},
	{`{"streams":[{"values":[["","x"]]}]}`, true, 1},
	{`{"streams":[{"values":[["1764115200","x"]],"stream":{"a":"b"}}]}`, true, 1},
	{`{"streams":[{"values":[["+1764115200","x",{}]]}]}`, true, 1},
	{`{"streams":[{"values":[["1764115200","x",{"k":[1,{"a":null}],"n":null}]]}]}`, true, 1},
	{`{"streams":[{"values":[["0","x"]]}]}`, true, 1},
	{`{"streams":[{"values":[["1.7641152e9","x"]]}]}`, true, 1},
	{`{"streams":[{"values":[["17641152\u0030\u0030","x"]]}]}`, true, 1},
	{`{"streams":[{"values":[["1764115200","a\q"]]}]}`, true, 1},
	{"{\"streams\":[{\"values\":[[\"1764115200\",\"a\x01\tb\xff\"]]}]}", true, 1},
	{`{"streams":[{"values":[],"x":01.2.3}]}`, true, 0},
	{`{"streams":[{"values":[],"x":NaN,"y":-inf,"z":+Infinity}]}`, false, 0},
	{`{"streams":[{"values":[],"x":NaN,"y":-inf}]}`, true, 0},
	{`{"str\u0065ams":[{"values":[["","x"]]}]}`, true, 1},
	{`{"streams":[{"values":[["","first"]]}],"streams":[]}`, true, 1},
	{`{"streams":[{"values":[["","a"]],"v\u0061lues":[["","b"],["","c"]]}]}`, true, 1},
	{`{"streams":[{"v\u0061lues":[["","b"],["","c"]],"values":[["","a"]]}]}`, true, 2},
	{`{"streams":[{"stre\u0061m":{"a":"b"},"v\u0061lues":[["","b"],["","c"]],"values":[["","a"]]}]}`, true, 2},
	{`{"streams":[` + strings.Repeat(`{"values":[["1764115200","x"]]},`, 3) + `{"values":[]}]}`, true, 3},
	{`{"streams":[],"x":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`, true, 0},
	{`{"streams":[],"x":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`, false, 0},
	{``, false, 0},
	{`{}`, false, 0},
	{`[]`, false, 0},
	{`null`, false, 0},
	{`{"streams":null}`, false, 0},
	{`{"streams":{}}`, false, 0},
	{`{"streams":"x"}`, false, 0},
	{`{"streams":[1]}`, false, 0},
	{`{"streams":[[]]}`, false, 0},
	{`{"streams":[{}]}`, false, 0},
	{`{"streams":[{"stream":{"a":"b"}}]}`, false, 0},
	{`{"streams":[{"stream":null,"values":[]}]}`, false, 0},
	{`{"streams":[{"stream":[],"values":[]}]}`, false, 0},
	{`{"streams":[{"stream":"a","values":[]}]}`, false, 0},
	{`{"streams":[{"values":{}}]}`, false, 0},
	{`{"streams":[{"values":null}]}`, false, 0},
	{`{"streams":[{"values":[{}]}]}`, false, 0},
	{`{"streams":[{"values":[[]]}]}`, false, 0},
	{`{"streams":[{"values":[["1"]]}]}`, false, 0},
	{`{"streams":[{"values":[["1","a",{},"x"]]}]}`, false, 0},
	{`{"streams":[{"values":[[1764115200,"a"]]}]}`, false, 0},
	{`{"streams":[{"values":[[null,"a"]]}]}`, false, 0},
	{`{"streams":[{"values":[["x","a"]]}]}`, false, 0},
	{`{"streams":[{"values":[[" 1764115200","a"]]}]}`, false, 0},
	{`{"streams":[{"values":[["2026-11-26T00:00:00Z","a"]]}]}`, false, 0},
	{`{"streams":[{"values":[["1e19","a"]]}]}`, false, 0},
	{`{"streams":[{"values":[["1","a",null]]}]}`, false, 0},
	{`{"streams":[{"values":[["1","a",[]]]}]}`, false, 0},
	{`{"streams":[{"values":[["1","a","b"]]}]}`, false, 0},
	{`{"streams":[{"values":[["1",5]]}]}`, false, 0},
	{`{"streams":[{"values":[["1",null]]}]}`, false, 0},
	{`{"streams":[{"values":[["1",{"a":"b"}]]}]}`, false, 0},
	{`{"streams":[{"values":[["1764115200","ok"],["bad","x"]]}]}`, false, 0},
	{`{"streams":[{"values":[["1764115200","ok"]]},{"values":1}]}`, false, 0},
	{`{"streams":[],}`, false, 0},
	{`{"streams":[]} x`, false, 0},
	{`{"streams":[]}}`, false, 0},
	{`{"streams":[`, false, 0},
	{`{"streams":[{"values":[],"x":tru}]}`, false, 0},
	{`{"streams":[{"values":[],"x":+}]}`, false, 0},
	{`{"streams":[{"values":[],"x":"abc}]}`, false, 0},
	{`{'streams':[]}`, false, 0},
	{`{"streams":[{"values":[],"x":[1,]}]}`, false, 0},
}

func TestJSONCases(t *testing.T) {
	for _, c := range jsonCases {
		r, err := DecodeJSON([]byte(c.body))
		if (err == nil) != c.ok {
			t.Errorf("%.100q: error %v, want ok=%v", c.body, err, c.ok)
			continue
		}
		if err == nil {
			if r.Entries() != c.entries {
				t.Errorf("%.100q: %d entries, want %d", c.body, r.Entries(), c.entries)
			}
			collect(t, r, parse)
		}
	}
}

// pbCase is a protobuf body (not compressed) and whether VictoriaLogs
// takes it.
type pbCase struct {
	name    string
	body    []byte
	ok      bool
	entries int
}

func pbCases() []pbCase {
	stream := func(labels string, entries ...[]byte) []byte {
		s := pbString(nil, 1, labels)
		for _, e := range entries {
			s = pbBytes(s, 2, e)
		}
		return pbBytes(nil, 1, s)
	}
	line := pbString(nil, 2, "line")
	ts := pbBytes(nil, 1, pbVarint(pbVarint(nil, 1, 1764115200), 2, 5))
	entry := slices.Concat(ts, line)
	cases := []pbCase{
		{"empty", nil, true, 0},
		{"labels only", stream(`{a="b"}`), true, 0},
		{"one", stream(`{a="b"}`, entry), true, 1},
		{"empty entry", stream(`{}`, nil), true, 1},
		{"two streams", slices.Concat(stream(`{a="b"}`, entry, entry), stream(`{}`, entry)), true, 3},
		{"labels after entries", pbBytes(nil, 1, slices.Concat(pbBytes(nil, 2, entry), pbString(nil, 1, `{a="b"}`))), true, 1},
		{"second labels ignored", pbBytes(nil, 1, slices.Concat(pbString(nil, 1, `{a="b"}`), pbVarint(nil, 1, 5), pbBytes(nil, 2, entry))), true, 1},
		{"unknown fields", slices.Concat(pbVarint(nil, 2, 7), []byte{0x02, 0x00}, stream(`{}`, slices.Concat(entry, []byte{0x7d, 1, 2, 3, 4}, pbVarint(nil, 9, 1))),
			[]byte{0x19, 1, 2, 3, 4, 5, 6, 7, 8}), true, 1},
		{"stream i64", []byte{0x09, 1, 2, 3, 4, 5, 6, 7, 8}, false, 0},
		{"field number 2^32-1", slices.Concat(pbVarint(nil, 1<<29-1, 1), []byte{0xf8, 0xff, 0xff, 0xff, 0x7f, 0x00}), true, 0},
		{"field number 2^32", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00}, false, 0},
		{"labels with escapes", stream(`{a="\"x\"", b="\u00e9"}`, entry), true, 1},
		{"empty label name", stream(`{="v"}`, entry), true, 1},
		{"missing labels", pbBytes(nil, 1, pbBytes(nil, 2, entry)), false, 0},
		{"empty labels", stream(``, entry), false, 0},
		{"bad labels", stream(`{a=b}`, entry), false, 0},
		{"labels varint", pbBytes(nil, 1, pbVarint(nil, 1, 1)), false, 0},
		{"stream varint", pbVarint(nil, 1, 1), false, 0},
		{"entry varint", pbBytes(nil, 1, slices.Concat(pbString(nil, 1, "{}"), pbVarint(nil, 2, 1))), false, 0},
		{"line varint", stream(`{}`, pbVarint(nil, 2, 1)), false, 0},
		{"timestamp varint", stream(`{}`, pbVarint(nil, 1, 1)), false, 0},
		{"metadata varint", stream(`{}`, pbVarint(nil, 3, 1)), false, 0},
		{"metadata without value", stream(`{}`, pbBytes(nil, 3, pbString(nil, 1, "n"))), false, 0},
		{"negative nanos", stream(`{}`, pbBytes(nil, 1, pbVarint(nil, 2, uint64(1<<64-1)))), false, 0},
		{"group", slices.Concat(stream(`{}`), []byte{0x0b, 0x0c}), false, 0},
		{"wire type 6", []byte{0x0e}, false, 0},
		{"wire type 7", []byte{0x0f}, false, 0},
		{"truncated varint", []byte{0x08, 0x80}, false, 0},
		{"truncated i64", []byte{0x09, 1, 2, 3}, false, 0},
		{"truncated i32", []byte{0x0d, 1, 2, 3}, false, 0},
		{"overlong varint", []byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, false, 0},
		{"length past end", []byte{0x0a, 0x05, 0x00}, false, 0},
		{"bad second stream", slices.Concat(stream(`{}`, entry), stream(`{`, entry)), false, 0},
	}
	return cases
}

func TestProtobufCases(t *testing.T) {
	for _, c := range pbCases() {
		r, err := DecodeProtobuf(c.body)
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v, want ok=%v", c.name, err, c.ok)
			continue
		}
		if err == nil {
			if r.Entries() != c.entries {
				t.Errorf("%s: %d entries, want %d", c.name, r.Entries(), c.entries)
			}
			collect(t, r, parse)
		}
	}
}

// TestTruncated checks every prefix of a body: it is an error, or (for
// protobuf, cut between streams) a valid request whose rows are a prefix
// of the whole body's.
func TestTruncated(t *testing.T) {
	for _, json := range []bool{false, true} {
		var body []byte
		if json {
			body = encodeJSON(sample)
		} else {
			body = encodeProtobuf(sample)
		}
		all, err := decodeRows(t, json, body, parse)
		if err != nil {
			t.Fatal(err)
		}
		valid := 0
		for i := range len(body) {
			rows, err := decodeRows(t, json, body[:i], parse)
			if err != nil {
				continue
			}
			valid++
			if len(rows) > len(all) || !reflect.DeepEqual(rows, all[:len(rows)]) && len(rows) > 0 {
				t.Fatalf("json=%v, %d bytes: rows %v", json, i, rows)
			}
		}
		if json && valid != 0 || !json && valid != len(sample) {
			t.Errorf("json=%v: %d valid prefixes", json, valid)
		}
	}
}
