package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/gen"
	"github.com/spate-io/spate/internal/query"
)

// StandardQueries are the queries `spate bench query` and `spate demo` run:
// the performance set.
var standardQueries = []string{
	`* | stats count()`,
	`level:error | stats count()`,
	`~"timeout" | stats count()`,
	`* | stats by (service) count()`,
	`status:>=500 | stats by (service) count(), avg(latency_ms), quantile(0.95, latency_ms)`,
	`* | stats by (path) sum(bytes) s | sort by (s desc) | limit 10`,
}

type benchQueryOpts struct {
	size     sizeFlag
	seed     uint64
	layouts  int
	dir      string
	repeat   int
	workers  int
	strategy string
	queries  []string
	json     bool
	compress []string
}

func newBenchQueryCmd() *cobra.Command {
	o := &benchQueryOpts{size: 512 << 20}
	cmd := &cobra.Command{
		Use:   "query [FILE]",
		Short: "Time the standard LogsQL queries on generated (or your) logs",
		Long: `Run a standard set of LogsQL queries (or your own with --query) on a log
file and report, per query, the median wall time over --repeat rounds, GB/s,
lines/s, rows returned and peak RSS. Every round runs in a fresh child
process, so peak RSS is the query's own (it counts mapped file pages).

Without FILE, a --size sample made by spate gen is used, kept in the cache
directory like spate demo's. On your own FILE the standard queries use its
field names (severity for level, app for service, status_code for status,
...; looked up in its first 2,000 logs); those that need a field it lacks
are left out, and stderr says which. The file is read once before timing, so the
numbers are warm-cache numbers.

--compressed gzip,zstd also times every query on a gzip (level 6) and a zstd
(level 3) copy of the file, made once beside the sample (or in --dir, or a
temporary directory for your FILE), with its speed relative to the plain
file; and, when gzip/zstd and rg (ripgrep) are installed, the literal query
against "gzip -dc FILE.gz | rg -c timeout" (and zstd's), whose count must
equal spate's.`,
		Example: `  spate bench query                       # 512 MiB sample, 3 rounds per query
  spate bench query --size 2GiB --repeat 5
  spate bench query --json app.ndjson > bench.json
  spate bench query --size 1GiB --compressed gzip,zstd
  spate bench query --query 'level:error | stats by (service) count()' app.ndjson`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runBenchQuery(cmd, o, args) },
	}
	f := cmd.Flags()
	f.Var(&o.size, "size", "size of the generated sample when no FILE is given")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the generated sample")
	f.IntVar(&o.layouts, "layouts", 1, "field layouts in the generated sample (see spate gen --layouts)")
	f.StringVar(&o.dir, "dir", "", "directory for the cached sample (default: the user cache dir, e.g. ~/.cache/spate)")
	f.IntVar(&o.repeat, "repeat", 3, "rounds per query; the median is reported")
	f.IntVar(&o.workers, "workers", 0, "query workers (default 0: one per CPU)")
	f.StringVar(&o.strategy, "strategy", "auto", "read strategy: auto, mmap, pread, bufio or stream")
	f.StringArrayVar(&o.queries, "query", nil, "a query to run instead of the standard set (repeatable)")
	f.BoolVar(&o.json, "json", false, "print the results as JSON")
	f.StringSliceVar(&o.compress, "compressed", nil, "also time the queries on compressed copies: gzip, zstd or both (comma-separated)")
	return cmd
}

// benchQueryResult is one child's measurement of one query round.
type benchQueryResult struct {
	Seconds   float64 `json:"seconds"`
	Bytes     int64   `json:"bytes"`
	Lines     int64   `json:"lines"`
	Matched   int64   `json:"matched"`
	Rows      int64   `json:"rows"`
	PeakRSSMB float64 `json:"peak_rss_mb"`
	Strategy  string  `json:"strategy"`
}

