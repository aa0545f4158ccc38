package benchio

import (
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/spate-io/spate/internal/barchart"
	"github.com/spate-io/spate/internal/benchenv"
)

// Chart geometry. The height grows with the number of rows so that row labels
// never overlap (about 0.45 cm per row); 12 cm fits about 18 rows.
const (
	chartWidth     = 28 * vg.Centimeter
	chartMinHeight = 12 * vg.Centimeter
	chartRowPitch  = 0.45 * vg.Centimeter
	chartHeaderH   = 1.7 * vg.Centimeter // overall title and the colour key
	chartFooterH   = 1.5 * vg.Centimeter // panel titles, X axis, margins
)

// chartPalette maps each known strategy to its colour in both panels
// (Tableau 10); cold-cache rows use a lighter shade of the same colour.
var chartPalette = map[string]color.RGBA{
	"mmap":    {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
	MmapWhole: {R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, // purple
	"pread":   {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
	"bufio":   {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
	"stream":  {R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
	"auto":    {R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
	Ceiling:   {R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, // grey
}

// chartSpare colours strategies missing from chartPalette, in order of first
// appearance in the report.
var chartSpare = []color.RGBA{
	{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff}, // pink
	{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}, // olive
	{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}, // cyan
}

// WriteChart draws rep as two panels side by side, throughput (median GB/s
// with min–max whiskers) and peak RSS, one horizontal bar per Row in report
// order, coloured by strategy (lighter for cold-cache rows). The format
// follows path's extension: .svg, .png or .pdf.
//
// The chart is written to a temporary file in path's directory and renamed
// over path, so a failed write leaves no partial chart. Rendering is in
// memory; for 24 rows it takes about 10 ms as SVG and 100–200 ms as PNG
// (150 dpi) or PDF (the first PDF embeds the font).
func WriteChart(path string, rep *Report) error {
	empty := rep == nil || len(rep.Rows) == 0
	return barchart.Save(path, empty, func() (vg.Length, vg.Length) {
		return chartWidth, max(chartMinHeight, chartHeaderH+chartFooterH+vg.Length(len(rep.Rows))*chartRowPitch)
	}, func(dc draw.Canvas) { drawChart(dc, rep) })
}

// drawChart draws the whole chart onto dc.
func drawChart(dc draw.Canvas, rep *Report) {
	colors := chartColors(rep.Rows)

	tput := make([]barchart.Bar, len(rep.Rows))
	rss := make([]barchart.Bar, len(rep.Rows))
	ticks := make([]plot.Tick, len(rep.Rows))
	rounds := rep.Repeat
	for i, r := range rep.Rows {
		// Row 0 at the top: the Y axis grows upwards.
		y := float64(len(rep.Rows) - 1 - i)
		clr := colors[r.Strategy]
		if r.Cache == "cold" {
			clr = chartLighten(clr, 0.55)
		}
		tput[i] = barchart.Bar{Y: y, V: r.GBps.Median, Lo: r.GBps.Min, Hi: r.GBps.Max, Color: clr, Whisker: true,
			Label: strconv.FormatFloat(r.GBps.Median, 'f', 2, 64)}
		rss[i] = barchart.Bar{Y: y, V: r.PeakRSSMB, Color: clr, Label: strconv.FormatFloat(r.PeakRSSMB, 'f', 0, 64)}
		ticks[i] = plot.Tick{Value: y, Label: r.Label()}
		rounds = max(rounds, r.Rounds)
	}

	of := "median of " + strconv.Itoa(rounds) + " rounds"
	if rounds <= 0 {
		of = "median over rounds"
	}
	left := barchart.Panel("Throughput (GB/s, "+of+"; whiskers min–max)", 11, ticks, tput)
	right := barchart.Panel("Peak RSS (MB, max over rounds)", 11, ticks, rss)

	drawChartHeader(draw.Crop(dc, 0, 0, dc.Size().Y-chartHeaderH, 0), rep, colors)

	barchart.DrawPanels(draw.Crop(dc, 0, 0, 0, -chartHeaderH), []*plot.Plot{left, right})
}

// drawChartHeader draws the overall title and, below it, the colour key.
func drawChartHeader(c draw.Canvas, rep *Report, colors map[string]color.RGBA) {
	var size int64
	for _, f := range rep.Files {
		size += f.Size
	}
	title := "spate bench io — " + benchenv.HumanBytes(size)
	if len(rep.Files) > 1 {
		title += " in " + strconv.Itoa(len(rep.Files)) + " files"
	}
	title += ", " + strconv.Itoa(rep.Machine.CPUs) + " CPUs"
	if rep.Machine.CPUModel != "" {
		title += " (" + rep.Machine.CPUModel + ")"
	}

	titleStyle := text.Style{
		Color: color.Black, Font: font.From(barchart.Font, 14),
		XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler,
	}
	top := c.Max.Y - 0.25*vg.Centimeter
	c.FillText(titleStyle, vg.Point{X: c.Center().X, Y: top}, title)

	// Colour key: one swatch per strategy in report order, centred.
	keyStyle := titleStyle
	keyStyle.Font = font.From(barchart.Font, 9)
	keyStyle.XAlign = draw.XLeft
	keyStyle.YAlign = draw.YCenter
	const note = "lighter shade: cold page cache"
	sw := vg.Points(9)
	gap := vg.Points(4)
	sep := vg.Points(14)
	var names []string
	seen := map[string]bool{}
	for _, r := range rep.Rows {
		if !seen[r.Strategy] {
			seen[r.Strategy] = true
			names = append(names, r.Strategy)
		}
	}
	var total vg.Length
	for _, s := range names {
		total += sw + gap + keyStyle.Width(s) + sep
	}
	total += keyStyle.Width(note)
	x := c.Center().X - total/2
	y := top - titleStyle.Height(title) - 0.3*vg.Centimeter
	for _, s := range names {
		c.FillPolygon(colors[s], []vg.Point{
			{X: x, Y: y - sw/2}, {X: x + sw, Y: y - sw/2},
			{X: x + sw, Y: y + sw/2}, {X: x, Y: y + sw/2},
		})
		x += sw + gap
		c.FillText(keyStyle, vg.Point{X: x, Y: y}, s)
		x += keyStyle.Width(s) + sep
	}
	keyStyle.Color = color.Gray{Y: 0x55}
	c.FillText(keyStyle, vg.Point{X: x, Y: y}, note)
}

// chartColors assigns each strategy of rows its colour.
func chartColors(rows []Row) map[string]color.RGBA {
	colors := make(map[string]color.RGBA)
	spare := 0
	for _, r := range rows {
		if _, ok := colors[r.Strategy]; ok {
			continue
		}
		if clr, ok := chartPalette[r.Strategy]; ok {
			colors[r.Strategy] = clr
			continue
		}
		colors[r.Strategy] = chartSpare[spare%len(chartSpare)]
		spare++
	}
	return colors
}

// chartLighten mixes clr with white; f=0 keeps clr, f=1 gives white.
func chartLighten(clr color.RGBA, f float64) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(math.Round(float64(v) + (255-float64(v))*f)) }
	return color.RGBA{R: mix(clr.R), G: mix(clr.G), B: mix(clr.B), A: clr.A}
}
