package otlp

import (
	"math"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/ingest"
)

func decodeJSONRows(t testing.TB, body string) []string {
	t.Helper()
	req, err := DecodeJSON([]byte(body))
	if err != nil {
		t.Fatalf("DecodeJSON: %v", err)
	}
	return rowsOf(t, req)
}

// richJSON is richRequest in the OTLP/JSON encoding, with the spellings
// the mapping allows.
const richJSON = `{"resourceLogs":[
 {"resource":{"attributes":[
    {"key":"service.name","value":{"stringValue":"api"}},
    {"key":"k","value":{"kvlistValue":{"values":[{"key":"a","value":{"intValue":"1"}},{"key":"b","value":{"arrayValue":{"values":[{"doubleValue":1.5}]}}}]}}}]},
  "scopeLogs":[
   {"scope":{"name":"lib","version":"2","attributes":[{"key":"x","value":{"boolValue":true}}]},
    "logRecords":[
     {"timeUnixNano":"1700000000123456789","severityNumber":9,"severityText":"INFO",
      "body":{"stringValue":"hello"},
      "attributes":[{"key":"i","value":{"intValue":-3}},{"key":"b","value":{"bytesValue":"AQI="}},
        {"key":"arr","value":{"arrayValue":{"values":[{"stringValue":"x"},{"kvlistValue":{"values":[{"key":"y","value":{}}]}},{"arrayValue":{}}]}}}],
      "traceId":"00000000000000000000000000000000","spanId":"0102030405060708","eventName":"e"},
     {"observedTimeUnixNano":42,"body":{"kvlistValue":{"values":[{"key":"m","value":{"stringValue":"n"}}]}}}]},
   {"logRecords":[{"timeUnixNano":5,"body":{"doubleValue":0.25}}]}]},
 {"scopeLogs":[{"scope":{},"logRecords":[{"timeUnixNano":"6","body":{"arrayValue":{"values":[{"intValue":1}]}}}]}]}
]}`

func TestJSONEquivalence(t *testing.T) {
	want := decodeRows(t, richRequest())
	checkRows(t, decodeJSONRows(t, richJSON), want...)

	// The same with the .proto names, extra whitespace, unknown fields and
	// nulls.
	alt := strings.NewReplacer(
		`"resourceLogs"`, `"resource_logs"`, `"scopeLogs"`, `"scope_logs"`, `"logRecords"`, `"log_records"`,
		`"timeUnixNano"`, `"time_unix_nano"`, `"severityNumber"`, `"severity_number"`, `"traceId"`, `"trace_id"`,
		`"stringValue"`, `"string_value"`, `"kvlistValue"`, `"kvlist_value"`, `"arrayValue"`, `"array_value"`,
		`"bytesValue"`, `"bytes_value"`, `"eventName"`, `"event_name"`,
		`"body":`, `"unknown":{"a":[1,2,{"b":null}],"c":"\u00e9"}, "flags":1, "droppedAttributesCount":0, "severityText":null, "body" :`,
		`,`, " ,\n\t",
	).Replace(richJSON)
	checkRows(t, decodeJSONRows(t, alt), want...)
	checkRows(t, decodeJSONRows(t, goldenJSON), decodeRows(t, goldenRequestNoJunk())...)
}