// benchQueryRow is the report for one query.
type benchQueryRow struct {
	Query         string             `json:"query"`
	MedianSeconds float64            `json:"median_seconds"`
	GBps          float64            `json:"gb_per_s"`
	LinesPerSec   float64            `json:"lines_per_s"`
	Rows          int64              `json:"rows"`
	PeakRSSMB     float64            `json:"peak_rss_mb"`
	Rounds        []benchQueryResult `json:"rounds"`
}

func runBenchQuery(cmd *cobra.Command, o *benchQueryOpts, args []string) error {
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if o.repeat < 1 {
		return usagef("--repeat must be at least 1")
	}
	if _, err := fileread.ParseStrategy(o.strategy); err != nil {
		return usagef("invalid --strategy: %v", err)
	}
	queries := o.queries
	if len(queries) == 0 {
		queries = standardQueries
	}
	for _, q := range queries {
		if _, err := query.Parse(q, time.Now()); err != nil {
			return usagef("invalid --query %q: %v", q, err)
		}
	}
	codecs, err := parseCodecs(o.compress)
	if err != nil {
		return usagef("invalid --compressed: %v", err)
	}
	file, copyDir := "", o.dir
	if len(args) == 1 {
		file = args[0]
		if len(codecs) > 0 {
			if c, err := fileCompression(file); err != nil {
				return err
			} else if c != fileread.None {
				return usagef("--compressed needs an uncompressed FILE; %s is %s-compressed", file, c)
			}
			if copyDir == "" {
				tmp, err := os.MkdirTemp("", "spate-bench-query-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				copyDir = tmp
			}
		}
	} else {
		dir, err := sampleDir(o.dir)
		if err != nil {
			return err
		}
		if o.layouts < 1 || o.layouts > 16 {
			return usagef("invalid --layouts %d: want 1 to 16", o.layouts)
		}
		name := fmt.Sprintf("demo-seed%d-%s.ndjson", o.seed, formatSize(int64(o.size)))
		if o.layouts > 1 {
			name = fmt.Sprintf("demo-seed%d-%s-layouts%d.ndjson", o.seed, formatSize(int64(o.size)), o.layouts)
		}
		file = filepath.Join(dir, name)
		copyDir = dir
		if err := ensureSample(cmd, file, gen.Config{Seed: o.seed, Size: int64(o.size), Layouts: o.layouts}, errw); err != nil {
			return err
		}
	}
	if len(args) == 1 && len(o.queries) == 0 {
		fields, err := sampleFieldNames(cmd.Context(), file)
		if err != nil {
			return err
		}
		var notes []string
		queries, notes = adaptQueries(fields)
		for _, n := range notes {
			fmt.Fprintf(errw, "bench query: %s\n", n)
		}
	}
	lines, err := warmFile(file)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the spate binary to run rounds in: %w", err)
	}
	var rows []benchQueryRow
	for _, q := range queries {
		fmt.Fprintf(errw, "bench query: %s ", q)
		row := benchQueryRow{Query: q}
		for range o.repeat {
			res, err := runQueryChild(cmd.Context(), exe, file, q, o.workers, o.strategy)
			if err != nil {
				return err
			}
			row.Rounds = append(row.Rounds, res)
			fmt.Fprint(errw, ".")
		}
		fmt.Fprintln(errw)
		secs := make([]float64, len(row.Rounds))
		for i, r := range row.Rounds {
			secs[i] = r.Seconds
			row.PeakRSSMB = max(row.PeakRSSMB, r.PeakRSSMB)
		}
		slices.Sort(secs)
		row.MedianSeconds = secs[len(secs)/2]
		row.GBps = float64(row.Rounds[0].Bytes) / 1e9 / row.MedianSeconds
		row.LinesPerSec = float64(lines) / row.MedianSeconds
		row.Rows = row.Rounds[0].Rows
		rows = append(rows, row)
	}
	var compressed []benchCompressed
	if len(codecs) > 0 {
		if compressed, err = benchCompressedRuns(cmd.Context(), o, exe, file, copyDir, rows, codecs, errw); err != nil {
			return err
		}
	}
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		res := map[string]any{"file": file, "repeat": o.repeat, "queries": rows}
		if compressed != nil {
			res["compressed"] = compressed
		}
		return enc.Encode(res)
	}
	fi, _ := os.Stat(file)
	var size int64
	if fi != nil {
		size = fi.Size()
	}
	fmt.Fprintf(out, "spate bench query: %s (%s), warm cache, median of %d round(s), %s\n\n", file, formatSize(size), o.repeat, strategyNote(rows))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "seconds\tGB/s\tMlines/s\trows\tpeak RSS MiB\t query")
	for _, r := range rows {
		fmt.Fprintf(tw, "%.3f\t%.2f\t%.1f\t%d\t%.0f\t %s\n", r.MedianSeconds, r.GBps, r.LinesPerSec/1e6, r.Rows, r.PeakRSSMB/1.048576, r.Query)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printCompressed(out, compressed)
}

