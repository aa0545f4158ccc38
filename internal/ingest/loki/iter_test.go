package loki

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/gen"
	"github.com/spate-io/spate/internal/ingest"
)

// treeFields is the reference for appendIter: fastjson's grammar (jtree)
// and flatten.
func treeFields(st *rowsState, m string) ([]ingest.Field, bool) {
	root, err := st.tree.parse(m)
	if err != nil {
		return nil, false
	}
	st.prefix = st.prefix[:0]
	return st.flatten(nil, root), true
}

// checkAppendIter fails t if appendIter takes m and gives other fields
// than the tree, for the options o; it reports whether appendIter took it.
func checkAppendIter(t *testing.T, o Options, m string) bool {
	t.Helper()
	st := &rowsState{o: o}
	got, ok := st.appendIter(nil, m)
	if !ok {
		if len(st.buf) != 0 || len(got) != 0 {
			t.Fatalf("%q: declined, but left %d fields and %d bytes", m, len(got), len(st.buf))
		}
		return false
	}
	gotS := fmt.Sprint(got)
	want, wantOK := treeFields(&rowsState{o: o}, m)
	if !wantOK || gotS != fmt.Sprint(want) {
		t.Fatalf("%q (prefix %q):\n iter %v\n tree %v (parsed %v)", m, o.MessageFieldsPrefix, gotS, want, wantOK)
	}
	return true
}

// randJSON appends a random JSON value: nested objects and arrays, keys
// and strings with escapes (surrogates too), numbers in every form, nulls,
// empty objects, duplicate and long keys, and white space.
func randJSON(b *strings.Builder, rng *rand.Rand, depth int) {
	ws := func() {
		if rng.IntN(6) == 0 {
			b.WriteString([]string{" ", "\n", "\t ", "\r\n"}[rng.IntN(4)])
		}
	}
	str := func() {
		b.WriteByte('"')
		for range rng.IntN(6) {
			b.WriteString([]string{"a", "b", "é", "日本", `\"`, `\\`, `\/`, `\n`, `\u0041`, `\ud83d\ude00`, `\ud800`, `\udc00x`, " ", "x.y", "1", "_msg"}[rng.IntN(16)])
		}
		if rng.IntN(40) == 0 {
			b.WriteString(strings.Repeat("k", 120+rng.IntN(20)))
		}
		b.WriteByte('"')
	}
	ws()
	switch c := rng.IntN(10); {
	case depth < 4 && c < 3:
		b.WriteByte('{')
		n := rng.IntN(5)
		if rng.IntN(8) == 0 {
			n = 0
		}
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			if rng.IntN(4) == 0 {
				b.WriteString(`"dup"`)
			} else {
				str()
			}
			ws()
			b.WriteByte(':')
			randJSON(b, rng, depth+1)
		}
		ws()
		b.WriteByte('}')
	case depth < 4 && c < 5:
		b.WriteByte('[')
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			randJSON(b, rng, depth+1)
		}
		ws()
		b.WriteByte(']')
	case c < 7:
		str()
	case c < 8:
		b.WriteString([]string{"0", "-0", "12", "1.50", "-3e7", "1E+2", "0.000001"}[rng.IntN(7)])
	default:
		b.WriteString([]string{"true", "false", "null"}[rng.IntN(3)])
	}
	ws()
}

// TestAppendIter compares appendIter with the tree on random objects
// (with and without a field prefix), on generated log lines, which it
// must all take, and on messages it must decline.
func TestAppendIter(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	took := 0
	for i := range 20000 {
		var b strings.Builder
		b.WriteByte('{')
		for j := range rng.IntN(6) {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":`, rng.IntN(4))
			randJSON(&b, rng, 1)
		}
		b.WriteByte('}')
		o := Options{ParseMessage: true}
		if i%3 == 0 {
			o.MessageFieldsPrefix = "p_"
		}
		if checkAppendIter(t, o, b.String()) {
			took++
		}
	}
	if took < 5000 {
		t.Errorf("appendIter took %d of 20000 random objects", took)
	}
	var logs bytes.Buffer
	if _, err := gen.Write(context.Background(), &logs, gen.Config{Size: 256 << 10, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if !checkAppendIter(t, Options{ParseMessage: true}, line) {
			t.Fatalf("declined a generated line: %s", line)
		}
	}
	for _, m := range []string{
		`{"a\u0062":1}`, `{"a":{}}`, `{"a":{ }}`, `{"a":"\xff"}`, `{"a":01}`, `{"a":nan}`, `{"a":1,}`,
		`{"` + strings.Repeat("k", 129) + `":1}`, `{"a":{"` + strings.Repeat("k", 127) + `":1}}`,
		`{"a":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`,
	} {
		if checkAppendIter(t, Options{ParseMessage: true}, m) {
			t.Errorf("%q: taken; want declined", m)
		}
	}
	if checkAppendIter(t, Options{ParseMessage: true, PreserveKeys: []string{"x"}}, `{"a":1}`) {
		t.Error("taken with PreserveKeys")
	}
}

func FuzzAppendIter(f *testing.F) {
	f.Add(`{"a":{"b":[1, {"c" : null}],"d":"x\"y"},"e":-0.5e3}`)
	f.Add(`{"":1,"a":{"":2}}`)
	f.Fuzz(func(t *testing.T, m string) {
		checkAppendIter(t, Options{ParseMessage: true}, m)
		checkAppendIter(t, Options{ParseMessage: true, MessageFieldsPrefix: "x."}, m)
	})
}

// TestAppendIterReuse: one rowsState (one Iter, whose key predictions and
// caches carry over, as in Rows) over generated lines interleaved with
// random objects and objects with escaped keys gives the tree's fields
// for every message it takes.
func TestAppendIterReuse(t *testing.T) {
	var logs bytes.Buffer
	if _, err := gen.Write(context.Background(), &logs, gen.Config{Size: 2 << 20, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(6, 6))
	st := &rowsState{o: Options{ParseMessage: true}}
	took, n := 0, 0
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		msgs := []string{line}
		switch rng.IntN(4) {
		case 0:
			var b strings.Builder
			b.WriteString(`{"k":`)
			randJSON(&b, rng, 1)
			b.WriteString(`}`)
			msgs = append(msgs, b.String())
		case 1:
			msgs = append(msgs, strings.Replace(line, `"level"`, `"lev\u0065l"`, 1))
		}
		for _, m := range msgs {
			n++
			st.buf = st.buf[:0]
			got, ok := st.appendIter(nil, m)
			if !ok {
				continue
			}
			took++
			want, wantOK := treeFields(&rowsState{o: st.o}, m)
			if !wantOK || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("message %d %q:\n iter %v\n tree %v", n, m, got, want)
			}
		}
	}
	if took < n/2 {
		t.Errorf("appendIter took %d of %d messages", took, n)
	}
}
