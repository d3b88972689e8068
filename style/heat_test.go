package style

import (
	"math"
	"testing"

	"mapcommons"
)

// TestHeat: the heatmap's numbers are the web application's
// (web/test/style.test.mjs checks the same of style.js), and a layer asks
// for one with styles.density, unless it has a time.
func TestHeat(t *testing.T) {
	for _, c := range []struct{ n, want float64 }{{0, 1}, {1, 1}, {10, 3}, {55, 6.5}, {10000, 60}, {1e6, 60}} {
		if got := HeatWeight(c.n); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("HeatWeight(%v) = %v, want %v", c.n, got, c.want)
		}
	}
	if r := [3]float64{HeatRadius(0), HeatRadius(6), HeatRadius(13)}; r != [3]float64{6, 14, 28} {
		t.Errorf("radii %v", r)
	}
	if o := [3]float64{HeatOpacity(5), HeatOpacity(12), HeatOpacity(13)}; o != [3]float64{1, 0.5, 0} {
		t.Errorf("opacities %v", o)
	}
	if c := mix(0x2b8cbe, 0, 0.5); c != 22<<16|70<<8|95 {
		t.Errorf("mix %06x", c)
	}
	ramp := HeatRamp(0x2b8cbe)
	if ramp[0].Alpha != 0 || ramp[3].Color != 0x2b8cbe || ramp[4].Density != 1 || ramp[4].Alpha != 0.95 {
		t.Errorf("ramp %+v", ramp)
	}
	l := mapcommons.Layer{Opacity: 1}
	l.Styles.Density = mapcommons.DensityHeatmap
	if !LookOf(&l, &mapcommons.Dataset{}, nil).Heatmap {
		t.Error("a heatmap asked for is not drawn")
	}
	l.Styles.Temporal.Attributes = []string{"when"}
	if LookOf(&l, &mapcommons.Dataset{}, nil).Heatmap {
		t.Error("a heatmap with a time")
	}
	l.Styles.Temporal.Attributes, l.Styles.Density = nil, mapcommons.DensityClusters
	if LookOf(&l, &mapcommons.Dataset{}, nil).Heatmap {
		t.Error("clusters drawn as a heatmap")
	}
}
