package spatial

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"mapcommons/format/wkb"
)

// The expected values here come from the test's own spherical geometry:
// a haversine on lon/lat, slerp between unit vectors, and the destination
// point formula, all on a sphere of radius 6371008.8 m.

const testR = 6371008.8

func deg2rad(d float64) float64 { return d * math.Pi / 180 }

// hav is the great-circle distance in metres (haversine formula).
func hav(lon1, lat1, lon2, lat2 float64) float64 {
	p1, p2 := deg2rad(lat1), deg2rad(lat2)
	dp, dl := p2-p1, deg2rad(lon2-lon1)
	a := math.Pow(math.Sin(dp/2), 2) + math.Cos(p1)*math.Cos(p2)*math.Pow(math.Sin(dl/2), 2)
	return 2 * testR * math.Atan2(math.Sqrt(a), math.Sqrt(math.Max(0, 1-a)))
}

type tv [3]float64

func tvec(lon, lat float64) tv {
	p, l := deg2rad(lat), deg2rad(lon)
	return tv{math.Cos(p) * math.Cos(l), math.Cos(p) * math.Sin(l), math.Sin(p)}
}

func tlonlat(v tv) (float64, float64) {
	return math.Atan2(v[1], v[0]) * 180 / math.Pi, math.Atan2(v[2], math.Hypot(v[0], v[1])) * 180 / math.Pi
}

// slerpLL is the point a fraction t along the arc from a to b.
func slerpLL(ax, ay, bx, by, t float64) (float64, float64) {
	a, b := tvec(ax, ay), tvec(bx, by)
	dot := a[0]*b[0] + a[1]*b[1] + a[2]*b[2]
	w := math.Acos(math.Max(-1, math.Min(1, dot)))
	if w < 1e-12 {
		return ax, ay
	}
	s := math.Sin(w)
	ka, kb := math.Sin((1-t)*w)/s, math.Sin(t*w)/s
	return tlonlat(tv{ka*a[0] + kb*b[0], ka*a[1] + kb*b[1], ka*a[2] + kb*b[2]})
}

