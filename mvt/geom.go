package mvt

// This file turns geometries in tile pixel space (floats) into MVT 2.1
// geometry commands: clipping lines to the buffered tile square (polygons
// are clipped in clip.go), Douglas–Peucker simplification, quantization
// to the integer grid, ring winding, and the MoveTo/LineTo/ClosePath
// command stream with zigzag-encoded deltas.

import (
	"math"

	"mapcommons/spatial"
)

// Command ids of the MVT geometry encoding (spec 4.3.3).
const (
	cmdMoveTo    = 1
	cmdLineTo    = 2
	cmdClosePath = 7
)

// box is the buffered tile square in pixel units: [min, max] on both axes.
type box struct{ min, max float64 }

func (b box) contains(x, y float64) bool {
	return x >= b.min && x <= b.max && y >= b.min && y <= b.max
}

// bounds returns the bounding box of flat x,y pairs.
func bounds(pts []float64) (x0, y0, x1, y1 float64) {
	x0, y0, x1, y1 = math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for i := 0; i+1 < len(pts); i += 2 {
		x0, x1 = math.Min(x0, pts[i]), math.Max(x1, pts[i])
		y0, y1 = math.Min(y0, pts[i+1]), math.Max(y1, pts[i+1])
	}
	return
}

// clipLine cuts the polyline pts to b with Liang–Barsky per segment and
// calls emit for each maximal run inside (a line leaving and re-entering
// the square becomes several parts). emit's slice is reused afterwards.
func clipLine(pts []float64, b box, buf []float64, emit func([]float64)) []float64 {
	cur := buf[:0]
	flush := func() {
		if len(cur) >= 4 {
			emit(cur)
		}
		cur = cur[:0]
	}
	for i := 0; i+3 < len(pts); i += 2 {
		x0, y0, x1, y1 := pts[i], pts[i+1], pts[i+2], pts[i+3]
		t0, t1, ok := spatial.ClipSegment(x0, y0, x1, y1, b.min, b.min, b.max, b.max)
		if !ok {
			flush()
			continue
		}
		dx, dy := x1-x0, y1-y0
		if len(cur) == 0 || t0 > 0 {
			flush()
			cur = append(cur, x0+t0*dx, y0+t0*dy)
		}
		cur = append(cur, x0+t1*dx, y0+t1*dy)
		if t1 < 1 {
			flush()
		}
	}
	flush()
	return cur
}

// simplifier runs Douglas–Peucker with reusable scratch.
type simplifier struct {
	keep  []bool
	stack []int
}

// simplify appends to dst the points of the polyline pts that
// Douglas–Peucker keeps at tolerance tol (same units), always the first
// and the last.
func (s *simplifier) simplify(dst, pts []float64, tol float64) []float64 {
	n := len(pts) / 2
	if tol <= 0 || n <= 2 {
		return append(dst, pts...)
	}
	if cap(s.keep) < n {
		s.keep = make([]bool, n)
	}
	keep := s.keep[:n]
	clear(keep)
	keep[0], keep[n-1] = true, true
	tol2 := tol * tol
	st := append(s.stack[:0], 0, n-1)
	for len(st) > 0 {
		i, j := st[len(st)-2], st[len(st)-1]
		st = st[:len(st)-2]
		best, at := -1.0, -1
		for k := i + 1; k < j; k++ {
			d := segDist2(pts[2*k], pts[2*k+1], pts[2*i], pts[2*i+1], pts[2*j], pts[2*j+1])
			if d > best {
				best, at = d, k
			}
		}
		if at >= 0 && best > tol2 {
			keep[at] = true
			st = append(st, i, at, at, j)
		}
	}
	s.stack = st
	for k := 0; k < n; k++ {
		if keep[k] {
			dst = append(dst, pts[2*k], pts[2*k+1])
		}
	}
	return dst
}

// segDist2 is the squared distance from (px,py) to the segment a–b.
func segDist2(px, py, ax, ay, bx, by float64) float64 {
	dx, dy := bx-ax, by-ay
	if dx != 0 || dy != 0 {
		t := ((px-ax)*dx + (py-ay)*dy) / (dx*dx + dy*dy)
		if t > 1 {
			ax, ay = bx, by
		} else if t > 0 {
			ax, ay = ax+t*dx, ay+t*dy
		}
	}
	dx, dy = px-ax, py-ay
	return dx*dx + dy*dy
}

