package spatial

import (
	"math"

	"mapcommons"
	"mapcommons/format/wkb"
)

// The kinds of query geometry are those of mapcommons.Near.
const (
	KindPoint   = mapcommons.NearPoint
	KindPoints  = mapcommons.NearPoints
	KindLine    = mapcommons.NearLine
	KindPolygon = mapcommons.NearPolygon
)

// Near is a buffer query: the features within Radius (in the metric's unit)
// of a query geometry. Contained selects features wholly inside the buffer;
// otherwise any part inside or touching it is enough.
type Near struct {
	Kind      string
	XY        []float64 // lon, lat pairs; a polygon's ring is closed
	Radius    float64   // ≥ 0; a polygon without radius has 0
	Metric    Metric
	Contained bool

	rows  *ringRows // Prepare's index of a polygon's edges; nil: none
	parts []partBox // Prepare's boxes around the edges (points); nil: none
}

// partBox holds the boxes containing every point within the radius of one
// edge of a line or polygon (from XY[i]) or one of the points (at XY[i]).
type partBox struct {
	i     int
	boxes []wkb.Rect
}

// Prepare readies q for testing many features: a polygon's edges are
// indexed by rows of latitude, so that testing whether a point is inside
// reads the few edges of its row instead of all of them. Call it once,
// before q is used (by one goroutine or several).
//
// On the sphere, with a radius, each edge (or each of the points) also
// gets the boxes that hold every point within the radius of it (as Boxes
// computes for the whole geometry), so that a point is measured, in
// trigonometry, only against the edges whose boxes hold it.
func (q *Near) Prepare() {
	if q.Kind == KindPolygon && len(q.XY) >= 2*64 {
		q.rows = newRingRows(q.XY)
	}
	if q.Metric.planar || q.Radius <= 0 || len(q.XY) < 2*16 {
		return
	}
	delta := q.Metric.Degrees(q.Radius)*(1+1e-9) + 1e-12
	if delta >= 90 {
		return // every box would be the whole world
	}
	switch q.Kind {
	case KindPoints:
		for i := 0; i+1 < len(q.XY); i += 2 {
			x, y := q.XY[i], q.XY[i+1]
			q.parts = append(q.parts, partBox{i, sphereBoxes([]latBand{{arcLon(x, y, x, y), y, y}}, delta)})
		}
	case KindLine, KindPolygon:
		for i := 0; i+3 < len(q.XY); i += 2 {
			ax, ay, bx, by := q.XY[i], q.XY[i+1], q.XY[i+2], q.XY[i+3]
			lo, hi := arcLat(ax, ay, bx, by)
			q.parts = append(q.parts, partBox{i, sphereBoxes([]latBand{{arcLon(ax, ay, bx, by), lo, hi}}, delta)})
		}
	}
}

// withinParts is DistTo(x, y) <= q.Radius measured only against the edges
// (points) whose boxes hold the point.
func (q *Near) withinParts(x, y float64) bool {
	if q.Kind == KindPolygon && q.inRing(x, y) {
		return true
	}
	for _, p := range q.parts {
		if !inAny(x, y, p.boxes) {
			continue
		}
		xy := q.XY[p.i:]
		var d float64
		if q.Kind == KindPoints {
			d = q.Metric.Dist(x, y, xy[0], xy[1])
		} else {
			d = q.Metric.DistSeg(x, y, xy[0], xy[1], xy[2], xy[3])
		}
		if d <= q.Radius {
			return true
		}
	}
	return false
}

// inAny reports whether a point is in one of the boxes.
func inAny(x, y float64, boxes []wkb.Rect) bool {
	for _, b := range boxes {
		if inRect(x, y, b) {
			return true
		}
	}
	return false
}

// inRing reports whether (x, y) is inside or on the query polygon's ring,
// as pointInRing does.
func (q *Near) inRing(x, y float64) bool {
	if q.rows == nil {
		return pointInRing(x, y, q.XY)
	}
	return q.rows.contains(x, y, q.XY)
}

// ringRows indexes the edges of a closed ring by horizontal bands: band b
// lists the edges whose latitude range meets it. A point's crossings and
// boundary test need only the edges whose range holds its latitude, and
// all of those are listed in its band.
type ringRows struct {
	y0, h float64
	bands [][]int32 // edge i runs from vertex i-1 (the last for i = 0) to vertex i
}

