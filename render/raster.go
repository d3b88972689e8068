package render

import (
	"image"
	"image/color"
	"math"

	"golang.org/x/image/vector"
)

// The rasterizer (x/image/vector) sums the signed areas its paths cover
// and takes the magnitude, at most 1: a nonzero rule in which overlapping
// paths of one orientation count once and a path of the other
// orientation cancels them (holes). Each feature is one rasterizer pass
// over its own box of pixels, composited once: its pieces (a line's
// segments and joins, a multipolygon's parts) never darken each other.

// bounds is the pixel rectangle of the points of paths grown by pad,
// within the image.
func (d *drawer) bounds(g group, pad float32) image.Rectangle {
	x0, y0 := float32(math.Inf(1)), float32(math.Inf(1))
	x1, y1 := float32(math.Inf(-1)), float32(math.Inf(-1))
	for _, p := range d.paths[g.p0:g.p1] {
		xy := d.pts[p.off : p.off+2*p.n]
		for i := 0; i+1 < len(xy); i += 2 {
			x0, y0, x1, y1 = min(x0, xy[i]), min(y0, xy[i+1]), max(x1, xy[i]), max(y1, xy[i+1])
		}
	}
	if x0 > x1 {
		return image.Rectangle{}
	}
	r := image.Rect(int(math.Floor(float64(x0-pad))), int(math.Floor(float64(y0-pad))),
		int(math.Ceil(float64(x1+pad))), int(math.Ceil(float64(y1+pad))))
	return r.Intersect(d.img.Bounds())
}

// fillGroup fills a feature's rings.
func (d *drawer) fillGroup(g group, c color.NRGBA64) error {
	if c.A == 0 {
		return nil
	}
	r := d.bounds(g, 1)
	if r.Empty() {
		return nil
	}
	z := &d.z
	z.Reset(r.Dx(), r.Dy())
	ox, oy := float32(r.Min.X), float32(r.Min.Y)
	for _, p := range d.paths[g.p0:g.p1] {
		xy := d.pts[p.off : p.off+2*p.n]
		if err := d.step(len(xy) / 2); err != nil {
			return err
		}
		z.MoveTo(xy[0]-ox, xy[1]-oy)
		for i := 2; i < len(xy); i += 2 {
			z.LineTo(xy[i]-ox, xy[i+1]-oy)
		}
		z.ClosePath()
	}
	z.Draw(d.img, r, image.NewUniform(c), image.Point{})
	return nil
}

// strokeGroup strokes a feature's paths hw device pixels either side,
// dashed when dash is set.
func (d *drawer) strokeGroup(g group, hw float32, dash [2]float32, c color.NRGBA64) error {
	if c.A == 0 || hw <= 0 {
		return nil
	}
	r := d.bounds(g, 2*hw+1)
	if r.Empty() {
		return nil
	}
	z := &d.z
	z.Reset(r.Dx(), r.Dy())
	s := stroker{z: z, ox: float32(r.Min.X), oy: float32(r.Min.Y), hw: hw}
	for _, p := range d.paths[g.p0:g.p1] {
		if p.n < 2 {
			continue
		}
		xy := d.pts[p.off : p.off+2*p.n]
		if err := d.step(len(xy) / 2); err != nil {
			return err
		}
		if dash[0] > 0 && dash[1] > 0 {
			if err := d.dashed(&s, xy, p.closed, p.dist, dash); err != nil {
				return err
			}
			continue
		}
		s.polyline(xy, p.closed)
	}
	z.Draw(d.img, r, image.NewUniform(c), image.Point{})
	return nil
}

// dashed strokes the "on" runs of a path whose start is dist along its
// line.
func (d *drawer) dashed(s *stroker, xy []float32, closed bool, dist float32, dash [2]float32) error {
	period := dash[0] + dash[1]
	phase := float32(math.Mod(float64(dist), float64(period))) // distance into the pattern
	run := d.dashes[:0]
	on := phase < dash[0]
	left := dash[0] - phase // to the pattern's next change
	if !on {
		left = period - phase
	}
	if on {
		run = append(run, xy[0], xy[1])
	}
	n := len(xy) / 2
	segs := n - 1
	if closed {
		segs = n
	}
	for i := range segs {
		if err := d.step(1); err != nil {
			return err
		}
		ax, ay := xy[2*i], xy[2*i+1]
		j := (i + 1) % n
		bx, by := xy[2*j], xy[2*j+1]
		l := float32(math.Hypot(float64(bx-ax), float64(by-ay)))
		at := float32(0)
		for l-at > left {
			at += left
			t := at / l
			x, y := ax+(bx-ax)*t, ay+(by-ay)*t
			if on {
				run = append(run, x, y)
				s.polyline(run, false)
				run = run[:0]
				left = dash[1]
			} else {
				run = append(run, x, y)
				left = dash[0]
			}
			on = !on
			if err := d.step(1); err != nil {
				return err
			}
		}
		left -= l - at
		if on {
			run = append(run, bx, by)
		}
	}
	if on && len(run) >= 4 {
		s.polyline(run, false)
	}
	d.dashes = run[:0]
	return nil
}

