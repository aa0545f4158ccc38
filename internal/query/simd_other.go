//go:build !amd64 || purego

package query

// useAVX2 is false: this build has no AVX2 kernels, and the portable
// paths run.
var useAVX2 = false

func countLinesAVX2(p *byte, n int) int {
	panic("BUG: countLinesAVX2 called without AVX2 support")
}

func probeAVX2(p *byte, start, limit int, pr *probes) (pos int, mask uint64) {
	panic("BUG: probeAVX2 called without AVX2 support")
}

func countNewlinesAVX2(p *byte, n int) (count int, flagged bool) {
	panic("BUG: countNewlinesAVX2 called without AVX2 support")
}
