package ndjson

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzIter checks the oracle property of checkOracle on any input: the Iter
// never panics, rejects invalid UTF-8, accepts exactly the JSON object lines
// encoding/json accepts, and yields the same leaves. Inputs are capped at
// 64 KiB: longer ones add time per iteration, not coverage (the scanner
// has no buffer boundary; nesting past MaxDepth needs only ~1 KiB).
//
// Run it with a short minimization budget, since each execution runs
// encoding/json twice and minimizing a ~400-byte seed for the default 60 s
// stalls the run:
//
//	go test -run '^$' -fuzz FuzzIter -fuzztime 30s -fuzzminimizetime 2s ./internal/ndjson
func FuzzIter(f *testing.F) {
	seed := func(line, _ string) { f.Add([]byte(line)) }
	iterSuccessCases(seed)
	iterFailureCases(seed)
	for _, line := range genLines(f, 8<<10) {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(line) > 64<<10 {
			t.Skip()
		}
		var it Iter
		checkOracle(t, &it, line)
	})
}

// FuzzAppendUnescape checks AppendUnescape against encoding/json: on valid
// UTF-8 it accepts exactly the string contents json.Unmarshal accepts and
// decodes them the same way; it rejects invalid UTF-8.
func FuzzAppendUnescape(f *testing.F) {
	for _, s := range []string{``, `abc`, `\"\\\/\b\f\n\r\t`, `\u00e9\ud83d\ude00\ud800\udc00\udc00`, `é世😀`, `a"b`, `\x`, "\x01", "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := AppendUnescape(nil, raw)
		if !utf8.Valid(raw) {
			if err == nil {
				t.Fatalf("%q: invalid UTF-8 accepted", raw)
			}
			return
		}
		var want string
		werr := json.Unmarshal([]byte(`"`+string(raw)+`"`), &want)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: got error %v, encoding/json %v", raw, err, werr)
		}
		if err == nil && string(got) != want {
			t.Fatalf("%q: got %q, want %q", raw, got, want)
		}
	})
}

// FuzzAppendCompact checks AppendCompact against json.Compact on valid
// UTF-8 (within MaxDepth), and that it rejects invalid UTF-8.
func FuzzAppendCompact(f *testing.F) {
	for _, s := range []string{`[]`, ` [ 1 , "a b" , { "k" : [ null ] } ] `, `"x"`, `12`, `[1,]`, `{"a" 1}`, "[\"\xff\"]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := AppendCompact(nil, raw)
		if !utf8.Valid(raw) {
			if err == nil {
				t.Fatalf("%q: invalid UTF-8 accepted", raw)
			}
			return
		}
		var want bytes.Buffer
		werr := json.Compact(&want, raw)
		if err != nil && werr == nil && maxNesting(raw) > MaxDepth {
			return
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: got error %v, encoding/json %v", raw, err, werr)
		}
		if err == nil && string(got) != want.String() {
			t.Fatalf("%q: got %q, want %q", raw, got, want.String())
		}
	})
}
