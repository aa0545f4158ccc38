package ndjson

import (
	"encoding/json"
	"testing"
)

func TestAppendUnescapeSuccess(t *testing.T) {
	f := func(raw, want string) {
		t.Helper()
		got, err := AppendUnescape([]byte("pre:"), []byte(raw))
		if err != nil {
			t.Errorf("%q: unexpected error: %v", raw, err)
			return
		}
		if string(got) != "pre:"+want {
			t.Errorf("%q: got %q, want %q", raw, got[4:], want)
		}
		// encoding/json must agree.
		var std string
		if err := json.Unmarshal([]byte(`"`+raw+`"`), &std); err != nil {
			t.Errorf("%q: encoding/json: %v", raw, err)
		} else if std != want {
			t.Errorf("%q: encoding/json gives %q, want %q", raw, std, want)
		}
	}
	f(``, ``)
	f(`plain`, `plain`)
	f(`héllo 世界`, `héllo 世界`)
	f(`\"\\\/\b\f\n\r\t`, "\"\\/\b\f\n\r\t")
	f(`a\u0041b\u00e9\u20ac\u20AC`, `aAbé€€`)
	f(`\u0000\u001f`, "\x00\x1f")
	f(`\ud83d\ude00`, `😀`)
	f(`\uD83D\uDE00!`, `😀!`)
	f(`\ud800`, "\ufffd")
	f(`\udc00`, "\ufffd")
	f(`\ud800x`, "\ufffdx")
	f(`\ud800\u0041`, "\ufffdA")
	f(`\ud800\ud800\udc00`, "\ufffd\U00010000")
	f(`\udc00\udc00`, "\ufffd\ufffd")
	f(`\ud800\n`, "\ufffd\n")
	f(`\ud800\`+`\`, "\ufffd\\")
	f(`\ufffd\ufeff`, "\ufffd\ufeff")
	f(`0123456789abcdef\n0123456789abcdef`, "0123456789abcdef\n0123456789abcdef")
}

func TestAppendUnescapeFailure(t *testing.T) {
	f := func(raw, want string) {
		t.Helper()
		got, err := AppendUnescape([]byte("pre:"), []byte(raw))
		if string(got) != "pre:" {
			t.Errorf("%q: dst changed to %q", raw, got)
		}
		if err == nil {
			t.Errorf("%q: got no error, want %s", raw, want)
		} else if err.Error() != want {
			t.Errorf("%q:\ngot  %v\nwant %s", raw, err, want)
		}
	}
	f(`a"b`, `invalid character '"' in string literal (unescaped quote) at byte 1`)
	f(`\`, `unexpected end of line at byte 1`)
	f(`ab\u12`, `unexpected end of line at byte 6`)
	f(`\x`, `invalid character 'x' in string escape code at byte 1`)
	f(`\u00g0`, `invalid character 'g' in \u hexadecimal character escape at byte 4`)
	f("a\nb", `invalid character '\n' in string literal at byte 1`)
	f("a\xffb", `invalid UTF-8 in string at byte 1`)
	f("\xed\xa0\x80", `invalid UTF-8 in string at byte 0`)
}
