// Package benchingest is a load generator for the ingest endpoints of
// `spate serve` (and of anything else that speaks the VictoriaLogs jsonline
// protocol): N concurrent keep-alive clients post pre-generated NDJSON
// bodies for a fixed duration or volume and measure what the server
// accepted, how often it pushed back with 429, and request latency. It
// powers `spate bench ingest`.
//
// The server contract it codes against: POST body = NDJSON lines,
// optionally gzip-compressed; a 2xx reply carries
// {"accepted":N,"rejected":M,"errors":[...]} (an empty 2xx reply counts
// every line as accepted); 429 with Retry-After means nothing was stored
// and the same body should be sent again later; any other status is a
// failure.
package benchingest

import (
	"github.com/spate-io/spate/internal/benchenv"
	"github.com/spate-io/spate/internal/latency"

	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// DefaultPath is the endpoint used when Config.URL names only a server.
const DefaultPath = "/insert/jsonline"

// Config says what load to generate. Zero values mean the defaults noted.
type Config struct {
	// URL is the ingest endpoint, e.g.
	// http://127.0.0.1:9428/insert/jsonline. A URL without a path (or with
	// "/") gets DefaultPath. Required.
	URL string

	Clients  int           // concurrent clients, each with one request in flight at a time; 0 means 8
	Duration time.Duration // how long to start new requests when Volume is 0; 0 means 10s
	// Volume is the raw (uncompressed) bytes to send, in whole bodies:
	// bodies are sent in order, cycling through the pool, stopping before
	// the one that would take the total past Volume (at least one body is
	// sent). 0 means send for Duration instead.
	Volume int64
	// BatchBytes is the target raw size of one request body: each body is
	// the most whole lines that fit, or one line if that alone is longer.
	// 0 means 1 MiB.
	BatchBytes int
	// PoolBytes is how much distinct data is generated before the run and
	// held in memory; bodies cycle through it. 0 means Volume capped at
	// 256 MiB, or 64 MiB in duration mode.
	PoolBytes int64
	// Protocol is how the lines are sent (see Protocol); "" means
	// JSONLine. A URL without a path gets the protocol's endpoint.
	Protocol Protocol
	// SyslogAddr is the server's syslog TCP address (HOST:PORT), for
	// Protocol Syslog; URL then only serves /metrics.
	SyslogAddr string
	Gzip       bool   // send each body gzip-compressed (compressed before the run)
	Token      string // sent as "Authorization: Bearer Token" when set
	Seed       uint64 // seed of the generated data (internal/gen)
	// Warm, when > 0, is how many bytes to write to a file in WarmDir (the
	// system temp dir when "") and delete just before the clock starts, so
	// that the run writes into page-cache pages just freed: on a VM the
	// first touch of a page costs several times its reuse, and a run would
	// otherwise be faster after another's data was deleted than first.
	Warm    int64
	WarmDir string
	// Input, when set, is a file of NDJSON lines sent instead of generated
	// ones: its first PoolBytes, in whole lines, are the pool. Seed is then
	// not used. The lines go as they are to jsonline and elasticsearch;
	// the other protocols parse them (each must be a JSON object).
	Input string

	MaxBackoff time.Duration // cap on the wait after a 429, whatever Retry-After says; 0 means 100ms
	MaxErrors  int           // failed requests (429s do not count) that stop the run with an error; 0 means 3
	Timeout    time.Duration // per request, reply included; 0 means 60s

	// Progress receives a few status lines; nil means none.
	Progress io.Writer
}

func (c *Config) setDefaults() error {
	if c.Clients == 0 {
		c.Clients = 8
	}
	if c.Duration == 0 && c.Volume == 0 {
		c.Duration = 10 * time.Second
	}
	if c.BatchBytes == 0 {
		c.BatchBytes = 1 << 20
	}
	if c.PoolBytes == 0 {
		c.PoolBytes = 64 << 20
		if c.Volume > 0 {
			c.PoolBytes = min(c.Volume, 256<<20)
		}
	}
	if c.Protocol == "" {
		c.Protocol = JSONLine
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = 100 * time.Millisecond
	}
	if c.MaxErrors == 0 {
		c.MaxErrors = 3
	}
	if c.Timeout == 0 {
		c.Timeout = time.Minute
	}
	switch {
	case c.Clients < 0 || c.Duration < 0 || c.Volume < 0 || c.BatchBytes < 0 || c.PoolBytes < 0 || c.MaxBackoff < 0 || c.MaxErrors < 0 || c.Timeout < 0 || c.Warm < 0:
		return errors.New("clients, duration, volume, batch bytes, pool bytes, backoff, errors, timeout and warm must not be negative")
	case c.URL == "":
		return errors.New("no URL to send to")
	}
	return nil
}

// Result is what a run measured. Rates are per wall-clock second of the
// run, from the first request to the last reply; MB are decimal (1e6 bytes)
// and count raw (uncompressed) NDJSON unless named wire.
type Result struct {
	URL         string   `json:"url"`
	Protocol    Protocol `json:"protocol,omitempty"` // "" is jsonline
	Clients     int      `json:"clients"`
	BatchBytes  int      `json:"batch_bytes"`            // target raw bytes per body
	Gzip        bool     `json:"gzip"`                   // bodies sent gzip-compressed
	Seed        uint64   `json:"seed"`                   // of the generated data
	Input       string   `json:"input,omitempty"`        // the file sent instead of generated data
	DurationSec float64  `json:"duration_sec,omitempty"` // asked for (duration mode)
	Volume      int64    `json:"volume,omitempty"`       // asked for (volume mode)

	PoolBytes    int64   `json:"pool_bytes"`           // distinct data generated before the run
	PoolLines    int64   `json:"pool_lines"`           // lines in it
	Bodies       int     `json:"bodies"`               // bodies it was split into
	AvgLineBytes float64 `json:"avg_line_bytes"`       // PoolBytes / PoolLines, '\n' included
	AvgBodyBytes float64 `json:"avg_body_bytes"`       // raw
	AvgWireBytes float64 `json:"avg_wire_bytes"`       // as sent: compressed with Gzip
	GenSec       float64 `json:"gen_sec"`              // generating (and compressing) the pool, before the clock
	WarmBytes    int64   `json:"warm_bytes,omitempty"` // written and deleted before the clock (Config.Warm)
	WarmSec      float64 `json:"warm_sec,omitempty"`   // how long that took
	// PlannedLines and PlannedBytes are what a volume-mode run sends; after
	// a run without failures, AcceptedLines+RejectedLines equals
	// PlannedLines. 0 in duration mode.
	PlannedLines int64 `json:"planned_lines,omitempty"`
	PlannedBytes int64 `json:"planned_bytes,omitempty"`

	Requests        int64         `json:"requests"`         // attempts sent, every outcome, retries included
	OK              int64         `json:"ok"`               // 2xx replies
	Throttled       int64         `json:"throttled"`        // 429 replies (each retried)
	ThrottleRate    float64       `json:"throttle_rate"`    // Throttled / Requests
	Failed          int64         `json:"failed"`           // other replies, and 2xx replies that could not be parsed
	TransportErrors int64         `json:"transport_errors"` // requests that got no reply
	Status          map[int]int64 `json:"status"`           // replies by HTTP status

	AcceptedLines int64   `json:"accepted_lines"` // sum of the replies' "accepted"
	RejectedLines int64   `json:"rejected_lines"` // sum of the replies' "rejected"
	AcceptedBytes int64   `json:"accepted_bytes"` // raw bytes of the bodies that got a 2xx reply
	WireBytes     int64   `json:"wire_bytes"`     // the same bodies as sent
	WallSec       float64 `json:"wall_sec"`
	MBps          float64 `json:"mb_per_sec"`      // AcceptedBytes per second, decimal MB
	LinesPerSec   float64 `json:"lines_per_sec"`   // AcceptedLines per second
	WireMBps      float64 `json:"wire_mb_per_sec"` // WireBytes per second
	LatencyMS     Pctl    `json:"latency_ms"`      // per successful request: send to reply read
	// ClientCPUSec is the CPU time (user+system) of the whole calling
	// process during the run, the load generator's cost on a machine it
	// shares with the server; -1 where it cannot be measured.
	ClientCPUSec float64 `json:"client_cpu_sec"`

	// ServerMetrics is the change during the run of every sample of the
	// server's /metrics (Prometheus text; histogram buckets left out) that
	// changed; nil when /metrics could not be read.
	ServerMetrics map[string]float64 `json:"server_metrics_delta,omitempty"`
}

// Run generates the bodies, then sends them with cfg.Clients concurrent
// clients until the volume is sent or the duration is up, and returns what
// it measured. Requests in flight when the duration ends are waited for and
// counted, so WallSec may exceed Duration by about one request's latency.
//
// On a failure that stops the run (MaxErrors failed requests, or ctx done)
// it returns the partial Result together with the error. A server that
// answers nothing but 429 keeps a volume run going until ctx is done. Memory: the pool
// (PoolBytes, plus the gzip copies) and one 1 MiB reply buffer per client
// at most. Run is safe to call concurrently.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.setDefaults(); err != nil {
		return Result{}, fmt.Errorf("invalid ingest benchmark config: %w", err)
	}
	target, metricsURL, err := endpoints(cfg.URL, cfg.Protocol)
	if err != nil {
		return Result{}, err
	}
	res := Result{URL: target, Protocol: cfg.Protocol, Clients: cfg.Clients, BatchBytes: cfg.BatchBytes, Gzip: cfg.Gzip, Seed: cfg.Seed, Input: cfg.Input, Volume: cfg.Volume}
	if cfg.Volume == 0 {
		res.DurationSec = cfg.Duration.Seconds()
	}

	genStart := time.Now()
	p, err := makePool(ctx, cfg.PoolBytes, cfg.BatchBytes, cfg.Seed, cfg.Input, cfg.Gzip, cfg.Protocol)
	if err != nil {
		return res, err
	}
	res.GenSec = time.Since(genStart).Seconds()
	res.PoolBytes, res.PoolLines, res.Bodies = int64(len(p.data)), p.lines, len(p.bodies)
	res.AvgLineBytes = float64(len(p.data)) / float64(p.lines)
	var wire int64
	for _, b := range p.bodies {
		wire += int64(len(b.wire))
	}
	res.AvgBodyBytes = float64(len(p.data)) / float64(len(p.bodies))
	res.AvgWireBytes = float64(wire) / float64(len(p.bodies))
	total := int64(-1)
	if cfg.Volume > 0 {
		total, res.PlannedBytes, res.PlannedLines = plan(p.bodies, cfg.Volume)
	}
	progressf(cfg.Progress, "bench ingest: generated %.1f MB, %d lines in %d bodies of %.0f KB (%.0f KB sent) in %.1fs\n",
		float64(res.PoolBytes)/1e6, res.PoolLines, res.Bodies, res.AvgBodyBytes/1e3, res.AvgWireBytes/1e3, res.GenSec)

	if cfg.Warm > 0 {
		d, err := warmPageCache(cfg.WarmDir, cfg.Warm)
		if err != nil {
			return res, err
		}
		res.WarmBytes, res.WarmSec = cfg.Warm, d.Seconds()
		progressf(cfg.Progress, "bench ingest: wrote and deleted %.1f MB to warm the page cache in %.1fs\n", float64(cfg.Warm)/1e6, d.Seconds())
	}

	if cfg.Protocol == Syslog {
		if cfg.Gzip {
			return res, errors.New("--gzip does not apply to syslog")
		}
		progressf(cfg.Progress, "bench ingest: writing syslog to %s with %d connections\n", cfg.SyslogAddr, cfg.Clients)
		res.URL = "tcp://" + cfg.SyslogAddr
		err := runSyslog(ctx, &cfg, p, &res, metricsURL, total)
		return res, err
	}

	tr := &http.Transport{
		Proxy:               nil, // loopback benchmark: never through a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        cfg.Clients,
		MaxIdleConnsPerHost: cfg.Clients, // keep-alive: one reusable connection per client
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		WriteBufferSize:     64 << 10,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: cfg.Timeout}

	before, _ := scrapeMetrics(ctx, client, metricsURL)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &run{cfg: &cfg, client: client, url: target, bodies: p.bodies, total: total, cancel: cancel}
	if total >= 0 {
		progressf(cfg.Progress, "bench ingest: sending %d bodies (%.1f MB) to %s with %d clients\n", total, float64(res.PlannedBytes)/1e6, target, cfg.Clients)
	} else {
		progressf(cfg.Progress, "bench ingest: sending to %s for %s with %d clients\n", target, cfg.Duration, cfg.Clients)
	}
	stats := make([]clientStats, cfg.Clients)
	latCap := 1024
	if total >= 0 {
		latCap = int(min(total/int64(cfg.Clients)+16, 1<<16)) // beyond that, append grows it
	}
	for i := range stats {
		stats[i] = clientStats{status: map[int]int64{}, lat: make([]time.Duration, 0, latCap)}
	}
	var wg sync.WaitGroup
	cpu0 := benchenv.SelfCPU()
	start := time.Now()
	r.deadline = start.Add(cfg.Duration)
	for i := range stats {
		wg.Go(func() { r.loop(runCtx, &stats[i]) })
	}
	wg.Wait()
	res.WallSec = time.Since(start).Seconds()
	res.ClientCPUSec = -1
	if cpu1 := benchenv.SelfCPU(); cpu0 >= 0 && cpu1 >= 0 {
		res.ClientCPUSec = (cpu1 - cpu0).Seconds()
	}

	merge(&res, stats)
	if after, err := scrapeMetrics(ctx, client, metricsURL); err == nil && before != nil {
		res.ServerMetrics = metricsDelta(before, after)
	}
	r.mu.Lock()
	stopErr := r.stopErr
	r.mu.Unlock()
	switch {
	case stopErr != nil:
		return res, stopErr
	case ctx.Err() != nil:
		return res, ctx.Err()
	}
	return res, nil
}

