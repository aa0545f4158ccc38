package segment

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spate-io/spate/internal/segindex"
)

// recover brings DIR to a consistent state after a crash, kill or clean
// Close, before the writer starts, and returns the plain segments it
// sealed, oldest first, for compression. For each day directory:
//
//   - seg-N.ndjson.zst.tmp is an abandoned compression: removed.
//
//   - seg-N.ndjson beside seg-N.ndjson.zst: the .zst is complete (it is
//     renamed into place only after an fsync), so the plain file is removed.
//
//   - any other seg-N.ndjson was active or sealed: its torn tail, if any, is
//     truncated back to the last '\n' (and logged), and it is sealed. If no
//     complete line is left, it is removed.
//
//   - seg-N.ndjson.zst.idx.tmp is an abandoned sidecar, and a sidecar
//     whose segment is gone is an orphan: both removed. A .zst whose
//     sidecar is missing or does not match it is returned in unindexed
//     (only with Options.IndexLines), to be reindexed.
//
// With a checkpoint (DIR/.checkpoint, see Options.Checkpoint), plain
// segments are first brought back to it: one created after it is removed,
// one it lists as active is cut to the size it gives. The checkpoint is
// returned.
//
// Directories changed are fsynced. The next sequence number is one more
// than the largest found, whatever the file's kind.
func (s *Store) recover() (sealed, unindexed []string, cp *checkpointState, err error) {
	if err := s.migrate(); err != nil {
		return nil, nil, nil, err
	}
	if cp, err = readCheckpoint(s.root); err != nil {
		return nil, nil, nil, err
	}
	days, err := scanDir(s.root)
	if err != nil {
		return nil, nil, nil, err
	}
	var maxSeq uint64
	found := false
	otherVersion, otherVersionErr := 0, error(nil) // sidecars of another version
	for _, d := range days {
		s.w.dirs[d.dir] = true
		s.w.dirs[tenantDirName(d.tenant)] = true
		changed := false
		for i, f := range d.files {
			if !found || f.seq > maxSeq {
				maxSeq, found = f.seq, true
			}
			name := d.dir + "/" + f.name
			switch f.kind {
			case kindTmp:
				if err := s.root.Remove(name); err != nil {
					return nil, nil, nil, fmt.Errorf("cannot remove leftover temporary file: %w", err)
				}
				s.log.Info("removed leftover temporary file", "file", s.path(name))
				changed = true
			case kindPlain:
				// files are sorted by (seq, kind): a .zst follows its .ndjson.
				if i+1 < len(d.files) && d.files[i+1].seq == f.seq && d.files[i+1].kind == kindZstd {
					if err := s.root.Remove(name); err != nil {
						return nil, nil, nil, fmt.Errorf("cannot remove compressed segment's plain copy: %w", err)
					}
					s.log.Info("removed plain segment already compressed", "file", s.path(name))
					changed = true
					continue
				}
				if cp != nil {
					removed, err := s.toCheckpoint(cp, d.dir, f.seq, name)
					if err != nil {
						return nil, nil, nil, err
					}
					if removed {
						changed = true
						continue
					}
				}
				size, err := s.repair(name)
				if err != nil {
					return nil, nil, nil, err
				}
				if size == 0 {
					if err := s.root.Remove(name); err != nil {
						return nil, nil, nil, fmt.Errorf("cannot remove empty segment: %w", err)
					}
					s.log.Info("removed segment without a complete line", "file", s.path(name))
					changed = true
					continue
				}
				s.c.segments.Add(1)
				s.c.segmentBytes.Add(size)
				s.sealMeta(d.dir, f.seq, name, size)
				sealed = append(sealed, name)
			case kindZstd:
				fi, err := s.root.Stat(name)
				if err != nil {
					return nil, nil, nil, fmt.Errorf("cannot stat segment: %w", err)
				}
				s.c.segments.Add(1)
				s.c.segmentBytes.Add(fi.Size())
				if s.o.IndexLines != nil {
					if err := checkIndex(s.root, name); err != nil {
						switch {
						case errors.Is(err, segindex.ErrVersion):
							// Said once for all of them, below: an upgrade
							// finds every sidecar so.
							if otherVersion++; otherVersionErr == nil {
								otherVersionErr = err
							}
						case !errors.Is(err, fs.ErrNotExist):
							s.log.Warn("segment index cannot be used; rebuilding it", "file", s.path(name+idxExt), "err", err)
						}
						unindexed = append(unindexed, name)
					}
				}
			}
		}
		for _, sc := range d.sidecars {
			z, tmp := strings.CutSuffix(sc, extTmp)
			z = strings.TrimSuffix(z, idxExt)
			if !tmp && slices.ContainsFunc(d.files, func(f dirFile) bool { return f.name == z }) {
				continue
			}
			if err := s.root.Remove(d.dir + "/" + sc); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, nil, nil, fmt.Errorf("cannot remove leftover segment index: %w", err)
			}
			changed = true
		}
		// Metadata whose segment is gone.
		for _, seq := range d.metas {
			if !slices.ContainsFunc(d.files, func(f dirFile) bool { return f.seq == seq && f.kind != kindTmp }) {
				s.root.Remove(d.dir + "/" + metaName(seq))
			}
		}
		if changed {
			if err := syncDir(s.root, d.dir); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	if found {
		s.w.nextSeq = maxSeq + 1
	}
	if otherVersion > 0 {
		s.log.Warn("segment indexes of another format version (written by another spate); rebuilding them in the background, queries read those segments' lines until then",
			"segments", otherVersion, "first", otherVersionErr)
	}
	return sealed, unindexed, cp, nil
}

// migrate moves the day directories of the layout before tenants
// (DIR/YYYY-MM-DD) under tenant 0:0's directory (DIR/0-0/YYYY-MM-DD), with
// one rename each, or file by file where 0-0 already has that day (a
// migration cut short). Directories changed are fsynced, so a crash at any
// point leaves every segment in one of the two places, which readers and
// the next Open both accept.
func (s *Store) migrate() error {
	days, err := scanDir(s.root)
	if err != nil {
		return err
	}
	tdir := tenantDirName(Tenant{})
	moved := 0
	for _, d := range days {
		if !d.legacy {
			continue
		}
		if moved == 0 {
			if err := s.root.Mkdir(tdir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("cannot create tenant directory: %w", err)
			}
			if err := syncDir(s.root, "."); err != nil {
				return err
			}
		}
		target := tdir + "/" + d.day
		if err := s.root.Rename(d.dir, target); err != nil {
			// Slow path: the target exists; move the segments one by one.
			if err := s.root.Mkdir(target, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("cannot create day directory: %w", err)
			}
			for _, f := range d.files {
				if err := s.root.Rename(d.dir+"/"+f.name, target+"/"+f.name); err != nil {
					return fmt.Errorf("cannot move segment to its tenant directory: %w", err)
				}
			}
			if err := syncDir(s.root, target); err != nil {
				return err
			}
			s.root.Remove(d.dir) // only if empty; other files stay
		}
		moved++
	}
	if moved == 0 {
		return nil
	}
	if err := syncDir(s.root, tdir); err != nil {
		return err
	}
	if err := syncDir(s.root, "."); err != nil {
		return err
	}
	s.log.Info("moved day directories under the default tenant's directory", "days", moved, "dir", s.path(tdir))
	return nil
}

// sealMeta writes the sealed metadata of a plain segment Open found
// (size bytes after repair). The summary of the segment's last metadata is
// kept when that metadata covers exactly these bytes; otherwise the time
// range and streams are unknown and the lines are counted. Failures are
// logged: readers then read the whole segment.
func (s *Store) sealMeta(dir string, seq uint64, name string, size int64) {
	var sum summary
	if m, err := readMeta(s.root, dir, seq); err == nil && m.Size == size {
		sum = fromMeta(m)
	} else {
		n, err := countLines(s.root, name, size)
		if err != nil {
			s.log.Warn("cannot count the lines of a recovered segment", "file", s.path(name), "err", err)
		}
		sum = summary{lines: n, timeUnknown: true, streamsUnknown: true}
	}
	if err := writeMeta(s.root, dir, seq, sum.meta(size, true)); err != nil {
		s.log.Warn("cannot write segment metadata", "file", s.path(name), "err", err)
	}
}

// countLines counts the '\n' in the first size bytes of name.
func countLines(root *os.Root, name string, size int64) (int64, error) {
	f, err := root.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 256<<10)
	var n int64
	for off := int64(0); off < size; {
		p := buf[:min(int64(len(buf)), size-off)]
		if _, err := f.ReadAt(p, off); err != nil {
			return n, err
		}
		n += int64(bytes.Count(p, newline))
		off += int64(len(p))
	}
	return n, nil
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

// toCheckpoint brings the plain segment name (number seq, in dir) back to
// checkpoint cp: it removes it, with its metadata, if it was created after
// cp, or cuts it to the size cp gives it, fsynced. It reports whether it
// removed the file.
func (s *Store) toCheckpoint(cp *checkpointState, dir string, seq uint64, name string) (removed bool, err error) {
	fi, err := s.root.Stat(name)
	if err != nil {
		return false, fmt.Errorf("cannot stat segment: %w", err)
	}
	remove, keep, short := cp.applyCheckpoint(name, seq, fi.Size())
	switch {
	case remove:
		if err := s.root.Remove(name); err != nil {
			return false, fmt.Errorf("cannot remove segment written after the checkpoint: %w", err)
		}
		s.root.Remove(dir + "/" + metaName(seq))
		s.log.Info("removed segment written after the last checkpoint", "file", s.path(name), "size", fi.Size())
		return true, nil
	case short:
		s.log.Error("segment is shorter than the checkpoint says: acknowledged lines are missing", "file", s.path(name), "size", fi.Size(), "checkpoint_size", cp.Active[name])
	case keep < fi.Size():
		f, err := s.root.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			return false, fmt.Errorf("cannot open segment: %w", err)
		}
		err = f.Truncate(keep)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return false, fmt.Errorf("cannot cut segment %s back to the checkpoint: %w", name, err)
		}
		s.log.Info("cut segment back to the last checkpoint", "file", s.path(name), "old_size", fi.Size(), "new_size", keep)
	}
	return false, nil
}

// startCheckpoints starts keeping checkpoints after recovery: it rewrites
// DIR/.checkpoint as one record (no active segment: Open sealed them all)
// with cp's marks, and makes them the store's marks.
func (s *Store) startCheckpoints(cp *checkpointState) error {
	st := checkpointState{NextSeq: s.w.nextSeq, Active: map[string]int64{}, Marks: map[string]int64{}}
	if cp != nil {
		st.Marks = marksCopy(cp.Marks)
	}
	l, err := rewriteCheckpoint(s.root, &st)
	if err != nil {
		return err
	}
	s.w.ckpt = l
	s.checkpointed = true
	s.w.ckState.Active = map[string]int64{}
	s.marks = st.Marks
	return nil
}
