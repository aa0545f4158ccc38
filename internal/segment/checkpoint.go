package segment

// Checkpoints make a store's content and a caller's position in its source
// (a Kafka partition's next offset, say) one atomic unit: see Options.
// Checkpoint and the package doc ("Checkpoints").
//
// DIR/.checkpoint is a log of records, each written after its batch's
// segments are fsynced and fsynced itself (SyncBatch) before the batch is
// acknowledged:
//
//	record  = length uint32 LE | crc32c(payload) uint32 LE | payload
//	payload = JSON checkpointState
//
// The file starts with checkpointMagic. Reading stops at the first record
// that is short or has a wrong checksum (a write cut by a crash): the last
// complete record is the checkpoint. The log is rewritten as one record
// (through a .tmp, fsynced and renamed) at Open and when it grows past
// checkpointMaxBytes.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"maps"
	"os"
)

const (
	checkpointName     = ".checkpoint"
	checkpointMagic    = "spate-checkpoint-1\n"
	checkpointMaxBytes = 4 << 20
	// maxCheckpointRecord bounds one record, against a corrupt length.
	maxCheckpointRecord = 16 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Mark is a caller's position in its source, stored atomically with the
// lines of the request that carries it: Store.Marks returns, after any
// crash, exactly the marks of the acknowledged requests, and the store
// holds exactly their lines. Later marks of the same Key replace earlier
// ones. For Kafka, Key is "topic/partition" and Value the next offset to
// read.
type Mark struct {
	Key   string
	Value int64
}

// checkpointState is one checkpoint: what the store held when a batch was
// acknowledged.
type checkpointState struct {
	// NextSeq is the sequence number the next new segment takes: segments
	// numbered from it on were created after the checkpoint.
	NextSeq uint64 `json:"next_seq"`
	// Active maps each segment open for writing (path relative to DIR) to
	// its size: bytes after that were written after the checkpoint.
	Active map[string]int64 `json:"active"`
	// Marks are the marks of every acknowledged request, latest per key.
	Marks map[string]int64 `json:"marks"`
}

// checkpointLog is the open checkpoint file; only the writer goroutine
// touches it once the store is open.
type checkpointLog struct {
	f    *os.File
	size int64
	buf  []byte
}

// readCheckpoint returns the last complete checkpoint in DIR, or nil and
// no error when there is no checkpoint file.
func readCheckpoint(root *os.Root) (*checkpointState, error) {
	data, err := root.ReadFile(checkpointName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read checkpoint: %w", err)
	}
	return decodeCheckpoint(data)
}

// decodeCheckpoint returns the last complete record of a checkpoint log.
// A log without one (only a magic, or a first record cut short) is an
// error: a checkpoint file is only created with a complete record.
func decodeCheckpoint(data []byte) (*checkpointState, error) {
	rest, ok := bytes.CutPrefix(data, []byte(checkpointMagic))
	if !ok {
		return nil, fmt.Errorf("%s is not a checkpoint file (no %q header)", checkpointName, checkpointMagic[:len(checkpointMagic)-1])
	}
	var last []byte
	for len(rest) >= 8 {
		n := binary.LittleEndian.Uint32(rest)
		sum := binary.LittleEndian.Uint32(rest[4:])
		if n > maxCheckpointRecord || int(n) > len(rest)-8 {
			break
		}
		p := rest[8 : 8+n]
		if crc32.Checksum(p, castagnoli) != sum {
			break
		}
		last, rest = p, rest[8+n:]
	}
	if last == nil {
		return nil, fmt.Errorf("%s holds no complete checkpoint", checkpointName)
	}
	var st checkpointState
	if err := json.Unmarshal(last, &st); err != nil {
		return nil, fmt.Errorf("cannot decode checkpoint in %s: %w", checkpointName, err)
	}
	return &st, nil
}

// appendRecord appends st as one record to dst.
func appendRecord(dst []byte, st *checkpointState) []byte {
	p, err := json.Marshal(st)
	if err != nil {
		panic(err) // maps of strings to integers always marshal
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(p)))
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(p, castagnoli))
	return append(dst, p...)
}

