// Package benchio measures read strategies on the user's own files: each
// run is a fresh child process, so peak RSS and page faults are that run's
// own. It powers `spate bench io` and `spate demo`.
package benchio

import (
	"strconv"
	"time"

	"github.com/spate-io/spate/internal/benchenv"
)

// Ceiling names the reference row: a raw bytes.Count over the whole file
// mapped in memory, split evenly across the workers, timed like any other
// row (mapping, page faults, unmapping). No chunking, no line handling: the
// machine's ceiling for a line-count scan through a fresh mapping.
const Ceiling = "ceiling"

// CeilingPrefaulted names the compute bound: the same count over a mapping
// whose page tables were filled before the clock started, so the row has no
// kernel work at all. No reader that must get the bytes from the page cache
// can reach it; the gap to Ceiling is the cost of page faults.
const CeilingPrefaulted = "ceiling-prefaulted"

// MmapWhole names the mmap strategy with the whole file mapped at once (the
// write-ups' mmap row), as opposed to the default windowed mmap.
const MmapWhole = "mmap-whole"

// Report is the result of a benchmark: one Row per strategy, worker count and
// cache state.
type Report struct {
	Machine    Machine   `json:"machine"`
	Files      []File    `json:"files"`
	Repeat     int       `json:"repeat"`
	GOGC       string    `json:"gogc,omitempty"`
	Work       string    `json:"work"`
	Rows       []Row     `json:"rows"`
	Started    time.Time `json:"started"`
	ElapsedSec float64   `json:"elapsed_sec"`
}

// Machine describes the machine the report was measured on.
type Machine = benchenv.Machine

// File is one benchmarked input.
type File struct {
	Path      string `json:"path"`
	Size      int64  `json:"size_bytes"`
	Generated bool   `json:"generated"` // made by the benchmark and removed after
}

// Row aggregates the rounds of one strategy, worker count and cache state.
type Row struct {
	Strategy string `json:"strategy"` // a fileread strategy, MmapWhole or Ceiling
	Workers  int    `json:"workers"`
	Cache    string `json:"cache"` // "warm" or "cold"
	Rounds   int    `json:"rounds"`

	GBps       Spread    `json:"gbps"`        // decimal GB/s over the rounds: median, min, max
	GBpsRounds []float64 `json:"gbps_rounds"` // GB/s of each round, in order
	Lines      int64     `json:"lines"`       // lines counted (the same in every round)
	Bytes      int64     `json:"bytes"`       // bytes scanned per round
	Chunks     int64     `json:"chunks"`      // chunks per round
	ChunkMS    Pctl      `json:"chunk_ms"`    // chunk latency over all rounds, milliseconds
	GCPercent  int       `json:"gc_percent"`  // GC percent the rounds ran with (-1: GOGC=off)

	PeakRSSMB float64 `json:"peak_rss_mb"`  // max over rounds of getrusage ru_maxrss (includes mapped file pages)
	MajFlt    int64   `json:"major_faults"` // median over rounds
	MinFlt    int64   `json:"minor_faults"` // median over rounds
	DiskMB    float64 `json:"disk_read_mb"` // median over rounds of /proc/self/io read_bytes
	UserSec   float64 `json:"user_sec"`     // median over rounds
	SysSec    float64 `json:"sys_sec"`      // median over rounds

	// ResidentBefore is the smallest share (0..1) of the file's pages found
	// in the page cache (mincore) right before a round: about 1 for warm
	// runs; for cold runs, 1-ResidentBefore is what was really evicted.
	ResidentBefore float64 `json:"resident_before"`
}

// Spread is a median with its range.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Pctl holds percentiles; all zero when not measured (the ceiling row).
type Pctl struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

// Label is the row's short name for charts: "mmap ×2 warm".
func (r Row) Label() string {
	return r.Strategy + " ×" + strconv.Itoa(r.Workers) + " " + r.Cache
}
