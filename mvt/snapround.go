package mvt

// Snap rounding and the rebuild of a polygon feature from the rounded
// segments (see snap.go for why).

import (
	"math"
	"slices"
)

// snapper holds the scratch of rebuild.
type snapper struct {
	hot      map[[2]int32]struct{}
	byX, byY [][2]int32 // the hot pixels sorted by x then y, and by y then x
	hits     []hit
	rings    [][]int32 // the snapped rings
	out      []int32
	outEnd   []int
}

// hit is a hot pixel a segment passes, at parameter t along it.
type hit struct {
	t    float64
	x, y int32
}

// snapEps widens the pixels a segment is tested against, so that a
// crossing computed a hair off, in floating point, still lands in a pixel
// both segments are routed through.
const snapEps = 1e-7

// rebuild returns the valid rings (flat, and the end of each) of the
// feature whose unrounded rings are f (closed, exteriors wound positive
// and holes negative), rounded to the integer grid: none when it all
// collapses. ok is false in the case snap rounding should rule out, a
// crossing left after several rounds.
func (s *snapper) rebuild(f []float64, fEnd []int) (q []int32, ends []int, ok bool) {
	if s.hot == nil {
		s.hot = map[[2]int32]struct{}{}
	}
	clear(s.hot)
	rings := ringsOf(f, fEnd)
	for _, r := range rings {
		for i := 0; i+1 < len(r); i += 2 {
			s.hot[roundPt(r[i], r[i+1])] = struct{}{}
		}
	}
	s.crossings(rings)
	var g *planar
	// Snap rounding leaves segments that meet only at their ends; should
	// floating point leave a crossing, its pixel is made hot and the
	// rings snapped again.
	for range 4 {
		s.sortHot()
		s.rings = s.rings[:0]
		for _, r := range rings {
			s.rings = append(s.rings, s.snapRing(r))
		}
		var extra [][2]int32
		g, extra = node(s.rings)
		if len(extra) == 0 {
			break
		}
		for _, p := range extra {
			s.hot[p] = struct{}{}
		}
		g = nil
	}
	s.out, s.outEnd = s.out[:0], s.outEnd[:0]
	if g == nil {
		return nil, nil, false
	}
	s.out, s.outEnd = g.polygons(s.out, s.outEnd)
	return s.out, s.outEnd, true
}

// ringsOf splits flat closed rings at their ends.
func ringsOf(f []float64, ends []int) [][]float64 {
	out := make([][]float64, 0, len(ends))
	start := 0
	for _, e := range ends {
		out = append(out, f[start:e])
		start = e
	}
	return out
}

func roundPt(x, y float64) [2]int32 {
	return [2]int32{int32(math.Round(x)), int32(math.Round(y))}
}

// crossings makes hot the pixel of every point where two segments of the
// rings cross (a sweep in x over the segments' boxes).
func (s *snapper) crossings(rings [][]float64) {
	type fseg struct{ x0, y0, x1, y1 float64 }
	var segs []fseg
	for _, r := range rings {
		for i := 0; i+3 < len(r); i += 2 {
			segs = append(segs, fseg{r[i], r[i+1], r[i+2], r[i+3]})
		}
	}
	slices.SortFunc(segs, func(a, b fseg) int {
		ax, bx := math.Min(a.x0, a.x1), math.Min(b.x0, b.x1)
		if ax < bx {
			return -1
		} else if ax > bx {
			return 1
		}
		return 0
	})
	var active []int
	for k, sg := range segs {
		x := math.Min(sg.x0, sg.x1)
		keep := active[:0]
		for _, a := range active {
			if math.Max(segs[a].x0, segs[a].x1) >= x {
				keep = append(keep, a)
			}
		}
		active = keep
		for _, a := range active {
			o := segs[a]
			if math.Max(o.y0, o.y1) < math.Min(sg.y0, sg.y1) || math.Min(o.y0, o.y1) > math.Max(sg.y0, sg.y1) {
				continue
			}
			// a + t(b−a) = c + u(d−c)
			rx, ry := o.x1-o.x0, o.y1-o.y0
			qx, qy := sg.x1-sg.x0, sg.y1-sg.y0
			den := rx*qy - ry*qx
			if den == 0 {
				continue // parallel: where they overlap, vertices are hot
			}
			wx, wy := sg.x0-o.x0, sg.y0-o.y0
			t := (wx*qy - wy*qx) / den
			u := (wx*ry - wy*rx) / den
			if t < -snapEps || t > 1+snapEps || u < -snapEps || u > 1+snapEps {
				continue
			}
			s.hot[roundPt(o.x0+t*rx, o.y0+t*ry)] = struct{}{}
		}
		active = append(active, k)
	}
}

