package otlp

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/spate-io/spate/internal/ingest"
	"google.golang.org/protobuf/encoding/protowire"
)

func TestStringBody(t *testing.T) {
	body := request(resourceLogs(nil, scopeLogs(nil,
		rec(1234, sv("hello")).varint(2, 9),
		rec(1235, sv("")),
	)))
	checkRows(t, decodeRows(t, body),
		`1234 [0] _msg="hello" severity_number="9" severity_text="Info"`,
		// An empty value is kept here; RowWriter leaves it out as
		// VictoriaLogs does.
		`1235 [0] _msg="" severity_number="0" severity_text="Unspecified"`,
	)
}

func TestAttributeKinds(t *testing.T) {
	body := request(resourceLogs(nil, scopeLogs(nil, rec(1, nil,
		kv("s", sv("x")),
		kv("i", iv(-42)),
		kv("d", dv(0.55)),
		kv("big", dv(1e21)),
		kv("small", dv(1e-7)),
		kv("nan", dv(math.NaN())),
		kv("inf", dv(math.Inf(-1))),
		kv("t", bv(true)),
		kv("f", bv(false)),
		kv("b", byv([]byte("foo bar"))),
		kv("a", av(sv("x"), iv(1), dv(1.5), dv(1e21), dv(1e-7), bv(true), pb{}, byv([]byte{0xff}),
			av(sv("n"), av()), kvl(kv("k", sv("v")), kv("e", kvl())))),
		kv("m", kvl(kv("k1", sv("v1")), kv("n", kvl(kv("k2", iv(2)))), kv("arr", av(sv("q"))), kv("none", kvl()))),
		kv("empty", pb{}),           // an AnyValue without a value: no field
		pb(nil).msg(2, sv("nokey")), // a KeyValue without a key: left out
		pb(nil).str(1, "novalue"),   // without a value: left out
		kv("dup", sv("1")),
		kv("dup", sv("2")), // both kept, as VictoriaLogs keeps them
	))))
	checkRows(t, decodeRows(t, body),
		`1 [0] s="x" i="-42" d="0.55" big="1000000000000000000000" small="0.0000001" nan="NaN" inf="-Inf"`+
			` t="true" f="false" b="Zm9vIGJhcg=="`+
			` a="[\"x\",1,1.5,1e+21,1e-07,true,null,\"/w==\",[\"n\",[]],{\"k\":\"v\",\"e\":{}}]"`+
			` m.k1="v1" m.n.k2="2" m.arr="[\"q\"]" dup="1" dup="2" severity_number="0" severity_text="Unspecified"`,
	)
}

func TestEmptyKey(t *testing.T) {
	// A key "" that is present (a hand-made body: protobuf libraries
	// leave empty strings out) names the message, as in VictoriaLogs.
	body := request(resourceLogs(nil, scopeLogs(pb(nil).msg(3, kv("", sv("s"))),
		rec(1, nil, kv("", sv("m")), kv("", kvl(kv("x", sv("1")))), kv("p", kvl(kv("", sv("2"))))),
	)))
	checkRows(t, decodeRows(t, body),
		`1 [0] scope.name="unknown" scope.version="unknown" scope.attributes.="s" _msg="m" x="1" p.="2" severity_number="0" severity_text="Unspecified"`,
	)
}

func TestBodyKinds(t *testing.T) {
	body := request(resourceLogs(nil, scopeLogs(nil,
		rec(1, iv(833)),
		rec(2, dv(2.5)),
		rec(3, bv(true)),
		rec(4, byv([]byte("foo bar"))),
		rec(5, av(sv("foo bar"), iv(1))),
		rec(6, kvl(kv("foo", sv("bar")), kv("n", kvl(kv("x", iv(1)))))),
		rec(7, pb{}),
		// Two values in one AnyValue (not valid for a oneof, but
		// well-formed protobuf): VictoriaLogs adds both.
		rec(8, append(sv("a"), iv(1)...)),
		rec(9, av(append(sv("a"), iv(1)...))), // in an array, the first counts
		// The body and attributes in wire order.
		pb(nil).fixed64(1, 10).msg(6, kv("a", sv("1"))).msg(5, sv("msg")).msg(6, kv("b", sv("2"))),
	)))
	checkRows(t, decodeRows(t, body),
		`1 [0] _msg="833" severity_number="0" severity_text="Unspecified"`,
		`2 [0] _msg="2.5" severity_number="0" severity_text="Unspecified"`,
		`3 [0] _msg="true" severity_number="0" severity_text="Unspecified"`,
		`4 [0] _msg="Zm9vIGJhcg==" severity_number="0" severity_text="Unspecified"`,
		`5 [0] _msg="[\"foo bar\",1]" severity_number="0" severity_text="Unspecified"`,
		`6 [0] foo="bar" n.x="1" severity_number="0" severity_text="Unspecified"`,
		`7 [0] severity_number="0" severity_text="Unspecified"`,
		`8 [0] _msg="a" _msg="1" severity_number="0" severity_text="Unspecified"`,
		`9 [0] _msg="[\"a\"]" severity_number="0" severity_text="Unspecified"`,
		`10 [0] a="1" _msg="msg" b="2" severity_number="0" severity_text="Unspecified"`,
	)
}

