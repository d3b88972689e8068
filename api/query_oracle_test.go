package api_test

// An oracle for the query language of GET /datasets/{id}/features.json: the
// real shapefiles and generated CSV datasets are uploaded, hundreds of seeded
// random queries are sent through the HTTP handler, and every answer is
// compared with a brute-force scan of all features written here, with its
// own geometry (haversine on unit vectors, winding-number point in polygon,
// Liang–Barsky box clipping, slerp sampling of great-circle arcs),
// independent of package spatial.
//
// Sampling arcs makes the oracle's distances approximate, so a feature whose
// oracle distance lies within max(0.2% of the radius, the sampling step) of
// the radius is left out of a comparison; the tests count them and require
// that they are few. Only the 0.2% applies where the distance the oracle
// found (that of a real point of the feature) settles the verdict anyway:
// sampling can miss nearer points (intersect=full) or farther points
// (contained), never the other way round. TestQueryOracleSelfCheck checks
// the oracle itself against brute force.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mapcommons/format/shapefile"
	"mapcommons/format/wkb"
)

// ---------------------------------------------------------------------------
// Oracle geometry.

const (
	oEarthRadius = 6371008.8 // metres
	oMaxSamples  = 128       // points per edge the oracle samples at most
	oStepFrac    = 0.001     // sampling step as a fraction of the radius
)

var oUnitMetres = map[string]float64{"km": 1000, "m": 1, "ft": 0.3048, "miles": 1609.344}

type v3 [3]float64

func oVec(lon, lat float64) v3 {
	phi, lam := lat*math.Pi/180, lon*math.Pi/180
	return v3{math.Cos(phi) * math.Cos(lam), math.Cos(phi) * math.Sin(lam), math.Sin(phi)}
}

func (a v3) dot(b v3) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
func (a v3) cross(b v3) v3 {
	return v3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}
