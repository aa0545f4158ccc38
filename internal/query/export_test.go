package query

// SetMaxSortedSpilled sets maxSortedSpilled for a test and returns a
// function that restores it.
func SetMaxSortedSpilled(n int64) (restore func()) {
	old := maxSortedSpilled
	maxSortedSpilled = n
	return func() { maxSortedSpilled = old }
}

// SetSpillCheckEvery sets spillCheckEvery for a test and returns a
// function that restores it.
func SetSpillCheckEvery(n int) (restore func()) {
	old := spillCheckEvery
	spillCheckEvery = n
	return func() { spillCheckEvery = old }
}

// SetPartialUnfoldedRepeats sets partialUnfoldedRepeats for a test and
// returns a function that restores it.
func SetPartialUnfoldedRepeats(r float64) (restore func()) {
	old := partialUnfoldedRepeats
	partialUnfoldedRepeats = r
	return func() { partialUnfoldedRepeats = old }
}

// SetMaxSortedSpilledGroups sets maxSortedSpilledGroups for a test and
// returns a function that restores it.
func SetMaxSortedSpilledGroups(n int) (restore func()) {
	old := maxSortedSpilledGroups
	maxSortedSpilledGroups = n
	return func() { maxSortedSpilledGroups = old }
}

// SetMaxSortedGroups sets maxSortedGroups for a test and returns a function
// that restores it.
func SetMaxSortedGroups(n int) (restore func()) {
	old := maxSortedGroups
	maxSortedGroups = n
	return func() { maxSortedGroups = old }
}

// SetStatsTopK turns statsProc.topK on or off for a test and returns a
// function that restores it.
func SetStatsTopK(on bool) (restore func()) {
	old := topKEnabled
	topKEnabled = on
	return func() { topKEnabled = old }
}

// TopKSkipped returns how many groups emitting has skipped so far because
// the sort after the stats pipe would drop them.
func TopKSkipped() int64 { return topKSkipped.Load() }