func TestArrayJSON(t *testing.T) {
	body := request(resourceLogs(nil, scopeLogs(nil, rec(1, nil,
		kv("s", av(sv(`a"b`), sv("c\x01"), sv(`back\slash`), sv("é\n"), sv("\u2028"), sv("\xff"), sv("é"))),
		kv("o", av(kvl(kv("a", iv(1)), kv("b", iv(2)), kv("a", iv(3)), pb(nil).msg(2, iv(4)), pb(nil).str(1, "c")))),
		kv("q", av(kvl(kv(`k"`, sv("v"))))),
		kv("nums", av(dv(math.NaN()), dv(math.Inf(1)), iv(math.MinInt64), dv(100), dv(123456789012))),
	))))
	checkRows(t, decodeRows(t, body),
		`1 [0] s="[\"a\\\"b\",\"c\\x01\",\"back\\\\slash\",\"é\\n\",\"\u2028\",\"\xff\",\"é\"]"`+
			` o="[{\"a\":3,\"b\":2}]" q="[{\"k\\\"\":\"v\"}]"`+
			` nums="[NaN,+Inf,-9223372036854775808,100,1.23456789012e+11]" severity_number="0" severity_text="Unspecified"`,
	)

	// More than 16 members: the map path, same result as the loop.
	var members, small []pb
	wantBig, wantSmall := "{", "{"
	for i := range 20 {
		k := string(rune('a' + i%10))
		members = append(members, kv(k, iv(int64(i))))
		if i < 10 {
			small = append(small, kv(k, iv(int64(i))))
			sep := map[bool]string{true: "", false: ","}[i == 0]
			wantBig += fmt.Sprintf(`%s"%s":%d`, sep, k, i+10)
			wantSmall += fmt.Sprintf(`%s"%s":%d`, sep, k, i)
		}
	}
	body = request(resourceLogs(nil, scopeLogs(nil, rec(1, av(kvl(members...))), rec(2, av(kvl(small...))))))
	checkRows(t, decodeRows(t, body),
		fmt.Sprintf(`1 [0] _msg=%q severity_number="0" severity_text="Unspecified"`, "["+wantBig+"}]"),
		fmt.Sprintf(`2 [0] _msg=%q severity_number="0" severity_text="Unspecified"`, "["+wantSmall+"}]"),
	)
}

func TestResourceAndScope(t *testing.T) {
	body := request(
		resourceLogs(attrs(1, kv("service.name", sv("api")), kv("host", kvl(kv("name", sv("h1")), kv("id", iv(7))))),
			scopeLogs(pb(nil).str(1, "lib").str(2, "1.0").msg(3, kv("sa", sv("x"))).varint(4, 3), rec(10, sv("m1"))),
			scopeLogs(pb{}, rec(11, sv("m2"))), // an empty scope: unknown
			scopeLogs(nil, rec(12, sv("m3"))),  // no scope: no scope fields
			// The scope after the records, its attributes before its name.
			pb(nil).msg(2, rec(14, sv("m5"))).msg(2, nil).msg(1, pb(nil).msg(3, kv("a", iv(1))).str(2, "v2")),
		),
		resourceLogs(nil, scopeLogs(nil, rec(13, sv("m4")))),
		// The resource after its scope logs.
		append(pb(nil).msg(2, scopeLogs(nil, rec(15, nil))), pb(nil).msg(1, attrs(1, kv("r", sv("1"))))...),
	)
	const u = ` severity_number="0" severity_text="Unspecified"`
	res := `service.name="api" host.name="h1" host.id="7"`
	checkRows(t, decodeRows(t, body),
		`10 [3] `+res+` scope.name="lib" scope.version="1.0" scope.attributes.sa="x" _msg="m1"`+u,
		`11 [3] `+res+` scope.name="unknown" scope.version="unknown" _msg="m2"`+u,
		`12 [3] `+res+` _msg="m3"`+u,
		`14 [3] `+res+` scope.name="unknown" scope.version="v2" scope.attributes.a="1" _msg="m5"`+u,
		`0 [3] `+res+` scope.name="unknown" scope.version="v2" scope.attributes.a="1"`+u,
		`13 [0] _msg="m4"`+u,
		`15 [1] r="1"`+u,
	)
}

