package ndjson

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// render walks line and renders its leaves as space-separated
// key=kind:"value" items (the key quoted when it is not a plain word), then
// returns them with the walk's error.
func render(it *Iter, line string) (string, error) {
	it.Reset([]byte(line))
	var b strings.Builder
	for it.Next() {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(renderKey(string(it.Key())))
		fmt.Fprintf(&b, "=%s:%q", it.Kind(), it.Value())
	}
	return b.String(), it.Err()
}

func renderKey(k string) string {
	if k == "" || strings.ContainsAny(k, " =\"\\") || strconv.Quote(k) != `"`+k+`"` {
		return strconv.Quote(k)
	}
	return k
}

// iterSuccessCases lists valid lines and their rendered leaves; FuzzIter
// uses them as seeds.
func iterSuccessCases(f func(line, want string)) {
	// Empty objects and whitespace around and inside.
	f(`{}`, ``)
	f(` {} `, ``)
	f("{}\r", ``)
	f("\t{ }\t \r", ``)
	f("{ \"a\" : 1 , \"b\"\t:\"x\" }  \r", `a=number:"1" b=string:"x"`)
	f("{\"a\":\n1}", `a=number:"1"`)

	// Kinds.
	f(`{"a":1}`, `a=number:"1"`)
	f(`{"a":"x"}`, `a=string:"x"`)
	f(`{"a":""}`, `a=string:""`)
	f(`{"a":true,"b":false,"c":null}`, `a=true:"true" b=false:"false" c=null:""`)
	f(`{"a":-0.5e+10,"b":0,"c":-0,"d":1E5,"e":12.50,"f":0.0e-0,"g":123456789012345678901234567890}`,
		`a=number:"-0.5e+10" b=number:"0" c=number:"-0" d=number:"1E5" e=number:"12.50" f=number:"0.0e-0" g=number:"123456789012345678901234567890"`)

	// Nesting.
	f(`{"http":{"ua":"x","tls":{"v":"1.3"}},"z":1}`, `http.ua=string:"x" http.tls.v=string:"1.3" z=number:"1"`)
	f(`{"a":{},"b":{"c":{}},"d":1}`, `d=number:"1"`)
	f(`{"a":{"b":{}}}`, ``)
	f(`{"a":{"b":{"c":1}},"d":{"e":2}}`, `a.b.c=number:"1" d.e=number:"2"`)
	f(`{ "a" : { "b" : 1 } , "c" : 2 }`, `a.b=number:"1" c=number:"2"`)

	// Arrays are leaves, compacted by Value.
	f(`{"a":[]}`, `a=array:"[]"`)
	f(`{"a":[ ]}`, `a=array:"[]"`)
	f(`{"a":[1, 2 ,{"b" : [ ] }], "c":0}`, `a=array:"[1,2,{\"b\":[]}]" c=number:"0"`)
	f(`{"a":[["x"],{"y":{"z":[null,true,false,"]"]}}]}`, `a=array:"[[\"x\"],{\"y\":{\"z\":[null,true,false,\"]\"]}}]"`)
	f(`{"a":[ "x y", "q\" u", "\\" , "\u00e9 " ]}`, `a=array:"[\"x y\",\"q\\\" u\",\"\\\\\",\"\\u00e9 \"]"`)
	f(`{"a":[{}],"b":[[]]}`, `a=array:"[{}]" b=array:"[[]]"`)

	// Duplicates, and dotted keys that collide with nested ones.
	f(`{"a":1,"a":2}`, `a=number:"1" a=number:"2"`)
	f(`{"a":{"b":1},"a":{"b":2}}`, `a.b=number:"1" a.b=number:"2"`)
	f(`{"http.ua":"x","http":{"ua":"y"}}`, `http.ua=string:"x" http.ua=string:"y"`)

	// Escapes in keys and values.
	f(`{"a\"b":"c\\d"}`, `"a\"b"=string:"c\\d"`)
	f(`{"k":"\n\t\r\b\f\/\\\""}`, `k=string:"\n\t\r\b\f/\\\""`)
	f(`{"k":"\u0041\u00e9\u20AC\ud83d\ude00"}`, `k=string:"Aé€😀"`)
	f(`{"k":"\ud800"}`, `k=string:"�"`)
	f(`{"k":"\ud800x\udc00"}`, `k=string:"�x�"`)
	f(`{"k":"\ud800\u0041"}`, `k=string:"�A"`)
	f(`{"k":"\udc00\ud800\udc00"}`, `k=string:"�𐀀"`)
	f(`{"k":"\u0000"}`, `k=string:"\x00"`)
	f(`{"\u0041":{"b\n":{"\"":1}}}`, `"A.b\n.\""=number:"1"`)
	f(`{"a":{"\u0062":1,"c":2}}`, `a.b=number:"1" a.c=number:"2"`)
	f(`{"":""}`, `""=string:""`)
	f(`{"":{"":1}}`, `.=number:"1"`)

	// Unicode, and strings long enough for the word loop.
	f(`{"msg":"héllo 世界 😀","ключ":"значение"}`, `msg=string:"héllo 世界 😀" ключ=string:"значение"`)
	f(`{"msg":"0123456789abcdef0123456789abcdef\"0123456789"}`, `msg=string:"0123456789abcdef0123456789abcdef\"0123456789"`)
	f(`{"msg":"aaaaaaaé","b":"aaaaaaa\u00e9aaaaaaaa"}`, `msg=string:"aaaaaaaé" b=string:"aaaaaaaéaaaaaaaa"`)
	f("{\"msg\":\"\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\"}", `msg=string:"\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f"`)

	// A typical generated line.
	f(`{"ts":"2026-01-02T00:00:00.041Z","level":"info","status":200,"latency_ms":18.188,"user_id":null,"http":{"proto":"HTTP/2.0","remote_ip":"10.93.192.55"},"tags":["a","b"]}`,
		`ts=string:"2026-01-02T00:00:00.041Z" level=string:"info" status=number:"200" latency_ms=number:"18.188" user_id=null:"" http.proto=string:"HTTP/2.0" http.remote_ip=string:"10.93.192.55" tags=array:"[\"a\",\"b\"]"`)
}

