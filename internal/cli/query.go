package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/follow"
	"github.com/spate-io/spate/internal/output"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/segment"
	"github.com/spate-io/spate/internal/storescan"
	"github.com/spate-io/spate/internal/timeparse"
)

// queryOptions are the flags of `spate query`.
type queryOptions struct {
	format      string
	msgField    string
	timeField   string
	workers     int
	strategy    string
	chunkSize   int64
	maxLineSize int64
	maxMemory   int64
	groupMemory int64
	tempDir     string
	cpuProfile  string
	approx      bool
	progress    bool
	stats       bool
	now         string
	tenant      string
	tz          string
	timeFormat  string
	inputFormat string
	binary      bool
	follow      bool
	tail        int
	since       string
	until       string
	output      string
	every       time.Duration
	noIndex     bool
	merge       bool
	mergeWindow int
	stdin       io.Reader
	stdinTTY    bool
	stdoutTTY   bool
}

func newQueryCmd() *cobra.Command {
	var (
		opts      queryOptions
		chunk     sizeFlag
		maxLine   sizeFlag = sizeFlag(fileread.DefaultMaxLineSize)
		maxMemory sizeFlag = 1 << 30
		groupMem  sizeFlag
	)
	cmd := &cobra.Command{
		Use:   "query [flags] 'LOGSQL' [FILE|DIR|GLOB|-]...",
		Short: "Filter and aggregate NDJSON and plain-text logs in place with LogsQL",
		Long: `Run a LogsQL query (the query language of VictoriaLogs) over log files,
in place: no ingestion step. Lines are searched on raw bytes first and only
candidates are parsed, by several workers at once.

Inputs are files, directories (read recursively, in name order, hidden
files left out), globs and
"-" for stdin; gzip, zstd, bzip2 and xz files are decompressed (known by
their first bytes, whatever their names). With no input, stdin is
read (unless it is a terminal). A spate serve data directory (--data DIR) is read as a store, also
while the server writes it: the segments of one tenant (--tenant, default
0:0), each once and only as far as its acknowledged lines, skipping those
whose metadata puts them outside the query's top-level _time range or
stream filters (--stats says how many). Each line is a log: a JSON object (nested objects flatten to dotted
names: http.ua), or plain text whose _msg is the whole line. Files of
logfmt (level=info msg="a b"), of CSV or TSV with a header line, and of
syslog (RFC 5424 or 3164; fields named as VictoriaLogs' unpack_syslog
names them: hostname, app_name, proc_id, level, ...) are read as fields too: the format is guessed per file from its first 64 KiB
(--input-format forces one; stdin is JSON or plain text unless forced).
Lines with a timestamp in front ("TIME {json}" from kubectl --timestamps,
"TIME stdout F {json}" from CRI log files) keep their JSON and take that
time as _time when they have none; plain text that starts with an RFC
3339 time gets it as _time (its _msg stays the whole line).
Files with a NUL byte in their first 64 KiB are binary and skipped with a
warning, as ripgrep does (--binary reads them); a file that cannot be
read is named on stderr and skipped, the rest is read, and the exit
status is 1. _msg comes from
the first of _msg, msg, message, log; _time from _time, ts, time, timestamp,
@timestamp unless --msg-field/--time-field say otherwise. Time values are
read whatever their shape: RFC 3339 and its relatives (a space for the T,
any fraction after '.' or ',', a zone of Z, +HH:MM, +HHMM, +HH or none),
Unix seconds/ms/us/ns (numbers or strings, the unit from the magnitude),
nginx/Apache "10/Oct/2026:13:55:36 -0700" and syslog "Oct 11 22:14:15".
Values without a zone are wall times in --tz (default: local, as
VictoriaLogs reads them); --time-format reads one shape only. A value that
cannot be read keeps its line and its field (the row has no _time); they
are counted and the first is named on stderr with file:line. Invalid JSON, invalid UTF-8 and binary lines are read as plain
text and counted (see --stats); lines longer than --max-line-size are
skipped, counted and named on stderr; nothing is skipped silently.

Output rows are NDJSON whose values are all strings, as VictoriaLogs returns
them; --format table prints an aligned table (the default for stats-like
results on a terminal) and --format csv a CSV file. Row output keeps file
order. Table and CSV columns are in the order the query names them (fields,
stats by); then rows stream, the table sized by its first 1,000 rows.
Without such a list the columns come in first-seen order and the rows are
held until the end, past 32 MiB in an unlinked file in --temp-dir, so
memory stays bounded. -o FILE writes the results to FILE, which appears
under its name only once the query has finished.

--stats counts bad lines among the lines parsed: lines that the raw-byte
prefilter rules out, and all lines of '* | stats count()', are not parsed,
and a line that a filter on ordinary fields (status:>=500) rejects is read
only until the filter has its fields. Answers are exact either way: a bad
line is plain text, which those filters reject too.

count_uniq, quantile and median are exact until the exact state passes
--max-memory; then they switch to HyperLogLog and DDSketch (1% relative
error) and a note on stderr says which results are approximate. --approx
uses sketches from the start.

A stats pipe with more groups than --group-memory holds (by path, by
user_id...) writes partial results to unlinked temp files in --temp-dir and
adds them up one hash partition at a time: memory stays bounded and results
stay exact. Only count, count_empty, sum, avg, sum_len and rate spill; a
stats pipe with any other function keeps its groups in memory. --stats
shows the bytes spilled.

Supported filters: word, "phrase", prefix*, ~"regexp", ="exact", ="prefix"*,
in(), contains_any(), contains_all(), seq(), i(), comparisons (>, >=, <, <=),
range(), len_range(), string_range(), ipv4_range(), ipv6_range(),
eq_field(), le_field(), lt_field(), contains_common_case(),
equals_common_case(), json_array_contains_any(), pattern_match() (and
_full, _prefix, _suffix: <N> <UUID> <IP4> <TIME> <DATE> <DATETIME> <W>),
f:"" (empty), f:* (any), _time: (relative or absolute; day_range[08:00,
18:00) and week_range[Mon, Fri], offset D or the local zone), stream
filters {app="x", env=~"prod.*" or zone in(a, b)} (also as _stream:{...};
=, !=, =~ and !~ match whole values, as in VictoriaLogs) over the _stream
field that spate serve writes with _stream_fields (a log without one is in
the stream {}), _stream_id:ID and _stream_id:in(...), AND, OR, NOT/-/!,
parentheses. Values are numbers as VictoriaLogs reads them: 1.5s, 2KB,
0x1F and 1_000 too, and in comparisons, ranges and math RFC 3339 times and
IPv4 addresses.

Pipes: fields, delete, rename, copy, filter, limit, offset, sort (with
partition by and rank), first, last, stats, running_stats, total_stats,
top, uniq (with filter), extract, extract_regexp, unpack_json,
unpack_logfmt, unpack_syslog, unpack_words, math (with & xor or, now(),
rand()), format, len, unroll, replace, replace_regexp, drop_empty_fields,
pack_json, pack_logfmt, coalesce, decolorize, hash, json_array_len,
json_array_concat, collapse_nums, split, time_add, sample,
generate_sequence, set_stream_fields, field_names, field_values, facets,
join, union and stream_context (right after the filter; it reads the
inputs again, so not over stdin or with -f). Stats functions: count, count_empty, count_uniq,
count_uniq_hash, sum, avg, min, max, median, quantile, values,
uniq_values, row_min, row_max, row_any, any, field_min, field_max,
stddev, rate, rate_sum, sum_len, histogram and json_values; by fields,
and buckets with an offset (_time:1h, _time:month, status:100).
running_stats and total_stats take count, sum, min, max, first, last.

Subqueries: join by (a) (QUERY), union (QUERY), f:in(QUERY | fields x),
contains_any(...), contains_all(...) and _stream_id:in(...) run QUERY
over the same inputs first (rows({...}) writes rows out instead). A
subquery reads the inputs again, so it cannot run over stdin or with -f.
A query may start with options(concurrency=N, parallel_readers=N,
ignore_global_time_filter=true, global_filter=(FILTER), time_offset=1d).
Anything else is refused by name (block_stats, value_type, ...).

-f follows the files as tail -F does: it starts with the last --tail lines
of each, reads on as they grow, through rotation by rename and create and
by copytruncate, picks up new files in the directories and globs given,
and prints matching rows as they come (within about 200 ms); Ctrl-C ends
it. Each file is read in its own format (guessed from its start when its
first line is read, or --input-format; a CSV file's header is its first
line, read again after a truncation). Queries that need all input (stats, sort, uniq, top, field_names,
field_values, facets) need --every DURATION with -f: every DURATION they
print their result over the lines read so far (on a terminal the screen is
redrawn, as watch does; otherwise snapshot follows snapshot, separated by
an empty line; stats groups then stay in memory). --every works on slow
stdin too. .gz, .zst, .bz2 and .xz files are not followed. Rows from stdin and pipes
are printed as lines come too.

Inputs are read one after another (a rotated set, app.log.2.gz, app.log.1,
app.log, oldest first). --merge interleaves the rows of all inputs by
_time instead, as hl --sort does: each input is read on its own and the
rows are merged, each file put in order within --merge-window rows (memory:
that many rows per input); a line without a time stays after the line
before it. limit, offset and the pipes after them apply to the merged rows.

On a terminal, a progress bar on stderr shows bytes read, GB/s and ETA;
it is removed before the first result is written to the same terminal.
With no input and a terminal on stdin, spate query says so and exits
instead of waiting for typing ("-" reads the terminal until Ctrl-D).

Exit status: 0 ok, 1 query or runtime error, 2 usage error, 130 interrupted
(Ctrl-C or SIGTERM; a read that cannot see the signal is given a second).`,
		Example: `  # count errors in a 2 GiB file
  spate query 'level:error | stats count()' app.ndjson

  # the slowest services among 5xx responses
  spate query 'status:>=500 | stats by (service) count() n, avg(latency_ms), quantile(0.95, latency_ms) p95 | sort by (n desc)' logs/

  # top paths by bytes, as a table
  spate query --format table '* | stats by (path) sum(bytes) s | sort by (s desc) | limit 10' 'logs/*.ndjson.gz'

  # plain-text logs: pull fields out of the message
  spate query '"connection refused" | extract "tcp <ip>:<port>" | stats by (ip) count()' /var/log/app.log

  # follow the error lines of every log in a directory, through rotation
  spate query -f 'level:error | fields _time, service, _msg' /var/log/app/

  # a live table of errors per service, redrawn every 5 seconds
  spate query -f --every 5s 'level:error | stats by (service) count() n | sort by (n desc)' /var/log/app/

  # the errors of several services' logs, interleaved by time
  spate query --merge 'level:error | fields _time, service, _msg' api.log web.log worker.log

  # requests per minute over the last hour, from stdin
  kubectl logs deploy/api | spate query '_time:1h | stats by (_time:1m) count()' -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.chunkSize = int64(chunk)
			opts.maxLineSize = int64(maxLine)
			opts.maxMemory = int64(maxMemory)
			opts.groupMemory = int64(groupMem) // 0 when not set: the per-worker default
			if opts.groupMemory == 0 && cmd.Flags().Changed("group-memory") {
				opts.groupMemory = -1 // never spill
			}
			if !cmd.Flags().Changed("progress") {
				opts.progress = isTerminal(cmd.ErrOrStderr())
			}
			if cmd.Flags().Changed("tail") && !opts.follow {
				return usageError{errors.New("--tail is for -f (the last lines of each file, then new ones); for the last N rows of a query, add '| sort by (_time) desc | limit N'")}
			}
			opts.stdoutTTY = opts.output == "" && isTerminal(cmd.OutOrStdout())
			if in := cmd.InOrStdin(); in != os.Stdin {
				opts.stdin = in
			}
			opts.stdinTTY = isTerminalFile(cmd.InOrStdin())
			return runQuery(cmd.Context(), opts, args[0], args[1:], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.output, "output", "o", "", "write the results to this file instead of stdout; it appears under its name only when the query has finished (with -f it is written as rows come)")
	fl.StringVar(&opts.format, "format", "", "output format: ndjson, json, csv or table (default: table for stats-like results on a terminal, else ndjson)")
	fl.StringVar(&opts.msgField, "msg-field", "", "field that holds the message (_msg); default: the first of _msg, msg, message, log")
	fl.StringVar(&opts.timeField, "time-field", "", "field that holds the time (_time); default: the first of _time, ts, time, timestamp, @timestamp")
	fl.BoolVarP(&opts.follow, "follow", "f", false, "keep reading the files as they grow, through rotation (rename and create, or copytruncate), and files that appear in the directories or globs given; print rows as they come; Ctrl-C ends")
	fl.StringVar(&opts.since, "since", "", `only logs at or after this time: a duration back from now (15m, 2h, 1d), RFC 3339, a date (2026-11-24) or Unix seconds; values without a zone are in --tz`)
	fl.StringVar(&opts.until, "until", "", "only logs at or before this time (the forms of --since)")
	fl.BoolVar(&opts.noIndex, "no-index", false, "over spate serve data directories: read every segment's lines, ignoring the sidecar indexes (which let stats read columns instead of lines and skip blocks a filter rules out; the answer is the same)")
	fl.DurationVar(&opts.every, "every", 0, "for queries that need all input (stats, sort, top, uniq, ...): print the result so far every DURATION while reading (with -f, or a slow stdin); redrawn on a terminal, else one snapshot after another, separated by an empty line")
	fl.BoolVar(&opts.merge, "merge", false, "interleave the rows of all inputs in _time order (each file in order within --merge-window rows), instead of one input after another")
	fl.IntVar(&opts.mergeWindow, "merge-window", defaultMergeWindow, "with --merge: rows of each input held to put slightly unordered lines in place (memory: this many rows per input)")
	fl.IntVar(&opts.tail, "tail", 10, "with -f: start with the last N lines of each file (0: only new lines)")
	fl.StringVar(&opts.inputFormat, "input-format", "auto", "how lines become fields: auto (guessed per file from its first 64 KiB), json (JSON objects; other lines plain text), logfmt, csv or tsv (with a header line), syslog (RFC 5424 or 3164), plain")
	fl.BoolVar(&opts.binary, "binary", false, "read files with a NUL byte in their first 64 KiB too (default: skipped with a warning, as ripgrep does)")
	fl.StringVar(&opts.tz, "tz", "Local", `time zone of time values that name none ("2026-11-24 20:00:00", syslog): Local, UTC, an IANA name such as Europe/Berlin, or an offset such as +05:30`)
	fl.StringVar(&opts.timeFormat, "time-format", "auto", "how to read time values: auto (detect each), rfc3339, unix, unix_s, unix_ms, unix_us, unix_ns, clf, syslog, or a Go layout such as '2006-01-02 15:04:05.000'")
	fl.IntVar(&opts.workers, "workers", 0, "goroutines scanning in parallel (count; default 0: one per CPU, GOMAXPROCS)")
	fl.StringVar(&opts.strategy, "strategy", "auto", "read strategy: auto, mmap, pread, bufio or stream (see spate bench io)")
	fl.Var(&chunk, "chunk-size", "bytes per work item, e.g. 1MiB (default 0: the strategy's own)")
	fl.Var(&maxLine, "max-line-size", "longest line read; longer lines are skipped without being held in memory, counted, and named (file and offset) on stderr")
	fl.Var(&maxMemory, "max-memory", "memory for exact count_uniq, quantile and group state before switching to sketches, and for the rows a sort keeps (past it the query fails; 0: no cap)")
	fl.Var(&groupMem, "group-memory", fmt.Sprintf("memory for stats groups, shared by the workers, before partial counts and sums spill to temp files in --temp-dir (exact; 0: never spill) (default %s per worker)", formatSize(query.DefaultGroupMemory)))
	fl.StringVar(&opts.tempDir, "temp-dir", "", "directory for spill files (default: $TMPDIR or /tmp)")
	fl.StringVar(&opts.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (for go tool pprof)")
	fl.MarkHidden("cpuprofile")
	fl.BoolVar(&opts.approx, "approx", false, "use sketches (HyperLogLog, DDSketch) for count_uniq and quantiles from the start: bounded memory, approximate results")
	fl.BoolVar(&opts.progress, "progress", false, "show bytes done, %, GB/s and ETA on stderr (default: on when stderr is a terminal)")
	fl.BoolVar(&opts.stats, "stats", false, "print bytes, lines, matched, bad lines, wall time and GB/s to stderr at the end")
	fl.StringVar(&opts.now, "now", "", "time that relative _time filters (_time:5m) count back from, RFC 3339 (default: the current time)")
	fl.StringVar(&opts.tenant, "tenant", "", "tenant to read in spate serve data directories, AccountID:ProjectID (default 0:0)")
	return cmd
}

// queryMmapWindow is the mmap window queries use: half the read layer's
// default. On the 2 GiB sample '* | stats count()' ran as fast with it
// (0.12 s) and peaked at 58-62 MB RSS instead of 91-147 MB (three windows in
// flight count as mapped file pages).
const queryMmapWindow = 32 << 20

func isTerminal(w io.Writer) bool { return isTerminalFile(w) }

// isTerminalFile reports whether v is an *os.File open on a terminal.
func isTerminalFile(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// runQuery parses the query, expands the inputs, runs the query and prints
// the rows and, if asked, progress and stats.
func runQuery(ctx context.Context, opts queryOptions, text string, args []string, stdout, stderr io.Writer) (retErr error) {
	// resultsDone is set once every row has been written: only then does
	// -o FILE appear under its name.
	resultsDone := false
	now := time.Now()
	if opts.now != "" {
		t, err := time.Parse(time.RFC3339Nano, opts.now)
		if err != nil {
			return usagef("invalid --now %q: want RFC 3339 such as 2026-01-02T15:04:05Z", opts.now)
		}
		now = t
	}
	if opts.workers < 0 {
		return usagef("invalid --workers %d: want 0 (one per CPU) or more", opts.workers)
	}
	strategy, err := fileread.ParseStrategy(opts.strategy)
	if err != nil {
		return usagef("invalid --strategy: %v", err)
	}
	q, err := query.Parse(text, now)
	if err != nil {
		var pe *query.ParseError
		if errors.As(err, &pe) {
			fmt.Fprintln(stderr, pe.Caret())
		}
		return err
	}
	loc, err := parseTZ(opts.tz)
	if err != nil {
		return usagef("invalid --tz: %v", err)
	}
	if opts.since != "" || opts.until != "" {
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if opts.since != "" {
			if lo, err = query.ParseTime(opts.since, now.UnixNano(), loc); err != nil {
				return usagef("invalid --since %q: %v", opts.since, err)
			}
		}
		if opts.until != "" {
			if hi, err = query.ParseTime(opts.until, now.UnixNano(), loc); err != nil {
				return usagef("invalid --until %q: %v", opts.until, err)
			}
		}
		if lo > hi {
			return usagef("--since %s is after --until %s", opts.since, opts.until)
		}
		q.AddTimeFilter(lo, hi)
	}
	format := opts.format
	if format == "" {
		format = "ndjson"
		if opts.stdoutTTY && endsInStats(q) {
			format = "table"
		}
	}
	if opts.every > 0 && q.HasStreamContext() {
		return usagef("--every prints a result while reading, and stream_context reads every input again for each: run it without --every")
	}
	if opts.every < 0 {
		return usagef("invalid --every %s: want a positive duration such as 5s", opts.every)
	}
	if opts.every > 0 && !needsAllInput(q) {
		return usagef("--every refreshes the result of queries that need all input (stats, sort, top, uniq, field_names, field_values, facets); this query prints its rows as they come")
	}
	if opts.every > 0 && opts.every < 100*time.Millisecond {
		return usagef("--every %s is too short: want 100ms or more", opts.every)
	}
	if opts.merge {
		if opts.follow {
			return usagef("--merge reads files to their end; -f prints lines as they come: use one or the other")
		}
		if opts.mergeWindow < 1 {
			return usagef("invalid --merge-window %d: want 1 or more rows", opts.mergeWindow)
		}
		if err := checkMerge(q); err != nil {
			return err
		}
	}
	if !slices.Contains(output.Formats, format) {
		return usagef("invalid --format %q: want one of %s", format, strings.Join(output.Formats, ", "))
	}
	if opts.output != "" {
		out, err := createOutput(opts.output, opts.follow)
		if err != nil {
			return err
		}
		defer out.discard()
		stdout = out
		defer func() {
			if cerr := out.commit(resultsDone); retErr == nil {
				retErr = cerr
			}
		}()
	}
	// The progress bar lives on stderr; when stdout is the same terminal,
	// the first byte of results removes it for good, so that its redraws
	// never land among the rows.
	guard := &barGuard{w: stdout}
	columns, _ := q.FixedFields()
	printerOpts := output.Options{
		Columns: columns,
		Live:    opts.follow || len(args) == 0 || liveInputs(args),
		TempDir: opts.tempDir,
	}
	newPrinter := func() (output.Printer, error) { return output.NewWith(format, guard, printerOpts) }
	var printer output.Printer
	var snaps *snapshotSink
	if opts.every > 0 {
		snaps = &snapshotSink{newPrinter: newPrinter, w: guard, tty: opts.stdoutTTY, title: fmt.Sprintf("every %s: %s", opts.every, q)}
		printer = snaps
	} else if printer, err = newPrinter(); err != nil {
		return usagef("invalid --format: %v", err)
	}
	tenant, err := segment.ParseTenant(opts.tenant)
	if err != nil {
		return usagef("invalid --tenant: %v", err)
	}
	store, err := storescan.New(tenant, q, opts.timeField == "")
	if err != nil {
		return err
	}
	defer store.Close()
	if len(args) == 0 && opts.stdinTTY {
		return usagef("no input: give files, directories or globs after the query, or pipe logs in (kubectl logs deploy/api | spate query '...'); \"-\" reads the terminal")
	}
	inputs, total, err := expandInputs(args, store)
	if err != nil {
		return err
	}
	var stopFollow func() error
	if opts.follow {
		pr, stop, err := startFollow(ctx, opts, q, args, store, stderr)
		if err != nil {
			return err
		}
		stopFollow = stop
		opts.stdin = pr
		inputs = []string{"-"}
	}
	inputFormat := opts.inputFormat
	if opts.follow && inputFormat != "plain" {
		// The follower sends every file's lines as JSON objects (or as
		// they are, when JSON or plain text already).
		inputFormat = "json"
	}
	sniffed, err := sniffInputs(inputs, inputFormat, opts.binary, store, stderr)
	if err != nil {
		return err
	}
	if len(sniffed.names) == 0 && len(inputs) > 0 {
		if sniffed.skipped > 0 {
			return fmt.Errorf("no input could be read (%d skipped, named above)", sniffed.skipped)
		}
		return nil // only binary files: nothing to read, as ripgrep
	}
	inputs = sniffed.names
	if opts.stdinTTY && slices.Contains(inputs, "-") && !opts.follow {
		fmt.Fprintln(stderr, "spate: reading logs from the terminal; Ctrl-D ends them")
	}
	if opts.tenant != "" && store.Snapshots() == 0 {
		return usagef("--tenant reads spate serve data directories, and no input is one")
	}

	layout, err := timeparse.ParseLayout(opts.timeFormat)
	if err != nil {
		return usagef("invalid --time-format: %v", err)
	}
	var done atomic.Int64
	qopts := query.Options{
		MsgField:     opts.msgField,
		TimeField:    opts.timeField,
		TimeZone:     loc,
		TimeFormat:   layout,
		InputFormats: sniffed.formats,
		Now:          now,
		MaxMemory:    opts.maxMemory,
		GroupMemory:  opts.groupMemory,
		TempDir:      opts.tempDir,
		Approx:       opts.approx,
		CountLines:   opts.stats,
		Progress:     &done,
		AccountID:    tenant.AccountID,
		ProjectID:    tenant.ProjectID,
		// Lines stored without a stream read as _stream {}, as spate serve
		// answers them, when every input is a store segment.
		StoreFields: len(inputs) > 0 && store.Holds(inputs),
		Every:       opts.every,
	}
	if snaps != nil {
		qopts.SnapshotDone = snaps.end
		snaps.read = &done
	}
	cfg := fileread.Config{
		Strategy:      strategy,
		Workers:       opts.workers,
		ChunkSize:     int(opts.chunkSize),
		MaxLineSize:   int(opts.maxLineSize),
		SkipLongLines: true,
		MmapWindow:    queryMmapWindow,
		Stdin:         opts.stdin,
		Open:          store.Open,
	}
	if store.Snapshots() > 0 && !opts.noIndex {
		qopts.Index = store.Index
	}
	if store.Snapshots() > 0 && q.HasStreamContext() {
		// stream_context reads the logs around its matches again: from
		// the segments that query's time range selects, not this one's.
		qopts.Rerun = func(sq *query.Query, sink query.Sink) error {
			rs, err := storescan.New(tenant, sq, opts.timeField == "")
			if err != nil {
				return err
			}
			defer rs.Close()
			names, _, err := expandInputs(args, rs)
			if err != nil {
				return err
			}
			sn, err := sniffInputs(names, inputFormat, opts.binary, rs, io.Discard)
			if err != nil {
				return err
			}
			o := qopts
			o.Rerun, o.Progress, o.Every, o.SnapshotDone = nil, nil, 0, nil
			o.InputFormats, o.StoreFields, o.Unordered = sn.formats, len(sn.names) > 0 && rs.Holds(sn.names), true
			o.Index = nil
			if !opts.noIndex {
				o.Index = rs.Index
			}
			c := cfg
			c.Open = rs.Open
			_, err = query.Run(ctx, sq, sn.names, c, o, sink)
			return err
		}
	}
	if store.Snapshots() > 0 {
		// Sealed segments decode one block after another: read several at
		// once (queries with stats, sort and the like; rows stay in order).
		cfg.ParallelInputs = runtime.GOMAXPROCS(0)
	}
	var stopProgress func()
	if opts.progress {
		stopProgress = startProgress(ctx, stderr, &done, total)
		if opts.stdoutTTY {
			guard.stop = stopProgress // results to a file keep the bar
		}
	}
	if opts.cpuProfile != "" {
		f, err := os.Create(opts.cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	var sink query.Sink = printer
	if snaps != nil {
		// Only rows: the pipeline's flush at the end of each snapshot must
		// not end it twice (SnapshotDone does).
		sink = struct{ query.Sink }{snaps}
	}
	if (format == "ndjson" || format == "table") && liveInputs(inputs) && !endsInStats(q) {
		// Rows from a pipe or stdin reach stdout as they come (flushed
		// every LiveFlush), not when a buffer fills.
		ls := newLiveSink(printer, fileread.LiveFlush)
		defer ls.stop()
		sink = ls
	}
	var st query.Stats
	if opts.merge && len(inputs) > 1 {
		st, err = runMerged(ctx, q, inputs, opts.mergeWindow, cfg, qopts, sink)
	} else {
		st, err = query.Run(ctx, q, inputs, cfg, qopts, sink)
	}
	if stopProgress != nil {
		stopProgress()
	}
	if ferr := printer.Flush(); err == nil {
		err = ferr
	}
	resultsDone = err == nil
	for _, a := range st.Approximate {
		fmt.Fprintf(stderr, "spate: approximate result: %s\n", a)
	}
	if st.LongLines > 0 {
		fmt.Fprintf(stderr, "spate: skipped %s lines longer than --max-line-size=%s:", formatThousands(st.LongLines), formatSize(opts.maxLineSize))
		for _, l := range st.LongLineSamples {
			fmt.Fprintf(stderr, " %s at byte %d (%s);", l.Name, l.Offset, formatSize(l.Length))
		}
		fmt.Fprintln(stderr)
	}
	for _, r := range st.Renamed {
		what, flag := "message", "--msg-field"
		if r.Became == "_time" {
			what, flag = "time", "--time-field"
		}
		lines := "lines"
		if r.Lines == 1 {
			lines = "line"
		}
		fmt.Fprintf(stderr, "spate: the query names %q, which is the %s field (%s) of %s %s and so not a field of its own there, as in VictoriaLogs; write %s instead, or choose the %s field with %s\n",
			r.Name, what, r.Became, formatThousands(r.Lines), lines, r.Became, what, flag)
	}
	if b := st.FirstBadTime; b != nil {
		where := fmt.Sprintf("%s at byte %d", b.Name, b.Offset)
		if n, ok := lineNumber(b.Name, b.Offset); ok {
			where = fmt.Sprintf("%s:%d", b.Name, n)
		}
		fmt.Fprintf(stderr, "spate: %s time values could not be read (--time-format %s, --tz %s); their rows have no _time and keep the value in its field; the first, in %s: %s=%q\n",
			formatThousands(st.BadTimes), layout, opts.tz, where, b.Field, b.Value)
	}
	if st.BadLines > 0 && !opts.stats {
		fmt.Fprintf(stderr, "spate: %s lines were not valid JSON (or not valid UTF-8) and were read as plain text; --stats shows counts\n", formatThousands(st.BadLines))
	}
	if stopFollow != nil {
		// A query that ends by itself (limit) stops the follower too.
		if ferr := stopFollow(); err == nil {
			err = ferr
		}
		if err == nil && ctx.Err() != nil {
			err = ctx.Err() // Ctrl-C ends a follow: exit 130
		}
	}
	if n, first := store.UnusableIndexes(); n > 0 {
		fmt.Fprintf(stderr, "spate: %d segments have sidecar indexes that could not be used, so their lines were read, which is slower (%v); spate index DIR rebuilds them, and spate serve does when it starts\n", n, first)
	}
	if sniffed.skipped > 0 && err == nil {
		err = fmt.Errorf("%d of the inputs could not be read (named above); the rest were", sniffed.skipped)
	}
	if opts.stats {
		printQueryStats(stderr, st)
		if store.Snapshots() > 0 {
			fmt.Fprintf(stderr, "spate: read %d of the %d segments of tenant %s in %d data directories; the metadata of %d puts them outside the query's time range or streams\n",
				store.Listed-store.Skipped, store.Listed, tenant, store.Snapshots(), store.Skipped)
		}
	}
	return err
}

// startFollow checks that q can run over a follow and starts following
// the files args name (globs and directories expanded again every
// second), writing their lines into the returned pipe until ctx ends or
// stop is called; stop returns the follower's error.
func startFollow(ctx context.Context, opts queryOptions, q *query.Query, args []string, store *storescan.Inputs, stderr io.Writer) (*io.PipeReader, func() error, error) {
	if q.HasStreamContext() {
		return nil, nil, usagef("-f reads lines as they come, and stream_context reads the files again for the logs around those it is fed: run it without -f")
	}
	if p := firstNeedingAll(q.Pipes); p != nil && opts.every == 0 {
		return nil, nil, usagef("-f prints rows as they come, and the query's %s pipe needs all of its input before it answers: add --every 5s to print its result so far every 5 seconds, or run it without -f", pipeName(p))
	}
	if len(args) == 0 || slices.Contains(args, "-") {
		return nil, nil, usagef("-f follows files: give files, directories or globs (stdin is read as it comes without -f)")
	}
	if q.HasSubqueries() {
		return nil, nil, usagef("-f reads lines as they come, and the query's subquery (join, union, in(...)) would read the files again: run it without -f")
	}
	conv, err := followConverter(opts.inputFormat, opts.binary, stderr)
	if err != nil {
		return nil, nil, err
	}
	paths := func() ([]string, error) {
		names, _, err := expandInputs(args, store)
		if err != nil {
			return nil, err
		}
		if store.Snapshots() > 0 {
			return nil, usagef("-f follows log files, not spate serve data directories")
		}
		// Compressed rotations do not grow: not followed.
		return slices.DeleteFunc(names, func(n string) bool {
			return slices.ContainsFunc(compressedExts, func(ext string) bool { return strings.HasSuffix(n, ext) })
		}), nil
	}
	if _, err := paths(); err != nil {
		return nil, nil, err
	}
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	fctx, cancel := context.WithCancel(ctx)
	go func() {
		err := follow.Run(fctx, follow.Config{Paths: paths, Tail: opts.tail, Warn: stderr, Convert: conv}, pw)
		pw.CloseWithError(err)
		errc <- err
	}()
	stop := func() error {
		cancel()
		pr.Close()
		if err := <-errc; err != nil && !errors.Is(err, io.ErrClosedPipe) {
			return err
		}
		return nil
	}
	return pr, stop, nil
}

// outputFile is where -o FILE writes: a temporary file beside FILE that
// commit renames over it once the results are complete, so that an error
// or Ctrl-C never leaves a partial file under its name. Under -f the file
// is FILE itself, written as rows come.
type outputFile struct {
	*os.File
	name string // final name; "" when f is already it
}

func createOutput(name string, live bool) (*outputFile, error) {
	if live {
		f, err := os.Create(name)
		if err != nil {
			return nil, fmt.Errorf("-o: %w", err)
		}
		return &outputFile{File: f}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".spate-*")
	if err != nil {
		return nil, fmt.Errorf("-o: %w", err)
	}
	return &outputFile{File: f, name: name}, nil
}

// commit closes the file and, when ok, gives it its final name; when not,
// the temporary file is removed and FILE is left as it was.
func (o *outputFile) commit(ok bool) error {
	if o.File == nil {
		return nil
	}
	f := o.File
	o.File = nil
	if o.name == "" {
		if err := f.Close(); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
		return nil
	}
	if !ok {
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	err := f.Chmod(0o644)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), o.name)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("-o: %w", err)
	}
	return nil
}

// discard removes an uncommitted temporary file (on a usage error before
// the query ran).
func (o *outputFile) discard() { o.commit(false) }

// followConverter returns follow's Convert for --input-format spec: each
// followed file's lines are read in its own format (guessed, when spec is
// auto, from the file's first 64 KiB when its first line is read; a CSV
// file's header is its first line) and reach the query as JSON objects.
// Binary files are left out with a warning unless readBinary.
func followConverter(spec string, readBinary bool, warn io.Writer) (func(string, *os.File) follow.ConvertFunc, error) {
	forced, auto, err := parseInputFormat(spec)
	if err != nil {
		return nil, err
	}
	if !auto && query.NewLineConverter(forced) == nil {
		return nil, nil // JSON or plain text: the lines pass as they are
	}
	return func(path string, h *os.File) follow.ConvertFunc {
		decided, skip := false, false
		var c *query.LineConverter
		return func(dst, line []byte, off int64) ([]byte, bool) {
			if !decided {
				decided = true
				head := make([]byte, sniffBytes)
				n, _ := h.ReadAt(head, 0)
				head = head[:n]
				f := forced
				sniffed, binary := query.Sniff(head)
				switch {
				case binary && !readBinary:
					fmt.Fprintf(warn, "spate: %s: binary file (a NUL byte in its first %d KiB); not followed (--binary reads it)\n", path, sniffBytes>>10)
					skip = true
				case auto:
					f = sniffed
				case f.Kind == query.FormatCSV:
					if f.Header = csvHeader(head, f.Comma); len(f.Header) == 0 {
						fmt.Fprintf(warn, "spate: %s: no header line for --input-format %s; not followed\n", path, spec)
						skip = true
					}
				}
				c = query.NewLineConverter(f)
			}
			switch {
			case skip:
				return dst, false
			case c == nil:
				return append(append(dst, line...), '\n'), true
			}
			return c.Append(dst, line, off)
		}
	}, nil
}

// pipeName names a pipe for messages: the first word of its LogsQL.
func pipeName(p query.Pipe) string {
	name, _, _ := strings.Cut(p.String(), " ")
	return name
}

// liveInputs reports whether an input is stdin, a pipe or a FIFO: one whose
// lines may come slowly.
func liveInputs(inputs []string) bool {
	for _, in := range inputs {
		if in == "-" {
			return true
		}
		if fi, err := os.Stat(in); err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeCharDevice) != 0 {
			return true
		}
	}
	return false
}

// liveSink passes rows to a printer and flushes it every interval while
// rows come, so that rows from a slow input show without waiting for a
// buffer to fill. Safe for concurrent WriteRow calls.
type liveSink struct {
	mu    sync.Mutex
	p     output.Printer
	dirty bool
	done  chan struct{}
	wg    sync.WaitGroup
}

func newLiveSink(p output.Printer, every time.Duration) *liveSink {
	s := &liveSink{p: p, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				s.mu.Lock()
				if s.dirty {
					s.p.Sync()
					s.dirty = false
				}
				s.mu.Unlock()
			}
		}
	}()
	return s
}

func (s *liveSink) WriteRow(r *query.Row) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dirty = true
	return s.p.WriteRow(r)
}

// stop ends the flushing; the caller flushes the printer itself.
func (s *liveSink) stop() {
	close(s.done)
	s.wg.Wait()
}

// parseTZ reads --tz: Local, UTC, an IANA zone name, or a fixed offset
// (+05:30, -0800, +02).
func parseTZ(s string) (*time.Location, error) {
	switch s {
	case "", "Local", "local":
		return time.Local, nil
	case "UTC", "utc", "Z":
		return time.UTC, nil
	}
	if s[0] == '+' || s[0] == '-' {
		d := strings.ReplaceAll(s[1:], ":", "")
		if len(d) == 2 {
			d += "00"
		}
		if len(d) == 4 {
			h, err1 := strconv.Atoi(d[:2])
			m, err2 := strconv.Atoi(d[2:])
			if err1 == nil && err2 == nil && h <= 23 && m <= 59 {
				off := h*3600 + m*60
				if s[0] == '-' {
					off = -off
				}
				return time.FixedZone(s, off), nil
			}
		}
		return nil, fmt.Errorf("offset %q: want ±HH:MM, ±HHMM or ±HH", s)
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q (want Local, UTC, an IANA name such as Europe/Berlin, or an offset such as +05:30)", s)
	}
	return loc, nil
}

// lineNumber returns the 1-based line number of the line that starts at
// byte offset of the named input, when that is cheap to find: a regular,
// uncompressed file read up to the offset (at most 4 GiB). A compressed
// file is known by its first bytes, as the query read it: its offsets
// are in the decompressed lines.
func lineNumber(name string, offset int64) (int64, bool) {
	if name == "-" || offset > 4<<30 {
		return 0, false
	}
	f, err := os.Open(name)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() < offset {
		return 0, false
	}
	if c, err := fileread.DetectFile(f); err != nil || c != fileread.None {
		return 0, false
	}
	buf := make([]byte, 1<<20)
	n := int64(1)
	for left := offset; left > 0; {
		k, err := f.Read(buf[:min(int64(len(buf)), left)])
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		left -= int64(k)
		if err != nil {
			return 0, false
		}
	}
	return n, true
}

// firstNeedingAll returns the first of pipes that needs all of its input
// before it answers (stats, sort, ...), or nil.
func firstNeedingAll(pipes []query.Pipe) query.Pipe {
	for _, p := range pipes {
		switch p.(type) {
		case *query.PipeStats, *query.PipeSort, *query.PipeTop, *query.PipeUniq, *query.PipeFieldNames, *query.PipeFieldValues, *query.PipeFacets,
			*query.PipeStreamContext:
			return p
		}
	}
	return nil
}

func needsAllInput(q *query.Query) bool { return firstNeedingAll(q.Pipes) != nil }

// snapshotSink prints the snapshots of --every, each with a printer of its
// own: on a terminal it clears the screen and draws each snapshot under a
// title line, as watch(1) does; otherwise snapshots follow each other,
// separated by an empty line. Used from one goroutine at a time.
type snapshotSink struct {
	newPrinter func() (output.Printer, error)
	w          io.Writer
	tty        bool
	title      string
	read       *atomic.Int64 // bytes read, for the title
	p          output.Printer
	n          int
}

func (s *snapshotSink) start() error {
	if s.tty {
		read := ""
		if s.read != nil {
			read = fmt.Sprintf(" · %s read", formatSize(s.read.Load()))
		}
		fmt.Fprintf(s.w, "\x1b[H\x1b[2J%s · %s%s\n\n", s.title, time.Now().Format("15:04:05"), read)
	} else if s.n > 0 {
		io.WriteString(s.w, "\n")
	}
	p, err := s.newPrinter()
	s.p = p
	return err
}

func (s *snapshotSink) WriteRow(r *query.Row) error {
	if s.p == nil {
		if err := s.start(); err != nil {
			return err
		}
	}
	return s.p.WriteRow(r)
}

func (s *snapshotSink) Sync() error { return nil }

// end ends a snapshot (SnapshotDone): one without rows is drawn too.
func (s *snapshotSink) end() error {
	if s.p == nil {
		if err := s.start(); err != nil {
			return err
		}
	}
	err := s.p.Flush()
	s.p = nil
	s.n++
	return err
}

// Flush ends the final result: rows written since the last snapshot, or an
// empty result when there was no snapshot. After Ctrl-C the last snapshot
// stands.
func (s *snapshotSink) Flush() error {
	if s.p != nil || s.n == 0 {
		return s.end()
	}
	return nil
}

// endsInStats reports whether q's result is a small aggregate best shown as
// a table.
func endsInStats(q *query.Query) bool {
	for _, p := range q.Pipes {
		switch p.(type) {
		case *query.PipeStats, *query.PipeTop, *query.PipeUniq, *query.PipeFieldNames,
			*query.PipeFieldValues, *query.PipeFacets:
			return true
		}
	}
	return false
}

func printQueryStats(w io.Writer, st query.Stats) {
	secs := max(st.Duration.Seconds(), 1e-9)
	lines := formatThousands(st.Lines) + " lines"
	if !st.LinesExact {
		lines = "at least " + lines // a limit stopped the scan, or lines were only searched
	}
	var names []string
	for _, s := range st.Strategies {
		if !slices.Contains(names, string(s)) {
			names = append(names, string(s))
		}
	}
	fmt.Fprintf(w, "spate: read %s (%s) in %s, %.2f GB/s, with %s; %s matched the filter",
		formatSize(st.Bytes), lines, formatSeconds(st.Duration), float64(st.Bytes)/1e9/secs,
		strings.Join(names, ", "), formatThousands(st.Matched))
	if st.Stopped {
		fmt.Fprint(w, "; stopped early: the limit was reached")
	}
	if st.LongLines > 0 {
		fmt.Fprintf(w, "; %s lines over --max-line-size skipped", formatThousands(st.LongLines))
	}
	if st.Spilled > 0 {
		fmt.Fprintf(w, "; %s of stats groups spilled to temp files", formatSize(st.Spilled))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "spate: %s parsed: %s bad lines (not valid JSON or UTF-8, read as plain text), %s plain-text lines, %s bad times (kept in their field, no _time)",
		formatThousands(st.Parsed), formatThousands(st.BadLines), formatThousands(st.PlainLines), formatThousands(st.BadTimes))
	if st.Parsed < st.Lines {
		fmt.Fprint(w, "; the lines not parsed (ruled out on their raw bytes, or only counted) were not checked")
	}
	if st.EarlyRejected > 0 {
		fmt.Fprintf(w, "; %s lines that the filter rejected before their end were checked only up to there", formatThousands(st.EarlyRejected))
	}
	fmt.Fprintln(w)
	if st.ColumnBlocks > 0 || st.SkippedBlocks > 0 || st.LineBlocks > 0 || st.TokenSkippedBlocks > 0 || st.ValueSkippedBlocks > 0 {
		fmt.Fprintf(w, "spate: segment indexes: %s blocks (%s of lines) answered from columns, reading %s; %s blocks read from their lines; %s blocks skipped by time, %s by numeric ranges or streams, %s by token blooms",
			formatThousands(st.ColumnBlocks), formatSize(st.ColumnLineBytes), formatSize(st.ColumnBytes), formatThousands(st.LineBlocks),
			formatThousands(st.SkippedBlocks), formatThousands(st.ValueSkippedBlocks), formatThousands(st.TokenSkippedBlocks))
		if st.TokenSkippedFrames > 0 {
			fmt.Fprintf(w, "; %s frames of the blocks read from their lines skipped by token blooms", formatThousands(st.TokenSkippedFrames))
		}
		if st.ColumnFallbacks > 0 {
			fmt.Fprintf(w, "; %s blocks read from their lines because their columns could not be read", formatThousands(st.ColumnFallbacks))
		}
		fmt.Fprintln(w)
	}
}

// expandInputs turns the arguments into input names: spate serve data
// directories give the segments of store's tenant that the query may need
// (see storescan.Inputs), other directories are walked (regular files, in name
// order, hidden ones left out), globs are expanded, "-" stays. No argument
// means stdin. It also returns the total size of the inputs (0 if unknown,
// as for stdin).
func expandInputs(args []string, store *storescan.Inputs) ([]string, int64, error) {
	if len(args) == 0 {
		return []string{"-"}, 0, nil
	}
	var out []string
	var total int64
	unknown := false
	add := func(path string, size int64) {
		out = append(out, path)
		total += size
	}
	addDir := func(dir string) error {
		if segment.IsStoreDir(dir) {
			return store.Add(dir, add)
		}
		_, err := walkDir(dir, add)
		return err
	}
	for _, a := range args {
		if a == "-" {
			out = append(out, a)
			unknown = true
			continue
		}
		fi, err := os.Stat(a)
		if err != nil && strings.ContainsAny(a, "*?[") {
			matches, gerr := filepath.Glob(a)
			if gerr != nil {
				return nil, 0, usagef("bad glob %q: %v", a, gerr)
			}
			if len(matches) == 0 {
				return nil, 0, fmt.Errorf("%s: no files match", a)
			}
			sortRotated(matches)
			for _, m := range matches {
				mfi, err := os.Stat(m)
				if err != nil {
					return nil, 0, err
				}
				if mfi.IsDir() {
					if err := addDir(m); err != nil {
						return nil, 0, err
					}
					continue
				}
				add(m, mfi.Size())
			}
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		if fi.IsDir() {
			if err := addDir(a); err != nil {
				return nil, 0, err
			}
			continue
		}
		if !fi.Mode().IsRegular() {
			unknown = true
		}
		add(a, fi.Size())
	}
	if unknown {
		total = 0
	}
	return out, total, nil
}

// walkDir adds the regular files under dir in lexical order, leaving out
// hidden files and directories (names starting with '.'), as ripgrep does:
// lock files, metadata, editors' swap files.
func walkDir(dir string, add func(string, int64)) (int, error) {
	n := 0
	var paths []string
	sizes := map[string]int64{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		paths = append(paths, path)
		sizes[path] = info.Size()
		return nil
	})
	if err != nil {
		return 0, err
	}
	sortRotated(paths)
	for _, p := range paths {
		add(p, sizes[p])
		n++
	}
	return n, nil
}

// barGuard passes writes on to w, calling stop (once, if set) before the
// first.
type barGuard struct {
	w    io.Writer
	once sync.Once
	stop func()
}

func (g *barGuard) Write(p []byte) (int, error) {
	g.once.Do(func() {
		if g.stop != nil {
			g.stop()
		}
	})
	return g.w.Write(p)
}

// startProgress draws a progress bar on w (bytes done, %, GB/s, ETA) fed by
// done until the returned function is called; calling it again does
// nothing.
func startProgress(ctx context.Context, w io.Writer, done *atomic.Int64, total int64) func() {
	p := mpb.NewWithContext(ctx, mpb.WithOutput(w), mpb.WithRefreshRate(150*time.Millisecond), mpb.WithAutoRefresh())
	var bar *mpb.Bar
	if total > 0 {
		bar = p.AddBar(total,
			mpb.PrependDecorators(decor.Counters(decor.SizeB1024(0), "% .1f / % .1f"), decor.Percentage(decor.WCSyncSpace)),
			mpb.AppendDecorators(decor.AverageSpeed(decor.SizeB1000(0), "% .2f", decor.WCSyncSpace), decor.Name(" ETA "), decor.AverageETA(decor.ET_STYLE_GO)),
			mpb.BarRemoveOnComplete(),
		)
	} else {
		bar = p.New(0, mpb.NopStyle(),
			mpb.PrependDecorators(decor.Current(decor.SizeB1024(0), "% .1f")),
			mpb.AppendDecorators(decor.AverageSpeed(decor.SizeB1000(0), "% .2f", decor.WCSyncSpace)),
			mpb.BarRemoveOnComplete(),
		)
	}
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				// Abort removes the bar (drop=true) and marks it done, so
				// Wait returns whether or not the total was reached.
				bar.Abort(true)
				return
			case <-t.C:
				bar.SetCurrent(done.Load())
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-finished
			p.Wait()
		})
	}
}
