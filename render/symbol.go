package render

import (
	"image"
	"image/color"
	"image/draw"
	"math"

	"golang.org/x/image/vector"
)

// The palette's symbols are drawn as the web application draws them
// (layers.js's drawSymbol): on a canvas of 48 units, shown at 24 CSS
// pixels (pixelRatio 2) times the icon's size, with a white outline of 3
// units, and a shadow (rgba(0,0,0,.45), blur 4, offset 2, 2) when the
// layer asks for one. Each symbol in a colour, size and opacity is drawn
// once per request and copied to each point.

// iconKey names a drawn symbol.
type iconKey struct {
	symbol  string
	color   int
	size    int32 // icon-size × scale in eighths
	opacity uint16
	shadow  bool
}

// icon is a drawn symbol, its centre at pixel (m, m).
type icon struct {
	img  *image.RGBA
	m    int
	rows []uint64 // the pixels not transparent, a word a row (rowMasks)
}

// quantize is a size in eighths.
func quantize(v float64) int32 { return int32(math.Round(v * 8)) }

// draw composites the icon (premultiplied, over) with its centre at pixel
// x, y of dst, skipping its transparent pixels and copying its opaque
// ones.
func (ic *icon) draw(dst *image.RGBA, x, y int) {
	r := image.Rect(x-ic.m, y-ic.m, x+ic.m+1, y+ic.m+1)
	c := r.Intersect(dst.Bounds())
	if c.Empty() {
		return
	}
	w := 4 * c.Dx()
	for row := c.Min.Y; row < c.Max.Y; row++ {
		si := ic.img.PixOffset(c.Min.X-r.Min.X, row-r.Min.Y)
		di := dst.PixOffset(c.Min.X, row)
		over(dst.Pix[di:di+w:di+w], ic.img.Pix[si:si+w:si+w])
	}
}

// over composites the premultiplied pixels src over d (as many), skipping
// src's transparent pixels and copying its opaque ones.
func over(d, src []uint8) {
	d = d[:len(src):len(src)]
	for i := 0; i+3 < len(src); i += 4 {
		switch sa := uint32(src[i+3]); sa {
		case 0:
		case 0xff:
			copy(d[i:i+4], src[i:i+4])
		default:
			a := 0xff - sa
			d[i] = src[i] + div255(uint32(d[i])*a)
			d[i+1] = src[i+1] + div255(uint32(d[i+1])*a)
			d[i+2] = src[i+2] + div255(uint32(d[i+2])*a)
			d[i+3] = uint8(sa) + div255(uint32(d[i+3])*a)
		}
	}
}

// div255 is v/255 rounded, for v up to 255×255.
func div255(v uint32) uint8 { return uint8((v + 128 + (v+128)>>8) >> 8) }

// iconCache keeps the symbols of a request.
type iconCache struct {
	m    map[iconKey]*icon
	last *icon // the symbol asked for last, and its key
	key  iconKey
	z    vector.Rasterizer
	mask *image.Alpha
}

func (c *iconCache) get(k iconKey) *icon {
	if c.last != nil && k == c.key {
		return c.last
	}
	if ic, ok := c.m[k]; ok {
		c.last, c.key = ic, k
		return ic
	}
	if c.m == nil || len(c.m) >= 4096 {
		c.m = map[iconKey]*icon{}
	}
	ic := c.make(k)
	c.m[k] = ic
	c.last, c.key = ic, k
	return ic
}

// canvas draws a symbol's shapes: units of drawSymbol's 48-unit canvas
// into device pixels.
type canvas struct {
	c   *iconCache
	img *image.RGBA
	k   float32 // pixels per unit
	o   float32 // the pixel of unit 24
}

func (v *canvas) px(u float32) float32 { return (u-24)*v.k + v.o }

