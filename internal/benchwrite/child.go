package benchwrite

import (
	"github.com/spate-io/spate/internal/latency"

	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
)

// ChildSpec describes one measured run; the parent passes it to the child
// process as JSON.
type ChildSpec struct {
	Path       string   `json:"path"`        // file to create (O_EXCL); the parent removes it afterwards
	Writer     string   `json:"writer"`      // one of Writers
	Sync       SyncMode `json:"fsync"`       // one of SyncModes
	Records    int64    `json:"records"`     // records to write
	RecordSize int      `json:"record_size"` // bytes per record, '\n' included
	Batch      int      `json:"batch"`       // records per batch
}

// ChildResult is what a child prints on stdout, as one JSON object. A child
// whose file does not hold exactly the records it wrote exits with an
// error instead.
type ChildResult struct {
	Writer    string   `json:"writer"`
	Sync      SyncMode `json:"fsync"`
	Records   int64    `json:"records"`
	Bytes     int64    `json:"bytes"`
	WallNS    int64    `json:"wall_ns"` // first record to the end of the final sync
	Batches   int      `json:"batches"`
	BatchMS   Pctl     `json:"batch_ms"` // per-batch latency, its sync included
	Syscalls  Syscalls `json:"syscalls"`
	Grow      string   `json:"grow,omitempty"` // mmap: "fallocate" or "ftruncate"
	PeakRSSMB float64  `json:"peak_rss_mb"`    // getrusage(RUSAGE_SELF) ru_maxrss after the writes
	BaseRSSMB float64  `json:"base_rss_mb"`    // the same just before the writes: runtime plus the records
	Verified  bool     `json:"verified"`       // size and every byte read back and compared
	SHA256    string   `json:"sha256"`         // of the file as read back
}

func (s ChildSpec) check() error {
	if err := checkWriter(s.Writer); err != nil {
		return err
	}
	if _, err := ParseSyncMode(string(s.Sync)); err != nil {
		return err
	}
	if s.Path == "" {
		return errors.New("the run spec has no path")
	}
	if s.Records <= 0 || s.Batch <= 0 {
		return fmt.Errorf("the run spec wants %d records in batches of %d: both must be positive", s.Records, s.Batch)
	}
	return nil
}

// RunChild performs the run spec describes in this process and writes a
// ChildResult as JSON to w: it makes the records, creates spec.Path, writes
// and times them, then reads the file back (untimed) and fails unless it
// holds exactly the records. It removes spec.Path when done. It is the
// body of the hidden `spate bench write-child` command.
func RunChild(ctx context.Context, spec ChildSpec, w io.Writer) error {
	if err := spec.check(); err != nil {
		return err
	}
	recs, err := MakeRecords(spec.Records, spec.RecordSize)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(spec.Path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("cannot create the output file: %w", err)
	}
	defer os.Remove(spec.Path)
	defer f.Close()

	runtime.GC() // nothing left over from making the records runs during the writes
	base := maxRSSMB()
	st, err := writeRecords(ctx, f, spec.Writer, spec.Sync, recs, spec.Batch, writerOptions{})
	if err != nil {
		return err
	}
	res := ChildResult{
		Writer: spec.Writer, Sync: spec.Sync,
		Records: int64(recs.Len()), Bytes: int64(len(recs.Data)),
		WallNS: st.Wall.Nanoseconds(), Batches: len(st.Batches),
		Syscalls: st.Syscalls, Grow: st.Grow,
		PeakRSSMB: maxRSSMB(), BaseRSSMB: base,
	}
	res.BatchMS = latency.Summarize(st.Batches)
	if res.SHA256, err = verify(f, recs); err != nil {
		return fmt.Errorf("%s writer, fsync %s: %w", spec.Writer, spec.Sync, err)
	}
	res.Verified = true
	return json.NewEncoder(w).Encode(res)
}

// maxRSSMB returns this process's peak resident set in decimal MB.
func maxRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) * 1024 / 1e6 // ru_maxrss is in KiB on Linux
}

// errLostData classes verification failures: the file does not hold what
// the writer was given.
var errLostData = errors.New("the file does not hold the records written")

// verify reads f back from the start and checks it holds exactly recs,
// returning the SHA-256 of what it read. A mismatch names the first record
// that differs.
func verify(f *os.File, recs Records) (string, error) {
	want := recs.Data
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("cannot stat the output file: %w", err)
	}
	if fi.Size() != int64(len(want)) {
		return "", fmt.Errorf("%w: it is %d bytes, want %d", errLostData, fi.Size(), len(want))
	}
	h := sha256.New()
	buf := make([]byte, 1<<20)
	var off int64
	for {
		n, err := f.ReadAt(buf, off)
		if n > 0 {
			got := buf[:n]
			if off+int64(n) > int64(len(want)) || !bytes.Equal(got, want[off:off+int64(n)]) {
				return "", fmt.Errorf("%w: %s", errLostData, firstDiff(got, want[off:], off, recs.Size))
			}
			h.Write(got)
			off += int64(n)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("cannot read the output file back: %w", err)
		}
	}
	if off != int64(len(want)) {
		return "", fmt.Errorf("%w: read back %d bytes, want %d", errLostData, off, len(want))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// firstDiff describes where got, read at file offset off, first differs
// from want (the expected bytes from off on), with records of size bytes.
func firstDiff(got, want []byte, off int64, size int) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	at := off + int64(i)
	line := func(b []byte) string {
		if j := bytes.IndexByte(b, '\n'); j >= 0 {
			b = b[:j]
		}
		if len(b) > 60 {
			b = b[:60]
		}
		return fmt.Sprintf("%q", b)
	}
	if i >= len(want) {
		return fmt.Sprintf("extra bytes at offset %d", at)
	}
	return fmt.Sprintf("first difference at offset %d, in record %d: got %s, want %s", at, at/int64(max(size, 1)), line(got[i:]), line(want[i:]))
}
