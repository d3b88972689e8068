package mvt

// This file clips a polygon to the buffered tile square so that the
// pieces are valid polygons. Sutherland–Hodgman, the classic per-ring
// clipper, joins the separate pieces of a concave polygon with
// zero-width edges along the square's side, which GEOS (and so GDAL,
// QGIS, PostGIS) calls a self-intersection. Here each ring is cut into
// the runs that lie inside the square ("chains", each entering and
// leaving through the square's edge); the chains of all rings of the
// polygon are then linked by walking the square's edge from each exit to
// the next entry, in the exterior's winding (Weiler–Atherton for a
// rectangular window). Each loop so formed is one exterior; holes that
// do not touch the edge go to the exterior that contains them.

import (
	"mapcommons/spatial"
	"math"
	"sort"
)

// chain is a run of a ring inside the square, from an entry point on the
// edge to an exit point on the edge.
type chain struct {
	pts       []float64
	sIn, sOut float64 // positions of the entry and exit along the edge
	used      bool
}

// clipper holds the scratch of clipPolygon.
type clipper struct {
	chains []chain
	order  []int
}

// piece is one output polygon: an exterior and its holes, as rings
// without their closing point.
type piece struct {
	rings [][]float64
}

// edgePos returns the position of p (on the square's edge) along the edge,
// walked in the exterior winding: top left to right, right side down,
// bottom right to left, left side up; 0 ≤ s < 4·side.
func edgePos(x, y float64, b box) float64 {
	L := b.max - b.min
	dTop, dRight, dBottom, dLeft := math.Abs(y-b.min), math.Abs(x-b.max), math.Abs(y-b.max), math.Abs(x-b.min)
	m := math.Min(math.Min(dTop, dRight), math.Min(dBottom, dLeft))
	switch m {
	case dTop:
		if x <= b.min { // the top-left corner itself
			return 0
		}
		return x - b.min
	case dRight:
		return L + (y - b.min)
	case dBottom:
		return 2*L + (b.max - x)
	}
	return 3*L + (b.max - y)
}

// corner returns corner k (0 top left, 1 top right, 2 bottom right,
// 3 bottom left) of the square.
func corner(k int, b box) (float64, float64) {
	switch k {
	case 0:
		return b.min, b.min
	case 1:
		return b.max, b.min
	case 2:
		return b.max, b.max
	}
	return b.min, b.max
}

// pointInRing reports whether (x,y) is inside the ring (even–odd rule).
func pointInRing(x, y float64, r []float64) bool {
	in := false
	n := len(r) / 2
	for i, j := 0, n-1; i < n; j, i = i, i+1 {
		xi, yi, xj, yj := r[2*i], r[2*i+1], r[2*j], r[2*j+1]
		if (yi > y) != (yj > y) && x < (xj-xi)*(y-yi)/(yj-yi)+xi {
			in = !in
		}
	}
	return in
}

// clipPolygon clips a polygon (rings without closing points, the
// exterior wound positive and the holes negative) to b and returns the
// pieces. Rings are not modified; pieces may alias them.
func (c *clipper) clipPolygon(rings [][]float64, b box) []piece {
	c.chains = c.chains[:0]
	var inside [][]float64 // holes within the square
	exterior := rings[0]
	extInside, extAround := false, false
	cx, cy := (b.min+b.max)/2, (b.min+b.max)/2
	for i, r := range rings {
		x0, y0, x1, y1 := bounds(r)
		if x1 < b.min || y1 < b.min || x0 > b.max || y0 > b.max {
			if i == 0 {
				return nil
			}
			continue
		}
		start := -1
		for k := 0; k+1 < len(r); k += 2 {
			if !b.contains(r[k], r[k+1]) {
				start = k / 2
				break
			}
		}
		if start < 0 { // wholly inside
			if i == 0 {
				extInside = true
			} else {
				inside = append(inside, r)
			}
			continue
		}
		before := len(c.chains)
		c.ringChains(r, start, b)
		if len(c.chains) == before && pointInRing(cx, cy, r) {
			// The ring goes round the square.
			if i == 0 {
				extAround = true
			} else {
				return nil // a hole covering the whole tile
			}
		}
	}
	if extInside {
		return []piece{{rings: append([][]float64{exterior}, inside...)}}
	}
	var loops [][]float64
	if len(c.chains) == 0 {
		if !extAround {
			return nil
		}
		loops = append(loops, []float64{b.min, b.min, b.max, b.min, b.max, b.max, b.min, b.max})
	} else {
		loops = c.link(b)
	}
	out := make([]piece, len(loops))
	for i, l := range loops {
		out[i].rings = [][]float64{l}
	}
	for _, h := range inside {
		for i, l := range loops {
			if pointInRing(h[0], h[1], l) {
				out[i].rings = append(out[i].rings, h)
				break
			}
		}
	}
	return out
}

// ringChains appends the chains of ring r, walked from vertex start
// (outside the square) all the way round.
func (c *clipper) ringChains(r []float64, start int, b box) {
	n := len(r) / 2
	var cur []float64
	flush := func() {
		if len(cur) >= 4 && (cur[0] != cur[len(cur)-2] || cur[1] != cur[len(cur)-1] || len(cur) > 4) {
			c.chains = append(c.chains, chain{pts: cur,
				sIn: edgePos(cur[0], cur[1], b), sOut: edgePos(cur[len(cur)-2], cur[len(cur)-1], b)})
		}
		cur = nil
	}
	for k := 0; k < n; k++ {
		i, j := (start+k)%n, (start+k+1)%n
		x0, y0, x1, y1 := r[2*i], r[2*i+1], r[2*j], r[2*j+1]
		t0, t1, ok := spatial.ClipSegment(x0, y0, x1, y1, b.min, b.min, b.max, b.max)
		if !ok {
			continue
		}
		dx, dy := x1-x0, y1-y0
		if cur == nil {
			cur = append(cur, x0+t0*dx, y0+t0*dy)
		}
		cur = append(cur, x0+t1*dx, y0+t1*dy)
		if t1 < 1 {
			flush()
		}
	}
	flush()
}

// link joins the chains into closed loops along the square's edge.
func (c *clipper) link(b box) [][]float64 {
	P := 4 * (b.max - b.min)
	c.order = c.order[:0]
	for i := range c.chains {
		c.order = append(c.order, i)
	}
	sort.Slice(c.order, func(i, j int) bool { return c.chains[c.order[i]].sIn < c.chains[c.order[j]].sIn })
	var loops [][]float64
	for first := range c.chains {
		if c.chains[first].used {
			continue
		}
		var loop []float64
		cur := first
		for {
			ch := &c.chains[cur]
			ch.used = true
			loop = append(loop, ch.pts...)
			// The next entry along the edge from this exit.
			next, best := -1, math.Inf(1)
			for _, k := range c.order {
				d := c.chains[k].sIn - ch.sOut
				if d < 0 {
					d += P
				}
				if d < best && (!c.chains[k].used || k == first) {
					next, best = k, d
				}
			}
			if next < 0 {
				break
			}
			// Corners passed on the way.
			for step := 1; step <= 4; step++ {
				k := (int(math.Floor(ch.sOut/(b.max-b.min))) + step) % 4
				dc := float64(k)*(b.max-b.min) - ch.sOut
				if dc <= 0 {
					dc += P
				}
				if dc >= best {
					break
				}
				x, y := corner(k, b)
				loop = append(loop, x, y)
			}
			if next == first {
				break
			}
			cur = next
		}
		if len(loop) >= 6 {
			loops = append(loops, loop)
		}
	}
	return loops
}
