package ndjson

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/gen"
)

// result is everything a walk shows: each leaf with all its accessors, and
// the error.
type result struct {
	leaves []fullLeaf
	tokens []uint64 // KeyToken of each leaf (not compared: see checkTokens)
	err    string
}

// fullLeaf is a leaf as every accessor shows it.
type fullLeaf struct {
	key, key2, value, value2, raw string
	kind                          Kind
	escaped, keyEscaped           bool
	depth                         int
}

// walkWith walks line with it, advancing with next (Next, or nextStrict for
// the reference), and records every accessor of every leaf, Key and Value
// twice.
func walkWith(it *Iter, line []byte, next func() bool, r *result) {
	it.Reset(line)
	r.leaves, r.tokens, r.err = r.leaves[:0], r.tokens[:0], ""
	for next() {
		r.tokens = append(r.tokens, it.KeyToken())
		l := fullLeaf{key: string(it.Key()), value: string(it.Value()), raw: string(it.Raw()),
			kind: it.Kind(), escaped: it.Escaped(), keyEscaped: it.KeyEscaped(), depth: it.Depth()}
		l.key2, l.value2 = string(it.Key()), string(it.Value())
		r.leaves = append(r.leaves, l)
	}
	if it.Kind() != 0 || it.Key() != nil || it.Raw() != nil || it.Value() != nil || it.KeyToken() != 0 || next() {
		r.err = "accessors not reset after the walk; "
	}
	r.err += fmt.Sprintf("depth %d; ", it.Depth())
	if err := it.Err(); err != nil {
		r.err += err.Error()
	}
}

// checkFast walks line with it, which may have walked other lines before,
// and fails unless the walk equals the reference: the scanning path alone
// (nextStrict, which is Next without its fast path) on a fresh Iter.
func checkFast(t *testing.T, it *Iter, line []byte, context string) {
	t.Helper()
	var got, want result
	walkWith(it, line, it.Next, &got)
	var ref Iter
	walkWith(&ref, line, ref.nextStrict, &want)
	if got.err != want.err || !slices.Equal(got.leaves, want.leaves) {
		t.Fatalf("%q (%s):\nNext:\n  %+v\n  err: %s\nstrict:\n  %+v\n  err: %s", line, context,
			got.leaves, got.err, want.leaves, want.err)
	}
	checkTokens(t, it, line, &got)
}

// tokenKeys maps, per Iter, every KeyToken seen to the key it stood for.
// Fuzz targets forget their Iter when done (forgetTokens): the map would
// keep every Iter of a fuzzing run alive.
var tokenKeys = map[*Iter]map[uint64]string{}

func forgetTokens(it *Iter) { delete(tokenKeys, it) }

// checkTokens fails if a non-zero KeyToken of r, a walk of line with it,
// stood for another key in an earlier walk with it.
func checkTokens(t *testing.T, it *Iter, line []byte, r *result) {
	t.Helper()
	m := tokenKeys[it]
	if m == nil {
		m = map[uint64]string{}
		tokenKeys[it] = m
	}
	for i, tok := range r.tokens {
		if tok == 0 {
			continue
		}
		k := r.leaves[i].key
		if old, ok := m[tok]; ok && old != k {
			t.Fatalf("%q: KeyToken %#x is key %q, but was %q before", line, tok, k, old)
		}
		m[tok] = k
	}
}

