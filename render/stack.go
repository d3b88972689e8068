// stack.go: a layer of many points drawn front to back. Where thousands of
// symbols pile on one another (a zoom 0 tile of a million points), most
// are hidden by those drawn after them; drawn from the last to the first
// with the "under" operator into a buffer of their own, a symbol whose
// every visible pixel falls on pixels already opaque changes nothing, and
// is skipped after a few word tests of a bitmap of those pixels. The
// buffer then goes over the image: the same picture as drawing them in
// order (source-over is associative), to the rounding of 8 bits.
package render

import (
	"image"
)

// stackMin is the number of symbols, per pixel of the image, from which a
// layer is drawn front to back: below it the buffer and its compositing
// cost more than the symbols hidden save.
const stackMin = 1.0 / 16

// stack is the buffer of a layer drawn front to back and the bitmap of
// its opaque pixels.
type stack struct {
	buf    *image.RGBA
	opaque []uint64 // a bit per pixel, rows of stride words
	stride int
}

// reset makes s an empty stack of bounds b.
func (s *stack) reset(b image.Rectangle) {
	if s.buf == nil || s.buf.Rect != b {
		s.buf = image.NewRGBA(b)
	} else {
		clear(s.buf.Pix)
	}
	s.stride = (b.Dx()+63)/64 + 1 // a word more: reads past a row's end stay in it
	if n := s.stride * b.Dy(); cap(s.opaque) >= n {
		s.opaque = s.opaque[:n]
		clear(s.opaque)
	} else {
		s.opaque = make([]uint64, n)
	}
}

// bitsAt is 64 bits of the opaque bitmap from pixel x of row y (image
// coordinates from the buffer's origin), pixel x in the lowest.
func (s *stack) bitsAt(x, y int) uint64 {
	i := y*s.stride + x>>6
	off := uint(x & 63)
	v := s.opaque[i] >> off
	if off != 0 {
		v |= s.opaque[i+1] << (64 - off)
	}
	return v
}

// hidden tells whether the symbol ic centred at x, y would fall on opaque
// pixels alone (or outside the buffer).
func (s *stack) hidden(ic *icon, x, y int) bool {
	if ic.rows == nil {
		return false
	}
	b := s.buf.Rect
	x0, y0 := x-ic.m-b.Min.X, y-ic.m-b.Min.Y
	w, h := b.Dx(), b.Dy()
	if x0 >= w || x0+2*ic.m < 0 {
		return true
	}
	for j, want := range ic.rows {
		if y := y0 + j; y >= 0 && y < h {
			at := x0
			if at < 0 { // the pixels left of the buffer
				want >>= uint(-at)
				at = 0
			}
			if n := w - at; n < 64 { // and those right of it
				want &= 1<<uint(n) - 1
			}
			if s.bitsAt(at, y)&want != want {
				return false
			}
		}
	}
	return true
}

// under draws ic centred at pixel x, y beneath what the buffer holds.
func (s *stack) under(ic *icon, x, y int) {
	r := image.Rect(x-ic.m, y-ic.m, x+ic.m+1, y+ic.m+1)
	dst := s.buf
	c := r.Intersect(dst.Bounds())
	if c.Empty() || s.hidden(ic, x, y) {
		return
	}
	w := 4 * c.Dx()
	for row := c.Min.Y; row < c.Max.Y; row++ {
		si := ic.img.PixOffset(c.Min.X-r.Min.X, row-r.Min.Y)
		di := dst.PixOffset(c.Min.X, row)
		src, d := ic.img.Pix[si:si+w:si+w], dst.Pix[di:di+w:di+w]
		bitRow := (row - dst.Rect.Min.Y) * s.stride
		for i := 0; i+3 < len(src); i += 4 {
			sa, da := uint32(src[i+3]), uint32(d[i+3])
			if sa == 0 || da == 0xff {
				continue
			}
			if da == 0 {
				copy(d[i:i+4], src[i:i+4])
			} else {
				a := 0xff - da
				d[i] += div255(uint32(src[i]) * a)
				d[i+1] += div255(uint32(src[i+1]) * a)
				d[i+2] += div255(uint32(src[i+2]) * a)
				d[i+3] += div255(sa * a)
			}
			if d[i+3] == 0xff {
				px := c.Min.X - dst.Rect.Min.X + i/4
				s.opaque[bitRow+px>>6] |= 1 << uint(px&63)
			}
		}
	}
}

// over composites the buffer over dst (of the same bounds).
func (s *stack) over(dst *image.RGBA) { over(dst.Pix, s.buf.Pix) }

// rowMasks are the bits of the pixels of img that are not transparent, a
// word per row; nil when a row is wider than a word.
func rowMasks(img *image.RGBA) []uint64 {
	b := img.Bounds()
	if b.Dx() > 64-1 { // bitsAt gives 64 bits from any pixel
		return nil
	}
	rows := make([]uint64, b.Dy())
	for y := range rows {
		for x := 0; x < b.Dx(); x++ {
			if img.Pix[img.PixOffset(b.Min.X+x, b.Min.Y+y)+3] != 0 {
				rows[y] |= 1 << uint(x)
			}
		}
	}
	return rows
}