// destination is the point at distance d (metres) from (lon, lat) in
// direction bearing (degrees from north).
func destination(lon, lat, bearing, d float64) (float64, float64) {
	p1, l1, th, dl := deg2rad(lat), deg2rad(lon), deg2rad(bearing), d/testR
	p2 := math.Asin(math.Sin(p1)*math.Cos(dl) + math.Cos(p1)*math.Sin(dl)*math.Cos(th))
	l2 := l1 + math.Atan2(math.Sin(th)*math.Sin(dl)*math.Cos(p1), math.Cos(dl)-math.Sin(p1)*math.Sin(p2))
	x := math.Mod(l2*180/math.Pi+540, 360) - 180
	return x, p2 * 180 / math.Pi
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// sameLon compares longitudes modulo 360 (any longitude at a pole).
func samePoint(ax, ay, bx, by, tol float64) bool {
	if !near(ay, by, tol) {
		return false
	}
	if math.Abs(ay) > 90-1e-7 {
		return true
	}
	d := math.Mod(math.Abs(ax-bx), 360)
	return d <= tol || 360-d <= tol
}

func TestMetricDist(t *testing.T) {
	const london, paris = "london", "paris"
	lon, lat := map[string]float64{london: -0.1278, paris: 2.3522}, map[string]float64{london: 51.5074, paris: 48.8566}
	lp := hav(lon[london], lat[london], lon[paris], lat[paris])
	if lp < 343000 || lp > 344000 {
		t.Fatalf("the test's own London–Paris is %v m", lp)
	}
	for _, c := range []struct {
		name           string
		unit           string
		ax, ay, bx, by float64
		want, tol      float64
	}{
		{"OKLondonParisKm", "km", lon[london], lat[london], lon[paris], lat[paris], lp / 1000, 1e-9},
		{"OKLondonParisM", "m", lon[london], lat[london], lon[paris], lat[paris], lp, 1e-6},
		{"OKLondonParisFt", "ft", lon[london], lat[london], lon[paris], lat[paris], lp / 0.3048, 1e-5},
		{"OKLondonParisMiles", "miles", lon[london], lat[london], lon[paris], lat[paris], lp / 1609.344, 1e-9},
		{"OKLondonParisDegrees", "degrees", lon[london], lat[london], lon[paris], lat[paris], math.Hypot(2.48, 2.6508), 1e-12},
		{"OKSamePoint", "km", 12.5, 41.9, 12.5, 41.9, 0, 0},
		{"OKAntipodeEquator", "km", 0, 0, 180, 0, math.Pi * testR / 1000, 1e-6},
		{"OKAntipode", "m", 10, 20, -170, -20, math.Pi * testR, 1e-3},
		{"OKPoleToPole", "km", 0, 90, 123, -90, math.Pi * testR / 1000, 1e-6},
		{"OKAcrossTheAntimeridian", "km", 179.5, 10, -179.5, 10, hav(179.5, 10, -179.5, 10) / 1000, 1e-9},
		{"OKPlusMinus180IsOnePlace", "m", 180, 10, -180, 10, 0, 1e-6},
		{"OKPoleAnyLongitude", "m", 0, 90, 77, 90, 0, 1e-6},
		{"OKQuarter", "miles", 0, 0, 90, 0, math.Pi / 2 * testR / 1609.344, 1e-6},
		{"OKOneDegreeOfLatitude", "km", 5, 10, 5, 11, math.Pi / 180 * testR / 1000, 1e-9},
		{"OKDegreesArePlanar", "degrees", 179, 0, -179, 0, 358, 0},
		{"OKDegreesNearPole", "degrees", 0, 89, 180, 89, 180, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := NewMetric(c.unit)
			got := m.Dist(c.ax, c.ay, c.bx, c.by)
			if !near(got, c.want, c.tol) {
				t.Fatalf("Dist = %.12g, want %.12g", got, c.want)
			}
			if back := m.Dist(c.bx, c.by, c.ax, c.ay); !near(back, got, 1e-9*math.Max(1, got)) {
				t.Fatalf("not symmetric: %v, %v", got, back)
			}
		})
	}
	t.Run("OKLondonParisIs343.5km", func(t *testing.T) {
		if got := NewMetric("km").Dist(lon[london], lat[london], lon[paris], lat[paris]); !near(got, 343.5, 0.5) {
			t.Fatalf("London–Paris %v km", got)
		}
	})
	t.Run("OKRandomAgainstHaversine", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		m := NewMetric("m")
		for i := 0; i < 5000; i++ {
			ax, ay, bx, by := -180+360*r.Float64(), -90+180*r.Float64(), -180+360*r.Float64(), -90+180*r.Float64()
			want := hav(ax, ay, bx, by)
			// asin near 1 loses precision for near-antipodal points: 1e-8 rad
			if got := m.Dist(ax, ay, bx, by); !near(got, want, 1e-8*testR) {
				t.Fatalf("Dist(%v,%v,%v,%v) = %v, haversine %v", ax, ay, bx, by, got, want)
			}
		}
	})
	t.Run("OKUnits", func(t *testing.T) {
		for _, u := range []string{"km", "m", "ft", "miles", "degrees"} {
			if !ValidUnit(u) {
				t.Errorf("%s is not valid", u)
			}
		}
		for _, u := range []string{"", "KM", "mi", "meters", "nm", "yards"} {
			if ValidUnit(u) {
				t.Errorf("%q is valid", u)
			}
		}
		if !NewMetric("degrees").Planar() || NewMetric("km").Planar() {
			t.Error("Planar")
		}
		if got := NewMetric("km").Degrees(testR / 1000 * math.Pi / 180); !near(got, 1, 1e-12) {
			t.Errorf("Degrees of one degree of arc: %v", got)
		}
		if got := NewMetric("degrees").Degrees(2.5); got != 2.5 {
			t.Errorf("Degrees in degrees: %v", got)
		}
	})
}

// sampledSegDist is the smallest distance from p to n+1 points along the
// arc (sphere) or the segment (planar).
func sampledSegDist(unit string, px, py, ax, ay, bx, by float64, n int) float64 {
	best := math.Inf(1)
	for k := 0; k <= n; k++ {
		t := float64(k) / float64(n)
		var x, y, d float64
		if unit == "degrees" {
			x, y = ax+t*(bx-ax), ay+t*(by-ay)
			d = math.Hypot(px-x, py-y)
		} else {
			x, y = slerpLL(ax, ay, bx, by, t)
			d = hav(px, py, x, y) / 1000
		}
		best = math.Min(best, d)
	}
	return best
}

