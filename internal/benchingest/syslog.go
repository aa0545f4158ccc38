package benchingest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/spate-io/spate/internal/benchenv"
	"github.com/spate-io/spate/internal/timeparse"
)

// Syslog sends the lines as RFC 5424 syslog messages over TCP with octet
// counting (RFC 6587), as rsyslog and syslog-ng do: the line's service
// as APP-NAME, its host (or "bench") as HOSTNAME, its time as TIMESTAMP,
// its other fields as structured data ([f name="value" ...]) and its
// message as MSG. There is no answer to wait for: Config.SyslogAddr is written to, and
// the run ends when the server's /metrics count every message as stored.
const Syslog Protocol = "syslog"

// encodeSyslog builds the octet-counted RFC 5424 frames of raw's lines.
func encodeSyslog(raw []byte) ([]byte, error) {
	lines, err := parseLines(raw)
	if err != nil {
		return nil, err
	}
	var out, msg []byte
	for _, l := range lines {
		msg = msg[:0]
		msg = append(msg, "<14>1 "...)
		if l.time != 0 {
			msg = timeparse.AppendRFC3339(msg, l.time)
		} else {
			msg = append(msg, '-')
		}
		host, app := l.host, l.service
		if host == "" {
			host = "bench"
		}
		if app == "" {
			app = "-"
		}
		msg = append(msg, ' ')
		msg = append(msg, host...)
		msg = append(msg, ' ')
		msg = append(msg, app...)
		msg = append(msg, " - - "...)
		sd := false
		for _, f := range l.fields {
			if f[0] == "service" || f[0] == "host" || !sdName(f[0]) {
				continue
			}
			if !sd {
				msg = append(msg, "[f"...)
				sd = true
			}
			msg = append(msg, ' ')
			msg = append(msg, f[0]...)
			msg = append(msg, `="`...)
			for i := 0; i < len(f[1]); i++ {
				if c := f[1][i]; c == '"' || c == '\\' || c == ']' {
					msg = append(msg, '\\')
				}
				msg = append(msg, f[1][i])
			}
			msg = append(msg, '"')
		}
		if sd {
			msg = append(msg, ']')
		} else {
			msg = append(msg, '-')
		}
		msg = append(msg, ' ')
		msg = append(msg, l.msg...)
		out = strconv.AppendInt(out, int64(len(msg)), 10)
		out = append(out, ' ')
		out = append(out, msg...)
	}
	return out, nil
}

// sdName reports whether name is an SD-NAME of RFC 5424: 1-32 printable
// ASCII characters but '=', ' ', ']' and '"'.
func sdName(name string) bool {
	if len(name) == 0 || len(name) > 32 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c >= 127 || c == '=' || c == ']' || c == '"' {
			return false
		}
	}
	return true
}

// syslogStored returns the messages a server's /metrics count as stored
// from syslog over TCP: spate's spate_syslog_messages_total, or
// VictoriaLogs' vl_rows_ingested_total{type="syslog_tcp"}.
func syslogStored(m map[string]float64) (float64, bool) {
	if v, ok := m["spate_syslog_messages_total"]; ok {
		return v, true
	}
	v, ok := m[`vl_rows_ingested_total{type="syslog_tcp"}`]
	return v, ok
}

// runSyslog is Run for the Syslog protocol: cfg.Clients connections each
// write bodies (octet-counted frames) to cfg.SyslogAddr as fast as the
// server reads them (TCP backpressure is the only pacing), then the run
// waits until the server's /metrics count every message sent as stored
// (at most cfg.Timeout). WallSec is from the first write to that moment.
func runSyslog(ctx context.Context, cfg *Config, p *pool, res *Result, metricsURL string, total int64) error {
	if cfg.SyslogAddr == "" {
		return fmt.Errorf("the syslog protocol needs the server's syslog TCP address")
	}
	client := &http.Client{Timeout: 5 * time.Second}
	before, err := scrapeMetrics(ctx, client, metricsURL)
	if err != nil {
		return fmt.Errorf("cannot read the server's metrics (%s), which say when the messages are stored: %w", metricsURL, err)
	}
	// VictoriaLogs makes its counter with the first message: absent is 0.
	base, _ := syslogStored(before)
	r := &run{cfg: cfg, bodies: p.bodies, total: total}
	var sentLines, sentBytes, rawBytes, writes int64
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	cpu0 := benchenv.SelfCPU()
	start := time.Now()
	r.deadline = start.Add(cfg.Duration)
	for range cfg.Clients {
		wg.Go(func() {
			c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", cfg.SyslogAddr)
			if err != nil {
				mu.Lock()
				firstErr = cmpErr(firstErr, fmt.Errorf("cannot connect to syslog at %s: %w", cfg.SyslogAddr, err))
				mu.Unlock()
				return
			}
			defer c.Close()
			var lines, wire, raw, n int64
			for {
				b, ok := r.take(ctx)
				if !ok {
					break
				}
				if _, err := c.Write(b.wire); err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, fmt.Errorf("cannot write to syslog at %s: %w", cfg.SyslogAddr, err))
					mu.Unlock()
					break
				}
				lines += b.lines
				wire += int64(len(b.wire))
				raw += int64(len(b.raw))
				n++
			}
			mu.Lock()
			sentLines += lines
			sentBytes += wire
			rawBytes += raw
			writes += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	// Wait for the server to store what was sent.
	deadline := time.Now().Add(cfg.Timeout)
	var after map[string]float64
	for {
		after, err = scrapeMetrics(ctx, client, metricsURL)
		if err == nil {
			if v, _ := syslogStored(after); int64(v-base) >= sentLines {
				break
			}
		}
		if time.Now().After(deadline) {
			v, ok := syslogStored(after)
			if !ok {
				return fmt.Errorf("%s has neither spate_syslog_messages_total nor vl_rows_ingested_total{type=\"syslog_tcp\"}: is the address a syslog TCP listener of this server?", metricsURL)
			}
			return fmt.Errorf("the server stored %d of %d syslog messages within %v", int64(v-base), sentLines, cfg.Timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	res.WallSec = time.Since(start).Seconds()
	res.ClientCPUSec = -1
	if cpu1 := benchenv.SelfCPU(); cpu0 >= 0 && cpu1 >= 0 {
		res.ClientCPUSec = (cpu1 - cpu0).Seconds()
	}
	res.Requests, res.OK = writes, writes
	res.AcceptedLines, res.AcceptedBytes, res.WireBytes = sentLines, rawBytes, sentBytes
	res.MBps = float64(rawBytes) / 1e6 / res.WallSec
	res.LinesPerSec = float64(sentLines) / res.WallSec
	res.WireMBps = float64(sentBytes) / 1e6 / res.WallSec
	res.Status = map[int]int64{}
	res.ServerMetrics = metricsDelta(before, after)
	return nil
}

func cmpErr(old, err error) error {
	if old != nil {
		return old
	}
	return err
}
