package segment

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/format/wkb"
)

// positions runs q and returns the positions it selects.
func positions(t *testing.T, s *Segment, q *mapcommons.FeatureQuery) ([]int64, error) {
	t.Helper()
	var out []int64
	err := s.Query(t.Context(), q, func(f *mapcommons.Feature) error {
		out = append(out, f.Position)
		return nil
	})
	return out, err
}

// TestInSet checks that a long "in" list (matched through a set) selects
// exactly what comparing with each value selects, for every column type.
func TestInSet(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	feats := randomFeatures(r, 3000)
	s, _ := write(t, testAttrs, feats)
	var xs []float64 // the float values there are
	for _, f := range feats {
		if x, ok := f.Values[1].(float64); ok {
			xs = append(xs, x)
		}
	}
	for _, tc := range []struct {
		attr   string
		values func(i int) string
	}{
		{"n", func(i int) string { return strconv.Itoa(i*7 - 500) }},
		{"x", func(i int) string { return strconv.FormatFloat(xs[i%len(xs)], 'g', -1, 64) }},
		{"s", func(i int) string { return "s" + string(rune('a'+i%26)) }},
		{"b", func(i int) string { return []string{"true", "0"}[i%2] }},
		{"d", func(i int) string { return "2020-01-02" }},
	} {
		for _, n := range []int{1, setMin, setMin + 1, 200} {
			values := make([]string, n)
			for i := range values {
				values[i] = tc.values(i % len(feats))
			}
			q := &mapcommons.FeatureQuery{Limit: -1, Filters: []mapcommons.Filter{{Attr: tc.attr, Op: mapcommons.OpIn, Values: values}}}
			got, err := positions(t, s, q)
			if err != nil {
				t.Fatal(err)
			}
			// The answer by comparing each value, as matchOp does.
			col := mapcommons.AttrIndex(testAttrs, tc.attr)
			p, _ := s.compile(q)
			var want []int64
			for pos := range feats {
				if s.IsNull(col, pos) {
					continue
				}
				f := &p.filters[0]
				ok := false
				if f.strs != nil {
					v, _ := s.Bytes(col, pos)
					for _, x := range f.strs {
						ok = ok || string(x) == string(v)
					}
				} else {
					v := float64(s.cols[col].data[pos])
					if tc.attr != "b" {
						v, _ = s.Float(col, pos)
					}
					for _, x := range f.nums {
						ok = ok || x == v
					}
				}
				if ok {
					want = append(want, int64(pos))
				}
			}
			if n > setMin && p.filters[0].numSet == nil && p.filters[0].strSet == nil {
				t.Errorf("%s in %d values: not matched through a set", tc.attr, n)
			}
			if len(want) == 0 {
				t.Fatalf("%s in %d values: the test selects nothing", tc.attr, n)
			}
			if !equalInts(got, want) {
				t.Errorf("%s in %d values: %d features, want %d", tc.attr, n, len(got), len(want))
			}
		}
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestQueryStopsWhenCancelled checks that every way a query walks the rows
// (a plain range of positions, a filter, an index search, an attribute
// order, groups) gives up with the context's error once it is cancelled
// or past its deadline, instead of reading every row.
func TestQueryStopsWhenCancelled(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	s, _ := write(t, testAttrs, randomFeatures(r, 3*checkEvery))
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Unix(0, 0))
	defer cancel2()
	for _, tc := range []struct {
		name string
		q    mapcommons.FeatureQuery
	}{
		{"All", mapcommons.FeatureQuery{Limit: -1}},
		{"Page", mapcommons.FeatureQuery{Limit: 30, Offset: 100}},
		{"Descending", mapcommons.FeatureQuery{Limit: -1, Descending: true}},
		{"Filter", mapcommons.FeatureQuery{Limit: -1, Filters: []mapcommons.Filter{{Attr: "n", Op: mapcommons.OpMin, Values: []string{"-1000"}}}}},
		{"BBox", mapcommons.FeatureQuery{Limit: -1, BBox: &mapcommons.BBox{W: -180, S: -90, E: 180, N: 90}}},
		{"BBoxPage", mapcommons.FeatureQuery{Limit: 5, BBox: &mapcommons.BBox{W: -10, S: -10, E: 10, N: 10}}},
		{"BBoxDescending", mapcommons.FeatureQuery{Limit: 5, Descending: true, BBox: &mapcommons.BBox{W: 170, S: -10, E: -170, N: 10}}},
		{"Sort", mapcommons.FeatureQuery{Limit: 10, Sort: "x"}},
	} {
		for _, c := range []struct {
			name string
			ctx  context.Context
			want error
		}{{"Cancelled", cancelled, context.Canceled}, {"Expired", expired, context.DeadlineExceeded}} {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				n := 0
				q := tc.q
				err := s.Query(c.ctx, &q, func(*mapcommons.Feature) error { n++; return nil })
				if !errors.Is(err, c.want) {
					t.Fatalf("err %v after %d features, want %v", err, n, c.want)
				}
				if n > checkCostlyEvery {
					t.Errorf("%d features sent after the context ended", n)
				}
			})
		}
	}
	q := mapcommons.FeatureQuery{Limit: -1, GroupBy: []string{"s"}}
	if _, err := s.Groups(cancelled, &q); !errors.Is(err, context.Canceled) {
		t.Errorf("groups: err %v", err)
	}
}

