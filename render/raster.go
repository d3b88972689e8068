package render

import (
	"image"
	"image/color"
	"image/draw"
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

// fillGroup fills a feature's rings. The polygons of a multipolygon
// spread over a large box (islands far apart) are filled in groups whose
// boxes do not meet, each over its own box: no pixel is in two groups,
// so none is composited twice.
func (d *drawer) fillGroup(g group, c color.NRGBA64) error {
	if c.A == 0 {
		return nil
	}
	r := d.bounds(g, 1)
	if r.Empty() {
		return nil
	}
	if r.Dx()*r.Dy() > binArea {
		if parts := d.partGroups(g, r); parts != nil {
			for _, pg := range parts {
				if err := d.fillPaths(pg.paths, pg.r, c); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return d.fillPaths([][2]int32{{g.p0, g.p1}}, r, c)
}

// partGroup is polygons of a multipolygon whose boxes meet: runs of
// paths, and their box.
type partGroup struct {
	paths [][2]int32
	r     image.Rectangle
}

// partGroups groups the polygons of g by their boxes (nil: one group, or
// too many polygons to bother).
func (d *drawer) partGroups(g group, r image.Rectangle) []partGroup {
	var groups []partGroup
	for i := g.p0; i < g.p1; {
		j := i + 1
		for j < g.p1 && !d.paths[j].part {
			j++
		}
		pr := d.bounds(group{p0: i, p1: j}, 1)
		run := [2]int32{i, j}
		i = j
		if pr.Empty() {
			continue
		}
		if len(groups) > 64 {
			return nil
		}
		// Into the group it meets, merging those it joins.
		pg := partGroup{paths: [][2]int32{run}, r: pr}
		for k := 0; k < len(groups); {
			if groups[k].r.Overlaps(pg.r) {
				pg.paths = append(pg.paths, groups[k].paths...)
				pg.r = pg.r.Union(groups[k].r)
				groups = append(groups[:k], groups[k+1:]...)
				k = 0
				continue
			}
			k++
		}
		groups = append(groups, pg)
	}
	if len(groups) < 2 {
		return nil
	}
	return groups
}

// fillPaths fills runs of paths over r.
func (d *drawer) fillPaths(runs [][2]int32, r image.Rectangle, c color.NRGBA64) error {
	z := &d.z
	z.Reset(r.Dx(), r.Dy())
	ox, oy := float32(r.Min.X), float32(r.Min.Y)
	for _, run := range runs {
		for _, p := range d.paths[run[0]:run[1]] {
			xy := d.pts[p.off : p.off+2*p.n]
			if err := d.step(len(xy) / 2); err != nil {
				return err
			}
			n := len(xy) / 2
			z.MoveTo(xy[0]-ox, xy[1]-oy)
			for i := 1; i <= n; i++ {
				j := i % n
				lineTo(z, xy[2*i-2]-ox, xy[2*i-1]-oy, xy[2*j]-ox, xy[2*j+1]-oy)
			}
		}
	}
	d.paint(r, c)
	return nil
}

// lineTo adds the edge from a to b, in pieces of at most maxEdge.
func lineTo(z *vector.Rasterizer, ax, ay, bx, by float32) {
	dx, dy := bx-ax, by-ay
	if k := max(abs32(dx), abs32(dy)) / maxEdge; k > 1 {
		n := float32(math.Ceil(float64(k)))
		for t := float32(1); t < n; t++ {
			z.LineTo(ax+dx*t/n, ay+dy*t/n)
		}
	}
	z.LineTo(bx, by)
}

func abs32(v float32) float32 { return max(v, -v) }

// paint composites colour c into r of the image through the coverage of
// the paths given the rasterizer (sized to r): the coverage is
// accumulated into an 8-bit mask (the rasterizer's own fast path), then
// composited where it is not zero.
func (d *drawer) paint(r image.Rectangle, c color.NRGBA64) {
	w, h := r.Dx(), r.Dy()
	if n := w * h; cap(d.mask.Pix) < n {
		d.mask.Pix = make([]uint8, n)
	} else {
		d.mask.Pix = d.mask.Pix[:n]
	}
	d.mask.Stride, d.mask.Rect = w, image.Rect(0, 0, w, h)
	d.z.DrawOp = draw.Src
	d.z.Draw(&d.mask, d.mask.Rect, image.Opaque, image.Point{})
	// The colour, premultiplied, 8 bits.
	a := uint32(c.A) >> 8
	sr, sg, sb := uint32(c.R)>>8*a, uint32(c.G)>>8*a, uint32(c.B)>>8*a
	sr, sg, sb = uint32(div255(sr)), uint32(div255(sg)), uint32(div255(sb))
	for y := range h {
		m := d.mask.Pix[y*w : y*w+w]
		di := d.img.PixOffset(r.Min.X, r.Min.Y+y)
		px := d.img.Pix[di : di+4*w : di+4*w]
		for x, mv := range m {
			if mv == 0 {
				continue
			}
			mm := uint32(mv)
			ca := uint32(div255(a * mm))
			inv := 0xff - ca
			q := px[4*x : 4*x+4 : 4*x+4]
			q[0] = div255(sr*mm) + div255(uint32(q[0])*inv)
			q[1] = div255(sg*mm) + div255(uint32(q[1])*inv)
			q[2] = div255(sb*mm) + div255(uint32(q[2])*inv)
			q[3] = uint8(ca) + div255(uint32(q[3])*inv)
		}
	}
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
	binned := r.Dx()*r.Dy() > binArea
	s := &d.stroker
	s.reset(hw)
	s.maxSeg = maxEdge
	for _, p := range d.paths[g.p0:g.p1] {
		if p.n < 2 {
			continue
		}
		xy := d.pts[p.off : p.off+2*p.n]
		if err := d.step(len(xy) / 2); err != nil {
			return err
		}
		if dash[0] > 0 && dash[1] > 0 {
			if err := d.dashed(s, xy, p.closed, p.dist, dash); err != nil {
				return err
			}
			continue
		}
		s.polyline(xy, p.closed)
	}
	if !binned {
		d.z.Reset(r.Dx(), r.Dy())
		s.emit(&d.z, float32(r.Min.X), float32(r.Min.Y), nil)
		d.paint(r, c)
		return nil
	}
	return d.drawBinned(r, c)
}

// maxEdge is the longest edge given the rasterizer: its fixed and
// floating point math step along an edge row by row, and the error grows
// with the rows (a third of a pixel over 500 rows).
const maxEdge = 64

// A stroke over more than binArea pixels is drawn in cells of cellSize
// pixels, each a pass of the rasterizer over the pieces that reach into
// it, and only the cells it reaches: a long line across the image costs
// its length, not the image's area. Each pixel is in one cell, so is
// composited once; segments are cut to maxEdge (pieces abutting in one
// pass sum to full coverage, with no seam), so no piece spans many cells.
const cellSize = 32

var binArea = 4 * cellSize * cellSize // a variable for the tests

// drawBinned draws the stroker's pieces within r cell by cell.
func (d *drawer) drawBinned(r image.Rectangle, c color.NRGBA64) error {
	s := &d.stroker
	cols, rows := (r.Dx()+cellSize-1)/cellSize, (r.Dy()+cellSize-1)/cellSize
	// Count, then fill, the pieces of each cell (a CSR layout).
	start := d.cellStart[:0]
	for range cols*rows + 1 {
		start = append(start, 0)
	}
	each := func(i int, fn func(cell int)) {
		b := s.box(i)
		if b[2] < float32(r.Min.X) || b[3] < float32(r.Min.Y) {
			return // left of or above every cell: nothing in them
		}
		c0 := max(0, int(math.Floor(float64(b[0])))-r.Min.X) / cellSize
		r0 := max(0, int(math.Floor(float64(b[1])))-r.Min.Y) / cellSize
		c1 := min(cols-1, (int(math.Ceil(float64(b[2])))-r.Min.X)/cellSize)
		r1 := min(rows-1, (int(math.Ceil(float64(b[3])))-r.Min.Y)/cellSize)
		for y := r0; y <= r1; y++ {
			for x := c0; x <= c1; x++ {
				fn(y*cols + x)
			}
		}
	}
	n := len(s.offs) - 1
	for i := range n {
		each(i, func(cell int) { start[cell+1]++ })
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	list := d.cellList[:0]
	for range start[len(start)-1] {
		list = append(list, 0)
	}
	fill := d.cellFill[:0]
	fill = append(fill, start[:len(start)-1]...)
	for i := range n {
		each(i, func(cell int) { list[fill[cell]] = int32(i); fill[cell]++ })
	}
	d.cellStart, d.cellList, d.cellFill = start, list, fill
	for cell := range cols * rows {
		pieces := list[start[cell]:start[cell+1]]
		if len(pieces) == 0 {
			continue
		}
		if err := d.step(len(pieces)); err != nil {
			return err
		}
		x0, y0 := r.Min.X+(cell%cols)*cellSize, r.Min.Y+(cell/cols)*cellSize
		cr := image.Rect(x0, y0, min(x0+cellSize, r.Max.X), min(y0+cellSize, r.Max.Y))
		d.z.Reset(cr.Dx(), cr.Dy())
		s.emit(&d.z, float32(x0), float32(y0), pieces)
		d.paint(cr, c)
	}
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

// stroker makes the outline of lines: a rectangle per segment and a
// miter join (a bevel past MapLibre's miter limit, 2) at each vertex, with
// butt caps (MapLibre's defaults), all of one orientation. It records them
// as convex pieces, for one pass of the rasterizer or one per cell.
type stroker struct {
	hw     float32
	maxSeg float32   // segments longer are cut (0: not)
	pts    []float32 // the pieces' points, flat x,y
	offs   []int32   // piece i is pts[offs[i]:offs[i+1]]
}

func (s *stroker) reset(hw float32) {
	s.hw, s.maxSeg = hw, 0
	s.pts, s.offs = s.pts[:0], append(s.offs[:0], 0)
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
		s.pts = append(s.pts, pts...)
	} else {
		for i := n - 1; i >= 0; i-- {
			s.pts = append(s.pts, pts[2*i], pts[2*i+1])
		}
	}
	s.offs = append(s.offs, int32(len(s.pts)))
}

// box is the bounds of piece i: x0, y0, x1, y1.
func (s *stroker) box(i int) [4]float32 {
	p := s.pts[s.offs[i]:s.offs[i+1]]
	b := [4]float32{p[0], p[1], p[0], p[1]}
	for j := 2; j+1 < len(p); j += 2 {
		b[0], b[1], b[2], b[3] = min(b[0], p[j]), min(b[1], p[j+1]), max(b[2], p[j]), max(b[3], p[j+1])
	}
	return b
}

// emit adds pieces (nil: all) to z, less ox, oy.
func (s *stroker) emit(z *vector.Rasterizer, ox, oy float32, pieces []int32) {
	one := func(i int) {
		p := s.pts[s.offs[i]:s.offs[i+1]]
		z.MoveTo(p[0]-ox, p[1]-oy)
		for j := 2; j+1 < len(p); j += 2 {
			z.LineTo(p[j]-ox, p[j+1]-oy)
		}
		z.ClosePath()
	}
	if pieces == nil {
		for i := range len(s.offs) - 1 {
			one(i)
		}
		return
	}
	for _, i := range pieces {
		one(int(i))
	}
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
		if s.maxSeg > 0 && l > s.maxSeg {
			k := float32(math.Ceil(float64(l / s.maxSeg)))
			for t := float32(0); t < k; t++ {
				x0, y0 := ax+(bx-ax)*t/k, ay+(by-ay)*t/k
				x1, y1 := ax+(bx-ax)*(t+1)/k, ay+(by-ay)*(t+1)/k
				s.poly(x0+nx, y0+ny, x1+nx, y1+ny, x1-nx, y1-ny, x0-nx, y0-ny)
			}
		} else {
			s.poly(ax+nx, ay+ny, bx+nx, by+ny, bx-nx, by-ny, ax-nx, ay-ny)
		}
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
