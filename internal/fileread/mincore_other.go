//go:build !linux

package fileread

// Residency is only implemented on Linux; elsewhere it reports -1.
func Residency(string) (float64, error) { return -1, nil }
