package query

import (
	"strings"
	"testing"
)

func TestPatternMatcher(t *testing.T) {
	f := func(pattern, s, fn string, want bool) {
		t.Helper()
		if got := newPatternMatcher(pattern, fn).matches(s); got != want {
			t.Fatalf("%s(%q) on %q: got %v, want %v", fn, pattern, s, got, want)
		}
	}
	const any, full, prefix, suffix = "pattern_match", "pattern_match_full", "pattern_match_prefix", "pattern_match_suffix"
	all := func(pattern, s string, wantAny, wantFull, wantPrefix, wantSuffix bool) {
		t.Helper()
		f(pattern, s, any, wantAny)
		f(pattern, s, full, wantFull)
		f(pattern, s, prefix, wantPrefix)
		f(pattern, s, suffix, wantSuffix)
	}
	// Cases of VictoriaLogs v1.52.1's pattern_matcher_test.go.
	all("", "", true, true, true, true)
	all("", "foo", true, false, true, true)
	all("foo", "abcd", false, false, false, false)
	all("foo", "foo", true, true, true, true)
	f("foo", "afoo bc", full, false)
	f("foo", "afoo bc", any, true)
	f("afoo", "afoo bc", prefix, true)
	f("bc", "afoo bc", suffix, true)
	all("<N>sec at <DATE>", "123sec at 2025-12-20", true, true, true, true)
	all("<N>sec at <DATE>", "3 123sec at 2025-12-20", true, false, false, true)
	all("<N>sec at <DATE>", "123sec at 2025-12-20 sss", true, false, true, false)
	all("<N> <DATE> foo", "123 456 foo", false, false, false, false)
	long := "n: <N>.<N>, uuid: <UUID>, ip4: <IP4>, time: <TIME>, date: <DATE>, datetime: <DATETIME>, user: <W>, end"
	head := "n: 123.324, uuid: 2edfed59-3e98-4073-bbb2-28d321ca71a7, ip4: 123.45.67.89, time: 10:20:30, date: 2025-10-20, datetime: 2025-10-20T10:20:30Z, user: "
	f(long, head+"'`\"\\', end', end", any, true)
	all(long, head+"`f\"'oo`, end", true, true, true, true)
	f(long, "some 123 prefix 10:20:30, "+head+"\"f\\\"o'\", end", any, true)
	f(long, "some 123 prefix 10:20:30, "+head+"\"f\\\"o'\", end", prefix, false)
	f(long, "some 123 prefix 10:20:30, "+head+"\"f\\\"o'\", end", suffix, true)
	all("<DATE>, <DATE>", "foo 2025/10/20, 2025-10-20 bar", true, false, false, false)
	all("<TIME>, <TIME>, <TIME>", "foo 10:20:30, 10:20:30.12345, 10:20:30,23434 aaa", true, false, false, false)
	f("<DATETIME>, <DATETIME>, <DATETIME>, <DATETIME>", "foo 2025-09-20T10:20:30Z, 2025/10/20 10:20:30.2343, 2025-10-20T30:40:50-05:10, 2025-10-20T30:40:50.1324+05:00 bar", any, true)
	all("email: <W>@<W>", "email: foo@bar.com", true, false, true, false)
	all("email: <W>@<W>.<W>", "email: foo@bar.com", true, true, true, true)
	f("email: <W>@<W>", "a email: foo@bar.com", full, false)
	f("<W> foo", " foo", any, false)
	f("<W> foo", ",,, foo", any, false)
	f("<W> foo", ",,,abc foo", any, true)
	all(`"foo":<W>`, `{"foo":"bar", "baz": 123}`, true, false, false, false)
	f(`{"foo":<W>`, `{"foo":"bar", "baz": 123}`, prefix, true)
	f(`"baz": <N>}`, `{"foo":"bar", "baz": 123}`, suffix, true)
	f(`"baz": <N>`, `{"foo":"bar", "baz": 123}`, suffix, false)
	f("foo:<N>", `abc foo:123 abc foo:42`, suffix, true)
	f("foo:<N>", `abc foo:123 abc foo:`, suffix, false)
	f("foo:<N>", `abc foo:123 abc`, suffix, false)
	f("foo:<N> xx", `abc foo:123 xx foo:42 xx`, suffix, true)
	f("foo:<N> xx", `abc foo:123 xx foo:42`, suffix, false)
	all("xx<N>", "xxxxxxxxxxxxxxxx", false, false, false, false)
	all("xx<N>", "xxxxxx123", true, false, false, true)

	// Numbers: hex needs an even count of at least 4 digits; a number
	// glued to a word byte needs one of the unit-like letters there.
	f("<N>", "abc", any, false)
	f("<N>", "abcd", any, true)
	f("<N>", "x abcde", any, false)
	f("<N>", "12ms", any, true)
	f("<N>", "v12", any, true)
	f("<N>", "y12", any, false)
	f("<N>1", "123", any, false) // the placeholder takes all the digits
	f("<N>", "é1", any, true)    // a non-ASCII byte before is no word byte
	// Unknown placeholders and a '<' without '>' are text.
	f("<X><N>", "<X>5", full, true)
	f("<<N>", "<<N>", full, true)
	f("a<", "a<", full, true)
	// Quoted words.
	f("<W>", `'it\'s'`, full, true)
	f("<W>", `"unterminated`, full, false)
	f("<W>", "", full, false)
	f("<W>", strings.Repeat("é", 3), full, true)
}

func TestPatternMatchLiteral(t *testing.T) {
	f := func(pattern, want string) {
		t.Helper()
		if got := newPatternMatcher(pattern, "pattern_match").longestText(); got != want {
			t.Fatalf("longestText(%q) = %q, want %q", pattern, got, want)
		}
	}
	f("", "")
	f("<N>", "")
	f("took <N> ms at <DATE>", " ms at ")
	f("<X> ab <N>", "<X> ab ")
}