// predictLines are lines that exercise the fast path's edges: keys at the
// 16-byte limit of a prediction and near the end of the line, every value
// kind and number form, nesting, more fields than the prediction table
// holds, and the same keys at other depths.
func predictLines() []string {
	var many strings.Builder
	many.WriteString(`{"f0":{"x":0}`)
	for i := 1; i < 70; i++ {
		if i%17 == 3 {
			fmt.Fprintf(&many, `,"f%d":{"x":%d,"y":{"z":"%d"}}`, i, i, i)
		} else {
			fmt.Fprintf(&many, `,"f%d":%d`, i, i)
		}
	}
	many.WriteString("}")
	return []string{
		`{"a":"x","bb":"yy","ccc":1,"dddd":2.5,"eeeee":true,"ffffff":false,"ggggggg":null,"h":{"i":"j"}}`,
		`{"k123456789":"v","k1234567890":"v","k12345678901":"v","k123456789012":"v","k1234567890123":"v","k12345678901234":"v"}`,
		`{"n":0,"n":-1,"n":1.5e3,"n":1E+2,"n":10.25,"n":123456789012345678901234567890,"n":7}`,
		`{"s":"","s":"0123456789abcdef0123456789abcdef0123456789","s":"0123456789abcdef0123456789abcde","s":"é","s":"a\"b"}`,
		`{"a":{"b":1,"c":2},"d":3}`,
		`{"a":{"b":1},"c":2,"d":3}`,
		`{"a":{"b":{"c":{"d":"e"}}},"a":{"b":{"c":{"d":"e"}}}}`,
		`{"a":{"b":{"c":{"d":"e"},"x":1}},"y":2}`,
		`{"a":{},"b":{"c":{}},"d":[1,{"e":2}],"f":{"g":[]}}`,
		`{"a\n":{"b":1},"a":{"b\u0031":1,"c":2}}`,
		`{"x":1,"y":"` + strings.Repeat("z", 100) + `","w":{"v":"` + strings.Repeat("u", 40) + `"}}`,
		`{"ts":"t","k":1}`,
		`{"ts":"t","k":12}`,
		`{"ts":"t","k":true}`,
		`{"ts":"t","k":nul}`,
		`{"ts":"t","k":"v"}` + " ",
		` {"ts":"t","k":"v"}`,
		`{ "ts":"t","k":"v"}`,
		`{"ts" :"t","k":"v"}`,
		`{"ts":"t" ,"k":"v"}`,
		`{"ts":"t", "k":"v"}`,
		many.String(),
	}
}

// mutants returns the lines derived from v by overwriting, inserting or
// deleting one byte at each position.
func mutants(v []byte) [][]byte {
	interesting := []byte(" \t{}[]:,\"\\0123456789-.eEtrufalsn\x00\x1f\x7f\x80\xc3\xffx")
	var out [][]byte
	for i := range v {
		for _, c := range interesting {
			m := bytes.Clone(v)
			m[i] = c
			out = append(out, m, slices.Insert(bytes.Clone(v), i, c))
		}
		out = append(out, slices.Delete(bytes.Clone(v), i, i+1), v[:i])
	}
	return out
}

// TestFastPathMatchesStrict checks that Next, whatever it predicts from the
// lines before, gives exactly the leaves and errors of the scanning path
// alone: on the table lines, on generated lines in file order, and on every
// one-byte damage of some lines, each walked right after the undamaged line
// so that the Iter expects the original keys.
func TestFastPathMatchesStrict(t *testing.T) {
	var it Iter
	var table []string
	iterSuccessCases(func(line, _ string) { table = append(table, line) })
	iterFailureCases(func(line, _ string) { table = append(table, line) })
	table = append(table, predictLines()...)
	gen := genLines(t, 64<<10)

	// Every line twice in a row (the second walk predicts all its keys),
	// after every other line.
	for _, a := range table {
		for _, b := range table {
			checkFast(t, &it, []byte(a), "first")
			checkFast(t, &it, []byte(b), "after "+a)
			checkFast(t, &it, []byte(b), "again")
		}
		if testing.Short() {
			break
		}
	}
	var tokens, leaves int
	for i, line := range gen {
		checkFast(t, &it, line, fmt.Sprint("generated line ", i))
		for _, tok := range tokenResult(&it, line) {
			leaves++
			if tok != 0 {
				tokens++
			}
		}
	}
	// Generated lines share a layout: most keys must have a token, or
	// callers' caches would not help.
	if tokens < leaves*3/4 {
		t.Errorf("KeyToken is non-zero for %d of %d leaves of generated lines, want 3/4", tokens, leaves)
	}

	victims := [][]byte{gen[0], gen[1], gen[7]}
	for _, line := range predictLines()[:11] {
		victims = append(victims, []byte(line))
	}
	if testing.Short() {
		victims = victims[:2]
	}
	for _, v := range victims {
		for _, m := range mutants(v) {
			checkFast(t, &it, v, "victim")
			checkFast(t, &it, m, "mutant of "+string(v))
		}
	}

	// Random order: predictions trained by unrelated lines.
	rng := rand.New(rand.NewPCG(1, 2))
	pool := slices.Clone(gen)
	for _, v := range victims[:2] {
		pool = append(pool, mutants(v)[:500]...)
	}
	for range 20000 {
		checkFast(t, &it, pool[rng.IntN(len(pool))], "random order")
	}
}

