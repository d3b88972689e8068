package mapcommons_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// TestMedianOfKeys checks the radix selection against sorting, on values
// with duplicates, negatives, zeros of both signs, odd and even counts.
func TestMedianOfKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(200)
		v := make([]float64, n)
		for i := range v {
			switch rng.IntN(4) {
			case 0:
				v[i] = float64(rng.IntN(5) - 2)
			case 1:
				v[i] = math.Copysign(0, -1)
			default:
				v[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
			}
		}
		scans := 0
		got, err := mapcommons.MedianOfKeys(int64(n), func(fn func(uint64)) error {
			scans++
			for _, x := range v {
				fn(mapcommons.OrderKey(x))
			}
			return nil
		})
		want := mapcommons.Median(append([]float64(nil), v...))
		if err != nil || got != want || scans != 4 {
			t.Fatalf("%v: MedianOfKeys %v (%v, %d scans), Median %v", v, got, err, scans, want)
		}
	}
	if m, _ := mapcommons.MedianOfKeys(0, nil); !math.IsNaN(m) {
		t.Errorf("median of nothing: %v", m)
	}
}

// TestSummaryBuilder checks the summary of a few features and the checks
// every feature passes.
func TestSummaryBuilder(t *testing.T) {
	attrs := []mapcommons.Attribute{{Name: "n", Type: mapcommons.AttrInteger}, {Name: "x", Type: mapcommons.AttrFloat}, {Name: "s", Type: mapcommons.AttrString}}
	for _, keep := range []bool{true, false} {
		b := mapcommons.NewSummaryBuilder(attrs, keep)
		line, err := wkb.Decode(wkb.AppendLineString(nil, []float64{-10, 5, 20, 40}))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			g      *wkb.Geom
			point  []float64
			values []any
		}{
			{point: []float64{1, 2}, values: []any{int64(3), 1.5, "a"}},
			{g: &line, values: []any{int64(1), nil, nil}},
			{values: []any{nil, 4.5, "b"}},
		} {
			if err := b.CheckValues(f.values); err != nil {
				t.Fatal(err)
			}
			if f.point != nil {
				err = b.AddPoint(f.point[0], f.point[1], f.values)
			} else {
				err = b.Add(f.g, f.values)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		medians := 0
		s, err := b.Summary(func(i int, n int64) (float64, error) { medians++; return 99, nil })
		if err != nil {
			t.Fatal(err)
		}
		wantMedian, wantCalls := 2.0, 0
		if !keep {
			wantMedian, wantCalls = 99, 2
		}
		if s.Count != 3 || *s.Extent != (wkb.Rect{MinX: -10, MinY: 2, MaxX: 20, MaxY: 40}) ||
			strings.Join(s.GeometryTypes, ",") != "point,line" || s.GeometryMask != 1<<wkb.Point|1<<wkb.LineString ||
			len(s.Stats) != 2 || s.Stats["n"].Min != 1 || s.Stats["n"].Max != 3 || s.Stats["x"].Mean != 3 ||
			s.Stats["n"].Median != wantMedian || medians != wantCalls {
			t.Errorf("keep %v: %+v (medians asked %d)", keep, s, medians)
		}
		var ds mapcommons.Dataset
		s.Apply(&ds)
		if ds.FeatureCount != 3 || ds.Extent != s.Extent || ds.Stats["x"].Max != 4.5 {
			t.Errorf("applied: %+v", ds)
		}
	}
	b := mapcommons.NewSummaryBuilder(attrs, true)
	for _, bad := range [][]any{{int64(1), 2.0}, {1.0, 2.0, "s"}, {int64(1), int64(2), "s"}, {nil, nil, 3}} {
		if err := b.CheckValues(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if err := b.AddPoint(math.NaN(), 0, []any{nil, nil, nil}); mapcommons.ErrorCode(err) != mapcommons.EINVALID {
		t.Errorf("NaN point: %v", err)
	}
	if err := b.AddPoint(math.Inf(1), 0, []any{nil, nil, nil}); err == nil {
		t.Error("infinite point accepted")
	}
	if s, _ := b.Summary(nil); s.Count != 0 || s.Extent != nil || len(s.GeometryTypes) != 0 {
		t.Errorf("refused features counted: %+v", s)
	}
}
