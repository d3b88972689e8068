package render

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"strconv"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"mapcommons"
	"mapcommons/style"
)

// Legends: a swatch per class of a classed layer with its range, else one
// of the layer's colour with its title, drawn on white in Go Regular.

// Defaults of a legend's swatches and its bounds.
const (
	LegendSwatch    = 20  // CSS pixels, each side, by default
	LegendMaxSwatch = 256 // a swatch's side at most
	LegendMaxRows   = 200
	legendPad       = 4
	legendFontSize  = 12
)

// legendFont is Go Regular, parsed once (a parsed font is safe for
// concurrent use; a face is not: legendFace makes one per legend).
var legendFont = sync.OnceValues(func() (*opentype.Font, error) { return opentype.Parse(goregular.TTF) })

// legendFace is the legend's face: Go Regular at size pixels.
func legendFace(size float64) font.Face {
	if f, err := legendFont(); err == nil {
		if face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull}); err == nil {
			return face
		}
	}
	return basicfont.Face7x13
}

// LegendRow is one line of a legend: a swatch of a colour (none: a
// heading) and its text.
type LegendRow struct {
	Swatch bool
	RGB    int
	Text   string
}

// LegendRows are one layer's rows, from its look: its classes with their
// ranges, or its one colour (its symbols', lines' or fill's, as its
// features are mostly drawn) with its title.
func LegendRows(title string, k *style.Look, ds *mapcommons.Dataset) []LegendRow {
	if c := k.Classes; c != nil {
		rows := make([]LegendRow, len(c.Counts))
		for i := range c.Counts {
			rows[i] = LegendRow{Swatch: true, RGB: c.Colors[i], Text: legendNumber(c.Breaks[i]) + " – " + legendNumber(c.Breaks[i+1])}
		}
		return rows
	}
	const polygons, lines = 1<<3 | 1<<6, 1<<2 | 1<<5
	rgb := k.Fill[0]
	switch {
	case k.Type == mapcommons.LayerPoint || k.Symbolic() || ds.GeometryMask&(polygons|lines) == 0:
		rgb = k.IconColor
	case ds.GeometryMask&polygons == 0:
		rgb = k.Stroke
	}
	return []LegendRow{{Swatch: true, RGB: rgb, Text: title}}
}

// legendNumber writes a class break shortly: four significant digits, a
// whole number as itself.
func legendNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// DrawLegend draws the rows on white, scale device pixels per CSS pixel:
// each swatch sw×sh CSS pixels with a grey outline, its text to its
// right; at most LegendMaxRows rows, and MaxSide pixels a side.
func DrawLegend(rows []LegendRow, sw, sh int, scale float64) *image.RGBA {
	if len(rows) > LegendMaxRows {
		rows = rows[:LegendMaxRows]
	}
	scale = max(1, min(MaxScale, scale))
	px := func(v int) int { return int(math.Round(float64(v) * scale)) }
	face := legendFace(legendFontSize * scale)
	defer face.Close()
	m := face.Metrics()
	sw, sh = px(sw), px(sh)
	pad := px(legendPad)
	lineH := (m.Ascent + m.Descent).Ceil()
	rowH := max(sh, lineH)
	textW := 0
	for _, row := range rows {
		textW = max(textW, font.MeasureString(face, row.Text).Ceil())
	}
	width := pad + sw + pad + textW + pad
	height := pad + len(rows)*(rowH+pad)
	width, height = min(max(width, 1), MaxSide), min(max(height, 1), MaxSide)
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	outline := image.NewUniform(color.RGBA{0x99, 0x99, 0x99, 0xff})
	d := &font.Drawer{Dst: img, Src: image.NewUniform(color.RGBA{0x22, 0x22, 0x22, 0xff}), Face: face}
	for i, row := range rows {
		y := pad + i*(rowH+pad)
		x := pad
		if row.Swatch {
			box := image.Rect(x, y+(rowH-sh)/2, x+sw, y+(rowH-sh)/2+sh)
			draw.Draw(img, box, outline, image.Point{}, draw.Src)
			inner := box
			if sw > 2 && sh > 2 {
				inner = box.Inset(max(1, px(1)))
			}
			c := color.RGBA{uint8(row.RGB >> 16), uint8(row.RGB >> 8), uint8(row.RGB), 0xff}
			draw.Draw(img, inner, image.NewUniform(c), image.Point{}, draw.Src)
			x += sw + pad
		}
		d.Dot = fixed.P(x, y+(rowH-lineH)/2+m.Ascent.Ceil())
		d.DrawString(row.Text)
	}
	return img
}
