package basemap

// This file makes the glyphs of the style's text labels: the signed
// distance fields (SDF) MapLibre draws text from, in ranges of 256 code
// points, in the protobuf MapLibre and Mapbox read (glyphs.proto of
// node-fontnik: a glyphs message of stacks, each a name, a range and its
// glyphs, each an id, a bitmap and its metrics). The fonts are the Go
// fonts (golang.org/x/image/font/gofont, BSD-licensed, in the binary):
// each glyph is rasterised at 24 pixels (MapLibre's ONE_EM) with
// opentype, 3 pixels of margin around it (GLYPH_PBF_BORDER), and its
// distance field computed here with the exact Euclidean distance
// transform of Felzenszwalb and Huttenlocher, as TinySDF does in the
// browser: a pixel's value is 255 - 255·(d/8 + 0.25) for its signed
// distance d (positive outside) to the outline, so the edge is at 191
// (MapLibre's shader cuts at 0.75) and the field reaches 8 pixels out.
//
// A range is made on its first request (a few milliseconds: the Go fonts
// have some 700 glyphs, in 15 ranges) and the server keeps it in
// its bounded tile cache; making them at build time would put a megabyte
// of generated data in the repository for ranges hardly any map asks for.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"math"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	fx "golang.org/x/image/math/fixed"
)

// The font stacks served, and the one the built-in style labels with.
const (
	FontRegular = "Go Regular"
	FontBold    = "Go Bold"
	LabelFont   = FontRegular
)

// The form of the glyphs MapLibre expects of a glyphs server.
const (
	glyphSize   = 24   // pixels of the em
	glyphBorder = 3    // pixels of margin around each bitmap
	sdfRadius   = 8.0  // pixels the field reaches
	sdfCutoff   = 0.25 // of the field inside the edge
	// glyphAscent is where a glyph's top is measured from: node-fontnik
	// measures it from the font's ascender (some 26 pixels of a 24-pixel
	// Open Sans), and MapLibre places text for that (its local glyphs
	// subtract 27.5), so the Go fonts' tops are measured from it too and
	// their labels sit where other servers' would.
	glyphAscent = 26
)

// glyphFonts are the served fonts by their stack name.
var glyphFonts = map[string][]byte{FontRegular: goregular.TTF, FontBold: gobold.TTF}

var (
	parsedOnce  sync.Once
	parsedFonts map[string]*sfnt.Font
	parseErr    error
)

// fonts parses the served fonts, once.
func fonts() (map[string]*sfnt.Font, error) {
	parsedOnce.Do(func() {
		parsedFonts = map[string]*sfnt.Font{}
		for name, ttf := range glyphFonts {
			f, err := sfnt.Parse(ttf)
			if err != nil {
				parseErr = fmt.Errorf("basemap: font %s: %w", name, err)
				return
			}
			parsedFonts[name] = f
		}
	})
	return parsedFonts, parseErr
}

var glyphsVersion = sync.OnceValue(func() string {
	h := sha256.New()
	h.Write([]byte("glyphs 1\x00")) // the form of the glyphs: change with this file
	for _, name := range []string{FontRegular, FontBold} {
		h.Write([]byte(name + "\x00"))
		h.Write(glyphFonts[name])
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
})

// GlyphsVersion names the glyphs of this build: a hash of the fonts and
// of the form they are made in, the same in every process of the build.
func GlyphsVersion() string { return glyphsVersion() }

// FontStack picks the font of a comma-separated font stack: the first of
// its names that is served (spaces around a name do not count), or ""
// when none is.
func FontStack(stack string) string {
	for name := range strings.SplitSeq(stack, ",") {
		name = strings.TrimSpace(name)
		if _, ok := glyphFonts[name]; ok {
			return name
		}
	}
	return ""
}

// GlyphRange reads a range of a glyphs URL, "0-255" to "65280-65535" (a
// ".pbf" after it is allowed): the first code point of its 256, or false
// for anything else.
func GlyphRange(s string) (int, bool) {
	s = strings.TrimSuffix(s, ".pbf")
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, false
	}
	start, err1 := strconv.Atoi(a)
	end, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || start < 0 || start > 65280 || start%256 != 0 || end != start+255 ||
		a != strconv.Itoa(start) || b != strconv.Itoa(end) {
		return 0, false
	}
	return start, true
}

// Glyph is one glyph of a range: its code point, its SDF bitmap of
// (Width+6)×(Height+6) bytes (none for a glyph with no ink, a space) and
// its metrics in pixels of the 24-pixel em, y up: Left is from the pen to
// the ink's left, Top from the ascender line to the ink's top.
type Glyph struct {
	ID                 rune
	Bitmap             []byte
	Width, Height      int
	Left, Top, Advance int
}

// Glyphs makes the glyphs of the 256 code points from start of the font
// named font (a FontStack answer), in the protobuf of a glyphs range, its
// stack named font. Code points the font lacks are left out.
func Glyphs(font string, start int) ([]byte, error) {
	gs, err := MakeGlyphs(font, start)
	if err != nil {
		return nil, err
	}
	return encodeGlyphs(font, fmt.Sprintf("%d-%d", start, start+255), gs), nil
}