func TestSeverity(t *testing.T) {
	body := request(resourceLogs(nil, scopeLogs(nil,
		rec(1, nil).varint(2, 13),
		rec(2, nil).str(3, "oops"),
		rec(3, nil).varint(2, 17).str(3, "E"),
		rec(4, nil).varint(2, 25),
		rec(5, nil).varint(2, math.MaxUint32),  // int32 -1, as easyproto reads it
		rec(6, nil).varint(2, 24).varint(2, 1), // the last wins
		rec(7, nil),
	)))
	checkRows(t, decodeRows(t, body),
		`1 [0] severity_number="13" severity_text="Warn"`,
		`2 [0] severity_number="0" severity_text="oops"`,
		`3 [0] severity_number="17" severity_text="E"`,
		`4 [0] severity_number="25" severity_text="Unspecified"`,
		`5 [0] severity_number="-1" severity_text="Unspecified"`,
		`6 [0] severity_number="1" severity_text="Trace"`,
		`7 [0] severity_number="0" severity_text="Unspecified"`,
	)
}

func TestTraceSpanEventTime(t *testing.T) {
	trace := []byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	span := []byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	body := request(resourceLogs(attrs(1, kv("r1", sv("a")), kv("r2", sv("b"))),
		scopeLogs(pb(nil).str(1, "s"),
			rec(1, sv("m")).bytes(10, span).bytes(9, trace).fixed32(8, 1).varint(7, 2),
			pb(nil).fixed64(11, 55).str(12, "ev"),             // observed time only; an event name
			pb(nil).fixed64(11, 55).fixed64(1, 66),            // time wins
			pb(nil).msg(6, kv("x", sv("y"))),                  // no time: 0
			pb(nil).fixed64(1, math.MaxUint64),                // as VictoriaLogs: int64(t)
			pb(nil).str(12, "e1").str(12, "e2").bytes(9, nil), // the last event name
		)))
	const u = ` severity_number="0" severity_text="Unspecified"`
	checkRows(t, decodeRows(t, body),
		`1 [2] r1="a" r2="b" scope.name="s" scope.version="unknown" _msg="m" span_id="00f067aa0ba902b7" trace_id="4bf92f3577b34da6a3ce929d0e0e4736"`+u,
		`55 [3] r1="a" r2="b" event_name="ev" scope.name="s" scope.version="unknown"`+u,
		`66 [2] r1="a" r2="b" scope.name="s" scope.version="unknown"`+u,
		`0 [2] r1="a" r2="b" scope.name="s" scope.version="unknown" x="y"`+u,
		`-1 [2] r1="a" r2="b" scope.name="s" scope.version="unknown"`+u,
		`0 [3] r1="a" r2="b" event_name="e2" scope.name="s" scope.version="unknown" trace_id=""`+u,
	)
	// Without resource attributes the event name is the only stream field.
	body = request(resourceLogs(nil, scopeLogs(nil, pb(nil).str(12, "ev").msg(5, sv("m")))))
	checkRows(t, decodeRows(t, body), `0 [1] event_name="ev" _msg="m"`+u)
}

// junk appends unknown fields of every wire type (and field number 0,
// which VictoriaLogs takes too).
func junk(m pb) pb {
	m = m.varint(99, 1).fixed32(100, 2).fixed64(101, 3).str(102, "x").msg(103, pb(nil).varint(1, 1))
	return m.varint(0, 5).str(math.MaxInt32>>2, "big")
}

