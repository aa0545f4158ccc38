package benchio

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spate-io/spate/internal/benchenv"
)

// header describes the run in one or two lines.
func header(rep *Report) string {
	var files []string
	for _, f := range rep.Files {
		files = append(files, fmt.Sprintf("%s (%s)", f.Path, benchenv.HumanBytes(f.Size)))
	}
	m := rep.Machine
	gogc := ""
	if rep.GOGC != "" {
		gogc = ", GOGC=" + rep.GOGC
	}
	return fmt.Sprintf("spate bench io: %s; work=%s, %d rounds each%s\nmachine: %d CPUs %s, %s RAM, %s/%s kernel %s, %s",
		strings.Join(files, ", "), rep.Work, rep.Repeat, gogc,
		m.CPUs, m.CPUModel, benchenv.HumanBytes(m.MemTotal), m.OS, m.Arch, m.Kernel, m.GoVersion)
}

var columns = []string{"strategy", "GB/s", "P95 ms", "peak RSS MB", "workers", "GB/s min–max", "P50 ms", "P99 ms", "major flt", "minor flt", "disk MB", "user s", "sys s", "cached before"}

func cells(r Row) []string {
	lat := func(v float64) string {
		if r.Strategy == Ceiling || r.Strategy == CeilingPrefaulted {
			return "-"
		}
		return fmt.Sprintf("%.2f", v)
	}
	cached := "-"
	if r.ResidentBefore >= 0 {
		cached = fmt.Sprintf("%.0f%%", 100*r.ResidentBefore)
	}
	return []string{
		r.Strategy,
		fmt.Sprintf("%.2f", r.GBps.Median),
		lat(r.ChunkMS.P95),
		fmt.Sprintf("%.0f", r.PeakRSSMB),
		fmt.Sprint(r.Workers),
		fmt.Sprintf("%.2f–%.2f", r.GBps.Min, r.GBps.Max),
		lat(r.ChunkMS.P50),
		lat(r.ChunkMS.P99),
		fmt.Sprint(r.MajFlt),
		fmt.Sprint(r.MinFlt),
		fmt.Sprintf("%.0f", r.DiskMB),
		fmt.Sprintf("%.2f", r.UserSec),
		fmt.Sprintf("%.2f", r.SysSec),
		cached,
	}
}

// caches returns the report's cache states in row order.
func caches(rep *Report) []string {
	var out []string
	for _, r := range rep.Rows {
		if len(out) == 0 || out[len(out)-1] != r.Cache {
			out = append(out, r.Cache)
		}
	}
	return out
}

// WriteTable writes the report as aligned text tables, one per cache state,
// followed by the findings.
func WriteTable(w io.Writer, rep *Report) error {
	fmt.Fprintln(w, header(rep))
	for _, cache := range caches(rep) {
		fmt.Fprintf(w, "\n%s cache\n", cache)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(columns, "\t")+"\t")
		for _, r := range rep.Rows {
			if r.Cache == cache {
				fmt.Fprintln(tw, strings.Join(cells(r), "\t")+"\t")
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if f := Findings(rep); len(f) > 0 {
		fmt.Fprintln(w, "\nfindings")
		for _, line := range f {
			fmt.Fprintln(w, "  "+line)
		}
	}
	_, err := fmt.Fprintln(w, "\nGB/s are decimal (1e9 bytes/s); P50/P95/P99 are per-chunk latencies (obtain + process); peak RSS is ru_maxrss and counts mapped file pages.")
	return err
}

// WriteMarkdown writes the report as Markdown tables.
func WriteMarkdown(w io.Writer, rep *Report) error {
	for _, line := range strings.Split(header(rep), "\n") {
		fmt.Fprintf(w, "%s  \n", line)
	}
	for _, cache := range caches(rep) {
		fmt.Fprintf(w, "\n**%s cache**\n\n", cache)
		fmt.Fprintf(w, "| %s |\n", strings.Join(columns, " | "))
		fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(columns)))
		for _, r := range rep.Rows {
			if r.Cache == cache {
				fmt.Fprintf(w, "| %s |\n", strings.Join(cells(r), " | "))
			}
		}
	}
	if f := Findings(rep); len(f) > 0 {
		fmt.Fprintln(w)
		for _, line := range f {
			fmt.Fprintf(w, "- %s\n", line)
		}
	}
	return nil
}

