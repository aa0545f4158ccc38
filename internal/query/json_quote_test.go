package query

import "testing"

func TestAppendJSONStringVL(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := string(appendJSONStringVL([]byte("x"), in)); got != "x"+want {
			t.Errorf("appendJSONStringVL(%q) = %s; want x%s", in, got, want)
		}
	}
	// The outputs of quicktemplate.AppendJSONString, which VictoriaLogs
	// v1.52.1 calls.
	f("", `""`)
	f("plain é", `"plain é"`)
	f("<a'b>\b", `"\u003ca\u0027b>\b"`)
	f("q\"\\\f\x01\x1f\n\r\t", `"q\"\\\f\u0001\u001f\n\r\t"`)
	f("bad \xff utf8", "\"bad \xff utf8\"")
}