// fill fills paths (units, flat x,y each, closed) in colour col.
func (v *canvas) fill(col color.Color, paths ...[]float32) {
	z := &v.c.z
	b := v.img.Bounds()
	z.Reset(b.Dx(), b.Dy())
	for _, p := range paths {
		z.MoveTo(v.px(p[0]), v.px(p[1]))
		for i := 2; i < len(p); i += 2 {
			z.LineTo(v.px(p[i]), v.px(p[i+1]))
		}
		z.ClosePath()
	}
	z.Draw(v.img, b, image.NewUniform(col), image.Point{})
}

// stroke strokes a path (units) width units wide in colour col.
func (v *canvas) stroke(col color.Color, width float32, closed bool, paths ...[]float32) {
	z := &v.c.z
	b := v.img.Bounds()
	z.Reset(b.Dx(), b.Dy())
	var s stroker
	s.reset(width * v.k / 2)
	for _, p := range paths {
		q := make([]float32, len(p))
		for i := range p {
			q[i] = v.px(p[i])
		}
		s.polyline(q, closed)
	}
	s.emit(z, 0, 0, nil)
	z.Draw(v.img, b, image.NewUniform(col), image.Point{})
}

// arc is points of the circle around cx, cy of radius r from angle a0 to
// a1 (radians, clockwise on the screen as the canvas's arc).
func (v *canvas) arc(dst []float32, cx, cy, r, a0, a1 float32) []float32 {
	n := int(math.Ceil(float64(r*v.k*(a1-a0)) / 1.5))
	n = max(8, min(n, 256))
	for i := 0; i <= n; i++ {
		a := float64(a0 + (a1-a0)*float32(i)/float32(n))
		dst = append(dst, cx+r*float32(math.Cos(a)), cy+r*float32(math.Sin(a)))
	}
	return dst
}

func (v *canvas) circle(r float32) []float32 {
	p := v.arc(nil, 24, 24, r, 0, 2*math.Pi)
	return p[:len(p)-2]
}

func square(h float32) []float32 {
	return []float32{24 - h, 24 - h, 24 + h, 24 - h, 24 + h, 24 + h, 24 - h, 24 + h}
}

// quad is points of the quadratic Bézier from a through b to c.
func quad(dst []float32, ax, ay, bx, by, cx, cy float32) []float32 {
	for i := 1; i <= 16; i++ {
		t := float32(i) / 16
		u := 1 - t
		dst = append(dst, u*u*ax+2*u*t*bx+t*t*cx, u*u*ay+2*u*t*by+t*t*cy)
	}
	return dst
}

