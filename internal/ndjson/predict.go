package ndjson

import "encoding/binary"

// Key prediction. The lines of a log file mostly share one layout: the
// same keys in the same order. An Iter remembers, for the n-th key of a
// line (its ordinal), the bytes from the end of the previous value to the
// key's closing `":`, such as `,"level":`, and the state before them. When
// the next line has the same bytes there, in the same state, Next takes the
// key without scanning it: the bytes were validated when they were learned
// (the key holds no quote, backslash, control or non-ASCII byte), so the
// comparison proves what the scan would find. Any other key is scanned and
// learned. Two word compares replace the scan, and the key's end no longer
// depends on the bytes loaded, which shortens the chain of dependent loads
// from one field to the next. Measured against the same code without
// prediction: BenchmarkIter/walk +32% (23% fewer instructions), walk+key
// +34% with keyCache.
//
// The prediction only saves work: a mismatch costs a scan, as without it,
// and Next's results never depend on it (TestFastPathMatchesStrict walks
// lines after others that trained the Iter to expect something else).

// Several layouts. A file may interleave lines of a few layouts (services
// with loggers of their own). An Iter keeps numSets (16) sets of predictions,
// one per layout, and predicts each line with the set that predicted the
// line before. When a clean line meets a key its set did not predict, at
// ordinal o, learn looks for another set that predicts the same keys up to
// o and this key at o, and goes on with that set, the line still clean; if
// there is none, the least recently used other set takes this line's keys
// up to o and learns the rest of the line, so that the set of the layout
// it leaves keeps its predictions. Each set has its own gen, unique among
// the Iter's sets, so tokens (KeyToken), Skip requests and cached keys are
// per layout. Next tries the other sets (switchSet) before it scans a
// key it did not predict. BenchmarkIterLayouts, before and after: 2
// layouts 1.63 -> 2.54 GB/s, 8 layouts 1.30 -> 2.33 GB/s, one layout 2.68
// GB/s either way. With 8 sets, 8 layouts reached only 1.97 GB/s: the
// lines that miss a field or carry an extra one are layouts too, and they
// pushed out the sets of the main ones; 32 sets did no better than 16.
// (A table from a line's first bytes to its set, tried as the starting
// guess, cost the one-layout case 8% and did not help.)

// numSets is how many layouts an Iter predicts at once.
const numSets = 16

// predSet is what an Iter knows of one layout.
type predSet struct {
	preds [32]keyPred // by ordinal % 32
	keys  [32]keyCache
	gen   uint64 // changes with preds; unique among an Iter's sets, at least 1
	skip  uint32 // ordinals whose leaves Next passes over in a clean run (see Skip)
	used  uint64 // Iter.clock when last chosen
}

// initSets gives every set a gen of its own and starts with the first.
func (it *Iter) initSets() {
	for i := range it.sets {
		it.gens++
		it.sets[i].gen = it.gens
	}
	it.set = &it.sets[0]
}

// keyPred is the prediction for one ordinal: the 16 bytes from Iter.pos,
// masked to those up to the key's `":` (the key and its punctuation may
// take 16 bytes).
type keyPred struct {
	w0, w1 uint64 // the expected bytes, little-endian, masked
	m0, m1 uint64 // masks of the bytes to compare
	ks, ke int    // the key's contents, relative to Iter.pos
	state  uint8  // Iter.state + 1 before the key; 0: no prediction
}

