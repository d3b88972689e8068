package mvt

// This file keeps the polygon features of a tile valid for GEOS (OGC
// simple features: rings that neither cross nor touch themselves, holes
// inside their shell, parts of a MultiPolygon that do not overlap) once
// rounded to the integer grid. Rounding, and the simplification before
// it, can make a narrow spike touch itself, a ring cross its neighbour or
// a hole leave its shell. A feature's rounded rings are checked first
// (polyRings.valid, a sweep over the segments: nearly every feature
// passes); the few that fail are rebuilt from their rings before rounding
// by snap rounding (Hobby 1999; Guibas and Marimont 1998): every segment
// is routed through the centres of the "hot" pixels it passes, those
// holding a vertex or a crossing, which leaves segments that meet only at
// their ends. The rounded segments make a planar graph; each face gets its
// winding number (exteriors wind +1, holes −1), and the boundary of the
// faces of positive winding, cut into simple rings where it touches
// itself, is the valid polygon nearest to the input on the grid.

import (
	"math"
	"slices"
)

// polyRings gathers the polygon rings of one feature: as rounded for the
// tile, and as they were before rounding.
type polyRings struct {
	q    []int32 // rounded rings, flat x,y pairs, without closing points
	qEnd []int   // end of each rounded ring in q
	f    []float64
	fEnd []int // end of each unrounded (closed) ring in f

	segs   []vseg
	order  []uint64
	active []uint32
	snap   snapper
}

func (r *polyRings) reset() {
	r.q, r.qEnd, r.f, r.fEnd = r.q[:0], r.qEnd[:0], r.f[:0], r.fEnd[:0]
}

// add appends a rounded ring, wound as it will be written.
func (r *polyRings) add(q []int32) {
	r.q = append(r.q, q...)
	r.qEnd = append(r.qEnd, len(r.q))
}

// addFloat appends a ring before rounding (closed), wound as its role
// wants: exteriors positive, holes negative.
func (r *polyRings) addFloat(f []float64) {
	r.f = append(r.f, f...)
	r.fEnd = append(r.fEnd, len(r.f))
}

// rebuildAll, set by tests only, rebuilds every polygon feature, valid
// or not, so that the rebuild meets all the tiles of the test data.
var rebuildAll bool

// write appends the feature's rings to c: the rounded rings when they
// make a valid geometry, the snap-rounded rebuild otherwise.
func (r *polyRings) write(c *commands) {
	if len(r.qEnd) == 0 && len(r.fEnd) == 0 {
		return
	}
	q, ends := r.q, r.qEnd
	if rebuildAll || !r.valid() {
		if sq, se, ok := r.snap.rebuild(r.f, r.fEnd); ok {
			q, ends = sq, se
		} // else the rounded rings, rather than no feature
	}
	start := 0
	for _, e := range ends {
		c.line(q[start:e], true)
		start = e
	}
}

// vseg is one segment of a rounded ring, for the sweep of valid.
type vseg struct {
	x0, y0, x1, y1 int32
	ring, i, n     int32 // ring, index of the segment in it, its length
}

func (s *vseg) minX() int32 { return min(s.x0, s.x1) }
func (s *vseg) maxX() int32 { return max(s.x0, s.x1) }

// valid reports whether the rounded rings are a valid geometry as they
// stand: no two segments meet except consecutive ones of a ring at their
// shared vertex (stricter than OGC, which lets two rings touch at a
// point: such a feature is rebuilt, harmlessly), and with the rings thus
// disjoint, each hole lies directly in its exterior (the last exterior
// before it, as MVT groups them) and each exterior outside every other
// ring or directly in a hole.
func (r *polyRings) valid() bool {
	segs := r.segs[:0]
	start := 0
	for k, e := range r.qEnd {
		q := r.q[start:e]
		n := len(q) / 2
		for i := 0; i < n; i++ {
			j := (i + 1) % n
			segs = append(segs, vseg{q[2*i], q[2*i+1], q[2*j], q[2*j+1], int32(k), int32(i), int32(n)})
		}
		start = e
	}
	r.segs = segs
	// The segments in order of their least x, sorted as plain integers
	// (least x above, index below), which is quicker than sorting them.
	order := r.order[:0]
	for k := range segs {
		order = append(order, uint64(uint32(segs[k].minX())^(1<<31))<<32|uint64(k))
	}
	slices.Sort(order)
	r.order = order
	// Sweep in x: each segment against those still overlapping it in x.
	active := r.active[:0]
	for _, key := range order {
		k := uint32(key)
		s := &segs[k]
		x := s.minX()
		keep := active[:0]
		for _, a := range active {
			if segs[a].maxX() >= x {
				keep = append(keep, a)
			}
		}
		active = keep
		for _, a := range active {
			o := &segs[a]
			if max(o.y0, o.y1) < min(s.y0, s.y1) || min(o.y0, o.y1) > max(s.y0, s.y1) {
				continue
			}
			if !segsMeet(o.x0, o.y0, o.x1, o.y1, s.x0, s.y0, s.x1, s.y1) {
				continue
			}
			if o.ring == s.ring {
				d := o.i - s.i
				if d == 1 || d == -1 || d == s.n-1 || d == 1-s.n {
					// Consecutive: they meet at their shared vertex,
					// and only there unless they are on one line.
					if cross(o.x0, o.y0, o.x1, o.y1, s.x0, s.y0) != 0 || cross(o.x0, o.y0, o.x1, o.y1, s.x1, s.y1) != 0 {
						continue
					}
				}
			}
			r.active = active
			return false
		}
		active = append(active, k)
	}
	r.active = active
	if len(r.qEnd) == 1 {
		return area2[int64](r.q[:r.qEnd[0]]) > 0
	}
	return r.nested()
}

