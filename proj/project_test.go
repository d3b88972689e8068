package proj

import (
	"math"
	"testing"

	"mapcommons/format/wkb"
)

// TestWebMercatorProject checks Project against EPSG:3857 values computed
// from the closed formulas (x = R λ, y = R ln tan(π/4 + φ/2)) and the round
// trip through Forward.
func TestWebMercatorProject(t *testing.T) {
	const r = 6378137.0
	for _, c := range []struct{ lon, lat float64 }{{0, 0}, {2.35, 48.86}, {-79.0, 35.5}, {180, -60}, {-180, 85}} {
		x, y, err := WebMercator.Project(c.lon, c.lat)
		if err != nil {
			t.Fatal(err)
		}
		wx, wy := r*c.lon*math.Pi/180, r*math.Log(math.Tan(math.Pi/4+c.lat*math.Pi/360))
		if math.Abs(x-wx) > 1e-6 || math.Abs(y-wy) > 1e-6 {
			t.Errorf("(%v, %v) → (%v, %v), want (%v, %v)", c.lon, c.lat, x, y, wx, wy)
		}
		lon, lat, err := WebMercator.Forward(x, y)
		if err != nil || math.Abs(math.Abs(lon)-math.Abs(c.lon)) > 1e-9 || math.Abs(lat-c.lat) > 1e-9 {
			t.Errorf("round trip of (%v, %v): (%v, %v) %v", c.lon, c.lat, lon, lat, err)
		}
	}
	g := wkb.Geom{Type: wkb.Polygon, Rings: [][]float64{{0, 0, 1, 0, 1, 1, 0, 0}}}
	if err := WebMercator.ProjectGeom(&g); err != nil || math.Abs(g.Rings[0][2]-r*math.Pi/180) > 1e-6 {
		t.Errorf("ProjectGeom: %v %v", g.Rings, err)
	}
}
