package segment

import (
	"os"
	"sync"
	"time"
)

// scanCache keeps scanDir's answer for each data directory that List and
// OpenSnapshot read, so that a query on a store that has not changed
// costs a stat of each directory instead of reading them all: on a store
// of a few segments, reading the directories was a third of a small
// query's CPU.
//
// A directory's modification time changes whenever an entry is created,
// removed or renamed in it, which is how every segment, metadata file and
// sidecar comes and goes (segments are sealed, compressed and replaced by
// rename; see the package doc). An answer is reused only while the root,
// every tenant directory and every day directory it read have the
// modification times they had when it was read, and only if each of
// those was at least racyMargin older than the read: a file system
// stamps times from a coarse clock (a jiffy on ext4, 2 s on FAT), so a
// change made in the same tick as the stamp seen could leave it equal.
// A store being written changes its day directory all the time and is
// simply read again. Entry contents are not cached: callers stat every
// segment, whose size and time they need anyway.
var scanCache = struct {
	mu sync.Mutex
	m  map[string]*scanEntry // by absolute data directory
}{m: map[string]*scanEntry{}}

// racyMargin is how much older than the read every directory must be for
// a scan to be reused.
const racyMargin = 2 * time.Second

// maxScanEntries caps scanCache; past it the cache is emptied (a process
// reads one or a few data directories).
const maxScanEntries = 64

// scanEntry is one cached scan.
type scanEntry struct {
	days []dayDir // read-only once cached
	dirs []dirStamp
}

// dirStamp is a directory read by a scan, relative to the data directory,
// and its modification time then (Unix ns).
type dirStamp struct {
	name  string
	mtime int64
}

// scanDirCached is scanDir for the data directory abs, open as root,
// reusing the last scan of abs while it is current (see scanCache). The
// result is shared: callers must not modify it.
func scanDirCached(root *os.Root, abs string) ([]dayDir, error) {
	scanCache.mu.Lock()
	e := scanCache.m[abs]
	scanCache.mu.Unlock()
	if e != nil && e.current(root) {
		return e.days, nil
	}
	start := time.Now().UnixNano()
	var dirs []dirStamp
	days, err := scanDirStamped(root, &dirs)
	if err != nil {
		return nil, err
	}
	keep := true
	for _, d := range dirs {
		keep = keep && d.mtime <= start-int64(racyMargin)
	}
	scanCache.mu.Lock()
	defer scanCache.mu.Unlock()
	switch {
	case keep:
		if len(scanCache.m) >= maxScanEntries {
			clear(scanCache.m)
		}
		scanCache.m[abs] = &scanEntry{days: days, dirs: dirs}
	case e != nil && scanCache.m[abs] == e:
		delete(scanCache.m, abs) // stale, and the new scan too recent to keep
	}
	return days, nil
}

// current reports whether every directory e read still has the
// modification time it had.
func (e *scanEntry) current(root *os.Root) bool {
	for _, d := range e.dirs {
		fi, err := root.Stat(d.name)
		if err != nil || !fi.IsDir() || fi.ModTime().UnixNano() != d.mtime {
			return false
		}
	}
	return true
}