func TestIterSuccess(t *testing.T) {
	var it Iter
	iterSuccessCases(func(line, want string) {
		t.Helper()
		got, err := render(&it, line)
		if err != nil {
			t.Errorf("%q: unexpected error: %v", line, err)
			return
		}
		if got != want {
			t.Errorf("%q:\ngot  %s\nwant %s", line, got, want)
		}
	})
}

// iterFailureCases lists invalid lines and the error each must end with;
// FuzzIter uses them as seeds.
func iterFailureCases(f func(line, want string)) {
	// Not an object: the caller treats these as plain text.
	f(``, `empty line at byte 0`)
	f("  \r", `empty line at byte 3`)
	f(`[1,2]`, `invalid character '[' looking for beginning of object at byte 0`)
	f(`"x"`, `invalid character '"' looking for beginning of object at byte 0`)
	f(`42`, `invalid character '4' looking for beginning of object at byte 0`)
	f(`null`, `invalid character 'n' looking for beginning of object at byte 0`)
	f(`hello world`, `invalid character 'h' looking for beginning of object at byte 0`)
	f(` x{}`, `invalid character 'x' looking for beginning of object at byte 1`)
	f("\ufeff{}", `invalid character '\xef' looking for beginning of object at byte 0`)

	// Truncated lines.
	f(`{`, `unexpected end of line at byte 1`)
	f(`{"a`, `unexpected end of line at byte 3`)
	f(`{"a"`, `unexpected end of line at byte 4`)
	f(`{"a":`, `unexpected end of line at byte 5`)
	f(`{"a":1`, `unexpected end of line at byte 6`)
	f(`{"a":1,`, `unexpected end of line at byte 7`)
	f(`{"a":"x`, `unexpected end of line at byte 7`)
	f(`{"a":"\`, `unexpected end of line at byte 7`)
	f(`{"a":"\u12`, `unexpected end of line at byte 10`)
	f(`{"a":-`, `unexpected end of line at byte 6`)
	f(`{"a":1.`, `unexpected end of line at byte 7`)
	f(`{"a":1e+`, `unexpected end of line at byte 8`)
	f(`{"a":nul`, `unexpected end of line at byte 8`)
	f(`{"a":{"b":1}`, `unexpected end of line at byte 12`)
	f(`{"a":[1,2`, `unexpected end of line at byte 9`)
	f(`{"a":[{"b":"c"`, `unexpected end of line at byte 14`)
	f(`{"a":["x`, `unexpected end of line at byte 8`)

	// Object syntax.
	f(`{"a" 1}`, `invalid character '1' after object key at byte 5`)
	f(`{"a":1,}`, `invalid character '}' looking for beginning of object key string at byte 7`)
	f(`{,}`, `invalid character ',' looking for beginning of object key string at byte 1`)
	f(`{a:1}`, `invalid character 'a' looking for beginning of object key string at byte 1`)
	f(`{'a':1}`, `invalid character '\'' looking for beginning of object key string at byte 1`)
	f(`{"a":1 "b":2}`, `invalid character '"' after object key:value pair at byte 7`)
	f(`{"a":1;"b":2}`, `invalid character ';' after object key:value pair at byte 6`)
	f(`{"a":}`, `invalid character '}' looking for beginning of value at byte 5`)
	f(`{"a":{"b":1]}`, `invalid character ']' after object key:value pair at byte 11`)
	f(`{"a":{"b" "c"}}`, `invalid character '"' after object key at byte 10`)

	// Numbers.
	f(`{"a":01}`, `invalid character '1' after object key:value pair at byte 6`)
	f(`{"a":-01}`, `invalid character '1' after object key:value pair at byte 7`)
	f(`{"a":+1}`, `invalid character '+' looking for beginning of value at byte 5`)
	f(`{"a":.5}`, `invalid character '.' looking for beginning of value at byte 5`)
	f(`{"a":1.}`, `invalid character '}' after decimal point in numeric literal at byte 7`)
	f(`{"a":1.e5}`, `invalid character 'e' after decimal point in numeric literal at byte 7`)
	f(`{"a":-}`, `invalid character '}' in numeric literal at byte 6`)
	f(`{"a":--1}`, `invalid character '-' in numeric literal at byte 6`)
	f(`{"a":-a}`, `invalid character 'a' in numeric literal at byte 6`)
	f(`{"a":1e}`, `invalid character '}' in exponent of numeric literal at byte 7`)
	f(`{"a":1e+}`, `invalid character '}' in exponent of numeric literal at byte 8`)
	f(`{"a":1E-x}`, `invalid character 'x' in exponent of numeric literal at byte 8`)
	f(`{"a":0x1}`, `invalid character 'x' after object key:value pair at byte 6`)
	f(`{"a":1.5.2}`, `invalid character '.' after object key:value pair at byte 8`)
	f(`{"a":NaN}`, `invalid character 'N' looking for beginning of value at byte 5`)
	f(`{"a":Infinity}`, `invalid character 'I' looking for beginning of value at byte 5`)

	// Literals.
	f(`{"a":tru}`, `invalid character '}' in literal true, false or null at byte 8`)
	f(`{"a":True}`, `invalid character 'T' looking for beginning of value at byte 5`)
	f(`{"a":fals}`, `invalid character '}' in literal true, false or null at byte 9`)
	f(`{"a":nulll}`, `invalid character 'l' after object key:value pair at byte 9`)
	f(`{"a":nan}`, `invalid character 'a' in literal true, false or null at byte 6`)

	// Strings: control bytes, escapes, UTF-8.
	f("{\"a\":\"x\x01\"}", `invalid character '\x01' in string literal at byte 7`)
	f("{\"a\":\"x\ty\"}", `invalid character '\t' in string literal at byte 7`)
	f("{\"a\":\"0123456789\n\"}", `invalid character '\n' in string literal at byte 16`)
	f("{\"a\x00\":1}", `invalid character '\x00' in string literal at byte 3`)
	f(`{"a":"\x"}`, `invalid character 'x' in string escape code at byte 7`)
	f(`{"a":"\'"}`, `invalid character '\'' in string escape code at byte 7`)
	f(`{"a":"\U0041"}`, `invalid character 'U' in string escape code at byte 7`)
	f(`{"a":"\u12G4"}`, `invalid character 'G' in \u hexadecimal character escape at byte 10`)
	f(`{"a":"\u12"}`, `invalid character '"' in \u hexadecimal character escape at byte 10`)
	f(`{"a\q":1}`, `invalid character 'q' in string escape code at byte 4`)
	f("{\"a\":\"\xff\"}", `invalid UTF-8 in string at byte 6`)
	f("{\"a\":\"0123456789abcdef\xff\"}", `invalid UTF-8 in string at byte 22`)
	f("{\"a\xc3\":1}", `invalid UTF-8 in string at byte 3`)
	f("{\"a\":\"\xed\xa0\x80\"}", `invalid UTF-8 in string at byte 6`)
	f("{\"a\":\"\xc0\xaf\"}", `invalid UTF-8 in string at byte 6`)
	f("{\"a\":\"é\x80\"}", `invalid UTF-8 in string at byte 8`)
	f("{\"a\":\"\xe2\x82", `invalid UTF-8 in string at byte 6`)

	// Garbage after the object.
	f(`{"a":1}x`, `invalid character 'x' after top-level value at byte 7`)
	f(`{"a":1} {}`, `invalid character '{' after top-level value at byte 8`)
	f(`{"a":1}}`, `invalid character '}' after top-level value at byte 7`)
	f(`{}{}`, `invalid character '{' after top-level value at byte 2`)
	f("{\"a\":1}\x00", `invalid character '\x00' after top-level value at byte 7`)
	f("{\"a\":1}\v", `invalid character '\v' after top-level value at byte 7`)
	f("{\"a\":1}\r\n\f", `invalid character '\f' after top-level value at byte 9`)

	// Arrays are validated although they are not descended into.
	f(`{"a":[1,]}`, `invalid character ']' looking for beginning of value at byte 8`)
	f(`{"a":[,1]}`, `invalid character ',' looking for beginning of value at byte 6`)
	f(`{"a":[1 2]}`, `invalid character '2' after array element at byte 8`)
	f(`{"a":[}`, `invalid character '}' looking for beginning of value at byte 6`)
	f(`{"a":[1}`, `invalid character '}' after array element at byte 7`)
	f(`{"a":[{"b"}]}`, `invalid character '}' after object key at byte 10`)
	f(`{"a":[{"b":1,}]}`, `invalid character '}' looking for beginning of object key string at byte 13`)
	f(`{"a":[{"b":1]]}`, `invalid character ']' after object key:value pair at byte 12`)
	f(`{"a":[{1:2}]}`, `invalid character '1' looking for beginning of object key string at byte 7`)
	f(`{"a":["\x"]}`, `invalid character 'x' in string escape code at byte 8`)
	f("{\"a\":[\"\xff\"]}", `invalid UTF-8 in string at byte 7`)
	f(`{"a":[tru]}`, `invalid character ']' in literal true, false or null at byte 9`)
	f(`{"a":[01]}`, `invalid character '1' after array element at byte 7`)
	f(`{"a":[[1],[2}]}`, `invalid character '}' after array element at byte 12`)

	// An error after valid leaves.
	f(`{"a":1,"b":{"c":[1,2,3],"d":x}}`, `invalid character 'x' looking for beginning of value at byte 28`)
}

func TestIterFailure(t *testing.T) {
	var it Iter
	iterFailureCases(func(line, want string) {
		t.Helper()
		_, err := render(&it, line)
		if err == nil {
			t.Errorf("%q: got no error, want %s", line, want)
			return
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: got %T, want *SyntaxError", line, err)
			return
		}
		if got := err.Error(); got != want {
			t.Errorf("%q:\ngot  %s\nwant %s", line, got, want)
		}
		if it.Next() || it.Err() != err || it.Kind() != 0 {
			t.Errorf("%q: Next after the error changed the state", line)
		}
	})
}

// TestIterLeavesBeforeError checks that the leaves before an error are
// yielded as usual and the error comes after them.
func TestIterLeavesBeforeError(t *testing.T) {
	f := func(line, wantLeaves, wantErr string) {
		t.Helper()
		var it Iter
		got, err := render(&it, line)
		if got != wantLeaves {
			t.Errorf("%q: leaves:\ngot  %s\nwant %s", line, got, wantLeaves)
		}
		if err == nil || err.Error() != wantErr {
			t.Errorf("%q: got error %v, want %s", line, err, wantErr)
		}
	}
	f(`{"a":1,"b":{"c":[1,2,3],"d":x}}`, `a=number:"1" b.c=array:"[1,2,3]"`, `invalid character 'x' looking for beginning of value at byte 28`)
	f(`{"a":1}x`, `a=number:"1"`, `invalid character 'x' after top-level value at byte 7`)
	f(`{"a":"b"`, `a=string:"b"`, `unexpected end of line at byte 8`)
}

func TestIterDepth(t *testing.T) {
	f := func(line string, wantDepths []int) {
		t.Helper()
		var it Iter
		it.Reset([]byte(line))
		var got []int
		for it.Next() {
			got = append(got, it.Depth())
		}
		if it.Err() != nil {
			t.Fatalf("%q: %v", line, it.Err())
		}
		if fmt.Sprint(got) != fmt.Sprint(wantDepths) {
			t.Errorf("%q: got depths %v, want %v", line, got, wantDepths)
		}
	}
	f(`{"a":1,"b":{"c":2,"d":{"e":[{"f":1}]},"g":3},"h":4}`, []int{0, 1, 2, 1, 0})
	f(`{"a":{"b":{}},"c":1}`, []int{0})
}

func TestIterMaxDepth(t *testing.T) {
	// nested returns a line whose nesting is exactly depth deep: objects
	// down to objDepth, then arrays.
	nested := func(depth, objDepth int) string {
		var b strings.Builder
		for range objDepth {
			b.WriteString(`{"k":`)
		}
		for range depth - objDepth {
			b.WriteString(`[`)
		}
		b.WriteString(`1`)
		b.WriteString(strings.Repeat(`]`, depth-objDepth))
		b.WriteString(strings.Repeat(`}`, objDepth))
		return b.String()
	}
	f := func(depth, objDepth int, wantErr string) {
		t.Helper()
		var it Iter
		_, err := render(&it, nested(depth, objDepth))
		if got := fmt.Sprint(err); got != wantErr {
			t.Errorf("depth %d, objects %d: got error %s, want %s", depth, objDepth, got, wantErr)
		}
	}
	f(MaxDepth, MaxDepth, `<nil>`)
	f(MaxDepth, 1, `<nil>`)
	f(MaxDepth, 500, `<nil>`)
	f(MaxDepth+1, MaxDepth+1, `exceeded max depth of 1000 at byte 5000`)
	f(MaxDepth+1, 1, `exceeded max depth of 1000 at byte 1004`)
	f(MaxDepth+1, 500, `exceeded max depth of 1000 at byte 3000`)
	f(100000, 1, `exceeded max depth of 1000 at byte 1004`)
}

func TestIterZero(t *testing.T) {
	var it Iter
	if it.Next() {
		t.Fatal("zero Iter: Next returned true")
	}
	if err := fmt.Sprint(it.Err()); err != "empty line at byte 0" {
		t.Fatalf("zero Iter: got error %s", err)
	}
}

// TestIterReuse checks that an Iter reused across lines forgets the
// previous line's state, including errors and nesting.
func TestIterReuse(t *testing.T) {
	var it Iter
	lines := []string{`{"a":{"b":{"c":"x\n"`, `{"d":1}`, `plain`, `{"e":{"f":"g"}}`, `{"h\"":2}`}
	want := []string{`a.b.c=string:"x\n"`, `d=number:"1"`, ``, `e.f=string:"g"`, `"h\""=number:"2"`}
	for i, line := range lines {
		got, _ := render(&it, line)
		if got != want[i] {
			t.Errorf("%q: got %s, want %s", line, got, want[i])
		}
	}
}

// TestIterAliasing checks which results alias the line and that Key and
// Value are stable across repeated calls.
func TestIterAliasing(t *testing.T) {
	line := []byte(`{"a":"x","b\n":"y\n","c":{"d":[ 1 ]},"e":[1],"f":null}`)
	var it Iter
	it.Reset(line)
	aliases := func(b []byte) bool {
		for j := range line {
			if len(b) > 0 && &b[0] == &line[j] {
				return true
			}
		}
		return false
	}
	type want struct{ key, value bool }
	wants := []want{{true, true}, {false, false}, {false, false}, {true, true}, {true, true}}
	for i := 0; it.Next(); i++ {
		k1, v1 := it.Key(), it.Value()
		k2, v2 := it.Key(), it.Value()
		if string(k1) != string(k2) || string(v1) != string(v2) {
			t.Errorf("leaf %d: repeated Key/Value differ", i)
		}
		if got := (want{aliases(k1), aliases(v1) || len(v1) == 0}); got != wants[i] {
			t.Errorf("leaf %s: aliases line: got %+v, want %+v", k1, got, wants[i])
		}
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
}

func TestKindString(t *testing.T) {
	f := func(k Kind, want string) {
		t.Helper()
		if got := k.String(); got != want {
			t.Errorf("Kind(%d): got %q, want %q", k, got, want)
		}
	}
	f(0, "invalid")
	f(KindString, "string")
	f(KindArray, "array")
	f(KindArray+1, "invalid")
}

// TestIterAllocs checks that walking and decoding a mix of lines, plain
// text and broken lines included, does not allocate once warm.
func TestIterAllocs(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"ts":"2026-01-02T00:00:00.041Z","msg":"a \"quoted\" word","http":{"ua":"x","tls":{"v\u0031":"1.3"}},"tags":[ "a", "b" ],"n":null}`),
		[]byte(`plain text line`),
		[]byte(`{"a":1,"b":x}`),
		[]byte(`{"a":"\ud83d\ude00"}`),
		[]byte(``),
		[]byte(`{"a":1}x`),
		[]byte(`{"a":` + strings.Repeat(`[`, MaxDepth+1)),
		[]byte("{\"a\":\"\xff\"}"),
	}
	var it Iter
	walk := func() {
		for _, line := range lines {
			it.Reset(line)
			for it.Next() {
				_, _, _ = it.Key(), it.Value(), it.Raw()
			}
			_ = it.Err()
		}
	}
	walk() // grow the buffers and build the error messages
	if n := testing.AllocsPerRun(100, walk); n != 0 {
		t.Errorf("got %v allocs per walk, want 0", n)
	}
}
