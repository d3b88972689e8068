package shapefile

import "math"

// pipBudget bounds the work (bounding-box checks and ring vertices visited by
// point-in-polygon tests) spent assigning the holes of one record to their
// shells, so that a hostile record with very many rings cannot stall the
// reader. Past it, the remaining holes go to the nearest shell before them.
const pipBudget = 1 << 26

type ringInfo struct {
	area       float64 // signed, positive for counter-clockwise
	minX, minY float64
	maxX, maxY float64
	shell      bool // clockwise: an outer ring by the shapefile convention
	parent     int  // index of the shell a hole belongs to, or -1
	head, tail int  // a shell's first and last hole, or -1
	next       int  // the next hole of the same shell, or -1
}

func (a *ringInfo) covers(b *ringInfo) bool {
	return a.minX <= b.minX && a.minY <= b.minY && a.maxX >= b.maxX && a.maxY >= b.maxY
}

// assemble groups s.rings (closed, at least 4 points each) into polygons:
// clockwise rings are shells, counter-clockwise ones holes; each hole goes to
// the smallest shell that contains it, and a hole no shell contains becomes a
// shell of its own, reversed. The result is reused by the next call.
func (s *shpReader) assemble() [][][]float64 {
	rings := s.rings
	info := s.info[:0]
	for _, r := range rings {
		ri := ringInfo{area: signedArea(r), parent: -1, head: -1, tail: -1, next: -1}
		ri.minX, ri.minY, ri.maxX, ri.maxY = math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for i := 0; i+1 < len(r); i += 2 {
			ri.minX, ri.maxX = min(ri.minX, r[i]), max(ri.maxX, r[i])
			ri.minY, ri.maxY = min(ri.minY, r[i+1]), max(ri.maxY, r[i+1])
		}
		ri.shell = ri.area <= 0
		info = append(info, ri)
	}
	s.info = info

	budget := pipBudget
	lastShell := -1
	for i := range info {
		h := &info[i]
		if h.shell {
			lastShell = i
			continue
		}
		best := -1
		for j := 0; j < len(info) && budget > 0; j++ {
			sh := &info[j]
			budget--
			if !sh.shell || !sh.covers(h) || (best >= 0 && -sh.area >= -info[best].area) {
				continue
			}
			inside, cost := ringInRing(rings[i], rings[j])
			budget -= cost
			if inside {
				best = j
			}
		}
		if best < 0 && budget <= 0 {
			best = lastShell
		}
		h.parent = best
		if best >= 0 {
			p := &info[best]
			if p.tail < 0 {
				p.head = i
			} else {
				info[p.tail].next = i
			}
			p.tail = i
		}
	}

	order := s.order[:0]
	polys := s.polys[:0]
	for i := range info {
		ri := &info[i]
		if !ri.shell && ri.parent >= 0 {
			continue // a hole, emitted with its shell
		}
		if !ri.shell {
			reverseRing(rings[i])
		}
		start := len(order)
		order = append(order, rings[i])
		for j := ri.head; j >= 0; j = info[j].next {
			order = append(order, rings[j])
		}
		polys = append(polys, order[start:len(order):len(order)])
	}
	s.order, s.polys = order, polys
	return polys
}

// signedArea returns the shoelace area of a closed ring: positive when it
// runs counter-clockwise (x to the right, y up).
func signedArea(r []float64) float64 {
	if len(r) < 6 {
		return 0
	}
	x0, y0 := r[0], r[1]
	var sum float64
	for i := 2; i+3 < len(r); i += 2 {
		sum += (r[i]-x0)*(r[i+3]-y0) - (r[i+2]-x0)*(r[i+1]-y0)
	}
	return sum / 2
}

func reverseRing(r []float64) {
	for i, j := 0, len(r)-2; i < j; i, j = i+2, j-2 {
		r[i], r[j] = r[j], r[i]
		r[i+1], r[j+1] = r[j+1], r[i+1]
	}
}

// ringInRing reports whether hole lies inside shell, testing the hole's
// vertices in turn until one is not on the shell's boundary (a hole whose
// vertices all lie on the boundary counts as inside). cost is the number of
// shell vertices visited.
func ringInRing(hole, shell []float64) (inside bool, cost int) {
	for k := 0; k+1 < len(hole); k += 2 {
		cost += len(shell) / 2
		switch pointInRing(hole[k], hole[k+1], shell) {
		case 1:
			return true, cost
		case -1:
			return false, cost
		}
	}
	return true, cost
}

// pointInRing returns 1 when (x, y) is inside the closed ring, -1 when it is
// outside and 0 when it is on the ring itself.
func pointInRing(x, y float64, ring []float64) int {
	inside := false
	for i := 0; i+3 < len(ring); i += 2 {
		ax, ay, bx, by := ring[i], ring[i+1], ring[i+2], ring[i+3]
		if (bx-ax)*(y-ay)-(by-ay)*(x-ax) == 0 &&
			min(ax, bx) <= x && x <= max(ax, bx) && min(ay, by) <= y && y <= max(ay, by) {
			return 0
		}
		if (ay > y) != (by > y) && x < ax+(y-ay)*(bx-ax)/(by-ay) {
			inside = !inside
		}
	}
	if inside {
		return 1
	}
	return -1
}
