package query

// SetMaxSortedSpilled sets maxSortedSpilled for a test and returns a
// function that restores it.
func SetMaxSortedSpilled(n int64) (restore func()) {
	old := maxSortedSpilled
	maxSortedSpilled = n
	return func() { maxSortedSpilled = old }
}

// SetMaxSortedSpilledGroups sets maxSortedSpilledGroups for a test and
// returns a function that restores it.
func SetMaxSortedSpilledGroups(n int) (restore func()) {
	old := maxSortedSpilledGroups
	maxSortedSpilledGroups = n
	return func() { maxSortedSpilledGroups = old }
}
