package gen

import "math"

// rng is a splitmix64 generator: one add and three xor-multiply rounds per
// 64-bit draw, small enough to inline into the record loop. It is not safe
// for concurrent use; every worker owns one and reseeds it per block.
//
// splitmix64 passes BigCrush and, unlike math/rand/v2's *Rand, costs no
// interface call per draw: rng.next is ~8% of a BenchmarkAppendBlock CPU
// profile.
type rng struct{ s uint64 }

// mix64 is the splitmix64 finalizer, a bijection on uint64.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// blockRNG returns the generator for block b under seed. It is a pure
// function of (seed, b), which is what makes the output independent of the
// number of workers.
func blockRNG(seed uint64, b int64) rng {
	return rng{s: mix64(seed ^ mix64(uint64(b)+0x6a09e667f3bcc909))}
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix64(r.s)
}

// intn returns a number in [0, n) for 0 < n < 1<<32. It uses Lemire's
// multiply-shift without the rejection step; the bias (< n/2^32) does not
// matter for test data.
func (r *rng) intn(n int) int {
	return int((r.next() >> 32) * uint64(n) >> 32)
}

// float returns a number in [0, 1).
func (r *rng) float() float64 {
	return float64(r.next()>>11) * (1.0 / (1 << 53))
}

// norm returns an approximately standard normal number in [-3.47, 3.47]:
// the Irwin-Hall sum of four 16-bit uniforms from a single draw. Tails
// beyond that come from explicit outliers in the callers.
func (r *rng) norm() float64 {
	x := r.next()
	s := x&0xffff + x>>16&0xffff + x>>32&0xffff + x>>48
	return (float64(s)/65536 - 2) * math.Sqrt(3)
}

// pick returns an index drawn from t, a table built by newPickTable.
func (r *rng) pick(t *pickTable) int {
	return int(t[r.next()>>(64-pickBits)])
}

const pickBits = 12

// pickTable maps 12 random bits to an index, so that index i comes up with
// probability close to weights[i]/sum(weights) (resolution 1/4096). Every
// index with a positive weight gets at least one slot.
type pickTable [1 << pickBits]uint16

func newPickTable(weights []float64) *pickTable {
	var sum float64
	for _, w := range weights {
		sum += w
	}
	var t pickTable
	n := len(t)
	// Give each positive weight one slot first, then share the rest.
	pos := 0
	for i, w := range weights {
		if w > 0 {
			t[pos] = uint16(i)
			pos++
		}
	}
	rest := n - pos
	acc := 0.0
	for i, w := range weights {
		acc += w
		end := int(math.Round(acc / sum * float64(rest)))
		for ; pos < n && pos-(n-rest) < end; pos++ {
			t[pos] = uint16(i)
		}
	}
	for ; pos < n; pos++ {
		t[pos] = uint16(len(weights) - 1)
	}
	return &t
}