func newRingRows(ring []float64) *ringRows {
	n := len(ring) / 2
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := 0; i < n; i++ {
		lo, hi = min(lo, ring[2*i+1]), max(hi, ring[2*i+1])
	}
	edge := func(i int) (float64, float64) {
		j := (i + n - 1) % n
		return min(ring[2*i+1], ring[2*j+1]), max(ring[2*i+1], ring[2*j+1])
	}
	// About 8 edges a band, fewer bands when long edges would be listed in
	// too many of them.
	for nb := max(n/8, 1); ; nb /= 2 {
		r := &ringRows{y0: lo, h: (hi - lo) / float64(nb), bands: make([][]int32, nb)}
		if !(r.h > 0) {
			r.h, r.bands = 1, r.bands[:1]
		}
		total := 0
		for i := 0; i < n; i++ {
			a, b := edge(i)
			total += r.band(b) - r.band(a) + 1
		}
		if total > 8*n && nb > 1 {
			continue
		}
		for i := 0; i < n; i++ {
			a, b := edge(i)
			for k := r.band(a); k <= r.band(b); k++ {
				r.bands[k] = append(r.bands[k], int32(i))
			}
		}
		return r
	}
}

// band is the band of latitude y, clamped: monotone in y, so an edge's
// range [a, b] holding y has band(a) <= band(y) <= band(b).
func (r *ringRows) band(y float64) int {
	k := (y - r.y0) / r.h
	if !(k > 0) {
		return 0
	}
	return min(int(k), len(r.bands)-1)
}

// contains is pointInRing(x, y, ring) over the edges of y's band.
func (r *ringRows) contains(x, y float64, ring []float64) bool {
	n := len(ring) / 2
	in := false
	for _, e := range r.bands[r.band(y)] {
		i := int(e)
		j := (i + n - 1) % n
		xi, yi, xj, yj := ring[2*i], ring[2*i+1], ring[2*j], ring[2*j+1]
		if y < yi && y < yj || y > yi && y > yj {
			continue
		}
		if onSegment(x, y, xi, yi, xj, yj) {
			return true
		}
		if (yi > y) != (yj > y) && x < (xj-xi)*(y-yi)/(yj-yi)+xi {
			in = !in
		}
	}
	return in
}

// segs calls fn for each edge of the query geometry.
func (q *Near) segs(fn func(ax, ay, bx, by float64) bool) bool {
	if q.Kind != KindLine && q.Kind != KindPolygon {
		return true
	}
	for i := 0; i+3 < len(q.XY); i += 2 {
		if !fn(q.XY[i], q.XY[i+1], q.XY[i+2], q.XY[i+3]) {
			return false
		}
	}
	return true
}

// DistTo is the distance from a point to the query geometry: to the point,
// the nearest of the points, the line, or the polygon (0 inside it).
func (q *Near) DistTo(x, y float64) float64 {
	switch q.Kind {
	case KindPoint, KindPoints:
		d := math.Inf(1)
		for i := 0; i+1 < len(q.XY); i += 2 {
			d = math.Min(d, q.Metric.Dist(x, y, q.XY[i], q.XY[i+1]))
		}
		return d
	case KindPolygon:
		if q.inRing(x, y) {
			return 0
		}
	}
	return q.distToEdges(x, y)
}

func (q *Near) distToEdges(x, y float64) float64 {
	d := math.Inf(1)
	q.segs(func(ax, ay, bx, by float64) bool {
		d = math.Min(d, q.Metric.DistSeg(x, y, ax, ay, bx, by))
		return true
	})
	return d
}

// MatchPoint reports whether a point feature matches (the fast path of
// point datasets: a point is inside the buffer or not).
func (q *Near) MatchPoint(x, y float64) bool {
	if q.Kind == KindPolygon && q.Radius == 0 {
		return q.inRing(x, y) || q.onEdge(x, y)
	}
	if q.parts != nil {
		return q.withinParts(x, y)
	}
	return q.DistTo(x, y) <= q.Radius
}

