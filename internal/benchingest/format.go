package benchingest

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// maxMetricLines bounds the server metrics WriteTable lists.
const maxMetricLines = 20

// WriteTable writes the result as a short header, one aligned row of
// numbers, the replies by status and the server's metrics that changed
// (the Go runtime's left out).
// It leaves out Units, so that callers can add sections before them.
func WriteTable(w io.Writer, res *Result) error {
	mode := fmt.Sprintf("for %gs", res.DurationSec)
	if res.Volume > 0 {
		mode = fmt.Sprintf("%.1f MB in whole bodies (volume %.1f MB)", float64(res.PlannedBytes)/1e6, float64(res.Volume)/1e6)
	}
	gz := "off"
	if res.Gzip {
		gz = "on"
	}
	from := fmt.Sprintf("seed %d", res.Seed)
	if res.Input != "" {
		from = "from " + res.Input
	}
	if res.WarmBytes > 0 {
		from += fmt.Sprintf("; page cache warmed with %.1f MB", float64(res.WarmBytes)/1e6)
	}
	fmt.Fprintf(w, "spate bench ingest: %s, %d clients, %s\n", res.URL, res.Clients, mode)
	fmt.Fprintf(w, "bodies: %.0f KB raw on average (target %d B), %.0f KB sent, gzip %s; %d distinct bodies holding %.1f MB, %d lines of %.0f B on average (%s)\n\n",
		res.AvgBodyBytes/1e3, res.BatchBytes, res.AvgWireBytes/1e3, gz, res.Bodies, float64(res.PoolBytes)/1e6, res.PoolLines, res.AvgLineBytes, from)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "MB/s\tMlines/s\twire MB/s\trequests\tok\t429\t429 rate\tfailed\tP50 ms\tP95 ms\tP99 ms\tmax ms\twall s\t")
	fmt.Fprintf(tw, "%.1f\t%.3f\t%.1f\t%d\t%d\t%d\t%.1f%%\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n",
		res.MBps, res.LinesPerSec/1e6, res.WireMBps, res.Requests, res.OK, res.Throttled, 100*res.ThrottleRate,
		res.Failed+res.TransportErrors, res.LatencyMS.P50, res.LatencyMS.P95, res.LatencyMS.P99, res.LatencyMS.Max, res.WallSec)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\naccepted: %d lines, %.1f MB raw (%d lines rejected)", res.AcceptedLines, float64(res.AcceptedBytes)/1e6, res.RejectedLines)
	if res.PlannedLines > 0 {
		fmt.Fprintf(w, " of %d lines planned", res.PlannedLines)
	}
	fmt.Fprintln(w)
	var st []string
	for _, code := range slices.Sorted(maps.Keys(res.Status)) {
		st = append(st, fmt.Sprintf("%d: %d", code, res.Status[code]))
	}
	if res.TransportErrors > 0 {
		st = append(st, fmt.Sprintf("no reply: %d", res.TransportErrors))
	}
	fmt.Fprintf(w, "replies by status: %s\n", strings.Join(st, ", "))
	if res.ClientCPUSec >= 0 && res.WallSec > 0 {
		fmt.Fprintf(w, "load generator CPU: %.2fs (%.2f cores)", res.ClientCPUSec, res.ClientCPUSec/res.WallSec)
		if d, ok := res.ServerMetrics["process_cpu_seconds_total"]; ok {
			fmt.Fprintf(w, "; server CPU (its /metrics): %.2fs (%.2f cores)", d, d/res.WallSec)
		}
		fmt.Fprintln(w)
	}
	var keys []string
	for k := range res.ServerMetrics {
		if !strings.HasPrefix(k, "go_") && !strings.HasPrefix(k, "promhttp_") {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		slices.Sort(keys)
		fmt.Fprintln(w, "server /metrics, change during the run (go_* left out; all of them in --json):")
		for i, k := range keys {
			if i == maxMetricLines {
				fmt.Fprintf(w, "  … %d more (see --json)\n", len(keys)-i)
				break
			}
			fmt.Fprintf(w, "  %s %+g\n", k, res.ServerMetrics[k])
		}
	}
	return nil
}

// Units explains WriteTable's columns, for the end of a report.
const Units = `MB/s: accepted raw (uncompressed) NDJSON per wall-clock second, decimal (1e6 bytes/s); Mlines/s: accepted lines, millions/s;
wire MB/s: the same bodies as sent (gzip-compressed with --gzip); requests: every attempt, 429 retries included;
429 rate: 429 replies / requests (each 429 waits for Retry-After, capped, and resends the same body);
failed: other non-2xx replies and requests without a reply; P50/P95/P99/max: latency of successful requests in ms, send to reply read.`
