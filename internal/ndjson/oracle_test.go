package ndjson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/spate-io/spate/internal/gen"
)

// leaf is one field as yielded by an Iter.
type leaf struct {
	key   string
	kind  Kind
	value string
}

func (l leaf) String() string { return fmt.Sprintf("%q=%s:%q", l.key, l.kind, l.value) }

// walkLeaves drives it over line to the end, checking the per-leaf
// invariants, and returns the leaves and Err.
func walkLeaves(t *testing.T, it *Iter, line []byte) ([]leaf, error) {
	t.Helper()
	it.Reset(line)
	var leaves []leaf
	for it.Next() {
		raw, v := it.Raw(), it.Value()
		switch k := it.Kind(); {
		case k == KindString && !it.Escaped() && !bytes.Equal(v, raw):
			t.Fatalf("%q: %s: unescaped string: Value %q != Raw %q", line, it.Key(), v, raw)
		case k != KindString && it.Escaped():
			t.Fatalf("%q: %s: Escaped for kind %s", line, it.Key(), k)
		case k == KindNull && (string(raw) != "null" || len(v) != 0):
			t.Fatalf("%q: %s: null: Raw %q, Value %q", line, it.Key(), raw, v)
		case (k == KindTrue || k == KindFalse) && (string(raw) != k.String() || string(v) != k.String()):
			t.Fatalf("%q: %s: %s: Raw %q, Value %q", line, it.Key(), k, raw, v)
		case k < KindString || k > KindArray:
			t.Fatalf("%q: %s: bad kind %d", line, it.Key(), k)
		}
		leaves = append(leaves, leaf{string(it.Key()), it.Kind(), string(v)})
	}
	if it.Kind() != 0 {
		t.Fatalf("%q: Kind is %s after Next returned false", line, it.Kind())
	}
	err := it.Err()
	if err != nil {
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(line) || se.Msg == "" {
			t.Fatalf("%q: bad error %#v", line, err)
		}
	}
	return leaves, err
}

// tokenLeaves is the reference walk: it flattens the valid JSON object line
// with encoding/json's Decoder.Token (UseNumber), in source order, and
// reports whether some object has a key twice.
func tokenLeaves(line []byte) (leaves []leaf, dupKeys bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false, fmt.Errorf("not an object: %v %v", tok, err)
	}
	var walk func(prefix string) error
	walk = func(prefix string) error {
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key := tok.(string)
			dupKeys = dupKeys || seen[key]
			seen[key] = true
			tok, err = dec.Token()
			if err != nil {
				return err
			}
			l := leaf{key: prefix + key}
			switch v := tok.(type) {
			case json.Delim:
				if v == '{' {
					if err := walk(prefix + key + "."); err != nil {
						return err
					}
					continue
				}
				// An array: skip to its end and compact its source text.
				start := int(dec.InputOffset()) - 1
				for depth := 1; depth > 0; {
					tok, err := dec.Token()
					if err != nil {
						return err
					}
					switch tok {
					case json.Delim('['), json.Delim('{'):
						depth++
					case json.Delim(']'), json.Delim('}'):
						depth--
					}
				}
				var b bytes.Buffer
				if err := json.Compact(&b, line[start:dec.InputOffset()]); err != nil {
					return err
				}
				l.kind, l.value = KindArray, b.String()
			case string:
				l.kind, l.value = KindString, v
			case json.Number:
				l.kind, l.value = KindNumber, string(v)
			case bool:
				l.kind, l.value = KindFalse, "false"
				if v {
					l.kind, l.value = KindTrue, "true"
				}
			case nil:
				l.kind = KindNull
			}
			leaves = append(leaves, l)
		}
		_, err := dec.Token() // '}'
		return err
	}
	err = walk("")
	return leaves, dupKeys, err
}

// mapLeaves is the map-based reference: decode into maps (keeping arrays
// as raw text), flatten, last wins. Comparable with an Iter only when no
// object repeats a key and no two paths flatten to the same name, since a
// map forgets the order in which to let the last win.
func mapLeaves(data []byte, prefix string, out map[string]leaf) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	for k, raw := range m {
		l := leaf{key: prefix + k}
		switch raw[0] {
		case '{':
			if err := mapLeaves(raw, prefix+k+".", out); err != nil {
				return err
			}
			continue
		case '[':
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return err
			}
			l.kind, l.value = KindArray, b.String()
		case '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			l.kind, l.value = KindString, s
		case 't':
			l.kind, l.value = KindTrue, "true"
		case 'f':
			l.kind, l.value = KindFalse, "false"
		case 'n':
			l.kind = KindNull
		default:
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var n json.Number
			if err := dec.Decode(&n); err != nil {
				return err
			}
			l.kind, l.value = KindNumber, string(n)
		}
		out[l.key] = l
	}
	return nil
}

