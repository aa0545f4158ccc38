// Package barchart draws the bench commands' charts: panels of horizontal
// bars side by side, written as SVG, PNG or PDF (gonum plot).
package barchart

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
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

// Font is the charts' typeface: sans-serif reads better at small sizes
// than plot's default serif.
var Font = font.Font{Typeface: "Liberation", Variant: "Sans"}

// barFrac is the share of a row's pitch a bar fills.
const barFrac = 0.72

// CanvasFor returns a constructor of canvases in the format of path's
// extension (.svg, .png at 150 dpi, or .pdf), or an error naming the
// supported ones.
func CanvasFor(path string) (func(w, h vg.Length) vg.CanvasWriterTo, error) {
	switch ext := filepath.Ext(path); strings.ToLower(ext) {
	case ".svg":
		return func(w, h vg.Length) vg.CanvasWriterTo { return svgCanvas{vgsvg.New(w, h)} }, nil
	case ".png":
		return func(w, h vg.Length) vg.CanvasWriterTo {
			return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(150))}
		}, nil
	case ".pdf":
		return func(w, h vg.Length) vg.CanvasWriterTo { return vgpdf.New(w, h) }, nil
	default:
		return nil, fmt.Errorf("unsupported chart format %q: use .svg, .png or .pdf", ext)
	}
}

// Save makes a chart for path: a canvas in the format of path's extension
// (CanvasFor) of the size size gives, drawn on by drawOn, written with
// WriteFile. empty means there is nothing to chart: an error. Errors name
// the path.
func Save(path string, empty bool, size func() (w, h vg.Length), drawOn func(draw.Canvas)) error {
	newCanvas, err := CanvasFor(path)
	if err == nil && empty {
		err = errors.New("no rows to chart")
	}
	if err == nil {
		c := newCanvas(size())
		drawOn(draw.New(c))
		err = WriteFile(path, c)
	}
	if err != nil {
		return fmt.Errorf("cannot write chart %q: %w", path, err)
	}
	return nil
}

// WriteFile writes w to a temporary file beside path and renames it over
// path, so a failed write leaves no partial chart; on error the temporary
// file is removed.
func WriteFile(path string, w io.WriterTo) (err error) {
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

// svgCanvas gives the SVG's text fallback fonts. vgsvg names only
// "Liberation Sans", which many viewers lack and replace with their default
// serif font; Arial and Helvetica have the same metrics, so the layout
// holds.
type svgCanvas struct{ *vgsvg.Canvas }

// WriteTo implements io.WriterTo.
func (c svgCanvas) WriteTo(w io.Writer) (int64, error) {
	var buf bytes.Buffer
	if _, err := c.Canvas.WriteTo(&buf); err != nil {
		return 0, err
	}
	svg := bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
	n, err := w.Write(svg)
	return int64(n), err
}

// DrawPanels lays panels out side by side on c, aligned, and draws them.
func DrawPanels(c draw.Canvas, panels []*plot.Plot) {
	tiles := draw.Tiles{
		Rows: 1, Cols: len(panels),
		PadX:   0.8 * vg.Centimeter,
		PadTop: 0.1 * vg.Centimeter, PadBottom: 0.3 * vg.Centimeter,
		PadLeft: 0.3 * vg.Centimeter, PadRight: 0.5 * vg.Centimeter,
	}
	canvases := plot.Align([][]*plot.Plot{panels}, tiles, c)
	for i, p := range panels {
		p.Draw(canvases[0][i])
	}
}

// Panel returns one panel titled title (in a font of titleSize points):
// bars plus vertical grid lines, the Y ticks given, X from zero.
func Panel(title string, titleSize font.Length, ticks []plot.Tick, bars []Bar) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(Font, titleSize)
	p.Title.Padding = 0.25 * vg.Centimeter

	p.X.Min = 0
	p.X.Tick.Marker = roundTicks{}
	p.X.Tick.Label.Font = font.From(Font, 9)
	p.X.Padding = 0

	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Label.Font = font.From(Font, 10)
	p.Y.Tick.Length = 0
	p.Y.Width = 0
	p.Y.Padding = vg.Points(4)

	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	grid.Vertical.Color = color.Gray{Y: 0xdd}
	bp := &barPlotter{bars: bars, style: p.Y.Tick.Label}
	bp.style.Font = font.From(Font, 8)
	bp.style.XAlign = draw.XLeft
	bp.style.YAlign = draw.YCenter
	p.Add(grid, bp)
	// The bars' DataRange sets Y to half a row around the bars; keep X at
	// zero even if a value is negative (a broken measurement, drawn
	// clipped).
	p.X.Min = 0
	if p.X.Max <= 0 {
		p.X.Max = 1
	}
	p.X.Max *= 1.03 // the longest bar or whisker stops short of the edge
	return p
}