// goldenJSON is goldenRequest without its unknown fields and hand-made
// parts (a key "" is left out by a protobuf marshaller, so it is not
// here).
const goldenJSON = `{"resourceLogs":[{"resource":{"attributes":[
  {"key":"service.name","value":{"stringValue":"api"}},
  {"key":"host","value":{"kvlistValue":{"values":[{"key":"name","value":{"stringValue":"h1"}},{"key":"id","value":{"intValue":"7"}}]}}},
  {"key":"tags","value":{"arrayValue":{"values":[{"stringValue":"a"},{"stringValue":"b"}]}}},
  {"key":"empty","value":{"stringValue":""}},
  {"key":"ratio","value":{"doubleValue":0.5}}]},
 "scopeLogs":[{"scope":{"name":"lib","version":"1.2","attributes":[{"key":"team","value":{"stringValue":"core"}}]},
  "logRecords":[
   {"timeUnixNano":"1700000000000000001","severityNumber":"SEVERITY_NUMBER_INFO","body":{"stringValue":"hello"},
    "attributes":[{"key":"i","value":{"intValue":"-3"}},{"key":"big","value":{"doubleValue":1e21}},
     {"key":"small","value":{"doubleValue":1.5e-7}},{"key":"nan","value":{"doubleValue":"NaN"}},
     {"key":"inf","value":{"doubleValue":"Infinity"}},{"key":"bytes","value":{"bytesValue":"AAEC_v8"}},
     {"key":"ok","value":{"boolValue":true}},
     {"key":"arr","value":{"arrayValue":{"values":[{"stringValue":"q\"uote"},{"stringValue":"ctl\u0001\ttab"},
       {"stringValue":"é\u2028"},{"stringValue":"back\\slash"},{"intValue":-7},{"doubleValue":1E+21},{"doubleValue":0.1},
       {"doubleValue":"NaN"},{"doubleValue":"-Infinity"},{"boolValue":false},{},{"bytesValue":"aGk="},{"arrayValue":{}},
       {"arrayValue":{"values":[{"intValue":1},{"arrayValue":{"values":[{"stringValue":"x"}]}}]}},
       {"kvlistValue":{"values":[{"key":"a","value":{"intValue":1}},{"key":"b","value":{"stringValue":"x"}},
         {"key":"a","value":{"intValue":2}},{"key":"e","value":{"kvlistValue":{}}},{"key":"n","value":{}},{"value":{"intValue":9}}]}}]}}},
     {"key":"m","value":{"kvlistValue":{"values":[{"key":"x","value":{"intValue":1}},
       {"key":"y","value":{"kvlistValue":{"values":[{"key":"z","value":{"stringValue":"deep"}}]}}},
       {"key":"l","value":{"arrayValue":{"values":[{"stringValue":"w"}]}}}]}}}],
    "traceId":"4BF92F3577B34DA6A3CE929D0E0E4736","spanId":"00f067aa0ba902b7","flags":1,"droppedAttributesCount":3},
   {"timeUnixNano":1700000000000000002,"severityNumber":17,"severityText":"custom","eventName":"login","body":{"intValue":42}},
   {"timeUnixNano":"1.700000000000000003e18","severityNumber":25,"body":{"kvlistValue":{"values":[
     {"key":"foo","value":{"stringValue":"bar"}},{"key":"n","value":{"kvlistValue":{"values":[{"key":"x","value":{"intValue":1}}]}}}]}}},
   {"timeUnixNano":"1700000000000000004","body":{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":1}]}}}]},
  {"scope":{},"logRecords":[{"timeUnixNano":"1700000000000000005","body":{"bytesValue":"Zm9vIGJhcg=="}}]},
  {"logRecords":[{"observedTimeUnixNano":"1700000000000000006"}]}]},
 {"scopeLogs":[{"scope":{"name":"other"},"logRecords":[{"timeUnixNano":"1700000000000000007","body":{"boolValue":false},
   "attributes":[{"key":"k","value":{"stringValue":"v"}}]}]}]},
 {"resource":{"attributes":[{"key":"r","value":{"stringValue":"last"}}]},"scopeLogs":[{"logRecords":[{"body":{"stringValue":"no time"}}]}]}
]}`

