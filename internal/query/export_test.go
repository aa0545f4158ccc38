package query

// set sets *p to v for a test and returns a function that restores it.
func set[T any](p *T, v T) (restore func()) {
	old := *p
	*p = v
	return func() { *p = old }
}

// SetMaxSortedSpilled sets maxSortedSpilled for a test; restore undoes it.
func SetMaxSortedSpilled(n int64) (restore func()) { return set(&maxSortedSpilled, n) }

// SetSpillCheckEvery sets spillCheckEvery for a test; restore undoes it.
func SetSpillCheckEvery(n int) (restore func()) { return set(&spillCheckEvery, n) }

// SetPartialUnfoldedRepeats sets partialUnfoldedRepeats for a test;
// restore undoes it.
func SetPartialUnfoldedRepeats(r float64) (restore func()) { return set(&partialUnfoldedRepeats, r) }

// SetMaxSortedSpilledGroups sets maxSortedSpilledGroups for a test;
// restore undoes it.
func SetMaxSortedSpilledGroups(n int) (restore func()) { return set(&maxSortedSpilledGroups, n) }

// SetMaxSortedGroups sets maxSortedGroups for a test; restore undoes it.
func SetMaxSortedGroups(n int) (restore func()) { return set(&maxSortedGroups, n) }

// SetStatsTopK turns statsProc.topK on or off for a test; restore undoes
// it.
func SetStatsTopK(on bool) (restore func()) { return set(&topKEnabled, on) }

// TopKSkipped returns how many groups emitting has skipped so far because
// the sort after the stats pipe would drop them.
func TopKSkipped() int64 { return topKSkipped.Load() }
