package loki

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// stringEndRef is the plain definition stringEnd implements: the first
// '"' after an even number of backslashes.
func stringEndRef(s string, i int) (int, bool) {
	for {
		n := strings.IndexByte(s[i:], '"')
		if n < 0 {
			return len(s), false
		}
		q := i + n
		b := q
		for b > i && s[b-1] == '\\' {
			b--
		}
		if (q-b)%2 == 0 {
			return q, true
		}
		i = q + 1
	}
}

func checkStringEnd(t *testing.T, s string, i int) {
	end, esc, ok := stringEnd(s, i)
	wantEnd, wantOK := stringEndRef(s, i)
	if ok != wantOK || ok && end != wantEnd {
		t.Fatalf("stringEnd(%q, %d) = %d, %v; want %d, %v", s, i, end, ok, wantEnd, wantOK)
	}
	if ok && esc != strings.Contains(s[i:end], `\`) {
		t.Fatalf("stringEnd(%q, %d): esc %v", s, i, esc)
	}
}

// TestStringEnd checks the word-at-a-time stringEnd against the plain
// definition on random strings of quotes, backslashes and other bytes.
func TestStringEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"a", "b", `"`, `\`, `\\`, `\"`, "é", "\x00", "\xff", "0123456789"}
	for range 200000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		checkStringEnd(t, s, rng.IntN(len(s)+1))
	}
}

func FuzzStringEnd(f *testing.F) {
	for _, s := range []string{`abc"`, `ab\"c"`, `0123456789\\"`, `\`, `0123456\`, `"`} {
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, s string, i int) {
		if i < 0 || i > len(s) {
			return
		}
		checkStringEnd(t, s, i)
	})
}
