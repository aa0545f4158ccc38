package benchingest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// scrapeMetrics reads a Prometheus text exposition from url and returns
// its samples by series ("name{labels}"). It gives up after 2 seconds; the
// caller treats any error as "no metrics".
func scrapeMetrics(ctx context.Context, c *http.Client, url string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", url, err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("cannot read %s: status %d", url, res.StatusCode)
	}
	return parseMetrics(body), nil
}

// parseMetrics parses Prometheus text: one "series value [timestamp]" per
// line, where series is a name with optional {labels}. Comments and lines
// it cannot parse are skipped.
func parseMetrics(p []byte) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(p))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		// Label values may hold spaces: the series ends at the last '}'.
		end := strings.IndexByte(line, ' ')
		if i := strings.LastIndexByte(line, '}'); i >= 0 {
			end = i + 1
		}
		if end <= 0 || end >= len(line) {
			continue
		}
		fields := strings.Fields(line[end:])
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		out[line[:end]] = v
	}
	return out
}

// metricsDelta returns after-before for every series of after that changed
// (a series missing from before counts from 0), histogram buckets left
// out.
func metricsDelta(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		name, _, _ := strings.Cut(k, "{")
		if strings.HasSuffix(name, "_bucket") {
			continue
		}
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// WaitQuiet waits until the spate server whose ingest endpoint is url has
// compressed every sealed segment (spate_compress_pending is 0), so that a
// run does not pay for the background work of the one before; at most
// max. A server without that metric (VictoriaLogs) is waited for 2 s, for
// its own background merges to settle. It returns how long it waited.
func WaitQuiet(ctx context.Context, url string, max time.Duration) (time.Duration, error) {
	_, metricsURL, err := endpoints(url, JSONLine)
	if err != nil {
		return 0, err
	}
	c := &http.Client{Timeout: 5 * time.Second}
	start := time.Now()
	for time.Since(start) < max {
		m, err := scrapeMetrics(ctx, c, metricsURL)
		if err != nil {
			return time.Since(start), err
		}
		pending, ok := m["spate_compress_pending"]
		if !ok {
			if !sleep(ctx, 2*time.Second) {
				return time.Since(start), ctx.Err()
			}
			return time.Since(start), nil
		}
		if pending == 0 {
			return time.Since(start), nil
		}
		if !sleep(ctx, 200*time.Millisecond) {
			return time.Since(start), ctx.Err()
		}
	}
	return time.Since(start), nil
}