// sortHot fills byX and byY from the hot set.
func (s *snapper) sortHot() {
	s.byX = s.byX[:0]
	for p := range s.hot {
		s.byX = append(s.byX, p)
	}
	slices.SortFunc(s.byX, func(a, b [2]int32) int {
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		return int(a[1]) - int(b[1])
	})
	s.byY = append(s.byY[:0], s.byX...)
	slices.SortFunc(s.byY, func(a, b [2]int32) int {
		if a[1] != b[1] {
			return int(a[1]) - int(b[1])
		}
		return int(a[0]) - int(b[0])
	})
}

// snapRing routes each segment of the closed ring r through the hot
// pixels it passes and returns the ring of pixel centres (not closed,
// without repeated points).
func (s *snapper) snapRing(r []float64) []int32 {
	var out []int32
	push := func(x, y int32) {
		if n := len(out); n >= 2 && out[n-2] == x && out[n-1] == y {
			return
		}
		out = append(out, x, y)
	}
	for i := 0; i+3 < len(r); i += 2 {
		s.hits = s.hits[:0]
		s.segHits(r[i], r[i+1], r[i+2], r[i+3])
		// The ends' own pixels first and last, whatever a hot pixel
		// sharing a pixel's side with them says (a detour there cancels
		// out in the graph).
		p0, p1 := roundPt(r[i], r[i+1]), roundPt(r[i+2], r[i+3])
		s.hits = append(s.hits, hit{t: -1, x: p0[0], y: p0[1]}, hit{t: 2, x: p1[0], y: p1[1]})
		slices.SortFunc(s.hits, func(a, b hit) int {
			if a.t < b.t {
				return -1
			} else if a.t > b.t {
				return 1
			}
			return 0
		})
		for _, h := range s.hits {
			push(h.x, h.y)
		}
	}
	for n := len(out); n >= 4 && out[0] == out[n-2] && out[1] == out[n-1]; n = len(out) {
		out = out[:n-2]
	}
	return out
}

// segHits appends to s.hits the hot pixels the segment passes: those of
// its ends and any whose square (widened by snapEps) it crosses, each at
// the parameter of the middle of its passage through the square.
func (s *snapper) segHits(x0, y0, x1, y1 float64) {
	const h = 0.5 + snapEps
	dx, dy := x1-x0, y1-y0
	steep := math.Abs(dy) > math.Abs(dx)
	// Walk the columns (or, for a steep segment, the rows) of pixels the
	// segment spans; in each, the range of rows (columns) it covers.
	a0, a1, b0, da, db, idx := x0, x1, y0, dx, dy, s.byX
	if steep {
		a0, a1, b0, da, db, idx = y0, y1, x0, dy, dx, s.byY
	}
	lo, hi := math.Min(a0, a1), math.Max(a0, a1)
	cmp := func(p, q [2]int32) int {
		pa, pb := p[0], p[1]
		if steep {
			pa, pb = p[1], p[0]
		}
		if pa != q[0] {
			return int(pa) - int(q[0])
		}
		return int(pb) - int(q[1])
	}
	c0, c1 := int32(math.Ceil(lo-h)), int32(math.Floor(hi+h))
	k0, _ := slices.BinarySearchFunc(idx, [2]int32{c0, math.MinInt32}, cmp)
	k1, _ := slices.BinarySearchFunc(idx, [2]int32{c1, math.MaxInt32}, cmp)
	if k1-k0 <= int(c1-c0)+1 {
		// Fewer hot pixels in the segment's span than columns: try each.
		for _, p := range idx[k0:k1] {
			if t, ok := passes(x0, y0, dx, dy, p, h); ok {
				s.hits = append(s.hits, hit{t: t, x: p[0], y: p[1]})
			}
		}
		return
	}
	for c := c0; c <= c1; c++ {
		// The part of the segment within the slab |a − c| ≤ h.
		t0, t1 := 0.0, 1.0
		if da != 0 {
			ta, tb := (float64(c)-h-a0)/da, (float64(c)+h-a0)/da
			if ta > tb {
				ta, tb = tb, ta
			}
			t0, t1 = math.Max(t0, ta), math.Min(t1, tb)
			if t0 > t1 {
				continue
			}
		}
		bl, bh := b0+t0*db, b0+t1*db
		if bl > bh {
			bl, bh = bh, bl
		}
		// Hot pixels of this column with centre in [bl − h, bh + h].
		from := int32(math.Ceil(bl - h))
		k, _ := slices.BinarySearchFunc(idx[k0:k1], [2]int32{c, from}, cmp)
		for k += k0; k < k1; k++ {
			p := idx[k]
			pa, pb := p[0], p[1]
			if steep {
				pa, pb = p[1], p[0]
			}
			if pa != c || float64(pb) > bh+h {
				break
			}
			if t, ok := passes(x0, y0, dx, dy, p, h); ok {
				s.hits = append(s.hits, hit{t: t, x: p[0], y: p[1]})
			}
		}
	}
}