// onEdge reports whether a point is on an edge of the query polygon, at
// distance 0 from it, as distToEdges measures (so that a polygon without
// radius matches what DistTo(x, y) <= 0 matches). It measures only the
// edges that can hold the point: an arc spanning less than 180 degrees of
// longitude holds no point outside its longitudes (the distance, a chain
// of trigonometry, is what a polygon of thousands of vertices spends its
// time on for every point outside it).
func (q *Near) onEdge(x, y float64) bool {
	// Near the poles a small step in longitude is a smaller step than the
	// distance's rounding: there every edge is measured.
	const eps, polar = 1e-9, 89.0 // degrees
	nearPole := math.Abs(y) > polar
	found := false
	q.segs(func(ax, ay, bx, by float64) bool {
		if !nearPole && !q.Metric.planar && math.Abs(ay) <= polar && math.Abs(by) <= polar && math.Abs(bx-ax) < 180 &&
			(x < min(ax, bx)-eps || x > max(ax, bx)+eps) {
			return true
		}
		if q.Metric.planar && (x < min(ax, bx)-eps || x > max(ax, bx)+eps || y < min(ay, by)-eps || y > max(ay, by)+eps) {
			return true
		}
		found = q.Metric.DistSeg(x, y, ax, ay, bx, by) <= 0
		return !found
	})
	return found
}

// Match reports whether a feature's geometry matches the query.
func (q *Near) Match(g wkb.Geom) bool {
	if g.IsEmpty() {
		return false
	}
	if q.Contained {
		return q.contained(g)
	}
	return q.minDist(g) <= q.Radius
}

// Distance is the distance reported with with_distance: from the feature's
// centroid to the query's point, nearest point, line, or polygon boundary.
func (q *Near) Distance(g wkb.Geom) float64 {
	cx, cy, ok := Centroid(g)
	if !ok {
		return math.NaN()
	}
	if q.Kind == KindPolygon {
		return q.distToEdges(cx, cy)
	}
	return q.DistTo(cx, cy)
}

// forEachPart calls fn for each simple part of g (points, lines, polygons).
func forEachPart(g wkb.Geom, fn func(wkb.Geom) bool) bool {
	switch g.Type {
	case wkb.Point, wkb.LineString, wkb.Polygon:
		return fn(g)
	}
	for _, p := range g.Parts {
		if !forEachPart(p, fn) {
			return false
		}
	}
	return true
}

// minDist is the smallest distance between g and the query geometry (0 when
// they meet), stopping early once it is within the radius.
func (q *Near) minDist(g wkb.Geom) float64 {
	d := math.Inf(1)
	forEachPart(g, func(p wkb.Geom) bool {
		d = math.Min(d, q.partMinDist(p))
		return d > q.Radius
	})
	return d
}

func (q *Near) partMinDist(p wkb.Geom) float64 {
	var lines [][]float64 // the part's edges as polylines
	switch p.Type {
	case wkb.Point:
		if len(p.Coords) < 2 {
			return math.Inf(1)
		}
		return q.DistTo(p.Coords[0], p.Coords[1])
	case wkb.LineString:
		lines = [][]float64{p.Coords}
	case wkb.Polygon:
		lines = p.Rings
		// The query geometry inside the polygon's area touches it.
		if len(q.XY) >= 2 && len(p.Rings) > 0 && inPolygon(q.XY[0], q.XY[1], p.Rings) {
			return 0
		}
		if q.Kind == KindPoints {
			for i := 2; i+1 < len(q.XY); i += 2 {
				if inPolygon(q.XY[i], q.XY[i+1], p.Rings) {
					return 0
				}
			}
		}
	}
	d := math.Inf(1)
	for _, l := range lines {
		for i := 0; i+1 < len(l); i += 2 {
			d = math.Min(d, q.DistTo(l[i], l[i+1]))
			if d == 0 {
				return 0
			}
		}
		// Edges crossing the query's edges meet it.
		crossed := false
		for i := 0; i+3 < len(l) && !crossed; i += 2 {
			q.segs(func(ax, ay, bx, by float64) bool {
				if q.Metric.planar {
					crossed = segmentsIntersect(l[i], l[i+1], l[i+2], l[i+3], ax, ay, bx, by)
				} else {
					crossed = arcsCross(l[i], l[i+1], l[i+2], l[i+3], ax, ay, bx, by)
				}
				return !crossed
			})
		}
		if crossed {
			return 0
		}
	}
	// The query's vertices to the part's edges.
	for i := 0; i+1 < len(q.XY); i += 2 {
		for _, l := range lines {
			for j := 0; j+3 < len(l); j += 2 {
				d = math.Min(d, q.Metric.DistSeg(q.XY[i], q.XY[i+1], l[j], l[j+1], l[j+2], l[j+3]))
			}
			if len(l) == 2 {
				d = math.Min(d, q.Metric.Dist(q.XY[i], q.XY[i+1], l[0], l[1]))
			}
		}
	}
	return d
}

