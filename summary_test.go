package mapcommons_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// TestMedianOfKeys checks the radix selection against sorting, on values
// with duplicates, negatives, zeros of both signs, odd and even counts.
func TestMedianOfKeys(t *testing.T) {
	defer func(n int64) { *mapcommons.MedianSortMax = n }(*mapcommons.MedianSortMax)
	*mapcommons.MedianSortMax = 0 // the radix selection whatever the count
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

// TestMedianOfKeysSmall checks the sort MedianOfKeys does up to
// medianSortMax values against a sort-based reference and against the
// radix selection, bit for bit, on keys of any float: zeros of both signs
// (distinct keys), NaNs of both signs, infinities, subnormals, duplicates;
// and that a scan giving more or fewer keys than announced gets what the
// radix selection makes of it.
func TestMedianOfKeysSmall(t *testing.T) {
	defer func(n int64) { *mapcommons.MedianSortMax = n }(*mapcommons.MedianSortMax)
	rng := rand.New(rand.NewPCG(3, 4))
	specials := []float64{0, math.Copysign(0, -1), math.NaN(), math.Copysign(math.NaN(), -1), math.Inf(1), math.Inf(-1),
		5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64, 1, -1}
	median := func(limit int64, m int64, keys []uint64) (float64, int) {
		*mapcommons.MedianSortMax = limit
		scans := 0
		got, err := mapcommons.MedianOfKeys(m, func(fn func(uint64)) error {
			scans++
			for _, k := range keys {
				fn(k)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got, scans
	}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	for trial := 0; trial < 400; trial++ {
		n := 1 + rng.IntN(300)
		if trial%50 == 0 {
			n = 4096
		}
		keys := make([]uint64, n)
		for i := range keys {
			var v float64
			switch rng.IntN(3) {
			case 0:
				v = specials[rng.IntN(len(specials))]
			case 1:
				v = float64(rng.IntN(7) - 3)
			default:
				v = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
			}
			keys[i] = mapcommons.OrderKey(v)
		}
		switch trial % 10 { // orders a selection may trip on
		case 1:
			slices.Sort(keys)
		case 2:
			slices.Sort(keys)
			slices.Reverse(keys)
		case 3:
			for i := range keys {
				keys[i] = keys[0]
			}
		case 4:
			for i := range keys {
				keys[i] = mapcommons.OrderKey(float64(i % 2))
			}
		}
		sorted := slices.Sorted(slices.Values(keys))
		m := int64(n)
		fromKey := func(u uint64) float64 { // the inverse of OrderKey
			if u>>63 == 1 {
				return math.Float64frombits(u &^ (1 << 63))
			}
			return math.Float64frombits(^u)
		}
		lo, hi := fromKey(sorted[(m-1)/2]), fromKey(sorted[m/2])
		want := lo
		if m%2 == 0 {
			want = (lo + hi) / 2
		}
		got, scans := median(4096, m, keys)
		radix, _ := median(0, m, keys)
		if !same(got, want) || !same(got, radix) || scans != 1 {
			t.Fatalf("n %d: sorted %v (%d scans), reference %v, radix %v", n, got, scans, want, radix)
		}
		// A scan that does not give m keys: as the radix selection.
		for _, wrong := range []int64{m - 1, m + 1} {
			if wrong == 0 {
				continue
			}
			got, _ := median(4096, wrong, keys)
			radix, _ := median(0, wrong, keys)
			if !same(got, radix) {
				t.Fatalf("n %d announced %d: sorted %v, radix %v", n, wrong, got, radix)
			}
		}
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
