package query

import "testing"

func TestJSONArrayContainsAny(t *testing.T) {
	f := func(v string, values []string, want bool) {
		t.Helper()
		m := newMatchJSONArrayAny(&FilterJSONArrayContainsAny{Field: "f", Values: values})
		var r Row
		r.Set("f", v)
		if got := m.match(&r); got != want {
			t.Fatalf("%s on %q: got %v, want %v", values, v, got, want)
		}
	}
	f(`["a","b"]`, []string{"b"}, true)
	f(` [ "a" , "b" ] `, []string{"b"}, true)
	f(`["ab"]`, []string{"a"}, false)
	f(`[1,2.0,true,false,null]`, []string{"2.0"}, true)
	f(`[1,2.0]`, []string{"2"}, false)
	f(`[null]`, []string{"null"}, true)
	f(`[null]`, []string{""}, false)
	f(`["x\ny","\"q\"","\/"]`, []string{"/"}, true)
	f(`["x\ny"]`, []string{"x\ny"}, true)
	f(`["\"q\""]`, []string{`"q"`}, true)
	f(`["\u00e9"]`, []string{"é"}, false) // the raw text lacks the token é
	f(`["\u0041b", "Ab"]`, []string{"Ab"}, true)
	f(`["\ud83d\ude00"]`, []string{"😀"}, true)
	f(`["\ud83d"]`, []string{`\ud83d`}, true) // a lone surrogate stays as written
	f(`["\x"]`, []string{`\x`}, true)
	// fastjson's lenient numbers.
	f(`[1.2.3, nan, -Inf, +5, e]`, []string{"1.2.3"}, true)
	f(`[1.2.3, nan, -Inf, +5, e]`, []string{"nan"}, true)
	f(`[1.2.3, nan, -Inf, +5, e]`, []string{"-Inf"}, true)
	f(`[1.2.3, nan, -Inf, +5, e]`, []string{"+5"}, true)
	f(`[1.2.3, nan, -Inf, +5, e]`, []string{"e"}, true)
	f(`[Infinity]`, []string{"Inf"}, false)
	// Not arrays, or not whole ones: nothing matches.
	f(`"a"`, []string{"a"}, false)
	f(`["a",]`, []string{"a"}, false)
	f(`["a"] x`, []string{"a"}, false)
	f(`["a", {"b":}]`, []string{"a"}, false)
	f(`["a", {"b":1,}]`, []string{"a"}, false)
	f(`["a", {"b":[1,{"c":"d"}]}]`, []string{"a"}, true)
	f(`[{"a":1}, ["a"]]`, []string{"a"}, false)
	f(`[]`, []string{""}, false)
	f(``, []string{""}, false)
	// Nesting up to fastjson's 300 levels.
	deep := func(n int) string {
		s := `"a"`
		for range n - 1 {
			s = "[" + s + "]"
		}
		return `["a",` + s + "]"
	}
	f(deep(299), []string{"a"}, true)
	f(deep(300), []string{"a"}, false)
}
