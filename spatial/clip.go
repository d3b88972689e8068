// clip.go: a segment clipped to a box (Liang–Barsky), for the tiles' and
// the images' clipping.
package spatial

// ClipSegment clips the segment from (ax, ay) to (bx, by) to the box
// minX, minY, maxX, maxY: the parameters t0 <= t1 in 0..1 of the part
// inside (a point of it is a + t·(b − a)), and false when none is.
func ClipSegment(ax, ay, bx, by, minX, minY, maxX, maxY float64) (t0, t1 float64, ok bool) {
	t0, t1 = 0, 1
	dx, dy := bx-ax, by-ay
	for _, e := range [4][2]float64{{-dx, ax - minX}, {dx, maxX - ax}, {-dy, ay - minY}, {dy, maxY - ay}} {
		p, q := e[0], e[1]
		if p == 0 {
			if q < 0 {
				return 0, 0, false // parallel to this edge, outside it
			}
			continue
		}
		r := q / p
		if p < 0 {
			if r > t1 {
				return 0, 0, false
			}
			t0 = max(t0, r)
		} else {
			if r < t0 {
				return 0, 0, false
			}
			t1 = min(t1, r)
		}
	}
	return t0, t1, true
}
