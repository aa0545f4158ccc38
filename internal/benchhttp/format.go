package benchhttp

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spate-io/spate/internal/benchenv"
)

// workloadTitle describes a workload in a line.
func workloadTitle(rep *Report, wl string) string {
	switch wl {
	case WorkloadJSON:
		return fmt.Sprintf("responses: GET /json, a JSON document of %d bytes the handler writes in %d pieces", rep.BodyBytes, rep.BodyWrites)
	case WorkloadBig:
		return fmt.Sprintf("downloads: one file of %s", benchenv.HumanBytes(rep.BigSize))
	case WorkloadSmall:
		return fmt.Sprintf("downloads: %d files of %s, requested in turn", rep.SmallFiles, benchenv.HumanBytes(rep.SmallSize))
	}
	return wl
}

// workloads returns the report's workloads in row order.
func workloads(rep *Report) []string {
	var out []string
	for _, r := range rep.Rows {
		if len(out) == 0 || out[len(out)-1] != r.Workload {
			out = append(out, r.Workload)
		}
	}
	return out
}

// WriteTable writes the report as one table per workload.
func WriteTable(w io.Writer, rep *Report) error {
	m := rep.Machine
	fmt.Fprintf(w, "spate bench http: %.3gs measured per row after %.3gs of warm-up; closed loop, keep-alive, client and server on 127.0.0.1\n", rep.Duration, rep.Warmup)
	fmt.Fprintf(w, "machine: %d CPUs %s, %s RAM, %s/%s kernel %s, %s\n", m.CPUs, m.CPUModel, benchenv.HumanBytes(m.MemTotal), m.OS, m.Arch, m.Kernel, m.GoVersion)
	if rep.Nginx != "" {
		fmt.Fprintf(w, "nginx: %s (sendfile on, tcp_nopush on, access log off, %d workers)\n", rep.Nginx, m.CPUs)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, wl := range workloads(rep) {
		fmt.Fprintf(w, "\n%s\n", workloadTitle(rep, wl))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		base := ""
		for _, r := range rep.Rows {
			if r.Workload == wl && r.Base != "" {
				base = r.Base
				break
			}
		}
		cols := []string{"server", "conns", "req/s", "MB/s", "vs " + base, "p50 ms", "p99 ms", "CPU µs/req", "CPU cores", "syscalls/req", "peak RSS MB"}
		if base == "" {
			cols[4] = "vs -"
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
		last := 0
		for _, r := range rep.Rows {
			if r.Workload != wl {
				continue
			}
			if last != 0 && r.Conns != last {
				fmt.Fprintln(tw, strings.Repeat("\t", len(cols)))
			}
			last = r.Conns
			fmt.Fprintln(tw, strings.Join(cells(r), "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\nreq/s and MB/s (1e6 bytes of body) over the measured window; latency from a histogram (±1.6%);")
	fmt.Fprintln(w, "CPU, syscalls (read- and write-type: read, write, sendfile, ...) and peak RSS are the server's")
	fmt.Fprintln(w, "processes' own, from /proc; the client shares the CPUs.")
	return nil
}

func cells(r Row) []string {
	unknown := func(v float64, f string) string {
		if v < 0 {
			return "-"
		}
		return fmt.Sprintf(f, v)
	}
	vs := "-"
	if r.Vs > 0 {
		vs = fmt.Sprintf("%.2f×", r.Vs)
	}
	return []string{
		r.Variant,
		fmt.Sprint(r.Conns),
		fmt.Sprintf("%.0f", r.QPS),
		fmt.Sprintf("%.1f", r.MBps),
		vs,
		fmt.Sprintf("%.3f", r.Latency.P50),
		fmt.Sprintf("%.3f", r.Latency.P99),
		unknown(r.CPUPerReq, "%.1f"),
		unknown(r.CPUCores, "%.2f"),
		unknown(r.SyscallsPerReq, "%.1f"),
		unknown(r.PeakRSSMB, "%.1f"),
	}
}
