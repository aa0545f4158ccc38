//go:build linux

package query

import (
	"bytes"
	"math/rand/v2"
	"syscall"
	"testing"
)

// guardedPage maps two pages and makes the second inaccessible: a load
// past the end of the returned page faults, and the test dies.
func guardedPage(t *testing.T) []byte {
	t.Helper()
	ps := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[ps:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	return mem[:ps:ps]
}

// TestContainsInGuard puts haystacks at the end of a page followed by an
// inaccessible one, with capacities around what containsIn needs to probe
// in place (64+maxOff bytes of room; the kernel reads at most 63+maxOff
// past the end), so that any load past the page faults and kills the test.
func TestContainsInGuard(t *testing.T) {
	page := guardedPage(t)
	r := rand.New(rand.NewPCG(7, 8))
	var scratch []byte
	for range 5000 {
		lit := make([]byte, 1+r.IntN(12))
		for i := range lit {
			lit[i] = "timeout"[r.IntN(7)]
		}
		c := newCandFinder(lit, []byte(`\`))
		n := r.IntN(300)
		for _, room := range []int{64 + c.maxOff, 63 + c.maxOff, 62 + c.maxOff, r.IntN(62), 0} {
			start := len(page) - room - n
			hay := page[start : start+n]
			for i := range page[start:] {
				page[start+i] = "timeout \""[r.IntN(9)]
			}
			want := bytes.Contains(hay, lit)
			if got := c.containsIn(hay, &scratch); got != want {
				t.Fatalf("containsIn(%q, %q) with %d bytes of room = %v, want %v", hay, lit, room, got, want)
			}
		}
	}
}