func TestUnknownFieldsSkipped(t *testing.T) {
	build := func(j func(pb) pb) pb {
		anyv := func(v pb) pb { return j(v) }
		kvj := func(k string, v pb) pb { return j(kv(k, anyv(v))) }
		arr := j(pb(nil).msg(1, anyv(sv("e"))))
		list := j(pb(nil).msg(1, kvj("k", iv(1))))
		lr := j(rec(5, anyv(sv("m")), kvj("a", sv("1")),
			kvj("arr", pb(nil).msg(5, arr)), kvj("l", pb(nil).msg(6, list))).
			varint(7, 1).fixed32(8, 1)) // dropped count and flags: not stored
		scope := j(pb(nil).str(1, "n").msg(3, kvj("sa", sv("2"))).varint(4, 1))
		res := j(attrs(1, kvj("r", sv("3"))).varint(2, 1))
		rl := j(pb(nil).msg(1, res).msg(2, j(pb(nil).msg(1, scope).msg(2, lr).str(3, "schema"))).str(3, "schema"))
		return j(pb(nil).msg(1, rl))
	}
	plain := decodeRows(t, build(func(m pb) pb { return m }))
	checkRows(t, plain,
		`5 [1] r="3" scope.name="n" scope.version="unknown" scope.attributes.sa="2" _msg="m" a="1" arr="[\"e\"]" l.k="1" severity_number="0" severity_text="Unspecified"`)
	checkRows(t, decodeRows(t, build(junk)), plain...)
}