func (c *iconCache) make(k iconKey) *icon {
	px := float32(k.size) / 8 * 0.5 // device pixels per unit (48 units: 24 CSS pixels)
	m := int(math.Ceil(float64(24 * px)))
	ic := &icon{img: image.NewRGBA(image.Rect(0, 0, 2*m+1, 2*m+1)), m: m}
	v := &canvas{c: c, img: ic.img, k: px, o: float32(m) + 0.5}
	col := color.NRGBA{R: uint8(k.color >> 16), G: uint8(k.color >> 8), B: uint8(k.color), A: 0xff}
	white := color.NRGBA{0xff, 0xff, 0xff, 0xff}
	dark := color.NRGBA{0x22, 0x22, 0x22, 0xff}
	switch k.symbol {
	case "outlineCircle":
		p := v.circle(16)
		v.fill(col, p)
		v.stroke(dark, 3, true, p)
	case "hollowCircle":
		v.stroke(col, 4, true, v.circle(16))
	case "ringIcon":
		v.stroke(col, 8, true, v.circle(15))
	case "square", "propSquare", "squareIcon":
		v.fill(col, square(16))
		v.stroke(white, 3, true, square(16))
	case "outlineSquare":
		v.fill(col, square(16))
		v.stroke(dark, 3, true, square(16))
	case "hollowSquare":
		v.stroke(col, 4, true, square(16))
	case "balloonIcon", "pushpinIcon":
		p := v.arc(nil, 24, 17, 12, math.Pi*0.8, math.Pi*2.2)
		p = append(p, 24, 45)
		v.fill(col, p)
		v.stroke(white, 3, true, p)
		if k.symbol == "pushpinIcon" {
			hole := v.arc(nil, 24, 17, 4, 0, 2*math.Pi)
			v.fill(white, hole[:len(hole)-2])
		}
	case "featherIcon":
		p := []float32{10, 42}
		p = quad(p, 10, 42, 12, 8, 40, 6)
		p = quad(p, 40, 6, 36, 34, 10, 42)
		p = p[:len(p)-2]
		v.fill(col, p)
		v.stroke(white, 3, true, p)
	case "flagIcon":
		v.fill(col, []float32{10, 4, 14, 4, 14, 44, 10, 44})
		v.fill(col, []float32{14, 6, 40, 14, 14, 24})
	case "xPointIcon":
		v.stroke(col, 8, false, []float32{10, 10, 38, 38}, []float32{38, 10, 10, 38})
	default: // circle, propCircle, circleIcon
		p := v.circle(16)
		v.fill(col, p)
		v.stroke(white, 3, true, p)
	}
	if k.shadow {
		ic.img = c.shadowed(ic.img, px)
	}
	// The canvas is 48 units square: nothing outside it shows.
	lo, hi := int(math.Floor(float64(v.px(0)))), int(math.Ceil(float64(v.px(48))))
	for y := 0; y < ic.img.Rect.Dy(); y++ {
		for x := 0; x < ic.img.Rect.Dx(); x++ {
			if x < lo || x >= hi || y < lo || y >= hi {
				i := ic.img.PixOffset(x, y)
				clear(ic.img.Pix[i : i+4])
			}
		}
	}
	if a := uint32(k.opacity); a < 0xffff {
		for i, p := range ic.img.Pix {
			ic.img.Pix[i] = uint8((uint32(p)*a + 0x7fff) / 0xffff)
		}
	}
	ic.rows = rowMasks(ic.img)
	return ic
}

// shadowed is img over its shadow: its alpha, blurred (three box blurs, a
// Gaussian of σ 2 units: the canvas's shadowBlur 4), offset 2 units right
// and down, black at 0.45.
func (c *iconCache) shadowed(img *image.RGBA, px float32) *image.RGBA {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	a := make([]float32, w*h)
	off := int(math.Round(float64(2 * px)))
	for y := range h {
		for x := range w {
			if sx, sy := x-off, y-off; sx >= 0 && sy >= 0 {
				a[y*w+x] = float32(img.Pix[img.PixOffset(sx, sy)+3]) / 255
			}
		}
	}
	sigma := 2 * float64(px)
	r := int(math.Round((math.Sqrt(4*sigma*sigma+1) - 1) / 2)) // three boxes of 2r+1: variance σ²
	tmp := make([]float32, w*h)
	for range 3 {
		boxBlur(tmp, a, h, w, r, w, 1) // rows
		boxBlur(a, tmp, w, h, r, 1, w) // columns
	}
	out := image.NewRGBA(b)
	for i, v := range a {
		out.Pix[4*i+3] = uint8(math.Round(float64(min(1, v) * 0.45 * 255)))
	}
	draw.Draw(out, b, img, b.Min, draw.Over)
	return out
}

// boxBlur blurs src into dst along one axis: lines of length values,
// the values step apart and the lines stride apart (rows: stride w, step
// 1; columns: stride 1, step w).
func boxBlur(dst, src []float32, lines, length, r, stride, step int) {
	if r <= 0 {
		copy(dst, src)
		return
	}
	norm := 1 / float32(2*r+1)
	for l := range lines {
		base := l * stride
		for i := range length {
			var s float32
			for j := i - r; j <= i+r; j++ {
				if j >= 0 && j < length {
					s += src[base+j*step]
				}
			}
			dst[base+i*step] = s * norm
		}
	}
}