func TestMetricDistSeg(t *testing.T) {
	n := raceCut(20000)
	check := func(t *testing.T, unit string, px, py, ax, ay, bx, by float64) {
		t.Helper()
		m := NewMetric(unit)
		got := m.DistSeg(px, py, ax, ay, bx, by)
		want := sampledSegDist(unit, px, py, ax, ay, bx, by, n)
		var step float64
		if unit == "degrees" {
			step = math.Hypot(bx-ax, by-ay) / float64(n)
		} else {
			step = hav(ax, ay, bx, by) / 1000 / float64(n)
		}
		// The sampled minimum is at most half a step above the true one.
		if got > want+1e-6 || got < want-step/2-1e-6 {
			t.Errorf("DistSeg(%v,%v; %v,%v–%v,%v) = %.9g, sampled arc %.9g (step %.3g)", px, py, ax, ay, bx, by, got, want, step)
		}
		if back := m.DistSeg(px, py, bx, by, ax, ay); !near(back, got, 1e-6) {
			t.Errorf("DistSeg not symmetric in its ends: %v, %v", got, back)
		}
	}
	for _, c := range []struct {
		name                   string
		unit                   string
		px, py, ax, ay, bx, by float64
	}{
		{"OKFootInside", "km", 10, 5, 0, 0, 20, 0},
		{"OKFootBeyondB", "km", 30, 5, 0, 0, 20, 0},
		{"OKFootBeforeA", "km", -5, -3, 0, 0, 20, 0},
		{"OKOnTheArc", "km", 10, 0, 0, 0, 20, 0},
		{"OKArcBulgesNorth", "km", -60, 73.5, -120, 60, 0, 60},
		{"OKArcApex", "km", -60, 74, -120, 60, 0, 60},
		{"OKAcrossTheAntimeridian", "km", 180, 1, 179, 0, -179, 0},
		{"OKOverThePole", "km", 0, 89, -90, 80, 90, 80},
		{"OKPoleOfTheCircle", "km", 33, 90, 0, 0, 20, 0},
		{"OKNearAntipodeOfArc", "km", -170, 2, 0, 0, 20, 0},
		{"OKZeroLength", "km", 3, 4, 1, 1, 1, 1},
		{"OKLongArc", "km", 45, 30, -80, 10, 100, 20},
		{"OKPlanar", "degrees", 10, 5, 0, 0, 20, 0},
		{"OKPlanarBeyond", "degrees", 25, 5, 0, 0, 20, 0},
		{"OKPlanarNoWrap", "degrees", 180, 1, 179, 0, -179, 0},
	} {
		t.Run(c.name, func(t *testing.T) { check(t, c.unit, c.px, c.py, c.ax, c.ay, c.bx, c.by) })
	}
	t.Run("OKRandom", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for i := 0; i < 300; i++ {
			ax, ay := -180+360*r.Float64(), -85+170*r.Float64()
			span := []float64{0.01, 1, 20, 120}[i%4]
			bx, by := math.Max(-180, math.Min(180, ax+span*(2*r.Float64()-1))), math.Max(-90, math.Min(90, ay+span*(2*r.Float64()-1)))
			px, py := math.Max(-180, math.Min(180, ax+2*span*(2*r.Float64()-1))), math.Max(-90, math.Min(90, ay+2*span*(2*r.Float64()-1)))
			unit := "km"
			if i%5 == 0 {
				unit = "degrees"
			}
			check(t, unit, px, py, ax, ay, bx, by)
		}
	})
	t.Run("OKUnitsScale", func(t *testing.T) {
		km := NewMetric("km").DistSeg(-60, 73.5, -120, 60, 0, 60)
		for u, f := range map[string]float64{"m": 1000, "ft": 1000 / 0.3048, "miles": 1000 / 1609.344} {
			if got := NewMetric(u).DistSeg(-60, 73.5, -120, 60, 0, 60); !near(got, km*f, 1e-9*km*f) {
				t.Errorf("%s: %v, want %v", u, got, km*f)
			}
		}
	})
}

