package benchwrite

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

// Chart geometry, after internal/benchio/chart.go: one panel per fsync
// mode side by side, one horizontal bar per writer.
const (
	chartWidth     = 28 * vg.Centimeter
	chartMinHeight = 10 * vg.Centimeter
	chartRowPitch  = 0.8 * vg.Centimeter
	chartHeaderH   = 1.7 * vg.Centimeter // overall title and the subtitle
	chartFooterH   = 1.5 * vg.Centimeter // panel titles, X axis, margins
	chartBarFrac   = 0.72                // share of a row's pitch a bar fills
)

// chartFont is the chart's typeface: sans-serif reads better at small sizes
// than plot's default serif.
var chartFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

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
	writers := chartWriters(rep)
	h := max(chartMinHeight, chartHeaderH+chartFooterH+vg.Length(len(writers))*chartRowPitch)
	c := newCanvas(chartWidth, h)
	drawChart(draw.New(c), rep, writers)
	return writeChartFile(path, c)
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
		var bars []chartBar
		for _, r := range rep.Rows {
			if r.Sync != m {
				continue
			}
			b := chartBar{y: ypos[r.Writer], v: r.RecordsPerSec / 1e6, clr: chartColor(r.Writer)}
			b.label = mrec(r.RecordsPerSec)
			if r.VsWrite > 0 && r.Writer != WriteRow {
				b.label += fmt.Sprintf(" (%.1f×)", r.VsWrite)
			}
			if len(r.RecordsPerSecRuns) > 1 {
				b.whisker = true
				b.lo, b.hi = math.Inf(1), math.Inf(-1)
				for _, v := range r.RecordsPerSecRuns {
					b.lo, b.hi = min(b.lo, v/1e6), max(b.hi, v/1e6)
				}
			}
			bars = append(bars, b)
		}
		panels = append(panels, chartPanel("fsync "+string(m)+": million records/s", ticks, &chartBars{bars: bars}))
	}

	drawChartHeader(draw.Crop(dc, 0, 0, dc.Size().Y-chartHeaderH, 0), rep)
	body := draw.Crop(dc, 0, 0, 0, -chartHeaderH)
	tiles := draw.Tiles{
		Rows: 1, Cols: len(panels),
		PadX:   0.8 * vg.Centimeter,
		PadTop: 0.1 * vg.Centimeter, PadBottom: 0.3 * vg.Centimeter,
		PadLeft: 0.3 * vg.Centimeter, PadRight: 0.5 * vg.Centimeter,
	}
	canvases := plot.Align([][]*plot.Plot{panels}, tiles, body)
	for i, p := range panels {
		p.Draw(canvases[0][i])
	}
}

// chartPanel returns one panel: bars plus vertical grid lines, one Y tick
// per writer, X from zero.
func chartPanel(title string, ticks []plot.Tick, bars *chartBars) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(chartFont, 10)
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
	// The bars' DataRange sets Y; keep X at zero even if a value is
	// negative (a broken measurement, drawn clipped).
	p.X.Min = 0
	if p.X.Max <= 0 {
		p.X.Max = 1
	}
	p.X.Max *= 1.03 // the longest bar or whisker stops short of the edge
	return p
}

// drawChartHeader draws the overall title and a subtitle with the setup.
func drawChartHeader(c draw.Canvas, rep *Report) {
	title := fmt.Sprintf("spate bench write — %s of %d-byte records, batches of %d", humanBytes(rep.Bytes), rep.RecordSize, rep.Batch)
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
	titleStyle := text.Style{
		Color: color.Black, Font: font.From(chartFont, 14),
		XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler,
	}
	top := c.Max.Y - 0.25*vg.Centimeter
	c.FillText(titleStyle, vg.Point{X: c.Center().X, Y: top}, title)
	subStyle := titleStyle
	subStyle.Font = font.From(chartFont, 9)
	subStyle.Color = color.Gray{Y: 0x55}
	c.FillText(subStyle, vg.Point{X: c.Center().X, Y: top - titleStyle.Height(title) - 0.15*vg.Centimeter}, sub)
}

// chartColor returns writer's colour; grey for names outside the palette.
func chartColor(writer string) color.RGBA {
	if clr, ok := chartPalette[writer]; ok {
		return clr
	}
	return color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
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
// optional whisker from lo to hi and a label right of it.
type chartBar struct {
	y, v, lo, hi float64
	clr          color.Color
	whisker      bool
	label        string
}

// chartBars draws horizontal bars whose thickness is a share of the row
// pitch in data units, each with its own colour, whisker and label.
type chartBars struct {
	bars  []chartBar
	style text.Style
}

// end returns where b's label starts, in data units.
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
			c.FillText(cb.style, vg.Point{X: trX(b.end()) + vg.Points(3), Y: yc}, b.label)
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

// GlyphBoxes implements plot.GlyphBoxer so the labels right of the bars
// get room inside the panel.
func (cb *chartBars) GlyphBoxes(plt *plot.Plot) []plot.GlyphBox {
	boxes := make([]plot.GlyphBox, 0, len(cb.bars))
	for _, b := range cb.bars {
		if !chartFinite(b.v) {
			continue
		}
		w := vg.Points(3) + cb.style.Width(b.label)
		boxes = append(boxes, plot.GlyphBox{
			X:         plt.X.Norm(b.end()),
			Y:         plt.Y.Norm(b.y),
			Rectangle: vg.Rectangle{Max: vg.Point{X: w}},
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
