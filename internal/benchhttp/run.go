// Package benchhttp measures HTTP serving strategies on loopback: how a
// handler writes a response (unbuffered, bufio, one buffer) and how a file
// reaches the socket (sendfile, bufio.Reader, io.CopyBuffer, mmap, spate's
// file server, nginx). It powers `spate bench http`.
//
// Every server runs in a fresh child process (or is nginx), so its CPU
// time, system calls and peak RSS are its own, read from /proc. The load
// comes from a built-in closed-loop HTTP/1.1 client in this process
// (keep-alive connections, one request in flight on each, latency in a
// histogram) that reads every byte of every body and fails the run on a
// wrong status or length. On a small machine the client and the server
// share the CPUs, as they do with wrk.
package benchhttp

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spate-io/spate/internal/benchenv"
	"github.com/spate-io/spate/internal/latency"
)

// Config says what to measure. Zero values mean the defaults noted.
type Config struct {
	Suites           []string      // empty: both
	Responses        []string      // response variants; empty: all
	Downloads        []string      // download variants; empty: all
	Conns            []int         // connection counts; empty: 1, 10, 64
	Warmup, Duration time.Duration // per row; 0: 1s and 3s
	BigSize          int64         // the big file; 0: 100 MiB
	SmallFiles       int           // number of small files; 0: 10,000
	SmallSize        int64         // size of each; 0: 4 KiB
	Dir              string        // where the files are made (and removed); "": the temp dir
	Seed             uint64        // of the files' bytes
	Nginx            string        // nginx binary; "": look it up; "off": skip the nginx row
	ChildCommand     []string      // runs RunServer; the ServerSpec is appended as JSON
	Progress         io.Writer     // one line per row; nil: none

	httpClient *http.Client // for the check requests
}

func (c *Config) setDefaults() error {
	if len(c.Suites) == 0 {
		c.Suites = []string{SuiteResponses, SuiteDownloads}
	}
	for _, s := range c.Suites {
		if s != SuiteResponses && s != SuiteDownloads {
			return fmt.Errorf("unknown suite %q: want responses or downloads", s)
		}
	}
	if len(c.Responses) == 0 {
		c.Responses = ResponseVariants
	}
	if len(c.Downloads) == 0 {
		c.Downloads = DownloadVariants
	}
	for _, v := range c.Responses {
		if !slices.Contains(ResponseVariants, v) {
			return fmt.Errorf("unknown response variant %q: want %s", v, strings.Join(ResponseVariants, ", "))
		}
	}
	for _, v := range c.Downloads {
		if !slices.Contains(DownloadVariants, v) {
			return fmt.Errorf("unknown download variant %q: want %s", v, strings.Join(DownloadVariants, ", "))
		}
	}
	// Report order, whatever order they were given in.
	c.Responses = slices.DeleteFunc(slices.Clone(ResponseVariants), func(v string) bool { return !slices.Contains(c.Responses, v) })
	c.Downloads = slices.DeleteFunc(slices.Clone(DownloadVariants), func(v string) bool { return !slices.Contains(c.Downloads, v) })
	if len(c.Conns) == 0 {
		c.Conns = []int{1, 10, 64}
	}
	for _, n := range c.Conns {
		if n < 1 || n > 4096 {
			return fmt.Errorf("connection count %d: want 1 to 4096", n)
		}
	}
	if c.Warmup == 0 {
		c.Warmup = time.Second
	}
	if c.Duration == 0 {
		c.Duration = 3 * time.Second
	}
	if c.BigSize == 0 {
		c.BigSize = 100 << 20
	}
	if c.SmallFiles == 0 {
		c.SmallFiles = 10000
	}
	if c.SmallSize == 0 {
		c.SmallSize = 4 << 10
	}
	switch {
	case c.Warmup < 0 || c.Duration < 0 || c.SmallSize < 0:
		return errors.New("durations and sizes must not be negative")
	case c.BigSize < 0 && c.SmallFiles < 0 && slices.Contains(c.Suites, SuiteDownloads):
		return errors.New("the downloads suite needs a big file or small files")
	case c.SmallFiles > 1_000_000:
		return errors.New("at most 1,000,000 small files")
	}
	if c.Dir == "" {
		c.Dir = os.TempDir()
	}
	if len(c.ChildCommand) == 0 {
		return errors.New("BUG: benchhttp.Config.ChildCommand is empty")
	}
	c.httpClient = &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableCompression: true}}
	return nil
}

