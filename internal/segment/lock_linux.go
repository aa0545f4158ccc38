package segment

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive flock on DIR/.lock, so that two stores (in one
// process or two) never write the same directory. The lock belongs to the
// open file: the kernel drops it when the process dies, so a kill leaves no
// stale lock. unlock releases it by closing the file; the file stays.
func lockDir(root *os.Root) (unlock func() error, err error) {
	f, err := root.OpenFile(lockName, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot open lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("cannot lock %s: %w", lockName, err)
	}
	return f.Close, nil
}

// isLocked reports whether a Store holds DIR's lock now. It takes a shared
// lock for an instant, so it never blocks, and holds nothing after it
// returns.
func isLocked(root *os.Root) (bool, error) {
	f, err := root.Open(lockName)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cannot open lock file: %w", err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return true, nil
		}
		return false, fmt.Errorf("cannot test %s: %w", lockName, err)
	}
	return false, nil // the lock goes with f
}
