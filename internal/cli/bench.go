package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/spate-io/spate/internal/benchenv"
	"github.com/spate-io/spate/internal/benchio"
)

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure spate's I/O paths on this machine",
		Long: `Measure spate's I/O paths on this machine, with reproducible reports.

  spate bench io      mmap vs pread vs bufio vs stream reads of big files
  spate bench query   the standard queries on generated (or your) logs
  spate bench write   write vs bufio vs writev vs mmap appends, with and without fsync
  spate bench ingest  a load generator for spate serve's ingestion
  spate bench http    handler buffering and file downloads (sendfile, bufio, mmap) against nginx
  spate bench serve   the standard queries over stored logs, spate serve against VictoriaLogs`,
	}
	cmd.AddCommand(newBenchIOCmd(), newBenchIOChildCmd(), newBenchQueryCmd(), newBenchQueryChildCmd(), newBenchWriteCmd(), newBenchWriteChildCmd(), newBenchIngestCmd(), newBenchHTTPCmd(), newBenchHTTPServerCmd(), newBenchServeCmd())
	return cmd
}

// benchIOOpts are the flags of `spate bench io`.
type benchIOOpts struct {
	size       sizeFlag
	seed       uint64
	strategies string
	workers    int
	chunkSize  sizeFlag
	mmapWindow sizeFlag
	repeat     int
	cache      string
	gogc       string
	work       string
	tmpDir     string
	asJSON     bool
	markdown   bool
	gobench    bool
	chart      string
	quiet      bool
}