// quantize rounds flat pixel pairs to the integer grid, dropping points
// equal to their predecessor. For a ring it also drops a last point equal
// to the first and points on a line with their neighbours, and never
// rounds a point onto the edge of b unless the clipper put it there: a
// vertex rounded onto the edge a clipped ring runs along would make the
// ring touch itself.
func quantize(dst []int32, pts []float64, ring bool, b box) []int32 {
	for i := 0; i+1 < len(pts); i += 2 {
		x, y := int32(math.Round(pts[i])), int32(math.Round(pts[i+1]))
		if ring {
			x, y = offEdge(x, pts[i], b), offEdge(y, pts[i+1], b)
		}
		if n := len(dst); n >= 2 && dst[n-2] == x && dst[n-1] == y {
			continue
		}
		dst = append(dst, x, y)
	}
	if ring {
		for n := len(dst); n >= 4 && dst[0] == dst[n-2] && dst[1] == dst[n-1]; n = len(dst) {
			dst = dst[:n-2]
		}
		dst = dropCollinear(dst)
	}
	return dst
}

// offEdge moves r, the rounding of v, one unit into b when it landed on
// b's edge though v was not on it.
func offEdge(r int32, v float64, b box) int32 {
	const eps = 1e-6
	if float64(r) == b.min && v-b.min > eps {
		return r + 1
	}
	if float64(r) == b.max && b.max-v > eps {
		return r - 1
	}
	return r
}

// cross is the cross product of a→b and a→c: zero when the three points
// are on one line.
func cross(ax, ay, bx, by, cx, cy int32) int64 {
	return int64(bx-ax)*int64(cy-ay) - int64(by-ay)*int64(cx-ax)
}

// dropCollinear removes, in place, the points of ring q that lie on the
// line through their neighbours. Rounding can put a vertex on the tile
// edge a ring runs along, or turn a thin inlet into a spike that goes out
// and back; both make a ring touch itself, which GEOS calls invalid.
// Removing such points leaves the shape and its area as they are.
func dropCollinear(q []int32) []int32 {
	out := q[:0]
	for i := 0; i+1 < len(q); i += 2 {
		x, y := q[i], q[i+1]
		for n := len(out); n >= 4 && cross(out[n-4], out[n-3], out[n-2], out[n-1], x, y) == 0; n = len(out) {
			out = out[:n-2]
		}
		out = append(out, x, y)
	}
	// The same test across the seam, where the last point meets the first.
	for changed := true; changed && len(out) >= 6; {
		changed = false
		n := len(out)
		if cross(out[n-4], out[n-3], out[n-2], out[n-1], out[0], out[1]) == 0 {
			out, changed = out[:n-2], true
		} else if cross(out[n-2], out[n-1], out[0], out[1], out[2], out[3]) == 0 {
			out, changed = out[2:], true
		}
	}
	return out
}

// area2 returns twice the signed area of the ring q (surveyor's formula),
// in tile coordinates or in the float coordinates of clipping: positive
// for an exterior ring in MVT 2.1 (clockwise on screen, y down). The sum
// is of type S: int64 for tile coordinates, whose products int32 would
// overflow, float64 for float rings.
func area2[S int64 | float64, T int32 | float64](q []T) S {
	var s S
	n := len(q) / 2
	for i := 0; i < n; i++ {
		j := (i + 1) % n
		s += S(q[2*i])*S(q[2*j+1]) - S(q[2*j])*S(q[2*i+1])
	}
	return s
}

// reverse reverses the order of the points of q (tile or float
// coordinates) in place.
func reverse[T int32 | float64](q []T) {
	for i, j := 0, len(q)-2; i < j; i, j = i+2, j-2 {
		q[i], q[j] = q[j], q[i]
		q[i+1], q[j+1] = q[j+1], q[i+1]
	}
}

// commands builds one feature's geometry command stream; the cursor
// carries over between parts, as the spec requires.
type commands struct {
	cmds   []uint32
	cx, cy int32
}

func command(id, count int) uint32 { return uint32(id&7) | uint32(count)<<3 }

func zigzag(v int32) uint32 { return uint32((v << 1) ^ (v >> 31)) }

func (c *commands) reset() { c.cmds, c.cx, c.cy = c.cmds[:0], 0, 0 }

func (c *commands) delta(x, y int32) {
	c.cmds = append(c.cmds, zigzag(x-c.cx), zigzag(y-c.cy))
	c.cx, c.cy = x, y
}

// points appends one MoveTo with every point of q.
func (c *commands) points(q []int32) {
	if len(q) == 0 {
		return
	}
	c.cmds = append(c.cmds, command(cmdMoveTo, len(q)/2))
	for i := 0; i+1 < len(q); i += 2 {
		c.delta(q[i], q[i+1])
	}
}

// line appends a MoveTo and a LineTo (q has at least two points), and a
// ClosePath when ring is set.
func (c *commands) line(q []int32, ring bool) {
	c.cmds = append(c.cmds, command(cmdMoveTo, 1))
	c.delta(q[0], q[1])
	c.cmds = append(c.cmds, command(cmdLineTo, len(q)/2-1))
	for i := 2; i+1 < len(q); i += 2 {
		c.delta(q[i], q[i+1])
	}
	if ring {
		c.cmds = append(c.cmds, command(cmdClosePath, 1))
	}
}