// Report is the result of Run.
type Report struct {
	Machine    benchenv.Machine `json:"machine"`
	Warmup     float64          `json:"warmup_seconds"`
	Duration   float64          `json:"duration_seconds"`
	Conns      []int            `json:"connections"`
	BodyBytes  int              `json:"response_body_bytes"`
	BodyWrites int              `json:"response_body_writes"`
	BigSize    int64            `json:"big_file_bytes"`
	SmallFiles int              `json:"small_files"`
	SmallSize  int64            `json:"small_file_bytes"`
	Dir        string           `json:"dir"`
	Nginx      string           `json:"nginx,omitempty"` // its version line, when it ran
	// ProcStats says whether CPU, syscalls and RSS were measured (Linux).
	ProcStats bool     `json:"proc_stats"`
	Rows      []Row    `json:"rows"`
	Notes     []string `json:"notes,omitempty"`
}

// Workloads.
const (
	WorkloadJSON  = "json"  // the responses suite's document
	WorkloadBig   = "big"   // the big file
	WorkloadSmall = "small" // the small files, in turn
)

// Row is one server under one workload at one connection count.
type Row struct {
	Suite    string       `json:"suite"`
	Workload string       `json:"workload"`
	Variant  string       `json:"variant"`
	Conns    int          `json:"connections"`
	Requests uint64       `json:"requests"`
	Seconds  float64      `json:"seconds"`
	QPS      float64      `json:"requests_per_second"`
	MBps     float64      `json:"mb_per_second"` // body bytes, 1e6 per MB
	Latency  latency.Pctl `json:"latency_ms"`
	// Server side, over the measured window (-1 when not measured):
	CPUPerReq      float64 `json:"server_cpu_us_per_request"`
	CPUCores       float64 `json:"server_cpu_cores"` // CPU seconds per second
	SyscallsPerReq float64 `json:"server_syscalls_per_request"`
	PeakRSSMB      float64 `json:"server_peak_rss_mb"` // the server's whole life: start, check, warm-up and window
	// Vs is QPS over the baseline row's (Base) with the same workload and
	// connections; 0 when that row did not run.
	Vs   float64 `json:"vs_base,omitempty"`
	Base string  `json:"base,omitempty"`
}

// Run measures every configured row and returns the report. It makes the
// downloads suite's files under cfg.Dir first and removes them after.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	body := Body()
	var counter countWriter
	writeBody(&counter)
	rep := &Report{
		Machine: benchenv.Describe(), Warmup: cfg.Warmup.Seconds(), Duration: cfg.Duration.Seconds(),
		Conns: cfg.Conns, BodyBytes: len(body), BodyWrites: counter.writes,
		ProcStats: procAvailable,
	}
	r := &runner{cfg: cfg, rep: rep}
	for _, suite := range cfg.Suites {
		var err error
		if suite == SuiteResponses {
			err = r.responses(ctx, body)
		} else {
			err = r.downloads(ctx)
		}
		if err != nil {
			return nil, err
		}
	}
	setRatios(rep)
	return rep, nil
}

type countWriter struct{ writes int }

func (c *countWriter) Write(p []byte) (int, error) { c.writes++; return len(p), nil }

type runner struct {
	cfg Config
	rep *Report
}

func (r *runner) progress(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "bench http: "+format+"\n", args...)
	}
}

func (r *runner) responses(ctx context.Context, body []byte) error {
	for _, conns := range r.cfg.Conns {
		for _, v := range r.cfg.Responses {
			row := Row{Suite: SuiteResponses, Workload: WorkloadJSON, Variant: v, Conns: conns}
			check := func(base string, c *http.Client) error {
				return checkBody(c, base+"json", body)
			}
			if err := r.row(ctx, &row, ServerSpec{Suite: SuiteResponses, Variant: v}, []string{"json"}, []int64{int64(len(body))}, check); err != nil {
				return err
			}
		}
	}
	return nil
}

// files is the downloads suite's tree.
type files struct {
	dir        string
	big        []byte // its sha256
	smallPaths []string
	small      [][]byte // the first few small files' bytes, for the check
}