// tokenResult walks line again with it and returns each leaf's KeyToken.
func tokenResult(it *Iter, line []byte) []uint64 {
	var r result
	walkWith(it, line, it.Next, &r)
	return r.tokens
}

// TestKeyCacheNesting checks the cache of nested keys against lines with
// the same keys in the same order but other nesting, where a stale cached
// key would be wrong.
func TestKeyCacheNesting(t *testing.T) {
	f := func(lines ...string) {
		t.Helper()
		var it Iter
		for round := range 3 {
			for _, line := range lines {
				checkFast(t, &it, []byte(line), fmt.Sprint("round ", round))
			}
		}
	}
	f(`{"a":{"b":1,"c":2}}`, `{"a":{"b":1},"c":2}`)
	f(`{"a":{"b":{"c":1}},"d":{"e":2}}`, `{"a":{"b":{"c":1},"d":{"e":2}}}`)
	f(`{"aaaa":{"bbbb":{"cccc":"x"}}}`, `{"aaaa":{"bbbb":"y","cccc":"x"}}`)
	f(`{"a":{"b":1}}`, `{"a":{"b":1}}x`, `{"a":{"b":1}}`, `{"a":{"b":"\u0041"}}`, `{"a":{"b":1}}`)
	f(`{"a\u0041":{"b":1}}`, `{"aA":{"b":1}}`)
	f(predictLines()[len(predictLines())-1], `{"f0":{"x":0},"f1":{"x":1}}`)
}

// TestFastPathStable checks that walking the same line again, with parts
// that the scanning path walks (a space, an escape, an array), changes no
// prediction.
func TestFastPathStable(t *testing.T) {
	line := []byte(`{"a":1,"b":{ "c":2,"d":3},"e":"` + strings.Repeat("x", 20) + `\n","f":[4],"g":"tail-of-the-line"}`)
	var it Iter
	for range 2 {
		checkFast(t, &it, line, "train")
	}
	gen, set := it.gens, it.set
	checkFast(t, &it, line, "trained")
	if it.gens != gen || it.set != set {
		t.Errorf("predictions changed on the same line: gen %d, then %d", gen, it.gens)
	}
}

// TestFastPathAllocs checks that walking and building every key and value
// of generated lines does not allocate once the Iter is trained.
func TestFastPathAllocs(t *testing.T) {
	lines := genLines(t, 64<<10)
	var it Iter
	walk := func() {
		for _, line := range lines {
			it.Reset(line)
			for it.Next() {
				_, _ = it.Key(), it.Value()
			}
		}
	}
	walk()
	if n := testing.AllocsPerRun(10, walk); n != 0 {
		t.Errorf("got %v allocs per walk, want 0", n)
	}
}

// FuzzFastPath checks that Next gives the leaves and errors of the
// scanning path alone on b, after walking a (which trains the predictions),
// and on a after b.
//
//	go test -run '^$' -fuzz FuzzFastPath -fuzztime 30s -fuzzminimizetime 2s ./internal/ndjson
func FuzzFastPath(f *testing.F) {
	gen := genLines(f, 4<<10)
	for i, line := range gen {
		m := bytes.Clone(line)
		m[(i*7919)%len(m)] = `"\:,}x`[i%6]
		f.Add(line, m)
		f.Add(line, gen[(i+1)%len(gen)])
	}
	for _, line := range predictLines() {
		f.Add([]byte(line), []byte(line))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) > 64<<10 || len(b) > 64<<10 {
			t.Skip() // see FuzzIter
		}
		var it Iter
		defer forgetTokens(&it)
		for _, line := range [][]byte{a, b, b, a, a, b} {
			checkFast(t, &it, line, "")
		}
	})
}

