//go:build !linux

package fileread

import "fmt"

const mmapSupported = false

func (s *scanner) produceMmap(_ int, in *input) error {
	return fmt.Errorf("%s: mmap is not supported on this platform (use pread): %w", in.name, ErrUnsupported)
}

// Mapping is a whole file mapped read-only; unsupported on this platform.
type Mapping struct{ Bytes []byte }

// MapFile is not supported on this platform.
func MapFile(path string, _ bool) (*Mapping, error) {
	return nil, fmt.Errorf("cannot mmap %q: not supported on this platform: %w", path, ErrUnsupported)
}

// Close does nothing.
func (m *Mapping) Close() error { return nil }
