package bytesutil

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unsafe"
)

func TestAlignPad(t *testing.T) {
	buf := make([]byte, 3*4096)
	for _, start := range []int{0, 1, 7, 4095, 4096} {
		b := buf[start:]
		for _, off := range []int64{0, 1, 4095, 4096, 12345, 1 << 40} {
			pad := AlignPad(b, off, 4096)
			if pad < 0 || pad >= 4096 {
				t.Fatalf("start %d off %d: pad %d out of range", start, off, pad)
			}
			addr := uintptr(unsafe.Pointer(&b[pad]))
			if int64(addr%4096) != off%4096 {
				t.Fatalf("start %d off %d: address %%4096 = %d, want %d", start, off, addr%4096, off%4096)
			}
		}
	}
}

func TestLastIndexByte(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 70 {
		b := make([]byte, n)
		for range 200 {
			// Bytes near c (c-1, c+1, 0x80|c) catch carry and sign mistakes.
			c := byte(r.IntN(256))
			for i := range b {
				b[i] = [...]byte{c, c - 1, c + 1, c ^ 0x80, byte(r.IntN(256)), 0, 0xff, c - 1}[r.IntN(8)]
			}
			if r.IntN(3) == 0 {
				for i := range b {
					if b[i] == c {
						b[i]++
					}
				}
			}
			if got, want := LastIndexByte(b, c), bytes.LastIndexByte(b, c); got != want {
				t.Fatalf("LastIndexByte(%x, %#x) = %d, want %d", b, c, got, want)
			}
		}
	}
}

func FuzzLastIndexByte(f *testing.F) {
	f.Add([]byte("a\nbc\nd"), byte('\n'))
	f.Add([]byte("\x0a\x0b\x0a\x09\x00\x01\x0a\x0b\x0b"), byte('\n'))
	f.Fuzz(func(t *testing.T, b []byte, c byte) {
		if got, want := LastIndexByte(b, c), bytes.LastIndexByte(b, c); got != want {
			t.Fatalf("LastIndexByte(%x, %#x) = %d, want %d", b, c, got, want)
		}
	})
}

func BenchmarkLastIndexByte(b *testing.B) {
	line := bytes.Repeat([]byte("x"), 300)
	buf := append(append([]byte("{}\n"), line...), '"')
	for _, bc := range []struct {
		name string
		f    func([]byte, byte) int
	}{{"swar", LastIndexByte}, {"bytes", bytes.LastIndexByte}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if bc.f(buf, '\n') != 2 {
					b.Fatal("wrong index")
				}
			}
		})
	}
}

func TestParseDigits(t *testing.T) {
	for _, tc := range []struct {
		s  string
		n  int
		ok bool
	}{
		{"", 0, true}, {"0", 0, true}, {"07", 7, true}, {"2026", 2026, true}, {"1234567890", 1234567890, true},
		{"-1", 0, false}, {"+1", 0, false}, {"1a", 0, false}, {" 1", 0, false}, {"1/", 0, false}, {"9:", 0, false},
	} {
		if n, ok := ParseDigits(tc.s); n != tc.n || ok != tc.ok {
			t.Errorf("ParseDigits(%q) = %d, %v; want %d, %v", tc.s, n, ok, tc.n, tc.ok)
		}
	}
}
