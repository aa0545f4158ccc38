package benchwrite

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spate-io/spate/internal/benchenv"
)

// Config says what to benchmark. Zero values mean the defaults noted.
type Config struct {
	Dir        string     // where to write; "" means os.TempDir()
	Size       int64      // bytes per run, rounded down to whole records; 0 means 64 MiB
	RecordSize int        // bytes per record, '\n' included; 0 means 100
	Batch      int        // records per batch; 0 means 1000
	Writers    []string   // empty means Writers; WriteRow is always added
	Syncs      []SyncMode // empty means SyncModes
	Repeat     int        // runs per row; 0 means 1

	// ChildCommand runs one measurement: the ChildSpec is appended as a
	// JSON argument and the child must print a ChildResult (RunChild).
	ChildCommand []string
	ChildEnv     []string // extra environment for the children

	// Progress receives one line per run; nil means none.
	Progress io.Writer
}

func (c *Config) setDefaults() error {
	if c.Dir == "" {
		c.Dir = os.TempDir()
	}
	if c.Size == 0 {
		c.Size = 64 << 20
	}
	if c.RecordSize == 0 {
		c.RecordSize = 100
	}
	if c.Batch == 0 {
		c.Batch = 1000
	}
	if c.Repeat == 0 {
		c.Repeat = 1
	}
	switch {
	case c.Size < 0 || c.RecordSize < 0 || c.Batch < 0 || c.Repeat < 0:
		return errors.New("size, record size, batch and repeat must not be negative")
	case c.Size < int64(c.RecordSize):
		return fmt.Errorf("size %d is less than one record of %d bytes", c.Size, c.RecordSize)
	}
	if lo := MinRecordSize(c.Size / int64(c.RecordSize)); c.RecordSize < lo {
		return fmt.Errorf("records of %d bytes are too small for %d records: want at least %d bytes", c.RecordSize, c.Size/int64(c.RecordSize), lo)
	}
	if len(c.Writers) == 0 {
		c.Writers = Writers
	}
	for _, w := range c.Writers {
		if err := checkWriter(w); err != nil {
			return err
		}
	}
	// Report order, the reference row first, no duplicates.
	want := append([]string{WriteRow}, c.Writers...)
	c.Writers = slices.DeleteFunc(slices.Clone(Writers), func(w string) bool { return !slices.Contains(want, w) })
	if len(c.Syncs) == 0 {
		c.Syncs = SyncModes
	}
	for _, m := range c.Syncs {
		if _, err := ParseSyncMode(string(m)); err != nil {
			return err
		}
	}
	c.Syncs = slices.DeleteFunc(slices.Clone(SyncModes), func(m SyncMode) bool { return !slices.Contains(c.Syncs, m) })
	if len(c.ChildCommand) == 0 {
		return errors.New("BUG: benchwrite.Config.ChildCommand is empty")
	}
	return nil
}

// ErrNoSpace is returned when Dir cannot hold a run's file.
var ErrNoSpace = errors.New("not enough free space")

// needBytes is the most a run's file takes on disk: the mmap writer
// preallocates whole steps.
func needBytes(size int64) int64 {
	return (size + mmapStep - 1) / mmapStep * mmapStep
}

type rowKey struct {
	writer string
	sync   SyncMode
}

// Run benchmarks the configured writers and fsync modes, each run in a
// fresh child process writing its own file in cfg.Dir, which it removes
// afterwards, and returns the report. Runs of all rows are interleaved
// round by round so that slow drifts spread over every row. It refuses to
// start, with ErrNoSpace, when cfg.Dir cannot hold one run's file.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	fi, err := os.Stat(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("cannot use the output directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("cannot use the output directory: %s is not a directory", cfg.Dir)
	}
	fsType, free, err := statFS(cfg.Dir)
	if err != nil {
		return nil, err
	}
	records := cfg.Size / int64(cfg.RecordSize)
	size := records * int64(cfg.RecordSize)
	if free >= 0 && needBytes(size) > free {
		return nil, fmt.Errorf("%w in %s (%s): a run writes a %s file (%s with the mmap writer's preallocation), %s available; use a smaller --size or another --dir",
			ErrNoSpace, cfg.Dir, fsType, benchenv.HumanBytes(size), benchenv.HumanBytes(needBytes(size)), benchenv.HumanBytes(free))
	}
	if avail := memAvailable(); avail > 0 && size > avail*9/10 {
		return nil, fmt.Errorf("a run holds its %s of records in memory and %s is available: use a smaller --size", benchenv.HumanBytes(size), benchenv.HumanBytes(avail))
	}
	rep := &Report{
		Machine: benchenv.Describe(), Dir: cfg.Dir, FSType: fsType, FreeBytes: free,
		Records: records, RecordSize: cfg.RecordSize, Bytes: size, Batch: cfg.Batch, Repeat: cfg.Repeat,
		Started: time.Now(), Note: fsNote(fsType),
	}
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "writing %s (%d records of %d B) per run in %s (%s)\n", benchenv.HumanBytes(size), records, cfg.RecordSize, cfg.Dir, fsType)
	}

	var keys []rowKey
	for _, m := range cfg.Syncs {
		for _, w := range cfg.Writers {
			keys = append(keys, rowKey{w, m})
		}
	}
	runs := make(map[rowKey][]ChildResult)
	total, done := len(keys)*cfg.Repeat, 0
	for round := range cfg.Repeat {
		for _, k := range keys {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			spec := ChildSpec{
				Path:   filepath.Join(cfg.Dir, fmt.Sprintf(".spate-bench-write-%d-%d.ndjson", os.Getpid(), done)),
				Writer: k.writer, Sync: k.sync, Records: records, RecordSize: cfg.RecordSize, Batch: cfg.Batch,
			}
			res, err := runOne(ctx, cfg, spec)
			if err != nil {
				return nil, fmt.Errorf("%s writer, fsync %s, round %d: %w", k.writer, k.sync, round+1, err)
			}
			if res.Records != records || res.Bytes != size || !res.Verified {
				return nil, fmt.Errorf("%s writer, fsync %s, round %d: the child wrote %d records (%d bytes, verified %v), want %d (%d bytes)",
					k.writer, k.sync, round+1, res.Records, res.Bytes, res.Verified, records, size)
			}
			runs[k] = append(runs[k], res)
			done++
			if cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "[%d/%d] round %d/%d  fsync=%-5s %-9s %8.3f Mrec/s %8.1f MB/s\n",
					done, total, round+1, cfg.Repeat, k.sync, k.writer, recPerSec(res)/1e6, mbPerSec(res))
			}
		}
	}
	for _, k := range keys {
		rep.Rows = append(rep.Rows, aggregate(k, runs[k]))
	}
	for i, r := range rep.Rows {
		if ref, ok := rep.find(WriteRow, r.Sync); ok && ref.RecordsPerSec > 0 {
			rep.Rows[i].VsWrite = r.RecordsPerSec / ref.RecordsPerSec
		}
		if r.SHA256 != rep.Rows[0].SHA256 {
			return nil, fmt.Errorf("%s: the file's SHA-256 %s differs from the %s row's %s", r.Label(), r.SHA256, rep.Rows[0].Label(), rep.Rows[0].SHA256)
		}
	}
	rep.ElapsedSec = time.Since(rep.Started).Seconds()
	return rep, nil
}