func TestMetricInterpolate(t *testing.T) {
	for _, c := range []struct {
		name           string
		unit           string
		ax, ay, bx, by float64
	}{
		{"OKEquator", "km", 0, 0, 20, 0},
		{"OKParallel", "km", -120, 60, 0, 60},
		{"OKAntimeridian", "km", 179, 10, -179, 12},
		{"OKToThePole", "km", 30, 50, 0, 90},
		{"OKFromThePole", "m", -45, -90, 60, -70},
		{"OKSamePoint", "km", 5, 5, 5, 5},
		{"OKLong", "miles", -80, 10, 100, 20},
		{"OKPlanar", "degrees", -120, 60, 0, 60},
		{"OKPlanarAntimeridian", "degrees", 179, 10, -179, 12},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := NewMetric(c.unit)
			if x, y := m.Interpolate(c.ax, c.ay, c.bx, c.by, 0); !samePoint(x, y, c.ax, c.ay, 1e-9) {
				t.Errorf("t=0: (%v, %v), want (%v, %v)", x, y, c.ax, c.ay)
			}
			if x, y := m.Interpolate(c.ax, c.ay, c.bx, c.by, 1); !samePoint(x, y, c.bx, c.by, 1e-9) {
				t.Errorf("t=1: (%v, %v), want (%v, %v)", x, y, c.bx, c.by)
			}
			for _, f := range []float64{0.25, 0.5, 0.9} {
				x, y := m.Interpolate(c.ax, c.ay, c.bx, c.by, f)
				if m.Planar() {
					if !near(x, c.ax+f*(c.bx-c.ax), 1e-12) || !near(y, c.ay+f*(c.by-c.ay), 1e-12) {
						t.Errorf("planar t=%v: (%v, %v)", f, x, y)
					}
					continue
				}
				wx, wy := slerpLL(c.ax, c.ay, c.bx, c.by, f)
				if !samePoint(x, y, wx, wy, 1e-9) {
					t.Errorf("t=%v: (%v, %v), slerp (%v, %v)", f, x, y, wx, wy)
				}
				total := hav(c.ax, c.ay, c.bx, c.by)
				if da := hav(c.ax, c.ay, x, y); !near(da, f*total, 1e-3) {
					t.Errorf("t=%v: %v m from a, want %v", f, da, f*total)
				}
			}
		})
	}
}

// inBoxes reports whether (x, y) lies in one of the boxes, edges included.
func inBoxes(x, y float64, boxes []wkb.Rect) bool {
	for _, b := range boxes {
		if x >= b.MinX && x <= b.MaxX && y >= b.MinY && y <= b.MaxY {
			return true
		}
	}
	return false
}

