package segindex

import (
	"os"
	"sync"
)

// Opened sidecars are kept between queries: opening one reads and checks
// its table (for 1 GiB of logs, about 1,000 blocks of blooms and columns),
// which took 40% of the time of a trace id lookup when every query opened
// them afresh. OpenShared reuses an opened Index while its file is the same
// (device, inode, size, modification time) and describes the same .zst.

// maxShared caps the sidecars kept open (and mapped) between queries.
const maxShared = 4096

var shared = struct {
	mu sync.Mutex
	m  map[string]*Index
}{m: map[string]*Index{}}

// fileID identifies a file's content as far as stat can tell.
type fileID struct {
	dev, ino    uint64
	size, mtime int64
}

func idOf(fi os.FileInfo) fileID {
	id := fileID{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	id.dev, id.ino = devIno(fi)
	return id
}

// OpenSharedStat is OpenShared for a sidecar the caller has stat'ed (fi)
// but not opened: a sidecar already in the cache, the same file, is
// returned without opening it (one stat per query instead of an open, a
// stat and a close); else open opens it and OpenShared goes on.
func OpenSharedStat(path string, fi os.FileInfo, open func() (*os.File, error), zstSize, zstMtime int64) (*Index, error) {
	if ix := sharedHit(path, idOf(fi), zstSize, zstMtime); ix != nil {
		return ix, nil
	}
	f, err := open()
	if err != nil {
		return nil, err
	}
	return OpenShared(path, f, zstSize, zstMtime)
}

// sharedHit returns the cached Index of path, taken (refs), if it is the
// file id describing the given .zst; else nil.
func sharedHit(path string, id fileID, zstSize, zstMtime int64) *Index {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if ix := shared.m[path]; ix != nil && ix.id == id && ix.ZstSize == zstSize && ix.ZstMtime == zstMtime {
		ix.refs++
		return ix
	}
	return nil
}

// OpenShared is Open through a process-wide cache of opened sidecars,
// keyed by path (which must name the sidecar the same way every time: an
// absolute path). f is the sidecar, opened by the caller; OpenShared takes
// it over. The Index returned must be closed (Close releases it to the
// cache) and not used after.
func OpenShared(path string, f *os.File, zstSize, zstMtime int64) (*Index, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	id := idOf(fi)
	if ix := sharedHit(path, id, zstSize, zstMtime); ix != nil {
		// Fast path: the same file, already checked.
		f.Close()
		return ix, nil
	}
	ix, err := Open(f, zstSize, zstMtime)
	if err != nil {
		return nil, err
	}
	ix.id, ix.shared, ix.refs = id, true, 1
	shared.mu.Lock()
	if old := shared.m[path]; old != nil {
		old.evict()
	} else if len(shared.m) >= maxShared {
		for p, o := range shared.m { // any: a full cache is rare
			o.evict()
			delete(shared.m, p)
			break
		}
	}
	shared.m[path] = ix
	shared.mu.Unlock()
	return ix, nil
}

// evict drops ix from the cache; it is closed once no query holds it.
// Called with shared.mu held.
func (ix *Index) evict() {
	ix.evicted = true
	if ix.refs == 0 {
		ix.close()
	}
}

// release is Close for a shared Index.
func (ix *Index) release() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	ix.refs--
	if ix.refs == 0 && ix.evicted {
		return ix.close()
	}
	return nil
}
