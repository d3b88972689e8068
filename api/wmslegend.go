// wmslegend.go: GetLegendGraphic (the SLD extension of WMS): a layer's
// legend as a small PNG, in the colours its image is drawn with (the
// styling model's classes, package style).
package api

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"mapcommons"
	"mapcommons/render"
	"mapcommons/style"
)

// Defaults of a legend's swatches and its bound.
const (
	legendSwatch    = 20  // pixels, each side, by default
	legendMaxSwatch = 256 // WIDTH and HEIGHT at most
	legendMaxRows   = 200
	legendPad       = 4
)

// legendFont is Go Regular, parsed once (a parsed font is safe for
// concurrent use; a face is not: legendFace makes one per legend).
var legendFont = sync.OnceValues(func() (*opentype.Font, error) { return opentype.Parse(goregular.TTF) })

// legendFace is the legend's face: Go Regular at 12 pixels.
func legendFace() font.Face {
	if f, err := legendFont(); err == nil {
		if face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: 12, DPI: 72, Hinting: font.HintingFull}); err == nil {
			return face
		}
	}
	return basicfont.Face7x13
}

// legendRow is one line of a legend: a swatch of a colour (none: a
// heading) and its text.
type legendRow struct {
	swatch bool
	rgb    int
	text   string
}

// wmsLegend answers GetLegendGraphic: LAYER (one), STYLE ("" or default),
// FORMAT image/png, WIDTH and HEIGHT of a swatch (default 20). A classed
// layer has a swatch per class with its range; another one of its colour;
// a map, its layers' in order, each under its title.
func (s *Server) wmsLegend(w http.ResponseWriter, r *http.Request, p wmsParams) error {
	if f := p["FORMAT"]; f != "" && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(f)), pngType) {
		return wmsErr(wmsInvalidFormat, "FORMAT: %q is not one of this WMS (image/png)", f)
	}
	name := strings.TrimSpace(p["LAYER"])
	if name == "" {
		return wmsErr(wmsLayerNotDefined, "LAYER is missing: the name of the layer")
	}
	l, err := s.wmsFindLayer(r, name)
	if err != nil {
		return err
	}
	if err := checkWMSStyle(name, p["STYLE"]); err != nil {
		return err
	}
	sw, sh := legendSwatch, legendSwatch
	for _, side := range []struct {
		name string
		v    *int
	}{{"WIDTH", &sw}, {"HEIGHT", &sh}} {
		if v := p[side.name]; v != "" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 || n > legendMaxSwatch {
				return wmsErr("", "%s: a swatch of 1 to %d pixels, not %q", side.name, legendMaxSwatch, v)
			}
			*side.v = n
		}
	}
	var rows []legendRow
	drawn := 0
	for _, rl := range l.layers {
		if rl.Dataset != nil {
			drawn++
		}
	}
	for _, rl := range l.layers {
		if rl.Dataset == nil {
			continue // left out of the image, and of its legend
		}
		lr, err := s.legendRows(r, rl)
		if err != nil {
			return err
		}
		if drawn > 1 {
			title := rl.Layer.Title
			if title == "" {
				title = rl.Dataset.Title
			}
			rows = append(rows, legendRow{text: title})
		}
		rows = append(rows, lr...)
	}
	if len(rows) > legendMaxRows {
		rows = rows[:legendMaxRows]
	}
	img := drawLegend(rows, sw, sh)
	var b bytes.Buffer
	if err := render.EncodePNG(&b, img); err != nil {
		return err
	}
	w.Header().Set("Content-Type", pngType)
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	_, err = w.Write(b.Bytes())
	return err
}

// The colours a layer whose styles name none is drawn with (render's).
const (
	legendFill   = 0x4682b4
	legendStroke = 0x333333
	legendIcon   = 0xe6550d
)