// TestNearBoxes: every point within the radius of the query lies inside
// one of its boxes (the index prefilter must not lose matches).
func TestNearBoxes(t *testing.T) {
	units := []string{"km", "m", "ft", "miles", "degrees"}
	unitM := map[string]float64{"km": 1000, "m": 1, "ft": 0.3048, "miles": 1609.344}
	centre := func(r *rand.Rand, i int) (float64, float64) {
		switch i % 6 {
		case 0: // near a pole
			return -180 + 360*r.Float64(), math.Copysign(85+5*r.Float64(), r.Float64()-0.5)
		case 1: // near the antimeridian
			return math.Copysign(175+5*r.Float64(), r.Float64()-0.5), -80 + 160*r.Float64()
		case 2:
			return []float64{180, -180, 0}[r.IntN(3)], []float64{90, -90, 0, 89.9999}[r.IntN(4)]
		}
		return -180 + 360*r.Float64(), -90 + 180*r.Float64()
	}
	radius := func(r *rand.Rand, unit string) float64 {
		km := math.Exp(r.Float64() * math.Log(25000)) // 1 km to 25,000 km
		if unit == "degrees" {
			return km / 111
		}
		return km * 1000 / unitM[unit]
	}
	// within returns a point within distance d (metres) of (x, y).
	within := func(r *rand.Rand, x, y, d float64) (float64, float64) {
		f := []float64{1, 1 - 1e-12, r.Float64(), math.Sqrt(r.Float64())}[r.IntN(4)]
		return destination(x, y, 360*r.Float64(), d*f)
	}
	run := func(t *testing.T, kind string, seed uint64, nq int, maxSpan float64) {
		r := rand.New(rand.NewPCG(seed, 9))
		failures := 0
		for i := 0; i < nq && failures < 5; i++ {
			unit := units[r.IntN(len(units))]
			q := Near{Kind: kind, Radius: radius(r, unit), Metric: NewMetric(unit)}
			cx, cy := centre(r, i)
			q.XY = []float64{cx, cy}
			if kind != KindPoint {
				for k := 0; k < 1+r.IntN(4); k++ {
					x := math.Max(-180, math.Min(180, cx+maxSpan*(2*r.Float64()-1)))
					y := math.Max(-90, math.Min(90, cy+maxSpan*(2*r.Float64()-1)))
					q.XY = append(q.XY, x, y)
				}
			}
			boxes := q.Boxes()
			for k := 0; k < 200; k++ {
				var x, y float64
				if q.Metric.Planar() {
					a, d := 2*math.Pi*r.Float64(), q.Radius*r.Float64()
					j := 2 * r.IntN(len(q.XY)/2)
					x, y = q.XY[j]+d*math.Cos(a), q.XY[j+1]+d*math.Sin(a)
				} else {
					// around a vertex, or around a point of an edge
					j := 2 * r.IntN(len(q.XY)/2)
					bx, by := q.XY[j], q.XY[j+1]
					if kind == KindLine && j+3 < len(q.XY) {
						bx, by = slerpLL(q.XY[j], q.XY[j+1], q.XY[j+2], q.XY[j+3], r.Float64())
					}
					x, y = within(r, bx, by, q.Radius*unitM[unit])
				}
				if x < -180 || x > 180 || y < -90 || y > 90 || q.DistTo(x, y) > q.Radius {
					continue // not a coordinate, or not a match (rounding at the very edge)
				}
				if !inBoxes(x, y, boxes) {
					failures++
					t.Errorf("%s %v radius %v %s: (%v, %v) at distance %v is in none of %v",
						kind, q.XY, q.Radius, unit, x, y, q.DistTo(x, y), boxes)
					break
				}
			}
		}
	}
	t.Run("OKPoint", func(t *testing.T) { run(t, KindPoint, 1, raceCut(3000), 0) })
	t.Run("OKPoints", func(t *testing.T) { run(t, KindPoints, 2, raceCut(2000), 10) })
	t.Run("OKLineShortEdges", func(t *testing.T) { run(t, KindLine, 3, raceCut(2000), 0.5) })
	t.Run("OKLineLongEdges", func(t *testing.T) { run(t, KindLine, 4, raceCut(2000), 60) })
	t.Run("OKBoxesInRange", func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 9))
		for i := 0; i < 2000; i++ {
			unit := units[r.IntN(4)] // on the sphere
			cx, cy := centre(r, i)
			q := Near{Kind: KindPoint, XY: []float64{cx, cy}, Radius: radius(r, unit), Metric: NewMetric(unit)}
			for _, b := range q.Boxes() {
				if b.MinX < -180 || b.MaxX > 180 || b.MinY < -90 || b.MaxY > 90 || b.MinX > b.MaxX || b.MinY > b.MaxY {
					t.Fatalf("%v radius %v %s: box %v", q.XY, q.Radius, unit, b)
				}
			}
		}
	})
	t.Run("OKKnown", func(t *testing.T) {
		for _, c := range []struct {
			name string
			q    Near
			in   [][2]float64
		}{
			{"AcrossTheAntimeridian", Near{Kind: KindPoint, XY: []float64{179.9, 0}, Radius: 50, Metric: NewMetric("km")},
				[][2]float64{{-179.9, 0}, {180, 0.1}, {-180, -0.1}, {179.5, 0}}},
			{"ThePole", Near{Kind: KindPoint, XY: []float64{0, 89.5}, Radius: 120, Metric: NewMetric("km")},
				[][2]float64{{180, 89.5}, {90, 90}, {-135, 89.9}}},
			{"LargerThanTheEarth", Near{Kind: KindPoint, XY: []float64{10, 20}, Radius: 30000, Metric: NewMetric("km")},
				[][2]float64{{-170, -20}, {180, 90}, {-180, -90}}},
			{"Degrees", Near{Kind: KindPoints, XY: []float64{0, 0, 10, 10}, Radius: 2, Metric: NewMetric("degrees")},
				[][2]float64{{-2, 0}, {12, 10}, {10, 12}, {1.4, 1.4}}},
			{"RadiusZero", Near{Kind: KindPolygon, XY: []float64{0, 0, 2, 0, 2, 2, 0, 0}, Metric: NewMetric("km")},
				[][2]float64{{0, 0}, {2, 2}, {1.5, 0.5}}},
		} {
			t.Run(c.name, func(t *testing.T) {
				boxes := c.q.Boxes()
				for _, p := range c.in {
					if c.q.DistTo(p[0], p[1]) > c.q.Radius {
						t.Fatalf("(%v, %v) is not within the radius: %v", p[0], p[1], c.q.DistTo(p[0], p[1]))
					}
					if !inBoxes(p[0], p[1], boxes) {
						t.Errorf("(%v, %v) in none of %v", p[0], p[1], boxes)
					}
				}
			})
		}
	})
}

