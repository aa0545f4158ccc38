package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/spate-io/spate/internal/benchingest"
	"github.com/spate-io/spate/internal/benchwrite"
)

// benchIngestOpts are the flags of `spate bench ingest`.
type benchIngestOpts struct {
	url          string
	spawn        bool
	clients      int
	duration     time.Duration
	volume       sizeFlag
	batchSize    sizeFlag
	gzip         bool
	fsync        string
	tokenFile    string
	seed         uint64
	input        string
	warm         sizeFlag
	dir          string
	keep         bool
	serveArgs    []string
	compareWrite bool
	protocols    string
	syslogAddr   string
	asJSON       bool
	quiet        bool
}

// ingestFsyncModes are the --fsync values of `spate serve`, and the `spate
// bench write` mode each is compared with.
var ingestFsyncModes = map[string]benchwrite.SyncMode{
	"batch":    benchwrite.SyncBatch, // both sync after every batch
	"interval": benchwrite.SyncEnd,   // both sync rarely
	"never":    benchwrite.SyncNone,
}

// Time limits for the spawned server.
const (
	serveStartTimeout = 30 * time.Second // from exec to its "listening on" line
	serveStopTimeout  = 30 * time.Second // from SIGTERM to exit; then SIGKILL
)

// compareWriteMaxSize caps the bytes per run of the `spate bench write`
// comparison. Below it, the writers write as many bytes as the ingest run
// accepted: a short burst can land in the page cache or a device cache
// and overstate the sustained fsync rate (64 MiB measured 980 MB/s with
// writev here, 2 GiB 531 MB/s). Each bench write child holds its records
// in memory, so the cap also bounds its RSS.
const compareWriteMaxSize = 4 << 30

