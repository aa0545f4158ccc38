package benchio

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart geometry. The height grows with the number of rows so that row labels
// never overlap (about 0.45 cm per row); 12 cm fits about 18 rows.
const (
	chartWidth     = 28 * vg.Centimeter
	chartMinHeight = 12 * vg.Centimeter
	chartRowPitch  = 0.45 * vg.Centimeter
	chartHeaderH   = 1.7 * vg.Centimeter // overall title and the colour key
	chartFooterH   = 1.5 * vg.Centimeter // panel titles, X axis, margins
	chartBarFrac   = 0.72                // share of a row's pitch a bar fills
)

// chartFont is the chart's typeface: sans-serif reads better at small sizes
// than plot's default serif.
var chartFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

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
	if err := writeChart(path, rep); err != nil {
		return fmt.Errorf("cannot write chart %q: %w", path, err)
	}
	return nil
}

func writeChart(path string, rep *Report) error {
	ext := filepath.Ext(path)
	var newCanvas func(w, h vg.Length) vg.CanvasWriterTo
	switch strings.ToLower(ext) {
	case ".svg":
		newCanvas = func(w, h vg.Length) vg.CanvasWriterTo { return chartSVG{vgsvg.New(w, h)} }
	case ".png":
		newCanvas = func(w, h vg.Length) vg.CanvasWriterTo {
			return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(150))}
		}
	case ".pdf":
		newCanvas = func(w, h vg.Length) vg.CanvasWriterTo { return vgpdf.New(w, h) }
	default:
		return fmt.Errorf("unsupported chart format %q: use .svg, .png or .pdf", ext)
	}
	if rep == nil || len(rep.Rows) == 0 {
		return errors.New("no rows to chart")
	}

	n := len(rep.Rows)
	h := max(chartMinHeight, chartHeaderH+chartFooterH+vg.Length(n)*chartRowPitch)
	c := newCanvas(chartWidth, h)
	drawChart(draw.New(c), rep)
	return writeChartFile(path, c)
}

// drawChart draws the whole chart onto dc.
func drawChart(dc draw.Canvas, rep *Report) {
	colors := chartColors(rep.Rows)

	tput := make([]chartBar, len(rep.Rows))
	rss := make([]chartBar, len(rep.Rows))
	ticks := make([]plot.Tick, len(rep.Rows))
	rounds := rep.Repeat
	for i, r := range rep.Rows {
		// Row 0 at the top: the Y axis grows upwards.
		y := float64(len(rep.Rows) - 1 - i)
		clr := colors[r.Strategy]
		if r.Cache == "cold" {
			clr = chartLighten(clr, 0.55)
		}
		tput[i] = chartBar{y: y, v: r.GBps.Median, lo: r.GBps.Min, hi: r.GBps.Max, clr: clr, whisker: true}
		rss[i] = chartBar{y: y, v: r.PeakRSSMB, clr: clr}
		ticks[i] = plot.Tick{Value: y, Label: r.Label()}
		rounds = max(rounds, r.Rounds)
	}

	of := "median of " + strconv.Itoa(rounds) + " rounds"
	if rounds <= 0 {
		of = "median over rounds"
	}
	left := chartPanel("Throughput (GB/s, "+of+"; whiskers min–max)", ticks, &chartBars{
		bars: tput, format: func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	})
	right := chartPanel("Peak RSS (MB, max over rounds)", ticks, &chartBars{
		bars: rss, format: func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) },
	})

	drawChartHeader(draw.Crop(dc, 0, 0, dc.Size().Y-chartHeaderH, 0), rep, colors)

	body := draw.Crop(dc, 0, 0, 0, -chartHeaderH)
	tiles := draw.Tiles{
		Rows: 1, Cols: 2,
		PadX:   0.8 * vg.Centimeter,
		PadTop: 0.1 * vg.Centimeter, PadBottom: 0.3 * vg.Centimeter,
		PadLeft: 0.3 * vg.Centimeter, PadRight: 0.5 * vg.Centimeter,
	}
	plots := [][]*plot.Plot{{left, right}}
	canvases := plot.Align(plots, tiles, body)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
}

// chartPanel returns one panel: bars plus vertical grid lines, one Y tick
// per row, X from zero.
func chartPanel(title string, ticks []plot.Tick, bars *chartBars) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(chartFont, 11)
	p.Title.Padding = 0.25 * vg.Centimeter

	p.X.Min = 0
	p.X.Tick.Label.Font = font.From(chartFont, 9)
	p.X.Padding = 0

	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Label.Font = font.From(chartFont, 10)
	p.Y.Tick.Length = 0
	p.Y.Width = 0
	p.Y.Padding = vg.Points(4)

	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	grid.Vertical.Color = color.Gray{Y: 0xdd}
	bars.style = p.Y.Tick.Label
	bars.style.Font = font.From(chartFont, 8)
	bars.style.XAlign = draw.XLeft
	bars.style.YAlign = draw.YCenter
	p.Add(grid, bars)
	// The bars' DataRange sets Y to [-0.5, n-0.5]; keep X at zero even
	// if a value is negative (a broken measurement, drawn clipped).
	p.X.Min = 0
	if p.X.Max <= 0 {
		p.X.Max = 1
	}
	p.X.Max *= 1.03 // the longest bar or whisker stops short of the edge
	return p
}