func newBenchIOCmd() *cobra.Command {
	o := &benchIOOpts{size: 1 << 30}
	cmd := &cobra.Command{
		Use:   "io [FILE...]",
		Short: "Compare read strategies (mmap, pread, bufio, stream) on a file",
		Long: `Compare read strategies on FILE (or on a generated sample) and report, per
strategy, worker count and cache state: throughput (median, min, max over the
rounds), chunk latency P50/P95/P99, peak RSS, page faults, bytes read from
disk and CPU time.

Every round runs in a fresh child process, so peak RSS and page faults are
that run's own. Every run touches every byte (it counts lines). Rows:
  mmap        the file mapped window by window (bounded RSS)
  mmap-whole  the whole file mapped at once (the usual mmap reader)
  pread       parallel pread of fixed chunks into page-aligned buffers
  bufio       bufio.Reader (4 MiB buffer) into 8 MiB chunks (the usual baseline)
  stream      a read-ahead goroutine (what stdin, pipes and .gz/.zst use)
  ceiling     raw bytes.Count over a fresh mapping of the whole file, split
              across the workers, page faults included: the machine's
              ceiling for reading through the page cache (always included)
  ceiling-prefaulted
              the same count with the page tables filled before the clock
              starts: a compute bound no reader can reach (warm runs only)
Each strategy runs with 1 worker and with --workers workers.

Cache states: warm (the file dropped from the cache and read back once
before each round's warm runs, so every round starts from the same state)
and cold (its pages dropped
with posix_fadvise(POSIX_FADV_DONTNEED), which needs no root; the
"cached before" column shows what mincore found resident just before each
round, so you can see how much was really evicted).`,
		Example: `  # 1 GiB generated sample, all strategies, warm and cold, 5 rounds
  spate bench io

  # your own file, warm cache only, 3 rounds, with a chart
  spate bench io --cache warm --repeat 3 --chart io.svg /var/log/app.ndjson

  # GC off, a 2 GiB sample, Markdown for a README
  spate bench io --size 2GiB --gogc off --markdown

  # compare two builds with benchstat
  spate bench io --gobench > new.txt && benchstat old.txt new.txt`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBenchIO(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.Var(&o.size, "size", "size of the generated sample when no FILE is given (e.g. 512MiB, 2GiB)")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the generated sample")
	f.StringVar(&o.strategies, "strategies", strings.Join(benchio.DefaultStrategies, ","), "comma-separated strategies to compare: mmap, mmap-whole, pread, bufio, stream")
	f.IntVar(&o.workers, "workers", 0, "parallel workers for the N-worker rows (0 = number of CPUs); 1-worker rows are always run")
	f.Var(&o.chunkSize, "chunk-size", "bytes per chunk for every strategy (0 = each strategy's default: pread 1MiB, bufio 8MiB, mmap 4MiB, stream 1MiB)")
	f.Var(&o.mmapWindow, "mmap-window", "bytes mapped at a time by the windowed mmap strategy (0 = 64MiB)")
	f.IntVar(&o.repeat, "repeat", 5, "rounds per row, each in a fresh process")
	f.StringVar(&o.cache, "cache", "warm,cold", "cache states to measure: warm, cold or both")
	f.StringVar(&o.gogc, "gogc", "", `GOGC for the measured processes, e.g. "off" (default: unset, Go's 100)`)
	f.StringVar(&o.work, "work", "lines", "work done on every chunk: lines (count lines, touching every byte)")
	f.StringVar(&o.tmpDir, "tmpdir", "", "directory for the generated sample (default: the system temp dir); it is removed afterwards")
	f.BoolVar(&o.asJSON, "json", false, "print the report as JSON")
	f.BoolVar(&o.markdown, "markdown", false, "print the report as Markdown tables")
	f.BoolVar(&o.gobench, "gobench", false, "print one go-test-style benchmark line per round, for benchstat")
	f.StringVar(&o.chart, "chart", "", "also write a chart of throughput and peak RSS to this file (.svg, .png or .pdf)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines on stderr")
	cmd.MarkFlagsMutuallyExclusive("json", "markdown", "gobench")
	return cmd
}

func runBenchIO(cmd *cobra.Command, o *benchIOOpts, files []string) error {
	cfg, err := o.config(files)
	if err != nil {
		return err
	}
	if !o.quiet {
		cfg.Progress = cmd.ErrOrStderr()
	}
	rep, err := benchio.Run(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	if o.chart != "" {
		if err := benchio.WriteChart(o.chart, rep); err != nil {
			return err
		}
	}
	return writeBenchReport(cmd.OutOrStdout(), o, rep)
}

// config turns the flags into a benchio.Config.
func (o *benchIOOpts) config(files []string) (benchio.Config, error) {
	exe, err := os.Executable()
	if err != nil {
		return benchio.Config{}, fmt.Errorf("cannot find the spate executable to run measurements in: %w", err)
	}
	if o.repeat < 1 {
		return benchio.Config{}, usagef("--repeat must be at least 1")
	}
	if o.workers < 0 {
		return benchio.Config{}, usagef("--workers must not be negative")
	}
	if o.size <= 0 && len(files) == 0 {
		return benchio.Config{}, usagef("--size must be positive")
	}
	cfg := benchio.Config{
		Files:        files,
		Size:         int64(o.size),
		Seed:         o.seed,
		TempDir:      o.tmpDir,
		Strategies:   splitList(o.strategies),
		Workers:      o.workers,
		ChunkSize:    int(o.chunkSize),
		MmapWindow:   int64(o.mmapWindow),
		Repeat:       o.repeat,
		Caches:       splitList(o.cache),
		GOGC:         o.gogc,
		Work:         o.work,
		ChildCommand: []string{exe, "bench", "io-child"},
	}
	return cfg, nil
}

func writeBenchReport(w io.Writer, o *benchIOOpts, rep *benchio.Report) error {
	switch {
	case o.asJSON:
		return benchenv.WriteJSON(w, rep)
	case o.markdown:
		return benchio.WriteMarkdown(w, rep)
	case o.gobench:
		return benchio.WriteGobench(w, rep)
	}
	return benchio.WriteTable(w, rep)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// newBenchIOChildCmd is the hidden command that performs one measured round
// in a fresh process for `spate bench io`.
func newBenchIOChildCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "io-child SPEC-JSON",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var spec benchio.ChildSpec
			if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
				return usagef("cannot parse the run spec: %v", err)
			}
			return benchio.RunChild(cmd.Context(), spec, cmd.OutOrStdout())
		},
	}
}
