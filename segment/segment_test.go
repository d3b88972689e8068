package segment

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

var testAttrs = []mapcommons.Attribute{
	{Name: "n", Type: mapcommons.AttrInteger},
	{Name: "x", Type: mapcommons.AttrFloat},
	{Name: "s", Type: mapcommons.AttrString},
	{Name: "b", Type: mapcommons.AttrBoolean},
	{Name: "d", Type: mapcommons.AttrDate},
}

// write writes features to a segment in a temporary directory and opens it.
func write(t *testing.T, attrs []mapcommons.Attribute, feats []mapcommons.Feature) (*Segment, *Summary) {
	t.Helper()
	dir := t.TempDir()
	w, err := NewWriter(dir, attrs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range feats {
		if err := w.Add(&feats[i]); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "x.seg")
	sum, err := w.Finish(path)
	if err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*.part"))
	if len(left) != 0 {
		t.Fatalf("spooled files left: %v", left)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, sum
}

func randomFeatures(r *rand.Rand, n int) []mapcommons.Feature {
	feats := make([]mapcommons.Feature, n)
	for i := range feats {
		x, y := r.Float64()*360-180, r.Float64()*170-85
		var g []byte
		switch r.IntN(4) {
		case 0, 1:
			g = wkb.AppendPoint(nil, x, y)
		case 2:
			g = wkb.AppendLineString(nil, []float64{x, y, x + r.Float64(), y + r.Float64()})
		case 3:
			d := r.Float64() * 3
			g = wkb.AppendPolygon(nil, [][]float64{{x, y, x + d, y, x + d, y + d, x, y}})
		}
		if r.IntN(50) == 0 {
			g = nil
		}
		vals := []any{int64(r.IntN(1000) - 500), r.NormFloat64() * 100, "s" + string(rune('a'+r.IntN(26))), r.IntN(2) == 0, "2020-01-02"}
		for j := range vals {
			if r.IntN(10) == 0 {
				vals[j] = nil
			}
		}
		feats[i] = mapcommons.Feature{Values: vals, Geometry: g}
	}
	return feats
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	feats := randomFeatures(r, 5000)
	s, sum := write(t, testAttrs, feats)
	if s.Len() != 5000 || sum.Count != 5000 || !reflect.DeepEqual(s.Attributes(), testAttrs) {
		t.Fatalf("len %d, count %d", s.Len(), sum.Count)
	}
	var f mapcommons.Feature
	for i, want := range feats {
		s.Read(i, &f)
		if f.Position != int64(i) || !reflect.DeepEqual(f.Values, want.Values) || !slices.Equal(f.Geometry, want.Geometry) {
			t.Fatalf("feature %d = %v %x, want %v %x", i, f.Values, f.Geometry, want.Values, want.Geometry)
		}
	}
	// The summary agrees with a direct computation.
	acc := mapcommons.NewStatsAccumulator()
	ext := wkb.EmptyRect
	for _, f := range feats {
		if v, ok := f.Values[1].(float64); ok {
			acc.Add(v)
		}
		if r, ok, _ := wkb.BoundsOf(f.Geometry); ok {
			ext = ext.Extend(r)
		}
	}
	want, _ := acc.Result()
	got := sum.Stats["x"]
	if math.Abs(got.Mean-want.Mean) > 1e-9 || got.Median != want.Median || got.Min != want.Min || got.Max != want.Max || math.Abs(got.Variance-want.Variance) > 1e-6 {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	if _, ok := sum.Stats["s"]; ok {
		t.Fatal("stats of a string column")
	}
	if *sum.Extent != ext || !reflect.DeepEqual(sum.GeometryTypes, []string{"point", "line", "area"}) {
		t.Fatalf("extent %v types %v", sum.Extent, sum.GeometryTypes)
	}
	if !reflect.DeepEqual(s.Summary().Stats, sum.Stats) {
		t.Fatal("stored summary differs")
	}
}

func TestSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	feats := randomFeatures(r, 20000)
	s, _ := write(t, testAttrs, feats)
	for q := 0; q < raceCut(300); q++ {
		x, y := r.Float64()*380-190, r.Float64()*190-95
		box := wkb.Rect{MinX: x, MinY: y, MaxX: x + r.Float64()*r.Float64()*100, MaxY: y + r.Float64()*r.Float64()*60}
		if q%7 == 0 { // a degenerate box on an existing point
			if px, py, ok := wkb.PointXY(feats[q].Geometry); ok {
				box = wkb.Rect{MinX: px, MinY: py, MaxX: px, MaxY: py}
			}
		}
		var got []int
		s.Search(box, func(pos int, b wkb.Rect) bool {
			got = append(got, pos)
			return true
		})
		slices.Sort(got)
		var want []int
		for i, f := range feats {
			if b, ok, _ := wkb.BoundsOf(f.Geometry); ok && b.MaxX >= box.MinX && b.MinX <= box.MaxX && b.MaxY >= box.MinY && b.MinY <= box.MaxY {
				want = append(want, i)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("query %d %v: %d hits, want %d", q, box, len(got), len(want))
		}
	}
	// Stopping early stops.
	n := 0
	s.Search(wkb.Rect{MinX: -180, MinY: -90, MaxX: 180, MaxY: 90}, func(int, wkb.Rect) bool { n++; return n < 5 })
	if n != 5 {
		t.Fatalf("search went on after false: %d", n)
	}
}

func TestEmptyAndNoGeometry(t *testing.T) {
	s, sum := write(t, testAttrs, nil)
	if s.Len() != 0 || sum.Extent != nil || len(sum.GeometryTypes) != 0 {
		t.Fatalf("empty: %d %+v", s.Len(), sum)
	}
	s.Search(wkb.Rect{MinX: -180, MinY: -90, MaxX: 180, MaxY: 90}, func(int, wkb.Rect) bool { t.Fatal("hit in an empty segment"); return false })
	s2, _ := write(t, nil, []mapcommons.Feature{{}, {}})
	if s2.Len() != 2 || s2.Geometry(1) != nil {
		t.Fatal("features without attributes or geometry")
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, testAttrs)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(&mapcommons.Feature{Values: []any{"x", nil, nil, nil, nil}}); err == nil {
		t.Fatal("a string in an integer column")
	}
	if err := w.Add(&mapcommons.Feature{Values: []any{nil}}); err == nil {
		t.Fatal("too few values")
	}
	if err := w.Add(&mapcommons.Feature{Values: make([]any, 5), Geometry: []byte{1, 2, 3}}); mapcommons.ErrorCode(err) != mapcommons.EINVALID {
		t.Fatalf("bad WKB: %v", err)
	}
	w.Abort()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("Abort left %d files", len(left))
	}
	// A damaged file is refused, not trusted.
	path := filepath.Join(t.TempDir(), "bad.seg")
	for _, body := range [][]byte{nil, []byte("MCSEG001"), append([]byte("MCSEG001xxxxxxxxxxxxxxxxxxxxxxxx"), "MCSEG001"...)} {
		os.WriteFile(path, body, 0o644)
		if _, err := Open(path); err == nil {
			t.Fatalf("opened a corrupt segment %q", body)
		}
	}
}

// TestDamaged opens every truncation and many bit flips of a real segment:
// each must be refused or read without a panic.
func TestDamaged(t *testing.T) {
	dir := t.TempDir()
	w, _ := NewWriter(dir, testAttrs)
	for _, f := range randomFeatures(rand.New(rand.NewPCG(7, 8)), 40) {
		if err := w.Add(&f); err != nil {
			t.Fatal(err)
		}
	}
	good := filepath.Join(dir, "good.seg")
	if _, err := w.Finish(good); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(good)
	bad := filepath.Join(dir, "bad.seg")
	try := func(b []byte) {
		os.WriteFile(bad, b, 0o644)
		s, err := Open(bad)
		if err != nil {
			return
		}
		defer s.Close()
		var f mapcommons.Feature
		for i := 0; i < s.Len(); i++ {
			s.Read(i, &f)
		}
		s.Search(wkb.Rect{MinX: -1000, MinY: -1000, MaxX: 1000, MaxY: 1000}, func(int, wkb.Rect) bool { return true })
	}
	for cut := 0; cut < len(data); cut += 7 {
		try(data[:cut])
	}
	r := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 2000; i++ {
		b := slices.Clone(data)
		for j := 0; j < 1+r.IntN(4); j++ {
			b[r.IntN(len(b))] ^= byte(1 << r.IntN(8))
		}
		try(b)
	}
}

func TestSearchOrdered(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	feats := randomFeatures(r, 20000)
	s, _ := write(t, testAttrs, feats)
	bounds := make([]wkb.Rect, len(feats))
	has := make([]bool, len(feats))
	for i, f := range feats {
		bounds[i], has[i], _ = wkb.BoundsOf(f.Geometry)
	}
	for q := 0; q < 200; q++ {
		var rs []wkb.Rect
		for k := 0; k < 1+r.IntN(2); k++ {
			x, y := r.Float64()*380-190, r.Float64()*190-95
			rs = append(rs, wkb.Rect{MinX: x, MinY: y, MaxX: x + r.Float64()*40, MaxY: y + r.Float64()*30})
		}
		desc := q%2 == 1
		var want []int
		for i := range feats {
			for _, b := range rs {
				if has[i] && bounds[i].MaxX >= b.MinX && bounds[i].MinX <= b.MaxX && bounds[i].MaxY >= b.MinY && bounds[i].MinY <= b.MaxY {
					want = append(want, i)
					break
				}
			}
		}
		if desc {
			slices.Reverse(want)
		}
		limit := len(want)
		if q%3 == 0 {
			limit = min(limit, 1+q%40) // stopping early
		}
		// With need, the search may leave out what fn cannot reach: the
		// leaves it gives must still be the first limit.
		need := 0
		if q%4 < 2 {
			need = limit
		}
		var got []int
		s.SearchOrdered(rs, desc, need, nil, func(pos int, _ wkb.Rect) bool {
			got = append(got, pos)
			return len(got) < limit
		})
		if limit == 0 {
			got = got[:0]
		}
		if !slices.Equal(got, want[:limit]) {
			t.Fatalf("query %d (%v, desc %v): %d results, want %d", q, rs, desc, len(got), limit)
		}
	}
}

func TestQueryIDs(t *testing.T) {
	s, _ := write(t, testAttrs, randomFeatures(rand.New(rand.NewPCG(1, 2)), 10))
	var got []int64
	err := s.Query(context.Background(), &mapcommons.FeatureQuery{Limit: -1, IDs: []int64{3, 7, 99}}, func(f *mapcommons.Feature) error {
		got = append(got, f.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int64{3, 7}) {
		t.Fatalf("ids %v, want [3 7]", got)
	}
}