// rewriteCheckpoint replaces DIR/.checkpoint with a log of one record,
// st, through a fsynced .tmp and a rename, and returns it open for
// appending.
func rewriteCheckpoint(root *os.Root, st *checkpointState) (*checkpointLog, error) {
	tmp := checkpointName + extTmp
	data := appendRecord([]byte(checkpointMagic), st)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot create checkpoint: %w", err)
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, checkpointName)
	}
	if err == nil {
		err = syncDir(root, ".")
	}
	if err != nil {
		root.Remove(tmp)
		return nil, fmt.Errorf("cannot write checkpoint: %w", err)
	}
	f, err = root.OpenFile(checkpointName, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot open checkpoint: %w", err)
	}
	return &checkpointLog{f: f, size: int64(len(data))}, nil
}

// append appends st to the log and, with sync, fsyncs it. On an error it
// truncates the log back (a record cut in the middle would hide every
// later one) and reports whether that worked: if not, the log may end in
// a partial record, and nothing more may be appended to it.
func (l *checkpointLog) append(st *checkpointState, sync bool) (intact bool, err error) {
	l.buf = appendRecord(l.buf[:0], st)
	n, err := l.f.Write(l.buf)
	if err == nil && sync {
		err = l.f.Sync()
	}
	if err != nil {
		if n > 0 {
			if terr := l.f.Truncate(l.size); terr != nil {
				return false, fmt.Errorf("cannot write checkpoint: %w", err)
			}
		}
		return true, fmt.Errorf("cannot write checkpoint: %w", err)
	}
	l.size += int64(n)
	return true, nil
}

// close closes the log file.
func (l *checkpointLog) close() error { return l.f.Close() }

// applyCheckpoint returns how recovery treats the plain segment name
// (path relative to DIR), number seq, of size bytes, under checkpoint cp:
// remove it (created after the checkpoint), or cut it to keep bytes
// (keep == size: leave it as it is). short reports a segment smaller than
// the checkpoint says: acknowledged lines are missing (a disk that lost
// fsynced data), which recovery can only log.
func (cp *checkpointState) applyCheckpoint(name string, seq uint64, size int64) (remove bool, keep int64, short bool) {
	if seq >= cp.NextSeq {
		return true, 0, false
	}
	want, ok := cp.Active[name]
	if !ok {
		return false, size, false // sealed before the checkpoint: complete
	}
	if size < want {
		return false, size, true
	}
	return false, want, false
}

// marksCopy returns a copy of m, never nil.
func marksCopy(m map[string]int64) map[string]int64 {
	c := make(map[string]int64, len(m))
	maps.Copy(c, m)
	return c
}

// Marks returns the marks of every request acknowledged so far, latest
// per key, including those recovered at Open: after a crash, exactly the
// marks of the requests whose lines the store holds. Nil if the store has
// no checkpoints. The map is the caller's.
func (s *Store) Marks() map[string]int64 {
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	if s.marks == nil {
		return nil
	}
	return marksCopy(s.marks)
}

// Checkpointed reports whether the store keeps checkpoints (Options.
// Checkpoint, or a checkpoint file found at Open).
func (s *Store) Checkpointed() bool { return s.checkpointed }

// writeCheckpoint is called by the writer once a batch's segments are
// written (and, in SyncBatch, fsynced): it records the active segments'
// sizes and the marks including the batch's. On an error the batch fails.
func (w *writer) writeCheckpoint(b *batch) error {
	s := w.s
	st := &w.ckState
	clear(st.Active)
	for _, seg := range w.active {
		st.Active[seg.name] = seg.size
	}
	for _, seg := range w.retiring {
		st.Active[seg.name] = seg.size
	}
	st.NextSeq = w.nextSeq
	// Marks: the durable ones plus the batch's, which become durable only
	// if the record is written.
	s.marksMu.Lock()
	st.Marks = marksCopy(s.marks)
	s.marksMu.Unlock()
	maps.Copy(st.Marks, b.marks)
	if s.o.testCheckpoint != nil {
		if err := s.o.testCheckpoint(); err != nil {
			return fmt.Errorf("cannot write checkpoint: %w", err)
		}
	}
	if w.ckpt.size > checkpointMaxBytes {
		l, err := rewriteCheckpoint(s.root, st)
		if err != nil {
			return err
		}
		w.ckpt.close()
		w.ckpt = l
	} else {
		intact, err := w.ckpt.append(st, s.o.Sync == SyncBatch)
		if err != nil {
			if !intact {
				w.broken = err
			}
			return err
		}
	}
	if len(b.marks) > 0 {
		s.marksMu.Lock()
		s.marks = st.Marks
		s.marksMu.Unlock()
	}
	return nil
}
