//go:build !linux

package segment

import "os"

// lockDir is only implemented on Linux; elsewhere nothing stops two stores
// from opening the same directory.
func lockDir(*os.Root) (unlock func() error, err error) {
	return func() error { return nil }, nil
}