func newBenchIngestCmd() *cobra.Command {
	o := &benchIngestOpts{spawn: true, clients: 8, duration: 10 * time.Second, batchSize: 1 << 20, fsync: "batch"}
	cmd := &cobra.Command{
		Use:   "ingest",
		Short: "Load-test the ingest endpoint of spate serve (MB/s, lines/s, 429s, latency)",
		Long: `Send generated NDJSON logs to the ingest endpoint of a spate serve with
--clients concurrent keep-alive clients, for --duration or until --volume
bytes are sent, and report what the server accepted: MB/s and lines/s, the
share of requests it refused with 429 (Too Many Requests), and request
latency P50/P95/P99/max.

By default (--spawn) it starts its own server, "spate serve --listen
127.0.0.1:0 --fsync MODE --data DIR" with DIR a new directory under --dir
(removed afterwards unless --keep) and any --serve-arg, waits for it to
listen, runs, then stops it with SIGTERM and reports its peak RSS and how
long it took to stop. With --url it loads a server that is already running
(spate serve, or anything that speaks the VictoriaLogs /insert/jsonline
protocol; a URL without a path gets /insert/jsonline).

The bodies are made before the clock starts: a seeded sample from spate gen
(--volume of it, at most 256 MiB, then cycled; 64 MiB with --duration), or
as much of the lines of --input FILE, split on line boundaries into bodies
of at most --batch-size bytes, gzip-compressed with --gzip. A 429 makes a client wait for Retry-After (at most 100ms) and
send the same body again, so with --volume the accepted volume is exact. Any
other error status is counted; the third one stops the run with the
server's message.

--compare-write also runs "spate bench write" in the same invocation, with
records of the average generated line size, batches of one body's worth of
lines, the fsync mode matching --fsync (batch: batch, interval: end, never:
none), --dir, and as many bytes as the ingest run accepted (at most 4 GiB;
a short burst overstates sustained fsync rates), and reports ingest MB/s over its fastest writer's MB/s: the
cost of HTTP, decoding and validation over a plain append to a file. The
issue asks for at least 0.5 with --fsync batch.

--protocol sends the same lines in another protocol (the MB/s count the
same NDJSON payload): elasticsearch as a bulk body ({"create":{}} before each
line), loki as a Loki push in protobuf + snappy (one stream per service, the
line as its text), otlp as an OpenTelemetry ExportLogsServiceRequest in
protobuf (one resource per service, _msg as the body, the other fields as
attributes), syslog as RFC 5424 messages over TCP with octet counting (the
service as APP-NAME, the other fields as structured data; a spawned server
gets --syslog-tcp, a --url one needs --syslog-addr; with no answer to wait
for, a run ends when the server's /metrics count every message stored). A
comma list runs each protocol in turn, each on a spawned server of its own
(with --url, on that server once it has compressed what the run before
sent), so that none pays for another's background work, and adds a table
of their MB/s, each over the first's, with the bytes the server stored per
byte sent and its CPU seconds per GB sent (from its /metrics).

On a VM, writing into page-cache pages the machine never touched costs
several times more than reusing pages just freed, so a run right after
another's data was deleted is the faster one. --warm SIZE writes and
deletes SIZE bytes (at least what the run stores) before each run's clock
starts, so that every run starts alike.

The load generator shares the machine with a spawned server: the report
shows the CPU time of both (the server's from its /metrics), so you can see
when the two compete for cores.

Units: MB/s = 1e6 bytes/s of accepted raw (uncompressed) NDJSON, per
wall-clock second from the first request to the last reply; wire MB/s = the
same bodies as sent; latency in milliseconds, per successful request, from
sending to reading the reply; peak RSS in MB (1e6 bytes).`,
		Example: `  # spawn spate serve with fsync per batch, 8 clients for 10s
  spate bench ingest

  # ingest against the best fsync-per-batch file writer
  spate bench ingest --fsync batch --compare-write

  # exactly 1 GiB of logs, gzip-compressed, 16 clients, as JSON
  spate bench ingest --volume 1GiB --gzip --clients 16 --json > ingest.json

  # the shippers' protocols against /insert/jsonline, same lines, each
  # on warm pages
  spate bench ingest --volume 512MiB --protocol jsonline,elasticsearch,loki,otlp --warm 1GiB

  # VictoriaLogs (or any server with these endpoints) with the same load
  spate bench ingest --url http://127.0.0.1:9428 --protocol jsonline,loki

  # your own logs instead of generated ones, cycled up to 1 GiB
  spate bench ingest --input app.ndjson --volume 1GiB --protocol jsonline,otlp

  # a server that is already running, with a token
  spate bench ingest --url http://127.0.0.1:9428 --token-file ~/.spate-token --duration 30s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runBenchIngest(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "", "load a running server at this URL instead of spawning one (e.g. http://127.0.0.1:9428 or .../api/v1/ingest)")
	f.BoolVar(&o.spawn, "spawn", true, "start spate serve as a child process on 127.0.0.1 and stop it afterwards; --url turns it off")
	f.IntVar(&o.clients, "clients", o.clients, "concurrent clients, each with one request in flight and its own keep-alive connection")
	f.DurationVar(&o.duration, "duration", o.duration, "how long to send (e.g. 30s, 2m); ignored with --volume")
	f.Var(&o.volume, "volume", "send exactly this many raw bytes, in whole bodies, instead of for --duration (e.g. 512MiB, 1GiB)")
	f.Var(&o.batchSize, "batch-size", "raw bytes per request body, in whole lines (e.g. 64KiB, 4MiB)")
	f.BoolVar(&o.gzip, "gzip", false, "send the bodies gzip-compressed (Content-Encoding: gzip), compressed before the run")
	f.StringVar(&o.fsync, "fsync", o.fsync, "the server's fsync mode: batch, interval or never; passed to a spawned server, and picks the --compare-write mode")
	f.StringVar(&o.tokenFile, "token-file", "", "send the first token in this file (one per line, as for serve --auth-token-file) as Authorization: Bearer TOKEN; a spawned server gets the file as its --auth-token-file")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the generated logs")
	f.Var(&o.warm, "warm", "before each run, once its bodies are made, write this many bytes to a file in --dir and delete it, so that every run writes into page-cache pages just freed (e.g. 2GiB; a VM's first touch of a page costs several times its reuse)")
	f.StringVar(&o.input, "input", "", "send the lines of this NDJSON file instead of generated logs: its first 256 MiB at most (64 MiB with --duration), cycled; protocols other than jsonline and elasticsearch need each line to be a JSON object")
	f.StringVar(&o.dir, "dir", "", "where the spawned server's data directory and the --compare-write files go (default: the system temp dir, "+os.TempDir()+")")
	f.BoolVar(&o.keep, "keep", false, "keep the spawned server's data directory")
	f.StringArrayVar(&o.serveArgs, "serve-arg", nil, "an extra argument for the spawned spate serve (repeatable), e.g. --serve-arg=--max-queue=256MiB")
	f.StringVar(&o.protocols, "protocol", "jsonline", "how the lines are sent: jsonline, elasticsearch (bulk), loki (protobuf+snappy), otlp (protobuf) or syslog (RFC 5424 over TCP, octet counting); a comma list runs each in turn against the same server and compares their MB/s with the first's")
	f.StringVar(&o.syslogAddr, "syslog-addr", "", "with --url and --protocol syslog: the server's syslog TCP address, HOST:PORT (a spawned server gets --syslog-tcp 127.0.0.1:0)")
	f.BoolVar(&o.compareWrite, "compare-write", false, "also run spate bench write with the matching fsync mode and report the ratio")
	f.BoolVar(&o.asJSON, "json", false, "print the report as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines on stderr")
	return cmd
}

// benchIngestReport is the --json output of `spate bench ingest`.
type benchIngestReport struct {
	Fsync  string               `json:"fsync"`            // the server's fsync mode, as given by --fsync
	Ingest benchingest.Result   `json:"ingest"`           // the load test
	Server *spawnedServerReport `json:"server,omitempty"` // the spawned server; absent with --url
	Write  *compareWriteReport  `json:"write,omitempty"`  // with --compare-write
	// Protocols holds one run per --protocol after the first (which is
	// Ingest), against the same server.
	Protocols []benchingest.Result `json:"protocols,omitempty"`
}

// spawnedServerReport describes the server `spate bench ingest` started.
type spawnedServerReport struct {
	Args      []string `json:"args"` // spate serve's arguments
	PID       int      `json:"pid"`
	URL       string   `json:"url"`      // as it printed it
	DataDir   string   `json:"data_dir"` // removed afterwards unless Kept
	Kept      bool     `json:"kept"`
	StartSec  float64  `json:"start_sec"`   // exec to its "listening on" line
	StopSec   float64  `json:"stop_sec"`    // SIGTERM to exit
	PeakRSSMB float64  `json:"peak_rss_mb"` // its peak resident set, 1e6 bytes
	ExitCode  int      `json:"exit_code"`   // after SIGTERM; -1 if killed by a signal
}

// compareWriteReport is the `spate bench write` run of --compare-write.
type compareWriteReport struct {
	Args       []string            `json:"args"` // the bench write arguments
	Fsync      benchwrite.SyncMode `json:"fsync"`
	BestWriter string              `json:"best_writer"`     // the fastest writer in that fsync mode
	BestMBps   float64             `json:"best_mb_per_sec"` // its MB/s
	// Ratio is the ingest MB/s over BestMBps.
	Ratio  float64           `json:"ratio"`
	Report benchwrite.Report `json:"report"`
}

func runBenchIngest(cmd *cobra.Command, o *benchIngestOpts) error {
	ctx := cmd.Context()
	changed := cmd.Flags().Changed
	if changed("url") && changed("spawn") {
		return usagef("--url and --spawn exclude each other: --url loads a running server, --spawn starts one")
	}
	if changed("duration") && changed("volume") {
		return usagef("--duration and --volume exclude each other: a run is either timed or sized")
	}
	if changed("seed") && changed("input") {
		return usagef("--seed and --input exclude each other: --seed picks generated logs, --input sends a file's")
	}
	if o.url != "" {
		o.spawn = false
	}
	cfg, err := o.config()
	if err != nil {
		return err
	}
	var progress io.Writer
	if !o.quiet {
		progress = cmd.ErrOrStderr()
	}
	cfg.Progress = progress
	exe, err := os.Executable()
	if err != nil && (o.spawn || o.compareWrite) {
		return fmt.Errorf("cannot find the spate executable to run spate serve with: %w", err)
	}
	rep := benchIngestReport{Fsync: o.fsync}

	protos, err := parseProtocols(o.protocols)
	if err != nil {
		return err
	}
	if slices.Contains(protos, benchingest.Syslog) && !o.spawn && o.syslogAddr == "" {
		return usagef("--protocol syslog with --url needs --syslog-addr HOST:PORT")
	}
	if o.syslogAddr != "" {
		cfg.SyslogAddr = o.syslogAddr
	}
	// runOne runs protocol p: on a server of its own when spawning (so
	// that no run pays for the background work of another), else on the
	// --url server once it has compressed what the last run sent.
	runOne := func(p benchingest.Protocol, first bool) (benchingest.Result, *spawnedServerReport, error) {
		c := cfg
		c.Protocol = p
		if !o.spawn {
			if !first {
				if d, err := benchingest.WaitQuiet(ctx, c.URL, 5*time.Minute); err == nil && d > time.Second {
					progressf(progress, "bench ingest: waited %.1fs for the server to compress what the last run sent\n", d.Seconds())
				}
			}
			res, err := benchingest.Run(ctx, c)
			return res, nil, err
		}
		dir := o.dir
		if dir == "" {
			dir = os.TempDir()
		}
		dataDir, err := os.MkdirTemp(dir, "spate-bench-ingest-")
		if err != nil {
			return benchingest.Result{}, nil, fmt.Errorf("cannot create the server's data directory: %w", err)
		}
		if !o.keep {
			defer os.RemoveAll(dataDir)
		}
		args := []string{"serve", "--data", dataDir, "--listen", "127.0.0.1:0", "--fsync", o.fsync}
		if o.tokenFile != "" {
			args = append(args, "--auth-token-file", o.tokenFile)
		}
		if p == benchingest.Syslog {
			args = append(args, "--syslog-tcp", "127.0.0.1:0")
		}
		args = append(args, o.serveArgs...)
		srv, err := spawnServe(ctx, exe, args)
		if err != nil {
			return benchingest.Result{}, nil, err
		}
		defer srv.kill() // on early returns; a no-op once stopped
		progressf(progress, "bench ingest: spate serve (pid %d) listening on %s after %.2fs\n", srv.cmd.Process.Pid, srv.url, srv.startSec)
		c.URL = srv.url
		c.SyslogAddr = srv.stderr.syslogAddr()
		sr := &spawnedServerReport{Args: args, PID: srv.cmd.Process.Pid, URL: srv.url, DataDir: dataDir, Kept: o.keep, StartSec: srv.startSec}
		res, runErr := benchingest.Run(ctx, c)
		st, stopErr := srv.stop()
		sr.StopSec, sr.PeakRSSMB, sr.ExitCode = st.stopSec, float64(st.peakRSS)/1e6, st.exitCode
		if o.keep {
			progressf(progress, "bench ingest: kept the server's data in %s\n", dataDir)
		}
		switch {
		case runErr != nil && stopErr != nil:
			return res, sr, fmt.Errorf("%w (and %w)", runErr, stopErr)
		case runErr != nil:
			return res, sr, fmt.Errorf("%w%s", runErr, srv.stderr.quote())
		case stopErr != nil:
			// The numbers stand; a server that did not stop cleanly is
			// still an error worth an exit code.
			return res, sr, &serverStopError{stopErr}
		}
		return res, sr, nil
	}
	var stopErr error
	res, sr, err := runOne(protos[0], true)
	rep.Ingest, rep.Server = res, sr
	var se *serverStopError
	if errors.As(err, &se) {
		stopErr, err = se.err, nil
	}
	if err != nil {
		return err
	}
	for _, p := range protos[1:] {
		r, _, err := runOne(p, false)
		if errors.As(err, &se) {
			stopErr, err = se.err, nil
		}
		if err != nil {
			return err
		}
		rep.Protocols = append(rep.Protocols, r)
	}

	if o.compareWrite {
		w, err := runCompareWrite(ctx, exe, o, &res, progress)
		if err != nil {
			return err
		}
		rep.Write = w
	}

	if o.asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := writeBenchIngestTable(cmd.OutOrStdout(), &rep); err != nil {
		return err
	}
	// The numbers stand; a server that did not stop cleanly is still an
	// error worth an exit code.
	return stopErr
}

// serverStopError is a spawned server that did not stop cleanly after a
// run whose numbers stand.
type serverStopError struct{ err error }

func (e *serverStopError) Error() string { return e.err.Error() }

// config turns the flags into a benchingest.Config, checking what it can
// before a server starts.
func (o *benchIngestOpts) config() (benchingest.Config, error) {
	var zero benchingest.Config
	if o.clients < 1 {
		return zero, usagef("--clients must be at least 1")
	}
	if o.volume == 0 && o.duration <= 0 {
		return zero, usagef("--duration must be positive")
	}
	if o.volume < 0 {
		return zero, usagef("--volume must not be negative")
	}
	if o.warm < 0 {
		return zero, usagef("--warm must not be negative")
	}
	if o.batchSize < 1 || o.batchSize > 1<<30 {
		return zero, usagef("--batch-size must be between 1 byte and 1GiB")
	}
	if _, ok := ingestFsyncModes[o.fsync]; !ok {
		return zero, usagef("invalid --fsync %q: want batch, interval or never", o.fsync)
	}
	if !o.spawn && o.url == "" {
		return zero, usagef("--spawn=false needs --url")
	}
	if len(o.serveArgs) > 0 && !o.spawn {
		return zero, usagef("--serve-arg needs a spawned server, not --url")
	}
	if o.input != "" {
		if _, err := os.Stat(o.input); err != nil {
			return zero, fmt.Errorf("cannot read the lines to send: %w", err)
		}
	}
	cfg := benchingest.Config{
		URL:        o.url,
		Clients:    o.clients,
		Duration:   o.duration,
		Volume:     int64(o.volume),
		BatchBytes: int(o.batchSize),
		Gzip:       o.gzip,
		Seed:       o.seed,
		Input:      o.input,
		Warm:       int64(o.warm),
		WarmDir:    o.dir,
	}
	if o.tokenFile != "" {
		tok, err := firstToken(o.tokenFile)
		if err != nil {
			return zero, err
		}
		cfg.Token = tok
	}
	return cfg, nil
}

// firstToken returns the first token in path, in the format of serve
// --auth-token-file: one per line, blank lines and '#' comments skipped,
// the token the first field (a tenant= or permission may follow it).
func firstToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read --token-file: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			return f[0], nil
		}
	}
	return "", usagef("--token-file %s holds no token", path)
}

// ingestServer is a running `spate serve` started by spawnServe.
type ingestServer struct {
	cmd      *exec.Cmd
	url      string
	startSec float64
	stderr   *lineTail
	exited   chan struct{} // closed when cmd.Wait has returned
	waitErr  error         // cmd.Wait's error, once exited is closed
	stopped  bool
}

// ingestServerStop is what stopping the server measured.
type ingestServerStop struct {
	stopSec  float64
	peakRSS  int64 // bytes
	exitCode int
}

// startServe runs exe with args (a `spate serve` command line) and waits
// for the line in which it says where it listens. The server's stderr is
// kept (its last lines) for error messages, not shown.
func spawnServe(ctx context.Context, exe string, args []string) (*ingestServer, error) {
	return spawnServeEnv(ctx, exe, args, nil)
}

// spawnServeEnv is spawnServe with env (NAME=VALUE) added to the
// environment.
func spawnServeEnv(ctx context.Context, exe string, args, env []string) (*ingestServer, error) {
	s := &ingestServer{stderr: newLineTail(20), exited: make(chan struct{})}
	s.cmd = exec.Command(exe, args...)
	if env != nil {
		s.cmd.Env = append(os.Environ(), env...)
	}
	s.cmd.Stderr = s.stderr
	s.cmd.WaitDelay = time.Second // do not wait for grandchildren holding stderr
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start spate serve: %w", err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	timer := time.NewTimer(serveStartTimeout)
	defer timer.Stop()
	select {
	case s.url = <-s.stderr.listening:
		s.startSec = time.Since(start).Seconds()
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("spate serve exited before listening: %w%s", s.waitErr, s.stderr.quote())
	case <-timer.C:
		s.kill()
		return nil, fmt.Errorf("spate serve did not say it was listening within %s%s", serveStartTimeout, s.stderr.quote())
	case <-ctx.Done():
		s.kill()
		return nil, ctx.Err()
	}
}

// stop reads the server's peak RSS, sends it SIGTERM and waits for it to
// exit (SIGKILL after serveStopTimeout). The error says how it did not
// stop cleanly.
func (s *ingestServer) stop() (ingestServerStop, error) {
	var st ingestServerStop
	pid := s.cmd.Process.Pid
	st.peakRSS = procVmHWM(pid) // while it runs; rusage below covers the whole life
	start := time.Now()
	s.stopped = true
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return st, fmt.Errorf("cannot stop spate serve: %w", err)
	}
	var err error
	timer := time.NewTimer(serveStopTimeout)
	defer timer.Stop()
	select {
	case <-s.exited:
	case <-timer.C:
		s.cmd.Process.Kill()
		<-s.exited
		err = fmt.Errorf("spate serve did not stop within %s of SIGTERM and was killed%s", serveStopTimeout, s.stderr.quote())
	}
	st.stopSec = time.Since(start).Seconds()
	if ps := s.cmd.ProcessState; ps != nil {
		st.exitCode = ps.ExitCode()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			st.peakRSS = max(st.peakRSS, ru.Maxrss*1024) // ru_maxrss is in KiB on Linux
		}
	}
	if err == nil && s.waitErr != nil {
		err = fmt.Errorf("spate serve did not shut down cleanly after SIGTERM: %w%s", s.waitErr, s.stderr.quote())
	}
	return st, err
}

// kill ends a server that was not stopped, on an early return.
func (s *ingestServer) kill() {
	if s.stopped {
		return
	}
	s.stopped = true
	s.cmd.Process.Kill()
	<-s.exited
}

// procVmHWM returns the peak resident set of process pid in bytes from
// /proc/PID/status, or 0 where that is not available.
func procVmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// serveListeningPrefix starts the line in which `spate serve` says where
// it listens: "spate serve: listening on http://127.0.0.1:PORT".
const serveListeningPrefix = "spate serve: listening on "

// lineTail is an io.Writer for a child's stderr: it keeps the last n lines
// and sends the URL of the first serveListeningPrefix line on listening.
// It is safe for concurrent use.
type lineTail struct {
	listening chan string // buffered; receives one URL at most

	mu      sync.Mutex
	n       int
	partial []byte
	lines   []string
	found   bool
	syslog  string // the syslog TCP address, once said
}

func newLineTail(n int) *lineTail {
	return &lineTail{n: n, listening: make(chan string, 1)}
}

func (t *lineTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.addLine(string(bytes.TrimRight(t.partial[:i], "\r")))
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > 4096 {
		t.addLine(string(t.partial)) // a runaway line: keep its start
		t.partial = t.partial[:0]
	}
	return len(p), nil
}

// syslogAddr returns the syslog TCP address the server said it listens
// on ("spate serve: syslog on tcp://ADDR"), or "".
func (t *lineTail) syslogAddr() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.syslog
}

// addLine keeps line and looks for the listening address. Callers hold mu.
func (t *lineTail) addLine(line string) {
	if a, ok := strings.CutPrefix(line, "spate serve: syslog on tcp://"); ok {
		t.syslog = strings.TrimSpace(a)
	}
	if !t.found {
		if u, ok := strings.CutPrefix(line, serveListeningPrefix); ok {
			t.found = true
			t.listening <- strings.TrimSpace(u)
		}
	}
	t.lines = append(t.lines, line)
	if len(t.lines) > t.n {
		t.lines = t.lines[1:]
	}
}

// quote returns the kept lines for an error message, on lines of their
// own after "spate serve's last output:", or "" when there were none.
func (t *lineTail) quote() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.partial) > 0 {
		lines = append(lines[:len(lines):len(lines)], string(t.partial))
	}
	if len(lines) == 0 {
		return ""
	}
	return "\nspate serve's last output:\n  " + strings.Join(lines, "\n  ")
}

// runCompareWrite runs `spate bench write` shaped like the ingest run:
// records of the average line size, a batch of one body's lines, the
// matching fsync mode, in --dir.
func runCompareWrite(ctx context.Context, exe string, o *benchIngestOpts, res *benchingest.Result, progress io.Writer) (*compareWriteReport, error) {
	mode := ingestFsyncModes[o.fsync]
	recordSize := max(int64(math.Round(res.AvgLineBytes)), 1)
	batch := max(int64(math.Round(res.AvgBodyBytes/res.AvgLineBytes)), 1)
	size := min(max(res.AcceptedBytes, res.PoolBytes), compareWriteMaxSize)
	size = max(size, recordSize*batch)
	recordSize = max(recordSize, int64(benchwrite.MinRecordSize(size/recordSize)))
	dir := o.dir
	if dir == "" {
		dir = os.TempDir()
	}
	args := []string{"bench", "write", "--fsync", string(mode), "--size", strconv.FormatInt(size, 10),
		"--record-size", strconv.FormatInt(recordSize, 10), "--batch", strconv.FormatInt(batch, 10), "--dir", dir,
		"--writers", "bufio-64k,bufio-1m,writev,mmap", "--json", "-q"}
	progressf(progress, "bench ingest: comparing with spate %s\n", strings.Join(args[:len(args)-2], " "))
	c := exec.CommandContext(ctx, exe, args...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return nil, fmt.Errorf("spate bench write failed: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	w := &compareWriteReport{Args: args, Fsync: mode}
	if err := json.Unmarshal(stdout.Bytes(), &w.Report); err != nil {
		return nil, fmt.Errorf("cannot decode the report of spate bench write: %w", err)
	}
	for _, r := range w.Report.Rows {
		if r.Sync == mode && r.MBps > w.BestMBps {
			w.BestWriter, w.BestMBps = r.Writer, r.MBps
		}
	}
	if w.BestWriter == "" {
		return nil, fmt.Errorf("spate bench write reported no writer with fsync %s", mode)
	}
	w.Ratio = res.MBps / w.BestMBps
	return w, nil
}

// ingestWriteGoal is spate's bar for ingest MB/s over the best writer's
// with fsync per batch.
const ingestWriteGoal = 0.5

func writeBenchIngestTable(w io.Writer, rep *benchIngestReport) error {
	if err := benchingest.WriteTable(w, &rep.Ingest); err != nil {
		return err
	}
	if s := rep.Server; s != nil {
		kept := "removed"
		if s.Kept {
			kept = "kept"
		}
		fmt.Fprintf(w, "\nserver: spate %s (pid %d)\n", strings.Join(s.Args, " "), s.PID)
		fmt.Fprintf(w, "  listening after %.2fs; peak RSS %.1f MB; stopped %.2fs after SIGTERM, exit code %d; data directory %s\n",
			s.StartSec, s.PeakRSSMB, s.StopSec, s.ExitCode, kept)
	} else {
		fmt.Fprintf(w, "\nserver: %s, fsync %s (as given by --fsync)\n", rep.Ingest.URL, rep.Fsync)
	}
	if c := rep.Write; c != nil {
		fmt.Fprintf(w, "\nspate %s\n", strings.Join(c.Args[:len(c.Args)-2], " "))
		fmt.Fprintf(w, "  fastest writer with fsync %s: %s at %.1f MB/s (%d records of %d B in batches of %d, on %s)\n",
			c.Fsync, c.BestWriter, c.BestMBps, c.Report.Records, c.Report.RecordSize, c.Report.Batch, c.Report.FSType)
		fmt.Fprintf(w, "ingest : best writer = %.1f MB/s : %.1f MB/s = %.2f", rep.Ingest.MBps, c.BestMBps, c.Ratio)
		if c.Fsync == benchwrite.SyncBatch {
			verdict := "met"
			if c.Ratio < ingestWriteGoal {
				verdict = "not met"
			}
			fmt.Fprintf(w, "; spate aims for at least %.2f with fsync per batch: %s", ingestWriteGoal, verdict)
		}
		fmt.Fprintln(w)
	}
	if len(rep.Protocols) > 0 {
		base := rep.Ingest
		fmt.Fprintf(w, "\n| protocol | MB/s | lines/s | wire MB/s | P95 ms | MB/s over %s | stored / sent | server CPU s per GB |\n|---|---:|---:|---:|---:|---:|---:|---:|\n", base.Protocol)
		for _, r := range append([]benchingest.Result{base}, rep.Protocols...) {
			stored, cpu := "-", "-"
			if b, ok := r.ServerMetrics["spate_ingest_stored_bytes_total"]; ok && r.AcceptedBytes > 0 {
				stored = fmt.Sprintf("%.2f", b/float64(r.AcceptedBytes))
			}
			if c, ok := r.ServerMetrics["process_cpu_seconds_total"]; ok && r.AcceptedBytes > 0 {
				cpu = fmt.Sprintf("%.2f", c/(float64(r.AcceptedBytes)/1e9))
			}
			fmt.Fprintf(w, "| %s | %.1f | %.0f | %.1f | %.1f | %.2f | %s | %s |\n", r.Protocol, r.MBps, r.LinesPerSec, r.WireMBps, r.LatencyMS.P95, r.MBps/max(base.MBps, 1e-9), stored, cpu)
		}
		fmt.Fprintf(w, "\nstored / sent: bytes spate stored (spate_ingest_stored_bytes_total) over the NDJSON payload: rows in VictoriaLogs' model carry\n"+
			"_stream, _stream_id and the protocol's own fields; server CPU s per GB: its process_cpu_seconds_total during the run per GB of payload\n"+
			"(background compression and indexing of sealed segments included as far as they ran; \"-\": the server does not export it).\n")
	}
	_, err := fmt.Fprintf(w, "\n%s\n", benchingest.Units)
	return err
}

func progressf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// parseProtocols reads --protocol: one protocol or a comma list.
func parseProtocols(s string) ([]benchingest.Protocol, error) {
	var out []benchingest.Protocol
	for f := range strings.SplitSeq(s, ",") {
		p, err := benchingest.ParseProtocol(strings.TrimSpace(f))
		if err != nil {
			return nil, usagef("--protocol: %v", err)
		}
		out = append(out, p)
	}
	return out, nil
}
