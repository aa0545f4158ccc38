// Package benchwrite measures ways of appending records to a file: one
// write(2) per record, bufio.Writer at three buffer sizes, writev(2) per
// batch and copying into a shared mapping, each with fsync off, per batch
// and at the end. Every run is a fresh child process that writes a new file
// and reads it back, so peak RSS is that run's own and a writer that loses
// or duplicates a record fails. It powers `spate bench write`.
package benchwrite

import (
	"time"

	"github.com/spate-io/spate/internal/benchenv"
)

// Report is the result of a benchmark: one Row per writer and fsync mode.
type Report struct {
	Machine    Machine   `json:"machine"`
	Dir        string    `json:"dir"`            // where the files were written
	FSType     string    `json:"fs_type"`        // file system of Dir: "ext4", "tmpfs", ... or the statfs magic in hex
	FreeBytes  int64     `json:"dir_free_bytes"` // available in Dir before the runs; -1 unknown
	Records    int64     `json:"records"`        // per run
	RecordSize int       `json:"record_size"`    // bytes, '\n' included
	Bytes      int64     `json:"bytes"`          // per run: Records × RecordSize
	Batch      int       `json:"batch"`          // records per batch
	Repeat     int       `json:"repeat"`         // runs per row; each row reports its median run
	Rows       []Row     `json:"rows"`           // in SyncModes order, then Writers order
	Started    time.Time `json:"started"`        // when the first run started
	ElapsedSec float64   `json:"elapsed_sec"`    // all runs, verification included
	Note       string    `json:"note,omitempty"` // caveats for this file system
}

// Machine describes the machine the report was measured on.
type Machine = benchenv.Machine

// Row is one writer with one fsync mode: its median run (by records/s),
// with the spread of all runs.
type Row struct {
	Writer string   `json:"writer"`
	Sync   SyncMode `json:"fsync"`
	Runs   int      `json:"runs"`

	RecordsPerSec     float64   `json:"records_per_sec"`      // of the median run
	RecordsPerSecRuns []float64 `json:"records_per_sec_runs"` // every run, in order
	MBps              float64   `json:"mb_per_sec"`           // decimal MB/s of the median run
	WallSec           float64   `json:"wall_sec"`             // of the median run, final sync included
	// VsWrite is RecordsPerSec over that of the write row with the same
	// fsync mode, measured in the same benchmark; 0 without one.
	VsWrite float64 `json:"vs_write"`

	Batches       int      `json:"batches"`
	BatchMS       Pctl     `json:"batch_ms"` // per-batch latency of the median run, its sync included
	Syscalls      Syscalls `json:"syscalls"` // of the median run
	SyscallsTotal int64    `json:"syscalls_total"`
	SyscallsPerMB float64  `json:"syscalls_per_mb"` // per decimal MB written
	Grow          string   `json:"grow,omitempty"`  // mmap: how the file grew, "fallocate" or "ftruncate"

	PeakRSSMB float64 `json:"peak_rss_mb"` // max over runs of the child's ru_maxrss (mapped file pages count)
	BaseRSSMB float64 `json:"base_rss_mb"` // the same just before the writes: runtime plus the records in memory
	SHA256    string  `json:"sha256"`      // of the file read back; the same in every row
}

// Label is the row's short name: "bufio-4k fsync=batch".
func (r Row) Label() string { return r.Writer + " fsync=" + string(r.Sync) }
