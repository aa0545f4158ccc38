package ndjson

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestAppendQuoted(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got := string(AppendQuoted(nil, in))
		if got != want {
			t.Fatalf("AppendQuoted(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Fatalf("AppendQuoted(%q) = %s: not valid JSON: %v", in, got, err)
		}
		if utf8.ValidString(in) && back != in {
			t.Fatalf("AppendQuoted(%q) decodes to %q", in, back)
		}
	}
	f("", `""`)
	f("plain", `"plain"`)
	f("tab\there \"q\" \\", `"tab\there \"q\" \\"`)
	f("\x01\n\r", `"\u0001\n\r"`)
	f("é 用户", `"é 用户"`)
	f("bad \xff utf8", `"bad \ufffd utf8"`)
}