// legendRows are one layer's rows: its classes (style.Classifier, as the
// image classes it), or its one colour.
func (s *Server) legendRows(r *http.Request, rl render.Layer) ([]legendRow, error) {
	l, ds := rl.Layer, rl.Dataset
	typ := strings.ToUpper(l.Styles.Type)
	if typ == "" {
		typ = mapcommons.LayerPrimitive
	}
	if (typ == mapcommons.LayerChoropleth || typ == mapcommons.LayerGraduated) && s.classes != nil {
		cl, err := s.classes.Classify(r.Context(), &l, ds)
		if err != nil {
			return nil, err
		}
		if cl != nil && len(cl.Counts) > 0 && len(cl.Breaks) == len(cl.Counts)+1 {
			colors := cl.Colors
			if len(colors) < len(cl.Counts) {
				colors = style.Colors(&l, len(cl.Counts))
			}
			rows := make([]legendRow, len(cl.Counts))
			for i := range cl.Counts {
				rows[i] = legendRow{swatch: true, rgb: colors[i], text: legendNumber(cl.Breaks[i]) + " – " + legendNumber(cl.Breaks[i+1])}
			}
			return rows, nil
		}
	}
	title := l.Title
	if title == "" {
		title = ds.Title
	}
	const polygons, lines = 1<<3 | 1<<6, 1<<2 | 1<<5
	rgb := legendFill
	switch {
	case typ == mapcommons.LayerPoint || typ == mapcommons.LayerGraduated || typ == mapcommons.LayerProportional ||
		ds.GeometryMask&(polygons|lines) == 0:
		rgb = legendIcon
		if l.Styles.Icon.Color != nil {
			rgb = *l.Styles.Icon.Color
		}
	case ds.GeometryMask&polygons == 0:
		rgb = legendStroke
		if l.Styles.Stroke.Color != nil {
			rgb = *l.Styles.Stroke.Color
		}
	default:
		if l.Styles.Fill.Color != nil {
			rgb = *l.Styles.Fill.Color
		}
	}
	return []legendRow{{swatch: true, rgb: rgb, text: title}}, nil
}

// legendNumber writes a class break shortly: four significant digits, a
// whole number as itself.
func legendNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// drawLegend draws the rows on white: each swatch sw×sh with a grey
// outline, its text to its right.
func drawLegend(rows []legendRow, sw, sh int) *image.RGBA {
	face := legendFace()
	defer face.Close()
	m := face.Metrics()
	lineH := (m.Ascent + m.Descent).Ceil()
	rowH := max(sh, lineH)
	textW := 0
	for _, row := range rows {
		textW = max(textW, font.MeasureString(face, row.text).Ceil())
	}
	width := legendPad + sw + legendPad + textW + legendPad
	height := legendPad + len(rows)*(rowH+legendPad)
	width, height = min(max(width, 1), render.MaxSide), min(max(height, 1), render.MaxSide)
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	outline := image.NewUniform(color.RGBA{0x99, 0x99, 0x99, 0xff})
	d := &font.Drawer{Dst: img, Src: image.NewUniform(color.RGBA{0x22, 0x22, 0x22, 0xff}), Face: face}
	for i, row := range rows {
		y := legendPad + i*(rowH+legendPad)
		x := legendPad
		if row.swatch {
			box := image.Rect(x, y+(rowH-sh)/2, x+sw, y+(rowH-sh)/2+sh)
			draw.Draw(img, box, outline, image.Point{}, draw.Src)
			inner := box
			if sw > 2 && sh > 2 {
				inner = box.Inset(1)
			}
			c := color.RGBA{uint8(row.rgb >> 16), uint8(row.rgb >> 8), uint8(row.rgb), 0xff}
			draw.Draw(img, inner, image.NewUniform(c), image.Point{}, draw.Src)
			x += sw + legendPad
		}
		d.Dot = fixed.P(x, y+(rowH-lineH)/2+m.Ascent.Ceil())
		d.DrawString(row.text)
	}
	return img
}