func TestEmitError(t *testing.T) {
	body := request(resourceLogs(nil, scopeLogs(nil, rec(1, sv("a")), rec(2, sv("b")), rec(3, sv("c")))))
	req, err := DecodeProtobuf(body)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	n := 0
	err = req.Rows(func(r *ingest.Row) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 {
		t.Errorf("Rows returned %v after %d rows, want stop after 2", err, n)
	}
	// Rows can run again.
	if got := rowsOf(t, req); len(got) != 3 {
		t.Errorf("second Rows: %d rows", len(got))
	}
}

func TestEmptyRequest(t *testing.T) {
	for _, body := range []pb{nil, request(), request(resourceLogs(nil)), request(resourceLogs(nil, scopeLogs(nil)))} {
		if got := decodeRows(t, body); len(got) != 0 {
			t.Errorf("%x: rows %q", body, got)
		}
	}
}

// richRequest covers every message and value kind.
func richRequest() pb {
	return request(
		resourceLogs(attrs(1, kv("service.name", sv("api")), kv("k", kvl(kv("a", iv(1)), kv("b", av(dv(1.5)))))),
			scopeLogs(pb(nil).str(1, "lib").str(2, "2").msg(3, kv("x", bv(true))),
				rec(1700000000123456789, sv("hello"), kv("i", iv(-3)), kv("b", byv([]byte{1, 2})),
					kv("arr", av(sv("x"), kvl(kv("y", pb{})), av()))).
					varint(2, 9).str(3, "INFO").bytes(9, make([]byte, 16)).bytes(10, []byte{1, 2, 3, 4, 5, 6, 7, 8}).str(12, "e"),
				pb(nil).fixed64(11, 42).msg(5, kvl(kv("m", sv("n")))),
			),
			scopeLogs(nil, rec(5, dv(0.25))),
		),
		resourceLogs(nil, scopeLogs(pb{}, rec(6, av(iv(1))))),
	)
}

func TestTruncated(t *testing.T) {
	for _, body := range []pb{richRequest(), request(resourceLogs(nil, scopeLogs(nil, rec(1, sv("x"))))),
		request(resourceLogs(attrs(1, kv("a", av(av(kvl(kv("k", sv("v")))))))))} {
		// One ResourceLogs field at the top: every proper prefix but the
		// empty one is malformed. For richRequest the prefix ending at the
		// second ResourceLogs is valid.
		valid := 0
		for i := 1; i < len(body); i++ {
			req, err := DecodeProtobuf(body[:i])
			if err == nil {
				valid++
				rowsOf(t, req)
			}
		}
		if valid > 1 {
			t.Errorf("%d proper prefixes of a %d-byte body decode", valid, len(body))
		}
	}
}

func TestMalformed(t *testing.T) {
	lr := func(m pb) pb { return request(resourceLogs(nil, scopeLogs(nil, m))) }
	attr := func(v pb) pb { return lr(rec(1, nil, kv("a", v))) }
	group := pb(nil)
	group = protowire.AppendTag(group, 5, protowire.StartGroupType)
	group = protowire.AppendTag(group, 5, protowire.EndGroupType)
	for name, body := range map[string]pb{
		"resource_logs varint":     pb(nil).varint(1, 1),
		"scope_logs varint":        request(pb(nil).varint(2, 1)),
		"resource fixed64":         request(pb(nil).fixed64(1, 1)),
		"resource attrs varint":    request(pb(nil).msg(1, pb(nil).varint(1, 1))),
		"scope varint":             request(resourceLogs(nil, pb(nil).varint(1, 1))),
		"log_records fixed32":      request(resourceLogs(nil, pb(nil).fixed32(2, 1))),
		"scope name varint":        request(resourceLogs(nil, scopeLogs(pb(nil).varint(1, 1)))),
		"scope version fixed64":    request(resourceLogs(nil, scopeLogs(pb(nil).fixed64(2, 1)))),
		"scope attrs varint":       request(resourceLogs(nil, scopeLogs(pb(nil).varint(3, 1)))),
		"time varint":              lr(pb(nil).varint(1, 1)),
		"observed varint":          lr(pb(nil).varint(11, 1)),
		"severity fixed64":         lr(pb(nil).fixed64(2, 1)),
		"severity too big":         lr(pb(nil).varint(2, 1<<32)),
		"severity negative int32":  lr(pb(nil).varint(2, uint64(math.MaxUint64))), // -1 as protobuf writes it
		"severity_text varint":     lr(pb(nil).varint(3, 1)),
		"body varint":              lr(pb(nil).varint(5, 1)),
		"attributes varint":        lr(pb(nil).varint(6, 1)),
		"trace_id varint":          lr(pb(nil).varint(9, 1)),
		"span_id fixed32":          lr(pb(nil).fixed32(10, 1)),
		"event_name varint":        lr(pb(nil).varint(12, 1)),
		"key varint":               lr(rec(1, nil, pb(nil).varint(1, 1))),
		"value varint":             lr(rec(1, nil, pb(nil).str(1, "k").varint(2, 1))),
		"string_value varint":      attr(pb(nil).varint(1, 1)),
		"bool_value 2":             attr(pb(nil).varint(2, 2)),
		"int_value fixed64":        attr(pb(nil).fixed64(3, 1)),
		"double_value varint":      attr(pb(nil).varint(4, 1)),
		"array_value varint":       attr(pb(nil).varint(5, 1)),
		"kvlist_value varint":      attr(pb(nil).varint(6, 1)),
		"bytes_value varint":       attr(pb(nil).varint(7, 1)),
		"array element varint":     attr(pb(nil).msg(5, pb(nil).varint(1, 1))),
		"array bool 5":             attr(av(pb(nil).varint(2, 5))),
		"array kvlist member":      attr(av(pb(nil).msg(6, pb(nil).varint(1, 1)))),
		"array kvlist value":       attr(av(kvl(kv("k", pb(nil).varint(2, 3))))),
		"kvlist member varint":     attr(pb(nil).msg(6, pb(nil).varint(1, 1))),
		"body bad":                 lr(pb(nil).msg(5, pb{0xff})),
		"group":                    append(request(), group...),
		"wire type 7":              pb{0x0f},
		"long varint":              pb{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"length past the end":      pb{0x0a, 0x05, 0x00},
		"huge length":              pb{0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"field number over uint32": protowire.AppendVarint(protowire.AppendVarint(nil, 1<<33<<3), 1),
		"trailing garbage in kv":   lr(rec(1, nil, append(kv("a", sv("b")), 0xff))),
		// The first value of a repeated key loses to the second and is
		// not rendered, but checked all the same.
		"array kvlist repeated key":  attr(av(kvl(kv("k", pb(nil).varint(2, 3)), kv("k", sv("ok"))))),
		"bad record after good ones": request(resourceLogs(nil, scopeLogs(nil, rec(1, sv("a")), rec(2, sv("b")), pb(nil).varint(5, 1)))),
	} {
		if _, err := DecodeProtobuf(body); err == nil {
			t.Errorf("%s: no error for %x", name, body)
		}
		// Unchecked fails alike, wherever it is in its rows.
		if err := Unchecked(body).Rows(func(*ingest.Row) error { return nil }); err == nil {
			t.Errorf("%s: Unchecked: no error for %x", name, body)
		}
	}

	// As in VictoriaLogs: a KeyValue without a key is skipped without
	// looking at its value.
	if _, err := DecodeProtobuf(lr(rec(1, nil, pb(nil).varint(2, 1)))); err != nil {
		t.Errorf("value of a key-less KeyValue: %v", err)
	}
}

func TestDepth(t *testing.T) {
	deep := func(n int, wrap func(pb) pb) pb {
		v := sv("x")
		for range n {
			v = wrap(v)
		}
		return request(resourceLogs(nil, scopeLogs(nil, rec(1, v))))
	}
	arr := func(v pb) pb { return av(v) }
	obj := func(v pb) pb { return kvl(kv("k", v)) }
	objInArr := func(v pb) pb { return av(kvl(kv("k", v))) }
	for name, wrap := range map[string]func(pb) pb{"array": arr, "kvlist": obj, "array of kvlist": objInArr} {
		if _, err := DecodeProtobuf(deep(100, wrap)); err != nil {
			t.Errorf("%s: 100 levels: %v", name, err)
		}
		if _, err := DecodeProtobuf(deep(MaxDepth+2, wrap)); !errors.Is(err, ErrDepth) {
			t.Errorf("%s: %d levels: %v, want ErrDepth", name, MaxDepth+2, err)
		}
	}
}

func TestAppendResponse(t *testing.T) {
	for _, c := range []struct {
		json     bool
		rejected int64
		msg      string
		want     string
	}{
		{true, 0, "", `{}`},
		{true, 3, "", `{"partialSuccess":{"rejectedLogRecords":"3"}}`},
		{true, 0, "slow down", `{"partialSuccess":{"errorMessage":"slow down"}}`},
		{true, 2, `bad "x"`, `{"partialSuccess":{"rejectedLogRecords":"2","errorMessage":"bad \"x\""}}`},
		{false, 0, "", ``},
		{false, 3, "", "\x0a\x02\x08\x03"},
		{false, 300, "ab", "\x0a\x07\x08\xac\x02\x12\x02ab"},
	} {
		if got := string(AppendResponse([]byte("x"), c.json, c.rejected, c.msg)); got != "x"+c.want {
			t.Errorf("AppendResponse(%v, %d, %q) = %q, want %q", c.json, c.rejected, c.msg, got, "x"+c.want)
		}
	}
}

// TestUncheckedAgrees checks that Unchecked(body).Rows fails exactly when
// DecodeProtobuf(body) does, and otherwise emits the checked request's
// rows, over every prefix of some requests and every one-byte change of
// them.
func TestUncheckedAgrees(t *testing.T) {
	bodies := []pb{richRequest(), goldenRequest(), benchRequest(3),
		request(resourceLogs(nil, scopeLogs(nil, rec(1, av(kvl(kv("a", iv(1)), kv("a", sv("b")), kv("b", av(sv("x"), dv(1.5)))))))))}
	n := 0
	for _, body := range bodies {
		for i := 0; i <= len(body); i++ {
			agree(t, body[:i])
			n++
		}
		for i := range body {
			for _, c := range []byte{0x00, 0x01, 0x02, 0x05, 0x7f, 0x80, 0xff, body[i] ^ 0x08} {
				b := append(pb(nil), body...)
				b[i] = c
				agree(t, b)
				n++
			}
		}
	}
	t.Logf("%d bodies", n)
}

// agree fails t unless Unchecked(body) and DecodeProtobuf(body) agree.
func agree(t *testing.T, body []byte) {
	t.Helper()
	req, err := DecodeProtobuf(body)
	var got []string
	uerr := Unchecked(body).Rows(func(r *ingest.Row) error {
		got = append(got, fmt.Sprint(r.Time, r.Stream, r.Fields))
		return nil
	})
	if (err == nil) != (uerr == nil) {
		t.Fatalf("%x: DecodeProtobuf: %v; Unchecked: %v", body, err, uerr)
	}
	if err != nil {
		return
	}
	var want []string
	if err := req.Rows(func(r *ingest.Row) error {
		want = append(want, fmt.Sprint(r.Time, r.Stream, r.Fields))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%x: Unchecked rows %q, checked %q", body, got, want)
	}
}

func FuzzDecodeProtobuf(f *testing.F) {
	f.Add([]byte(richRequest()))
	f.Add([]byte(goldenRequest()))
	f.Add([]byte(request(resourceLogs(nil, scopeLogs(nil, rec(1, av(kvl(kv("a", iv(1)), kv("a", sv("b"))))))))))
	f.Fuzz(func(t *testing.T, body []byte) {
		agree(t, body)
		req, err := DecodeProtobuf(body)
		if err != nil {
			return
		}
		n := 0
		if err := req.Rows(func(r *ingest.Row) error {
			n++
			if r.Stream < 0 || r.Stream > len(r.Fields) {
				t.Fatalf("Stream %d of %d fields", r.Stream, len(r.Fields))
			}
			for _, f := range r.Fields {
				if f.Name == "" {
					t.Fatalf("empty field name")
				}
			}
			return nil
		}); err != nil {
			t.Fatalf("Rows after a successful decode: %v", err)
		}
		if n != req.Records() {
			t.Fatalf("%d rows, Records %d", n, req.Records())
		}
	})
}
