// Package spatial is the geometry work of feature queries: distances on the
// sphere or in planar degrees, the buffer predicates of radius queries,
// bounding-box intersection, centroids, and the boxes that prefilter a query
// through a spatial index. Everything is pure computation on lon/lat
// coordinates; stores share it.
//
// Distances in km, m, ft and miles are great-circle distances on a sphere of
// radius 6371.0088 km (the mean Earth radius of IUGG), with the edges of
// query geometries and features taken as great-circle arcs between their
// vertices. Distances in degrees are planar: Euclidean in lon/lat.
package spatial

import "math"

// EarthRadius is the mean radius of the Earth in metres (IUGG).
const EarthRadius = 6371008.8

// Unit factors: metres per unit. Degrees are not a length: see Metric.
var unitMetres = map[string]float64{
	"km":    1000,
	"m":     1,
	"ft":    0.3048,
	"miles": 1609.344,
}

// ValidUnit reports whether u is a unit a radius may be given in.
func ValidUnit(u string) bool {
	_, ok := unitMetres[u]
	return ok || u == "degrees"
}

// Metric measures distances in one unit.
type Metric struct {
	planar bool    // degrees: Euclidean in lon/lat
	scale  float64 // sphere: units per radian of arc
}

// NewMetric returns the metric of a unit (km, m, ft, miles, degrees).
func NewMetric(unit string) Metric {
	if unit == "degrees" {
		return Metric{planar: true, scale: 1}
	}
	f, ok := unitMetres[unit]
	if !ok {
		f = 1000
	}
	return Metric{scale: EarthRadius / f}
}

// Planar reports whether the metric is planar degrees.
func (m Metric) Planar() bool { return m.planar }

// Degrees converts a distance in the metric's unit into degrees of latitude
// (an upper bound of the degrees of arc it spans).
func (m Metric) Degrees(d float64) float64 {
	if m.planar {
		return d
	}
	return d / m.scale * 180 / math.Pi
}

const rad = math.Pi / 180

// Dist is the distance between two points.
func (m Metric) Dist(ax, ay, bx, by float64) float64 {
	if m.planar {
		return math.Hypot(ax-bx, ay-by)
	}
	return haversine(ax, ay, bx, by) * m.scale
}

// haversine is the central angle between two points, in radians.
func haversine(ax, ay, bx, by float64) float64 {
	sy := math.Sin((by - ay) * rad / 2)
	sx := math.Sin((bx - ax) * rad / 2)
	h := sy*sy + math.Cos(ay*rad)*math.Cos(by*rad)*sx*sx
	return 2 * math.Asin(math.Sqrt(math.Min(1, h)))
}

type vec3 struct{ x, y, z float64 }

func unit(lon, lat float64) vec3 {
	cl := math.Cos(lat * rad)
	return vec3{cl * math.Cos(lon*rad), cl * math.Sin(lon*rad), math.Sin(lat * rad)}
}

func (a vec3) dot(b vec3) float64 { return a.x*b.x + a.y*b.y + a.z*b.z }
func (a vec3) cross(b vec3) vec3 {
	return vec3{a.y*b.z - a.z*b.y, a.z*b.x - a.x*b.z, a.x*b.y - a.y*b.x}
}
func (a vec3) norm() float64 { return math.Sqrt(a.dot(a)) }

// DistSeg is the distance from point p to the segment a–b: on the sphere,
// to the great-circle arc between a and b; planar, to the straight segment.
func (m Metric) DistSeg(px, py, ax, ay, bx, by float64) float64 {
	if m.planar {
		dx, dy := bx-ax, by-ay
		l2 := dx*dx + dy*dy
		t := 0.0
		if l2 > 0 {
			t = math.Max(0, math.Min(1, ((px-ax)*dx+(py-ay)*dy)/l2))
		}
		return math.Hypot(px-(ax+t*dx), py-(ay+t*dy))
	}
	va, vb, vp := unit(ax, ay), unit(bx, by), unit(px, py)
	n := va.cross(vb)
	nl := n.norm()
	endpoints := math.Min(haversine(px, py, ax, ay), haversine(px, py, bx, by))
	if nl < 1e-12 { // a and b coincide (or are antipodal): no single arc
		return endpoints * m.scale
	}
	n = vec3{n.x / nl, n.y / nl, n.z / nl}
	// The foot of the perpendicular from p onto the great circle lies on the
	// arc when it is on the inner side of both end planes.
	s := vp.dot(n)
	c := vec3{vp.x - s*n.x, vp.y - s*n.y, vp.z - s*n.z}
	if va.cross(c).dot(n) >= 0 && c.cross(vb).dot(n) >= 0 && c.norm() > 1e-15 {
		return math.Min(math.Asin(math.Min(1, math.Abs(s))), endpoints) * m.scale
	}
	return endpoints * m.scale
}

// Interpolate returns the point a fraction t of the way from a to b: along
// the great-circle arc on the sphere, along the straight line in degrees.
func (m Metric) Interpolate(ax, ay, bx, by, t float64) (float64, float64) {
	if m.planar {
		return ax + t*(bx-ax), ay + t*(by-ay)
	}
	va, vb := unit(ax, ay), unit(bx, by)
	omega := math.Acos(math.Max(-1, math.Min(1, va.dot(vb))))
	if omega < 1e-12 {
		return ax + t*(bx-ax), ay + t*(by-ay)
	}
	sa, sb := math.Sin((1-t)*omega)/math.Sin(omega), math.Sin(t*omega)/math.Sin(omega)
	v := vec3{sa*va.x + sb*vb.x, sa*va.y + sb*vb.y, sa*va.z + sb*vb.z}
	return math.Atan2(v.y, v.x) / rad, math.Atan2(v.z, math.Hypot(v.x, v.y)) / rad
}