// goldenRequestNoJunk is goldenRequest as goldenJSON has it: no unknown
// fields, no key "", severity 0xffffffff (which JSON cannot give: -1 is a
// 10-byte varint, an error) left out.
func goldenRequestNoJunk() pb {
	noJunk := func(m pb) pb { return m }
	_ = noJunk
	const t0 = 1700000000000000000
	trace := []byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	span := []byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	arr := av(sv(`q"uote`), sv("ctl\x01\ttab"), sv("é\u2028"), sv(`back\slash`), iv(-7), dv(1e21), dv(0.1),
		dv(math.NaN()), dv(math.Inf(-1)), bv(false), pb{}, byv([]byte("hi")), av(), av(iv(1), av(sv("x"))),
		kvl(kv("a", iv(1)), kv("b", sv("x")), kv("a", iv(2)), kv("e", kvl()), kv("n", pb{}), pb(nil).msg(2, iv(9))))
	return request(
		resourceLogs(attrs(1, kv("service.name", sv("api")), kv("host", kvl(kv("name", sv("h1")), kv("id", iv(7)))),
			kv("tags", av(sv("a"), sv("b"))), kv("empty", sv("")), kv("ratio", dv(0.5))),
			scopeLogs(pb(nil).str(1, "lib").str(2, "1.2").msg(3, kv("team", sv("core"))),
				rec(t0+1, sv("hello"), kv("i", iv(-3)), kv("big", dv(1e21)), kv("small", dv(1.5e-7)), kv("nan", dv(math.NaN())),
					kv("inf", dv(math.Inf(1))), kv("bytes", byv([]byte{0, 1, 2, 0xfe, 0xff})), kv("ok", bv(true)), kv("arr", arr),
					kv("m", kvl(kv("x", iv(1)), kv("y", kvl(kv("z", sv("deep")))), kv("l", av(sv("w")))))).
					varint(2, 9).bytes(9, trace).bytes(10, span),
				rec(t0+2, iv(42)).varint(2, 17).str(3, "custom").str(12, "login"),
				rec(t0+3, kvl(kv("foo", sv("bar")), kv("n", kvl(kv("x", iv(1)))))).varint(2, 25),
				rec(t0+4, av(sv("a"), iv(1))),
			),
			scopeLogs(pb{}, rec(t0+5, byv([]byte("foo bar")))),
			scopeLogs(nil, pb(nil).fixed64(11, t0+6)),
		),
		resourceLogs(nil, scopeLogs(pb(nil).str(1, "other"), rec(t0+7, bv(false), kv("k", sv("v"))))),
		resourceLogs(attrs(1, kv("r", sv("last"))), scopeLogs(nil, rec(0, sv("no time")))),
	)
}

func TestJSONForms(t *testing.T) {
	const u = ` severity_number="0" severity_text="Unspecified"`
	for _, c := range []struct{ json, want string }{
		{`{}`, ``},
		{`null`, ``},
		{`{"resourceLogs":null}`, ``},
		{`{"resourceLogs":[null]}`, ``},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[null]}]}]}`, `0 [0]` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":1e3,"observedTimeUnixNano":"2000.0"}]}]}]}`, `1000 [0]` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"observedTimeUnixNano":"2e3"}]}]}]}`, `2000 [0]` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"18446744073709551615"}]}]}]}`, `-1 [0]` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityNumber":"SEVERITY_NUMBER_FATAL4"}]}]}]}`,
			`0 [0] severity_number="24" severity_text="Fatal4"`},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityNumber":"SEVERITY_NUMBER_TRACE2"}]}]}]}`,
			`0 [0] severity_number="2" severity_text="Trace2"`},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityNumber":"13","severityText":""}]}]}]}`,
			`0 [0] severity_number="13" severity_text="Warn"`},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"intValue":"-9223372036854775808"}}]}]}]}`,
			`0 [0] _msg="-9223372036854775808"` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"doubleValue":"1.5"}}]}]}]}`, `0 [0] _msg="1.5"` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"doubleValue":-0}}]}]}]}`, `0 [0] _msg="-0"` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":""}}]}]}]}`, `0 [0] _msg=""` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":null,"intValue":1}}]}]}]}`, `0 [0] _msg="1"` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"bytesValue":"-_8"}}]}]}]}`, `0 [0] _msg="+/8="` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"bytesValue":""}}]}]}]}`, `0 [0] _msg=""` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"\ud83d\ude00\u00e9"}}]}]}]}`, `0 [0] _msg="😀é"` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":null,"traceId":"","spanId":null}]}]}]}`, `0 [0]` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"","value":{"stringValue":"x"}},{"key":"a"}]}]}]}]}`, `0 [0]` + u},
		{`{"resourceLogs":[{"scopeLogs":[{"scope":{"name":"","version":null},"logRecords":[{}]}]}]}`,
			`0 [0] scope.name="unknown" scope.version="unknown"` + u},
		{`{"resourceLogs":[{"resource":{"attributes":[{"key":"a","value":{"boolValue":false}}],"droppedAttributesCount":1},"schemaUrl":"x","scopeLogs":[{"logRecords":[{}]}]}]}`,
			`0 [1] a="false"` + u},
		{` {"x":[[[{}]]],"resourceLogs":[{"scopeLogs":[{"logRecords":[{"eventName":"ev"}]}]}]} `, `0 [1] event_name="ev"` + u},
	} {
		got := strings.Join(decodeJSONRows(t, c.json), "\n")
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.json, got, c.want)
		}
	}
}