// stroker adds the outline of lines to a rasterizer: a rectangle per
// segment and a miter join (a bevel past MapLibre's miter limit, 2) at
// each vertex, with butt caps (MapLibre's defaults), all one orientation.
type stroker struct {
	z      *vector.Rasterizer
	ox, oy float32
	hw     float32
}

// poly adds a convex polygon of 3 or 4 points, turned to positive
// orientation.
func (s *stroker) poly(pts ...float32) {
	n := len(pts) / 2
	var a float32
	for i, j := 0, n-1; i < n; j, i = i, i+1 {
		a += pts[2*j]*pts[2*i+1] - pts[2*i]*pts[2*j+1]
	}
	if a == 0 {
		return
	}
	if a > 0 {
		s.z.MoveTo(pts[0]-s.ox, pts[1]-s.oy)
		for i := 1; i < n; i++ {
			s.z.LineTo(pts[2*i]-s.ox, pts[2*i+1]-s.oy)
		}
	} else {
		s.z.MoveTo(pts[2*n-2]-s.ox, pts[2*n-1]-s.oy)
		for i := n - 2; i >= 0; i-- {
			s.z.LineTo(pts[2*i]-s.ox, pts[2*i+1]-s.oy)
		}
	}
	s.z.ClosePath()
}

// polyline strokes flat x,y points, closed or open.
func (s *stroker) polyline(xy []float32, closed bool) {
	n := len(xy) / 2
	if n < 2 {
		return
	}
	// The segments, skipping those of no length.
	hw := s.hw
	var first, prev [2]float32 // unit directions
	havePrev := false
	segs := n - 1
	if closed {
		segs = n
	}
	for i := range segs {
		ax, ay := xy[2*i], xy[2*i+1]
		j := (i + 1) % n
		bx, by := xy[2*j], xy[2*j+1]
		dx, dy := bx-ax, by-ay
		l := float32(math.Hypot(float64(dx), float64(dy)))
		if l == 0 {
			continue
		}
		dx, dy = dx/l, dy/l
		nx, ny := -dy*hw, dx*hw
		s.poly(ax+nx, ay+ny, bx+nx, by+ny, bx-nx, by-ny, ax-nx, ay-ny)
		if havePrev {
			s.join(ax, ay, prev, [2]float32{dx, dy})
		} else {
			first = [2]float32{dx, dy}
		}
		prev, havePrev = [2]float32{dx, dy}, true
	}
	if closed && havePrev {
		s.join(xy[0], xy[1], prev, first)
	}
}

// join fills the outer side of the turn at (x,y) from direction a to b.
func (s *stroker) join(x, y float32, a, b [2]float32) {
	cross := a[0]*b[1] - a[1]*b[0]
	if cross == 0 {
		return
	}
	side := float32(1)
	if cross > 0 {
		side = -1
	}
	hw := s.hw * side
	n1x, n1y := -a[1]*hw, a[0]*hw
	n2x, n2y := -b[1]*hw, b[0]*hw
	mx, my := n1x+n2x, n1y+n2y
	ml := float32(math.Hypot(float64(mx), float64(my)))
	if ml == 0 {
		return
	}
	// cos of half the turn: the miter's length is hw over it.
	cosHalf := ml / (2 * s.hw)
	if cosHalf > 0.5 { // miter length at most 2 half widths
		k := s.hw / cosHalf / ml
		s.poly(x, y, x+n1x, y+n1y, x+mx*k, y+my*k, x+n2x, y+n2y)
		return
	}
	s.poly(x, y, x+n1x, y+n1y, x+n2x, y+n2y)
}
