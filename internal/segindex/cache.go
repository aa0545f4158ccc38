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
	shared.mu.Lock()
	if ix := shared.m[path]; ix != nil && ix.id == id && ix.ZstSize == zstSize && ix.ZstMtime == zstMtime {
		// Fast path: the same file, already checked.
		ix.refs++
		shared.mu.Unlock()
		f.Close()
		return ix, nil
	}
	shared.mu.Unlock()
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
