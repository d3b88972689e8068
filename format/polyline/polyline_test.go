package polyline

import (
	"math"
	"testing"
)

func TestGoogleExample(t *testing.T) {
	// The example of Google's documentation: (38.5, -120.2), (40.7, -120.95), (43.252, -126.453).
	xy := []float64{-120.2, 38.5, -120.95, 40.7, -126.453, 43.252}
	if got := string(Append(nil, xy)); got != "_p~iF~ps|U_ulLnnqC_mqNvxq`@" {
		t.Fatalf("encoded %q", got)
	}
	back, ok := Decode("_p~iF~ps|U_ulLnnqC_mqNvxq`@")
	if !ok || len(back) != len(xy) {
		t.Fatalf("decode %v %v", back, ok)
	}
	for i := range xy {
		if math.Abs(back[i]-xy[i]) > 1e-9 {
			t.Fatalf("decode %v", back)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Add(1.5, -2.25, 179.99999, -89.5)
	f.Fuzz(func(t *testing.T, a, b, c, d float64) {
		xy := []float64{a, b, c, d}
		for _, v := range xy {
			if math.IsNaN(v) || math.Abs(v) > 1000 {
				return
			}
		}
		back, ok := Decode(string(Append(nil, xy)))
		if !ok {
			t.Fatal("own encoding does not decode")
		}
		for i := range xy {
			if math.Abs(back[i]-math.Round(xy[i]*1e5)/1e5) > 1e-9 {
				t.Fatalf("%v came back as %v", xy, back)
			}
		}
	})
}