// plan returns how many bodies a volume-mode run sends, cycling through
// bodies, and their raw bytes and lines: the longest prefix of the cycle
// that fits in volume, and at least one body.
func plan(bodies []body, volume int64) (n, size, lines int64) {
	var poolBytes, poolLines int64
	for _, b := range bodies {
		poolBytes += int64(len(b.raw))
		poolLines += b.lines
	}
	// Whole passes first, so that a volume many times the pool costs no
	// more than one pass to plan.
	passes := volume / poolBytes
	n, size, lines = passes*int64(len(bodies)), passes*poolBytes, passes*poolLines
	for _, b := range bodies {
		if size+int64(len(b.raw)) > volume {
			break
		}
		n, size, lines = n+1, size+int64(len(b.raw)), lines+b.lines
	}
	if n == 0 {
		n, size, lines = 1, int64(len(bodies[0].raw)), bodies[0].lines
	}
	return n, size, lines
}

// merge adds up the clients' stats into res and derives the rates.
func merge(res *Result, stats []clientStats) {
	res.Status = map[int]int64{}
	var lat []time.Duration
	for i := range stats {
		s := &stats[i]
		res.Requests += s.requests
		res.OK += s.ok
		res.Throttled += s.throttled
		res.Failed += s.failed
		res.TransportErrors += s.transportErrors
		res.AcceptedLines += s.acceptedLines
		res.RejectedLines += s.rejectedLines
		res.AcceptedBytes += s.acceptedBytes
		res.WireBytes += s.wireBytes
		for k, v := range s.status {
			res.Status[k] += v
		}
		lat = append(lat, s.lat...)
	}
	res.LatencyMS = latency.Summarize(lat)
	if res.Requests > 0 {
		res.ThrottleRate = float64(res.Throttled) / float64(res.Requests)
	}
	if res.WallSec > 0 {
		res.MBps = float64(res.AcceptedBytes) / 1e6 / res.WallSec
		res.LinesPerSec = float64(res.AcceptedLines) / res.WallSec
		res.WireMBps = float64(res.WireBytes) / 1e6 / res.WallSec
	}
}

// endpoints returns the ingest URL to post to and the server's /metrics
// URL, from the URL the user gave.
func endpoints(raw string, p Protocol) (target, metrics string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("cannot parse the server URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("cannot use the server URL %q: want http://HOST:PORT[/PATH]", raw)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = p.path()
	}
	m := url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/metrics"}
	return u.String(), m.String(), nil
}

func progressf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}
