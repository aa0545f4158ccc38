package query

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// forEachKernel runs f with the portable code and, where the CPU has it,
// with the AVX2 kernels.
func forEachKernel(t *testing.T, f func(t *testing.T)) {
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	useAVX2 = false
	t.Run("portable", f)
	if saved {
		useAVX2 = true
		t.Run("avx2", f)
	}
}

// TestCountLinesVec checks the vector line count against NextLine on short
// random inputs over a tiny alphabet, so that empty lines, CRs and block
// edges fall in every position of the 64-byte blocks.
func TestCountLinesVec(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("\n\n\r\rab")
	for range 20000 {
		data := make([]byte, r.IntN(700))
		for i := range data {
			data[i] = alphabet[r.IntN(len(alphabet))]
		}
		want := refCountLines(data)
		if got := countLinesVec(data); got != want {
			t.Fatalf("countLinesVec(%q) = %d, want %d", data, got, want)
		}
	}
}

// TestCountNewlinesAVX2 checks the newline kernel's own contract on random
// bytes around the flagged range 0x08..0x0F: the count is bytes.Count's,
// and the flag is set exactly when some newline follows a byte in the
// range, including the byte before p.
func TestCountNewlinesAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte{'a', '\n', '\n', '\r', '\t', 0x07, 0x08, 0x0f, 0x10, 0x8a, 0x8f}
	for range 20000 {
		data := make([]byte, 64*(2+r.IntN(12)))
		for i := range data {
			data[i] = 'a'
			if r.IntN(8) == 0 {
				data[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
		p := data[64:]
		wantFlag := false
		for i, c := range p {
			prev := data[64+i-1]
			wantFlag = wantFlag || (c == '\n' && prev >= 0x08 && prev <= 0x0f)
		}
		n, flag := countNewlinesAVX2(&p[0], len(p))
		if want := bytes.Count(p, []byte{'\n'}); n != want || flag != wantFlag {
			t.Fatalf("countNewlinesAVX2(%q) = %d, %v; want %d, %v", p, n, flag, want, wantFlag)
		}
	}
}

// TestCountLinesVecBlocks checks the two-kernel count on inputs several
// countVecBlock blocks long: mostly plain lines, which the newline kernel
// counts alone, with a few empty lines, CRLF ends and tabs before a
// newline (flagged, yet not empty) dropped anywhere, and most often just
// around block edges, where the flag depends on the previous block's last
// byte.
func TestCountLinesVecBlocks(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"\n", "\n\n", "\r\n", "\n\r\n", "\t\n", "\r", "a\n"}
	for range 3000 {
		size := countVecBlock*(1+r.IntN(3)) + r.IntN(200)
		data := bytes.Repeat([]byte("line of text\n"), size/13+1)[:size]
		for range r.IntN(4) {
			pos := 64 + countVecBlock*r.IntN(3) + r.IntN(5) - 2 // around an edge
			if r.IntN(3) == 0 {
				pos = r.IntN(len(data))
			}
			p := pieces[r.IntN(len(pieces))]
			if pos >= 0 && pos+len(p) <= len(data) {
				copy(data[pos:], p)
			}
		}
		want := refCountLines(data)
		if got := countLinesVec(data); got != want {
			t.Fatalf("countLinesVec = %d, want %d (len %d)", got, want, len(data))
		}
	}
}

// TestCandScan checks that the candidate walk visits exactly the starts of
// the literal and of the escape probe, in order, on random haystacks with
// many near-matches, for every literal length and both escape probes.
func TestCandScan(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		alphabet := []byte(`aberrorx \u"` + "\n")
		for round := range 3000 {
			lit := make([]byte, 1+r.IntN(9))
			for i := range lit {
				lit[i] = alphabet[r.IntN(len(alphabet))]
			}
			esc := []byte(`\u`)
			if round%3 == 0 {
				esc = []byte(`\`)
			}
			hay := make([]byte, r.IntN(400))
			for i := range hay {
				hay[i] = alphabet[r.IntN(len(alphabet))]
			}
			var want []int
			for q := range hay {
				if bytes.HasPrefix(hay[q:], lit) || bytes.HasPrefix(hay[q:], esc) {
					want = append(want, q)
				}
			}
			c := newCandFinder(lit, esc)
			var s candScan
			s.reset(c, hay)
			var got []int
			// Skip ahead sometimes, as scanLiteral does after a line.
			for pos := 0; pos <= len(hay); {
				q := s.find(pos)
				if q < 0 {
					break
				}
				got = append(got, q)
				pos = q + 1
			}
			if !equalInts(got, want) {
				t.Fatalf("lit %q esc %q in %q: got %v, want %v", lit, esc, hay, got, want)
			}
			// Skipping: the first candidate at or after each jump target,
			// which is past the last candidate returned.
			s.reset(c, hay)
			for pos := 0; pos < len(hay); {
				q := s.find(pos)
				w := -1
				for _, x := range want {
					if x >= pos {
						w = x
						break
					}
				}
				if q != w {
					t.Fatalf("lit %q esc %q in %q: find(%d) = %d, want %d", lit, esc, hay, pos, q, w)
				}
				if q < 0 {
					break
				}
				pos = max(pos+1+r.IntN(80), q+1)
			}
		}
	})
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestContainsIn checks candFinder.containsIn against bytes.Contains on
// random short haystacks with many near-matches, including matches that
// end on the last byte and haystacks shorter than the kernel's block.
func TestContainsIn(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		alphabet := []byte(`statusx "`)
		var scratch []byte
		found := 0
		for range 20000 {
			lit := make([]byte, 1+r.IntN(8))
			for i := range lit {
				lit[i] = "status"[r.IntN(6)]
			}
			hay := make([]byte, r.IntN(300))
			for i := range hay {
				hay[i] = alphabet[r.IntN(len(alphabet))]
				if r.IntN(1000) == 0 {
					hay[i] = '\\'
				}
			}
			want := bytes.Contains(hay, lit) || bytes.IndexByte(hay, '\\') >= 0
			c := newCandFinder(lit, []byte(`\`))
			if got := c.containsIn(hay, &scratch); got != want {
				t.Fatalf("containsIn(%q, %q) = %v, want %v", hay, lit, got, want)
			}
			// The same haystack with capacity to spare, as the rest of a
			// line in its chunk: the bytes past its end complete and
			// repeat the literal and hold backslashes, and must not count.
			room := append(hay[:len(hay):len(hay)], lit...)
			for len(room) < len(hay)+64+c.maxOff+r.IntN(64) {
				room = append(room, lit[r.IntN(len(lit)):]...)
				room = append(room, '\\')
			}
			if got := c.containsIn(room[:len(hay)], &scratch); got != want {
				t.Fatalf("containsIn(%q with room %q, %q) = %v, want %v", hay, room[len(hay):], lit, got, want)
			}
			if want {
				found++
			}
		}
		if found < 2000 || found > 18000 {
			t.Fatalf("%d of 20000 haystacks contain the literal: the test needs both answers often", found)
		}
	})
}
