package ndjson

import "testing"

// TestAppendUnescapeLenient pins fastjson's best-effort decoding, which
// Loki's JSON push and the query engine's JSON arrays in values share.
func TestAppendUnescapeLenient(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`plain`, "plain"},
		{`a\"b\\c\/d`, `a"b\c/d`},
		{`\b\f\n\r\t`, "\b\f\n\r\t"},
		{`\u00e9\u0041`, "éA"},
		{`\q\u12`, `\q\u12`},                 // unknown escape, short \u: as written
		{`\u12zz`, `\u12zz`},                 // bad hex: as written
		{`\ud83d\ude00`, "😀"},                // a surrogate pair
		{`\ud83d!`, `\ud83d!`},               // a half without a following escape: as written
		{`\ud83d\u0041`, "\uFFFD"},           // a half with an escape that is no pair: U+FFFD, both consumed
		{`end\`, "end"},                      // a final lone backslash is dropped
		{"raw \xff bytes", "raw \xff bytes"}, // raw bytes pass as they are
	} {
		if got := string(AppendUnescapeLenient(nil, c.in)); got != c.want {
			t.Errorf("AppendUnescapeLenient(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
