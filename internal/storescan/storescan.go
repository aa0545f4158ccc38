// Package storescan picks the segments of spate serve data directories that a
// query reads: a snapshot of each directory (segment.OpenSnapshot), so that a
// query run during ingestion reads each acknowledged line once and nothing
// else, minus the segments whose metadata rules them out for the query.
package storescan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/segindex"
	"github.com/spate-io/spate/internal/segment"
)

// Inputs are the segments one query reads from one or more data directories.
// Its methods are not safe for concurrent use, except Open, which the read
// layer calls from its workers once Add is done.
type Inputs struct {
	tenant segment.Tenant
	pruner *query.Pruner
	// pruneTime: segments may be skipped by time, because the query reads
	// the time from the fields ingestion took it from (no --time-field).
	pruneTime bool
	snaps     []*segment.Snapshot
	files     map[string]storeFile // by input name
	// indexes are the sidecars opened by Index, by input name (nil: none
	// usable); guarded by mu, as workers may ask concurrently.
	mu      sync.Mutex
	indexes map[string]*segindex.Index
	// unusable counts the sidecars that exist but could not be used
	// (another version, damaged, stale), first's error the first's.
	unusable int
	first    error
	// Listed counts the segments in the snapshots, Skipped those of them
	// ruled out by their metadata.
	Listed, Skipped int
}

type storeFile struct {
	snap *segment.Snapshot
	f    *segment.SnapshotFile
}

// New returns the inputs of q in tenant's segments. pruneTime says segments
// may be skipped by time: the query reads the time from the fields ingestion
// took it from (spate query without --time-field; always over HTTP).
func New(tenant segment.Tenant, q *query.Query, pruneTime bool) (*Inputs, error) {
	p, err := query.NewPruner(q)
	if err != nil {
		return nil, err
	}
	return &Inputs{tenant: tenant, pruner: p, pruneTime: pruneTime, files: map[string]storeFile{}}, nil
}

// Add takes a snapshot of the data directory dir and calls add with each
// segment the query may need, in day and sequence order: its input name and
// size (the acknowledged bytes; for a compressed segment, the size of the
// .zst file).
func (s *Inputs) Add(dir string, add func(name string, size int64)) error {
	snap, err := segment.OpenSnapshot(dir, s.tenant)
	if err != nil {
		return err
	}
	s.AddSnapshot(dir, snap, add)
	return nil
}

// AddSnapshot is Add with a snapshot of dir the caller took (of the
// Inputs' tenant); Close closes it.
func (s *Inputs) AddSnapshot(dir string, snap *segment.Snapshot, add func(name string, size int64)) {
	s.snaps = append(s.snaps, snap)
	for i := range snap.Files {
		f := &snap.Files[i]
		s.Listed++
		if s.skip(f) {
			s.Skipped++
			continue
		}
		name := filepath.Join(dir, filepath.FromSlash(f.Path))
		s.files[name] = storeFile{snap, f}
		size := f.Limit
		if size < 0 {
			if fi, err := os.Stat(name); err == nil {
				size = fi.Size()
			}
		}
		add(name, size)
	}
}

// skip reports whether the query cannot match any line of f: none is
// acknowledged yet, or the segment's metadata (or, lacking it, its day)
// puts every line outside the query's time range, or in streams the query
// rules out.
func (s *Inputs) skip(f *segment.SnapshotFile) bool {
	if f.Limit == 0 {
		return true
	}
	m := f.Meta
	if s.pruneTime {
		// The metadata's time range, or else the whole day.
		var lo, hi int64
		known := m != nil && m.HasTime
		if known {
			lo, hi = m.MinTime, m.MaxTime
		} else if day, err := time.Parse(segment.DayLayout, f.Day); err == nil {
			lo, hi, known = day.UnixNano(), day.Add(24*time.Hour).UnixNano()-1, true
		}
		if known && s.pruner.SkipTimes(lo, hi) {
			return true
		}
	}
	if m != nil && m.StreamsKnown && s.pruner.HasStreams() {
		for _, st := range m.Streams {
			if !s.pruner.SkipStream(st) {
				return false
			}
		}
		return len(m.Streams) > 0
	}
	return false
}

// Open is fileread.Config.Open: store segments are opened through their
// snapshot (a segment compressed since is read from its .zst) and read up
// to their limit; other inputs are opened as files.
func (s *Inputs) Open(name string) (*os.File, int64, error) {
	if sf, ok := s.files[name]; ok {
		f, err := sf.snap.Open(sf.f)
		return f, sf.f.Limit, err
	}
	f, err := os.Open(name)
	return f, -1, err
}

// Index returns the sidecar index of the segment name (an input Add gave),
// or nil when it has none that matches it: the query then reads the
// segment. Safe for concurrent use; the index stays open until Close.
func (s *Inputs) Index(name string) *segindex.Index {
	if s == nil {
		return nil
	}
	sf, ok := s.files[name]
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ix, ok := s.indexes[name]; ok {
		return ix
	}
	ix, err := sf.snap.OpenIndex(sf.f)
	if err != nil {
		ix = nil
		if !errors.Is(err, fs.ErrNotExist) {
			if s.unusable++; s.first == nil {
				s.first = fmt.Errorf("%s: %w", sf.f.Path, err)
			}
		}
	}
	if s.indexes == nil {
		s.indexes = map[string]*segindex.Index{}
	}
	s.indexes[name] = ix
	return ix
}

// UnusableIndexes returns how many segments had a sidecar that Index
// could not use (of another version, damaged or stale: their lines were
// read instead), and the first one's error.
func (s *Inputs) UnusableIndexes() (int, error) {
	if s == nil {
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unusable, s.first
}

// Holds reports whether every one of names is a segment Add gave (never,
// for a nil s).
func (s *Inputs) Holds(names []string) bool {
	if s == nil {
		return false
	}
	for _, n := range names {
		if _, ok := s.files[n]; !ok {
			return false
		}
	}
	return true
}

// Snapshots is the number of data directories added.
func (s *Inputs) Snapshots() int { return len(s.snaps) }

// Close releases the snapshots. The inputs must not be opened after.
func (s *Inputs) Close() {
	for _, ix := range s.indexes {
		if ix != nil {
			ix.Close()
		}
	}
	for _, snap := range s.snaps {
		snap.Close()
	}
}