func (a v3) norm() float64    { return math.Sqrt(a.dot(a)) }
func (a v3) mul(s float64) v3 { return v3{a[0] * s, a[1] * s, a[2] * s} }
func (a v3) plus(b v3) v3     { return v3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func (a v3) minus(b v3) v3    { return v3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func oAngle(a, b v3) float64  { return math.Atan2(a.cross(b).norm(), a.dot(b)) }
func oLonLat(v v3) (x, y float64) {
	return math.Atan2(v[1], v[0]) * 180 / math.Pi, math.Atan2(v[2], math.Hypot(v[0], v[1])) * 180 / math.Pi
}

// oSlerp is the point a fraction t along the great-circle arc from a to b.
func oSlerp(a, b v3, t float64) v3 {
	w := oAngle(a, b)
	if w < 1e-15 {
		return a
	}
	s := math.Sin(w)
	return a.mul(math.Sin((1-t)*w) / s).plus(b.mul(math.Sin(t*w) / s))
}

// oArcAngle is the angle between p and the nearest point of the arc a–b:
// the foot of p on the arc's great circle when it lies on the arc (the
// angles a–foot and foot–b add up to a–b), else the nearer end.
func oArcAngle(p, a, b v3) float64 {
	best := math.Min(oAngle(p, a), oAngle(p, b))
	n := a.cross(b)
	nl := n.norm()
	if nl < 1e-15 {
		return best
	}
	n = n.mul(1 / nl)
	c := p.minus(n.mul(p.dot(n)))
	cl := c.norm()
	if cl < 1e-15 {
		return best
	}
	c = c.mul(1 / cl)
	if oAngle(a, c)+oAngle(c, b) <= oAngle(a, b)+1e-12 {
		best = math.Min(best, oAngle(p, c))
	}
	return best
}

// oSegDeg is the planar distance from p to the segment a–b in degrees.
func oSegDeg(px, py, ax, ay, bx, by float64) float64 {
	ux, uy := bx-ax, by-ay
	wx, wy := px-ax, py-ay
	l := ux*ux + uy*uy
	if l == 0 {
		return math.Hypot(wx, wy)
	}
	t := (wx*ux + wy*uy) / l
	switch {
	case t <= 0:
		return math.Hypot(wx, wy)
	case t >= 1:
		return math.Hypot(px-bx, py-by)
	}
	return math.Hypot(px-(ax+t*ux), py-(ay+t*uy))
}

// oOnSeg reports whether (x, y) lies on the closed segment a–b.
func oOnSeg(x, y, ax, ay, bx, by float64) bool {
	if (bx-ax)*(y-ay)-(by-ay)*(x-ax) != 0 {
		return false
	}
	return math.Min(ax, bx) <= x && x <= math.Max(ax, bx) && math.Min(ay, by) <= y && y <= math.Max(ay, by)
}

// oInRing: winding number of a closed ring around (x, y), the boundary
// counting as inside.
func oInRing(x, y float64, ring []float64) bool {
	wn := 0
	n := len(ring) / 2
	for i := 0; i < n; i++ {
		j := (i + 1) % n
		ax, ay, bx, by := ring[2*i], ring[2*i+1], ring[2*j], ring[2*j+1]
		if oOnSeg(x, y, ax, ay, bx, by) {
			return true
		}
		left := (bx-ax)*(y-ay) - (x-ax)*(by-ay)
		if ay <= y {
			if by > y && left > 0 {
				wn++
			}
		} else if by <= y && left < 0 {
			wn--
		}
	}
	return wn != 0
}

func oOnRing(x, y float64, ring []float64) bool {
	n := len(ring) / 2
	for i := 0; i < n; i++ {
		j := (i + 1) % n
		if oOnSeg(x, y, ring[2*i], ring[2*i+1], ring[2*j], ring[2*j+1]) {
			return true
		}
	}
	return false
}

// oInArea: in the shell and not strictly inside a hole.
func oInArea(x, y float64, rings [][]float64) bool {
	if len(rings) == 0 || !oInRing(x, y, rings[0]) {
		return false
	}
	for _, h := range rings[1:] {
		if oInRing(x, y, h) && !oOnRing(x, y, h) {
			return false
		}
	}
	return true
}

// oBox is a closed lon/lat box.
type oBox struct{ minX, minY, maxX, maxY float64 }

func oBoxesOf(w, s, e, n float64) []oBox {
	if w <= e {
		return []oBox{{w, s, e, n}}
	}
	return []oBox{{w, s, 180, n}, {-180, s, e, n}}
}

func (b oBox) has(x, y float64) bool {
	return x >= b.minX && x <= b.maxX && y >= b.minY && y <= b.maxY
}

// clips reports whether the segment a–b meets the box (Liang–Barsky).
func (b oBox) clips(ax, ay, bx, by float64) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := bx-ax, by-ay
	for _, pq := range [4][2]float64{{-dx, ax - b.minX}, {dx, b.maxX - ax}, {-dy, ay - b.minY}, {dy, b.maxY - ay}} {
		p, q := pq[0], pq[1]
		if p == 0 {
			if q < 0 {
				return false
			}
			continue
		}
		r := q / p
		if p < 0 {
			if r > t1 {
				return false
			}
			t0 = math.Max(t0, r)
		} else {
			if r < t0 {
				return false
			}
			t1 = math.Min(t1, r)
		}
	}
	return true
}

// ---------------------------------------------------------------------------
// Oracle features.

const (
	oPoint = 1
	oLine  = 2
	oPoly  = 3
)

type oPt struct {
	x, y float64
	v    v3
}

// oPart is a simple part of a feature: a point (one ring of one point), a
// line (one ring) or a polygon (shell, then holes).
type oPart struct {
	kind  int
	rings [][]float64
	pts   [][]oPt
}

type oFeat struct {
	pos    int
	parts  []oPart
	vals   []any // int64, float64, string or nil, aligned with the dataset's attributes
	cx, cy float64
	// bounds for pruning: a spherical cap around every point, a planar box
	capC       v3
	capR       float64 // radians; π when there is no useful cap
	bb         oBox
	maxEdgeRad float64
	maxEdgeDeg float64
}

func oMakePart(kind int, rings ...[]float64) oPart {
	p := oPart{kind: kind, rings: rings}
	for _, r := range rings {
		pts := make([]oPt, len(r)/2)
		for i := range pts {
			pts[i] = oPt{r[2*i], r[2*i+1], oVec(r[2*i], r[2*i+1])}
		}
		p.pts = append(p.pts, pts)
	}
	return p
}

// oPartsOf walks a decoded geometry into simple parts.
func oPartsOf(g wkb.Geom) []oPart {
	switch g.Type {
	case wkb.Point:
		if len(g.Coords) >= 2 {
			return []oPart{oMakePart(oPoint, g.Coords[:2])}
		}
		return nil
	case wkb.LineString:
		return []oPart{oMakePart(oLine, g.Coords)}
	case wkb.Polygon:
		if len(g.Rings) == 0 {
			return nil
		}
		return []oPart{oMakePart(oPoly, g.Rings...)}
	}
	var out []oPart
	for _, p := range g.Parts {
		out = append(out, oPartsOf(p)...)
	}
	return out
}

// finish computes the centroid and the bounds.
func (f *oFeat) finish() {
	// Centroid, planar in lon/lat: by area, else by length, else the mean.
	var a, ax, ay, l, lx, ly, n, px, py float64
	for _, p := range f.parts {
		switch p.kind {
		case oPoint:
			n, px, py = n+1, px+p.rings[0][0], py+p.rings[0][1]
		case oLine:
			r := p.rings[0]
			for i := 0; i+3 < len(r); i += 2 {
				s := math.Hypot(r[i+2]-r[i], r[i+3]-r[i+1])
				l, lx, ly = l+s, lx+s*(r[i]+r[i+2])/2, ly+s*(r[i+1]+r[i+3])/2
			}
		case oPoly:
			for k, r := range p.rings {
				// shoelace relative to the first vertex
				x0, y0 := r[0], r[1]
				var sa, sx, sy float64
				for i := 0; i+3 < len(r); i += 2 {
					xi, yi, xj, yj := r[i]-x0, r[i+1]-y0, r[i+2]-x0, r[i+3]-y0
					c := xi*yj - xj*yi
					sa += c
					sx += (xi + xj) * c
					sy += (yi + yj) * c
				}
				if sa == 0 {
					continue
				}
				area := math.Abs(sa) / 2
				cx, cy := x0+sx/(3*sa), y0+sy/(3*sa)
				if k > 0 {
					area = -area
				}
				a, ax, ay = a+area, ax+area*cx, ay+area*cy
			}
		}
	}
	switch {
	case a > 0:
		f.cx, f.cy = ax/a, ay/a
	case l > 0:
		f.cx, f.cy = lx/l, ly/l
	case n > 0:
		f.cx, f.cy = px/n, py/n
	}
	// Bounds.
	f.bb = oBox{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	var sum v3
	for _, p := range f.parts {
		for _, ring := range p.pts {
			for i, q := range ring {
				sum = sum.plus(q.v)
				f.bb = oBox{math.Min(f.bb.minX, q.x), math.Min(f.bb.minY, q.y), math.Max(f.bb.maxX, q.x), math.Max(f.bb.maxY, q.y)}
				if i > 0 {
					f.maxEdgeRad = math.Max(f.maxEdgeRad, oAngle(ring[i-1].v, q.v))
					f.maxEdgeDeg = math.Max(f.maxEdgeDeg, math.Hypot(q.x-ring[i-1].x, q.y-ring[i-1].y))
				}
			}
		}
	}
	f.capR = math.Pi
	if s := sum.norm(); s > 1e-6 {
		f.capC = sum.mul(1 / s)
		r := 0.0
		for _, p := range f.parts {
			for _, ring := range p.pts {
				for _, q := range ring {
					r = math.Max(r, oAngle(f.capC, q.v))
				}
			}
		}
		if r < math.Pi/2-0.01 { // a cap smaller than a hemisphere holds the arcs between its points
			f.capR = r * (1 + 1e-9)
		}
	}
}

// hitsBoxes is the oracle of bbox: planar, edges included.
func (f *oFeat) hitsBoxes(boxes []oBox) bool {
	for _, b := range boxes {
		for _, p := range f.parts {
			if p.kind == oPoint {
				if b.has(p.rings[0][0], p.rings[0][1]) {
					return true
				}
				continue
			}
			for _, r := range p.rings {
				if len(r) == 2 && b.has(r[0], r[1]) {
					return true
				}
				for i := 0; i+3 < len(r); i += 2 {
					if b.clips(r[i], r[i+1], r[i+2], r[i+3]) {
						return true
					}
				}
			}
			if p.kind == oPoly && oInArea(b.minX, b.minY, p.rings) {
				return true
			}
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// Oracle queries: distances to the query geometry Q.

type oQuery struct {
	kind      string // point, points, line, polygon
	xy        []float64
	pts       []oPt
	r         float64
	rGiven    bool
	units     string
	full      bool
	intersect string // "", "full", "contained"
	planar    bool
	scale     float64 // units per radian
	exact     float64 // tolerance of exact (unsampled) comparisons
	slack     float64 // polygon Q: how far its planar edges stray from its arcs
}

func oFmt(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func newOQuery(kind string, xy []float64, r float64, rGiven bool, units, intersect string) *oQuery {
	q := &oQuery{kind: kind, xy: xy, r: r, rGiven: rGiven, units: units, intersect: intersect, full: intersect == "full"}
	if units == "degrees" {
		q.planar, q.scale = true, 180/math.Pi
	} else {
		q.scale = oEarthRadius / oUnitMetres[units]
	}
	for i := 0; i+1 < len(xy); i += 2 {
		q.pts = append(q.pts, oPt{xy[i], xy[i+1], oVec(xy[i], xy[i+1])})
	}
	q.exact = 1e-9*q.scale + 1e-9*r
	if kind == "polygon" && !q.planar {
		for i := 0; i+1 < len(q.pts); i++ {
			a, b := q.pts[i], q.pts[i+1]
			for k := 1; k < 16; k++ {
				t := float64(k) / 16
				x, y := a.x+t*(b.x-a.x), a.y+t*(b.y-a.y)
				q.slack = math.Max(q.slack, oArcAngle(oVec(x, y), a.v, b.v)*q.scale)
			}
		}
	}
	return q
}

// params are the query's URL parameters.
func (q *oQuery) params() string {
	var b strings.Builder
	join := func(xy []float64) string {
		s := make([]string, len(xy))
		for i, v := range xy {
			s[i] = oFmt(v)
		}
		return strings.Join(s, ",")
	}
	switch q.kind {
	case "point":
		fmt.Fprintf(&b, "lat=%s&lon=%s", oFmt(q.xy[1]), oFmt(q.xy[0]))
	default:
		fmt.Fprintf(&b, "%s=%s", q.kind, join(q.xy))
	}
	if q.rGiven {
		fmt.Fprintf(&b, "&radius=%s&units=%s", oFmt(q.r), q.units)
	}
	if q.intersect != "" {
		b.WriteString("&intersect=" + q.intersect)
	}
	return b.String()
}

func (q *oQuery) dist(a, b oPt) float64 {
	if q.planar {
		return math.Hypot(a.x-b.x, a.y-b.y)
	}
	return oAngle(a.v, b.v) * q.scale
}

func (q *oQuery) segDist(p, a, b oPt) float64 {
	if q.planar {
		return oSegDeg(p.x, p.y, a.x, a.y, b.x, b.y)
	}
	return oArcAngle(p.v, a.v, b.v) * q.scale
}

func (q *oQuery) lerp(a, b oPt, t float64) oPt {
	if q.planar {
		return oPt{x: a.x + t*(b.x-a.x), y: a.y + t*(b.y-a.y)}
	}
	v := oSlerp(a.v, b.v, t)
	x, y := oLonLat(v)
	return oPt{x, y, v}
}

// toSet is the distance from p to Q's points, or to Q's edges (a line, a
// polygon's boundary).
func (q *oQuery) toSet(p oPt) float64 {
	d := math.Inf(1)
	if q.kind == "point" || q.kind == "points" {
		for _, c := range q.pts {
			d = math.Min(d, q.dist(p, c))
		}
		return d
	}
	for i := 0; i+1 < len(q.pts); i++ {
		d = math.Min(d, q.segDist(p, q.pts[i], q.pts[i+1]))
	}
	return d
}

// sd is d(p, Q), except that inside a polygon Q it is minus the distance to
// its boundary (so that radius 0 has a margin on both sides).
func (q *oQuery) sd(p oPt) float64 {
	d := q.toSet(p)
	if q.kind == "polygon" && oInRing(p.x, p.y, q.xy) {
		return -d
	}
	return d
}

// distance is with_distance's value for a feature.
func (q *oQuery) distance(f *oFeat) float64 {
	c := oPt{f.cx, f.cy, oVec(f.cx, f.cy)}
	if q.kind == "polygon" {
		return q.toSet(c)
	}
	return q.sd(c)
}

// Verdicts of the oracle.
const (
	vOut = iota
	vIn
	vBorder
)

// judgement is the oracle's answer for one feature: the verdict, and the
// distance it rests on (the smallest or largest d over the feature's
// points) with the band around the radius that counts as borderline.
type judgement struct {
	verdict int
	v, band float64
	pruned  bool
}

// judge decides whether a feature matches a radius query.
func (q *oQuery) judge(f *oFeat) judgement { return q.judgeWith(f, true) }

// judgeWith judges without the pruning by bounds when prune is false (to
// explain a disagreement with the distance it rests on).
func (q *oQuery) judgeWith(f *oFeat, prune bool) judgement {
	edge := f.maxEdgeRad * q.scale
	if q.planar {
		edge = f.maxEdgeDeg
	}
	bandU := math.Max(math.Max(0.002*q.r, edge/oMaxSamples), q.exact)
	// Prune with the feature's bounding cap (box when planar).
	var c oPt
	var rho float64
	if q.planar {
		c = oPt{x: (f.bb.minX + f.bb.maxX) / 2, y: (f.bb.minY + f.bb.maxY) / 2}
		rho = math.Hypot(f.bb.maxX-f.bb.minX, f.bb.maxY-f.bb.minY) / 2
	} else if f.capR < math.Pi {
		x, y := oLonLat(f.capC)
		c, rho = oPt{x, y, f.capC}, f.capR*q.scale
	} else {
		rho = math.Inf(1)
	}
	if prune && !math.IsInf(rho, 1) {
		dc := q.toSet(c)
		inside := q.kind == "polygon" && oInRing(c.x, c.y, q.xy)
		margin := bandU + 2*q.slack + 0.02*rho + q.exact
		if !inside && dc-rho > q.r+margin {
			return judgement{verdict: vOut, pruned: true}
		}
		if dc+rho < q.r-margin {
			return judgement{verdict: vIn, pruned: true}
		}
	}
	// The edges the oracle samples.
	sampled, step := false, 0.0
	sample := func(a, b oPt, fn func(oPt)) {
		l := q.dist(a, b)
		if l == 0 {
			return
		}
		n := oMaxSamples
		if q.r > 0 {
			n = int(math.Min(oMaxSamples, math.Max(1, math.Ceil(l/(oStepFrac*q.r)))))
		}
		sampled, step = true, math.Max(step, l/float64(n))
		for k := 1; k < n; k++ {
			fn(q.lerp(a, b, float64(k)/float64(n)))
		}
	}
	verdict := func(v float64, full bool) judgement {
		band := q.exact
		if sampled {
			band = math.Max(math.Max(0.002*q.r, step), q.exact)
		}
		// v is the distance of a real point of the feature: sampling can only
		// miss points nearer (full) or farther (contained) than it.
		certain := math.Max(0.002*q.r, q.exact)
		j := judgement{v: v, band: band}
		switch {
		case v < q.r-band:
			j.verdict = vIn
		case v > q.r+band:
			j.verdict = vOut
		case full && v < q.r-certain:
			j.verdict = vIn
		case !full && v > q.r+certain:
			j.verdict = vOut
		case q.r == 0 && v <= 0 && (full || !sampled):
			j.verdict = vIn // a real point at distance 0
		default:
			j.verdict = vBorder
		}
		return j
	}
	if q.full {
		for _, p := range f.parts {
			if p.kind != oPoly {
				continue
			}
			n := 1
			if q.kind == "points" {
				n = len(q.pts)
			}
			for _, c := range q.pts[:n] {
				if oInArea(c.x, c.y, p.rings) {
					return judgement{verdict: vIn}
				}
			}
		}
		best := math.Inf(1)
		for _, p := range f.parts {
			for _, ring := range p.pts {
				for i, a := range ring {
					best = math.Min(best, q.sd(a))
					if i == 0 {
						continue
					}
					b := ring[i-1]
					l := q.dist(a, b)
					if q.sd(q.lerp(a, b, 0.5))-l/2 > q.r+bandU+2*q.slack {
						continue // no point of this edge comes near the radius
					}
					sample(a, b, func(s oPt) { best = math.Min(best, q.sd(s)) })
				}
				if best < q.r-math.Max(0.002*q.r, q.exact) {
					return judgement{verdict: vIn, v: best}
				}
			}
		}
		return verdict(best, true)
	}
	worst := math.Inf(-1)
	for _, p := range f.parts {
		rings := p.pts
		if p.kind == oPoly {
			rings = rings[:1] // the exterior ring
		}
		for _, ring := range rings {
			for i, a := range ring {
				worst = math.Max(worst, q.sd(a))
				if i == 0 {
					continue
				}
				b := ring[i-1]
				l := q.dist(a, b)
				if q.sd(q.lerp(a, b, 0.5))+l/2 < q.r-bandU-2*q.slack {
					continue
				}
				sample(a, b, func(s oPt) { worst = math.Max(worst, q.sd(s)) })
			}
			if worst > q.r+math.Max(0.002*q.r, q.exact) {
				return judgement{verdict: vOut, v: worst}
			}
		}
	}
	return verdict(worst, false)
}

// ---------------------------------------------------------------------------
// Oracle datasets.

type oDS struct {
	name  string
	path  string // "/datasets/N"
	attrs []string
	types []string // integer, float, string
	feats []*oFeat
}

func (d *oDS) col(name string) int { return slices.Index(d.attrs, name) }

func oRealDS(t *testing.T, base string) *oDS {
	t.Helper()
	dir := realData + base
	shp, err := os.Open(dir + ".shp")
	if err != nil {
		t.Fatal(err)
	}
	defer shp.Close()
	dbf, err := os.Open(dir + ".dbf")
	if err != nil {
		t.Fatal(err)
	}
	defer dbf.Close()
	cpg, _ := os.ReadFile(dir + ".cpg")
	prj, _ := os.ReadFile(dir + ".prj")
	r, err := shapefile.Open(shp, dbf, nil, shapefile.Options{CPG: string(cpg), PRJ: string(prj)})
	if err != nil {
		t.Fatal(err)
	}
	d := &oDS{name: base}
	for _, a := range r.Attributes() {
		d.attrs = append(d.attrs, a.Name)
		d.types = append(d.types, string(a.Type))
	}
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		g, err := wkb.Decode(bytes.Clone(f.Geometry))
		if err != nil {
			t.Fatal(err)
		}
		of := &oFeat{pos: len(d.feats), vals: slices.Clone(f.Values), parts: oPartsOf(g)}
		of.finish()
		d.feats = append(d.feats, of)
	}
	return d
}

// upload sends the real shapefile base and records the dataset's path.
func (d *oDS) uploadShapefile(t *testing.T, ts *testServer) {
	t.Helper()
	files := map[string]string{}
	for _, ext := range []string{"shp", "shx", "dbf", "prj", "cpg"} {
		if _, err := os.Stat(realData + d.name + "." + ext); err == nil {
			files["dataset["+ext+"]"] = realData + d.name + "." + ext
		}
	}
	body, ct := multipartBody(t, files, map[string]string{"title": d.name})
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
	must(t, w, 201)
	d.path = strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
	d.checkSchema(t, ts)
}

// checkSchema checks that the server's attributes are the oracle's.
func (d *oDS) checkSchema(t *testing.T, ts *testServer) {
	t.Helper()
	doc := decode[map[string]any](t, must(t, ts.get(d.path+".json?include_attributes=1", ""), 200))
	if doc["feature_count"] != float64(len(d.feats)) {
		t.Fatalf("%s: feature_count %v, oracle has %d", d.name, doc["feature_count"], len(d.feats))
	}
	attrs, _ := doc["data_attributes"].([]any)
	if len(attrs) != len(d.attrs) {
		t.Fatalf("%s: attributes %v, oracle %v", d.name, attrs, d.attrs)
	}
	for i, a := range attrs {
		m := a.(map[string]any)
		if m["name"] != d.attrs[i] || m["data_type"] != d.types[i] {
			t.Fatalf("%s: attribute %d is %v, oracle %s %s", d.name, i, m, d.attrs[i], d.types[i])
		}
	}
}

// The generated point dataset: boxes whose edges carry points, a zone left
// empty, clusters (two at the antimeridian, two near the poles).
var (
	oEdgeBoxes = [][4]float64{
		{-10.5, -20.25, 30.75, 5.5},
		{100.125, 40, 120.5, 60.25},
		{170.5, -30, -170.25, -10}, // crosses the antimeridian
		{-30, 80, 30, 90},          // up to the pole
		{12.5, 41.875, 12.5, 41.875},
	}
	oEmptyZone = [4]float64{60, -5, 61, -4}
	oClusters  = [][2]float64{{179.5, 10}, {-179.5, -20}, {20, 88}, {-100, -87.5}, {-78, 35.5},
		{2.35, 48.85}, {-58.4, -34.6}, {139.7, 35.7}, {31.2, 30}, {-122.4, 37.8}, {0, 0}, {180, 60}}
	oCats = []string{"alpha", "Beta", "beta", "b", "ba", "gamma", "Ärger", "zeta", "a b"}
	oWs   = []string{"-1.5", "0.0", "-0.0", "2.25", "10000000000"}
)

// oPointsCSV generates the point dataset: its CSV and its oracle.
func oPointsCSV(seed uint64) (string, *oDS) {
	r := rand.New(rand.NewPCG(seed, 7))
	type row struct{ lon, lat float64 }
	var rows []row
	add := func(lon, lat float64) { rows = append(rows, row{lon, lat}) }
	inEmpty := func(lon, lat float64) bool {
		z := oEmptyZone
		return lon >= z[0]-0.01 && lon <= z[2]+0.01 && lat >= z[1]-0.01 && lat <= z[3]+0.01
	}
	for _, b := range oEdgeBoxes {
		w, s, e, n := b[0], b[1], b[2], b[3]
		east := e
		if w > e {
			east = e + 360
		}
		lon := func(f float64) float64 { // a longitude a fraction f across the box
			x := w + f*(east-w)
			if x > 180 {
				x -= 360
			}
			return x
		}
		add(w, s)
		add(e, s)
		add(e, n)
		add(w, n)
		for k := 0; k < 3; k++ {
			f := r.Float64()
			add(lon(f), s)
			add(lon(f), n)
			g := s + r.Float64()*(n-s)
			add(w, g)
			add(e, g)
			add(lon(r.Float64()), s+r.Float64()*(n-s))
			// just outside
			add(lon(f), s-1e-7)
			add(lon(f), math.Min(90, n+1e-7))
			add(w-1e-7, g)
			add(e+1e-7, g)
		}
		if w > e { // the antimeridian itself
			add(180, s+(n-s)/3)
			add(-180, s+(n-s)/2)
			add(180, n+0.5)
			add(-180, s-0.5)
		}
	}
	// exactly repeated points, the antimeridian, the poles
	for _, p := range [][2]float64{{12.5, 41.875}, {12.5, 41.875}, {0, 0}, {180, 0}, {-180, 0}, {180, 10}, {-180, 10.01},
		{0, 90}, {45, 90}, {-120, -90}, {10, 89.9999}, {-170, 89.95}, {100, -89.99}, {179.99999, 45}, {-179.99999, 45}} {
		add(p[0], p[1])
	}
	for len(rows) < 4200 {
		var lon, lat float64
		if r.IntN(10) < 6 {
			lon, lat = -180+360*r.Float64(), math.Asin(2*r.Float64()-1)*180/math.Pi
		} else {
			c := oClusters[r.IntN(len(oClusters))]
			lon, lat = c[0]+r.NormFloat64()*1.5, c[1]+r.NormFloat64()*1.5
			if lon > 180 {
				lon -= 360
			} else if lon < -180 {
				lon += 360
			}
			lat = math.Max(-90, math.Min(90, lat))
		}
		if r.IntN(3) == 0 { // fewer digits: more ties with box edges and query values
			lon, lat = math.Round(lon*1000)/1000, math.Round(lat*1000)/1000
		}
		if !inEmpty(lon, lat) {
			add(lon, lat)
		}
	}
	// Shuffle so that the special points are spread over positions.
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	d := &oDS{name: "points", attrs: []string{"k", "n", "x", "w", "cat", "zip"},
		types: []string{"integer", "integer", "float", "float", "string", "string"}}
	var b strings.Builder
	b.WriteString("k,lat,lon,n,x,w,cat,zip\n")
	for i, rw := range rows {
		vals := []any{int64(i), nil, nil, nil, nil, nil}
		cells := []string{strconv.Itoa(i), oFmt(rw.lat), oFmt(rw.lon), "", "", "", "", ""}
		if r.IntN(16) != 0 {
			v := int64(r.IntN(41))
			vals[1], cells[3] = v, strconv.FormatInt(v, 10)
		}
		if r.IntN(16) != 0 {
			v := math.Round(r.NormFloat64()*1e5) / 1e3
			if i == 1 {
				v = 0.5 // a fraction early, so that the column is float
			}
			vals[2], cells[4] = v, oFmt(v)
		}
		if r.IntN(8) != 0 {
			s := oWs[r.IntN(len(oWs))]
			v, _ := strconv.ParseFloat(s, 64)
			vals[3], cells[5] = v, s
		}
		if r.IntN(16) != 0 {
			s := oCats[r.IntN(len(oCats))]
			vals[4], cells[6] = s, s
		}
		zip := fmt.Sprintf("%05d", r.IntN(100000))
		if i == 0 {
			zip = "00501"
		}
		vals[5], cells[7] = zip, zip
		b.WriteString(strings.Join(cells, ","))
		b.WriteByte('\n')
		f := &oFeat{pos: i, vals: vals, parts: []oPart{oMakePart(oPoint, []float64{rw.lon, rw.lat})}}
		f.finish()
		d.feats = append(d.feats, f)
	}
	return b.String(), d
}

// oStar is a closed star-shaped ring around (cx, cy), with longitudes
// stretched by 1/cos(latitude).
func oStar(r *rand.Rand, cx, cy, rad float64, nv int, scale float64) []float64 {
	kx := math.Min(4, 1/math.Cos(cy*math.Pi/180))
	var ring []float64
	for i := 0; i < nv; i++ {
		a := 2 * math.Pi * (float64(i) + 0.3*(r.Float64()-0.5)) / float64(nv)
		rr := rad * (0.6 + 0.4*r.Float64()) * scale
		ring = append(ring, cx+rr*math.Cos(a)*kx, cy+rr*math.Sin(a))
	}
	return append(ring, ring[0], ring[1])
}

func oWKTSeq(xy []float64) string {
	s := make([]string, 0, len(xy)/2)
	for i := 0; i+1 < len(xy); i += 2 {
		s = append(s, oFmt(xy[i])+" "+oFmt(xy[i+1]))
	}
	return "(" + strings.Join(s, ", ") + ")"
}

func oWKTRings(rings [][]float64) string {
	s := make([]string, len(rings))
	for i, r := range rings {
		s[i] = oWKTSeq(r)
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// oShapesCSV generates a dataset of small polygons (some with holes),
// multipolygons, lines, multilines and multipoints in a WKT column.
func oShapesCSV(seed uint64) (string, *oDS) {
	r := rand.New(rand.NewPCG(seed, 11))
	d := &oDS{name: "shapes", attrs: []string{"name", "val", "grp", "kind"},
		types: []string{"string", "float", "integer", "string"}}
	var b strings.Builder
	b.WriteString("wkt,name,val,grp,kind\n")
	center := func(rad float64) (float64, float64) {
		var cx, cy float64
		switch k := r.IntN(10); {
		case k < 5:
			c := oClusters[r.IntN(len(oClusters))]
			cx, cy = c[0]+r.NormFloat64()*2, c[1]+r.NormFloat64()*2
		case k < 6: // at the antimeridian
			cx, cy = 180*float64(1-2*r.IntN(2)), -60+120*r.Float64()
		default:
			cx, cy = -180+360*r.Float64(), -80+160*r.Float64()
		}
		cy = math.Max(-84+rad, math.Min(84-rad, cy))
		kx := math.Min(4, 1/math.Cos(cy*math.Pi/180))
		lim := 179.99 - 2*rad*kx
		return math.Max(-lim, math.Min(lim, cx)), cy
	}
	walk := func(n int, step float64) []float64 {
		x, y := center(step * float64(n))
		xy := []float64{x, y}
		for i := 1; i < n; i++ {
			x = math.Max(-179.9, math.Min(179.9, x+step*(2*r.Float64()-1)))
			y = math.Max(-85, math.Min(85, y+step*(2*r.Float64()-1)))
			xy = append(xy, x, y)
		}
		return xy
	}
	for i := 0; i < 330; i++ {
		var wkt, kind string
		var parts []oPart
		switch k := i % 11; {
		case k < 5: // polygon, with a hole two times in five
			rad := 0.2 + 3*r.Float64()
			cx, cy := center(rad)
			nv := 5 + r.IntN(8)
			rings := [][]float64{oStar(r, cx, cy, rad, nv, 1)}
			if k < 2 {
				rings = append(rings, oStar(r, cx, cy, rad, 4+r.IntN(4), 0.25))
			}
			wkt, kind = "POLYGON "+oWKTRings(rings), "polygon"
			parts = []oPart{oMakePart(oPoly, rings...)}
		case k == 5: // two polygons side by side
			rad := 0.2 + 1.5*r.Float64()
			cx, cy := center(3 * rad)
			kx := math.Min(4, 1/math.Cos(cy*math.Pi/180))
			a := [][]float64{oStar(r, cx-1.2*rad*kx, cy, rad, 6, 1)}
			c := [][]float64{oStar(r, cx+1.2*rad*kx, cy, rad, 7, 1), oStar(r, cx+1.2*rad*kx, cy, rad, 5, 0.25)}
			wkt, kind = "MULTIPOLYGON ("+oWKTRings(a)+", "+oWKTRings(c)+")", "multipolygon"
			parts = []oPart{oMakePart(oPoly, a...), oMakePart(oPoly, c...)}
		case k < 9: // line
			xy := walk(2+r.IntN(6), 0.2+2*r.Float64())
			wkt, kind = "LINESTRING "+oWKTSeq(xy), "line"
			parts = []oPart{oMakePart(oLine, xy)}
		case k == 9:
			a, c := walk(2+r.IntN(3), 1), walk(2+r.IntN(3), 1)
			wkt, kind = "MULTILINESTRING ("+oWKTSeq(a)+", "+oWKTSeq(c)+")", "multiline"
			parts = []oPart{oMakePart(oLine, a), oMakePart(oLine, c)}
		default:
			xy := walk(2+r.IntN(3), 2)
			var s []string
			for j := 0; j+1 < len(xy); j += 2 {
				s = append(s, "("+oFmt(xy[j])+" "+oFmt(xy[j+1])+")")
				parts = append(parts, oMakePart(oPoint, xy[j:j+2]))
			}
			wkt, kind = "MULTIPOINT ("+strings.Join(s, ", ")+")", "multipoint"
		}
		vals := []any{fmt.Sprintf("s%03d", r.IntN(1000)), nil, nil, kind}
		cells := []string{`"` + wkt + `"`, vals[0].(string), "", "", kind}
		if r.IntN(10) != 0 {
			v := math.Round(r.Float64()*1e6) / 1e4
			if i == 0 {
				v = 1.25
			}
			vals[1], cells[2] = v, oFmt(v)
		}
		if r.IntN(10) != 0 {
			v := int64(r.IntN(6))
			vals[2], cells[3] = v, strconv.FormatInt(v, 10)
		}
		b.WriteString(strings.Join(cells, ","))
		b.WriteByte('\n')
		f := &oFeat{pos: i, vals: vals, parts: parts}
		f.finish()
		d.feats = append(d.feats, f)
	}
	return b.String(), d
}

func (d *oDS) uploadCSV(t *testing.T, ts *testServer, csv string) {
	t.Helper()
	d.path = ts.createCSV("?title="+d.name, csv)
	d.checkSchema(t, ts)
}

// makePending updates a fifth of the dataset's features to what they are
// (their GeoJSON sent back through POST …/edits.json): the features and
// their ids do not change, but on the embedded store they are now read
// through a delta and dead positions, until the compaction that follows
// (10 s after): the oracle checks the merged reads as it does compacted
// ones, and its real datasets stay compacted.
func (d *oDS) makePending(t *testing.T, ts *testServer) {
	t.Helper()
	w := ts.get(d.path+"/features.json?geojson=1&limit=100000", "alice")
	var fc struct {
		Features []json.RawMessage `json:"features"`
	}
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &fc) != nil {
		t.Fatalf("%s: features %d", d.name, w.Code)
	}
	var ups []string
	for i, f := range fc.Features {
		if i%5 == 2 {
			ups = append(ups, string(f))
		}
	}
	must(t, ts.do(req{method: "POST", path: d.path + "/edits.json", user: "alice", ctype: "application/json",
		body: []byte(`{"updates": [` + strings.Join(ups, ",") + `]}`)}), 200)
	if again := ts.get(d.path+"/features.json?geojson=1&limit=100000", "alice"); again.Body.String() != w.Body.String() {
		t.Fatalf("%s: updating features to what they were changed them", d.name)
	}
}

// ---------------------------------------------------------------------------
// Talking to the server.

type oFeatureOut struct {
	ID         int            `json:"id"` // the position, once oPositions has run
	Properties map[string]any `json:"properties"`
}

// oPositions turns the features' GeoJSON ids, their stable ids, into the
// positions the oracle counts: id - 1, as nothing is deleted from its
// datasets.
func oPositions(fs []oFeatureOut) []oFeatureOut {
	for i := range fs {
		fs[i].ID--
	}
	return fs
}

// oFetch asks for a FeatureCollection and returns its features.
func oFetch(t *testing.T, ts *testServer, d *oDS, params string) []oFeatureOut {
	t.Helper()
	w := ts.get(d.path+"/features.json?geojson=1&limit=10000&"+params, "")
	if w.Code != 200 {
		t.Fatalf("%s?%s: status %d: %s", d.name, params, w.Code, w.Body.String())
	}
	var fc struct {
		Type     string        `json:"type"`
		Features []oFeatureOut `json:"features"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &fc); err != nil || fc.Type != "FeatureCollection" {
		t.Fatalf("%s?%s: not a FeatureCollection (%v): %.300s", d.name, params, err, w.Body.String())
	}
	return oPositions(fc.Features)
}

func oIDs(fs []oFeatureOut) []int {
	ids := make([]int, len(fs))
	for i, f := range fs {
		ids[i] = f.ID
	}
	return ids
}

// oStats counts what the comparisons covered.
type oStats struct {
	queries, compared, matched, border, pruned, distances int
	nonEmpty                                              int
	close                                                 int // compared verdicts within 5% of the radius
}

func (s *oStats) log(t *testing.T) {
	t.Logf("%d queries (%d with a non-empty answer), %d feature verdicts compared (%d matching, %d within 5%% of the radius), %d borderline left out (%.3f%%), %d distances compared",
		s.queries, s.nonEmpty, s.compared, s.matched, s.close, s.border, 100*float64(s.border)/math.Max(1, float64(s.compared+s.border)), s.distances)
}

// checkNear sends a radius query (with with_distance=1 and extra
// parameters), and compares the answer with the oracle: the selected
// features (borderline ones left out), ascending positions, and each
// feature's distance. keep filters the oracle's features (nil keeps all).
func checkNear(t *testing.T, ts *testServer, d *oDS, q *oQuery, extra string, keep func(*oFeat) bool, st *oStats) {
	t.Helper()
	params := q.params() + "&with_distance=1" + extra
	got := oFetch(t, ts, d, params)
	st.queries++
	if len(got) > 0 {
		st.nonEmpty++
	} else if os.Getenv("ORACLE_DEBUG") != "" {
		t.Logf("empty: %s %s", d.name, params)
	}
	in := make(map[int]oFeatureOut, len(got))
	var errs []string
	for i, f := range got {
		if i > 0 && f.ID <= got[i-1].ID {
			errs = append(errs, fmt.Sprintf("ids out of order: %d after %d", f.ID, got[i-1].ID))
		}
		in[f.ID] = f
	}
	for _, f := range d.feats {
		if keep != nil && !keep(f) {
			if _, ok := in[f.pos]; ok {
				errs = append(errs, fmt.Sprintf("feature %d fails the filters but is answered", f.pos))
			}
			continue
		}
		j := q.judge(f)
		if j.pruned {
			st.pruned++
		}
		out, answered := in[f.pos]
		if j.verdict == vBorder {
			st.border++
		} else {
			st.compared++
			if j.verdict == vIn {
				st.matched++
			}
			if !j.pruned && math.Abs(j.v-q.r) <= 0.05*q.r {
				st.close++
			}
			if answered != (j.verdict == vIn) {
				j = q.judgeWith(f, false)
				errs = append(errs, fmt.Sprintf("feature %d %s: oracle %v (d=%.9g, radius %g, band %.3g), server %v",
					f.pos, oDescribe(d, f), j.verdict == vIn, j.v, q.r, j.band, answered))
			}
		}
		if answered {
			want := q.distance(f)
			gotD, ok := out.Properties["distance"].(float64)
			st.distances++
			tol := 1e-7*q.scale + 1e-9*math.Abs(want)
			if !ok || math.Abs(gotD-want) > tol {
				errs = append(errs, fmt.Sprintf("feature %d: distance %v, oracle %.12g", f.pos, out.Properties["distance"], want))
			}
		}
	}
	if len(errs) > 0 {
		if len(errs) > 6 {
			errs = append(errs[:6], fmt.Sprintf("… and %d more", len(errs)-6))
		}
		t.Errorf("%s?%s%s:\n  %s", d.path+"/features.json", params, " ("+d.name+")", strings.Join(errs, "\n  "))
	}
}

func oDescribe(d *oDS, f *oFeat) string {
	var kinds []string
	for _, p := range f.parts {
		kinds = append(kinds, []string{"", "point", "line", "polygon"}[p.kind])
	}
	s := strings.Join(kinds, "+")
	if i := d.col("name"); i >= 0 {
		s = fmt.Sprintf("%v %s", f.vals[i], s)
	}
	if p := f.parts[0]; p.kind == oPoint {
		s += fmt.Sprintf(" (%s, %s)", oFmt(p.rings[0][0]), oFmt(p.rings[0][1]))
	}
	return s
}

// checkBBox compares a bbox query with the oracle, in both orders.
func checkBBox(t *testing.T, ts *testServer, d *oDS, w, s, e, n float64, st *oStats) []int {
	t.Helper()
	boxes := oBoxesOf(w, s, e, n)
	var want []int
	for _, f := range d.feats {
		if f.hitsBoxes(boxes) {
			want = append(want, f.pos)
		}
	}
	params := fmt.Sprintf("bbox=%s,%s,%s,%s", oFmt(w), oFmt(s), oFmt(e), oFmt(n))
	got := oIDs(oFetch(t, ts, d, params))
	st.queries++
	st.compared += len(d.feats)
	st.matched += len(want)
	if len(got) > 0 {
		st.nonEmpty++
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s bbox=%v,%v,%v,%v: %s", d.name, w, s, e, n, oDiff(got, want, d))
	}
	desc := oIDs(oFetch(t, ts, d, params+"&order=descending"))
	slices.Reverse(desc)
	if !slices.Equal(desc, want) {
		t.Errorf("%s bbox=%v,%v,%v,%v&order=descending: not the reverse: %s", d.name, w, s, e, n, oDiff(desc, want, d))
	}
	return want
}

// oDiff describes how got differs from want.
func oDiff(got, want []int, d *oDS) string {
	g, w := map[int]bool{}, map[int]bool{}
	for _, x := range got {
		g[x] = true
	}
	for _, x := range want {
		w[x] = true
	}
	var extra, missing []string
	for _, x := range got {
		if !w[x] {
			extra = append(extra, fmt.Sprintf("%d %s", x, oDescribe(d, d.feats[x])))
		}
	}
	for _, x := range want {
		if !g[x] {
			missing = append(missing, fmt.Sprintf("%d %s", x, oDescribe(d, d.feats[x])))
		}
	}
	cut := func(s []string) []string {
		if len(s) > 5 {
			return append(s[:5], fmt.Sprintf("… %d more", len(s)-5))
		}
		return s
	}
	if len(extra) == 0 && len(missing) == 0 {
		return fmt.Sprintf("same features in another order: got %v, want %v", head(got), head(want))
	}
	return fmt.Sprintf("got %d, want %d; unexpected %v; missing %v", len(got), len(want), cut(extra), cut(missing))
}

func head(xs []int) []int {
	if len(xs) > 20 {
		return xs[:20]
	}
	return xs
}

// oFixture is a server with the five datasets.
type oFixture struct {
	ts                                    *testServer
	points, shapes, nc, countries, cities *oDS
}

func (fx *oFixture) all() []*oDS { return []*oDS{fx.points, fx.shapes, fx.nc, fx.countries, fx.cities} }

func newOFixture(t *testing.T) *oFixture {
	t.Helper()
	fx := &oFixture{ts: newServer(t)}
	csv, d := oPointsCSV(1)
	d.uploadCSV(t, fx.ts, csv)
	d.makePending(t, fx.ts)
	fx.points = d
	csv, d = oShapesCSV(2)
	d.uploadCSV(t, fx.ts, csv)
	d.makePending(t, fx.ts)
	fx.shapes = d
	for _, p := range []**oDS{&fx.nc, &fx.countries, &fx.cities} {
		name := map[**oDS]string{&fx.nc: "nc", &fx.countries: "naturalearth_lowres", &fx.cities: "naturalearth_cities"}[p]
		*p = oRealDS(t, name)
		(*p).uploadShapefile(t, fx.ts)
	}
	// Positions are upload order: the k column of the points says so.
	for _, f := range oFetch(t, fx.ts, fx.points, "start=100&limit=50") {
		if f.Properties["k"] != float64(f.ID) {
			t.Fatalf("feature id %d has k=%v", f.ID, f.Properties["k"])
		}
	}
	return fx
}

// ---------------------------------------------------------------------------
// bbox

func TestQueryOracleBBox(t *testing.T) {
	t.Parallel() // its own fixture and store
	fx := newOFixture(t)
	st := &oStats{}
	r := rand.New(rand.NewPCG(3, 3))
	t.Run("EdgesIncluded", func(t *testing.T) {
		for i, b := range oEdgeBoxes {
			want := checkBBox(t, fx.ts, fx.points, b[0], b[1], b[2], b[3], st)
			// corners and 3×4 points on the edges at least (the pole box and
			// the point box share points).
			onEdge := 0
			for _, pos := range want {
				x, y := fx.points.feats[pos].cx, fx.points.feats[pos].cy
				if x == b[0] || x == b[2] || y == b[1] || y == b[3] || math.Abs(x) == 180 {
					onEdge++
				}
			}
			if min := 16; onEdge < min {
				t.Errorf("box %d: only %d points on the edges answered", i, onEdge)
			}
		}
	})
	t.Run("Antimeridian", func(t *testing.T) {
		for _, d := range fx.all() {
			for _, b := range [][4]float64{{170.5, -30, -170.25, -10}, {179, -90, -179, 90}, {100, -50, -100, 50},
				{179.9, 60, -179.9, 75}, {175, -20, -175, -15}, {180, -90, -180, 90}} {
				checkBBox(t, fx.ts, d, b[0], b[1], b[2], b[3], st)
			}
		}
	})
	t.Run("Empty", func(t *testing.T) {
		z := oEmptyZone
		if want := checkBBox(t, fx.ts, fx.points, z[0], z[1], z[2], z[3], st); len(want) != 0 {
			t.Fatalf("the empty zone has %d points", len(want))
		}
		if want := checkBBox(t, fx.ts, fx.nc, 0, 0, 1, 1, st); len(want) != 0 {
			t.Fatalf("NC at 0,0: %v", want)
		}
		if want := checkBBox(t, fx.ts, fx.countries, -140, -50, -135, -45, st); len(want) != 0 { // the South Pacific
			t.Fatalf("countries in the South Pacific: %v", want)
		}
	})
	t.Run("WorldAndLines", func(t *testing.T) {
		for _, d := range fx.all() {
			if want := checkBBox(t, fx.ts, d, -180, -90, 180, 90, st); len(want) != len(d.feats) {
				t.Errorf("%s: the world box holds %d of %d", d.name, len(want), len(d.feats))
			}
			checkBBox(t, fx.ts, d, -80, 30, -80, 40, st)     // a meridian segment
			checkBBox(t, fx.ts, d, -90, 35.5, -70, 35.5, st) // a parallel segment
			checkBBox(t, fx.ts, d, -180, 85, 180, 90, st)    // the north cap
			checkBBox(t, fx.ts, d, -180, -90, 180, -85, st)  // Antarctica's south
			checkBBox(t, fx.ts, d, -79, 35.5, -79, 35.5, st) // a point inside NC (the box inside a polygon)
			checkBBox(t, fx.ts, d, 25, -30, 28, -29, st)     // Lesotho's hole in South Africa
		}
	})
	t.Run("Random", func(t *testing.T) {
		for _, d := range fx.all() {
			for i := 0; i < raceCut(40); i++ {
				var w, s, e, n float64
				if d == fx.nc {
					w, s = -85+10*r.Float64(), 33+4*r.Float64()
					e, n = w+3*r.Float64(), math.Min(90, s+2*r.Float64())
				} else {
					w, s = -180+360*r.Float64(), -90+180*r.Float64()
					e, n = w+math.Exp(r.Float64()*5), math.Min(90, s+math.Exp(r.Float64()*4.5))
					if e > 180 {
						e -= 360 // crosses the antimeridian
					}
				}
				rd := func(v float64) float64 { return math.Round(v*1000) / 1000 }
				checkBBox(t, fx.ts, d, rd(w), rd(s), rd(e), rd(n), st)
			}
		}
	})
	st.log(t)
	if st.queries < raceCut(250) || st.nonEmpty < st.queries/2 {
		t.Errorf("too few queries with answers: %d of %d", st.nonEmpty, st.queries)
	}
}

// ---------------------------------------------------------------------------
// Radius queries

var oUnits = []string{"km", "m", "ft", "miles", "degrees"}

// oConvert converts km into units (degrees: of arc), rounded to 6 digits.
func oConvert(km float64, units string) float64 {
	var v float64
	if units == "degrees" {
		v = km * 1000 / oEarthRadius * 180 / math.Pi
	} else {
		v = km * 1000 / oUnitMetres[units]
	}
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return v
}

func oClampLL(x, y float64) (float64, float64) {
	return math.Max(-180, math.Min(180, x)), math.Max(-90, math.Min(90, y))
}

// oRandomQuery makes a query of one kind near the dataset's data: around
// a hot spot, or anywhere; its edges are short and do not wrap.
func oRandomQuery(r *rand.Rand, d *oDS, kind, units, intersect string, maxKm float64) *oQuery {
	km := math.Exp(math.Log(maxKm/300) + r.Float64()*math.Log(300))
	f := d.feats[r.IntN(len(d.feats))]
	k := r.IntN(10)
	if intersect != "full" && k < 8 && f.capR > 1e-4 { // contained: a radius about the feature's size
		size := math.Min(f.capR, 0.5) * oEarthRadius / 1000
		km = size*(0.8+1.5*r.Float64()) + maxKm/300
		k = 5
	}
	km, _ = strconv.ParseFloat(strconv.FormatFloat(km, 'g', 4, 64), 64)
	deg := km / 111.195
	var cx, cy float64
	switch {
	case k < 5: // near a vertex of a feature
		p := f.parts[r.IntN(len(f.parts))].pts[0]
		v := p[r.IntN(len(p))]
		cx, cy = v.x+r.NormFloat64()*deg, v.y+r.NormFloat64()*deg
	case k < 8: // near the centroid of a feature
		cx, cy = f.cx+r.NormFloat64()*deg/3, f.cy+r.NormFloat64()*deg/3
	default:
		cx, cy = -180+360*r.Float64(), math.Asin(2*r.Float64()-1)*180/math.Pi
	}
	cx, cy = oClampLL(cx, cy)
	cy = math.Max(-89.5, math.Min(89.5, cy))
	rad := oConvert(km, units)
	spread := math.Max(0.3, math.Min(6, 2*deg))
	rd := func(v float64) float64 { return math.Round(v*1e5) / 1e5 }
	var xy []float64
	switch kind {
	case "point":
		xy = []float64{rd(cx), rd(cy)}
	case "points":
		for i := 0; i < 2+r.IntN(4); i++ {
			x, y := oClampLL(cx+spread*(2*r.Float64()-1), cy+spread*(2*r.Float64()-1))
			xy = append(xy, rd(x), rd(y))
		}
	case "line":
		x, y := cx, cy
		for i := 0; i < 2+r.IntN(5); i++ {
			x, y = oClampLL(x+spread*(2*r.Float64()-1), y+spread*(2*r.Float64()-1))
			xy = append(xy, rd(x), rd(y))
		}
	case "polygon":
		cy = math.Max(-80, math.Min(80, cy))
		pr := spread * (0.5 + r.Float64())
		cx = math.Max(-179-4*pr, math.Min(179-4*pr, cx))
		ring := oStar(r, cx, cy, pr, 3+r.IntN(6), 1)
		for i := range ring {
			ring[i] = rd(ring[i])
		}
		ring[len(ring)-2], ring[len(ring)-1] = ring[0], ring[1]
		for i := 0; i+1 < len(ring); i += 2 {
			ring[i], ring[i+1] = oClampLL(ring[i], ring[i+1])
		}
		xy = ring
		if r.IntN(2) == 0 { // the polygon itself
			return newOQuery(kind, xy, 0, false, "km", intersect)
		}
	}
	return newOQuery(kind, xy, rad, true, units, intersect)
}

// oTuneRadius returns q with its radius moved to within 3% of the distance
// that decides a feature near it (its nearest point for full, its farthest
// vertex for contained), so that the buffer's edge runs through the data.
func oTuneRadius(r *rand.Rand, d *oDS, q *oQuery) *oQuery {
	if !q.rGiven {
		return q
	}
	var nearby []*oFeat
	for _, f := range d.feats {
		if q.toSet(oPt{f.cx, f.cy, oVec(f.cx, f.cy)}) < 3*q.r {
			nearby = append(nearby, f)
		}
	}
	for try := 0; try < 20 && len(nearby) > 0; try++ {
		f := nearby[r.IntN(len(nearby))]
		probe := newOQuery(q.kind, q.xy, 0, true, q.units, q.intersect)
		if !q.full {
			probe.r = 4 * q.scale // no sampling: the vertices' maximum
		}
		v := probe.judgeWith(f, false).v
		if math.IsInf(v, 0) || math.IsNaN(v) || v <= 0 || v > 3*q.r+q.exact {
			continue
		}
		rad, _ := strconv.ParseFloat(strconv.FormatFloat(v*(1+0.03*(2*r.Float64()-1)), 'g', 6, 64), 64)
		return newOQuery(q.kind, q.xy, rad, true, q.units, q.intersect)
	}
	return q
}

// oCheckStats fails a test whose comparisons were too few or too often
// left out.
func oCheckStats(t *testing.T, st *oStats, minCompared int) {
	t.Helper()
	st.log(t)
	if st.compared < minCompared {
		t.Errorf("only %d verdicts compared (want ≥ %d)", st.compared, minCompared)
	}
	if st.matched < minCompared/50 || st.matched == st.compared {
		t.Errorf("%d matches among %d verdicts: the queries do not discriminate", st.matched, st.compared)
	}
	if st.close < minCompared/500 {
		t.Errorf("only %d verdicts within 5%% of the radius: the boundary is not exercised", st.close)
	}
	if st.border*100 > st.compared+st.border {
		t.Errorf("%d borderline features left out of %d: more than 1%%", st.border, st.compared+st.border)
	}
	if st.nonEmpty*2 < st.queries {
		t.Errorf("only %d of %d queries had an answer", st.nonEmpty, st.queries)
	}
}

func TestQueryOracleNear(t *testing.T) {
	t.Parallel() // its own fixture and store
	fx := newOFixture(t)
	r := rand.New(rand.NewPCG(4, 4))
	total := &oStats{}
	for _, d := range fx.all() {
		maxKm := 2000.0
		if d == fx.nc {
			maxKm = 150
		}
		for _, kind := range []string{"point", "points", "line", "polygon"} {
			t.Run(d.name+"/"+kind, func(t *testing.T) {
				st := &oStats{}
				for _, units := range oUnits {
					for _, intersect := range []string{"full", "contained", ""} {
						for rep := 0; rep < raceCut(3); rep++ {
							if intersect == "" && rep > 0 {
								continue
							}
							q := oRandomQuery(r, d, kind, units, intersect, maxKm)
							if rep > 0 {
								q = oTuneRadius(r, d, q)
							}
							checkNear(t, fx.ts, d, q, "", nil, st)
						}
					}
				}
				st.log(t)
				total.queries += st.queries
				total.nonEmpty += st.nonEmpty
				total.compared += st.compared
				total.matched += st.matched
				total.border += st.border
				total.close += st.close
				total.distances += st.distances
			})
		}
	}
	oCheckStats(t, total, 50000)
}

// TestQueryOracleNearEdgeCases: radius 0, the antimeridian, the poles, a
// radius larger than the Earth.
func TestQueryOracleNearEdgeCases(t *testing.T) {
	t.Parallel() // its own fixture and store
	fx := newOFixture(t)
	st := &oStats{}
	calls := 0
	both := func(t *testing.T, d *oDS, kind string, xy []float64, r float64, units string) {
		t.Helper()
		ins := []string{"full", "contained"}
		if raceCut(2) < 2 { // under the race detector, one of the two in turn
			calls++
			ins = ins[calls%2 : calls%2+1]
		}
		for _, in := range ins {
			checkNear(t, fx.ts, d, newOQuery(kind, xy, r, true, units, in), "", nil, st)
		}
	}
	t.Run("RadiusZero", func(t *testing.T) {
		before := st.matched
		both(t, fx.points, "point", []float64{12.5, 41.875}, 0, "km")
		both(t, fx.points, "points", []float64{0, 0, 12.5, 41.875}, 0, "m")
		both(t, fx.points, "point", []float64{12.5, 41.875}, 0, "degrees")
		if st.matched-before < raceCut(6)*4 {
			t.Errorf("radius 0 matched only %d features over six queries", st.matched-before)
		}
		for _, d := range []*oDS{fx.shapes, fx.countries, fx.nc} {
			for _, in := range []string{"full", "contained"} {
				for _, ring := range [][]float64{
					{-82, 34, -77, 34, -77, 36.5, -82, 36.5, -82, 34},
					{-20, -40, 60, -40, 60, 40, 20, 0, -20, 40, -20, -40},
					{170, -25, 179, -25, 179, -10, 170, -10, 170, -25},
				} {
					checkNear(t, fx.ts, d, newOQuery("polygon", ring, 0, false, "km", in), "", nil, st)
				}
			}
		}
	})
	t.Run("ContainedBetweenSamples", func(t *testing.T) {
		// Iredell county's edge from (-80.995, 35.977) to (-81.021, 36.035)
		// passes 44,182 m from the nearest query point (at 83% of the edge).
		checkNear(t, fx.ts, fx.nc, newOQuery("points", []float64{-79.81032, 35.462, -80.56617, 35.06987, -80.85561, 36.40087, -80.67308, 35.74153},
			43480, true, "m", "contained"), "", nil, st)
	})
	t.Run("Antimeridian", func(t *testing.T) {
		for _, d := range []*oDS{fx.points, fx.shapes, fx.countries, fx.cities} {
			both(t, d, "point", []float64{180, 10}, 300, "km")
			both(t, d, "point", []float64{-180, -20}, 250, "miles")
			both(t, d, "point", []float64{180, 0}, 0.01, "km")
			both(t, d, "point", []float64{-179.5, 65}, 400, "km")
			both(t, d, "points", []float64{179.9, 5, -179.9, 5}, 200, "km")
			both(t, d, "point", []float64{179.5, 10}, 2, "degrees")
			both(t, d, "polygon", []float64{175, 55, 180, 55, 180, 72, 175, 72, 175, 55}, 50, "km")
		}
	})
	t.Run("AntimeridianLine", func(t *testing.T) {
		for _, d := range []*oDS{fx.points, fx.shapes, fx.countries, fx.cities} {
			both(t, d, "line", []float64{179.5, 0, -179.5, 0.5}, 50, "km")
			both(t, d, "line", []float64{170, -20, -170, -15}, 300, "km")
		}
	})
	t.Run("Poles", func(t *testing.T) {
		for _, d := range []*oDS{fx.points, fx.shapes, fx.countries, fx.cities} {
			both(t, d, "point", []float64{0, 90}, 500, "km")
			both(t, d, "point", []float64{45, -90}, 1500, "km")
			both(t, d, "point", []float64{170, 89.95}, 20, "km")
			both(t, d, "point", []float64{-100, -87.5}, 100, "miles")
			both(t, d, "points", []float64{0, 89.5, 180, 89.5}, 100, "km")
			both(t, d, "point", []float64{0, 90}, 0.001, "km")
			both(t, d, "point", []float64{20, 88}, 3, "degrees")
		}
	})
	t.Run("PolarLine", func(t *testing.T) {
		both(t, fx.points, "line", []float64{0, 88, 120, 88}, 50, "km")
		both(t, fx.points, "line", []float64{-60, 86, 100, 87}, 80, "km")
	})
	t.Run("LargerThanTheEarth", func(t *testing.T) {
		for _, d := range fx.all() {
			before, queries := st.matched, st.queries
			both(t, d, "point", []float64{10, 20}, 30000, "km")
			both(t, d, "line", []float64{10, 20, 11, 21}, 1e8, "m")
			both(t, d, "polygon", []float64{0, 0, 1, 0, 1, 1, 0, 0}, 1e5, "miles")
			both(t, d, "points", []float64{-50, -50, 50, 50}, 1000, "degrees")
			if n := st.queries - queries; st.matched-before != n*len(d.feats) {
				t.Errorf("%s: %d matches over %d queries, want all %d features each time", d.name, st.matched-before, n, len(d.feats))
			}
		}
	})
	oCheckStats(t, st, raceCut(20000))
}

// TestQueryOracleTargeted: hand-made features and queries for the cases
// random queries rarely meet: edges that are long great-circle arcs (which
// leave the boxes of their vertices and do not follow the straight lines
// between their vertices in lon/lat), a buffer's notch between two query
// points, a disc larger than a hemisphere.
func TestQueryOracleTargeted(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	mid := func(ax, ay, bx, by float64) (float64, float64) {
		x, y := oLonLat(oSlerp(oVec(ax, ay), oVec(bx, by), 0.5))
		return math.Round(x*1e6) / 1e6, math.Round(y*1e6) / 1e6
	}
	apexX, apexY := mid(-120, 60, 0, 60)     // about (-60, 73.9)
	northX, northY := mid(-150, 75, 150, 75) // on the antimeridian, about 76.9 N
	d := &oDS{name: "long", attrs: []string{"name"}, types: []string{"string"}}
	var csv strings.Builder
	csv.WriteString("wkt,name\n")
	for i, g := range []struct {
		name, wkt string
		part      oPart
	}{
		{"parallel-60", "LINESTRING (-120 60, 0 60)", oMakePart(oLine, []float64{-120, 60, 0, 60})},
		{"band-50-60", "POLYGON ((-120 50, 0 50, 0 60, -120 60, -120 50))", oMakePart(oPoly, []float64{-120, 50, 0, 50, 0, 60, -120, 60, -120, 50})},
		{"crossing-chord", "LINESTRING (-60 59, -60 61)", oMakePart(oLine, []float64{-60, 59, -60, 61})},
		{"meridian-179.9", "LINESTRING (179.9 50, 179.9 -50)", oMakePart(oLine, []float64{179.9, 50, 179.9, -50})},
		{"apex", fmt.Sprintf("POINT (%s %s)", oFmt(apexX), oFmt(apexY)), oMakePart(oPoint, []float64{apexX, apexY})},
		{"over-the-antimeridian", "LINESTRING (-150 75, 150 75)", oMakePart(oLine, []float64{-150, 75, 150, 75})},
		{"near-london", "POINT (0 51.5)", oMakePart(oPoint, []float64{0, 51.5})},
		{"notch", "LINESTRING (0.5 0.1, 0.5 1.9)", oMakePart(oLine, []float64{0.5, 0.1, 0.5, 1.9})},
	} {
		fmt.Fprintf(&csv, "%q,%s\n", g.wkt, g.name)
		f := &oFeat{pos: i, vals: []any{g.name}, parts: []oPart{g.part}}
		f.finish()
		d.feats = append(d.feats, f)
	}
	d.uploadCSV(t, ts, csv.String())
	st := &oStats{}
	both := func(t *testing.T, kind string, xy []float64, r float64, units string) {
		t.Helper()
		for _, in := range []string{"full", "contained"} {
			checkNear(t, ts, d, newOQuery(kind, xy, r, true, units, in), "", nil, st)
		}
	}
	t.Run("FeatureArcOutsideItsBox", func(t *testing.T) {
		// The line's arc passes through the query point; its vertices are
		// 14 degrees further south.
		both(t, "point", []float64{apexX, apexY + 0.01}, 10, "km")
		both(t, "point", []float64{northX, northY}, 20, "km")
	})
	t.Run("QueryArcOutsideItsBox", func(t *testing.T) {
		// The query line's arc passes through the "apex" point.
		both(t, "line", []float64{-120, 60, 0, 60}, 10, "km")
		both(t, "polygon", []float64{-120, 50, 0, 50, 0, 60, -120, 60, -120, 50}, 10, "km")
	})
	t.Run("ChordIsNotTheArc", func(t *testing.T) {
		// The straight line between the query's vertices in lon/lat crosses
		// "crossing-chord"; the great-circle arc passes 1,400 km north of it.
		checkNear(t, ts, d, newOQuery("line", []float64{-120, 60, 0, 60}, 1, true, "km", "full"), "", nil, st)
	})
	t.Run("ContainedBetweenSamples", func(t *testing.T) {
		// "notch" runs between two query points 222 km apart: its ends are
		// 60 km from the nearer one, its middle (0.5, 1) 124.3 km from both.
		for _, r := range []float64{122, 124, 125} {
			checkNear(t, ts, d, newOQuery("points", []float64{0, 0, 0, 2}, r, true, "km", "contained"), "", nil, st)
		}
	})
	t.Run("DiscLargerThanAHemisphere", func(t *testing.T) {
		// Both ends of the meridian line are within 15,000 km of (0, 0); its
		// middle, near the antipode, is 20,000 km away.
		both(t, "point", []float64{0, 0}, 15000, "km")
		both(t, "point", []float64{0, 0}, 12000, "km")
	})
}

// ---------------------------------------------------------------------------
// Attributes: filters, sorting, paging, groups.

type oCond struct{ attr, op, val string }

func oNum(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	panic(fmt.Sprintf("not a number: %#v", v))
}

func (d *oDS) numeric(i int) bool { return d.types[i] == "integer" || d.types[i] == "float" }

// holds is the oracle of one filter condition.
func (d *oDS) holds(f *oFeat, c oCond) bool {
	i := d.col(c.attr)
	v := f.vals[i]
	if v == nil {
		return false
	}
	vals := []string{c.val}
	if c.op == "in" {
		vals = strings.Split(c.val, "|")
	}
	for _, s := range vals {
		var k int
		if d.numeric(i) {
			x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				panic(err)
			}
			k = cmp.Compare(oNum(v), x)
		} else {
			k = strings.Compare(v.(string), s) // byte-wise
		}
		switch c.op {
		case "min":
			return k >= 0
		case "max":
			return k <= 0
		}
		if k == 0 {
			return true
		}
	}
	return false
}

func (d *oDS) passes(f *oFeat, conds []oCond) bool {
	for _, c := range conds {
		if !d.holds(f, c) {
			return false
		}
	}
	return true
}

func oCondParams(conds []oCond) string {
	var b strings.Builder
	for _, c := range conds {
		fmt.Fprintf(&b, "&filter[%s][][%s]=%s", url.QueryEscape(c.attr), c.op, url.QueryEscape(c.val))
	}
	return b.String()
}

// oRandomValue is a value of attribute i: one of the dataset's, or near one.
func oRandomValue(r *rand.Rand, d *oDS, i int) string {
	var v any
	for k := 0; k < 100 && v == nil; k++ {
		v = d.feats[r.IntN(len(d.feats))].vals[i]
	}
	switch x := v.(type) {
	case int64:
		if r.IntN(4) == 0 {
			return strconv.FormatInt(x, 10) + ".5"
		}
		return strconv.FormatInt(x, 10)
	case float64:
		if r.IntN(4) == 0 {
			return oFmt(x * 1.001)
		}
		return oFmt(x)
	case string:
		switch r.IntN(6) {
		case 0:
			return x[:len(x)/2] // a prefix: between values byte-wise
		case 1:
			return []string{"B", "b", "zz", "", "Ä", "a"}[r.IntN(6)]
		}
		return x
	}
	return "0"
}

func oRandomConds(r *rand.Rand, d *oDS, attrs []string, n int) []oCond {
	var out []oCond
	for k := 0; k < n; k++ {
		a := attrs[r.IntN(len(attrs))]
		i := d.col(a)
		c := oCond{attr: a, op: []string{"min", "max", "equals", "in"}[r.IntN(4)]}
		c.val = oRandomValue(r, d, i)
		if c.op == "in" {
			for j := r.IntN(3); j > 0; j-- {
				c.val += "|" + oRandomValue(r, d, i)
			}
		}
		if d.numeric(i) && r.IntN(8) == 0 {
			c.val = " " + c.val + " " // spaces around a number
		}
		out = append(out, c)
	}
	return out
}

// oCmpVal orders two non-null values of one column: numbers as numbers,
// strings byte-wise.
func oCmpVal(a, b any) int {
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y)
		}
		return cmp.Compare(float64(x), oNum(b))
	case float64:
		return cmp.Compare(x, oNum(b))
	case string:
		return strings.Compare(x, b.(string))
	}
	panic(fmt.Sprintf("value %#v", a))
}

// oOrder is the oracle's order of features: by position, or by an
// attribute (nulls last either way, ties by position ascending).
func (d *oDS) oOrder(sel []*oFeat, sort string, desc bool) []int {
	sel = slices.Clone(sel)
	i := d.col(sort)
	slices.SortStableFunc(sel, func(a, b *oFeat) int {
		if i >= 0 {
			va, vb := a.vals[i], b.vals[i]
			switch {
			case va == nil && vb == nil:
			case va == nil:
				return 1
			case vb == nil:
				return -1
			default:
				if c := oCmpVal(va, vb); c != 0 {
					if desc {
						return -c
					}
					return c
				}
			}
			return cmp.Compare(a.pos, b.pos)
		}
		if desc {
			return cmp.Compare(b.pos, a.pos)
		}
		return cmp.Compare(a.pos, b.pos)
	})
	ids := make([]int, len(sel))
	for k, f := range sel {
		ids[k] = f.pos
	}
	return ids
}

// selectFeats is the oracle's selection by filters and a bbox (nil: none).
func (d *oDS) selectFeats(conds []oCond, bbox []oBox) []*oFeat {
	var out []*oFeat
	for _, f := range d.feats {
		if d.passes(f, conds) && (bbox == nil || f.hitsBoxes(bbox)) {
			out = append(out, f)
		}
	}
	return out
}

func oRandomBBox(r *rand.Rand) (string, []oBox) {
	w, s := math.Round(-180+360*r.Float64()), math.Round(-90+150*r.Float64())
	e, n := w+math.Round(20+100*r.Float64()), math.Min(90, s+math.Round(10+60*r.Float64()))
	if e > 180 {
		e -= 360
	}
	return fmt.Sprintf("&bbox=%s,%s,%s,%s", oFmt(w), oFmt(s), oFmt(e), oFmt(n)), oBoxesOf(w, s, e, n)
}

// oAttrs are the attributes random filters, sorts and groups use.
var oAttrs = map[string][]string{
	"points":              {"k", "n", "x", "w", "cat", "zip"},
	"shapes":              {"name", "val", "grp", "kind"},
	"nc":                  {"AREA", "NAME", "FIPS", "CRESS_ID", "BIR74", "SID79"},
	"naturalearth_lowres": {"pop_est", "continent", "name", "iso_a3", "gdp_md_est"},
	"naturalearth_cities": {"name"},
}

func TestQueryOracleFilters(t *testing.T) {
	t.Parallel() // its own fixture and store
	fx := newOFixture(t)
	r := rand.New(rand.NewPCG(5, 5))
	queries, matched := 0, 0
	check := func(t *testing.T, d *oDS, conds []oCond, bboxParam string, bbox []oBox, desc bool) {
		t.Helper()
		want := d.oOrder(d.selectFeats(conds, bbox), "", desc)
		params := oCondParams(conds) + bboxParam
		if desc {
			params += "&order=descending"
		}
		got := oIDs(oFetch(t, fx.ts, d, params[1:]))
		queries++
		matched += len(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s?%s: %s", d.name, params[1:], oDiff(got, want, d))
		}
	}
	t.Run("Alone", func(t *testing.T) {
		for _, d := range fx.all() {
			for i := 0; i < raceCut(30); i++ {
				check(t, d, oRandomConds(r, d, oAttrs[d.name], 1+r.IntN(3)), "", nil, r.IntN(4) == 0)
			}
		}
	})
	t.Run("TwoOnOneAttribute", func(t *testing.T) {
		for _, d := range []*oDS{fx.points, fx.countries, fx.nc} {
			for _, a := range oAttrs[d.name] {
				i := d.col(a)
				lo, hi := oRandomValue(r, d, i), oRandomValue(r, d, i)
				check(t, d, []oCond{{a, "min", lo}, {a, "max", hi}}, "", nil, false)
				check(t, d, []oCond{{a, "min", hi}, {a, "max", lo}}, "", nil, false)
			}
		}
	})
	t.Run("NullsMatchNothing", func(t *testing.T) {
		for _, c := range []oCond{{"n", "min", "-1e9"}, {"x", "max", "1e300"}, {"cat", "min", ""}, {"w", "in", "0|-1.5|2.25|1e10"}} {
			want := fx.points.selectFeats([]oCond{c}, nil)
			nulls := 0
			for _, f := range fx.points.feats {
				if f.vals[fx.points.col(c.attr)] == nil {
					nulls++
				}
			}
			if nulls == 0 || len(want)+nulls != len(fx.points.feats) {
				t.Fatalf("%v: %d selected, %d nulls of %d", c, len(want), nulls, len(fx.points.feats))
			}
			check(t, fx.points, []oCond{c}, "", nil, false)
		}
	})
	t.Run("ByteWiseStrings", func(t *testing.T) {
		// "Ärger" sorts after "zeta" byte-wise; "B" before "a".
		for _, c := range [][]oCond{{{"cat", "min", "zeta"}}, {{"cat", "max", "B"}}, {{"cat", "min", "b"}, {"cat", "max", "ba"}},
			{{"zip", "max", "09999"}}, {{"cat", "in", "a b|Ärger"}}, {{"zip", "equals", "00501"}}} {
			check(t, fx.points, c, "", nil, false)
		}
	})
	t.Run("WithBBox", func(t *testing.T) {
		for _, d := range fx.all() {
			for i := 0; i < raceCut(8); i++ {
				bp, bb := oRandomBBox(r)
				check(t, d, oRandomConds(r, d, oAttrs[d.name], 1+r.IntN(2)), bp, bb, r.IntN(2) == 0)
			}
		}
	})
	t.Run("WithNear", func(t *testing.T) {
		st := &oStats{}
		for _, d := range fx.all() {
			for i := 0; i < raceCut(8); i++ {
				kind := []string{"point", "points", "line", "polygon"}[r.IntN(4)]
				q := oRandomQuery(r, d, kind, oUnits[r.IntN(5)], []string{"full", "contained"}[r.IntN(2)], 3000)
				conds := oRandomConds(r, d, oAttrs[d.name], 1+r.IntN(2))
				checkNear(t, fx.ts, d, q, oCondParams(conds), func(f *oFeat) bool { return d.passes(f, conds) }, st)
			}
		}
		st.log(t)
		queries += st.queries
	})
	t.Logf("%d filter queries, %d features selected in all", queries, matched)
	if queries < raceCut(200) || matched < raceCut(10000) {
		t.Errorf("too little: %d queries, %d features", queries, matched)
	}
}

// oFetchPages fetches pages of size limit from start 0 until a short one
// (at most maxPages+1 of them) and concatenates them.
func oFetchPages(t *testing.T, ts *testServer, d *oDS, params string, limit, maxPages int) []int {
	t.Helper()
	var all []int
	for start := 0; ; start += limit {
		page := oIDs(oFetch(t, ts, d, fmt.Sprintf("%s&start=%d&limit=%d", params, start, limit)))
		if len(page) > limit {
			t.Fatalf("%s: page of %d with limit %d", params, len(page), limit)
		}
		all = append(all, page...)
		if len(page) < limit || start/limit >= maxPages {
			return all
		}
	}
}

func TestQueryOracleSortAndPaging(t *testing.T) {
	t.Parallel() // its own fixture and store
	fx := newOFixture(t)
	r := rand.New(rand.NewPCG(6, 6))
	queries := 0
	t.Run("Sort", func(t *testing.T) {
		for _, d := range fx.all() {
			for _, a := range oAttrs[d.name] {
				for _, desc := range []bool{false, true} {
					for variant := 0; variant < 3; variant++ {
						if raceCut(3) < 3 && (variant+len(a)+len(d.name))%3 != 0 {
							continue // one variant in three under the race detector
						}
						var conds []oCond
						var bbox []oBox
						params := "sort=" + url.QueryEscape(a)
						if desc {
							params += "&order=descending"
						}
						switch variant {
						case 1:
							conds = oRandomConds(r, d, oAttrs[d.name], 1)
							params += oCondParams(conds)
						case 2:
							var bp string
							bp, bbox = oRandomBBox(r)
							params += bp
						}
						want := d.oOrder(d.selectFeats(conds, bbox), a, desc)
						got := oIDs(oFetch(t, fx.ts, d, params))
						queries++
						if !slices.Equal(got, want) {
							t.Errorf("%s?%s: %s", d.name, params, oDiff(got, want, d))
						}
					}
				}
			}
		}
	})
	t.Run("SortWithNear", func(t *testing.T) {
		// Point datasets, where the oracle's verdicts are exact.
		for _, d := range []*oDS{fx.points, fx.cities} {
			for i := 0; i < raceCut(10); i++ {
				q := oRandomQuery(r, d, "point", "km", "full", 3000)
				a := oAttrs[d.name][r.IntN(len(oAttrs[d.name]))]
				var sel []*oFeat
				for _, f := range d.feats {
					if j := q.judge(f); j.verdict == vBorder {
						t.Fatalf("borderline point %d in %s", f.pos, q.params())
					} else if j.verdict == vIn {
						sel = append(sel, f)
					}
				}
				desc := r.IntN(2) == 0
				params := q.params() + "&sort=" + url.QueryEscape(a)
				if desc {
					params += "&order=descending"
				}
				want := d.oOrder(sel, a, desc)
				got := oIDs(oFetch(t, fx.ts, d, params))
				queries++
				if !slices.Equal(got, want) {
					t.Errorf("%s?%s: %s", d.name, params, oDiff(got, want, d))
				}
			}
		}
	})
	t.Run("Paging", func(t *testing.T) {
		d := fx.points
		for _, c := range []struct {
			params string
			sort   string
			desc   bool
			conds  []oCond
			bbox   [4]float64
		}{
			{params: "geojson=1"},
			{params: "order=descending", desc: true},
			{params: "sort=n", sort: "n"},
			{params: "sort=x&order=descending", sort: "x", desc: true},
			{params: "sort=cat&order=descending&filter[n][][min]=10", sort: "cat", desc: true, conds: []oCond{{"n", "min", "10"}}},
			{params: "filter[cat][][in]=beta|gamma", conds: []oCond{{"cat", "in", "beta|gamma"}}},
			{params: "bbox=-30,-60,60,70&order=descending", desc: true, bbox: [4]float64{-30, -60, 60, 70}},
			{params: "bbox=170.5,-30,-170.25,-10&sort=zip", sort: "zip", bbox: [4]float64{170.5, -30, -170.25, -10}},
			{params: "bbox=-180,-90,180,90&filter[w][][equals]=0&sort=w&order=descending", sort: "w", desc: true,
				bbox: [4]float64{-180, -90, 180, 90}, conds: []oCond{{"w", "equals", "0"}}},
		} {
			var bbox []oBox
			if c.bbox != [4]float64{} {
				bbox = oBoxesOf(c.bbox[0], c.bbox[1], c.bbox[2], c.bbox[3])
			}
			want := d.oOrder(d.selectFeats(c.conds, bbox), c.sort, c.desc)
			if len(want) < 40 {
				t.Fatalf("%s: only %d features", c.params, len(want))
			}
			if got := oIDs(oFetch(t, fx.ts, d, c.params)); !slices.Equal(got, want) {
				t.Errorf("%s: %s", c.params, oDiff(got, want, d))
			}
			limits := []int{1, 7, 30, 333, 1000}
			if raceCut(5) < 5 {
				limits = []int{7, 333} // under the race detector
			}
			for _, limit := range limits {
				maxPages := 1 << 20
				if limit < 30 {
					maxPages = 40 // a prefix of the pages
				}
				got := oFetchPages(t, fx.ts, d, c.params, limit, maxPages)
				queries += len(got)/limit + 1
				w := want
				if len(w) > len(got) {
					w = w[:len(got)]
				}
				if !slices.Equal(got, w) || (limit >= 30 && len(got) != len(want)) {
					t.Errorf("%s: pages of %d: %s", c.params, limit, oDiff(got, w, d))
				}
			}
			n := len(want)
			for _, p := range []struct {
				start, limit int
				want         []int
			}{
				{0, 0, nil}, {n, 10, nil}, {n + 5, 10, nil}, {n - 1, 10, want[n-1:]}, {n - 3, 2, want[n-3 : n-1]}, {5, 100000, want[5:]},
			} {
				got := oIDs(oFetch(t, fx.ts, d, fmt.Sprintf("%s&start=%d&limit=%d", c.params, p.start, p.limit)))
				queries++
				if !slices.Equal(got, p.want) && !(len(got) == 0 && len(p.want) == 0) {
					t.Errorf("%s&start=%d&limit=%d: got %v, want %v", c.params, p.start, p.limit, head(got), head(p.want))
				}
			}
			// the default page is 30
			w := oFetchDefault(t, fx.ts, d.path+"/features.json?"+c.params)
			if !slices.Equal(w, want[:30]) {
				t.Errorf("%s without limit: %v, want the first 30", c.params, head(w))
			}
		}
	})
	t.Logf("%d sort and page queries", queries)
}

// oFetchDefault fetches a FeatureCollection without a limit parameter.
func oFetchDefault(t *testing.T, ts *testServer, path string) []int {
	t.Helper()
	fc := decode[struct {
		Features []oFeatureOut `json:"features"`
	}](t, must(t, ts.get(path+"&geojson=1", ""), 200))
	return oIDs(oPositions(fc.Features))
}

// ---------------------------------------------------------------------------
// Groups

type oAgg struct{ name, calc string }

type oGroupRow struct {
	val   any
	count int
	aggs  []any
}

// groups is the oracle of group_by (by == "": one row over everything).
func (d *oDS) groups(sel []*oFeat, by string, aggs []oAgg, desc bool) []oGroupRow {
	gi := d.col(by)
	type acc struct {
		row  oGroupRow
		vals [][]any
	}
	var order []*acc
	index := map[any]*acc{} // numbers by value (so 0 and -0 are one group)
	for _, f := range sel {
		var key, val any = "null", nil
		if gi >= 0 && f.vals[gi] != nil {
			val = f.vals[gi]
			key = val
			if d.numeric(gi) {
				key = oNum(val)
			} else {
				key = "s:" + val.(string)
			}
		}
		a := index[key]
		if a == nil {
			a = &acc{row: oGroupRow{val: val}, vals: make([][]any, len(aggs))}
			index[key] = a
			order = append(order, a)
		}
		a.row.count++
		for k, ag := range aggs {
			if v := f.vals[d.col(ag.name)]; v != nil {
				a.vals[k] = append(a.vals[k], v)
			}
		}
	}
	if gi < 0 && len(order) == 0 {
		order = append(order, &acc{vals: make([][]any, len(aggs))})
	}
	var rows []oGroupRow
	for _, a := range order {
		for k, ag := range aggs {
			vs := a.vals[k]
			if len(vs) == 0 {
				a.row.aggs = append(a.row.aggs, nil)
				continue
			}
			var res any
			switch ag.calc {
			case "min", "max":
				res = vs[0]
				for _, v := range vs[1:] {
					if c := oCmpVal(v, res); (ag.calc == "min" && c < 0) || (ag.calc == "max" && c > 0) {
						res = v
					}
				}
			case "sum", "average":
				var fs float64
				var is int64
				for _, v := range vs {
					fs += oNum(v)
					if x, ok := v.(int64); ok {
						is += x
					}
				}
				if _, isInt := vs[0].(int64); isInt && ag.calc == "sum" {
					res = is
				} else if ag.calc == "sum" {
					res = fs
				} else {
					res = fs / float64(len(vs))
				}
			}
			a.row.aggs = append(a.row.aggs, res)
		}
		rows = append(rows, a.row)
	}
	slices.SortStableFunc(rows, func(a, b oGroupRow) int {
		switch {
		case a.val == nil && b.val == nil:
			return 0
		case a.val == nil:
			return 1 // nulls last, either way
		case b.val == nil:
			return -1
		}
		if desc {
			return oCmpVal(b.val, a.val)
		}
		return oCmpVal(a.val, b.val)
	})
	return rows
}

// oSame compares an oracle value with a decoded JSON one.
func oSame(want, got any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case int64:
		g, ok := got.(float64)
		return ok && g == float64(w)
	case float64:
		g, ok := got.(float64)
		return ok && math.Abs(g-w) <= 1e-9*math.Max(1, math.Abs(w))
	case string:
		return got == w
	}
	return false
}

func oAggParams(by string, aggs []oAgg) string {
	var b strings.Builder
	if by != "" {
		b.WriteString("&group_by[]=" + url.QueryEscape(by))
	}
	for _, a := range aggs {
		fmt.Fprintf(&b, "&aggregates[][name]=%s&aggregates[][calc]=%s", url.QueryEscape(a.name), a.calc)
	}
	return b.String()
}

// compareGroups compares a grouped answer with the oracle's rows. With
// anyNullPlace the null group is compared wherever it is.
func compareGroups(t *testing.T, d *oDS, label, by string, aggs []oAgg, got []map[string]any, want []oGroupRow, anyNullPlace bool) {
	t.Helper()
	if anyNullPlace {
		move := func(rows []map[string]any) []map[string]any {
			for i, g := range rows {
				if v, ok := g[by]; ok && v == nil {
					return append(slices.Delete(slices.Clone(rows), i, i+1), g)
				}
			}
			return rows
		}
		got = move(got)
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d groups, oracle %d", label, len(got), len(want))
		return
	}
	for i, w := range want {
		g := got[i]
		bad := len(g) != 1+len(aggs)+map[bool]int{true: 1, false: 0}[by != ""]
		if by != "" && !oSame(w.val, g[by]) {
			bad = true
		}
		if g["count"] != float64(w.count) {
			bad = true
		}
		for k, a := range aggs {
			if !oSame(w.aggs[k], g[a.calc+"_"+a.name]) {
				bad = true
			}
		}
		if bad {
			t.Errorf("%s: group %d is %v, oracle %s=%v count %d %v", label, i, g, by, w.val, w.count, w.aggs)
			return
		}
	}
}

func oRandomAggs(r *rand.Rand, d *oDS) []oAgg {
	var out []oAgg
	seen := map[oAgg]bool{}
	for k := 1 + r.IntN(4); k > 0; k-- {
		a := oAttrs[d.name][r.IntN(len(oAttrs[d.name]))]
		calcs := []string{"min", "max"}
		if d.numeric(d.col(a)) {
			calcs = append(calcs, "sum", "average")
		}
		g := oAgg{a, calcs[r.IntN(len(calcs))]}
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}

func TestQueryOracleGroups(t *testing.T) {
	t.Parallel() // its own fixture and store
	fx := newOFixture(t)
	r := rand.New(rand.NewPCG(7, 7))
	queries, rows := 0, 0
	run := func(t *testing.T, d *oDS, by string, aggs []oAgg, conds []oCond, bbox string, boxes []oBox, desc bool, page [2]int) {
		t.Helper()
		params := oAggParams(by, aggs) + oCondParams(conds) + bbox
		if desc {
			params += "&order=descending"
		}
		if page != [2]int{} {
			params += fmt.Sprintf("&start=%d&limit=%d", page[0], page[1])
		}
		got := decode[[]map[string]any](t, must(t, fx.ts.get(d.path+"/features.json?"+params[1:], ""), 200))
		want := d.groups(d.selectFeats(conds, boxes), by, aggs, desc)
		if page != [2]int{} {
			want = want[min(page[0], len(want)):min(page[0]+page[1], len(want))]
		}
		queries++
		rows += len(want)
		compareGroups(t, d, d.name+"?"+params[1:], by, aggs, got, want, desc)
	}
	t.Run("Random", func(t *testing.T) {
		for _, d := range []*oDS{fx.points, fx.shapes, fx.nc, fx.countries} {
			for i := 0; i < raceCut(20); i++ {
				var by string
				for by == "" || by == "w" || by == "k" {
					by = oAttrs[d.name][r.IntN(len(oAttrs[d.name]))]
				}
				var conds []oCond
				if r.IntN(2) == 0 {
					conds = oRandomConds(r, d, oAttrs[d.name], 1)
				}
				bp, bb := "", []oBox(nil)
				if r.IntN(3) == 0 {
					bp, bb = oRandomBBox(r)
				}
				desc := r.IntN(3) == 0
				var page [2]int
				if !desc && r.IntN(3) == 0 {
					page = [2]int{r.IntN(5), 1 + r.IntN(10)}
				}
				run(t, d, by, oRandomAggs(r, d), conds, bp, bb, desc, page)
			}
		}
	})
	t.Run("EveryCalc", func(t *testing.T) {
		d := fx.points
		var aggs []oAgg
		for _, a := range []string{"n", "x", "w"} {
			for _, c := range []string{"min", "max", "sum", "average"} {
				aggs = append(aggs, oAgg{a, c})
			}
		}
		aggs = append(aggs, oAgg{"cat", "min"}, oAgg{"cat", "max"}, oAgg{"zip", "min"}, oAgg{"zip", "max"})
		run(t, d, "cat", aggs, nil, "", nil, false, [2]int{})
		run(t, d, "n", aggs, nil, "", nil, false, [2]int{})
		run(t, d, "", aggs, nil, "", nil, false, [2]int{})
		run(t, d, "", aggs, []oCond{{"cat", "equals", "beta"}}, "", nil, false, [2]int{})
		run(t, d, "", aggs, []oCond{{"cat", "equals", "no such value"}}, "", nil, false, [2]int{}) // one row, count 0, nulls
		bp, bb := "&bbox=100.125,40,120.5,60.25", oBoxesOf(100.125, 40, 120.5, 60.25)
		run(t, d, "cat", aggs, []oCond{{"n", "max", "30"}}, bp, bb, false, [2]int{})
		run(t, fx.countries, "continent", []oAgg{{"pop_est", "sum"}, {"gdp_md_est", "average"}, {"name", "min"}, {"name", "max"}, {"gdp_md_est", "sum"}},
			nil, "", nil, false, [2]int{})
	})
	t.Run("WithNear", func(t *testing.T) {
		d := fx.points
		for i := 0; i < 10; i++ {
			q := oRandomQuery(r, d, "point", "km", "full", 3000)
			var sel []*oFeat
			for _, f := range d.feats {
				if j := q.judge(f); j.verdict == vBorder {
					t.Fatalf("borderline point %d in %s", f.pos, q.params())
				} else if j.verdict == vIn {
					sel = append(sel, f)
				}
			}
			aggs := oRandomAggs(r, d)
			params := "&" + q.params() + oAggParams("cat", aggs)
			got := decode[[]map[string]any](t, must(t, fx.ts.get(d.path+"/features.json?"+params[1:], ""), 200))
			queries++
			compareGroups(t, d, d.name+"?"+params[1:], "cat", aggs, got, d.groups(sel, "cat", aggs, false), false)
		}
	})
	t.Run("NullGroupLastWhenDescending", func(t *testing.T) {
		// Nulls come last in both directions, as features do.
		params := "group_by[]=cat&order=descending"
		got := decode[[]map[string]any](t, must(t, fx.ts.get(fx.points.path+"/features.json?"+params, ""), 200))
		want := fx.points.groups(fx.points.feats, "cat", nil, true)
		queries++
		compareGroups(t, fx.points, "points?"+params, "cat", nil, got, want, false)
	})
	t.Run("NegativeZeroIsZero", func(t *testing.T) {
		// w holds both 0.0 and -0.0: one number, one group.
		params := "group_by[]=w&aggregates[][name]=n&aggregates[][calc]=sum"
		got := decode[[]map[string]any](t, must(t, fx.ts.get(fx.points.path+"/features.json?"+params, ""), 200))
		want := fx.points.groups(fx.points.feats, "w", []oAgg{{"n", "sum"}}, false)
		queries++
		compareGroups(t, fx.points, "points?"+params, "w", []oAgg{{"n", "sum"}}, got, want, false)
	})
	t.Logf("%d group queries, %d group rows compared", queries, rows)
}

// ---------------------------------------------------------------------------
// Errors

func TestQueryErrors(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createCSV("?title=errs", "lat,lon,n,x,name\n1,2,3,0.5,a\n4,5,6,1.5,b\n")
	for _, c := range []struct {
		name, query string
		param       string   // the message starts with it (or with one of a|b)
		mentions    []string // and says these
	}{
		{"ErrBBoxThreeNumbers", "bbox=1,2,3", "bbox", []string{"4"}},
		{"ErrBBoxFiveNumbers", "bbox=1,2,3,4,5", "bbox", nil},
		{"ErrBBoxNotANumber", "bbox=a,2,3,4", "bbox", []string{`"a"`}},
		{"ErrBBoxLatitude91", "bbox=0,0,10,91", "bbox", []string{"91"}},
		{"ErrBBoxLongitude181", "bbox=0,0,181,10", "bbox", []string{"181"}},
		{"ErrBBoxSouthAboveNorth", "bbox=0,10,10,5", "bbox", []string{"south"}},
		{"ErrLatitude91", "lat=91&lon=0&radius=1", "lat", []string{"91"}},
		{"ErrLongitude181", "lat=0&lon=181&radius=1", "lon", []string{"181"}},
		{"ErrLatNotANumber", "lat=north&lon=0&radius=1", "lat", nil},
		{"ErrLatWithoutLon", "lat=1&radius=5", "lon", []string{"missing"}},
		{"ErrLonWithoutLat", "lon=1&radius=5", "lat", []string{"missing"}},
		{"ErrLatLonWithoutRadius", "lat=1&lon=2", "radius", []string{"missing"}},
		{"ErrNegativeRadius", "lat=1&lon=2&radius=-1", "radius", []string{"negative"}},
		{"ErrRadiusNotANumber", "lat=1&lon=2&radius=far", "radius", nil},
		{"ErrUnknownUnits", "lat=1&lon=2&radius=1&units=parsecs", "units", []string{"parsecs"}},
		{"ErrUnitsWithoutRadius", "lat=1&lon=2&units=km", "units", []string{"radius"}},
		{"ErrRadiusAlone", "radius=5", "radius", nil},
		{"ErrPointsWithoutRadius", "points=1,2,3,4", "radius", []string{"points"}},
		{"ErrLineWithoutRadius", "line=1,2,3,4", "radius", []string{"line"}},
		{"ErrPointsOddCount", "points=1,2,3&radius=1", "points", nil},
		{"ErrLineOnePoint", "line=1,2&radius=1", "line", nil},
		{"ErrPolygonNotClosed", "polygon=0,0,1,0,1,1,0,1", "polygon", []string{"closed"}},
		{"ErrPolygonTooShort", "polygon=0,0,1,1,0,0", "polygon", nil},
		{"ErrPolygonLatitude", "polygon=0,0,1,0,1,95,0,0", "polygon", []string{"95"}},
		{"ErrLatLonAndPoints", "lat=1&lon=2&radius=3&points=1,2", "lat|lon|points", []string{"points"}},
		{"ErrPointsAndLine", "points=1,2&line=1,2,3,4&radius=3", "points|line", []string{"points", "line"}},
		{"ErrUnknownIntersect", "lat=1&lon=2&radius=3&intersect=partial", "intersect", []string{"partial"}},
		{"ErrUnknownOrder", "order=sideways", "order", []string{"sideways"}},
		{"ErrUnknownSort", "sort=nope", "sort", []string{"nope"}},
		{"ErrUnknownFilterAttribute", "filter[nope][][min]=1", "filter[nope]", []string{"nope"}},
		{"ErrFilterNotANumber", "filter[n][][min]=ten", "filter[n][][min]", []string{"ten"}},
		{"ErrFilterInNotANumber", "filter[x][][in]=1|two", "filter[x][][in]", []string{"two"}},
		{"ErrUnknownOp", "filter[n][][between]=1", "filter[n]", []string{"between"}},
		{"ErrUnknownGroupBy", "group_by[]=nope", "group_by", []string{"nope"}},
		{"ErrUnknownAggregateAttribute", "aggregates[][name]=nope&aggregates[][calc]=sum", "aggregates", []string{"nope"}},
		{"ErrUnknownCalc", "group_by[]=name&aggregates[][name]=n&aggregates[][calc]=median", "aggregates", []string{"median"}},
		{"ErrSumOfString", "group_by[]=n&aggregates[][name]=name&aggregates[][calc]=sum", "aggregates", []string{"name"}},
		{"ErrAverageOfString", "aggregates[][name]=name&aggregates[][calc]=average", "aggregates", []string{"name"}},
		{"ErrAggregateWithoutCalc", "aggregates[][name]=n", "aggregates", nil},
		{"ErrWithDistanceWithoutGeometry", "with_distance=1", "with_distance", nil},
		{"ErrWithDistanceAndBBox", "with_distance=1&bbox=0,0,1,1", "with_distance", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, suffix := range []string{"", "&geojson=1"} {
				m := errorOf(t, ts.get(path+"/features.json?"+c.query+suffix, ""), 400, "invalid", "")
				msg := m["error"].(string)
				if !slices.ContainsFunc(strings.Split(c.param, "|"), func(p string) bool { return strings.HasPrefix(msg, p+":") }) {
					t.Errorf("%s: message %q does not start with %q", c.query, msg, c.param)
				}
				for _, w := range c.mentions {
					if !strings.Contains(msg, w) {
						t.Errorf("%s: message %q does not say %q", c.query, msg, w)
					}
				}
			}
		})
	}
	t.Run("OKBoundaries", func(t *testing.T) {
		// The limits themselves are valid.
		for _, q := range []string{"bbox=-180,-90,180,90", "bbox=10,5,10,5", "lat=90&lon=180&radius=0", "lat=-90&lon=-180&radius=0&units=degrees",
			"polygon=0,0,1,0,1,1,0,0", "points=1,2&radius=0", "radius=1&units=mi&line=0,0,1,1", "order=DESC", "intersect=FULL&lat=1&lon=2&radius=3"} {
			must(t, ts.get(path+"/features.json?"+q, ""), 200)
		}
	})
}

// ---------------------------------------------------------------------------
// The oracle checked against brute force, so that a disagreement points at
// the server.

func TestQueryOracleSelfCheck(t *testing.T) {
	t.Parallel() // its own fixture and store
	r := rand.New(rand.NewPCG(8, 8))
	t.Run("ArcDistance", func(t *testing.T) {
		for i := 0; i < raceCut(300); i++ {
			span := []float64{0.01, 2, 40, 150}[i%4]
			ax, ay := -180+360*r.Float64(), -89+178*r.Float64()
			bx, by := oClampLL(ax+span*(2*r.Float64()-1), ay+span*(2*r.Float64()-1))
			px, py := oClampLL(ax+span*(2*r.Float64()-1), ay+span*(2*r.Float64()-1))
			a, b, p := oVec(ax, ay), oVec(bx, by), oVec(px, py)
			const n = 20000
			best := math.Inf(1)
			for k := 0; k <= n; k++ {
				best = math.Min(best, oAngle(p, oSlerp(a, b, float64(k)/n)))
			}
			got := oArcAngle(p, a, b)
			if got > best+1e-12 || got < best-oAngle(a, b)/n/2-1e-12 {
				t.Fatalf("arc (%v,%v)-(%v,%v), p (%v,%v): %v, sampled %v", ax, ay, bx, by, px, py, got, best)
			}
			pd := oSegDeg(px, py, ax, ay, bx, by)
			bestD := math.Inf(1)
			for k := 0; k <= n; k++ {
				f := float64(k) / n
				bestD = math.Min(bestD, math.Hypot(px-(ax+f*(bx-ax)), py-(ay+f*(by-ay))))
			}
			if pd > bestD+1e-12 || pd < bestD-math.Hypot(bx-ax, by-ay)/n/2-1e-12 {
				t.Fatalf("segment: %v, sampled %v", pd, bestD)
			}
		}
	})
	t.Run("InRing", func(t *testing.T) {
		// the winding number against a count of crossings of a vertical ray
		for i := 0; i < raceCut(200); i++ {
			ring := oStar(r, 0, 0, 1+r.Float64(), 3+r.IntN(10), 1)
			for k := 0; k < 50; k++ {
				x, y := 3*(2*r.Float64()-1), 3*(2*r.Float64()-1)
				crossings := 0
				for j := 0; j+3 < len(ring); j += 2 {
					ax, ay, bx, by := ring[j], ring[j+1], ring[j+2], ring[j+3]
					if (ax > x) != (bx > x) && ay+(x-ax)*(by-ay)/(bx-ax) > y {
						crossings++
					}
				}
				if got := oInRing(x, y, ring); got != (crossings%2 == 1) {
					t.Fatalf("(%v, %v) in %v: %v, crossings %d", x, y, ring, got, crossings)
				}
			}
		}
		sq := []float64{0, 0, 2, 0, 2, 2, 0, 2, 0, 0}
		hole := []float64{0.5, 0.5, 1.5, 0.5, 1.5, 1.5, 0.5, 1.5, 0.5, 0.5}
		for _, c := range []struct {
			x, y float64
			want bool
		}{{0, 0, true}, {1, 0, true}, {2, 1, true}, {1, 1, false}, {0.5, 1, true}, {0.25, 0.25, true}, {2.1, 1, false}} {
			if got := oInArea(c.x, c.y, [][]float64{sq, hole}); got != c.want {
				t.Errorf("(%v, %v) in the square with a hole: %v", c.x, c.y, got)
			}
		}
	})
	t.Run("Judge", func(t *testing.T) {
		// judge, with its pruning, skipped edges and early exits, against
		// the smallest or largest d over 80 points per edge.
		_, d := oShapesCSV(2)
		checked := 0
		for i := 0; i < 100; i++ {
			kind := []string{"point", "points", "line", "polygon"}[i%4]
			in := []string{"full", "contained"}[(i/4)%2]
			q := oRandomQuery(r, d, kind, oUnits[r.IntN(5)], in, 2000)
			if i%3 == 0 {
				q = oTuneRadius(r, d, q)
			}
			for k := 0; k < 30; k++ {
				f := d.feats[r.IntN(len(d.feats))]
				j := q.judge(f)
				if j.verdict == vBorder {
					continue
				}
				v, step := oBrute(q, f, 80)
				tol := 1e-9*q.scale + 1e-9*q.r
				var ok bool
				switch {
				case q.full && j.verdict == vIn:
					ok = v <= q.r+step/2+tol
				case q.full:
					ok = v > q.r-tol
				case j.verdict == vIn:
					ok = v <= q.r+tol
				default:
					ok = v > q.r-step/2-tol
				}
				checked++
				if !ok {
					t.Fatalf("%s, feature %d: judge %+v, brute force %v (step %v)", q.params(), f.pos, j, v, step)
				}
			}
		}
		if checked < 2000 {
			t.Fatalf("only %d judgements checked", checked)
		}
	})
}

// oBrute is the smallest (full) or largest (contained) signed distance
// over n points per edge of a feature, and the largest step.
func oBrute(q *oQuery, f *oFeat, n int) (float64, float64) {
	best, worst, step := math.Inf(1), math.Inf(-1), 0.0
	for _, p := range f.parts {
		if q.full && p.kind == oPoly {
			for i, c := range q.pts {
				if (i == 0 || q.kind == "points") && oInArea(c.x, c.y, p.rings) {
					best = math.Inf(-1)
				}
			}
		}
		rings := p.pts
		if !q.full && p.kind == oPoly {
			rings = rings[:1]
		}
		for _, ring := range rings {
			for i, a := range ring {
				v := q.sd(a)
				best, worst = math.Min(best, v), math.Max(worst, v)
				if i == 0 {
					continue
				}
				step = math.Max(step, q.dist(ring[i-1], a)/float64(n))
				for k := 1; k < n; k++ {
					v := q.sd(q.lerp(ring[i-1], a, float64(k)/float64(n)))
					best, worst = math.Min(best, v), math.Max(worst, v)
				}
			}
		}
	}
	if q.full {
		return best, step
	}
	return worst, step
}
