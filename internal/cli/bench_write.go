package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/spate-io/spate/internal/benchenv"
	"github.com/spate-io/spate/internal/benchwrite"
)

// benchWriteOpts are the flags of `spate bench write`.
type benchWriteOpts struct {
	size       sizeFlag
	recordSize sizeFlag
	batch      int
	writers    string
	fsync      string
	repeat     int
	dir        string
	asJSON     bool
	chart      string
	quiet      bool
}

func newBenchWriteCmd() *cobra.Command {
	o := &benchWriteOpts{size: 64 << 20, recordSize: 100}
	cmd := &cobra.Command{
		Use:   "write",
		Short: "Compare ways of appending records to a file (write, bufio, writev, mmap)",
		Long: `Append --size bytes of generated NDJSON records of --record-size bytes to a
new file in --dir with each writer, in batches of --batch records, and report
per writer and fsync mode: records/s, MB/s, per-batch latency P50/P95/P99,
the system calls issued (counted, not estimated), and peak RSS.

Every run is a fresh child process: it makes the records in memory (all
--size bytes of them) before the clock starts, writes them, then (untimed) reads the file back and fails
unless it holds exactly the records, byte for byte. The file is removed
after each run. Writers:
  write      one write(2) per record, no buffer (the reference row: always run)
  bufio-4k   bufio.Writer with a 4 KiB buffer; one write(2) per full buffer
  bufio-64k  the same with 64 KiB
  bufio-1m   the same with 1 MiB
  writev     the batch's records handed to one writev(2) (up to 1024 per call)
  mmap       records copied into a shared mapping; the file grown 64 MiB at a
             time with fallocate(2) (ftruncate(2) where unsupported) and cut
             to size at the end
Fsync modes:
  none       never synced: the data is left in the page cache
  batch      after every batch: fdatasync(2) (bufio flushes first), msync(2)
             MS_SYNC of the dirty pages for mmap
  end        one fdatasync(2) after the last record

Units: Mrec/s = millions of records per second, from the first record to
the end of the final sync; MB/s = 1e6 bytes/s; latencies in milliseconds per
batch, its sync included; "vs write" = records/s over the write row with
the same fsync mode, measured in the same run; peak RSS in MB (ru_maxrss:
it counts the records held in memory and mapped file pages; "+RSS" is the
growth during the writes).

The report names the file system of --dir. Per-batch syncs measure the
storage under it: on tmpfs they are free; on a VM's virtual disk they may be
nearly free (a host cache that acknowledges at once) or take milliseconds
each, so "fsync batch" rows can be very fast or take minutes at small
--batch values. Needs the free space of one run's file in --dir (rounded up
to 64 MiB for mmap's preallocation); it refuses to start otherwise.`,
		Example: `  # all writers, all fsync modes, 64 MiB of 100-byte records
  spate bench write

  # 3 runs per row, with a chart
  spate bench write --fsync none --repeat 3 --chart write.svg

  # 1 KiB records, batches of 100, on the disk you care about
  spate bench write --record-size 1KiB --batch 100 --dir /var/lib/app

  # only the bufio writers (write is always run as the reference), as JSON
  spate bench write --writers bufio-4k,bufio-64k,bufio-1m --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runBenchWrite(cmd, o) },
	}
	f := cmd.Flags()
	f.Var(&o.size, "size", "bytes written per run, in whole records (e.g. 32MiB, 1GiB)")
	f.Var(&o.recordSize, "record-size", "bytes per record, the trailing newline included")
	f.IntVar(&o.batch, "batch", 1000, "records per batch: the unit of latency, of writev and of fsync=batch")
	f.StringVar(&o.writers, "writers", strings.Join(benchwrite.Writers, ","), "comma-separated writers to run; write is always added as the reference")
	f.StringVar(&o.fsync, "fsync", "none,batch,end", "comma-separated fsync modes: none, batch, end")
	f.IntVar(&o.repeat, "repeat", 1, "runs per writer and fsync mode, each in a fresh process; the median run is reported")
	f.StringVar(&o.dir, "dir", "", "directory to write the files in (default: the system temp dir, "+os.TempDir()+")")
	f.BoolVar(&o.asJSON, "json", false, "print the report as JSON")
	f.StringVar(&o.chart, "chart", "", "also write a bar chart of records/s per writer, one panel per fsync mode, to this file (.svg, .png or .pdf)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines on stderr")
	return cmd
}

func runBenchWrite(cmd *cobra.Command, o *benchWriteOpts) error {
	cfg, err := o.config()
	if err != nil {
		return err
	}
	if !o.quiet {
		cfg.Progress = cmd.ErrOrStderr()
	}
	rep, err := benchwrite.Run(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	if o.chart != "" {
		if err := benchwrite.WriteChart(o.chart, rep); err != nil {
			return err
		}
	}
	if o.asJSON {
		return benchenv.WriteJSON(cmd.OutOrStdout(), rep)
	}
	return benchwrite.WriteTable(cmd.OutOrStdout(), rep)
}

// config turns the flags into a benchwrite.Config, checking what it can
// before any child runs.
func (o *benchWriteOpts) config() (benchwrite.Config, error) {
	var zero benchwrite.Config
	if o.repeat < 1 {
		return zero, usagef("--repeat must be at least 1")
	}
	if o.batch < 1 {
		return zero, usagef("--batch must be at least 1")
	}
	if o.size <= 0 {
		return zero, usagef("--size must be positive")
	}
	if o.recordSize <= 0 || o.recordSize > 1<<30 {
		return zero, usagef("--record-size must be between 1 byte and 1GiB")
	}
	if int64(o.size) < int64(o.recordSize) {
		return zero, usagef("--size %s is less than one record of --record-size %s", o.size.String(), o.recordSize.String())
	}
	if lo := benchwrite.MinRecordSize(int64(o.size) / int64(o.recordSize)); int(o.recordSize) < lo {
		return zero, usagef("--record-size %d is too small for %d records: want at least %d bytes", int64(o.recordSize), int64(o.size)/int64(o.recordSize), lo)
	}
	writers := splitList(o.writers)
	for _, w := range writers {
		if !slices.Contains(benchwrite.Writers, w) {
			return zero, usagef("unknown writer %q in --writers: want %s", w, strings.Join(benchwrite.Writers, ", "))
		}
	}
	var modes []benchwrite.SyncMode
	for _, s := range splitList(o.fsync) {
		m, err := benchwrite.ParseSyncMode(s)
		if err != nil {
			return zero, usagef("invalid --fsync: %v", err)
		}
		modes = append(modes, m)
	}
	if len(modes) == 0 {
		return zero, usagef("--fsync names no mode: want none, batch or end")
	}
	exe, err := os.Executable()
	if err != nil {
		return zero, fmt.Errorf("cannot find the spate executable to run measurements in: %w", err)
	}
	return benchwrite.Config{
		Dir:          o.dir,
		Size:         int64(o.size),
		RecordSize:   int(o.recordSize),
		Batch:        o.batch,
		Writers:      writers,
		Syncs:        modes,
		Repeat:       o.repeat,
		ChildCommand: []string{exe, "bench", "write-child"},
	}, nil
}

// newBenchWriteChildCmd is the hidden command that performs one measured
// run in a fresh process for `spate bench write`.
func newBenchWriteChildCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "write-child SPEC-JSON",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var spec benchwrite.ChildSpec
			if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
				return usagef("cannot parse the run spec: %v", err)
			}
			return benchwrite.RunChild(cmd.Context(), spec, cmd.OutOrStdout())
		},
	}
}