// WriteGobench writes one `go test -bench` line per round, so that two runs
// can be compared with benchstat.
func WriteGobench(w io.Writer, rep *Report) error {
	m := rep.Machine
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: spate/bench/io\ncpu: %s\n", m.OS, m.Arch, m.CPUModel)
	for _, r := range rep.Rows {
		name := fmt.Sprintf("BenchmarkIO/strategy=%s/workers=%d/cache=%s-%d", r.Strategy, r.Workers, r.Cache, m.CPUs)
		for _, g := range r.GBpsRounds {
			if g <= 0 {
				continue
			}
			ns := float64(r.Bytes) / g // bytes / (bytes/ns)
			if _, err := fmt.Fprintf(w, "%s\t1\t%.0f ns/op\t%.2f MB/s\t%.0f peak-RSS-MB\n", name, ns, g*1000, r.PeakRSSMB); err != nil {
				return err
			}
		}
	}
	return nil
}

// find returns the row for strategy, workers and cache.
func (rep *Report) find(strategy string, workers int, cache string) (Row, bool) {
	for _, r := range rep.Rows {
		if r.Strategy == strategy && r.Workers == workers && r.Cache == cache {
			return r, true
		}
	}
	return Row{}, false
}

// Findings states the comparisons the write-ups make, as ratios of rows
// measured in this same run, per cache state.
func Findings(rep *Report) []string {
	var out []string
	var size int64
	for _, f := range rep.Files {
		size += f.Size
	}
	maxW := 1
	for _, r := range rep.Rows {
		maxW = max(maxW, r.Workers)
	}
	for _, cache := range caches(rep) {
		var best Row
		for _, r := range rep.Rows {
			if r.Cache == cache && r.Workers == maxW && r.Strategy != Ceiling && r.Strategy != CeilingPrefaulted && r.GBps.Median > best.GBps.Median {
				best = r
			}
		}
		if best.Strategy == "" {
			continue
		}
		out = append(out, fmt.Sprintf("%s: best with %d workers: %s at %.2f GB/s", cache, maxW, best.Strategy, best.GBps.Median))
		if b, ok := rep.find("bufio", 1, cache); ok && b.GBps.Median > 0 {
			out = append(out, fmt.Sprintf("%s: %s ×%d is %.2f× bufio ×1 (%.2f GB/s)", cache, best.Strategy, maxW, best.GBps.Median/b.GBps.Median, b.GBps.Median))
		}
		if c, ok := rep.find(Ceiling, maxW, cache); ok && c.GBps.Median > 0 {
			out = append(out, fmt.Sprintf("%s: %s ×%d reaches %.0f%% of the ceiling (raw bytes.Count over a fresh mapping of the file, %d goroutines: %.2f GB/s)", cache, best.Strategy, maxW, 100*best.GBps.Median/c.GBps.Median, maxW, c.GBps.Median))
		}
		if c, ok := rep.find(CeilingPrefaulted, maxW, cache); ok && c.GBps.Median > 0 {
			out = append(out, fmt.Sprintf("%s: %s ×%d reaches %.0f%% of the compute bound (the same count with page tables filled before timing: %.2f GB/s; the gap is page-fault and copy cost)", cache, best.Strategy, maxW, 100*best.GBps.Median/c.GBps.Median, c.GBps.Median))
		}
		win, okW := rep.find("mmap", maxW, cache)
		whole, okH := rep.find(MmapWhole, maxW, cache)
		if okW && okH && whole.GBps.Median > 0 && size > 0 {
			out = append(out, fmt.Sprintf("%s: windowed mmap ×%d: peak RSS %.0f MB = 1/%.1f of the file (mmap-whole: %.0f MB); throughput %.0f%% of mmap-whole", cache, maxW, win.PeakRSSMB, float64(size)/1e6/win.PeakRSSMB, whole.PeakRSSMB, 100*win.GBps.Median/whole.GBps.Median))
		}
		p1, ok1 := rep.find("pread", 1, cache)
		pn, okN := rep.find("pread", maxW, cache)
		if ok1 && okN && maxW > 1 && p1.GBps.Median > 0 {
			out = append(out, fmt.Sprintf("%s: pread ×%d is %.2f× pread ×1", cache, maxW, pn.GBps.Median/p1.GBps.Median))
		}
	}
	return out
}
