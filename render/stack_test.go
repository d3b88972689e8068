package render

import (
	"image"
	"image/color"
	"image/draw"
	"math/rand/v2"
	"testing"
)

// TestStackSameAsInOrder: symbols drawn front to back through a stack
// (hidden ones skipped) give the picture of drawing them in order, to
// the rounding of 8 bits, over an opaque background and over a
// transparent one, with opaque, translucent and shadowed symbols partly
// outside the image; and the stack did skip symbols.
func TestStackSameAsInOrder(t *testing.T) {
	var c iconCache
	var icons []*icon
	for _, k := range []iconKey{
		{symbol: "circle", color: 0xd7191c, size: quantize(1), opacity: 0xffff},
		{symbol: "square", color: 0x2b83ba, size: quantize(1.5), opacity: 0xffff},
		{symbol: "outlineCircle", color: 0x1a9641, size: quantize(0.8), opacity: 0x9999},
		{symbol: "balloonIcon", color: 0xfdae61, size: quantize(1), opacity: 0xffff, shadow: true},
		{symbol: "xPointIcon", color: 0x5e3c99, size: quantize(2), opacity: 0xffff},
	} {
		ic := c.make(k)
		if k.symbol == "circle" && ic.rows == nil {
			t.Fatalf("no row masks for a symbol %d pixels wide", ic.img.Rect.Dx())
		}
		icons = append(icons, ic)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b := image.Rect(0, 0, 96, 80)
	type pt struct {
		ic   *icon
		x, y int
	}
	var pts []pt
	for range 3000 {
		ic := icons[0] // the default symbol, most of the time
		if rng.IntN(3) == 0 {
			ic = icons[rng.IntN(len(icons))]
		}
		pts = append(pts, pt{ic, rng.IntN(b.Dx()+20) - 10, rng.IntN(b.Dy()+20) - 10})
	}
	for _, bg := range []color.Color{color.NRGBA{0xf2, 0xef, 0xe9, 0xff}, color.Transparent} {
		want, got := image.NewRGBA(b), image.NewRGBA(b)
		draw.Draw(want, b, image.NewUniform(bg), image.Point{}, draw.Src)
		draw.Draw(got, b, image.NewUniform(bg), image.Point{}, draw.Src)
		for _, p := range pts {
			p.ic.draw(want, p.x, p.y)
		}
		var s stack
		s.reset(b)
		drawn := 0
		for i := len(pts) - 1; i >= 0; i-- {
			p := pts[i]
			if s.hidden(p.ic, p.x, p.y) {
				continue
			}
			drawn++
			s.under(p.ic, p.x, p.y)
		}
		s.over(got)
		if drawn > len(pts)/2 {
			t.Errorf("background %v: %d of %d symbols drawn, the others hidden", bg, drawn, len(pts))
		}
		worst := 0
		for i := range want.Pix {
			worst = max(worst, abs(int(want.Pix[i])-int(got.Pix[i])))
		}
		if worst > 3 {
			t.Errorf("background %v: a channel differs by %d from the symbols drawn in order", bg, worst)
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
