package benchio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spate-io/spate/internal/benchenv"
	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/gen"
)

// DefaultStrategies are benchmarked when Config.Strategies is empty; the
// Ceiling and CeilingPrefaulted rows are always added.
var DefaultStrategies = []string{"mmap", MmapWhole, "pread", "bufio", "stream"}

// Config says what to benchmark. Zero values mean the defaults noted.
type Config struct {
	// Files to read. Empty: generate a sample of Size bytes in TempDir and
	// remove it afterwards.
	Files   []string
	Size    int64  // sample size; 0 means 1 GiB
	Seed    uint64 // sample seed; 0 means 1
	TempDir string // where to put the sample; "" means os.TempDir()

	Strategies []string // fileread strategies, MmapWhole; empty means DefaultStrategies
	// Workers is the parallel worker count; every strategy also gets a
	// 1-worker row. 0 means runtime.GOMAXPROCS(0).
	Workers    int
	ChunkSize  int      // 0 means each strategy's default
	MmapWindow int64    // 0 means the default window
	Repeat     int      // rounds per row; 0 means 5
	Caches     []string // "warm", "cold"; empty means both
	GOGC       string   // GOGC for the children ("off", "100", ...); "" leaves it unset
	Work       string   // the per-chunk workload; "" means "lines"

	// ChildCommand runs one measurement: the ChildSpec is appended as a
	// JSON argument and the child must print a ChildResult (RunChild).
	ChildCommand []string
	ChildEnv     []string // extra environment for the children

	// Progress receives one line per run; nil means none.
	Progress io.Writer
}

func (c *Config) setDefaults() error {
	if c.Size == 0 {
		c.Size = 1 << 30
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if len(c.Strategies) == 0 {
		c.Strategies = DefaultStrategies
	}
	for _, s := range c.Strategies {
		if s == MmapWhole {
			continue
		}
		if _, err := fileread.ParseStrategy(s); err != nil {
			return fmt.Errorf("%w (or %s)", err, MmapWhole)
		}
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Repeat <= 0 {
		c.Repeat = 5
	}
	if len(c.Caches) == 0 {
		c.Caches = []string{"warm", "cold"}
	}
	for _, cs := range c.Caches {
		if cs != "warm" && cs != "cold" {
			return fmt.Errorf("unknown cache state %q: want warm or cold", cs)
		}
		if cs == "cold" && !cacheControl {
			return fmt.Errorf("cold-cache runs need page cache control, only implemented on Linux: use --cache warm")
		}
	}
	if c.Work == "" {
		c.Work = "lines"
	}
	if !slices.Contains(Works, c.Work) {
		return fmt.Errorf("unknown work %q: want one of %s", c.Work, strings.Join(Works, ", "))
	}
	if len(c.ChildCommand) == 0 {
		return errors.New("BUG: benchio.Config.ChildCommand is empty")
	}
	return nil
}

// runKey identifies a row.
type runKey struct {
	strategy string
	workers  int
	cache    string
}

// sample is one round of one row.
type sample struct {
	res       ChildResult
	rusage    syscall.Rusage
	residency float64
}

// Run benchmarks the configured strategies, each round in a fresh child
// process, and returns the report. Rounds of all rows are interleaved so
// that slow drifts of a noisy machine spread over every row.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	rep := &Report{Machine: benchenv.Describe(), Repeat: cfg.Repeat, GOGC: cfg.GOGC, Work: cfg.Work, Started: time.Now()}

	files := cfg.Files
	if len(files) == 0 {
		p, cleanup, err := makeSample(ctx, cfg)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		files = []string{p}
	}
	for _, p := range files {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("cannot stat input: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: bench io needs regular files (cache control and mmap)", p)
		}
		rep.Files = append(rep.Files, File{Path: p, Size: fi.Size(), Generated: len(cfg.Files) == 0})
	}

	var keys []runKey
	workerCounts := []int{1}
	if cfg.Workers > 1 {
		workerCounts = append(workerCounts, cfg.Workers)
	}
	for _, cache := range cfg.Caches {
		rows := append(slices.Clone(cfg.Strategies), Ceiling)
		if cache == "warm" {
			// Cold, MAP_POPULATE would read the disk before the clock starts.
			rows = append(rows, CeilingPrefaulted)
		}
		for _, s := range rows {
			for _, w := range workerCounts {
				keys = append(keys, runKey{s, w, cache})
			}
		}
	}
	samples := make(map[runKey][]sample)
	total, done := len(keys)*cfg.Repeat, 0
	for round := range cfg.Repeat {
		for _, cache := range cfg.Caches {
			if cache == "warm" {
				if err := warmUp(files); err != nil {
					return nil, err
				}
			}
			for _, k := range keys {
				if k.cache != cache {
					continue
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				res, err := prepareCache(files, cache)
				if err != nil {
					return nil, err
				}
				s, err := runOne(ctx, cfg, files, k)
				if err != nil {
					return nil, fmt.Errorf("%s with %d workers, %s cache, round %d: %w", k.strategy, k.workers, k.cache, round+1, err)
				}
				s.residency = res
				samples[k] = append(samples[k], s)
				done++
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "[%d/%d] round %d/%d  %-5s %-10s ×%d  %6.2f GB/s\n", done, total, round+1, cfg.Repeat, cache, k.strategy, k.workers, gbps(s.res))
				}
			}
		}
	}
	for _, k := range keys {
		rep.Rows = append(rep.Rows, aggregate(k, samples[k]))
	}
	rep.ElapsedSec = time.Since(rep.Started).Seconds()
	return rep, nil
}

