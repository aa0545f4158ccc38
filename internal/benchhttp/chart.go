package benchhttp

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/spate-io/spate/internal/barchart"
	"github.com/spate-io/spate/internal/benchenv"
)

// Chart geometry: one band per workload, top to bottom, each with one
// panel per connection count side by side and one bar per server.
const (
	chartWidth    = 30 * vg.Centimeter
	chartRowPitch = 0.65 * vg.Centimeter
	chartHeaderH  = 1.7 * vg.Centimeter
	chartBandPad  = 1.6 * vg.Centimeter // panel titles, X axis, margins
)

// chartPalette: the baselines in red, sendfile paths in blues, copies
// through a buffer in greens, the rest in their own colours.
var chartPalette = map[string]color.RGBA{
	"direct":       {R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"flush-each":   {R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
	"bufio-4k":     {R: 0x98, G: 0xdf, B: 0x8a, A: 0xff},
	"bufio-64k":    {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"assembled":    {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	"prebuilt":     {R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	"copy":         {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"bufio-reader": {R: 0xae, G: 0xc7, B: 0xe8, A: 0xff},
	"copybuf-4k":   {R: 0x98, G: 0xdf, B: 0x8a, A: 0xff},
	"copybuf-64k":  {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"copybuf-1m":   {R: 0x1a, G: 0x60, B: 0x1a, A: 0xff},
	"mmap":         {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	"memory":       {R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
	"spate":        {R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	"nginx":        {R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
}

// WriteChart draws rep: per workload a band of panels, one per connection
// count, with a bar per server (req/s, or MB/s for the big file) labelled
// with its ratio to the workload's baseline. The format follows path's
// extension: .svg, .png or .pdf; the file is replaced atomically.
func WriteChart(path string, rep *Report) error {
	empty := rep == nil || len(rep.Rows) == 0
	var wls []string
	var heights []vg.Length
	total := chartHeaderH
	if !empty {
		wls = workloads(rep)
		for _, wl := range wls {
			h := chartBandPad + vg.Length(len(servers(rep, wl)))*chartRowPitch
			heights = append(heights, h)
			total += h
		}
	}
	return barchart.Save(path, empty, func() (vg.Length, vg.Length) { return chartWidth, total }, func(dc draw.Canvas) {
		drawHeader(draw.Crop(dc, 0, 0, dc.Size().Y-chartHeaderH, 0), rep)
		top := dc.Size().Y - chartHeaderH
		for i, wl := range wls {
			band := draw.Crop(dc, 0, 0, top-heights[i], -(dc.Size().Y - top))
			barchart.DrawPanels(band, panels(rep, wl))
			top -= heights[i]
		}
	})
}

// servers returns the servers of a workload in row order.
func servers(rep *Report, wl string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rep.Rows {
		if r.Workload == wl && !seen[r.Variant] {
			seen[r.Variant] = true
			out = append(out, r.Variant)
		}
	}
	return out
}

func panels(rep *Report, wl string) []*plot.Plot {
	names := servers(rep, wl)
	ticks := make([]plot.Tick, len(names))
	ypos := map[string]float64{}
	for i, n := range names {
		y := float64(len(names) - 1 - i)
		ticks[i] = plot.Tick{Value: y, Label: n}
		ypos[n] = y
	}
	var out []*plot.Plot
	for _, conns := range rep.Conns {
		var bars []barchart.Bar
		for _, r := range rep.Rows {
			if r.Workload != wl || r.Conns != conns {
				continue
			}
			v, label := r.QPS, fmt.Sprintf("%.0f", r.QPS)
			if wl == WorkloadBig {
				v, label = r.MBps, fmt.Sprintf("%.0f", r.MBps)
			}
			if r.Vs > 0 && r.Variant != r.Base {
				label += fmt.Sprintf(" (%.2f×)", r.Vs)
			}
			bars = append(bars, barchart.Bar{Y: ypos[r.Variant], V: v, Color: chartColor(r.Variant), Label: label})
		}
		if len(bars) == 0 {
			continue
		}
		unit := "req/s"
		if wl == WorkloadBig {
			unit = "MB/s"
		}
		title := fmt.Sprintf("%s, %d conn: %s", shortWorkload(rep, wl), conns, unit)
		out = append(out, barchart.Panel(title, 9, ticks, bars))
	}
	return out
}

func shortWorkload(rep *Report, wl string) string {
	switch wl {
	case WorkloadJSON:
		return fmt.Sprintf("JSON %d B in %d writes", rep.BodyBytes, rep.BodyWrites)
	case WorkloadBig:
		return benchenv.HumanBytes(rep.BigSize) + " file"
	case WorkloadSmall:
		return benchenv.HumanBytes(rep.SmallSize) + " files"
	}
	return wl
}

func drawHeader(c draw.Canvas, rep *Report) {
	title := "spate bench http — handlers and file downloads on loopback"
	m := rep.Machine
	sub := fmt.Sprintf("%d CPUs", m.CPUs)
	if m.CPUModel != "" {
		sub += " (" + m.CPUModel + ")"
	}
	if m.Kernel != "" {
		sub += ", kernel " + m.Kernel
	}
	sub += fmt.Sprintf(", %s; %.3gs per bar after %.3gs warm-up; (N×): over the baseline (direct; nginx or copy)", m.GoVersion, rep.Duration, rep.Warmup)
	barchart.DrawHeader(c, title, sub)
}

func chartColor(v string) color.RGBA {
	if c, ok := chartPalette[v]; ok {
		return c
	}
	return color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
}
