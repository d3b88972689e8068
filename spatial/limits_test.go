package spatial

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPolygonMatchPointAgrees: a polygon without radius matches a point
// exactly when its distance to the polygon is 0 (DistTo), though
// MatchPoint measures only the edges that can hold the point: random
// points, the vertices, points along the edges, near the poles, across the
// antimeridian, in both metrics.
func TestPolygonMatchPointAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	rings := [][]float64{
		{0, 0, 10, 0, 10, 10, 0, 10, 0, 0},
		{170, -5, -170, -5, -170, 5, 170, 5, 170, -5},     // across the antimeridian
		{-60, 80, 60, 80, 120, 89.5, -120, 89.5, -60, 80}, // near the pole
		{-10, -90, 10, -90, 10, -80, -10, -80, -10, -90},  // touching it
	}
	// A circle of many vertices.
	var circle []float64
	for i := 0; i < 999; i++ {
		a := 2 * math.Pi * float64(i) / 999
		circle = append(circle, 20+10*math.Cos(a), 40+8*math.Sin(a))
	}
	rings = append(rings, append(circle, circle[0], circle[1]))
	for _, ring := range rings {
		for _, unit := range []string{"km", "degrees"} {
			q := &Near{Kind: KindPolygon, XY: ring, Metric: NewMetric(unit), Contained: true}
			q.Prepare()
			var pts [][2]float64
			for i := 0; i+3 < len(ring); i += 2 {
				pts = append(pts, [2]float64{ring[i], ring[i+1]})
				for _, f := range []float64{0.25, 0.5, 1.0 / 3} { // along the edge, planar and on the arc
					pts = append(pts, [2]float64{ring[i] + f*(ring[i+2]-ring[i]), ring[i+1] + f*(ring[i+3]-ring[i+1])})
				}
			}
			minX, maxX, minY, maxY := 180.0, -180.0, 90.0, -90.0
			for i := 0; i+1 < len(ring); i += 2 {
				minX, maxX, minY, maxY = min(minX, ring[i]), max(maxX, ring[i]), min(minY, ring[i+1]), max(maxY, ring[i+1])
			}
			for range raceCut(3000) {
				x := minX - 5 + r.Float64()*(maxX-minX+10)
				y := min(90, max(-90, minY-5+r.Float64()*(maxY-minY+10)))
				pts = append(pts, [2]float64{math.Mod(x+540, 360) - 180, y})
			}
			for _, p := range pts {
				if got, want := q.MatchPoint(p[0], p[1]), q.DistTo(p[0], p[1]) <= 0; got != want {
					t.Fatalf("ring %v (%s): point %v matches %v, its distance says %v", ring[:min(10, len(ring))], unit, p, got, want)
				}
			}
		}
	}
}

// BenchmarkPolygonMatchPoint tests points, a fifth of them outside, against
// a polygon of 10,000 vertices (mapcommons.MaxNearVertices) without
// radius: go test -run X -bench PolygonMatchPoint ./spatial/
func BenchmarkPolygonMatchPoint(b *testing.B) {
	const n = 10000
	var ring []float64
	for i := 0; i < n-1; i++ {
		a := 2 * math.Pi * float64(i) / (n - 1)
		ring = append(ring, 10*math.Cos(a), 10*math.Sin(a))
	}
	ring = append(ring, ring[0], ring[1])
	q := &Near{Kind: KindPolygon, XY: ring, Metric: NewMetric("km"), Contained: true}
	q.Prepare()
	r := rand.New(rand.NewPCG(1, 1))
	pts := make([][2]float64, 1000)
	for i := range pts {
		pts[i] = [2]float64{r.Float64()*20 - 10, r.Float64()*20 - 10}
	}
	b.ResetTimer()
	for b.Loop() {
		for _, p := range pts {
			q.MatchPoint(p[0], p[1])
		}
	}
}

