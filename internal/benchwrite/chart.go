package benchwrite

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/spate-io/spate/internal/barchart"
	"github.com/spate-io/spate/internal/benchenv"
)

// Chart geometry, after internal/benchio/chart.go: one panel per fsync
// mode side by side, one horizontal bar per writer.
const (
	chartWidth     = 28 * vg.Centimeter
	chartMinHeight = 10 * vg.Centimeter
	chartRowPitch  = 0.8 * vg.Centimeter
	chartHeaderH   = 1.7 * vg.Centimeter // overall title and the subtitle
	chartFooterH   = 1.5 * vg.Centimeter // panel titles, X axis, margins
)

// chartPalette gives each writer its colour in every panel (Tableau 10):
// the bufio sizes in shades of green, light to dark.
var chartPalette = map[string]color.RGBA{
	WriteRow: {R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red: the reference
	Bufio4K:  {R: 0x98, G: 0xdf, B: 0x8a, A: 0xff}, // light green
	Bufio64K: {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
	Bufio1M:  {R: 0x1a, G: 0x60, B: 0x1a, A: 0xff}, // dark green
	Writev:   {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
	Mmap:     {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
}

// WriteChart draws rep as one panel per fsync mode, side by side, each
// with one horizontal bar per writer: the median run's records/s (with
// min–max whiskers over the runs when there are several), labelled with
// the ratio to the per-record write row. Each panel has its own X scale:
// syncing per batch can be orders of magnitude slower. The format follows
// path's extension: .svg, .png or .pdf.
//
// The chart is written to a temporary file in path's directory and renamed
// over path, so a failed write leaves no partial chart.
func WriteChart(path string, rep *Report) error {
	empty := rep == nil || len(rep.Rows) == 0
	var writers []string
	if !empty {
		writers = chartWriters(rep)
	}
	return barchart.Save(path, empty, func() (vg.Length, vg.Length) {
		return chartWidth, max(chartMinHeight, chartHeaderH+chartFooterH+vg.Length(len(writers))*chartRowPitch)
	}, func(dc draw.Canvas) { drawChart(dc, rep, writers) })
}

// chartWriters returns the report's writers in row order.
func chartWriters(rep *Report) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rep.Rows {
		if !seen[r.Writer] {
			seen[r.Writer] = true
			out = append(out, r.Writer)
		}
	}
	return out
}

// drawChart draws the whole chart onto dc.
func drawChart(dc draw.Canvas, rep *Report, writers []string) {
	ticks := make([]plot.Tick, len(writers))
	ypos := make(map[string]float64, len(writers))
	for i, w := range writers {
		y := float64(len(writers) - 1 - i) // the first writer at the top
		ticks[i] = plot.Tick{Value: y, Label: w}
		ypos[w] = y
	}
	var panels []*plot.Plot
	for _, m := range syncs(rep) {
		var bars []barchart.Bar
		for _, r := range rep.Rows {
			if r.Sync != m {
				continue
			}
			b := barchart.Bar{Y: ypos[r.Writer], V: r.RecordsPerSec / 1e6, Color: chartColor(r.Writer)}
			b.Label = mrec(r.RecordsPerSec)
			if r.VsWrite > 0 && r.Writer != WriteRow {
				b.Label += fmt.Sprintf(" (%.1f×)", r.VsWrite)
			}
			if len(r.RecordsPerSecRuns) > 1 {
				b.Whisker = true
				b.Lo, b.Hi = math.Inf(1), math.Inf(-1)
				for _, v := range r.RecordsPerSecRuns {
					b.Lo, b.Hi = min(b.Lo, v/1e6), max(b.Hi, v/1e6)
				}
			}
			bars = append(bars, b)
		}
		panels = append(panels, barchart.Panel("fsync "+string(m)+": million records/s", 10, ticks, bars))
	}

	drawChartHeader(draw.Crop(dc, 0, 0, dc.Size().Y-chartHeaderH, 0), rep)
	barchart.DrawPanels(draw.Crop(dc, 0, 0, 0, -chartHeaderH), panels)
}

// drawChartHeader draws the overall title and a subtitle with the setup.
func drawChartHeader(c draw.Canvas, rep *Report) {
	title := fmt.Sprintf("spate bench write — %s of %d-byte records, batches of %d", benchenv.HumanBytes(rep.Bytes), rep.RecordSize, rep.Batch)
	m := rep.Machine
	sub := fmt.Sprintf("%s (%s), %d CPUs", rep.Dir, rep.FSType, m.CPUs)
	if m.CPUModel != "" {
		sub += " (" + m.CPUModel + ")"
	}
	if m.Kernel != "" {
		sub += ", kernel " + m.Kernel
	}
	sub += "; (N×): over per-record write with the same fsync mode"
	if rep.Repeat > 1 {
		sub += "; median of " + strconv.Itoa(rep.Repeat) + " runs, whiskers min–max"
	}
	barchart.DrawHeader(c, title, sub)
}

// chartColor returns writer's colour; grey for names outside the palette.
func chartColor(writer string) color.RGBA {
	if clr, ok := chartPalette[writer]; ok {
		return clr
	}
	return color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
}
