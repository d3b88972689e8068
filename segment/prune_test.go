package segment

import (
	"math/rand/v2"
	"slices"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// TestBoxPagesOfPoints: a page of points in a box, the query whose index
// search is pruned to the page (everyHitTaken), is the page of a scan of
// every feature, for any box (across the antimeridian too), offset, limit
// and direction; with features without a geometry among the points, and
// through a view whose base has dead positions (left out of the search,
// not counted in the page).
func TestBoxPagesOfPoints(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const n = 30000
	feats := make([]mapcommons.Feature, n)
	xy := make([][2]float64, n)
	for i := range feats {
		x, y := r.Float64()*360-180, r.Float64()*170-85
		if i%97 == 0 { // on a box's edge: edges are in
			x, y = 10, 20
		}
		xy[i] = [2]float64{x, y}
		g := wkb.AppendPoint(nil, x, y)
		if i%61 == 0 {
			g = nil
		}
		feats[i] = mapcommons.Feature{Values: []any{int64(i), float64(i), "s", true, "2020-01-02"}, Geometry: g}
	}
	s, _ := write(t, testAttrs, feats)
	plan, err := s.compile(&mapcommons.FeatureQuery{Limit: 1, BBox: &mapcommons.BBox{W: 0, S: 0, E: 1, N: 1}})
	if err != nil || !plan.everyHitTaken() {
		t.Fatalf("a box of points is not pruned: %v", err)
	}
	var dead []int32
	for p := 0; p < n; p += 1 + r.IntN(4) { // a third of the features, in runs
		dead = append(dead, int32(p))
	}
	view, err := NewView(s, dead, nil)
	if err != nil {
		t.Fatal(err)
	}
	isDead := map[int]bool{}
	for _, p := range dead {
		isDead[int(p)] = true
	}
	for q := range 600 {
		viewed := q >= 300
		w, south := r.Float64()*360-180, r.Float64()*170-85
		box := mapcommons.BBox{W: w, S: south, E: w + r.Float64()*60, N: south + r.Float64()*40}
		if box.E > 180 {
			box.E -= 360 // across the antimeridian
		}
		if q%5 == 0 {
			box = mapcommons.BBox{W: 10, S: 20, E: 10 + r.Float64()*30, N: 20 + r.Float64()*30}
		}
		rects := spatial.BBoxRects(box.W, box.S, box.E, box.N)
		var want []int64
		for i := range feats {
			if feats[i].Geometry != nil && spatial.InAnyRect(xy[i][0], xy[i][1], rects) && !(viewed && isDead[i]) {
				want = append(want, int64(i+1))
			}
		}
		desc := q%2 == 1
		if desc {
			slices.Reverse(want)
		}
		offset, limit := int64(r.IntN(60)), int64(1+r.IntN(80))
		if q%7 == 0 {
			offset = int64(len(want)) - 3 // the last page, cut short
		}
		lo, hi := min(max(offset, 0), int64(len(want))), min(max(offset, 0)+limit, int64(len(want)))
		var got []int64
		query := s.Query
		if viewed {
			query = view.Query
		}
		err := query(t.Context(), &mapcommons.FeatureQuery{BBox: &box, Offset: max(offset, 0), Limit: limit, Descending: desc}, func(f *mapcommons.Feature) error {
			got = append(got, f.ID)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want[lo:hi]) {
			t.Fatalf("query %d (view %v, %+v, offset %d, limit %d, desc %v): %v, want %v", q, viewed, box, offset, limit, desc, got, want[lo:hi])
		}
	}
}
