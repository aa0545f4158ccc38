// Package bytesutil holds the project's only uses of package unsafe: small
// helpers on byte slices with their lifetime caveats stated.
package bytesutil

import "unsafe"

// AlignPad returns how many bytes to skip from the start of b so that the
// next byte's address is congruent to off modulo align (a power of two):
// reading file offset off into b[AlignPad(b, off, align):] keeps source and
// destination mutually aligned, which the kernel copies much faster. The
// answer is only valid for b's current backing array; b must not be empty.
func AlignPad(b []byte, off int64, align int) int {
	addr := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) & uintptr(align-1))
	want := int(off & int64(align-1))
	return (want - addr + align) & (align - 1)
}

// ToUnsafeString returns a string that shares b's memory, without copying.
// The string is valid only while b's bytes are neither modified nor freed
// (for a chunk: until the chunk's callback returns); callers that keep it
// longer must strings.Clone it.
func ToUnsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
