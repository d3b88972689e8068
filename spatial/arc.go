package spatial

import (
	"cmp"
	"math"
	"slices"

	"mapcommons/format/wkb"
)

// The lon/lat extent of great-circle arcs. An arc shorter than half the
// circle spans less than 180° of longitude, monotonically, the short way
// round (across the antimeridian when its ends are more than 180° apart);
// its latitude may bulge beyond its ends' towards a pole.

// lonSpan is an interval of longitude on the circle: from lo eastwards by
// width degrees (lo in [-180, 180), width in [0, 360]).
type lonSpan struct{ lo, width float64 }

func normLon(x float64) float64 {
	x = math.Mod(x+180, 360)
	if x < 0 {
		x += 360
	}
	return x - 180
}

// arcLat returns the latitude range of the arc a–b.
func arcLat(ax, ay, bx, by float64) (lo, hi float64) {
	lo, hi = math.Min(ay, by), math.Max(ay, by)
	va, vb := unit(ax, ay), unit(bx, by)
	n := va.cross(vb)
	nl := n.norm()
	if nl < 1e-15 {
		return lo, hi
	}
	// The highest point of the great circle is the pole's projection onto
	// its plane; the lowest is its opposite. Either counts when on the arc.
	h := math.Hypot(n.x, n.y)
	if h < 1e-15 {
		return lo, hi // the equator
	}
	top := vec3{-n.x * n.z / nl, -n.y * n.z / nl, h * h / nl} // z − (z·n̂)n̂, scaled by |n|
	peak := math.Acos(math.Min(1, math.Abs(n.z)/nl)) / rad
	if onArc(top, va, vb, n) {
		hi = math.Max(hi, peak)
	}
	if onArc(vec3{-top.x, -top.y, -top.z}, va, vb, n) {
		lo = math.Min(lo, -peak)
	}
	return lo, hi
}

// onArc reports whether p, on the great circle of a and b with normal
// n = a×b, lies on the arc between them.
func onArc(p, a, b, n vec3) bool {
	return a.cross(p).dot(n) >= 0 && p.cross(b).dot(n) >= 0
}

// arcLon returns the longitude span of the arc a–b; all of it when the arc
// passes a pole or its ends are half a turn apart.
func arcLon(ax, ay, bx, by float64) lonSpan {
	if math.Abs(ay) >= 90 || math.Abs(by) >= 90 {
		// At a pole longitude means nothing: the arc runs along the meridian
		// of its other end.
		x := ax
		if math.Abs(ay) >= 90 {
			x = bx
		}
		return lonSpan{normLon(x), 0}
	}
	d := normLon(bx - ax)
	if d == -180 || math.Abs(d) == 180 {
		return lonSpan{-180, 360}
	}
	if d >= 0 {
		return lonSpan{normLon(ax), d}
	}
	return lonSpan{normLon(bx), -d}
}

// crossesAntimeridian reports whether the arc a–b runs the short way across
// longitude ±180 (its ends more than half a turn apart in longitude).
func crossesAntimeridian(ax, bx float64) bool { return math.Abs(bx-ax) > 180 }

// arcsCross reports whether the arcs a–b and c–d share a point that is
// interior to both great circles' arcs (crossing; touching at ends or
// running along the same circle is found by the distances to the ends).
func arcsCross(ax, ay, bx, by, cx, cy, dx, dy float64) bool {
	va, vb, vc, vd := unit(ax, ay), unit(bx, by), unit(cx, cy), unit(dx, dy)
	n1, n2 := va.cross(vb), vc.cross(vd)
	if n1.norm() < 1e-15 || n2.norm() < 1e-15 {
		return false
	}
	p := n1.cross(n2)
	if p.norm() < 1e-15 {
		return false
	}
	if onArc(p, va, vb, n1) && onArc(p, vc, vd, n2) {
		return true
	}
	p = vec3{-p.x, -p.y, -p.z}
	return onArc(p, va, vb, n1) && onArc(p, vc, vd, n2)
}

// IndexBounds is the box a feature is indexed under: it holds the feature
// both as drawn in lon/lat (its vertices' box) and with its edges taken as
// great-circle arcs (their bulge towards a pole; all longitudes when an
// edge crosses the antimeridian), so that the index finds it for bbox and
// for radius queries alike. ok is false for an empty geometry.
func IndexBounds(g wkb.Geom) (wkb.Rect, bool) {
	r, ok := g.Bounds()
	if !ok {
		return r, false
	}
	eachEdge(g, func(ax, ay, bx, by float64) {
		lo, hi := arcLat(ax, ay, bx, by)
		r.MinY, r.MaxY = math.Min(r.MinY, lo), math.Max(r.MaxY, hi)
		if crossesAntimeridian(ax, bx) || arcLon(ax, ay, bx, by).width >= 360 {
			r.MinX, r.MaxX = -180, 180
		}
	})
	r.MinY, r.MaxY = math.Max(r.MinY, -90), math.Min(r.MaxY, 90)
	return r, true
}

