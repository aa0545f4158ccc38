package query

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestFinderMatchesBytesIndex checks the finder against bytes.Index on
// random haystacks over a small alphabet (many near-matches) and literals
// of every length.
func TestFinderMatchesBytesIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte("aberrorx \n\"")
	for range 3000 {
		lit := make([]byte, 1+r.IntN(9))
		for i := range lit {
			lit[i] = alphabet[r.IntN(len(alphabet))]
		}
		hay := make([]byte, r.IntN(200))
		for i := range hay {
			hay[i] = alphabet[r.IntN(len(alphabet))]
		}
		f := newFinder(lit)
		for off := 0; off <= len(hay); off++ {
			want := bytes.Index(hay[off:], lit)
			if got := f.index(hay[off:]); got != want {
				t.Fatalf("index(%q, %q) = %d, want %d", hay[off:], lit, got, want)
			}
		}
	}
}