// roundTicks are plot's default ticks with labels of large values
// printed as whole numbers ("25000", not "25000.00").
type roundTicks struct{}

func (roundTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	if math.Max(math.Abs(lo), math.Abs(hi)) < 1000 {
		return ticks
	}
	for i, t := range ticks {
		if t.Label != "" && t.Value == math.Trunc(t.Value) {
			ticks[i].Label = fmt.Sprintf("%.0f", t.Value)
		}
	}
	return ticks
}

// Bar is one horizontal bar at Y position Y (rows are one unit apart),
// from 0 to V, with an optional whisker from Lo to Hi and a label right of
// it. A bar whose V is NaN or infinite is left out.
type Bar struct {
	Y, V, Lo, Hi float64
	Color        color.Color
	Whisker      bool
	Label        string
}

// end returns where b's label starts, in data units.
func (b Bar) end() float64 {
	if b.Whisker && finite(b.Hi) {
		return max(b.V, b.Hi)
	}
	return b.V
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// barPlotter draws horizontal bars whose thickness is a share of the row
// pitch in data units (plotter.BarChart takes an absolute width, which
// would have to follow the row count and canvas height), each with its own
// colour, whisker and label.
type barPlotter struct {
	bars  []Bar
	style text.Style
}

// Plot implements plot.Plotter.
func (bp *barPlotter) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	whiskerStyle := draw.LineStyle{Color: color.Gray{Y: 0x30}, Width: vg.Points(0.9)}
	for _, b := range bp.bars {
		yc := trY(b.Y)
		half := (trY(b.Y+barFrac/2) - trY(b.Y-barFrac/2)) / 2
		if finite(b.V) && b.V > 0 {
			x0, x1 := trX(0), trX(b.V)
			c.FillPolygon(b.Color, c.ClipPolygonXY([]vg.Point{
				{X: x0, Y: yc - half}, {X: x1, Y: yc - half},
				{X: x1, Y: yc + half}, {X: x0, Y: yc + half},
			}))
		}
		if b.Whisker && finite(b.Lo) && finite(b.Hi) && b.Hi > b.Lo {
			lo, hi := trX(b.Lo), trX(b.Hi)
			capH := half * 0.6
			c.StrokeLines(whiskerStyle, c.ClipLinesXY(
				[]vg.Point{{X: lo, Y: yc}, {X: hi, Y: yc}},
				[]vg.Point{{X: lo, Y: yc - capH}, {X: lo, Y: yc + capH}},
				[]vg.Point{{X: hi, Y: yc - capH}, {X: hi, Y: yc + capH}},
			)...)
		}
		if finite(b.V) {
			c.FillText(bp.style, vg.Point{X: trX(b.end()) + vg.Points(3), Y: yc}, b.Label)
		}
	}
}

// DataRange implements plot.DataRanger: X from 0 to the longest bar or
// whisker, Y with half a row of room above and below.
func (bp *barPlotter) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = -0.5, 0.5
	for _, b := range bp.bars {
		if v := b.end(); finite(v) {
			xmax = max(xmax, v)
		}
		ymin = min(ymin, b.Y-0.5)
		ymax = max(ymax, b.Y+0.5)
	}
	return 0, xmax, ymin, ymax
}

// GlyphBoxes implements plot.GlyphBoxer so the labels right of the bars
// get room inside the panel.
func (bp *barPlotter) GlyphBoxes(plt *plot.Plot) []plot.GlyphBox {
	boxes := make([]plot.GlyphBox, 0, len(bp.bars))
	for _, b := range bp.bars {
		if !finite(b.V) {
			continue
		}
		w := vg.Points(3) + bp.style.Width(b.Label)
		boxes = append(boxes, plot.GlyphBox{
			X:         plt.X.Norm(b.end()),
			Y:         plt.Y.Norm(b.Y),
			Rectangle: vg.Rectangle{Max: vg.Point{X: w}},
		})
	}
	return boxes
}

// DrawHeader draws a chart's title (14 pt) centred at the top of c and,
// if sub is not empty, a grey subtitle (9 pt) under it.
func DrawHeader(c draw.Canvas, title, sub string) {
	titleStyle := text.Style{
		Color: color.Black, Font: font.From(Font, 14),
		XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler,
	}
	top := c.Max.Y - 0.25*vg.Centimeter
	c.FillText(titleStyle, vg.Point{X: c.Center().X, Y: top}, title)
	if sub == "" {
		return
	}
	subStyle := titleStyle
	subStyle.Font = font.From(Font, 9)
	subStyle.Color = color.Gray{Y: 0x55}
	c.FillText(subStyle, vg.Point{X: c.Center().X, Y: top - titleStyle.Height(title) - 0.15*vg.Centimeter}, sub)
}