// TestRingRows: the banded test of a prepared polygon says what the test
// of every edge says, for polygons of many shapes (long edges across every
// band, a flat ring, spikes, a ring crossing itself) and points on their
// vertices, on their edges, on band boundaries and anywhere near.
func TestRingRows(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	closed := func(xy []float64) []float64 { return append(xy, xy[0], xy[1]) }
	var rings [][]float64
	for _, n := range []int{64, 100, 1000, 5000} {
		var circle, star, random []float64
		for i := 0; i < n; i++ {
			a := 2 * math.Pi * float64(i) / float64(n)
			circle = append(circle, 10*math.Cos(a), 10*math.Sin(a))
			rad := 10.0
			if i%2 == 1 {
				rad = 0.5
			}
			star = append(star, rad*math.Cos(a), rad*math.Sin(a))
			random = append(random, math.Round(r.Float64()*20), math.Round(r.Float64()*20)) // crosses itself
		}
		rings = append(rings, closed(circle), closed(star), closed(random))
	}
	var flat, comb []float64
	for i := 0; i < 100; i++ {
		flat = append(flat, float64(i), 5)
	}
	for i := 0; i < 50; i++ { // teeth running across every band
		comb = append(comb, float64(2*i), 0, float64(2*i+1), 40)
	}
	comb = append(comb, 100, -1, 0, -1)
	rings = append(rings, closed(flat), closed(comb))
	for k, ring := range rings {
		q := &Near{Kind: KindPolygon, XY: ring, Metric: NewMetric("km")}
		q.Prepare()
		if q.rows == nil {
			t.Fatalf("ring %d: not indexed", k)
		}
		minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		for i := 0; i+1 < len(ring); i += 2 {
			minX, maxX, minY, maxY = min(minX, ring[i]), max(maxX, ring[i]), min(minY, ring[i+1]), max(maxY, ring[i+1])
		}
		var pts [][2]float64
		for i := 0; i+3 < len(ring); i += 2 {
			pts = append(pts, [2]float64{ring[i], ring[i+1]}, [2]float64{(ring[i] + ring[i+2]) / 2, (ring[i+1] + ring[i+3]) / 2},
				[2]float64{ring[i] + 0.3, ring[i+1]}, [2]float64{ring[i] - 0.3, ring[i+1]})
		}
		for b := range q.rows.bands {
			y := q.rows.y0 + float64(b)*q.rows.h
			pts = append(pts, [2]float64{minX + r.Float64()*(maxX-minX), y})
		}
		for range raceCut(5000) {
			pts = append(pts, [2]float64{minX - 1 + r.Float64()*(maxX-minX+2), minY - 1 + r.Float64()*(maxY-minY+2)})
		}
		for _, p := range pts {
			if got, want := q.inRing(p[0], p[1]), pointInRing(p[0], p[1], ring); got != want {
				t.Fatalf("ring %d (%d vertices): point %v inside %v, every edge says %v", k, len(ring)/2, p, got, want)
			}
		}
	}
}

// TestPreparedWithinRadius: a prepared query (boxes around each edge or
// point) matches a point exactly when its distance to the query geometry
// is within the radius: lines, points and polygons of many vertices,
// across the antimeridian and near the poles, radii small and large.
func TestPreparedWithinRadius(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	walk := func(n int, x, y, step float64) []float64 { // a random walk
		var xy []float64
		for range n {
			xy = append(xy, math.Mod(x+540, 360)-180, y)
			x += (r.Float64() - 0.5) * step
			y = min(89.9, max(-89.9, y+(r.Float64()-0.5)*step))
		}
		return xy
	}
	var circle []float64
	for i := 0; i < 499; i++ {
		a := 2 * math.Pi * float64(i) / 499
		circle = append(circle, 175+10*math.Cos(a), 60+8*math.Sin(a)) // across the antimeridian
	}
	circle = append(circle, circle[0], circle[1])
	for _, g := range []struct {
		kind string
		xy   []float64
	}{
		{KindLine, walk(300, 0, 0, 2)},
		{KindLine, walk(300, 179, 10, 1)},
		{KindLine, walk(200, 0, 85, 3)},
		{KindPoints, walk(300, 10, -30, 4)},
		{KindPoints, walk(100, -179.5, 88, 1)},
		{KindPolygon, circle},
	} {
		for _, radius := range []float64{1, 50, 300, 3000} {
			q := &Near{Kind: g.kind, XY: g.xy, Radius: radius, Metric: NewMetric("km")}
			q.Prepare()
			if q.parts == nil {
				t.Fatalf("%s: not prepared", g.kind)
			}
			plain := &Near{Kind: g.kind, XY: g.xy, Radius: radius, Metric: NewMetric("km")}
			far, nearEach := 2000, 5
			if raceEnabled {
				far, nearEach = 300, 2
			}
			var pts [][2]float64
			for i := 0; i+1 < len(g.xy); i += 2 {
				for range nearEach { // near the vertices, where matches and misses meet
					d := radius / 111 * 1.5
					pts = append(pts, [2]float64{math.Mod(g.xy[i]+(r.Float64()-0.5)*2*d+540, 360) - 180, min(90, max(-90, g.xy[i+1]+(r.Float64()-0.5)*2*d))})
				}
			}
			for range far {
				pts = append(pts, [2]float64{r.Float64()*360 - 180, r.Float64()*180 - 90})
			}
			for _, p := range pts {
				if got, want := q.MatchPoint(p[0], p[1]), plain.DistTo(p[0], p[1]) <= radius; got != want {
					t.Fatalf("%s, radius %v: point %v matches %v, its distance %v says %v", g.kind, radius, p, got, plain.DistTo(p[0], p[1]), want)
				}
			}
		}
	}
}

// BenchmarkLineMatchPoint tests points against a line of 10,000 vertices
// (mapcommons.MaxNearVertices) with a radius of 50 km: go test -run X
// -bench LineMatchPoint ./spatial/
func BenchmarkLineMatchPoint(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	var line []float64
	for i := 0; i < 10000; i++ {
		line = append(line, -10+20*float64(i)/10000, 5*math.Sin(float64(i)/300))
	}
	q := &Near{Kind: KindLine, XY: line, Radius: 50, Metric: NewMetric("km")}
	q.Prepare()
	pts := make([][2]float64, 1000)
	for i := range pts {
		pts[i] = [2]float64{r.Float64()*20 - 10, r.Float64()*20 - 10}
	}
	for b.Loop() {
		for _, p := range pts {
			q.MatchPoint(p[0], p[1])
		}
	}
}