// eachEdge calls fn for every edge of g's lines and rings.
func eachEdge(g wkb.Geom, fn func(ax, ay, bx, by float64)) {
	forEachPart(g, func(p wkb.Geom) bool {
		lines := p.Rings
		if p.Type == wkb.LineString {
			lines = [][]float64{p.Coords}
		}
		if p.Type == wkb.Point {
			lines = nil
		}
		for _, l := range lines {
			for i := 0; i+3 < len(l); i += 2 {
				fn(l[i], l[i+1], l[i+2], l[i+3])
			}
		}
		return true
	})
}

// latBand is a span of longitude with a range of latitude.
type latBand struct {
	lon    lonSpan
	lo, hi float64
}

// sphereBoxes returns boxes holding every point within angular distance
// delta (degrees) of any of the bands.
func sphereBoxes(bands []latBand, delta float64) []wkb.Rect {
	minY, maxY := 90.0, -90.0
	spans := make([]lonSpan, 0, len(bands))
	full := delta >= 90
	for _, b := range bands {
		lo, hi := b.lo-delta, b.hi+delta
		minY, maxY = math.Min(minY, lo), math.Max(maxY, hi)
		polar := math.Max(math.Abs(lo), math.Abs(hi))
		if full || polar >= 89.999 || b.lon.width >= 360 {
			full = true
			continue
		}
		// A circle of angular radius δ around latitude φ spans
		// asin(sin δ / cos φ) of longitude; bound it with the highest φ.
		s := math.Sin(delta*rad) / math.Cos(polar*rad)
		if s >= 1 {
			full = true
			continue
		}
		dx := math.Asin(s) / rad * (1 + 1e-9)
		w := b.lon.width + 2*dx
		if w >= 360 {
			full = true
			continue
		}
		spans = append(spans, lonSpan{normLon(b.lon.lo - dx), w})
	}
	minY, maxY = math.Max(minY, -90), math.Min(maxY, 90)
	if full || len(spans) == 0 {
		return []wkb.Rect{{MinX: -180, MinY: minY, MaxX: 180, MaxY: maxY}}
	}
	// The spans cover all longitudes but the largest gap between them. Cut
	// those that run past 180 in two, then walk them west to east.
	for i, n := 0, len(spans); i < n; i++ {
		if s := spans[i]; s.lo+s.width > 180 {
			spans[i].width = 180 - s.lo
			spans = append(spans, lonSpan{-180, s.lo + s.width - 180})
		}
	}
	slices.SortFunc(spans, func(a, b lonSpan) int { return cmp.Compare(a.lo, b.lo) })
	gapLo, gapW := 0.0, -1.0
	end := spans[0].lo + spans[0].width // furthest east reached so far
	for _, s := range spans[1:] {
		if s.lo > end && s.lo-end > gapW {
			gapLo, gapW = end, s.lo-end
		}
		end = math.Max(end, s.lo+s.width)
	}
	if wrap := spans[0].lo + 360 - end; wrap > gapW { // across the antimeridian
		gapLo, gapW = end, wrap
	}
	if gapW <= 0 {
		return []wkb.Rect{{MinX: -180, MinY: minY, MaxX: 180, MaxY: maxY}}
	}
	// Covered: from the gap's end eastwards to its start.
	lo := normLon(gapLo + gapW)
	hi := lo + 360 - gapW
	if hi <= 180 {
		out := []wkb.Rect{{MinX: lo, MinY: minY, MaxX: hi, MaxY: maxY}}
		// Longitudes -180 and 180 are one meridian.
		if lo == -180 {
			out = append(out, wkb.Rect{MinX: 180, MinY: minY, MaxX: 180, MaxY: maxY})
		} else if hi == 180 {
			out = append(out, wkb.Rect{MinX: -180, MinY: minY, MaxX: -180, MaxY: maxY})
		}
		return out
	}
	return []wkb.Rect{
		{MinX: lo, MinY: minY, MaxX: 180, MaxY: maxY},
		{MinX: -180, MinY: minY, MaxX: hi - 360, MaxY: maxY},
	}
}
