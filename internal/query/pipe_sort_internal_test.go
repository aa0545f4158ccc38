package query

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRejectsNumber checks sortProc.rejectsNumber against the sort's own
// order: for a worst kept row w and a value v, rejectsNumber(v) must be
// true only if a row whose first field is formatNumber(v) sorts strictly
// after w (compare, over the first field alone: any other fields could
// only break a tie), and it must be true for a plain number sorting
// strictly after a plain-number worst, or after a worst that is empty
// or starts past '9' in the direction that puts numbers last.
func TestRejectsNumber(t *testing.T) {
	worsts := []string{"NaN", "Inf", "+Inf", "-Inf", "", "abc", "zeta", "1e5", "-1e-7", "12abc",
		"0", "-0.5", "3", "1000000", "2026-01-02T00:00:00Z", "10.0.0.1", "1h", "0x10", "~", "[", "N"}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		worsts = append(worsts, formatNumber(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(12)-4))))
	}
	values := []float64{0, 1, -1, 3, 2.5, -0.5, 1e6, 1e20, 1e21, 1e-7, math.NaN(), math.Inf(1), math.Inf(-1), 1000000, 12}
	for range 500 {
		values = append(values, math.Round(rng.NormFloat64()*1e4)/math.Pow(10, float64(rng.IntN(4))))
	}
	for _, desc := range []bool{false, true} {
		for _, fieldDesc := range []bool{false, true} {
			p := newSortProc(&PipeSort{By: []SortField{{Name: "s", Desc: fieldDesc}}, Desc: desc, Limit: 1}, 0, nil)
			for _, w := range worsts {
				worst := &Row{}
				worst.Set("s", w)
				p.worst = worst
				for _, v := range values {
					got := p.rejectsNumber(v)
					c := compareNatural(formatNumber(v), w)
					if fieldDesc != desc {
						c = -c
					}
					if got && c <= 0 {
						t.Errorf("desc %v, field desc %v: worst %q: rejects %v (%q), which does not sort after it", desc, fieldDesc, w, v, formatNumber(v))
					}
					// Where rejectsNumber must know: v plain, and w plain, empty
					// or past '9'.
					_, wNum := parsePlainNumber(w)
					knowable := plainNumber(v) && (w == "" || w[0] > '9' || wNum && plainNumberText(w))
					if knowable && c > 0 && !got {
						t.Errorf("desc %v, field desc %v: worst %q: keeps %v (%q), which sorts after it", desc, fieldDesc, w, v, formatNumber(v))
					}
				}
			}
		}
	}
}