// fileCompression returns the compression of file from its magic bytes.
func fileCompression(file string) (fileread.Compression, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	c, err := fileread.DetectFile(f)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", file, err)
	}
	return c, nil
}

// benchFieldRoles are the fields the standard queries use and, for each,
// the names logs commonly give it, in order of preference.
var benchFieldRoles = []struct {
	role  string
	names []string
}{
	{"level", []string{"level", "severity", "lvl", "log.level", "loglevel", "levelname"}},
	{"service", []string{"service", "service.name", "app", "app_name", "application", "component", "logger", "hostname", "host"}},
	{"status", []string{"status", "status_code", "http.status", "http.status_code", "response.status", "statusCode", "code"}},
	{"latency_ms", []string{"latency_ms", "duration_ms", "latency", "duration", "elapsed", "response_time", "request_time", "took"}},
	{"path", []string{"path", "url", "uri", "http.path", "request", "route", "endpoint"}},
	{"bytes", []string{"bytes", "size", "bytes_sent", "body_bytes_sent", "response_size", "length", "content_length"}},
}

// sampleFieldNames returns the field names of the first 2,000 logs of
// file, read as spate query reads it.
func sampleFieldNames(ctx context.Context, file string) (map[string]bool, error) {
	q, err := query.Parse("* | limit 2000 | field_names", time.Now())
	if err != nil {
		return nil, err
	}
	var names fieldNameSink
	var discard bytes.Buffer
	sn, err := sniffInputs([]string{file}, "auto", true, nil, &discard)
	if err != nil || len(sn.names) == 0 {
		return nil, fmt.Errorf("cannot read %s: %s", file, strings.TrimSpace(discard.String()))
	}
	if _, err := query.Run(ctx, q, sn.names, fileread.Config{}, query.Options{InputFormats: sn.formats}, &names); err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return names, nil
}

type fieldNameSink map[string]bool

func (s *fieldNameSink) WriteRow(r *query.Row) error {
	if *s == nil {
		*s = map[string]bool{}
	}
	(*s)[r.Get("name")] = true
	return nil
}

// adaptQueries rewrites the standard queries with the field names a file
// has (level may be severity, service app, ...), leaving out those that
// need a field it lacks; notes say what was renamed and what was left out.
func adaptQueries(fields map[string]bool) (queries, notes []string) {
	rename := map[string]string{}
	var missing []string
	for _, r := range benchFieldRoles {
		found := ""
		for _, n := range r.names {
			if fields[n] {
				found = n
				break
			}
		}
		switch {
		case found == "":
			missing = append(missing, r.role)
			notes = append(notes, fmt.Sprintf("no %s field (looked for %s): queries that need it are left out; give your own with --query", r.role, strings.Join(r.names, ", ")))
		case found != r.role:
			rename[r.role] = found
			notes = append(notes, fmt.Sprintf("using the field %s for %s", found, r.role))
		}
	}
	for _, q := range standardQueries {
		words := strings.FieldsFunc(q, func(c rune) bool { return strings.ContainsRune(" (),:|", c) })
		skip := false
		for _, w := range words {
			if slices.Contains(missing, w) {
				skip = true
			}
		}
		if skip {
			continue
		}
		for role, name := range rename {
			q = replaceField(q, role, quoteFieldName(name))
		}
		queries = append(queries, q)
	}
	return queries, notes
}

