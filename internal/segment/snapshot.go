package segment

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spate-io/spate/internal/segindex"
)

// Snapshot is a view of one tenant's segments for readers, such as `spate
// query DIR` and the query API, that may run while a Store writes the
// directory: it lists every segment once and says how much of each to
// read, so that a reader sees only acknowledged lines, never a line twice,
// never a temporary file, and never fewer lines than an earlier snapshot.
//
// The rules (see OpenSnapshot): a segment is read up to the acknowledged
// size its metadata records when a Store has the directory open (an active
// segment grows past it while it is read), and up to its last complete
// line otherwise (after a crash the metadata may lag). A plain segment
// compressed and removed between the listing and the opening is read from
// its .zst. A Snapshot holds the directory open (os.Root): Close it.
type Snapshot struct {
	root *os.Root
	dir  string // absolute
	// days are the day directories opened as roots of their own, by path
	// relative to root: a file is then opened, stat'ed or read by its
	// name, one system call, where a path through root walks it.
	mu   sync.Mutex
	days map[string]*os.Root
	// Live reports that a Store had the directory open when the snapshot
	// was taken.
	Live bool
	// Files are the tenant's segments in day, then sequence order.
	Files []SnapshotFile
}

// SnapshotFile is one segment of a Snapshot.
type SnapshotFile struct {
	Day        string
	Seq        uint64
	Path       string // relative to the directory, as listed: "0-0/2026-11-22/seg-N.ndjson[.zst]"
	Compressed bool   // Path is a .zst
	// Limit is how many bytes of the segment's lines (decompressed) to
	// read; they end with a whole line. -1 means all of it (a .zst holds
	// whole lines only).
	Limit int64
	// Meta is the segment's metadata, when it is known to describe exactly
	// the bytes to read; nil otherwise (read the segment, prune nothing).
	Meta *Meta
}

// OpenSnapshot lists the segments of tenant t under dir. It takes no lock
// and changes nothing: it tests whether a Store holds the directory's lock,
// lists the files (List's rules), and reads each segment's metadata (and,
// for plain segments no Store is writing, the tail to find the last
// complete line). A plain segment of a live store without metadata has no
// acknowledged line yet and is left out.
func OpenSnapshot(dir string, t Tenant) (*Snapshot, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open segment directory: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		root.Close()
		return nil, err
	}
	s := &Snapshot{root: root, dir: abs, days: map[string]*os.Root{}}
	if s.Live, err = isLocked(root); err != nil {
		s.Close()
		return nil, fmt.Errorf("cannot read segment directory %q: %w", dir, err)
	}
	files, err := list(root, dir, abs, s.dayRoot)
	if err != nil {
		s.Close()
		return nil, err
	}
	for _, f := range files {
		if f.Tenant != t {
			continue
		}
		sf, ok, err := s.file(f)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("cannot read segment directory %q: %w", dir, err)
		}
		if ok {
			s.Files = append(s.Files, sf)
		}
	}
	return s, nil
}

// file applies the reading rules to one listed segment.
func (s *Snapshot) file(f File) (SnapshotFile, bool, error) {
	sf := SnapshotFile{Day: f.Day, Seq: f.Seq, Path: f.Path, Compressed: f.Compressed, Limit: -1}
	dr, _, err := s.split(f.Path)
	if err != nil {
		return sf, false, err
	}
	key := metaKey{path: s.dir + "/" + f.Path, size: f.Size, mtime: f.Mtime}
	var m *Meta
	if f.Compressed {
		m = sealedMetas.get(key)
	}
	if m == nil {
		m, err = readMeta(dr, "", f.Seq)
		if err != nil && !errors.Is(err, errNoMeta) {
			return sf, false, err
		}
		if f.Compressed && m != nil && m.Sealed {
			sealedMetas.put(key, m)
		}
	}
	switch {
	case f.Compressed:
		if m != nil && m.Sealed {
			sf.Limit, sf.Meta = m.Size, m
		}
	case s.Live:
		if m == nil {
			return sf, false, nil
		}
		sf.Limit, sf.Meta = m.Size, m
	default:
		end, err := s.lastLineEnd(f)
		if err != nil {
			return sf, false, err
		}
		sf.Limit = end
		if m != nil && m.Size == end {
			sf.Meta = m
		}
	}
	return sf, true, nil
}

