package cli

import (
	"os"
	"path/filepath"
	"time"

	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/segment"
)

// storeInputs are the segments spate query reads from spate serve data
// directories: a snapshot of each (segment.OpenSnapshot), so that a query
// run during ingestion reads each acknowledged line once and nothing else,
// minus the segments whose metadata rules them out for the query.
type storeInputs struct {
	tenant segment.Tenant
	pruner *query.Pruner
	// pruneTime: segments may be skipped by time, because the query reads
	// the time from the fields ingestion took it from (no --time-field).
	pruneTime bool
	snaps     []*segment.Snapshot
	files     map[string]storeFile // by input name
	listed    int                  // segments in the snapshots
	skipped   int                  // of them, ruled out by their metadata
}

type storeFile struct {
	snap *segment.Snapshot
	f    *segment.SnapshotFile
}

func newStoreInputs(tenant segment.Tenant, q *query.Query, pruneTime bool) (*storeInputs, error) {
	p, err := query.NewPruner(q)
	if err != nil {
		return nil, err
	}
	return &storeInputs{tenant: tenant, pruner: p, pruneTime: pruneTime, files: map[string]storeFile{}}, nil
}

// add takes a snapshot of the data directory dir and adds the segments
// the query may need, in day and sequence order.
func (s *storeInputs) add(dir string, add func(name string, size int64)) error {
	snap, err := segment.OpenSnapshot(dir, s.tenant)
	if err != nil {
		return err
	}
	s.snaps = append(s.snaps, snap)
	for i := range snap.Files {
		f := &snap.Files[i]
		s.listed++
		if s.skip(f) {
			s.skipped++
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
	return nil
}

// skip reports whether the query cannot match any line of f: none is
// acknowledged yet, or the segment's metadata (or, lacking it, its day)
// puts every line outside the query's time range, or in streams the query
// rules out.
func (s *storeInputs) skip(f *segment.SnapshotFile) bool {
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

// open is fileread.Config.Open: store segments are opened through their
// snapshot (a segment compressed since is read from its .zst) and read up
// to their limit; other inputs are opened as files.
func (s *storeInputs) open(name string) (*os.File, int64, error) {
	if sf, ok := s.files[name]; ok {
		f, err := sf.snap.Open(sf.f)
		return f, sf.f.Limit, err
	}
	f, err := os.Open(name)
	return f, -1, err
}

func (s *storeInputs) close() {
	for _, snap := range s.snaps {
		snap.Close()
	}
}
