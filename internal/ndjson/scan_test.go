package ndjson

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// naiveSpecial is the byte loop specialMask replaces.
func naiveSpecial(b []byte) int {
	for i, c := range b {
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return len(b)
}

// checkFirstFlagged checks a SWAR mask against a byte predicate: the
// lowest set bit of mask(w) must be in the first byte of w (little-endian)
// that flagged reports, and mask(w) must be 0 when there is none. It tries
// every byte value at every position, after bytes that fill gives (by
// position and trial) and before bytes that above gives for the first
// trials and random bytes for the rest (bytes above the first flagged one
// must not matter), and then random words.
func checkFirstFlagged(t *testing.T, rng *rand.Rand, mask func(uint64) uint64, flagged func(byte) bool, fill func(k, trial int) byte, above []byte) {
	t.Helper()
	check := func(w uint64) {
		t.Helper()
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], w)
		want := 8
		for i, c := range b {
			if flagged(c) {
				want = i
				break
			}
		}
		got := 8
		if m := mask(w); m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if got != want {
			t.Fatalf("%q: got first flagged byte at %d, want %d", b, got, want)
		}
	}
	var b [8]byte
	for pos := range 8 {
		for c := range 256 {
			for trial := range 20 {
				for k := range b {
					switch {
					case k < pos:
						b[k] = fill(k, trial)
					case trial < len(above):
						b[k] = above[trial]
					default:
						b[k] = byte(rng.Uint32())
					}
				}
				b[pos] = byte(c)
				check(binary.LittleEndian.Uint64(b[:]))
			}
		}
	}
	for range 100000 {
		check(rng.Uint64())
	}
}

// TestSpecialMask checks specialMask against the byte loop.
func TestSpecialMask(t *testing.T) {
	checkFirstFlagged(t, rand.New(rand.NewPCG(1, 2)), specialMask,
		func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 },
		func(k, _ int) byte { return 'a' + byte(k) },
		[]byte{0x20}) // a borrow into 0x20 flips its high bit
}

// TestQuoteOrControlMask checks quoteOrControlMask, with non-ASCII bytes
// (which it must not flag) before the byte in half the trials.
func TestQuoteOrControlMask(t *testing.T) {
	checkFirstFlagged(t, rand.New(rand.NewPCG(3, 4)), quoteOrControlMask,
		func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 },
		func(k, trial int) byte {
			if trial%2 == 0 {
				return 0x80 + byte(k)*9
			}
			return 'a' + byte(k)
		}, nil)
}

// TestFindSpecial checks findSpecial and findQuoteOrControl, including
// the shifted last word, at every start offset of short and long inputs.
func TestFindSpecial(t *testing.T) {
	naiveQ := func(b []byte) int {
		for i, c := range b {
			if c == '"' || c == '\\' || c < 0x20 {
				return i
			}
		}
		return len(b)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte("abcdefgh\"\\\x01\x1f\x80\xff ~")
	for n := range 40 {
		for trial := range 200 {
			b := make([]byte, n)
			for k := range b {
				if trial%4 == 0 || rng.IntN(6) > 0 {
					b[k] = 'a' + byte(rng.IntN(26))
				} else {
					b[k] = alphabet[rng.IntN(len(alphabet))]
				}
			}
			for i := 0; i <= n; i++ {
				if got, want := findSpecial(b, i), i+naiveSpecial(b[i:]); got != want {
					t.Fatalf("findSpecial(%q, %d) = %d, want %d", b, i, got, want)
				}
				if got, want := findQuoteOrControl(b, i), i+naiveQ(b[i:]); got != want {
					t.Fatalf("findQuoteOrControl(%q, %d) = %d, want %d", b, i, got, want)
				}
				if j, ok := quickString(b, i); ok && (j != i+naiveSpecial(b[i:]) || b[j] != '"') {
					t.Fatalf("quickString(%q, %d) = %d, true", b, i, j)
				}
			}
		}
	}
}

// TestDigitsEnd checks nonDigitMask against the byte loop (bytes >= 0xb0
// above the first non-digit carry into the next byte's sums) and
// digitsEnd at every start offset of short and long inputs.
func TestDigitsEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	checkFirstFlagged(t, rng, nonDigitMask,
		func(c byte) bool { return !isDigit(c) },
		func(int, int) byte { return '0' + byte(rng.IntN(10)) },
		[]byte{'9', 0xff})
	naive := func(b []byte) int {
		for i, c := range b {
			if !isDigit(c) {
				return i
			}
		}
		return len(b)
	}
	alphabet := []byte("0123456789.e-,}\x80\xff/:")
	for n := range 40 {
		for range 200 {
			s := make([]byte, n)
			for k := range s {
				if rng.IntN(5) > 0 {
					s[k] = '0' + byte(rng.IntN(10))
				} else {
					s[k] = alphabet[rng.IntN(len(alphabet))]
				}
			}
			for i := 0; i <= n; i++ {
				if got, want := digitsEnd(s, i), i+naive(s[i:]); got != want {
					t.Fatalf("digitsEnd(%q, %d) = %d, want %d", s, i, got, want)
				}
			}
		}
	}
}