// contained reports whether every part of g lies within the buffer.
func (q *Near) contained(g wkb.Geom) bool {
	return forEachPart(g, func(p wkb.Geom) bool {
		switch p.Type {
		case wkb.Point:
			return len(p.Coords) < 2 || q.MatchPoint(p.Coords[0], p.Coords[1])
		case wkb.LineString:
			return q.lineWithin(p.Coords)
		case wkb.Polygon:
			if q.Kind == KindPolygon && q.Radius == 0 {
				return len(p.Rings) == 0 || ringWithinPolygon(p.Rings[0], q.XY)
			}
			if len(p.Rings) == 0 {
				return true
			}
			if q.Kind == KindPoint && !q.Metric.planar && q.Radius > math.Pi/2*q.Metric.scale && q.Radius < math.Pi*q.Metric.scale {
				// A disc larger than a hemisphere leaves out a small disc
				// around the antipode, which the polygon may surround.
				if ox, oy := antipode(q.XY[0], q.XY[1]); inPolygon(ox, oy, p.Rings) {
					return false
				}
			}
			return q.lineWithin(p.Rings[0]) // holes lie inside the shell
		}
		return true
	})
}

// lineWithin reports whether a polyline lies within the buffer.
func (q *Near) lineWithin(xy []float64) bool {
	for i := 0; i+1 < len(xy); i += 2 {
		if q.DistTo(xy[i], xy[i+1]) > q.Radius {
			return false
		}
	}
	if q.Kind == KindPoint {
		return q.discHolds(xy)
	}
	for i := 0; i+3 < len(xy); i += 2 {
		if !q.edgeWithin(xy[i], xy[i+1], xy[i+2], xy[i+3]) {
			return false
		}
	}
	return true
}

// discHolds reports whether the edges of a polyline whose vertices lie in
// the disc around the query's point lie in it too. A disc no larger than a
// hemisphere holds the arcs between its points (as a planar disc holds the
// segments); a larger one holds an arc when the arc keeps clear of the small
// disc around the antipode that is left out.
func (q *Near) discHolds(xy []float64) bool {
	if q.Metric.planar {
		return true
	}
	half := math.Pi * q.Metric.scale // half the great circle
	if q.Radius <= half/2 {
		return true
	}
	if q.Radius >= half {
		return true
	}
	ox, oy := antipode(q.XY[0], q.XY[1])
	for i := 0; i+3 < len(xy); i += 2 {
		if q.Metric.DistSeg(ox, oy, xy[i], xy[i+1], xy[i+2], xy[i+3]) < half-q.Radius {
			return false
		}
	}
	return true
}

// antipode is the point opposite (x, y).
func antipode(x, y float64) (float64, float64) {
	if x < 0 {
		return x + 180, -y
	}
	return x - 180, -y
}