// MakeGlyphs rasterises the glyphs of the 256 code points from start of
// the font named font, and computes their distance fields.
func MakeGlyphs(name string, start int) ([]Glyph, error) {
	fs, err := fonts()
	if err != nil {
		return nil, err
	}
	f := fs[name]
	if f == nil {
		return nil, fmt.Errorf("basemap: no font %q", name)
	}
	// A face of its own: faces keep buffers and are not safe for
	// concurrent use.
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: glyphSize, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil, err
	}
	defer face.Close()
	var buf sfnt.Buffer
	var out []Glyph
	for c := rune(start); c < rune(start+256); c++ {
		if i, err := f.GlyphIndex(&buf, c); err != nil || i == 0 {
			continue
		}
		dr, mask, mp, adv, ok := face.Glyph(fx.Point26_6{}, c)
		if !ok {
			continue
		}
		g := Glyph{ID: c, Advance: adv.Round()}
		if !dr.Empty() {
			g.Width, g.Height = dr.Dx(), dr.Dy()
			g.Left, g.Top = dr.Min.X, -dr.Min.Y-glyphAscent
			g.Bitmap = sdf(coverage(mask, mp, g.Width, g.Height), g.Width+2*glyphBorder, g.Height+2*glyphBorder)
		}
		out = append(out, g)
	}
	return out, nil
}

// coverage is the w×h coverage of a glyph's mask from mp, with the border
// around it, row by row.
func coverage(mask image.Image, mp image.Point, w, h int) []uint8 {
	bw := w + 2*glyphBorder
	a := make([]uint8, bw*(h+2*glyphBorder))
	for y := range h {
		for x := range w {
			_, _, _, al := mask.At(mp.X+x, mp.Y+y).RGBA()
			a[(y+glyphBorder)*bw+x+glyphBorder] = uint8(al >> 8)
		}
	}
	return a
}

// sdfInf stands for no edge in reach.
const sdfInf = 1e20

// sdf is the signed distance field of a w×h coverage: each pixel's
// distance to the outline, where a pixel of partial coverage a lies
// 0.5 - a of a pixel from it (TinySDF's rule).
func sdf(alpha []uint8, w, h int) []uint8 {
	n := w * h
	outer, inner := make([]float64, n), make([]float64, n)
	for i, v := range alpha {
		switch v {
		case 255:
			outer[i], inner[i] = 0, sdfInf
		case 0:
			outer[i], inner[i] = sdfInf, 0
		default:
			d := 0.5 - float64(v)/255
			if d > 0 {
				outer[i] = d * d
			} else {
				inner[i] = d * d
			}
		}
	}
	size := max(w, h)
	f, z, v := make([]float64, size), make([]float64, size+1), make([]int, size)
	edt(outer, w, h, f, z, v)
	edt(inner, w, h, f, z, v)
	out := make([]uint8, n)
	for i := range out {
		d := math.Sqrt(outer[i]) - math.Sqrt(inner[i])
		out[i] = uint8(math.Max(0, math.Min(255, math.Round(255-255*(d/sdfRadius+sdfCutoff)))))
	}
	return out
}

// edt replaces each value of the w×h grid (0 on the shape, sdfInf off it,
// or a squared distance to it) by its squared Euclidean distance to the
// shape: the one-dimensional transform down each column, then along each
// row.
func edt(grid []float64, w, h int, f, z []float64, v []int) {
	for x := range w {
		edt1d(grid, x, w, h, f, z, v)
	}
	for y := range h {
		edt1d(grid, y*w, 1, w, f, z, v)
	}
}

// edt1d is the distance transform of the n values of grid from offset,
// stride apart: the lower envelope of the parabolas rooted at each
// (Felzenszwalb and Huttenlocher, "Distance transforms of sampled
// functions", 2012).
func edt1d(grid []float64, offset, stride, n int, f, z []float64, v []int) {
	v[0] = 0
	z[0], z[1] = -sdfInf, sdfInf
	f[0] = grid[offset]
	k := 0
	for q := 1; q < n; q++ {
		f[q] = grid[offset+q*stride]
		fq := float64(q)
		var s float64
		for {
			r := float64(v[k])
			s = (f[q] - f[v[k]] + fq*fq - r*r) / (fq - r) / 2
			if s > z[k] {
				break
			}
			if k--; k < 0 {
				break // q's parabola is below all before it
			}
		}
		k++
		v[k], z[k], z[k+1] = q, s, sdfInf
	}
	k = 0
	for q := range n {
		for z[k+1] < float64(q) {
			k++
		}
		d := float64(q - v[k])
		grid[offset+q*stride] = f[v[k]] + d*d
	}
}

// encodeGlyphs writes the glyphs message of one stack: field 1 of the
// message, a fontstack of name (1), range (2) and glyphs (3), each glyph
// id (1), bitmap (2), width (3), height (4), left (5, sint32), top (6,
// sint32) and advance (7).
func encodeGlyphs(name, rng string, gs []Glyph) []byte {
	var stack []byte
	stack = appendBytes(stack, 1, []byte(name))
	stack = appendBytes(stack, 2, []byte(rng))
	var g []byte
	for _, gl := range gs {
		g = g[:0]
		g = appendVarint(g, 1, uint64(gl.ID))
		if len(gl.Bitmap) > 0 {
			g = appendBytes(g, 2, gl.Bitmap)
		}
		g = appendVarint(g, 3, uint64(gl.Width))
		g = appendVarint(g, 4, uint64(gl.Height))
		g = appendVarint(g, 5, zigzag(gl.Left))
		g = appendVarint(g, 6, zigzag(gl.Top))
		g = appendVarint(g, 7, uint64(max(gl.Advance, 0)))
		stack = appendBytes(stack, 3, g)
	}
	return appendBytes(nil, 1, stack)
}

func zigzag(n int) uint64 { return uint64(uint32(int32(n)<<1) ^ uint32(int32(n)>>31)) }

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendVarint(b []byte, field int, v uint64) []byte {
	return appendUvarint(appendUvarint(b, uint64(field)<<3), v)
}

func appendBytes(b []byte, field int, p []byte) []byte {
	b = appendUvarint(b, uint64(field)<<3|2)
	return append(appendUvarint(b, uint64(len(p))), p...)
}