// nested checks, for rings known to be disjoint, that each hole lies
// directly in its exterior and each exterior in no ring or directly in a
// hole: the parent of a ring is the smallest ring around it.
func (r *polyRings) nested() bool {
	n := len(r.qEnd)
	ring := func(k int) []int32 {
		s := 0
		if k > 0 {
			s = r.qEnd[k-1]
		}
		return r.q[s:r.qEnd[k]]
	}
	type info struct {
		x0, y0, x1, y1 int32
		area           int64
	}
	infos := make([]info, n)
	for k := range n {
		q := ring(k)
		in := info{x0: q[0], y0: q[1], x1: q[0], y1: q[1], area: area2[int64](q)}
		for i := 2; i+1 < len(q); i += 2 {
			in.x0, in.x1 = min(in.x0, q[i]), max(in.x1, q[i])
			in.y0, in.y1 = min(in.y0, q[i+1]), max(in.y1, q[i+1])
		}
		infos[k] = in
	}
	idx := newBands(n, func(i int) int64 { return int64(infos[i].y0) }, func(i int) int64 { return int64(infos[i].y1) })
	shell := -1
	for k := range n {
		a := infos[k]
		if a.area > 0 {
			shell = k
		} else if shell < 0 {
			return false // a hole before any exterior
		}
		q := ring(k)
		parent, best := -1, int64(math.MaxInt64)
		for _, j := range idx.at(int64(q[1])) {
			b := infos[j]
			if int(j) == k || b.x0 > a.x0 || b.y0 > a.y0 || b.x1 < a.x1 || b.y1 < a.y1 {
				continue
			}
			// The rings are disjoint: one vertex tells.
			if s := abs64(b.area); s < best && inRingInt(2*int64(q[0]), 2*int64(q[1]), ring(int(j))) {
				parent, best = int(j), s
			}
		}
		if a.area > 0 {
			if parent >= 0 && infos[parent].area > 0 {
				return false // an exterior inside another
			}
		} else if parent != shell {
			return false // a hole outside its exterior, or in another hole
		}
	}
	return true
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// segsMeet reports whether the closed segments a–b and c–d have a point
// in common (exact).
func segsMeet(ax, ay, bx, by, cx, cy, dx, dy int32) bool {
	d1, d2 := sign(cross(cx, cy, dx, dy, ax, ay)), sign(cross(cx, cy, dx, dy, bx, by))
	d3, d4 := sign(cross(ax, ay, bx, by, cx, cy)), sign(cross(ax, ay, bx, by, dx, dy))
	if d1*d2 < 0 && d3*d4 < 0 {
		return true
	}
	return (d1 == 0 && onSeg(cx, cy, dx, dy, ax, ay)) || (d2 == 0 && onSeg(cx, cy, dx, dy, bx, by)) ||
		(d3 == 0 && onSeg(ax, ay, bx, by, cx, cy)) || (d4 == 0 && onSeg(ax, ay, bx, by, dx, dy))
}

func sign(v int64) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// onSeg reports whether r, on the line through p and q, is on the
// segment p–q.
func onSeg(px, py, qx, qy, rx, ry int32) bool {
	return min(px, qx) <= rx && rx <= max(px, qx) && min(py, qy) <= ry && ry <= max(py, qy)
}

// inRingInt reports whether the point (px/2, py/2), given in doubled
// coordinates and not on the ring, is inside ring q (even–odd, exact).
func inRingInt(px, py int64, q []int32) bool {
	in := false
	n := len(q) / 2
	for i, j := 0, n-1; i < n; j, i = i, i+1 {
		xi, yi, xj, yj := 2*int64(q[2*i]), 2*int64(q[2*i+1]), 2*int64(q[2*j]), 2*int64(q[2*j+1])
		if (yi > py) != (yj > py) {
			// Is the point left of the edge's crossing of its row?
			if l, r := (px-xi)*(yj-yi), (xj-xi)*(py-yi); (yj > yi) == (l < r) {
				in = !in
			}
		}
	}
	return in
}

// bands indexes items by their range of y: the y span is cut into
// horizontal bands, each listing the items that reach into it, so that
// the items whose range may hold a given y are found without a scan of
// all of them (which, for each of many rings or components, would be
// quadratic).
type bands struct {
	y0, h int64
	start []int32 // items of band b: ids[start[b]:start[b+1]]
	ids   []int32
}

// newBands indexes n items, item i spanning [lo(i), hi(i)] in y.
func newBands(n int, lo, hi func(i int) int64) *bands {
	ymin, ymax := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range n {
		ymin, ymax = min(ymin, lo(i)), max(ymax, hi(i))
	}
	nb := int64(max(1, min(1024, int(math.Sqrt(float64(n))))))
	h := max(1, (ymax-ymin)/nb+1)
	b := &bands{y0: ymin, h: h, start: make([]int32, nb+2)}
	for i := range n {
		for k := (lo(i) - ymin) / h; k <= (hi(i)-ymin)/h; k++ {
			b.start[k+1]++
		}
	}
	for k := 1; k < len(b.start); k++ {
		b.start[k] += b.start[k-1]
	}
	b.ids = make([]int32, b.start[len(b.start)-1])
	fill := slices.Clone(b.start)
	for i := range n {
		for k := (lo(i) - ymin) / h; k <= (hi(i)-ymin)/h; k++ {
			b.ids[fill[k]] = int32(i)
			fill[k]++
		}
	}
	return b
}

// at returns the items whose band holds y (a superset of those whose
// range holds it).
func (b *bands) at(y int64) []int32 {
	k := (y - b.y0) / b.h
	if y < b.y0 || k+1 >= int64(len(b.start)) {
		return nil
	}
	return b.ids[b.start[k]:b.start[k+1]]
}