// edgeWithin reports whether every point of the edge a–b (whose ends are
// within the buffer) lies within it. The distance to the query geometry
// changes no faster than the distance travelled along the edge, so a piece
// of length l whose ends are at distances d0 and d1 comes no farther than
// (d0+d1+l)/2: pieces are halved until that bound is within the radius, or
// a point beyond it is found. Bounds within a millionth of the radius
// over it count as within; a piece that would need more than maxPieces
// halvings is judged by the points tested.
func (q *Near) edgeWithin(ax, ay, bx, by float64) bool {
	l := q.Metric.Dist(ax, ay, bx, by)
	r := q.Radius + 1e-6*q.Radius + 1e-9*q.Metric.scale
	type piece struct{ t0, t1, d0, d1 float64 }
	stack := []piece{{0, 1, q.DistTo(ax, ay), q.DistTo(bx, by)}}
	for n := 0; len(stack) > 0 && n < maxPieces; n++ {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if (p.d0+p.d1+l*(p.t1-p.t0))/2 <= r {
			continue
		}
		tm := (p.t0 + p.t1) / 2
		x, y := q.Metric.Interpolate(ax, ay, bx, by, tm)
		dm := q.DistTo(x, y)
		if dm > q.Radius {
			return false
		}
		stack = append(stack, piece{p.t0, tm, p.d0, dm}, piece{tm, p.t1, dm, p.d1})
	}
	return true
}

// maxPieces bounds the pieces edgeWithin examines on one edge.
const maxPieces = 1 << 14

// ringWithinPolygon reports whether a ring lies inside (or on) a polygon
// ring: its vertices inside, and none of its edges crossing the boundary.
func ringWithinPolygon(ring, poly []float64) bool {
	for i := 0; i+1 < len(ring); i += 2 {
		if !pointInRing(ring[i], ring[i+1], poly) {
			return false
		}
	}
	for i := 0; i+3 < len(ring); i += 2 {
		for j := 0; j+3 < len(poly); j += 2 {
			if segmentsCross(ring[i], ring[i+1], ring[i+2], ring[i+3], poly[j], poly[j+1], poly[j+2], poly[j+3]) {
				return false
			}
		}
		// An edge between two boundary vertices may run outside a concave polygon.
		mx, my := (ring[i]+ring[i+2])/2, (ring[i+1]+ring[i+3])/2
		if !pointInRing(mx, my, poly) {
			return false
		}
	}
	return true
}

// Boxes returns the lon/lat boxes that contain every feature the query can
// match, for a spatial index: on the sphere, around its points and its
// edges taken as great-circle arcs (and a polygon's lon/lat box, its
// inside), split at the antimeridian and widened near the poles; in
// degrees, its box widened by the radius.
func (q *Near) Boxes() []wkb.Rect {
	if q.Metric.planar {
		r := wkb.EmptyRect
		for i := 0; i+1 < len(q.XY); i += 2 {
			r = r.Extend(wkb.Rect{MinX: q.XY[i], MinY: q.XY[i+1], MaxX: q.XY[i], MaxY: q.XY[i+1]})
		}
		d := q.Radius * (1 + 1e-9)
		return []wkb.Rect{{MinX: r.MinX - d, MinY: math.Max(r.MinY-d, -90), MaxX: r.MaxX + d, MaxY: math.Min(r.MaxY+d, 90)}}
	}
	var bands []latBand
	switch q.Kind {
	case KindLine, KindPolygon:
		q.segs(func(ax, ay, bx, by float64) bool {
			lo, hi := arcLat(ax, ay, bx, by)
			bands = append(bands, latBand{arcLon(ax, ay, bx, by), lo, hi})
			return true
		})
		if q.Kind == KindPolygon {
			r := wkb.EmptyRect
			for i := 0; i+1 < len(q.XY); i += 2 {
				r = r.Extend(wkb.Rect{MinX: q.XY[i], MinY: q.XY[i+1], MaxX: q.XY[i], MaxY: q.XY[i+1]})
			}
			bands = append(bands, latBand{lonSpan{normLon(r.MinX), r.MaxX - r.MinX}, r.MinY, r.MaxY})
		}
	}
	for i := 0; i+1 < len(q.XY); i += 2 {
		bands = append(bands, latBand{arcLon(q.XY[i], q.XY[i+1], q.XY[i], q.XY[i+1]), q.XY[i+1], q.XY[i+1]})
	}
	return sphereBoxes(bands, q.Metric.Degrees(q.Radius)*(1+1e-9)+1e-12)
}

// BBoxRects returns the boxes of a bbox parameter w,s,e,n: one, or two when
// w > e (the box crosses the antimeridian).
func BBoxRects(w, s, e, n float64) []wkb.Rect {
	if w <= e {
		return []wkb.Rect{{MinX: w, MinY: s, MaxX: e, MaxY: n}}
	}
	return []wkb.Rect{{MinX: w, MinY: s, MaxX: 180, MaxY: n}, {MinX: -180, MinY: s, MaxX: e, MaxY: n}}
}