// checkSkip walks line with it, calling Skip for every leaf whose key is in
// skip, and fails unless the walk is the reference walk (nextStrict on a
// fresh Iter) less some leaves whose keys are in skip: Skip must never hide
// another key, change a leaf or change the error. It returns how many
// leaves were passed over.
func checkSkip(t *testing.T, it *Iter, line []byte, skip func(string) bool, context string) int {
	t.Helper()
	var got, want result
	it.Reset(line)
	for it.Next() {
		tok := it.KeyToken()
		l := fullLeaf{key: string(it.Key()), value: string(it.Value()), raw: string(it.Raw()),
			kind: it.Kind(), escaped: it.Escaped(), keyEscaped: it.KeyEscaped(), depth: it.Depth()}
		l.key2, l.value2 = string(it.Key()), string(it.Value())
		got.leaves, got.tokens = append(got.leaves, l), append(got.tokens, tok)
		if skip(l.key) {
			it.Skip(tok)
		}
	}
	if err := it.Err(); err != nil {
		got.err = err.Error()
	}
	var ref Iter
	walkWith(&ref, line, ref.nextStrict, &want)
	want.err = ""
	if err := ref.Err(); err != nil {
		want.err = err.Error()
	}
	j := 0
	for _, l := range want.leaves {
		if j < len(got.leaves) && got.leaves[j] == l {
			j++
			continue
		}
		if !skip(l.key) {
			j = -1
			break
		}
	}
	if j != len(got.leaves) || got.err != want.err {
		t.Fatalf("%q (%s):\nNext, with Skip:\n  %+v\n  err: %s\nstrict:\n  %+v\n  err: %s", line, context,
			got.leaves, got.err, want.leaves, want.err)
	}
	checkTokens(t, it, line, &got)
	return len(want.leaves) - len(got.leaves)
}

// TestSkip checks Iter.Skip on the corpus of TestFastPathMatchesStrict:
// skipped keys are passed over on later lines, and nothing else is.
func TestSkip(t *testing.T) {
	var table []string
	iterSuccessCases(func(line, _ string) { table = append(table, line) })
	iterFailureCases(func(line, _ string) { table = append(table, line) })
	table = append(table, predictLines()...)
	gen := genLines(t, 64<<10)
	for _, keys := range [][]string{
		{"ts", "host", "trace_id", "user_id", "http.ua", "http.proto"},
		{"service"},
		{"level", "msg", "path", "status", "http.remote_ip", "f3", "f5.x", "a", "b", "k", "n", "s"},
	} {
		skip := func(k string) bool { return slices.Contains(keys, k) }
		var it Iter
		for _, a := range table {
			for _, b := range table {
				checkSkip(t, &it, []byte(a), skip, "first")
				checkSkip(t, &it, []byte(b), skip, "after "+a)
				checkSkip(t, &it, []byte(b), skip, "again")
			}
			if testing.Short() {
				break
			}
		}
		skipped, inSet := 0, 0
		for i, line := range gen {
			skipped += checkSkip(t, &it, line, skip, fmt.Sprint("generated line ", i))
			var r result
			walkWith(new(Iter), line, new(Iter).nextStrict, &r)
			for _, l := range r.leaves {
				if skip(l.key) {
					inSet++
				}
			}
		}
		// Generated lines share a layout: most leaves to skip must be
		// skipped, or Skip would not save work.
		if skipped < inSet*3/4 {
			t.Errorf("skipping %v: %d of %d leaves of generated lines passed over, want 3/4", keys, skipped, inSet)
		}
		for _, v := range [][]byte{gen[0], gen[1], []byte(predictLines()[0])} {
			for _, m := range mutants(v) {
				checkSkip(t, &it, v, skip, "victim")
				checkSkip(t, &it, m, skip, "mutant of "+string(v))
			}
		}
	}

	// A predicted key in a line that is no longer clean: the escaped key
	// is walked by nextStrict, which enters its object without counting
	// the nested key's ordinal, so `,"z":` is predicted at z's ordinal but
	// is "qA.z" there, which must not be skipped.
	skip := func(k string) bool { return k == "z" }
	var it Iter
	for _, line := range []string{`{"k":1,"z":2,"pad":"0123456789abcdef"}`, `{"k":1,"z":2,"pad":"0123456789abcdef"}`, `{"q\u0041":{"m":1,"z":2,"pad":"0123456789abcdef"}}`, `{"k":1,"z":2,"pad":"0123456789abcdef"}`} {
		checkSkip(t, &it, []byte(line), skip, "escaped key")
	}
}