func TestCentroid(t *testing.T) {
	square := func(x0, y0, s float64) []float64 {
		return []float64{x0, y0, x0 + s, y0, x0 + s, y0 + s, x0, y0 + s, x0, y0}
	}
	pt := func(x, y float64) wkb.Geom { return wkb.Geom{Type: wkb.Point, Coords: []float64{x, y}} }
	for _, c := range []struct {
		name   string
		g      wkb.Geom
		wx, wy float64
		ok     bool
	}{
		{"OKSquare", wkb.Geom{Type: wkb.Polygon, Rings: [][]float64{square(0, 0, 2)}}, 1, 1, true},
		{"OKSquareClockwise", wkb.Geom{Type: wkb.Polygon, Rings: [][]float64{{0, 0, 0, 2, 2, 2, 2, 0, 0, 0}}}, 1, 1, true},
		// 16 at (2, 2) minus 4 at (1, 1): (32-4)/12
		{"OKSquareWithHole", wkb.Geom{Type: wkb.Polygon, Rings: [][]float64{square(0, 0, 4), square(0, 0, 2)}}, 28.0 / 12, 28.0 / 12, true},
		{"OKCentredHole", wkb.Geom{Type: wkb.Polygon, Rings: [][]float64{square(0, 0, 4), {1, 1, 1, 3, 3, 3, 3, 1, 1, 1}}}, 2, 2, true},
		{"OKTriangle", wkb.Geom{Type: wkb.Polygon, Rings: [][]float64{{0, 0, 3, 0, 0, 3, 0, 0}}}, 1, 1, true},
		// lengths 2 (centre (1, 0)) and 1 (centre (2, 0.5))
		{"OKLShapedLine", wkb.Geom{Type: wkb.LineString, Coords: []float64{0, 0, 2, 0, 2, 1}}, 4.0 / 3, 0.5 / 3, true},
		{"OKMultiPoint", wkb.Geom{Type: wkb.MultiPoint, Parts: []wkb.Geom{pt(0, 0), pt(4, 0), pt(2, 6)}}, 2, 2, true},
		{"OKPoint", pt(-179.5, 89), -179.5, 89, true},
		{"OKMultiPolygon", wkb.Geom{Type: wkb.MultiPolygon, Parts: []wkb.Geom{
			{Type: wkb.Polygon, Rings: [][]float64{square(0, 0, 1)}}, {Type: wkb.Polygon, Rings: [][]float64{square(10, 0, 2)}}}},
			(1*0.5 + 4*11) / 5, (1*0.5 + 4*1) / 5, true},
		{"OKMultiLine", wkb.Geom{Type: wkb.MultiLineString, Parts: []wkb.Geom{
			{Type: wkb.LineString, Coords: []float64{0, 0, 1, 0}}, {Type: wkb.LineString, Coords: []float64{0, 2, 3, 2}}}},
			(1*0.5 + 3*1.5) / 4, (0 + 3*2) / 4.0, true},
		{"OKCollectionTakesTheAreas", wkb.Geom{Type: wkb.GeometryCollection, Parts: []wkb.Geom{
			pt(100, 50), {Type: wkb.LineString, Coords: []float64{0, 0, 50, 0}}, {Type: wkb.Polygon, Rings: [][]float64{square(0, 0, 2)}}}}, 1, 1, true},
		{"OKCollectionLinesOverPoints", wkb.Geom{Type: wkb.GeometryCollection, Parts: []wkb.Geom{
			pt(100, 50), {Type: wkb.LineString, Coords: []float64{0, 0, 2, 0}}}}, 1, 0, true},
		{"OKDegenerateLine", wkb.Geom{Type: wkb.LineString, Coords: []float64{3, 4, 3, 4}}, 3, 4, true},
		{"ErrEmpty", wkb.Geom{Type: wkb.MultiPoint}, 0, 0, false},
		{"ErrEmptyPolygon", wkb.Geom{Type: wkb.Polygon}, 0, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, y, ok := Centroid(c.g)
			if ok != c.ok || (ok && (!near(x, c.wx, 1e-12) || !near(y, c.wy, 1e-12))) {
				t.Fatalf("Centroid = (%v, %v, %v), want (%v, %v, %v)", x, y, ok, c.wx, c.wy, c.ok)
			}
		})
	}
}