// drawChartHeader draws the overall title and, below it, the colour key.
func drawChartHeader(c draw.Canvas, rep *Report, colors map[string]color.RGBA) {
	var size int64
	for _, f := range rep.Files {
		size += f.Size
	}
	title := "spate bench io — " + humanBytes(size)
	if len(rep.Files) > 1 {
		title += " in " + strconv.Itoa(len(rep.Files)) + " files"
	}
	title += ", " + strconv.Itoa(rep.Machine.CPUs) + " CPUs"
	if rep.Machine.CPUModel != "" {
		title += " (" + rep.Machine.CPUModel + ")"
	}

	titleStyle := text.Style{
		Color: color.Black, Font: font.From(chartFont, 14),
		XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler,
	}
	top := c.Max.Y - 0.25*vg.Centimeter
	c.FillText(titleStyle, vg.Point{X: c.Center().X, Y: top}, title)

	// Colour key: one swatch per strategy in report order, centred.
	keyStyle := titleStyle
	keyStyle.Font = font.From(chartFont, 9)
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

// chartSVG gives the SVG's text fallback fonts. vgsvg names only "Liberation
// Sans", which many viewers lack and replace with their default serif font;
// Arial and Helvetica have the same metrics, so the layout holds.
type chartSVG struct{ *vgsvg.Canvas }

// WriteTo implements io.WriterTo.
func (c chartSVG) WriteTo(w io.Writer) (int64, error) {
	var buf bytes.Buffer
	if _, err := c.Canvas.WriteTo(&buf); err != nil {
		return 0, err
	}
	svg := bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
	n, err := w.Write(svg)
	return int64(n), err
}

// chartBar is one horizontal bar at Y position y, from 0 to v, with an
// optional whisker from lo to hi.
type chartBar struct {
	y, v, lo, hi float64
	clr          color.Color
	whisker      bool
}

// chartBars draws horizontal bars whose thickness is a share of the row
// pitch in data units (plotter.BarChart takes an absolute width, which
// would have to follow the row count and canvas height), each with its
// own colour, whisker and value label.
type chartBars struct {
	bars   []chartBar
	format func(float64) string
	style  text.Style
}

// end returns where b's value label starts, in data units.
func (b chartBar) end() float64 {
	if b.whisker && chartFinite(b.hi) {
		return max(b.v, b.hi)
	}
	return b.v
}

func chartFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Plot implements plot.Plotter.
func (cb *chartBars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	whiskerStyle := draw.LineStyle{Color: color.Gray{Y: 0x30}, Width: vg.Points(0.9)}
	for _, b := range cb.bars {
		yc := trY(b.y)
		half := (trY(b.y+chartBarFrac/2) - trY(b.y-chartBarFrac/2)) / 2
		if chartFinite(b.v) && b.v > 0 {
			x0, x1 := trX(0), trX(b.v)
			c.FillPolygon(b.clr, c.ClipPolygonXY([]vg.Point{
				{X: x0, Y: yc - half}, {X: x1, Y: yc - half},
				{X: x1, Y: yc + half}, {X: x0, Y: yc + half},
			}))
		}
		if b.whisker && chartFinite(b.lo) && chartFinite(b.hi) && b.hi > b.lo {
			lo, hi := trX(b.lo), trX(b.hi)
			capH := half * 0.6
			c.StrokeLines(whiskerStyle, c.ClipLinesXY(
				[]vg.Point{{X: lo, Y: yc}, {X: hi, Y: yc}},
				[]vg.Point{{X: lo, Y: yc - capH}, {X: lo, Y: yc + capH}},
				[]vg.Point{{X: hi, Y: yc - capH}, {X: hi, Y: yc + capH}},
			)...)
		}
		if chartFinite(b.v) {
			c.FillText(cb.style, vg.Point{X: trX(b.end()) + vg.Points(3), Y: yc}, cb.format(b.v))
		}
	}
}

// DataRange implements plot.DataRanger: X from 0 to the longest bar or
// whisker, Y with half a row of room above and below.
func (cb *chartBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = -0.5, 0.5
	for _, b := range cb.bars {
		if v := b.end(); chartFinite(v) {
			xmax = max(xmax, v)
		}
		ymin = min(ymin, b.y-0.5)
		ymax = max(ymax, b.y+0.5)
	}
	return 0, xmax, ymin, ymax
}

// GlyphBoxes implements plot.GlyphBoxer so the value labels right of the
// bars get room inside the panel.
func (cb *chartBars) GlyphBoxes(plt *plot.Plot) []plot.GlyphBox {
	boxes := make([]plot.GlyphBox, 0, len(cb.bars))
	for _, b := range cb.bars {
		if !chartFinite(b.v) {
			continue
		}
		txt := cb.format(b.v)
		w := vg.Points(3) + cb.style.Width(txt)
		boxes = append(boxes, plot.GlyphBox{
			X: plt.X.Norm(b.end()),
			Y: plt.Y.Norm(b.y),
			Rectangle: vg.Rectangle{
				Min: vg.Point{X: 0, Y: 0},
				Max: vg.Point{X: w, Y: 0},
			},
		})
	}
	return boxes
}

// writeChartFile writes w to a temporary file beside path and renames it
// over path; on error the temporary file is removed.
func writeChartFile(path string, w io.WriterTo) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = w.WriteTo(f); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
