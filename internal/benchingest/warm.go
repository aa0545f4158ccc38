package benchingest

import (
	"fmt"
	"os"
	"time"
)

// warmPageCache writes size bytes of zeros to a new file in dir (the
// system temp dir when "") and deletes it: the kernel frees the file's
// page-cache pages at once, and the next writes reuse them. It returns how
// long that took. Nothing is synced: the pages are dropped, not written
// back.
func warmPageCache(dir string, size int64) (time.Duration, error) {
	start := time.Now()
	f, err := os.CreateTemp(dir, "spate-bench-warm-")
	if err != nil {
		return 0, fmt.Errorf("cannot warm the page cache: %w", err)
	}
	defer os.Remove(f.Name())
	buf := make([]byte, 1<<20)
	for left := size; left > 0; {
		n := int(min(left, int64(len(buf))))
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return 0, fmt.Errorf("cannot warm the page cache: %w", err)
		}
		left -= int64(n)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("cannot warm the page cache: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		return 0, fmt.Errorf("cannot warm the page cache: %w", err)
	}
	return time.Since(start), nil
}