// BenchmarkInFilter compares an "in" list of 1,000 values on 20,000 rows
// matched through a set with the same list compared value by value:
// go test -run X -bench InFilter ./segment/
func BenchmarkInFilter(b *testing.B) {
	dir := b.TempDir()
	w, err := NewWriter(dir, testAttrs)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	for _, f := range randomFeatures(r, 20000) {
		if err := w.Add(&f); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := w.Finish(dir + "/x.seg"); err != nil {
		b.Fatal(err)
	}
	s, err := Open(dir + "/x.seg")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	values := make([]string, mapcommons.MaxInValues)
	for i := range values {
		values[i] = strconv.Itoa(i*3 - 1500)
	}
	for _, mode := range []string{"Set", "Linear"} {
		b.Run(mode, func(b *testing.B) {
			q := &mapcommons.FeatureQuery{Limit: -1, Filters: []mapcommons.Filter{{Attr: "n", Op: mapcommons.OpIn, Values: values}}}
			p, err := s.compile(q)
			if err != nil {
				b.Fatal(err)
			}
			if mode == "Linear" {
				p.filters[0].numSet = nil
			}
			for b.Loop() {
				n := 0
				if err := p.matches(b.Context(), false, func(int) bool { n++; return true }); err != nil || n == 0 {
					b.Fatal(n, err)
				}
			}
		})
	}
}

// TestGeometryScanStopsSoon: a scan testing lines and polygons against a
// query geometry, or sending rows, looks at its context every
// checkCostlyEvery rows, since each such row may cost a pass over
// thousands of vertices.
func TestGeometryScanStopsSoon(t *testing.T) {
	feats := make([]mapcommons.Feature, 3*checkEvery)
	for i := range feats {
		x, y := float64(i%300)/10, float64(i%170)/10
		feats[i] = mapcommons.Feature{Values: []any{int64(i), 1.0, "s", true, "2020-01-02"},
			Geometry: wkb.AppendPolygon(nil, [][]float64{{x, y, x + 0.05, y, x + 0.05, y + 0.05, x, y}})}
	}
	s, _ := write(t, testAttrs, feats)
	for _, q := range []mapcommons.FeatureQuery{
		{Limit: -1, BBox: &mapcommons.BBox{W: -1, S: -1, E: 40, N: 20}},
		{Limit: -1, Near: &mapcommons.Near{Kind: mapcommons.NearPoint, XY: []float64{15, 8}, Radius: 5000, Units: "km"}},
		{Limit: -1, Sort: "n", BBox: &mapcommons.BBox{W: -1, S: -1, E: 40, N: 20}},
		{Limit: -1},
	} {
		ctx, cancel := context.WithCancel(t.Context())
		n := 0
		err := s.Query(ctx, &q, func(*mapcommons.Feature) error {
			if n++; n == 1 {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) || n > 1+checkCostlyEvery {
			t.Errorf("%+v: err %v after %d features, want it to stop within %d", q, err, n, checkCostlyEvery)
		}
	}
}

// BenchmarkPolygonQuery selects, among 20,000 points, those inside a
// polygon of mapcommons.MaxNearVertices vertices (a circle of radius 10
// degrees around points spread over a square of 20): go test -run X -bench
// PolygonQuery ./segment/
func BenchmarkPolygonQuery(b *testing.B) {
	dir := b.TempDir()
	w, err := NewWriter(dir, testAttrs)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 20000; i++ {
		f := mapcommons.Feature{Values: []any{int64(i), 1.0, "s", true, "d"}, Geometry: wkb.AppendPoint(nil, r.Float64()*20-10, r.Float64()*20-10)}
		if err := w.Add(&f); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := w.Finish(dir + "/x.seg"); err != nil {
		b.Fatal(err)
	}
	s, err := Open(dir + "/x.seg")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	n := mapcommons.MaxNearVertices
	xy := make([]float64, 0, 2*n)
	for i := 0; i < n-1; i++ {
		a := 2 * math.Pi * float64(i) / float64(n-1)
		xy = append(xy, 10*math.Cos(a), 10*math.Sin(a))
	}
	xy = append(xy, xy[0], xy[1])
	q := &mapcommons.FeatureQuery{Limit: -1, Near: &mapcommons.Near{Kind: mapcommons.NearPolygon, XY: xy, Units: "km", Contained: true}}
	for b.Loop() {
		c := 0
		if err := s.Query(b.Context(), q, func(*mapcommons.Feature) error { c++; return nil }); err != nil || c < 15000 || c > 16000 {
			b.Fatal(c, err)
		}
	}
}
