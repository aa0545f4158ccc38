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

// TestSpecialMask checks the SWAR mask against the byte loop: every byte
// value at every position of an otherwise plain word, with random bytes
// after it (which must not matter), and random words.
func TestSpecialMask(t *testing.T) {
	first := func(w uint64) int {
		m := specialMask(w)
		if m == 0 {
			return 8
		}
		for k := 0; k < 8; k++ {
			if m&(0x80<<(8*k)) != 0 {
				return k
			}
		}
		panic("unreachable")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var b [8]byte
	for pos := range 8 {
		for c := range 256 {
			for trial := range 20 {
				for k := range b {
					switch {
					case k < pos:
						b[k] = 'a' + byte(k)
					case trial == 0:
						b[k] = 0x20 // a borrow into 0x20 flips its high bit
					default:
						b[k] = byte(rng.Uint32())
					}
				}
				b[pos] = byte(c)
				w := binary.LittleEndian.Uint64(b[:])
				if got, want := first(w), naiveSpecial(b[:]); got != want {
					t.Fatalf("%q: got first special at %d, want %d", b, got, want)
				}
			}
		}
	}
	for range 100000 {
		w := rng.Uint64()
		binary.LittleEndian.PutUint64(b[:], w)
		if got, want := first(w), naiveSpecial(b[:]); got != want {
			t.Fatalf("%q: got first special at %d, want %d", b, got, want)
		}
	}
}

// TestQuoteOrControlMask checks quoteOrControlMask against the byte loop
// like TestSpecialMask.
func TestQuoteOrControlMask(t *testing.T) {
	naive := func(b []byte) int {
		for i, c := range b {
			if c == '"' || c == '\\' || c < 0x20 {
				return i
			}
		}
		return len(b)
	}
	first := func(w uint64) int {
		m := quoteOrControlMask(w)
		if m == 0 {
			return 8
		}
		return bits.TrailingZeros64(m) >> 3
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var b [8]byte
	for pos := range 8 {
		for c := range 256 {
			for trial := range 20 {
				for k := range b {
					switch {
					case k < pos && trial%2 == 0:
						b[k] = 0x80 + byte(k)*9 // non-ASCII before the byte
					case k < pos:
						b[k] = 'a' + byte(k)
					default:
						b[k] = byte(rng.Uint32())
					}
				}
				b[pos] = byte(c)
				w := binary.LittleEndian.Uint64(b[:])
				if got, want := first(w), naive(b[:]); got != want {
					t.Fatalf("%q: got first special at %d, want %d", b, got, want)
				}
			}
		}
	}
	for range 100000 {
		w := rng.Uint64()
		binary.LittleEndian.PutUint64(b[:], w)
		if got, want := first(w), naive(b[:]); got != want {
			t.Fatalf("%q: got first special at %d, want %d", b, got, want)
		}
	}
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

// TestDigitsEnd checks nonDigitMask against the byte loop (every byte value
// at every position after a run of digits, with random bytes after it,
// where bytes >= 0xb0 carry into the next byte's sums) and digitsEnd at
// every start offset of short and long inputs.
func TestDigitsEnd(t *testing.T) {
	naive := func(b []byte) int {
		for i, c := range b {
			if !isDigit(c) {
				return i
			}
		}
		return len(b)
	}
	first := func(w uint64) int {
		m := nonDigitMask(w)
		if m == 0 {
			return 8
		}
		return bits.TrailingZeros64(m) >> 3
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var b [8]byte
	for pos := range 8 {
		for c := range 256 {
			for trial := range 20 {
				for k := range b {
					switch {
					case k < pos:
						b[k] = '0' + byte(rng.IntN(10))
					case trial == 0:
						b[k] = '9'
					case trial == 1:
						b[k] = 0xff
					default:
						b[k] = byte(rng.Uint32())
					}
				}
				b[pos] = byte(c)
				w := binary.LittleEndian.Uint64(b[:])
				if got, want := first(w), naive(b[:]); got != want {
					t.Fatalf("%q: got first non-digit at %d, want %d", b, got, want)
				}
			}
		}
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