// learn records the key just scanned as the prediction for ordinal o: it
// started at line[k] (the opening quote) after Next found line[i:k] in state
// st, and its contents end at line[ke], followed by `":`. Keys that do not
// fit, or that follow anything but `,` or the object's '{' (such as
// whitespace or a '}'), leave no prediction. Any key scanned ends the line's
// clean run (see keyCache).
//
// It is kept out of line, like enter.
//
//go:noinline
func (it *Iter) learn(o uint, st uint8, i, k, ke int) {
	cur := it.set
	p := &cur.preds[o%uint(len(cur.preds))]
	s := it.line
	var q keyPred   // no prediction
	n := ke + 2 - i // bytes to compare
	switch {
	case n > 16 || i >= len(s)-16: // see Next
	case st == stateStart && i == 0 && k == 1 && s[0] == '{',
		st == stateAfterValue && k == i+1, // s[i] is ','
		st == stateObjOpen && k == i:
		q.m0, q.m1 = ^uint64(0), 0
		if n < 8 {
			q.m0 = ^uint64(0) >> (64 - 8*n)
		} else {
			q.m1 = ^uint64(0) >> (128 - 8*n)
		}
		q.w0 = binary.LittleEndian.Uint64(s[i:]) & q.m0
		q.w1 = binary.LittleEndian.Uint64(s[i+8:]) & q.m1
		q.ks, q.ke, q.state = k+1-i, ke-i, st+1
	}
	if it.clean && q.state != 0 && o < uint(len(cur.preds)) {
		// A layout no set knows (switchSet found none that predicts this
		// key): the least recently used other set takes it.
		var victim *predSet
		for j := range it.sets {
			if t := &it.sets[j]; t != cur && (victim == nil || t.used < victim.used) {
				victim = t
			}
		}
		copy(victim.preds[:o], cur.preds[:o])
		clear(victim.preds[o+1:])
		victim.preds[o] = q
		it.gens++
		it.clock++
		victim.gen, victim.skip, victim.used = it.gens, 0, it.clock
		it.set = victim
		it.clean = false
		return
	}
	it.clean = false
	if *p != q {
		it.gens++
		*p, cur.gen, cur.skip = q, it.gens, 0 // tokens change: see Skip
	}
}

// switchSet looks, when the current set fails to predict the key at
// ordinal o of a clean line (at line[i:], in it.state), for another set
// that predicts the same keys before o and this key at o, as Next's fast
// path checks it; it makes that set the current one and reports true, or
// reports false. Kept out of line: Next calls it only on a miss.
//
//go:noinline
func (it *Iter) switchSet(o uint, i int) bool {
	if o >= uint(len(it.set.preds)) {
		return false
	}
	s, cur := it.line, it.set
	w0, w1 := binary.LittleEndian.Uint64(s[i:]), binary.LittleEndian.Uint64(s[i+8:])
	for j := range it.sets {
		t := &it.sets[j]
		p := &t.preds[o]
		if t == cur || p.state != it.state+1 || (w0^p.w0)&p.m0|(w1^p.w1)&p.m1 != 0 || !samePrefix(t, cur, o) {
			continue
		}
		it.clock++
		t.used, it.set = it.clock, t
		return true
	}
	return false
}

// samePrefix reports whether sets a and b predict the same keys for the
// ordinals before o.
func samePrefix(a, b *predSet, o uint) bool {
	for j := range o {
		if a.preds[j] != b.preds[j] {
			return false
		}
	}
	return true
}

// keyCache holds the flattened key of a nested leaf ("http.ua"), so that
// Key need not build it again for the same leaf of the next line.
//
// A cached key is valid while the line is clean (Iter.clean: every key so
// far came from a prediction) and the predictions are those it was built
// under (gen). Then the line's keys and the states before them equal those
// of the line that built it, for every ordinal up to this one, and so do
// the objects it is in: a clean run has no '}' (closing an object takes
// seekKey, which only the scanning path calls, or closeAll, which ends the
// walk), so an object is entered exactly before each key in state
// stateObjOpen and never left.
//
// ord only guards against two ordinals sharing an entry: a clean run never
// reaches ordinal 32, whose prediction is ordinal 0's, made in stateStart.
type keyCache struct {
	gen uint64 // Iter.gen when key was built; gen is at least 1 in a clean run
	ord uint   // the leaf's ordinal
	key []byte
}
