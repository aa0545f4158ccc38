package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/spate-io/spate/internal/gen"
)

// genOptions are the flags of `spate gen`.
type genOptions struct {
	seed    uint64
	size    int64
	format  string
	output  string // "" or "-" means stdout
	workers int
	layouts int
}

func newGenCmd() *cobra.Command {
	var (
		opts genOptions
		size sizeFlag = 1 << 30
	)
	cmd := &cobra.Command{
		Use:   "gen [flags]",
		Short: "Generate deterministic, realistic log data",
		Long: `Generate realistic web-service logs: timestamps, levels, services, hosts,
HTTP methods, paths, status codes, latencies, trace and user ids, messages
with escaped quotes and non-ASCII text, nested objects, and the odd missing
or extra field.

The output is a pure function of --seed, --size and --format: the same
values give byte-identical output on every machine and for any --workers.
It is the longest run of whole lines that fits in --size bytes.

When writing to a file, a one-line summary goes to stderr. An interrupted
or failed run removes the partial file.`,
		Example: `  # 1 GiB of NDJSON into a file
  spate gen -o logs.ndjson

  # 64 KiB of logfmt with another seed, to the terminal
  spate gen --size 64KiB --seed 7 --format logfmt

  # 2 GiB of CSV for a read benchmark, using 4 goroutines
  spate gen --size 2GiB --format csv --workers 4 -o /tmp/logs.csv

  # pipe a small sample into another tool
  spate gen --size 1MiB | head -n 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.size = int64(size)
			return runGen(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.Uint64Var(&opts.seed, "seed", 1, "random seed (integer); the same seed, size and format give the same bytes")
	fl.Var(&size, "size", "output size in bytes, with an optional unit such as 64KiB, 512MiB, 2GiB or 1GB")
	fl.StringVar(&opts.format, "format", "ndjson", "output format: "+strings.Join(gen.Formats(), ", "))
	fl.StringVarP(&opts.output, "output", "o", "-", `output file, created or truncated; "-" means stdout`)
	fl.IntVar(&opts.layouts, "layouts", 1, "NDJSON only: lines in this many field layouts (key orders and sets), by service, as when services with different loggers share a file (1 to 16)")
	fl.IntVar(&opts.workers, "workers", 0, "goroutines generating in parallel (count); does not change the output (default 0: one per CPU, GOMAXPROCS)")
	return cmd
}

// runGen validates opts, generates to stdout or the output file and, for a
// file, prints a one-line summary to stderr.
func runGen(ctx context.Context, opts genOptions, stdout, stderr io.Writer) error {
	if opts.format != "" && !slices.Contains(gen.Formats(), opts.format) {
		return usagef("unknown format %q: want ndjson, csv or logfmt", opts.format)
	}
	if opts.workers < 0 {
		return usagef("invalid --workers %d: want 0 (one per CPU) or more", opts.workers)
	}
	if opts.layouts < 1 || opts.layouts > 16 {
		return usagef("invalid --layouts %d: want 1 to 16", opts.layouts)
	}
	if opts.layouts > 1 && opts.format != "" && opts.format != "ndjson" {
		return usagef("--layouts is for NDJSON; --format %s has one layout", opts.format)
	}
	cfg := gen.Config{Seed: opts.seed, Size: opts.size, Format: opts.format, Workers: opts.workers, Layouts: opts.layouts}
	if opts.output == "" || opts.output == "-" {
		_, err := gen.Write(ctx, stdout, cfg)
		return err
	}
	start := time.Now()
	st, err := gen.WriteFile(ctx, opts.output, cfg)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	fmt.Fprintf(stderr, "spate gen: wrote %s (%s lines) to %s in %s (%.0f MB/s)\n",
		formatSize(st.Bytes), formatThousands(st.Lines), opts.output,
		formatSeconds(elapsed), float64(st.Bytes)/1e6/max(elapsed.Seconds(), 1e-9))
	return nil
}

// formatThousands prints n with comma separators: 2860000 -> "2,860,000".
func formatThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// formatSeconds prints d with one decimal in seconds, or in milliseconds
// below one second: "4.1s", "230ms".
func formatSeconds(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
}