// sealedMetas keeps the metadata of compressed segments between
// snapshots: it never changes once the .zst exists, and reading it took
// an open, a read and a close per segment per query. An entry holds only
// while the .zst has the size and modification time it had when the
// metadata was read (a rewritten segment is read afresh). The Metas are
// shared: readers must not change them.
var sealedMetas = metaCache{m: map[metaKey]*Meta{}}

// maxSealedMetaBytes caps sealedMetas (its keys and Metas, streams
// included, roughly); past it, it starts over.
const maxSealedMetaBytes = 32 << 20

type metaKey struct {
	path        string // absolute path of the .zst
	size, mtime int64
}

type metaCache struct {
	mu    sync.Mutex
	m     map[metaKey]*Meta
	bytes int // about what m holds
}

// metaBytes is about the memory k and m hold.
func metaBytes(k metaKey, m *Meta) int {
	n := 200 + len(k.path)
	for _, st := range m.Streams {
		n += 16 + len(st)
	}
	return n
}

func (c *metaCache) get(k metaKey) *Meta {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *metaCache) put(k metaKey, m *Meta) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := metaBytes(k, m)
	if c.bytes+n > maxSealedMetaBytes {
		clear(c.m)
		c.bytes = 0
	}
	c.m[k] = m
	c.bytes += n
}

// lastLineEnd returns the size of a plain segment's complete lines.
func (s *Snapshot) lastLineEnd(f File) (int64, error) {
	fh, err := s.open(f.Path, false)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return 0, err
	}
	return lastLineEnd(fh, fi.Size())
}

// Open opens f for reading: its plain file, or, if that was compressed and
// removed since the listing, its .zst (the caller tells them apart by the
// content: a .zst starts with zstd's magic number). Read at most f.Limit
// bytes of its lines.
func (s *Snapshot) Open(f *SnapshotFile) (*os.File, error) {
	return s.open(f.Path, f.Compressed)
}

func (s *Snapshot) open(path string, compressed bool) (*os.File, error) {
	dr, name, err := s.split(path)
	if err != nil {
		return nil, err
	}
	fh, err := dr.Open(name)
	if errors.Is(err, fs.ErrNotExist) && !compressed {
		// Compressed and removed since the listing.
		return dr.Open(strings.TrimSuffix(name, extPlain) + extZstd)
	}
	return fh, err
}

// dayRoot returns the day directory dir (relative to the snapshot's
// directory) open as a root, opening it on first use. Safe for concurrent
// use.
func (s *Snapshot) dayRoot(dir string) (*os.Root, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.days[dir]; ok {
		return r, nil
	}
	r, err := s.root.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	s.days[dir] = r
	return r, nil
}

// split returns the root of a listed segment path's day directory and the
// file's name in it.
func (s *Snapshot) split(path string) (*os.Root, string, error) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return s.root, path, nil
	}
	dr, err := s.dayRoot(path[:i])
	return dr, path[i+1:], err
}

// OpenIndex opens the sidecar index of f (see package segindex), checked
// against the .zst it describes: that of a compressed segment, or of a
// plain one compressed since the listing. It fails (wrapping
// fs.ErrNotExist for a segment without one) when there is no usable
// sidecar; the caller then reads the segment itself.
func (s *Snapshot) OpenIndex(f *SnapshotFile) (*segindex.Index, error) {
	zpath := f.Path
	if !f.Compressed {
		zpath = strings.TrimSuffix(f.Path, extPlain) + extZstd
	}
	dr, zname, err := s.split(zpath)
	if err != nil {
		return nil, err
	}
	ix, err := openSidecar(dr, zname, filepath.Join(s.dir, zpath+idxExt))
	if err != nil {
		return nil, err
	}
	if f.Limit >= 0 && ix.RawSize != f.Limit {
		ix.Close()
		return nil, fmt.Errorf("index covers %d bytes of lines, the segment %d: %w", ix.RawSize, f.Limit, segindex.ErrStale)
	}
	return ix, nil
}

// Close releases the directory.
func (s *Snapshot) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for dir, r := range s.days {
		r.Close()
		delete(s.days, dir)
	}
	return s.root.Close()
}