func TestJSONErrors(t *testing.T) {
	for _, body := range []string{
		``, ` `, `[]`, `"x"`, `1`, `{"resourceLogs":{}}`, `{"resourceLogs":[1]}`, `{"resourceLogs":["x"]}`,
		`{"resourceLogs":[{"resource":[]}]}`, `{"resourceLogs":[{"scopeLogs":{}}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":-1}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"18446744073709551616"}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":1.5}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1e99999999999"}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"abc"}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":true}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityNumber":"INFO"}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityNumber":-1}]}]}]}`, // as protobuf: a 10-byte varint
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityNumber":4294967296}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"traceId":"zz"}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"traceId":"abc"}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"traceId":1}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":"x"}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"x","intValue":1}}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":1}}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"boolValue":"true"}}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"intValue":"9223372036854775808"}}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"doubleValue":"inf"}}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"doubleValue":1e999}}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"bytesValue":"!!"}}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"arrayValue":{"values":{}}}}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":1}]}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":{}}]}]}]}`,
		`{"resourceLogs":[]} x`, `{"resourceLogs":[],}`, `{"resourceLogs":[,]}`, `{"a":01}`, `{"a":"\x"}`,
		"{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", `{"a" 1}`, `{"a":tru}`, `{"a":1 "b":2}`, `{'a':1}`,
	} {
		if _, err := DecodeJSON([]byte(body)); err == nil {
			t.Errorf("no error for %s", body)
		}
	}

	// Every proper prefix of a valid request is an error, and no panic.
	for i := range len(richJSON) {
		if _, err := DecodeJSON([]byte(richJSON[:i])); err == nil {
			t.Errorf("no error for the %d-byte prefix", i)
		}
	}

	// Nesting is bounded.
	deep := strings.Repeat(`{"arrayValue":{"values":[`, MaxDepth) + strings.Repeat(`]}}`, MaxDepth)
	if _, err := DecodeJSON([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":` + deep + `}]}]}]}`)); err == nil {
		t.Errorf("no error for %d levels", MaxDepth)
	}
	deep = strings.Repeat(`[`, 2*MaxDepth) + strings.Repeat(`]`, 2*MaxDepth)
	if _, err := DecodeJSON([]byte(`{"unknown":` + deep + `}`)); err == nil {
		t.Errorf("no error for %d levels", 2*MaxDepth)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	f.Add([]byte(richJSON))
	f.Add([]byte(goldenJSON))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeJSON(body)
		if err != nil {
			return
		}
		if err := req.Rows(func(*ingest.Row) error { return nil }); err != nil {
			t.Fatalf("Rows after a successful decode: %v", err)
		}
	})
}
