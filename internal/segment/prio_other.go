//go:build !linux

package segment

// lowerPriority is only implemented on Linux; elsewhere compression runs
// at normal priority.
func lowerPriority() {}
