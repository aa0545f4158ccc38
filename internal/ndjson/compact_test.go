package ndjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestAppendCompactSuccess(t *testing.T) {
	f := func(raw, want string) {
		t.Helper()
		got, err := AppendCompact([]byte("pre:"), []byte(raw))
		if err != nil {
			t.Errorf("%q: unexpected error: %v", raw, err)
			return
		}
		if string(got) != "pre:"+want {
			t.Errorf("%q: got %q, want %q", raw, got[4:], want)
		}
		// encoding/json must agree.
		var std bytes.Buffer
		if err := json.Compact(&std, []byte(raw)); err != nil {
			t.Errorf("%q: encoding/json: %v", raw, err)
		} else if std.String() != want {
			t.Errorf("%q: encoding/json gives %q, want %q", raw, std.String(), want)
		}
	}
	f(`[]`, `[]`)
	f(` [ ] `, `[]`)
	f("[1, 2,\t3\r\n]", `[1,2,3]`)
	f(`[ "a b" , "c\" d" , "\\" , "\\\"" ]`, `["a b","c\" d","\\","\\\""]`)
	f(`[{"a" : [ {} , [ ] ] , "b" : null}, true, false, -1.5e3]`, `[{"a":[{},[]],"b":null},true,false,-1.5e3]`)
	f(`{ "k" : "v" }`, `{"k":"v"}`)
	f(` "x y" `, `"x y"`)
	f(` 12 `, `12`)
	f(`null`, `null`)
	f(`["\u00e9 ", "é "]`, `["\u00e9 ","é "]`)
	f(`["<&>\u2028"]`, `["<&>\u2028"]`)
	f(strings.Repeat("[ ", 100)+strings.Repeat("] ", 100), strings.Repeat("[", 100)+strings.Repeat("]", 100))
}

func TestAppendCompactFailure(t *testing.T) {
	f := func(raw, want string) {
		t.Helper()
		got, err := AppendCompact([]byte("pre:"), []byte(raw))
		if string(got) != "pre:" {
			t.Errorf("%q: dst changed to %q", raw, got)
		}
		if err == nil {
			t.Errorf("%q: got no error, want %s", raw, want)
		} else if err.Error() != want {
			t.Errorf("%q:\ngot  %v\nwant %s", raw, err, want)
		}
	}
	f(``, `unexpected end of line at byte 0`)
	f(`  `, `unexpected end of line at byte 2`)
	f(`[1,]`, `invalid character ']' looking for beginning of value at byte 3`)
	f(`[1] 2`, `invalid character '2' after top-level value at byte 4`)
	f(`[1`, `unexpected end of line at byte 2`)
	f(`"abc`, `unexpected end of line at byte 4`)
	f("[\"\xff\"]", `invalid UTF-8 in string at byte 2`)
	f(`}`, `invalid character '}' looking for beginning of value at byte 0`)
	f(strings.Repeat("[", MaxDepth+1), `exceeded max depth of 1000 at byte 1000`)
}
