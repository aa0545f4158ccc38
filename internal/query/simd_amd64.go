//go:build amd64 && !purego

package query

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernels of simd_amd64.s. Tests turn it off to
// check the portable paths.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasPOPCNT

// countLinesAVX2 returns how many newlines of p[:n] end a non-empty line
// ("" and "\r" are empty), 64 bytes per step; n must be a positive
// multiple of 64, and p[-2] and p[-1] must be readable.
//
//go:noescape
func countLinesAVX2(p *byte, n int) int

// probeAVX2 scans candidate starts from start to limit (inclusive) in
// blocks of 64 and returns the first block where some start matches all
// literal probes or all escape probes of pr, with its mask (bit k: start
// pos+k); with no match it returns the first unscanned start and mask 0.
// Every load p[s+off] must be in bounds for s <= limit+63.
//
//go:noescape
func probeAVX2(p *byte, start, limit int, pr *probes) (pos int, mask uint64)

// countNewlinesAVX2 returns how many newlines p[:n] holds and whether the
// byte before one of them is in 0x08..0x0F (so that the line it ends may
// be empty), 64 bytes per step; n must be a positive multiple of 64, and
// p[-1] must be readable.
//
//go:noescape
func countNewlinesAVX2(p *byte, n int) (count int, flagged bool)
