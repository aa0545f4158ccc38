package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/spate-io/spate/internal/benchenv"
	"github.com/spate-io/spate/internal/gen"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/segindex"
	"github.com/spate-io/spate/internal/segment"
)

// benchServeOpts are the flags of `spate bench serve`.
type benchServeOpts struct {
	size   sizeFlag
	seed   uint64
	rounds int
	vl     string
	noVL   bool
	dir    string
	// peers > 0 also stores the lines dealt over that many nodes and
	// times the queries through a --select-peers front over them;
	// peerCPUs sets each node's GOMAXPROCS (0: Go's default).
	peers, peerCPUs int
}

func newBenchServeCmd() *cobra.Command {
	o := benchServeOpts{size: 1 << 30, rounds: 3}
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "spate serve against VictoriaLogs: the standard queries over the same stored logs",
		Long: `Generate logs, store them in a fresh spate serve (with its defaults: fsync per
batch, sealed segments compressed and indexed) and, when it can be found, in a
fresh VictoriaLogs, then time the standard queries over HTTP on both, with
the answers compared, and report disk use and the CPU that the sidecar
indexes cost against ingestion.

VictoriaLogs is --victoria-logs, else victoria-logs in PATH or in
$HOME/go/bin (go install github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs@v1.52.1).
Without it, spate's times are reported alone.

What it aims at: every query within 2x of VictoriaLogs' time, needle
queries (level:=error, a word, a trace id) no slower; disk (segments and
sidecars) at most 2.5x VictoriaLogs'; index building at most 20% of the CPU
that ingestion uses. With --peers, a query fanned out over N nodes within
1.2x of the one node's time (on one machine the nodes share its CPUs).`,
		Example: `  # the default run: 1 GiB, 3 rounds (a few minutes on 2 cores)
  spate bench serve

  # a quick look
  spate bench serve --size 128MiB --rounds 1 --no-victoria-logs

  # also the query fan-out: two storage nodes with half the lines each,
  # one CPU each, under a --select-peers front, against one node
  spate bench serve --no-victoria-logs --peers 2 --peer-cpus 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.rounds < 1 {
				return usagef("--rounds must be at least 1")
			}
			if o.peers < 0 || o.peers == 1 || o.peers > 16 {
				return usagef("--peers must be 0 (off) or 2 to 16")
			}
			if o.peerCPUs < 0 || o.peerCPUs > 0 && o.peers == 0 {
				return usagef("--peer-cpus needs --peers, and cannot be negative")
			}
			return runBenchServe(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.Var(&o.size, "size", "bytes of `spate gen` logs to store")
	fl.Uint64Var(&o.seed, "seed", 1, "gen seed")
	fl.IntVar(&o.rounds, "rounds", o.rounds, "times each query runs on each server (the median is reported)")
	fl.StringVar(&o.vl, "victoria-logs", "", "the victoria-logs binary (default: found in PATH or $HOME/go/bin)")
	fl.BoolVar(&o.noVL, "no-victoria-logs", false, "measure spate alone")
	fl.StringVar(&o.dir, "dir", "", "work directory for the logs and both data directories, kept afterwards (default: a temp directory, removed)")
	fl.IntVar(&o.peers, "peers", 0, "also deal the lines over this many spate serve nodes (line i to node i mod N) and time the queries through a spate serve --select-peers front over them, against the one node that holds them all (0: off)")
	fl.IntVar(&o.peerCPUs, "peer-cpus", 0, "with --peers: run each node with GOMAXPROCS set to this (its share of the machine when they share one; 0: Go's default, every CPU)")
	return cmd
}

// serveQuery is one query of the standard set.
type serveQuery struct {
	name, q string
	needle  bool // no slower than VictoriaLogs (else within 2x)
	rows    bool // rows in any order: only their count is compared
	// sampled names the quantile results, which VictoriaLogs estimates
	// from a sample of 10,000 values per group (so they vary between its
	// runs) where spate's are exact: compared within quantileTolerance.
	sampled []string
}

// quantileTolerance is how far, relatively, a quantile VictoriaLogs
// estimated from a sample may be from spate's exact one and still agree.
const quantileTolerance = 0.02

func runBenchServe(ctx context.Context, o benchServeOpts, stdout, stderr io.Writer) error {
	say := func(format string, args ...any) { fmt.Fprintf(stderr, "spate bench serve: "+format+"\n", args...) }
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	vlBin := ""
	if !o.noVL {
		if vlBin, err = findVictoriaLogs(o.vl); err != nil {
			return err
		}
		if vlBin == "" {
			say("no victoria-logs found (--victoria-logs); measuring spate alone")
		}
	}
	dir := o.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "spate-bench-serve-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logs := filepath.Join(dir, "logs.ndjson")
	say("gen %s of logs", formatSize(int64(o.size)))
	gst, err := gen.WriteFile(ctx, logs, gen.Config{Size: int64(o.size), Seed: o.seed})
	if err != nil {
		return err
	}
	first, last, trace, err := logsSpan(logs)
	if err != nil {
		return err
	}
	// The middle eighth of the logs' time span.
	span := last.Sub(first)
	wlo := first.Add(span * 7 / 16).Truncate(time.Second)
	whi := wlo.Add(span / 8).Truncate(time.Second)
	queries := []serveQuery{
		{name: "by service", q: `* | stats by (service) count() n`},
		{name: "5xx by service", q: `status:>=500 | stats by (service) count() n, avg(latency_ms) avg_lat, quantile(0.95, latency_ms) p95`, sampled: []string{"p95"}},
		{name: "level:=error", q: `level:=error | stats count() n`, needle: true},
		{name: "top paths by bytes", q: `bytes:>=0 | stats by (path) sum(bytes) s | sort by (s desc, path) | limit 10`},
		{name: "word error, limit 10", q: `error | limit 10`, needle: true, rows: true},
		{name: "trace id", q: `trace_id:=` + trace + ` | fields _time, trace_id, service`, needle: true},
		{name: "word upstream, count", q: `upstream | stats count() n`},
		{name: "an eighth of the time, by service", q: fmt.Sprintf(`_time:[%s, %s) | stats by (service) count() n`, wlo.Format(time.RFC3339), whi.Format(time.RFC3339))},
	}

	spDir := filepath.Join(dir, "spate")
	say("spate: ingest %d lines", gst.Lines)
	sp, st, err := storeSealed(ctx, exe, spDir, logs, nil)
	if err != nil {
		return err
	}
	defer sp.kill()
	spIngest, ingestCPU, sealSec, sealCPU := st.ingestSec, st.ingestCPU, st.sealSec, st.sealCPU
	say("spate: ingested in %.2f s, sealed (compressed and indexed) in %.2f s", spIngest, sealSec)

	var fan *fanout
	if o.peers > 0 {
		say("fan-out: deal the lines over %d nodes", o.peers)
		if fan, err = startFanout(ctx, exe, dir, logs, o.peers, o.peerCPUs); err != nil {
			return err
		}
		defer fan.kill()
	}

	var vlURL string
	var vlIngest float64
	stopVictoriaLogs := func() {}
	vlDir := filepath.Join(dir, "victoria-logs")
	if vlBin != "" {
		os.RemoveAll(vlDir)
		vl, u, err := startVictoriaLogsBench(ctx, vlBin, vlDir)
		if err != nil {
			return err
		}
		stopVL := func() {
			if vl != nil {
				vl.Process.Signal(syscall.SIGTERM)
				vl.Wait()
				vl = nil
			}
		}
		defer stopVL()
		stopVictoriaLogs = stopVL
		say("VictoriaLogs: ingest")
		t0 := time.Now()
		if _, err := postLogs(ctx, u+"/insert/jsonline?_time_field=ts&_msg_field=msg", logs); err != nil {
			return fmt.Errorf("VictoriaLogs ingest: %w", err)
		}
		if _, _, err := httpGet(ctx, u+"/internal/force_flush"); err != nil {
			return err
		}
		vlIngest = time.Since(t0).Seconds()
		vlURL = u
		// Its settled size and speed: parts merged, as spate's segments
		// are compressed and indexed.
		say("VictoriaLogs: force merge")
		if err := forceMergeVictoriaLogs(ctx, u); err != nil {
			return err
		}
	}

	// Index building alone, in this process, for its CPU cost.
	say("index building alone")
	indexCPU, err := indexCPUSeconds(logs)
	if err != nil {
		return err
	}

	type result struct {
		sp, vl, fan float64
		agree       string
		fanAgree    string
	}
	results := make([]result, len(queries))
	for i, q := range queries {
		var spT, vlT, fanT []float64
		var spAns, vlAns, fanAns []byte
		for range o.rounds {
			t, ans, err := timeQuery(ctx, sp.url, q.q)
			if err != nil {
				return fmt.Errorf("spate: %s: %w", q.q, err)
			}
			spT, spAns = append(spT, t), ans
			if fan != nil {
				t, ans, err := timeQuery(ctx, fan.front.url, q.q)
				if err != nil {
					return fmt.Errorf("fan-out: %s: %w", q.q, err)
				}
				fanT, fanAns = append(fanT, t), ans
			}
			if vlURL != "" {
				t, ans, err := timeQuery(ctx, vlURL, q.q)
				if err != nil {
					return fmt.Errorf("VictoriaLogs: %s: %w", q.q, err)
				}
				vlT, vlAns = append(vlT, t), ans
			}
		}
		r := result{sp: median(spT), agree: "-"}
		if fan != nil {
			r.fan = median(fanT)
			r.fanAgree = compareAnswers(spAns, fanAns, q.rows, nil)
			say("%s: one node %.3f s, %d nodes + front %.3f s, %s", q.name, r.sp, o.peers, r.fan, r.fanAgree)
		}
		if vlURL != "" {
			r.vl = median(vlT)
			r.agree = compareAnswers(spAns, vlAns, q.rows, q.sampled)
		}
		results[i] = r
		if vlURL != "" {
			say("%s: spate %.3f s, VictoriaLogs %.3f s, %s", q.name, r.sp, r.vl, r.agree)
		} else {
			say("%s: spate %.3f s", q.name, r.sp)
		}
	}

	segBytes, idxBytes, err := spateDisk(spDir)
	if err != nil {
		return err
	}
	vlBytes := int64(0)
	if vlURL != "" {
		stopVictoriaLogs() // it writes its in-memory parts out when it stops
		vlBytes = dirBytes(vlDir)
	}

	w := bufio.NewWriter(stdout)
	defer w.Flush()
	m := benchenv.Describe()
	fmt.Fprintf(w, "## spate bench serve\n\n%d CPUs (%s), %s RAM, %s, %s/%s, kernel %s.\n",
		m.CPUs, m.CPUModel, benchenv.HumanBytes(m.MemTotal), m.GoVersion, m.OS, m.Arch, m.Kernel)
	fmt.Fprintf(w, "Logs: `spate gen --size %s --seed %d`, %d lines; medians of %d rounds over HTTP (/select/logsql/query); ratio = spate / VictoriaLogs.\n\n",
		formatSize(int64(o.size)), o.seed, gst.Lines, o.rounds)
	fmt.Fprintln(w, "| query | spate s | VictoriaLogs s | ratio | target | answers |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|")
	for i, q := range queries {
		r := results[i]
		target, ratio, vl := "<= 2", "-", "-"
		if q.needle {
			target = "<= 1"
		}
		if vlURL != "" {
			ratio, vl = fmt.Sprintf("%.2f", r.sp/r.vl), fmt.Sprintf("%.3f", r.vl)
		}
		fmt.Fprintf(w, "| `%s` | %.3f | %s | %s | %s | %s |\n", strings.ReplaceAll(q.q, "|", `\|`), r.sp, vl, ratio, target, r.agree)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| measure | spate | VictoriaLogs | ratio | target |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|")
	vlDisk, vlIng, diskRatio := "-", "-", "-"
	if vlURL != "" {
		vlDisk, vlIng = formatSize(vlBytes), fmt.Sprintf("%.2f s", vlIngest)
		diskRatio = fmt.Sprintf("%.2f", float64(segBytes+idxBytes)/float64(vlBytes))
	}
	fmt.Fprintf(w, "| disk: segments + sidecars | %s + %s | %s | %s | <= 2.5 |\n", formatSize(segBytes), formatSize(idxBytes), vlDisk, diskRatio)
	fmt.Fprintf(w, "| ingest (curl-like POST of the file) | %.2f s | %s | | |\n", spIngest, vlIng)
	fmt.Fprintf(w, "| CPU: index building alone vs ingestion (spate serve, during the POST) | %.2f s | %.2f s | %.2f | <= 0.2 |\n", indexCPU, ingestCPU, indexCPU/max(ingestCPU, 1e-9))
	fmt.Fprintf(w, "| CPU of the restart that compressed and indexed every segment | %.2f s in %.2f s | | | |\n", sealCPU, sealSec)
	if fan == nil {
		return nil
	}
	fmt.Fprintf(w, "\nFan-out: line i stored in node i mod %d (GOMAXPROCS %s, from their /metrics), queried through `spate serve --select-peers` over them; one node is the spate above, which holds every line; all on this machine.\n\n", o.peers, strings.Join(fan.procs, ", "))
	fmt.Fprintf(w, "| query | one node s | %d nodes + front s | ratio | target | answers |\n", o.peers)
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|")
	for i, q := range queries {
		r := results[i]
		fmt.Fprintf(w, "| `%s` | %.3f | %.3f | %.2f | <= 1.2 | %s |\n", strings.ReplaceAll(q.q, "|", `\|`), r.sp, r.fan, r.fan/r.sp, r.fanAgree)
	}
	fst, err := fan.front.stop()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nThe front's peak RSS: %s (each node's state is held until the merge ends).\n", formatSize(fst.peakRSS))
	return nil
}

// sealedStore is what storeSealed measured.
type sealedStore struct {
	ingestSec, ingestCPU float64 // the POST, and the server's CPU during it
	sealSec, sealCPU     float64 // the restart until every segment was sealed, and its CPU
}

// storeSealed stores the lines of logs in a fresh spate serve over dir
// (with env added to its environment), then restarts it and waits until
// every segment is sealed, compressed and indexed: ingest with sealing
// out of the way, then the restart seals. It returns the restarted
// server, running.
func storeSealed(ctx context.Context, exe, dir, logs string, env []string) (*ingestServer, sealedStore, error) {
	var st sealedStore
	os.RemoveAll(dir)
	sp, err := spawnServeEnv(ctx, exe, []string{"serve", "--data", dir, "--listen", "127.0.0.1:0", "--log-level", "warn", "--compress-delay", "1h"}, env)
	if err != nil {
		return nil, st, err
	}
	cpu0, _ := benchenv.ProcessCPU(sp.cmd.Process.Pid)
	st.ingestSec, err = postLogs(ctx, sp.url+"/insert/jsonline?_time_field=ts&_msg_field=msg", logs)
	cpu1, _ := benchenv.ProcessCPU(sp.cmd.Process.Pid)
	st.ingestCPU = (cpu1 - cpu0).Seconds()
	if err != nil {
		sp.kill()
		return nil, st, fmt.Errorf("spate ingest into %s: %w", dir, err)
	}
	if _, err := sp.stop(); err != nil {
		return nil, st, err
	}
	sp, err = spawnServeEnv(ctx, exe, []string{"serve", "--data", dir, "--listen", "127.0.0.1:0", "--log-level", "warn", "--compress-delay", "0s"}, env)
	if err != nil {
		return nil, st, err
	}
	start := time.Now()
	if err := waitSealed(ctx, dir, 10*time.Minute); err != nil {
		sp.kill()
		return nil, st, err
	}
	st.sealSec = time.Since(start).Seconds()
	cpu, _ := benchenv.ProcessCPU(sp.cmd.Process.Pid)
	st.sealCPU = cpu.Seconds()
	return sp, st, nil
}

// fanout is storage nodes and a --select-peers front over them.
type fanout struct {
	nodes []*ingestServer
	front *ingestServer
	procs []string // each node's GOMAXPROCS, from its /metrics
}

// startFanout deals the lines of logs over n files (line i to file i mod
// n) under dir, stores each in a sealed node (GOMAXPROCS=cpus when cpus >
// 0) and starts a front over them.
func startFanout(ctx context.Context, exe, dir, logs string, n, cpus int) (*fanout, error) {
	parts, err := dealLines(logs, dir, n)
	if err != nil {
		return nil, err
	}
	var env []string
	if cpus > 0 {
		env = []string{fmt.Sprintf("GOMAXPROCS=%d", cpus)}
	}
	f := &fanout{}
	var urls []string
	for i, part := range parts {
		nd, _, err := storeSealed(ctx, exe, filepath.Join(dir, fmt.Sprintf("node%d", i)), part, env)
		if err != nil {
			f.kill()
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		f.nodes = append(f.nodes, nd)
		urls = append(urls, nd.url)
		procs, err := metricText(ctx, nd.url, "go_sched_gomaxprocs_threads")
		if err != nil {
			f.kill()
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		f.procs = append(f.procs, procs)
	}
	if f.front, err = spawnServe(ctx, exe, []string{"serve", "--select-peers", strings.Join(urls, ","), "--listen", "127.0.0.1:0", "--log-level", "warn"}); err != nil {
		f.kill()
		return nil, err
	}
	return f, nil
}

// kill ends the front and the nodes that are still running.
func (f *fanout) kill() {
	if f.front != nil {
		f.front.kill()
	}
	for _, nd := range f.nodes {
		nd.kill()
	}
}

// dealLines writes line i of path to the (i mod n)th of n files under
// dir, and returns their paths.
func dealLines(path, dir string, n int) ([]string, error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	paths := make([]string, n)
	outs := make([]*bufio.Writer, n)
	files := make([]*os.File, n)
	for i := range n {
		paths[i] = filepath.Join(dir, fmt.Sprintf("logs.node%d.ndjson", i))
		if files[i], err = os.Create(paths[i]); err != nil {
			return nil, err
		}
		defer files[i].Close()
		outs[i] = bufio.NewWriterSize(files[i], 1<<20)
	}
	br := bufio.NewReaderSize(in, 1<<20)
	for i := 0; ; i++ {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if _, werr := outs[i%n].Write(line); werr != nil {
				return nil, werr
			}
		}
		if err == io.EOF {
			break
		}
		if err == bufio.ErrBufferFull {
			return nil, fmt.Errorf("%s: a line longer than 1 MiB near line %d", path, i+1)
		}
		if err != nil {
			return nil, err
		}
	}
	for i, w := range outs {
		if err := w.Flush(); err != nil {
			return nil, err
		}
		if err := files[i].Close(); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// findVictoriaLogs returns the victoria-logs binary to use: given, in
// PATH, or in $HOME/go/bin; "" when there is none.
func findVictoriaLogs(given string) (string, error) {
	if given != "" {
		if _, err := os.Stat(given); err != nil {
			return "", usagef("--victoria-logs: %v", err)
		}
		return given, nil
	}
	if p, err := exec.LookPath("victoria-logs"); err == nil {
		return p, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, "go", "bin", "victoria-logs")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", nil
}

// logsSpan returns the first and last ts of a `spate gen` file and the
// trace_id of its middle line.
func logsSpan(path string) (first, last time.Time, trace string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return first, last, "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return first, last, "", err
	}
	line := func(off int64) (map[string]any, error) {
		buf := make([]byte, 64<<10)
		n, _ := f.ReadAt(buf, off)
		b := buf[:n]
		if off > 0 {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				return nil, fmt.Errorf("%s: no line at %d", path, off)
			}
			b = b[i+1:]
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[:i]
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: line at %d: %w", path, off, err)
		}
		return m, nil
	}
	ts := func(m map[string]any) (time.Time, error) {
		s, _ := m["ts"].(string)
		return time.Parse(time.RFC3339Nano, s)
	}
	m, err := line(0)
	if err != nil {
		return first, last, "", err
	}
	if first, err = ts(m); err != nil {
		return first, last, "", err
	}
	if m, err = line(fi.Size() / 2); err != nil {
		return first, last, "", err
	}
	trace, _ = m["trace_id"].(string)
	if m, err = line(max(0, fi.Size()-8<<10)); err != nil {
		return first, last, "", err
	}
	last, err = ts(m)
	if trace == "" {
		err = cmp.Or(err, fmt.Errorf("%s: no trace_id in the middle line", path))
	}
	return first, last, trace, err
}

// postLogs POSTs the file at path to u and returns the seconds it took.
func postLogs(ctx context.Context, u, path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, f)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/stream+json")
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s answered %s: %.300s", u, resp.Status, body)
	}
	return time.Since(t0).Seconds(), nil
}

func httpGet(ctx context.Context, u string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// timeQuery runs q on the server at base and returns the seconds to the
// whole answer, and the answer.
func timeQuery(ctx context.Context, base, q string) (float64, []byte, error) {
	t0 := time.Now()
	code, body, err := httpGet(ctx, base+"/select/logsql/query?"+url.Values{"query": {q}}.Encode())
	if err != nil {
		return 0, nil, err
	}
	if code != http.StatusOK {
		return 0, nil, fmt.Errorf("answered %d: %.300s", code, body)
	}
	return time.Since(t0).Seconds(), body, nil
}

// compareAnswers says whether two query answers (NDJSON rows) agree: the
// same rows in any order, numbers to 3 decimals (float sums depend on the
// order rows are added in); with rows, only how many. The fields named in
// sampled (the second answer's quantile estimates) agree within
// quantileTolerance.
func compareAnswers(sp, vl []byte, rows bool, sampled []string) string {
	// canon returns each row without its sampled fields, canonical, and
	// the sampled fields' numbers by that row.
	canon := func(b []byte) ([]string, map[string][]float64, error) {
		var out []string
		est := map[string][]float64{}
		for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				return nil, nil, err
			}
			var vals []float64
			for _, k := range sampled {
				s, _ := m[k].(string)
				f, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, nil, fmt.Errorf("field %s: %q is not a number", k, s)
				}
				vals = append(vals, f)
				delete(m, k)
			}
			for k, v := range m {
				if s, ok := v.(string); ok && strings.Contains(s, ".") {
					if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) {
						m[k] = strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64)
					}
				}
			}
			c, _ := json.Marshal(m)
			out = append(out, string(c))
			est[string(c)] = vals
		}
		slices.Sort(out)
		return out, est, nil
	}
	a, ea, err1 := canon(sp)
	b, eb, err2 := canon(vl)
	switch {
	case err1 != nil || err2 != nil:
		return fmt.Sprintf("**cannot compare**: %v", cmp.Or(err1, err2))
	case rows && len(a) == len(b):
		return fmt.Sprintf("same count (%d rows)", len(a))
	case rows || !slices.Equal(a, b):
		return fmt.Sprintf("**DIFFER** (%d rows against %d)", len(a), len(b))
	}
	worst := 0.0
	for row, x := range ea {
		for i, v := range x {
			if w := eb[row][i]; v != w {
				worst = max(worst, math.Abs(v-w)/max(math.Abs(v), math.Abs(w)))
			}
		}
	}
	switch {
	case worst == 0:
		return "same"
	case worst <= quantileTolerance:
		return fmt.Sprintf("same; %s within %.1f%% (VictoriaLogs samples quantiles of groups over 10,000 values)", strings.Join(sampled, ", "), 100*worst)
	}
	return fmt.Sprintf("**DIFFER**: %s off by %.1f%%", strings.Join(sampled, ", "), 100*worst)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// waitSealed waits until every segment under dir is compressed with a
// sidecar beside it.
func waitSealed(ctx context.Context, dir string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		files, err := segment.List(dir)
		if err != nil {
			return err
		}
		ready := len(files) > 0
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(dir, f.Path+segindex.Ext)); !f.Compressed || err != nil {
				ready = false
			}
		}
		if ready {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: segments not all compressed and indexed after %s", dir, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// spateDisk returns the bytes of a data directory's segments and sidecars.
func spateDisk(dir string) (seg, idx int64, err error) {
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch name := d.Name(); {
		case strings.HasSuffix(name, segindex.Ext):
			idx += fi.Size()
		case strings.HasSuffix(name, ".ndjson"):
			// A plain segment stays beside its .zst for a while.
			if _, err := os.Stat(p + ".zst"); err != nil {
				seg += fi.Size()
			}
		case strings.HasSuffix(name, ".ndjson.zst"):
			seg += fi.Size()
		}
		return nil
	})
	return seg, idx, err
}

// dirBytes is the size of the regular files under dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// startVictoriaLogsBench starts VictoriaLogs on dir at a free port and
// waits until it answers.
func startVictoriaLogsBench(ctx context.Context, bin, dir string) (*exec.Cmd, string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "-storageDataPath="+dir, "-httpListenAddr="+addr, "-loggerLevel=WARN", "-retentionPeriod=100y")
	cmd.Stderr = newLineTail(20)
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("cannot start VictoriaLogs: %w", err)
	}
	u := "http://" + addr
	for range 300 {
		if code, _, err := httpGet(ctx, u+"/health"); err == nil && code == http.StatusOK {
			return cmd, u, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, "", errors.New("VictoriaLogs did not answer /health within 30 s")
}

// indexCPUSeconds builds the sidecar indexes of the logs at path as
// sealing does (one per segment of segment.DefaultMaxSegmentBytes, 1 MiB
// blocks of 128 KiB frames), without compressing them, and returns the CPU
// seconds it took this process.
func indexCPUSeconds(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cpu0 := benchenv.SelfCPU()
	var b *segindex.Builder
	var segBytes int64
	var frames []segindex.Frame
	if _, err := segment.EachBlock(f, nil, func(block []byte) error {
		if b == nil {
			if b, err = segindex.NewBuilder(query.NewIndexLines()); err != nil {
				return err
			}
			b.Numbers = query.IndexNumbers
		}
		frames = segment.RawFrames(frames[:0], block)
		b.AddFrames(block, 0, frames)
		if segBytes += int64(len(block)); segBytes >= segment.DefaultMaxSegmentBytes {
			b.Finish(0, 0)
			b, segBytes = nil, 0
		}
		return nil
	}); err != nil {
		return 0, err
	}
	if b != nil {
		b.Finish(0, 0)
	}
	return (benchenv.SelfCPU() - cpu0).Seconds(), nil
}

// metricText returns the value of the unlabelled metric name in the
// server at u's /metrics, as written there ("" when it has none).
func metricText(ctx context.Context, u, name string) (string, error) {
	_, body, err := httpGet(ctx, u+"/metrics")
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", nil
}

// forceMergeVictoriaLogs asks VictoriaLogs to merge its parts and waits
// until it has (vl_active_force_merges back to 0, up to 5 minutes).
func forceMergeVictoriaLogs(ctx context.Context, u string) error {
	if code, body, err := httpGet(ctx, u+"/internal/force_merge"); err != nil || code != http.StatusOK {
		return fmt.Errorf("VictoriaLogs force_merge: %d %v %.200s", code, err, body)
	}
	active := func() (bool, error) {
		v, err := metricText(ctx, u, "vl_active_force_merges")
		return v != "" && v != "0", err
	}
	start := time.Now()
	for time.Since(start) < 5*time.Minute {
		busy, err := active()
		if err != nil {
			return err
		}
		if !busy && time.Since(start) > time.Second {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return errors.New("VictoriaLogs force merge still running after 5 minutes")
}