// FuzzSkip checks Iter.Skip like TestSkip on lines a and b, skipping the
// keys whose bytes add up to an odd number once sel is added.
//
//	go test -run '^$' -fuzz FuzzSkip -fuzztime 30s -fuzzminimizetime 2s ./internal/ndjson
func FuzzSkip(f *testing.F) {
	gen := genLines(f, 4<<10)
	for i, line := range gen {
		m := bytes.Clone(line)
		m[(i*7919)%len(m)] = `"\:,}x`[i%6]
		f.Add(line, m, byte(i))
	}
	// TestSkip's case: z is skipped, pA.z is not.
	f.Add([]byte(`{"k":1,"z":2,"pad":"0123456789abcdef"}`), []byte(`{"p\u0041":{"m":1,"z":2,"pad":"0123456789abcdef"}}`), byte(1))
	f.Fuzz(func(t *testing.T, a, b []byte, sel byte) {
		if len(a) > 64<<10 || len(b) > 64<<10 {
			t.Skip() // see FuzzIter
		}
		skip := func(k string) bool {
			sum := int(sel)
			for i := range len(k) {
				sum += int(k[i])
			}
			return sum%2 == 1
		}
		var it Iter
		defer forgetTokens(&it)
		for _, line := range [][]byte{a, a, b, b, a, b} {
			checkSkip(t, &it, line, skip, "")
		}
	})
}

// TestSkipStaleToken checks that Skip ignores a token from before the
// predictions changed: it may stand for another key now.
func TestSkipStaleToken(t *testing.T) {
	a := []byte(`{"k":1,"z":2,"pad":"0123456789abcdef"}`)
	b := []byte(`{"k":1,"y":2,"pad":"0123456789abcdef"}`)
	var it Iter
	var stale uint64
	for range 2 {
		it.Reset(a)
		for it.Next() {
			if string(it.Key()) == "z" {
				stale = it.KeyToken()
			}
		}
	}
	if stale == 0 {
		t.Fatal("no token for z on the second walk")
	}
	none := func(string) bool { return false }
	checkSkip(t, &it, b, none, "other layout") // changes the predictions
	it.Skip(stale)
	for range 2 {
		checkSkip(t, &it, b, none, "after a stale Skip")
	}
}

// TestLayoutsInterleaved walks lines of several layouts in turn, so that
// the Iter switches between its prediction sets mid-line, and checks every
// walk against the scanning path, with and without Skip: lines from
// gen's 8 layouts, and small layouts that agree on their first keys and
// nest objects at the same ordinals.
func TestLayoutsInterleaved(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Seed: 2, Size: 256 << 10, Layouts: 8, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	small := []string{
		`{"a":{"b":1,"c":2},"d":"0123456789abcdef0123"}`,
		`{"a":{"b":1,"x":2},"d":"0123456789abcdef0123"}`,
		`{"a":{"b":{"c":1}},"d":"0123456789abcdef0123"}`,
		`{"a":1,"b":{"c":2},"d":"0123456789abcdef0123"}`,
		`{"a":{"b":1,"c":2},"e":{"f":"0123456789abcdef0123"}}`,
		`{"q":1,"a":{"b":1,"c":2},"d":"0123456789abcdef0123"}`,
		`{"a":{"b":1,"c":2}}`,
	}
	for i := range 400 {
		lines = append(lines, []byte(small[(i*i+i/3)%len(small)]))
	}
	skips := []func(string) bool{
		func(string) bool { return false },
		func(k string) bool { return len(k)%2 == 0 },
		func(k string) bool { return k != "service" && k != "a.c" },
	}
	var it Iter
	for round := range 2 {
		for i, line := range lines {
			checkFast(t, &it, line, fmt.Sprintf("round %d line %d", round, i))
		}
	}
	for si, skip := range skips {
		var it Iter
		for round := range 2 {
			for i, line := range lines {
				checkSkip(t, &it, line, skip, fmt.Sprintf("skip %d round %d line %d", si, round, i))
			}
		}
	}
}