// maxNesting returns the deepest nesting of brackets outside strings in a
// valid JSON text.
func maxNesting(line []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// checkOracle checks the Iter against encoding/json on line:
//   - a line with invalid UTF-8 is an error;
//   - for valid UTF-8, the walk ends without error exactly when json.Valid
//     accepts the line and it starts with '{' (unless it nests deeper than
//     MaxDepth, which encoding/json allows and we reject);
//   - for a valid line, the leaves equal the Decoder.Token flattening in
//     order, and, when unambiguous, the map flattening with last-wins
//     dedupe.
func checkOracle(t *testing.T, it *Iter, line []byte) {
	t.Helper()
	leaves, err := walkLeaves(t, it, line)
	if !utf8.Valid(line) {
		if err == nil {
			t.Fatalf("%q: invalid UTF-8 accepted", line)
		}
		return
	}
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	valid := json.Valid(line) && len(trimmed) > 0 && trimmed[0] == '{'
	if valid && err != nil && strings.HasPrefix(err.(*SyntaxError).Msg, "exceeded max depth") && maxNesting(line) > MaxDepth {
		return
	}
	if valid != (err == nil) {
		t.Fatalf("%q: json.Valid && object = %v, but Iter error = %v", line, valid, err)
	}
	if !valid {
		return
	}

	want, dupKeys, werr := tokenLeaves(line)
	if werr != nil {
		t.Fatalf("%q: reference walk: %v", line, werr)
	}
	if !slices.Equal(leaves, want) {
		t.Fatalf("%q: leaves differ from encoding/json tokens:\ngot  %v\nwant %v", line, leaves, want)
	}

	dedup := map[string]leaf{}
	for _, l := range leaves {
		dedup[l.key] = l
	}
	if dupKeys || len(dedup) != len(leaves) {
		return // ambiguous for a map, see mapLeaves
	}
	fromMap := map[string]leaf{}
	if err := mapLeaves(line, "", fromMap); err != nil {
		t.Fatalf("%q: map reference: %v", line, err)
	}
	if !maps.Equal(dedup, fromMap) {
		t.Fatalf("%q: leaves differ from encoding/json map:\ngot  %v\nwant %v", line, dedup, fromMap)
	}
}

// genData is 4 MiB of the repository's generated logs, shared by the
// oracle tests, the fuzz seeds and the benchmarks.
var genData = sync.OnceValues(func() ([]byte, error) {
	var buf bytes.Buffer
	_, err := gen.Write(context.Background(), &buf, gen.Config{Seed: 1, Size: 4 << 20, Format: "ndjson", Workers: 1})
	return buf.Bytes(), err
})

// genLines returns the first lines of genData totalling at most size
// bytes, without their newlines.
func genLines(tb testing.TB, size int) [][]byte {
	tb.Helper()
	data, err := genData()
	if err != nil {
		tb.Fatal(err)
	}
	var lines [][]byte
	for n := 0; len(data) > 0; {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		if n += len(line) + 1; n > size {
			break
		}
		lines, data = append(lines, line), rest
	}
	return lines
}

// TestOracle runs the oracle over the table cases, a megabyte of generated
// lines, and systematic damage to a few lines: every truncation, and every
// position overwritten with each interesting byte.
func TestOracle(t *testing.T) {
	var it Iter
	check := func(line string, _ string) {
		t.Helper()
		checkOracle(t, &it, []byte(line))
	}
	iterSuccessCases(check)
	iterFailureCases(check)

	size := 256 << 10
	if testing.Short() {
		size = 16 << 10
	}
	lines := genLines(t, size)
	for _, line := range lines {
		checkOracle(t, &it, line)
	}

	victims := [][]byte{
		lines[0],
		[]byte(`{"a":[1,{"b":"c\"d"}],"e":{"f":-1.5e+3,"g":null},"h":"\u00e9 é"}`),
	}
	interesting := []byte(" \t\r\n{}[]:,\"\\0123456789-+.eEtrufalsn\x00\x1f\x7f\x80\xc3\xff/u")
	buf := make([]byte, 0, 1024)
	for _, v := range victims {
		for n := range len(v) {
			checkOracle(t, &it, v[:n])
		}
		for i := range v {
			for _, c := range interesting {
				buf = append(buf[:0], v...)
				buf[i] = c
				checkOracle(t, &it, buf)
				buf = append(append(append(buf[:0], v[:i]...), c), v[i:]...)
				checkOracle(t, &it, buf)
			}
			buf = append(append(buf[:0], v[:i]...), v[i+1:]...)
			checkOracle(t, &it, buf)
		}
	}
}

// TestKeyEscaped: KeyEscaped is set for a leaf whose own key or an
// enclosing object's key has an escape, and only then.
func TestKeyEscaped(t *testing.T) {
	for _, c := range []struct {
		line string
		want []bool
	}{
		{`{"a":1,"b":"x\"y"}`, []bool{false, false}},
		{`{"a\u0062":1,"c":2}`, []bool{true, false}},
		{`{"x\n":{"b":1,"c":{"d":2}},"e":3}`, []bool{true, true, false}},
		{`{"x":{"b\"c":1,"d":2},"f\/":[1]}`, []bool{true, false, true}},
		{`{"x":{"y":{"z\\":null}},"w":{"v":true}}`, []bool{true, false}},
	} {
		var it Iter
		it.Reset([]byte(c.line))
		var got []bool
		for it.Next() {
			got = append(got, it.KeyEscaped())
		}
		if it.Err() != nil || !slices.Equal(got, c.want) || it.KeyEscaped() {
			t.Errorf("%s: %v (%v), want %v", c.line, got, it.Err(), c.want)
		}
	}
}