// replaceField replaces the field name old in q where it stands as a
// whole word (before ':' in a filter, or inside parentheses).
func replaceField(q, old, name string) string {
	var b strings.Builder
	for i := 0; i < len(q); {
		if strings.HasPrefix(q[i:], old) && (i == 0 || strings.ContainsRune(" (,", rune(q[i-1]))) &&
			(i+len(old) == len(q) || strings.ContainsRune(" ),:", rune(q[i+len(old)]))) {
			b.WriteString(name)
			i += len(old)
			continue
		}
		b.WriteByte(q[i])
		i++
	}
	return b.String()
}

// quoteFieldName quotes a field name that LogsQL would not read as one word.
func quoteFieldName(n string) string {
	for _, c := range n {
		if !(c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return fmt.Sprintf("%q", n)
		}
	}
	return n
}

func strategyNote(rows []benchQueryRow) string {
	if len(rows) == 0 || len(rows[0].Rounds) == 0 {
		return ""
	}
	return "read with " + rows[0].Rounds[0].Strategy
}

// sampleDir returns dir or the default cache directory, created.
func sampleDir(dir string) (string, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "spate")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cannot create the sample directory: %w", err)
	}
	return dir, nil
}

// warmFile reads path once so that timed rounds find it in the page cache,
// and counts its lines (for lines/s, without making every round count them).
func warmFile(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var lines int64
	buf := make([]byte, 1<<20)
	last := byte('\n')
	for {
		n, err := f.Read(buf)
		if n > 0 {
			lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
			last = buf[n-1]
		}
		if err == io.EOF {
			if last != '\n' {
				lines++
			}
			return lines, nil
		}
		if err != nil {
			return 0, fmt.Errorf("cannot read %s: %w", path, err)
		}
	}
}

// runQueryChild runs one round in a fresh process and decodes its result.
func runQueryChild(ctx context.Context, exe, file, q string, workers int, strategy string) (benchQueryResult, error) {
	c := exec.CommandContext(ctx, exe, "bench", "query-child", "--workers", fmt.Sprint(workers), "--strategy", strategy, q, file)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return benchQueryResult{}, fmt.Errorf("query round %q failed: %w: %s", q, err, strings.TrimSpace(stderr.String()))
	}
	var res benchQueryResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return res, fmt.Errorf("cannot decode the result of a query round: %w (%q)", err, stdout.String())
	}
	return res, nil
}

// countSink counts result rows and discards them.
type countSink struct{ n int64 }

func (s *countSink) WriteRow(*query.Row) error { s.n++; return nil }

// newBenchQueryChildCmd is the hidden command that runs one measured query
// round for `spate bench query` and prints its result as JSON.
func newBenchQueryChildCmd() *cobra.Command {
	var workers int
	var strategy string
	cmd := &cobra.Command{
		Use:    "query-child QUERY FILE",
		Hidden: true,
		Args:   cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := query.Parse(args[0], time.Now())
			if err != nil {
				return err
			}
			st, err := fileread.ParseStrategy(strategy)
			if err != nil {
				return usagef("%v", err)
			}
			var sink countSink
			start := time.Now()
			qs, err := query.Run(cmd.Context(), q, []string{args[1]}, fileread.Config{Workers: workers, Strategy: st, MmapWindow: queryMmapWindow, SkipLongLines: true}, query.Options{}, &sink)
			if err != nil {
				return err
			}
			res := benchQueryResult{Seconds: time.Since(start).Seconds(), Bytes: qs.Bytes, Lines: qs.Lines, Matched: qs.Matched, Rows: sink.n}
			if len(qs.Strategies) > 0 {
				res.Strategy = string(qs.Strategies[0])
			}
			var ru syscall.Rusage
			if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
				res.PeakRSSMB = float64(ru.Maxrss) * 1024 / 1e6 // ru_maxrss is in KiB on Linux
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
		},
	}
	cmd.Flags().IntVar(&workers, "workers", 0, "")
	cmd.Flags().StringVar(&strategy, "strategy", "auto", "")
	return cmd
}