// passes reports whether the segment from (x0,y0) by (dx,dy) meets the
// square of half side h around pixel p, and the parameter of the middle
// of its passage (Liang–Barsky).
func passes(x0, y0, dx, dy float64, p [2]int32, h float64) (float64, bool) {
	t0, t1 := 0.0, 1.0
	cx, cy := float64(p[0]), float64(p[1])
	for _, e := range [4][2]float64{{-dx, x0 - (cx - h)}, {dx, cx + h - x0}, {-dy, y0 - (cy - h)}, {dy, cy + h - y0}} {
		if e[0] == 0 {
			if e[1] < 0 {
				return 0, false
			}
			continue
		}
		r := e[1] / e[0]
		if e[0] < 0 {
			t0 = math.Max(t0, r)
		} else {
			t1 = math.Min(t1, r)
		}
	}
	if t0 > t1 {
		return 0, false
	}
	return (t0 + t1) / 2, true
}

// planar is the graph of snap-rounded segments: vertices, and half-edges
// in twin pairs (h and h^1), each with the winding it adds crossing it
// from right to left.
type planar struct {
	pts      [][2]int32
	from, to []int32
	net      []int32
}

// node cuts the snapped rings' segments where a vertex lies on another
// segment, sums the segments that coincide (a ring's way there and back
// cancels out) and returns the graph. A proper crossing, which snap
// rounding rules out but floating point might leave, is returned instead
// as the pixel to make hot.
func node(rings [][]int32) (*planar, [][2]int32) {
	type iseg struct{ ax, ay, bx, by int32 }
	var segs []iseg
	for _, q := range rings {
		n := len(q) / 2
		if n < 2 {
			continue
		}
		for i := 0; i < n; i++ {
			j := (i + 1) % n
			segs = append(segs, iseg{q[2*i], q[2*i+1], q[2*j], q[2*j+1]})
		}
	}
	order := make([]int32, len(segs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return int(min(segs[a].ax, segs[a].bx)) - int(min(segs[b].ax, segs[b].bx))
	})
	splits := map[int32][][2]int32{}
	var extra [][2]int32
	var active []int32
	for _, k := range order {
		s := segs[k]
		x := min(s.ax, s.bx)
		keep := active[:0]
		for _, a := range active {
			if max(segs[a].ax, segs[a].bx) >= x {
				keep = append(keep, a)
			}
		}
		active = keep
		for _, a := range active {
			o := segs[a]
			if max(o.ay, o.by) < min(s.ay, s.by) || min(o.ay, o.by) > max(s.ay, s.by) {
				continue
			}
			d1, d2 := sign(cross(o.ax, o.ay, o.bx, o.by, s.ax, s.ay)), sign(cross(o.ax, o.ay, o.bx, o.by, s.bx, s.by))
			d3, d4 := sign(cross(s.ax, s.ay, s.bx, s.by, o.ax, o.ay)), sign(cross(s.ax, s.ay, s.bx, s.by, o.bx, o.by))
			if d1*d2 < 0 && d3*d4 < 0 {
				den := float64(cross(0, 0, o.bx-o.ax, o.by-o.ay, s.bx-s.ax, s.by-s.ay))
				t := float64(cross(0, 0, s.ax-o.ax, s.ay-o.ay, s.bx-s.ax, s.by-s.ay)) / den
				extra = append(extra, roundPt(float64(o.ax)+t*float64(o.bx-o.ax), float64(o.ay)+t*float64(o.by-o.ay)))
				continue
			}
			// A vertex of one strictly inside the other cuts the other.
			inside := func(px, py int32, g iseg) bool {
				return onSeg(g.ax, g.ay, g.bx, g.by, px, py) && (px != g.ax || py != g.ay) && (px != g.bx || py != g.by)
			}
			if d1 == 0 && inside(s.ax, s.ay, o) {
				splits[a] = append(splits[a], [2]int32{s.ax, s.ay})
			}
			if d2 == 0 && inside(s.bx, s.by, o) {
				splits[a] = append(splits[a], [2]int32{s.bx, s.by})
			}
			if d3 == 0 && inside(o.ax, o.ay, s) {
				splits[k] = append(splits[k], [2]int32{o.ax, o.ay})
			}
			if d4 == 0 && inside(o.bx, o.by, s) {
				splits[k] = append(splits[k], [2]int32{o.bx, o.by})
			}
		}
		active = append(active, k)
	}
	if len(extra) > 0 {
		return nil, extra
	}
	// Sum the pieces, undirected, with +1 for each run from the lesser
	// end to the greater and −1 the other way.
	nets := map[[4]int32]int32{}
	var keys [][4]int32
	addEdge := func(ax, ay, bx, by int32) {
		k, d := [4]int32{ax, ay, bx, by}, int32(1)
		if ax > bx || (ax == bx && ay > by) {
			k, d = [4]int32{bx, by, ax, ay}, -1
		}
		if _, ok := nets[k]; !ok {
			keys = append(keys, k)
		}
		nets[k] += d
	}
	for k, s := range segs {
		cut := splits[int32(k)]
		if len(cut) == 0 {
			addEdge(s.ax, s.ay, s.bx, s.by)
			continue
		}
		dx, dy := int64(s.bx-s.ax), int64(s.by-s.ay)
		slices.SortFunc(cut, func(p, q [2]int32) int {
			tp := int64(p[0]-s.ax)*dx + int64(p[1]-s.ay)*dy
			tq := int64(q[0]-s.ax)*dx + int64(q[1]-s.ay)*dy
			return sign(tp - tq)
		})
		px, py := s.ax, s.ay
		for _, c := range cut {
			if c[0] == px && c[1] == py {
				continue
			}
			addEdge(px, py, c[0], c[1])
			px, py = c[0], c[1]
		}
		addEdge(px, py, s.bx, s.by)
	}
	g := &planar{}
	vid := map[[2]int32]int32{}
	vertex := func(x, y int32) int32 {
		p := [2]int32{x, y}
		if i, ok := vid[p]; ok {
			return i
		}
		i := int32(len(g.pts))
		vid[p] = i
		g.pts = append(g.pts, p)
		return i
	}
	for _, k := range keys {
		n := nets[k]
		if n == 0 {
			continue
		}
		u, v := vertex(k[0], k[1]), vertex(k[2], k[3])
		g.from = append(g.from, u, v)
		g.to = append(g.to, v, u)
		g.net = append(g.net, n, -n)
	}
	return g, nil
}

