package segment

import (
	"fmt"
	"os"
	"path/filepath"
)

// recover brings DIR to a consistent state after a crash, kill or clean
// Close, before the writer starts, and returns the plain segments it
// sealed, oldest first, for compression. For each day directory:
//
//   - seg-N.ndjson.zst.tmp is an abandoned compression: removed.
//   - seg-N.ndjson beside seg-N.ndjson.zst: the .zst is complete (it is
//     renamed into place only after an fsync), so the plain file is removed.
//   - any other seg-N.ndjson was active or sealed: its torn tail, if any, is
//     truncated back to the last '\n' (and logged), and it is sealed. If no
//     complete line is left, it is removed.
//
// Directories changed are fsynced. The next sequence number is one more
// than the largest found, whatever the file's kind.
func (s *Store) recover() (sealed []string, err error) {
	days, err := scanDir(s.root)
	if err != nil {
		return nil, err
	}
	var maxSeq uint64
	found := false
	for _, d := range days {
		s.w.dayDirs[d.day] = true
		changed := false
		for i, f := range d.files {
			if !found || f.seq > maxSeq {
				maxSeq, found = f.seq, true
			}
			name := filepath.Join(d.day, f.name)
			switch f.kind {
			case kindTmp:
				if err := s.root.Remove(name); err != nil {
					return nil, fmt.Errorf("cannot remove leftover temporary file: %w", err)
				}
				s.log.Info("removed leftover temporary file", "file", s.path(name))
				changed = true
			case kindPlain:
				// files are sorted by (seq, kind): a .zst follows its .ndjson.
				if i+1 < len(d.files) && d.files[i+1].seq == f.seq && d.files[i+1].kind == kindZstd {
					if err := s.root.Remove(name); err != nil {
						return nil, fmt.Errorf("cannot remove compressed segment's plain copy: %w", err)
					}
					s.log.Info("removed plain segment already compressed", "file", s.path(name))
					changed = true
					continue
				}
				size, err := s.repair(name)
				if err != nil {
					return nil, err
				}
				if size == 0 {
					if err := s.root.Remove(name); err != nil {
						return nil, fmt.Errorf("cannot remove empty segment: %w", err)
					}
					s.log.Info("removed segment without a complete line", "file", s.path(name))
					changed = true
					continue
				}
				s.c.segments.Add(1)
				s.c.segmentBytes.Add(size)
				sealed = append(sealed, name)
			case kindZstd:
				fi, err := s.root.Stat(name)
				if err != nil {
					return nil, fmt.Errorf("cannot stat segment: %w", err)
				}
				s.c.segments.Add(1)
				s.c.segmentBytes.Add(fi.Size())
			}
		}
		if changed {
			if err := syncDir(s.root, d.day); err != nil {
				return nil, err
			}
		}
	}
	if found {
		s.w.nextSeq = maxSeq + 1
	}
	return sealed, nil
}

// repair truncates the plain segment name back to its last complete line,
// fsyncs it if it changed, and returns its new size.
func (s *Store) repair(name string) (int64, error) {
	f, err := s.root.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("cannot open segment: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("cannot stat segment: %w", err)
	}
	size := fi.Size()
	end, err := lastLineEnd(f, size)
	if err != nil {
		return 0, fmt.Errorf("cannot read segment %s: %w", name, err)
	}
	if end == size {
		return size, nil
	}
	if err := f.Truncate(end); err != nil {
		return 0, fmt.Errorf("cannot truncate torn tail of segment %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("cannot sync segment %s: %w", name, err)
	}
	s.log.Warn("truncated torn segment tail", "file", s.path(name), "old_size", size, "new_size", end)
	return end, nil
}