func TestBBoxRects(t *testing.T) {
	for _, c := range []struct {
		name       string
		w, s, e, n float64
		want       []wkb.Rect
	}{
		{"OKOne", -10, -5, 20, 30, []wkb.Rect{{MinX: -10, MinY: -5, MaxX: 20, MaxY: 30}}},
		{"OKWorld", -180, -90, 180, 90, []wkb.Rect{{MinX: -180, MinY: -90, MaxX: 180, MaxY: 90}}},
		{"OKDegenerate", 5, 5, 5, 5, []wkb.Rect{{MinX: 5, MinY: 5, MaxX: 5, MaxY: 5}}},
		{"OKAntimeridian", 170, -10, -170, 10, []wkb.Rect{{MinX: 170, MinY: -10, MaxX: 180, MaxY: 10}, {MinX: -180, MinY: -10, MaxX: -170, MaxY: 10}}},
		{"OKAlmostEverything", 180, 0, -180, 1, []wkb.Rect{{MinX: 180, MinY: 0, MaxX: 180, MaxY: 1}, {MinX: -180, MinY: 0, MaxX: -180, MaxY: 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := BBoxRects(c.w, c.s, c.e, c.n)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("BBoxRects = %v, want %v", got, c.want)
			}
		})
	}
}

func TestIntersectsRects(t *testing.T) {
	box := []wkb.Rect{{MinX: 0, MinY: 0, MaxX: 10, MaxY: 10}}
	am := BBoxRects(170, -10, -170, 10)
	line := func(xy ...float64) wkb.Geom { return wkb.Geom{Type: wkb.LineString, Coords: xy} }
	poly := func(rings ...[]float64) wkb.Geom { return wkb.Geom{Type: wkb.Polygon, Rings: rings} }
	pt := func(x, y float64) wkb.Geom { return wkb.Geom{Type: wkb.Point, Coords: []float64{x, y}} }
	big := []float64{-5, -5, 15, -5, 15, 15, -5, 15, -5, -5}
	for _, c := range []struct {
		name  string
		g     wkb.Geom
		boxes []wkb.Rect
		want  bool
	}{
		{"OKPointInside", pt(5, 5), box, true},
		{"OKPointOnEdge", pt(10, 3), box, true},
		{"OKPointOnCorner", pt(0, 10), box, true},
		{"OKPointOutside", pt(10.000001, 3), box, false},
		{"OKLineThrough", line(-5, 5, 15, 5), box, true},
		{"OKLineAcrossACorner", line(-1, 9, 2, 12), box, true},
		{"OKLineTouchingACorner", line(-1, 11, 1, 9), box, true},
		{"OKLineTouchingAnEdge", line(10, -5, 10, 20), box, true},
		{"OKLineOutside", line(-1, 12, 12, 25), box, false},
		{"OKLineAlongside", line(11, -5, 11, 20), box, false},
		{"OKPolygonAroundTheBox", poly(big), box, true},
		{"OKBoxInAHole", poly(big, []float64{-1, -1, 11, -1, 11, 11, -1, 11, -1, -1}), box, false},
		{"OKBoxOnAHoleEdge", poly(big, []float64{0, 0, 10, 0, 10, 10, 0, 10, 0, 0}), box, true},
		{"OKPolygonInsideTheBox", poly([]float64{2, 2, 3, 2, 3, 3, 2, 2}), box, true},
		{"OKPolygonCrossing", poly([]float64{-5, 4, 15, 4, 15, 6, -5, 6, -5, 4}), box, true},
		{"OKPolygonOutside", poly([]float64{20, 20, 30, 20, 30, 30, 20, 20}), box, false},
		{"OKMultiPolygonSecondPart", wkb.Geom{Type: wkb.MultiPolygon, Parts: []wkb.Geom{
			poly([]float64{20, 20, 30, 20, 30, 30, 20, 20}), poly([]float64{9, 9, 12, 9, 12, 12, 9, 9})}}, box, true},
		{"OKMultiPointNone", wkb.Geom{Type: wkb.MultiPoint, Parts: []wkb.Geom{pt(-1, -1), pt(11, 11)}}, box, false},
		{"OKAntimeridianEast", pt(175, 0), am, true},
		{"OKAntimeridianWest", pt(-175, 0), am, true},
		{"OKAntimeridian180", pt(180, 10), am, true},
		{"OKAntimeridianMinus180", pt(-180, -10), am, true},
		{"OKAntimeridianOutside", pt(0, 0), am, false},
		{"OKAntimeridianEdges", pt(170, 5), am, true},
		{"OKAntimeridianLineInside", line(-175, -5, -172, 5), am, true},
		{"OKEmpty", wkb.Geom{Type: wkb.MultiPoint}, box, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := IntersectsRects(c.g, c.boxes); got != c.want {
				t.Fatalf("IntersectsRects = %v, want %v", got, c.want)
			}
		})
	}
}

