package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/spate-io/spate/internal/benchio"
	"github.com/spate-io/spate/internal/gen"
)

type demoOpts struct {
	size   sizeFlag
	seed   uint64
	dir    string
	repeat int
}

func newDemoCmd() *cobra.Command {
	o := &demoOpts{size: 512 << 20}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Make a sample log file and show spate on it",
		Long: `Make a sample of realistic NDJSON logs (kept in a cache directory and
reused next time), run a few LogsQL queries on it with their speed, then
compare the read strategies on it with a quick warm-cache 'bench io', and
print what to try next.`,
		Example: `  spate demo
  spate demo --size 64MiB          # quicker
  spate demo --dir /tmp/spate-demo # keep the sample somewhere else`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd, o) },
	}
	f := cmd.Flags()
	f.Var(&o.size, "size", "size of the sample")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the sample")
	f.StringVar(&o.dir, "dir", "", "directory for the cached sample (default: the user cache dir, e.g. ~/.cache/spate)")
	f.IntVar(&o.repeat, "repeat", 1, "rounds per strategy in the quick benchmark")
	return cmd
}

func runDemo(cmd *cobra.Command, o *demoOpts) error {
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if o.size <= 0 {
		return usagef("--size must be positive")
	}
	if o.repeat < 1 {
		return usagef("--repeat must be at least 1")
	}
	dir := o.dir
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "spate")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create the sample directory: %w", err)
	}
	sample := filepath.Join(dir, fmt.Sprintf("demo-seed%d-%s.ndjson", o.seed, formatSize(int64(o.size))))
	if err := ensureSample(cmd, sample, gen.Config{Seed: o.seed, Size: int64(o.size)}, errw); err != nil {
		return err
	}

	if err := demoQueries(cmd, out, sample); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n== How fast each read strategy gets through %s (warm cache, %d round(s) each) ==\n\n", sample, o.repeat)
	bo := &benchIOOpts{repeat: o.repeat, cache: "warm", work: "lines"}
	cfg, err := bo.config([]string{sample})
	if err != nil {
		return err
	}
	cfg.Progress = errw
	rep, err := benchio.Run(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	if err := benchio.WriteTable(out, rep); err != nil {
		return err
	}

	fmt.Fprintf(out, `
== Try next ==  (go install ./cmd/spate puts spate on your PATH; or use go run ./cmd/spate)
  spate query 'level:error | stats by (service) count() n | sort by (n desc)' %[1]s
  spate query --stats '"cache miss" | fields _time, service, _msg | limit 5' %[1]s
  spate bench query %[1]s                  # the standard queries, timed
  spate bench io --cache warm,cold %[1]s   # add cold-cache runs (5 rounds)
  spate bench io --size 2GiB --chart io.svg        # bigger sample, with a chart
  spate gen --size 1GiB --format csv -o logs.csv   # CSV or logfmt test data
  spate --help                                     # everything else
`, sample)
	return nil
}

// ensureSample makes the demo sample unless a complete one is already there.
// It generates into a temporary file and renames it, so an interrupted run
// never leaves a short sample behind to be reused.
func ensureSample(cmd *cobra.Command, path string, cfg gen.Config, errw io.Writer) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 && fi.Size() <= cfg.Size {
		fmt.Fprintf(errw, "using the cached sample %s (%s)\n", path, formatSize(fi.Size()))
		return nil
	}
	fmt.Fprintf(errw, "generating a %s sample in %s ...\n", formatSize(cfg.Size), path)
	start := time.Now()
	tmp := path + ".tmp"
	st, err := gen.WriteFile(cmd.Context(), tmp, cfg)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot move the sample into place: %w", err)
	}
	fmt.Fprintf(errw, "generated %d lines in %.1fs\n", st.Lines, time.Since(start).Seconds())
	return nil
}

// demoQueries runs a few example queries on the sample and prints their
// results and speed.
func demoQueries(cmd *cobra.Command, out io.Writer, sample string) error {
	examples := []string{
		`* | stats count() lines`,
		`level:error | stats by (service) count() errors | sort by (errors desc) | limit 5`,
		`status:>=500 | stats by (service) count() n, avg(latency_ms) avg_ms, quantile(0.95, latency_ms) p95_ms | sort by (n desc) | limit 5`,
		`~"timeout" | stats by (_time:1h) count() timeouts | limit 4`,
	}
	for _, q := range examples {
		fmt.Fprintf(out, "\n== spate query '%s' ==\n\n", q)
		opts := queryOptions{format: "table", stats: true, strategy: "auto"}
		if err := runQuery(cmd.Context(), opts, q, []string{sample}, out, out); err != nil {
			return err
		}
	}
	return nil
}
