package bytesutil

import (
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