// TestIndexBounds: a feature's index box holds its edges as arcs.
func TestIndexBounds(t *testing.T) {
	for _, c := range []struct {
		name string
		g    wkb.Geom
		in   [][2]float64 // points on the feature's arcs
		all  bool         // every longitude
	}{
		{"BulgeNorth", wkb.Geom{Type: wkb.LineString, Coords: []float64{-60, 60, 60, 60}}, [][2]float64{{0, 73.897}}, false},
		{"BulgeSouth", wkb.Geom{Type: wkb.LineString, Coords: []float64{-60, -60, 60, -60}}, [][2]float64{{0, -73.897}}, false},
		{"Antimeridian", wkb.Geom{Type: wkb.LineString, Coords: []float64{170, 0, -170, 0}}, [][2]float64{{180, 0}, {-180, 0}}, true},
		{"Pole", wkb.Geom{Type: wkb.LineString, Coords: []float64{0, 80, 180, 80}}, [][2]float64{{90, 90}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, ok := IndexBounds(c.g)
			if !ok {
				t.Fatal("no bounds")
			}
			for _, p := range c.in {
				if !inBoxes(p[0], p[1], []wkb.Rect{r}) {
					t.Errorf("(%v, %v) not in %v", p[0], p[1], r)
				}
			}
			if c.all != (r.MinX == -180 && r.MaxX == 180) {
				t.Errorf("box %v: every longitude %v, want %v", r, !c.all, c.all)
			}
			v, _ := c.g.Bounds()
			if r.MinX > v.MinX || r.MinY > v.MinY || r.MaxX < v.MaxX || r.MaxY < v.MaxY {
				t.Errorf("index box %v does not hold the vertex box %v", r, v)
			}
		})
	}
}

// TestContainedEdges: contained finds the point of an edge farthest from
// the query geometry, between vertices, and the antipode of a large disc.
func TestContainedEdges(t *testing.T) {
	km := NewMetric("km")
	// Two query points 1000 km apart on the equator, radius 600 km: the
	// line joining them bows out of the buffer nowhere, but a line 500 km
	// north of their midpoint leaves it in the middle only.
	lon1000 := 1000 / (EarthRadius / 1000) / rad
	q := Near{Kind: KindPoints, XY: []float64{0, 0, lon1000, 0}, Radius: 600, Metric: km, Contained: true}
	on := wkb.Geom{Type: wkb.LineString, Coords: []float64{0, 0, lon1000, 0}}
	if !q.Match(on) {
		t.Error("the segment between the points is not within the buffer")
	}
	lat := 400 / (EarthRadius / 1000) / rad
	off := wkb.Geom{Type: wkb.LineString, Coords: []float64{0, lat, lon1000, lat}}
	if d := q.DistTo(lon1000/2, lat); d <= 600 {
		t.Fatalf("midpoint at %v km", d)
	}
	if q.Match(off) {
		t.Error("a line leaving the buffer between its vertices is contained")
	}
	// A disc of 15,000 km around (0, 0) leaves out 5,015 km around (180, 0).
	big := Near{Kind: KindPoint, XY: []float64{0, 0}, Radius: 15000, Metric: km, Contained: true}
	cross := wkb.Geom{Type: wkb.LineString, Coords: []float64{150, 10, -150, -10}} // passes near the antipode
	if big.Match(cross) {
		t.Error("an arc through the left-out disc is contained")
	}
	// Around (90, 0) the disc leaves out (-90, 0): this polygon's edges keep
	// clear of it, but its inside holds it.
	big.XY = []float64{90, 0}
	ring := wkb.Geom{Type: wkb.Polygon, Rings: [][]float64{{-160, -70, -20, -70, -20, 70, -160, 70, -160, -70}}}
	if !big.lineWithin(ring.Rings[0]) {
		t.Fatal("the polygon's boundary leaves the disc")
	}
	if big.Match(ring) {
		t.Error("a polygon around the left-out disc is contained")
	}
}
