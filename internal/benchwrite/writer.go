package benchwrite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Writer names, in report order. WriteRow is the reference row of the
// "vs write" ratios and is always run.
const (
	WriteRow = "write"     // one write(2) per record, no buffer
	Bufio4K  = "bufio-4k"  // bufio.Writer, 4 KiB buffer
	Bufio64K = "bufio-64k" // bufio.Writer, 64 KiB buffer
	Bufio1M  = "bufio-1m"  // bufio.Writer, 1 MiB buffer
	Writev   = "writev"    // one writev(2) per batch of records
	Mmap     = "mmap"      // copy into a shared mapping of a preallocated file
)

// Writers lists every writer, in report order.
var Writers = []string{WriteRow, Bufio4K, Bufio64K, Bufio1M, Writev, Mmap}

// bufioSizes are the buffer sizes of the bufio writers.
var bufioSizes = map[string]int{Bufio4K: 4 << 10, Bufio64K: 64 << 10, Bufio1M: 1 << 20}

// SyncMode says when a writer makes what it wrote durable.
type SyncMode string

const (
	SyncNone  SyncMode = "none"  // never: the data may still be in the page cache at the end
	SyncBatch SyncMode = "batch" // after every batch of records
	SyncEnd   SyncMode = "end"   // once, after the last record
)

// SyncModes lists every mode, in report order.
var SyncModes = []SyncMode{SyncNone, SyncBatch, SyncEnd}

// ParseSyncMode parses "none", "batch" or "end".
func ParseSyncMode(s string) (SyncMode, error) {
	if m := SyncMode(s); slices.Contains(SyncModes, m) {
		return m, nil
	}
	return "", fmt.Errorf("unknown fsync mode %q: want none, batch or end", s)
}

// checkWriter returns an error for an unknown writer name.
func checkWriter(name string) error {
	if !slices.Contains(Writers, name) {
		return fmt.Errorf("unknown writer %q: want one of %s", name, strings.Join(Writers, ", "))
	}
	return nil
}

// writer appends records to a file. Implementations issue every system
// call through their *file, so that it is counted, and are not safe for
// concurrent use.
type writer interface {
	// write appends p. p must stay unchanged until the next endBatch
	// returns (writev keeps references to it).
	write(p []byte) error
	// endBatch ends a batch of records: in SyncBatch mode, everything
	// written so far is durable when it returns.
	endBatch() error
	// finish writes whatever is buffered and leaves the file holding
	// exactly the records written (durable unless the mode is SyncNone).
	// It does not close the file. The writer must not be used afterwards.
	finish() error
}

// writerOptions tune writers for tests; zero values mean the defaults.
type writerOptions struct {
	iovMax   int   // most iovecs per writev call; 0 means iovMax
	mmapStep int64 // growth and mapping size of the mmap writer; 0 means mmapStep
}

// newWriter returns the named writer appending to f from its current
// offset (mmap: from offset 0 of an empty file).
func newWriter(name string, f *file, mode SyncMode, opt writerOptions) (writer, error) {
	switch name {
	case WriteRow:
		return &writeWriter{f: f, mode: mode}, nil
	case Bufio4K, Bufio64K, Bufio1M:
		return newBufioWriter(f, mode, bufioSizes[name]), nil
	case Writev:
		return newWritevWriter(f, mode, opt.iovMax), nil
	case Mmap:
		return newMmapWriter(f, mode, opt.mmapStep), nil
	}
	return nil, checkWriter(name)
}

// runStats are what one writeRecords call measured.
type runStats struct {
	Wall     time.Duration
	Batches  []time.Duration // per batch: first record to end of batch, its sync included
	Syscalls Syscalls
	Grow     string // how the mmap writer grew the file: "fallocate" or "ftruncate"
}

// writeRecords writes recs to f with the named writer in batches of batch
// records and times it: the clock runs from the first record to the end of
// finish, final sync included. f must be empty and at offset 0. After an
// error the file's content is undefined and an mmap writer's mapping may
// stay mapped until the process exits (children exit right away).
func writeRecords(ctx context.Context, f *os.File, name string, mode SyncMode, recs Records, batch int, opt writerOptions) (st runStats, err error) {
	if batch <= 0 {
		return st, fmt.Errorf("cannot write in batches of %d records: want at least 1", batch)
	}
	kf := newFile(f)
	w, err := newWriter(name, kf, mode, opt)
	if err != nil {
		return st, err
	}
	n := recs.Len()
	st.Batches = make([]time.Duration, 0, (n+batch-1)/batch)

	// A store into a mapping the file system cannot back raises SIGBUS;
	// turn it into an error instead of a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); ok { // a memory fault, see debug.SetPanicOnFault
				err = fmt.Errorf("%s writer: memory fault writing through the mapping (file system full?): %v", name, r)
				return
			}
			panic(r)
		}
	}()

	start := time.Now()
	for lo := 0; lo < n; lo += batch {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		t0 := time.Now()
		hi := min(lo+batch, n)
		for i := lo; i < hi; i++ {
			if err := w.write(recs.At(i)); err != nil {
				return st, fmt.Errorf("%s writer: cannot write record %d: %w", name, i, err)
			}
		}
		if err := w.endBatch(); err != nil {
			return st, fmt.Errorf("%s writer: cannot end the batch at record %d: %w", name, lo, err)
		}
		st.Batches = append(st.Batches, time.Since(t0))
	}
	if err := w.finish(); err != nil {
		return st, fmt.Errorf("%s writer: cannot finish: %w", name, err)
	}
	st.Wall = time.Since(start)
	st.Syscalls = kf.n
	if m, ok := w.(*mmapWriter); ok {
		st.Grow = m.grow
	}
	return st, nil
}

// errShortWrite is returned when the kernel accepts no bytes and no error.
var errShortWrite = errors.New("short write: the kernel accepted 0 bytes")