// Exact is the exact spatial test of a feature query, after an index has
// found the candidates: the bbox parameter's boxes (nil: none) and the
// buffer query (nil: none). Both stores' engines test with it.
type Exact struct {
	BBox []wkb.Rect
	Near *Near
}

// None reports whether the query has no spatial test.
func (e Exact) None() bool { return e.BBox == nil && e.Near == nil }

// MatchPoint is the test of a point.
func (e Exact) MatchPoint(x, y float64) bool {
	if e.BBox != nil && !inAny(x, y, e.BBox) {
		return false
	}
	return e.Near == nil || e.Near.MatchPoint(x, y)
}

// Match is the test of a geometry.
func (e Exact) Match(g wkb.Geom) bool {
	if e.BBox != nil && !IntersectsRects(g, e.BBox) {
		return false
	}
	return e.Near == nil || e.Near.Match(g)
}

// InAnyRect reports whether a point is in one of the boxes (edges
// included).
func InAnyRect(x, y float64, boxes []wkb.Rect) bool { return inAny(x, y, boxes) }

// IntersectsRects reports whether g meets any of the boxes (edges included).
func IntersectsRects(g wkb.Geom, boxes []wkb.Rect) bool {
	for _, b := range boxes {
		if intersectsRect(g, b) {
			return true
		}
	}
	return false
}

func inRect(x, y float64, b wkb.Rect) bool {
	return x >= b.MinX && x <= b.MaxX && y >= b.MinY && y <= b.MaxY
}

func intersectsRect(g wkb.Geom, b wkb.Rect) bool {
	return !forEachPart(g, func(p wkb.Geom) bool {
		var lines [][]float64
		switch p.Type {
		case wkb.Point:
			return !(len(p.Coords) >= 2 && inRect(p.Coords[0], p.Coords[1], b))
		case wkb.LineString:
			lines = [][]float64{p.Coords}
		case wkb.Polygon:
			lines = p.Rings
			if len(p.Rings) > 0 && inPolygon(b.MinX, b.MinY, p.Rings) {
				return false // the box lies in the polygon's area
			}
		}
		corners := []float64{b.MinX, b.MinY, b.MaxX, b.MinY, b.MaxX, b.MaxY, b.MinX, b.MaxY, b.MinX, b.MinY}
		for _, l := range lines {
			for i := 0; i+1 < len(l); i += 2 {
				if inRect(l[i], l[i+1], b) {
					return false
				}
			}
			for i := 0; i+3 < len(l); i += 2 {
				for j := 0; j+3 < len(corners); j += 2 {
					if segmentsIntersect(l[i], l[i+1], l[i+2], l[i+3], corners[j], corners[j+1], corners[j+2], corners[j+3]) {
						return false
					}
				}
			}
		}
		return true
	})
}

// pointInRing reports whether (x, y) is inside or on a closed ring (planar
// lon/lat).
func pointInRing(x, y float64, ring []float64) bool {
	in := false
	n := len(ring) / 2
	for i, j := 0, n-1; i < n; j, i = i, i+1 {
		xi, yi, xj, yj := ring[2*i], ring[2*i+1], ring[2*j], ring[2*j+1]
		if y < yi && y < yj || y > yi && y > yj {
			continue // neither holds the point nor crosses its row
		}
		if onSegment(x, y, xi, yi, xj, yj) {
			return true
		}
		if (yi > y) != (yj > y) && x < (xj-xi)*(y-yi)/(yj-yi)+xi {
			in = !in
		}
	}
	return in
}

// inPolygon reports whether a point is in a polygon's area: in its shell
// and not strictly inside a hole.
func inPolygon(x, y float64, rings [][]float64) bool {
	if len(rings) == 0 || !pointInRing(x, y, rings[0]) {
		return false
	}
	for _, h := range rings[1:] {
		if pointInRing(x, y, h) && !onRing(x, y, h) {
			return false
		}
	}
	return true
}

func onRing(x, y float64, ring []float64) bool {
	for i := 0; i+3 < len(ring); i += 2 {
		if onSegment(x, y, ring[i], ring[i+1], ring[i+2], ring[i+3]) {
			return true
		}
	}
	return false
}

