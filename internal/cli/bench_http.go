package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/spate-io/spate/internal/benchenv"
	"github.com/spate-io/spate/internal/benchhttp"
)

// benchHTTPOpts are the flags of `spate bench http`.
type benchHTTPOpts struct {
	suites     string
	servers    string
	conns      string
	duration   time.Duration
	warmup     time.Duration
	bigSize    sizeFlag
	smallFiles int
	smallSize  sizeFlag
	dir        string
	seed       uint64
	nginx      string
	asJSON     bool
	chart      string
	quiet      bool
}

func newBenchHTTPCmd() *cobra.Command {
	o := &benchHTTPOpts{bigSize: 100 << 20, smallSize: 4 << 10}
	cmd := &cobra.Command{
		Use:   "http",
		Short: "Compare ways of writing HTTP responses and serving files (bufio, sendfile, mmap, nginx)",
		Long: `Measure HTTP servers on loopback with a built-in closed-loop load generator:
--conns keep-alive connections, each with one GET in flight, for --duration
after --warmup. Every server is a fresh child process (or nginx), so the CPU
time, system calls and peak RSS in the report are its own (read from /proc).
The client reads every byte of every body and stops the run at the first
wrong status or length; each server's answers are also checked byte for
byte before its run. Latency percentiles come from a histogram (within 1.6%).

Suite "responses": GET /json answers a JSON document of about 6 KiB that
the handler writes in 801 small pieces, as code rendering a response does:
  direct      every piece written to the http.ResponseWriter. net/http
              already buffers it (2 KiB before chunking, 4 KiB per connection)
  flush-each  every piece written and flushed: one write(2) per piece, the
              truly unbuffered handler
  bufio-4k    the pieces go through a pooled 4 KiB bufio.Writer
  bufio-64k   the same with 64 KiB
  assembled   the pieces appended to one pooled buffer, written once with
              Content-Length
  prebuilt    the document rendered once at start, one Write per request
Ratios are over direct.

Suite "downloads": one --big-size file, then --small-files files of
--small-size requested in turn (random bytes, made under --dir and removed
after), each with Content-Length:
  copy          io.Copy(w, file): net/http hands the file to sendfile(2)
  bufio-reader  io.Copy(w, bufio.NewReader(file)); bufio.Reader passes the
                file on, so this is sendfile(2) as well
  copybuf-4k    io.CopyBuffer with a 4 KiB buffer, the reader and writer
                wrapped so it really copies: read(2) then write(2).
                (Unwrapped, io.CopyBuffer ignores its buffer and is "copy".)
  copybuf-64k   the same with 64 KiB
  copybuf-1m    the same with 1 MiB
  mmap          the file mapped per request and written from the mapping
  memory        every file read into memory at start, one Write per request:
                the ceiling of a net/http handler
  spate         spate serve --files DIR, the whole server
  nginx         nginx (sendfile on, tcp_nopush on, access log off, one worker
                per CPU) when an nginx binary is found; ratios are over it,
                or over copy without it

Columns: req/s and MB/s (1e6 bytes of body per second) over the measured
window; p50/p99 latency per request; the server's CPU time per request and
in cores (CPU seconds per second); its read- and write-type system calls
per request (read, write, sendfile, ...; /proc/PID/io); its peak RSS over
its whole life. The client runs in this process and shares the CPUs with
the server, as wrk does; on a small machine that caps every row.

The defaults take about 6 minutes: 6 + 9 servers, 3 connection counts,
4 s per row.`,
		Example: `  # everything, with a chart
  spate bench http --chart http.svg

  # bufio.Writer in a handler, and io.Copy against bufio.Reader
  spate bench http --suite responses --servers direct,bufio-4k --conns 10
  spate bench http --suite downloads --servers copy,bufio-reader,nginx --conns 10

  # longer runs on the disk you serve from, as JSON
  spate bench http --suite downloads --duration 10s --dir /srv/tmp --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := o.config()
			if err != nil {
				return err
			}
			if !o.quiet {
				cfg.Progress = cmd.ErrOrStderr()
			}
			rep, err := benchhttp.Run(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if o.chart != "" {
				if err := benchhttp.WriteChart(o.chart, rep); err != nil {
					return err
				}
			}
			if o.asJSON {
				return benchenv.WriteJSON(cmd.OutOrStdout(), rep)
			}
			return benchhttp.WriteTable(cmd.OutOrStdout(), rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.suites, "suite", "responses,downloads", "comma-separated suites to run: responses, downloads")
	f.StringVar(&o.servers, "servers", "", "comma-separated servers to run (default: all of each suite): "+strings.Join(benchhttp.ResponseVariants, ", ")+"; "+strings.Join(benchhttp.DownloadVariants, ", "))
	f.StringVar(&o.conns, "conns", "1,10,64", "comma-separated connection counts")
	f.DurationVar(&o.duration, "duration", 3*time.Second, "measured time per row")
	f.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured load before each row's window")
	f.Var(&o.bigSize, "big-size", "size of the downloads suite's big file (0: no big file)")
	f.IntVar(&o.smallFiles, "small-files", 10000, "number of small files in the downloads suite (0: none)")
	f.Var(&o.smallSize, "small-size", "size of each small file")
	f.StringVar(&o.dir, "dir", "", "directory to make the files in (default: the system temp dir, "+os.TempDir()+")")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the files' bytes")
	f.StringVar(&o.nginx, "nginx", "", `nginx binary for the nginx row (default: found in PATH or /usr/sbin; "off" skips it)`)
	f.BoolVar(&o.asJSON, "json", false, "print the report as JSON")
	f.StringVar(&o.chart, "chart", "", "also write a bar chart per workload and connection count to this file (.svg, .png or .pdf)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines on stderr")
	return cmd
}

// config turns the flags into a benchhttp.Config.
func (o *benchHTTPOpts) config() (benchhttp.Config, error) {
	var zero benchhttp.Config
	cfg := benchhttp.Config{
		Suites: splitList(o.suites), Warmup: o.warmup, Duration: o.duration,
		BigSize: int64(o.bigSize), SmallFiles: o.smallFiles, SmallSize: int64(o.smallSize),
		Dir: o.dir, Seed: o.seed, Nginx: o.nginx,
	}
	if len(cfg.Suites) == 0 {
		return zero, usagef("--suite names no suite: want responses, downloads or both")
	}
	for _, s := range cfg.Suites {
		if s != benchhttp.SuiteResponses && s != benchhttp.SuiteDownloads {
			return zero, usagef("unknown suite %q in --suite: want responses or downloads", s)
		}
	}
	for _, s := range splitList(o.servers) {
		switch {
		case slices.Contains(benchhttp.ResponseVariants, s):
			cfg.Responses = append(cfg.Responses, s)
		case slices.Contains(benchhttp.DownloadVariants, s):
			cfg.Downloads = append(cfg.Downloads, s)
		default:
			return zero, usagef("unknown server %q in --servers: want %s; %s", s, strings.Join(benchhttp.ResponseVariants, ", "), strings.Join(benchhttp.DownloadVariants, ", "))
		}
	}
	if o.servers != "" {
		// Servers named for one suite only: run only that suite.
		if len(cfg.Responses) == 0 {
			cfg.Suites = slices.DeleteFunc(cfg.Suites, func(s string) bool { return s == benchhttp.SuiteResponses })
		}
		if len(cfg.Downloads) == 0 {
			cfg.Suites = slices.DeleteFunc(cfg.Suites, func(s string) bool { return s == benchhttp.SuiteDownloads })
		}
		if len(cfg.Suites) == 0 {
			return zero, usagef("--servers names no server of the suites in --suite %s", o.suites)
		}
	}
	for _, c := range splitList(o.conns) {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 || n > 4096 {
			return zero, usagef("bad connection count %q in --conns: want 1 to 4096", c)
		}
		cfg.Conns = append(cfg.Conns, n)
	}
	if len(cfg.Conns) == 0 {
		return zero, usagef("--conns names no connection count")
	}
	if o.duration <= 0 || o.warmup < 0 {
		return zero, usagef("--duration must be positive and --warmup not negative")
	}
	if o.bigSize < 0 || o.smallSize <= 0 || o.smallFiles < 0 || o.smallFiles > 1_000_000 {
		return zero, usagef("--big-size must not be negative, --small-size must be positive, --small-files 0 to 1000000")
	}
	if o.bigSize == 0 && o.smallFiles == 0 && slices.Contains(cfg.Suites, benchhttp.SuiteDownloads) {
		return zero, usagef("the downloads suite needs --big-size or --small-files")
	}
	// The flags' 0 means none; the Config's, the default.
	if cfg.BigSize == 0 {
		cfg.BigSize = -1
	}
	if cfg.SmallFiles == 0 {
		cfg.SmallFiles = -1
	}
	exe, err := os.Executable()
	if err != nil {
		return zero, fmt.Errorf("cannot find the spate executable to run servers in: %w", err)
	}
	cfg.ChildCommand = []string{exe, "bench", "http-server"}
	return cfg, nil
}

// newBenchHTTPServerCmd is the hidden command that runs one server for
// `spate bench http`.
func newBenchHTTPServerCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "http-server SPEC-JSON",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var spec benchhttp.ServerSpec
			if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
				return usagef("cannot parse the server spec: %v", err)
			}
			return benchhttp.RunServer(cmd.Context(), spec, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
}