// polygons appends to out the rings of the region of positive winding:
// each exterior (wound positive) followed by its holes (negative), every
// ring simple, rings touching one another at points at most.
func (g *planar) polygons(out []int32, ends []int) ([]int32, []int) {
	nh := len(g.from)
	if nh == 0 {
		return out, ends
	}
	nv := len(g.pts)
	// The half-edges leaving each vertex, counter-clockwise.
	start := make([]int32, nv+1)
	for _, u := range g.from {
		start[u+1]++
	}
	for i := 1; i <= nv; i++ {
		start[i] += start[i-1]
	}
	around := make([]int32, nh)
	fill := slices.Clone(start[:nv])
	for h, u := range g.from {
		around[fill[u]] = int32(h)
		fill[u]++
	}
	dir := func(h int32) (int64, int64) {
		a, b := g.pts[g.from[h]], g.pts[g.to[h]]
		return int64(b[0] - a[0]), int64(b[1] - a[1])
	}
	for v := 0; v < nv; v++ {
		slices.SortFunc(around[start[v]:start[v+1]], func(a, b int32) int {
			ax, ay := dir(a)
			bx, by := dir(b)
			ha, hb := half(ax, ay), half(bx, by)
			if ha != hb {
				return ha - hb
			}
			return -sign(ax*by - ay*bx)
		})
	}
	pos := make([]int32, nh)
	for v := 0; v < nv; v++ {
		for i := start[v]; i < start[v+1]; i++ {
			pos[around[i]] = i - start[v]
		}
	}
	// cw returns the half-edge leaving the head of h that is k steps
	// clockwise from h's twin.
	cw := func(h int32, k int32) int32 {
		v := g.to[h]
		deg := start[v+1] - start[v]
		return around[start[v]+((pos[h^1]-k)%deg+deg)%deg]
	}
	// Faces: the cycle of each half-edge, with the face on its left.
	cyc := make([]int32, nh)
	for i := range cyc {
		cyc[i] = -1
	}
	var cycFirst []int32
	var cycArea []int64
	for h0 := int32(0); h0 < int32(nh); h0++ {
		if cyc[h0] >= 0 {
			continue
		}
		id := int32(len(cycFirst))
		var a int64
		h := h0
		for steps := 0; cyc[h] < 0 && steps <= nh; steps++ {
			cyc[h] = id
			p, q := g.pts[g.from[h]], g.pts[g.to[h]]
			a += int64(p[0])*int64(q[1]) - int64(q[0])*int64(p[1])
			h = cw(h, 1)
		}
		cycFirst = append(cycFirst, h0)
		cycArea = append(cycArea, a)
	}
	// Connected components, each with its outer cycle (the one of
	// negative area, around it) and the winding of the face around it.
	parent := make([]int32, nv)
	for i := range parent {
		parent[i] = int32(i)
	}
	var find func(int32) int32
	find = func(i int32) int32 {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for h := 0; h < nh; h += 2 {
		if a, b := find(g.from[h]), find(g.to[h]); a != b {
			parent[a] = b
		}
	}
	outer := map[int32]int32{}
	for c, h := range cycFirst {
		r := find(g.from[h])
		if o, ok := outer[r]; !ok || cycArea[c] < cycArea[o] {
			outer[r] = int32(c)
		}
	}
	wind := make([]int32, len(cycFirst))
	known := make([]bool, len(cycFirst))
	var queue []int32
	var edges *bands
	if len(outer) > 1 {
		edges = newBands(nh/2, func(e int) int64 { return int64(min(g.pts[g.from[2*e]][1], g.pts[g.to[2*e]][1])) },
			func(e int) int64 { return int64(max(g.pts[g.from[2*e]][1], g.pts[g.to[2*e]][1])) })
	}
	for r, c := range outer {
		if len(outer) > 1 {
			wind[c] = g.windingAt(g.pts[r], edges.at(int64(g.pts[r][1])), func(h int) bool { return find(g.from[h]) != r })
		}
		known[c] = true
		queue = append(queue, c)
	}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		h := cycFirst[c]
		for steps := 0; steps <= nh; steps++ {
			if t := cyc[h^1]; !known[t] {
				wind[t], known[t] = wind[c]-g.net[h], true
				queue = append(queue, t)
			}
			if h = cw(h, 1); h == cycFirst[c] {
				break
			}
		}
	}
	// The boundary of the region of positive winding, region on the left,
	// walked round each face and cut where it touches itself.
	boundary := func(h int32) bool { return wind[cyc[h]] > 0 && wind[cyc[h^1]] <= 0 }
	seen := make([]bool, nh)
	at := make([]int32, nv) // position of a vertex on the walk's stack, +1
	var loops [][]int32
	var stack []int32
	emit := func(vs []int32) {
		q := make([]int32, 0, 2*len(vs))
		for _, v := range vs {
			q = append(q, g.pts[v][0], g.pts[v][1])
		}
		q = dropCollinear(q)
		if len(q) >= 6 && area2[int64](q) != 0 {
			loops = append(loops, q)
		}
	}
	for h0 := int32(0); h0 < int32(nh); h0++ {
		if seen[h0] || !boundary(h0) {
			continue
		}
		stack = stack[:0]
		h := h0
		for steps := 0; !seen[h] && steps <= nh; steps++ {
			seen[h] = true
			v := g.from[h]
			if i := at[v]; i > 0 {
				// Back at a vertex of the walk: the loop since then is a
				// ring of its own.
				emit(stack[i-1:])
				for _, u := range stack[i:] {
					at[u] = 0
				}
				stack = stack[:i]
			} else {
				stack = append(stack, v)
				at[v] = int32(len(stack))
			}
			for k := int32(1); ; k++ {
				n := cw(h, k)
				if boundary(n) || n == h^1 {
					h = n
					break
				}
			}
		}
		emit(stack)
		for _, u := range stack {
			at[u] = 0
		}
	}
	// Exteriors, each followed by the holes whose smallest exterior
	// around them it is.
	var shells []int
	for i, q := range loops {
		if area2[int64](q) > 0 {
			shells = append(shells, i)
		}
	}
	boxes := make([][4]int32, len(shells)) // x0, y0, x1, y1
	areas := make([]int64, len(shells))
	for k, s := range shells {
		q := loops[s]
		b := [4]int32{q[0], q[1], q[0], q[1]}
		for i := 2; i+1 < len(q); i += 2 {
			b[0], b[2] = min(b[0], q[i]), max(b[2], q[i])
			b[1], b[3] = min(b[1], q[i+1]), max(b[3], q[i+1])
		}
		boxes[k], areas[k] = b, area2[int64](q)
	}
	shellIdx := newBands(len(shells), func(i int) int64 { return int64(boxes[i][1]) }, func(i int) int64 { return int64(boxes[i][3]) })
	holesOf := make(map[int][]int)
	for i, q := range loops {
		if area2[int64](q) > 0 {
			continue
		}
		// The middle of an edge: on no other ring, as rings share no edge.
		px, py := int64(q[0])+int64(q[2]), int64(q[1])+int64(q[3])
		best, bestArea := -1, int64(math.MaxInt64)
		for _, s := range shellIdx.at(py / 2) {
			b := boxes[s]
			if 2*int64(b[0]) > px || 2*int64(b[2]) < px || 2*int64(b[1]) > py || 2*int64(b[3]) < py {
				continue
			}
			if a := areas[s]; a < bestArea && inRingInt(px, py, loops[shells[s]]) {
				best, bestArea = shells[s], a
			}
		}
		if best >= 0 {
			holesOf[best] = append(holesOf[best], i)
		}
	}
	for _, s := range shells {
		out = append(out, loops[s]...)
		ends = append(ends, len(out))
		for _, h := range holesOf[s] {
			out = append(out, loops[h]...)
			ends = append(ends, len(out))
		}
	}
	return out, ends
}

// half is 0 for directions of angle [0, π), 1 for [π, 2π).
func half(dx, dy int64) int {
	if dy > 0 || (dy == 0 && dx > 0) {
		return 0
	}
	return 1
}

// windingAt returns the winding number of p with respect to the edges
// (edge e being half-edges 2e and 2e+1) that use accepts among those
// given, which must include every edge whose y range holds p's; p is on
// none.
func (g *planar) windingAt(p [2]int32, edges []int32, use func(h int) bool) int32 {
	var w int32
	for _, e := range edges {
		h := 2 * int(e)
		if !use(h) {
			continue
		}
		a, b := g.pts[g.from[h]], g.pts[g.to[h]]
		left := cross(a[0], a[1], b[0], b[1], p[0], p[1])
		if a[1] <= p[1] && b[1] > p[1] && left > 0 {
			w += g.net[h]
		} else if b[1] <= p[1] && a[1] > p[1] && left < 0 {
			w -= g.net[h]
		}
	}
	return w
}
