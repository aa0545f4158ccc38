//go:build !linux

package benchio

import (
	"fmt"
	"io"
	"os"
)

// cacheControl reports whether Evict and Residency work on this platform.
const cacheControl = false

// Evict is only implemented on Linux.
func Evict(path string) error {
	return fmt.Errorf("cannot evict %q: page cache control is only implemented on Linux", path)
}

// Warm reads path once so that its pages are in the page cache.
func Warm(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot open input: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(io.Discard, f); err != nil {
		return fmt.Errorf("cannot read %q: %w", path, err)
	}
	return nil
}
