package loki

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
)

// checkSnappy fails t unless Snappy refuses comp exactly when
// snappy.DecodeStrict does, and otherwise decodes it to the same bytes.
func checkSnappy(t *testing.T, comp []byte) {
	t.Helper()
	want, wantErr := snappy.DecodeStrict(nil, comp)
	for _, dst := range [][]byte{nil, make([]byte, 0, len(want)+64)} {
		got, err := Snappy(dst, comp, 0)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("input %x: error %v, DecodeStrict's %v", comp, err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("input %x: decoded %q, DecodeStrict %q", comp, got, want)
		}
	}
}

// snappyInputs returns blocks for the comparison: snappy and S2 encodings
// (S2's repeat copies must be refused) of log-like text, repeats at every
// short offset and random bytes, whole, cut short and with bytes changed.
func snappyInputs(rng *rand.Rand) [][]byte {
	var plain [][]byte
	for i := range 60 {
		var b strings.Builder
		for b.Len() < rng.IntN(1<<(i%17+1)) {
			switch rng.IntN(4) {
			case 0:
				fmt.Fprintf(&b, `{"level":"info","n":%d,"msg":"user u_%d logged in"}`, rng.IntN(100), rng.IntN(1000))
			case 1:
				b.WriteString(strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(40)))
			case 2:
				pat := make([]byte, 1+rng.IntN(9))
				for j := range pat {
					pat[j] = byte(rng.IntN(256))
				}
				b.Write(bytes.Repeat(pat, rng.IntN(30)))
			default:
				for range rng.IntN(50) {
					b.WriteByte(byte(rng.IntN(256)))
				}
			}
		}
		plain = append(plain, []byte(b.String()))
	}
	var out [][]byte
	for _, p := range plain {
		for _, enc := range [][]byte{snappy.Encode(nil, p), s2.Encode(nil, p), s2.EncodeBetter(nil, p)} {
			out = append(out, enc)
			if len(enc) > 1 {
				out = append(out, enc[:rng.IntN(len(enc))])
			}
			for range 8 {
				m := bytes.Clone(enc)
				m[rng.IntN(len(m))] ^= byte(1 + rng.IntN(255))
				out = append(out, m)
			}
		}
	}
	// Length varints of more than 5 bytes, and lengths the elements do
	// not fill.
	out = append(out, []byte{0x83, 0x80, 0x80, 0x80, 0x80, 0x00, 0x08, 'a', 'b', 'c'},
		[]byte{0x04, 0x08, 'a', 'b', 'c'}, []byte{0x02, 0x08, 'a', 'b', 'c'}, []byte{0x00}, []byte{})
	return out
}

// TestSnappyMatchesDecodeStrict compares Snappy with klauspost's
// DecodeStrict over valid, S2-extended, truncated and corrupted blocks.
func TestSnappyMatchesDecodeStrict(t *testing.T) {
	refused := 0
	for _, in := range snappyInputs(rand.New(rand.NewPCG(7, 7))) {
		checkSnappy(t, in)
		if _, err := snappy.DecodeStrict(nil, in); err != nil {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no input was refused: the comparison covers no bad block")
	}
}