func orient(ax, ay, bx, by, cx, cy float64) float64 {
	return (bx-ax)*(cy-ay) - (by-ay)*(cx-ax)
}

func onSegment(x, y, ax, ay, bx, by float64) bool {
	return orient(ax, ay, bx, by, x, y) == 0 &&
		x >= math.Min(ax, bx) && x <= math.Max(ax, bx) && y >= math.Min(ay, by) && y <= math.Max(ay, by)
}

// segmentsIntersect reports whether two closed segments share a point.
func segmentsIntersect(ax, ay, bx, by, cx, cy, dx, dy float64) bool {
	d1 := orient(cx, cy, dx, dy, ax, ay)
	d2 := orient(cx, cy, dx, dy, bx, by)
	d3 := orient(ax, ay, bx, by, cx, cy)
	d4 := orient(ax, ay, bx, by, dx, dy)
	if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) {
		return true
	}
	return onSegment(ax, ay, cx, cy, dx, dy) || onSegment(bx, by, cx, cy, dx, dy) ||
		onSegment(cx, cy, ax, ay, bx, by) || onSegment(dx, dy, ax, ay, bx, by)
}

// segmentsCross reports whether two segments cross properly (each strictly
// on both sides of the other).
func segmentsCross(ax, ay, bx, by, cx, cy, dx, dy float64) bool {
	d1 := orient(cx, cy, dx, dy, ax, ay)
	d2 := orient(cx, cy, dx, dy, bx, by)
	d3 := orient(ax, ay, bx, by, cx, cy)
	d4 := orient(ax, ay, bx, by, dx, dy)
	return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))
}

// Centroid returns the planar lon/lat centroid of g's highest-dimension
// parts: area-weighted for polygons, length-weighted for lines, the mean
// for points. ok is false for an empty geometry.
func Centroid(g wkb.Geom) (x, y float64, ok bool) {
	var ax, ay, aw float64 // areas
	var lx, ly, lw float64 // lengths
	var px, py, pn float64 // points
	var vx, vy, vn float64 // every vertex, for degenerate shapes
	vertex := func(xy []float64) {
		for i := 0; i+1 < len(xy); i += 2 {
			vx, vy, vn = vx+xy[i], vy+xy[i+1], vn+1
		}
	}
	line := func(xy []float64) {
		vertex(xy)
		for i := 0; i+3 < len(xy); i += 2 {
			l := math.Hypot(xy[i+2]-xy[i], xy[i+3]-xy[i+1])
			lx += l * (xy[i] + xy[i+2]) / 2
			ly += l * (xy[i+1] + xy[i+3]) / 2
			lw += l
		}
	}
	forEachPart(g, func(p wkb.Geom) bool {
		switch p.Type {
		case wkb.Point:
			if len(p.Coords) >= 2 {
				px, py, pn = px+p.Coords[0], py+p.Coords[1], pn+1
				vertex(p.Coords)
			}
		case wkb.LineString:
			line(p.Coords)
		case wkb.Polygon:
			for i, r := range p.Rings {
				line(r)
				a, cx, cy := ringCentroid(r)
				if i > 0 {
					a = -a // holes take away
				}
				ax, ay, aw = ax+a*cx, ay+a*cy, aw+a
			}
		}
		return true
	})
	switch {
	case aw > 0:
		return ax / aw, ay / aw, true
	case lw > 0:
		return lx / lw, ly / lw, true
	case pn > 0:
		return px / pn, py / pn, true
	case vn > 0:
		return vx / vn, vy / vn, true
	}
	return 0, 0, false
}

// ringCentroid returns the absolute area of a ring and its centroid.
func ringCentroid(r []float64) (area, cx, cy float64) {
	var a, x, y float64
	for i := 0; i+3 < len(r); i += 2 {
		c := r[i]*r[i+3] - r[i+2]*r[i+1]
		a += c
		x += (r[i] + r[i+2]) * c
		y += (r[i+1] + r[i+3]) * c
	}
	if a == 0 {
		return 0, 0, 0
	}
	return math.Abs(a) / 2, x / (3 * a), y / (3 * a)
}
