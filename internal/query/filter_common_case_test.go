package query

import (
	"reflect"
	"testing"
)

func TestCommonCaseSpellings(t *testing.T) {
	f := func(phrases []string, want ...string) {
		t.Helper()
		got, msg := newFilterCommonCase("f", phrases, false)
		if got == nil {
			t.Fatalf("%q: %s", phrases, msg)
		}
		if !reflect.DeepEqual(got.Values, want) {
			t.Fatalf("%q: got %q, want %q", phrases, got.Values, want)
		}
	}
	f([]string{"Error"}, "ERROR", "Error", "error")
	f([]string{"error"}, "ERROR", "error")
	f([]string{"AbC"}, "ABC", "AbC", "Abc", "abC", "abc")
	f([]string{"a-b", "A-B"}, "A-B", "A-b", "a-B", "a-b")
	f([]string{""}, "")
	f(nil)
	// ϴ lower-cases to θ, whose upper case is Θ: three spellings.
	f([]string{"ϴ"}, "Θ", "θ", "ϴ")
	if _, msg := newFilterCommonCase("f", []string{"ABCDEFGHIJ"}, false); msg != "" {
		t.Fatalf("10 upper-case letters: %s", msg)
	}
	if _, msg := newFilterCommonCase("f", []string{"ABCDEFGHIJK"}, false); msg == "" {
		t.Fatal("11 upper-case letters: no error")
	}
}