// warmUp drops the files from the page cache, where that is possible, and
// reads them once. Going through the disk every time makes the cached state
// the same in every round, whatever cached the file before: pages cached by
// the writes that made the file can be smaller than the large folios
// read-ahead allocates, and mmap takes several times more page faults on
// them (README, "Warm is not one state").
func warmUp(files []string) error {
	for _, p := range files {
		if cacheControl {
			if err := Evict(p); err != nil {
				return err
			}
		}
		if err := Warm(p); err != nil {
			return err
		}
	}
	return nil
}

// prepareCache puts the files in the cache state and returns the smallest
// share of their pages resident afterwards.
func prepareCache(files []string, cache string) (float64, error) {
	res := 1.0
	for _, p := range files {
		if cache == "cold" {
			if err := Evict(p); err != nil {
				return 0, err
			}
		}
		r, err := fileread.Residency(p)
		if err != nil {
			return 0, err
		}
		res = min(res, r)
	}
	return res, nil
}

// runOne runs one round in a child process.
func runOne(ctx context.Context, cfg Config, files []string, k runKey) (sample, error) {
	spec, err := json.Marshal(ChildSpec{Paths: files, Strategy: k.strategy, Workers: k.workers, ChunkSize: cfg.ChunkSize, MmapWindow: cfg.MmapWindow, Work: cfg.Work})
	if err != nil {
		return sample{}, err
	}
	args := append(slices.Clone(cfg.ChildCommand[1:]), string(spec))
	cmd := exec.CommandContext(ctx, cfg.ChildCommand[0], args...)
	cmd.Env = append(os.Environ(), cfg.ChildEnv...)
	if cfg.GOGC != "" {
		cmd.Env = append(cmd.Env, "GOGC="+cfg.GOGC)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("child failed: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var s sample
	if err := json.Unmarshal(stdout.Bytes(), &s.res); err != nil {
		return sample{}, fmt.Errorf("cannot parse the child's result %q: %w", stdout.String(), err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.rusage = *ru
	}
	return s, nil
}

// makeSample generates the benchmark's sample file.
func makeSample(ctx context.Context, cfg Config) (string, func(), error) {
	dir, err := os.MkdirTemp(cfg.TempDir, "spate-bench-io-")
	if err != nil {
		return "", nil, fmt.Errorf("cannot create a temporary directory: %w", err)
	}
	cleanup := func() { os.RemoveAll(dir) }
	p := filepath.Join(dir, "sample.ndjson")
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "generating a %s sample (seed %d) in %s\n", benchenv.HumanBytes(cfg.Size), cfg.Seed, dir)
	}
	if _, err := gen.WriteFile(ctx, p, gen.Config{Seed: cfg.Seed, Size: cfg.Size}); err != nil {
		cleanup()
		return "", nil, err
	}
	return p, cleanup, nil
}

func gbps(r ChildResult) float64 {
	if r.WallNS <= 0 {
		return 0
	}
	return float64(r.Bytes) / float64(r.WallNS)
}

// aggregate folds the rounds of one row.
func aggregate(k runKey, ss []sample) Row {
	row := Row{Strategy: k.strategy, Workers: k.workers, Cache: k.cache, Rounds: len(ss), ResidentBefore: 1}
	var rates, maj, minf, disk, user, sys []float64
	var lat []int64
	for _, s := range ss {
		rates = append(rates, gbps(s.res))
		row.Lines, row.Bytes, row.Chunks, row.GCPercent = s.res.Lines, s.res.Bytes, s.res.Chunks, s.res.GCPercent
		lat = append(lat, s.res.LatNS...)
		ru := s.rusage
		row.PeakRSSMB = max(row.PeakRSSMB, float64(ru.Maxrss)*1024/1e6) // ru_maxrss is in KiB on Linux
		maj = append(maj, float64(ru.Majflt))
		minf = append(minf, float64(ru.Minflt))
		disk = append(disk, float64(s.res.ReadBytes)/1e6)
		user = append(user, tvSec(ru.Utime))
		sys = append(sys, tvSec(ru.Stime))
		row.ResidentBefore = min(row.ResidentBefore, s.residency)
	}
	row.GBpsRounds = rates
	row.GBps = Spread{Median: median(rates), Min: slices.Min(rates), Max: slices.Max(rates)}
	row.MajFlt, row.MinFlt = int64(median(maj)), int64(median(minf))
	row.DiskMB, row.UserSec, row.SysSec = median(disk), median(user), median(sys)
	if len(lat) > 0 {
		slices.Sort(lat)
		row.ChunkMS = Pctl{P50: pctl(lat, 0.50), P95: pctl(lat, 0.95), P99: pctl(lat, 0.99)}
	}
	return row
}

func tvSec(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// pctl returns the nearest-rank percentile of sorted latencies, in ms.
func pctl(sorted []int64, q float64) float64 {
	i := int(q*float64(len(sorted))+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / 1e6
}
