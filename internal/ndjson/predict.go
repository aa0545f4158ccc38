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
	it.clean = false
	p := &it.preds[o%uint(len(it.preds))]
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
	if *p != q {
		*p, it.gen, it.skip = q, it.gen+1, 0 // tokens change: see Skip
	}
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