// runOne runs one measurement in a child process and removes its file.
func runOne(ctx context.Context, cfg Config, spec ChildSpec) (ChildResult, error) {
	defer os.Remove(spec.Path) // the child removes it too, unless it crashed
	js, err := json.Marshal(spec)
	if err != nil {
		return ChildResult{}, err
	}
	args := append(slices.Clone(cfg.ChildCommand[1:]), string(js))
	cmd := exec.CommandContext(ctx, cfg.ChildCommand[0], args...)
	cmd.Env = append(os.Environ(), cfg.ChildEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return ChildResult{}, fmt.Errorf("child failed: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var res ChildResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return ChildResult{}, fmt.Errorf("cannot parse the child's result %q: %w", stdout.String(), err)
	}
	return res, nil
}

func recPerSec(r ChildResult) float64 {
	if r.WallNS <= 0 {
		return 0
	}
	return float64(r.Records) / (float64(r.WallNS) / 1e9)
}

func mbPerSec(r ChildResult) float64 {
	if r.WallNS <= 0 {
		return 0
	}
	return float64(r.Bytes) / 1e6 / (float64(r.WallNS) / 1e9)
}

// aggregate reports the median run of a row (by records/s), with the rates
// of all runs and the highest peak RSS.
func aggregate(k rowKey, runs []ChildResult) Row {
	row := Row{Writer: k.writer, Sync: k.sync, Runs: len(runs)}
	for _, r := range runs {
		row.RecordsPerSecRuns = append(row.RecordsPerSecRuns, recPerSec(r))
		row.PeakRSSMB = max(row.PeakRSSMB, r.PeakRSSMB)
	}
	if len(runs) == 0 {
		return row
	}
	sorted := slices.SortedFunc(slices.Values(runs), func(a, b ChildResult) int {
		return cmp.Compare(recPerSec(a), recPerSec(b))
	})
	m := sorted[medianIndex(len(sorted))]
	row.RecordsPerSec, row.MBps = recPerSec(m), mbPerSec(m)
	row.WallSec = float64(m.WallNS) / 1e9
	row.Batches, row.BatchMS = m.Batches, m.BatchMS
	row.Syscalls, row.SyscallsTotal = m.Syscalls, m.Syscalls.Total()
	if m.Bytes > 0 {
		row.SyscallsPerMB = float64(row.SyscallsTotal) / (float64(m.Bytes) / 1e6)
	}
	row.Grow, row.BaseRSSMB, row.SHA256 = m.Grow, m.BaseRSSMB, m.SHA256
	return row
}

// find returns the row for writer and fsync mode.
func (rep *Report) find(writer string, sync SyncMode) (Row, bool) {
	for _, r := range rep.Rows {
		if r.Writer == writer && r.Sync == sync {
			return r, true
		}
	}
	return Row{}, false
}

// fsNote warns about file systems on which the fsync rows do not measure
// storage.
func fsNote(fsType string) string {
	switch fsType {
	case "tmpfs", "ramfs":
		return fsType + " keeps files in memory: fsync and msync return at once, so the fsync rows measure no storage"
	case "overlay", "9p", "fuse", "nfs":
		return fsType + " passes syncs to another layer (a container's upper dir, a host, a server): the fsync rows measure that path"
	}
	return ""
}

// memAvailable returns MemAvailable from /proc/meminfo in bytes, or 0
// where it is not known.
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}