func (r *runner) downloads(ctx context.Context) (err error) {
	big, n := max(r.cfg.BigSize, 0), max(r.cfg.SmallFiles, 0)
	r.rep.BigSize, r.rep.SmallFiles, r.rep.SmallSize = big, n, r.cfg.SmallSize
	r.progress("making %s and %d files of %s under %s", benchenv.HumanBytes(big), n, benchenv.HumanBytes(r.cfg.SmallSize), r.cfg.Dir)
	fs, err := makeFiles(r.cfg.Dir, r.cfg.Seed, big, n, r.cfg.SmallSize)
	if err != nil {
		return err
	}
	defer func() {
		if rerr := os.RemoveAll(fs.dir); rerr != nil && err == nil {
			err = fmt.Errorf("cannot remove the bench files: %w", rerr)
		}
	}()
	r.rep.Dir = fs.dir
	variants := r.cfg.Downloads
	var ng *nginxBin
	if slices.Contains(variants, "nginx") {
		ng, err = findNginx(r.cfg.Nginx)
		if err != nil {
			return err
		}
		if ng == nil {
			variants = slices.DeleteFunc(slices.Clone(variants), func(v string) bool { return v == "nginx" })
			r.rep.Notes = append(r.rep.Notes, "nginx row skipped: no nginx binary found (install nginx or give --nginx PATH)")
		} else {
			r.rep.Nginx = ng.version
		}
	}
	workloads := []struct {
		name  string
		paths []string
		sizes []int64
	}{
		{WorkloadBig, []string{"big.bin"}, []int64{big}},
		{WorkloadSmall, fs.smallPaths, repeat(r.cfg.SmallSize, len(fs.smallPaths))},
	}
	for _, wl := range workloads {
		if len(wl.paths) == 0 || (wl.name == WorkloadBig && big == 0) {
			continue
		}
		check := func(base string, c *http.Client) error {
			if wl.name == WorkloadBig {
				return checkSum(c, base+"big.bin", fs.big)
			}
			for i, want := range fs.small {
				if err := checkBody(c, base+fs.smallPaths[i], want); err != nil {
					return err
				}
			}
			return nil
		}
		for _, conns := range r.cfg.Conns {
			for _, v := range variants {
				row := Row{Suite: SuiteDownloads, Workload: wl.name, Variant: v, Conns: conns}
				spec := ServerSpec{Suite: SuiteDownloads, Variant: v, Dir: fs.dir}
				if v == "nginx" {
					spec.Dir = fs.dir
					err = r.nginxRow(ctx, ng, &row, spec, wl.paths, wl.sizes, check)
				} else {
					err = r.row(ctx, &row, spec, wl.paths, wl.sizes, check)
				}
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func repeat(v int64, n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// row runs one child server and measures it.
func (r *runner) row(ctx context.Context, row *Row, spec ServerSpec, paths []string, sizes []int64, check func(string, *http.Client) error) error {
	srv, err := startChild(ctx, r.cfg.ChildCommand, spec)
	if err != nil {
		return err
	}
	defer srv.stop()
	return r.measure(ctx, row, srv.addr, srv.prefix, []int{srv.pid}, nil, paths, sizes, check)
}

// measure checks the server's answers, runs the load and fills row.
// pids are the server's processes; more, if set, finds others that join
// later (nginx's workers).
func (r *runner) measure(ctx context.Context, row *Row, addr, prefix string, pids []int, more func() []int, paths []string, sizes []int64, check func(string, *http.Client) error) error {
	name := fmt.Sprintf("%s %s %s, %d conn", row.Suite, row.Workload, row.Variant, row.Conns)
	if err := check("http://"+addr+prefix, r.cfg.httpClient); err != nil {
		return fmt.Errorf("%s: wrong answer before the run: %w", name, err)
	}
	full := make([]string, len(paths))
	for i, p := range paths {
		full[i] = prefix + p
	}
	var before, after procSample
	var serr error
	all := func() []int {
		if more != nil {
			return append(slices.Clone(pids), more()...)
		}
		return pids
	}
	res, err := RunLoad(ctx, Load{
		Addr: addr, Paths: full, Sizes: sizes, Conns: row.Conns, Warmup: r.cfg.Warmup, Duration: r.cfg.Duration,
		Window: func(open bool) {
			s, err := sample(all())
			if err != nil && serr == nil {
				serr = err
			}
			if open {
				before = s
			} else {
				after = s
			}
		},
	})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	row.Requests = res.Requests
	row.Seconds = res.Elapsed.Seconds()
	row.QPS = float64(res.Requests) / row.Seconds
	row.MBps = float64(res.Bytes) / 1e6 / row.Seconds
	row.Latency = res.Hist.Pctl()
	row.CPUPerReq, row.CPUCores, row.SyscallsPerReq, row.PeakRSSMB = -1, -1, -1, -1
	if procAvailable && serr == nil {
		cpu := (after.cpu - before.cpu).Seconds()
		row.CPUCores = cpu / row.Seconds
		if res.Requests > 0 {
			row.CPUPerReq = cpu * 1e6 / float64(res.Requests)
			row.SyscallsPerReq = float64(after.syscalls-before.syscalls) / float64(res.Requests)
		}
		row.PeakRSSMB = float64(after.hwmKiB) * 1024 / 1e6
	}
	r.rep.Rows = append(r.rep.Rows, *row)
	r.progress("%-40s %9.0f req/s %9.1f MB/s  p99 %.2f ms", name, row.QPS, row.MBps, row.Latency.P99)
	return nil
}

// child is a running server process.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	pid    int
	addr   string
	prefix string
}

func startChild(ctx context.Context, command []string, spec ServerSpec) (*child, error) {
	b, _ := json.Marshal(spec)
	cmd := exec.Command(command[0], append(slices.Clone(command[1:]), string(b))...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the %s server: %w", spec.Variant, err)
	}
	c := &child{cmd: cmd, stdin: stdin, pid: cmd.Process.Pid}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	var ready ServerReady
	if err == nil {
		err = json.Unmarshal(line, &ready)
	}
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("the %s server did not start: %w", spec.Variant, err)
	}
	c.addr, c.prefix = ready.Addr, ready.Prefix
	go io.Copy(io.Discard, stdout)
	return c, nil
}

// stop closes the child's stdin, which ends it, and waits; a child that
// lingers is killed.
func (c *child) stop() {
	c.stdin.Close()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// makeFiles writes the downloads suite's files into a new directory under
// dir, readable by everyone (nginx's workers run as another user).
func makeFiles(dir string, seed uint64, bigSize int64, n int, smallSize int64) (*files, error) {
	root, err := os.MkdirTemp(dir, "spate-bench-http-")
	if err != nil {
		return nil, fmt.Errorf("cannot make the bench files: %w", err)
	}
	fs := &files{dir: root}
	fail := func(err error) (*files, error) {
		os.RemoveAll(root)
		return nil, fmt.Errorf("cannot make the bench files: %w", err)
	}
	rng := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24), byte(seed >> 32), byte(seed >> 40), byte(seed >> 48), byte(seed >> 56)})
	if err := os.Chmod(root, 0o755); err != nil {
		return fail(err)
	}
	if bigSize > 0 {
		f, err := os.OpenFile(filepath.Join(root, "big.bin"), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
		if err != nil {
			return fail(err)
		}
		h := sha256.New()
		_, err = io.Copy(io.MultiWriter(f, h), io.LimitReader(rng, bigSize))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fail(err)
		}
		fs.big = h.Sum(nil)
	}
	if n > 0 {
		if err := os.Mkdir(filepath.Join(root, "small"), 0o755); err != nil {
			return fail(err)
		}
		buf := make([]byte, smallSize)
		for i := range n {
			rng.Read(buf)
			p := fmt.Sprintf("small/%06d.bin", i)
			if err := os.WriteFile(filepath.Join(root, p), buf, 0o644); err != nil {
				return fail(err)
			}
			fs.smallPaths = append(fs.smallPaths, p)
			if i < 3 {
				fs.small = append(fs.small, slices.Clone(buf))
			}
		}
	}
	return fs, nil
}

func get(c *http.Client, url string) (*http.Response, error) {
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return resp, nil
}

// checkBody fails unless GET url answers want, byte for byte.
func checkBody(c *http.Client, url string, want []byte) error {
	resp, err := get(c, url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if string(got) != string(want) {
		return fmt.Errorf("GET %s: %d bytes that differ from the %d expected", url, len(got), len(want))
	}
	return nil
}

// checkSum fails unless GET url answers bytes with sha256 sum.
func checkSum(c *http.Client, url string, sum []byte) error {
	resp, err := get(c, url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	h := sha256.New()
	if _, err := io.Copy(h, resp.Body); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if string(h.Sum(nil)) != string(sum) {
		return fmt.Errorf("GET %s: the body's sha256 differs from the file's", url)
	}
	return nil
}

// setRatios fills each row's Vs: QPS over the baseline's with the same
// workload and connections. The baseline is direct for responses, and
// nginx (or copy when nginx did not run) for downloads.
func setRatios(rep *Report) {
	type key struct {
		workload string
		conns    int
	}
	base := map[key]float64{}
	baseOf := func(r Row) string {
		if r.Suite == SuiteResponses {
			return "direct"
		}
		if rep.Nginx != "" {
			return "nginx"
		}
		return "copy"
	}
	for _, r := range rep.Rows {
		if r.Variant == baseOf(r) {
			base[key{r.Workload, r.Conns}] = r.QPS
		}
	}
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if b := base[key{r.Workload, r.Conns}]; b > 0 {
			r.Vs, r.Base = r.QPS/b, baseOf(*r)
		}
	}
}

// freePort returns a loopback address nothing listens on (for nginx, which
// cannot report the port it picked).
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, nil
}
