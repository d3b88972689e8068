package feature

import (
	"math"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// TestRelateSliver: a thin triangle (three near-collinear vertices of
// Natural Earth's Sudan), whose faces simplefeatures' overlay mislabels,
// is within a box around it and does not contain it; a feature without
// geometry is unknown for every predicate, S_DISJOINT included.
func TestRelateSliver(t *testing.T) {
	sliver, err := wkb.ParseWKT("POLYGON((24.567369012152085 8.229187933785468, 23.805813429466752 8.666318874542526, 23.886979580860668 8.619729712933065, 24.567369012152085 8.229187933785468))")
	if err != nil {
		t.Fatal(err)
	}
	box := &mapcommons.BBox{W: -100, S: -60, E: 100, N: 60}
	for _, c := range []struct {
		op   string
		want tri
	}{
		{mapcommons.ExprWithin, triTrue}, {mapcommons.ExprIntersects, triTrue}, {mapcommons.ExprContains, triFalse},
		{mapcommons.ExprOverlaps, triFalse}, {mapcommons.ExprDisjoint, triFalse}, {mapcommons.ExprTouches, triFalse},
		{mapcommons.ExprEquals, triFalse}, {mapcommons.ExprCrosses, triFalse},
	} {
		for _, e := range []*mapcommons.Expr{
			{Op: c.op, Property: "geometry", BBox: box},
			{Op: c.op, Property: "geometry", Geometry: wkb.AppendPolygon(nil, [][]float64{{-100, -60, 100, -60, 100, 60, -100, 60, -100, -60}})},
		} {
			n := Compile(nil, e)
			if got := n.match(&valueCells{g: sliver}); got != c.want {
				t.Errorf("%s(sliver, box): %v, want %v", c.op, got, c.want)
			}
			if got := n.match(&valueCells{}); got != triUnknown {
				t.Errorf("%s(no geometry, box): %v, want unknown", c.op, got)
			}
		}
	}
	// Where the overlay is needed (the sliver meets the literal's
	// boundary), the mislabelled faces are not taken for an answer: the
	// feature is unknown (GEOS's matrix is 2FF10F212, within; the
	// engine's 21200FFFF would say it contains the box).
	e := &mapcommons.Expr{Op: mapcommons.ExprWithin, Property: "geometry", BBox: &mapcommons.BBox{W: 23.805813429466752, S: 8, E: 25, N: 9}}
	n := Compile(nil, e)
	if got := n.match(&valueCells{g: sliver}); got != triUnknown {
		t.Errorf("within(sliver, box it touches): %v, want unknown", got)
	}
	e.Op = mapcommons.ExprContains
	n = Compile(nil, e)
	if got := n.match(&valueCells{g: sliver}); got == triTrue {
		t.Errorf("contains(sliver, box it touches): %v", got)
	}
}

// TestRelateIndex: every spatial function but S_DISJOINT gives the index
// the literal's boxes (a feature that meets the literal has an index box
// that meets one of them); S_DISJOINT gives none, an S_INTERSECTS of a
// BBOX is taken out as the bbox, and the expression stays whole for the
// others (their exact test is per row).
func TestRelateIndex(t *testing.T) {
	poly := wkb.AppendPolygon(nil, [][]float64{{0, 0, 4, 0, 4, 4, 0, 4, 0, 0}, {1, 1, 2, 1, 2, 2, 1, 1}})
	across := &mapcommons.BBox{W: 170, S: -10, E: -170, N: 10}
	for _, op := range mapcommons.SpatialOps {
		for _, e := range []*mapcommons.Expr{
			{Op: op, Property: "geometry", Geometry: poly},
			{Op: op, Property: "geometry", BBox: across},
		} {
			bbox, boxes, rest := Index(e)
			switch {
			case op == mapcommons.ExprDisjoint:
				if bbox != nil || boxes != nil || rest != e {
					t.Errorf("%s: index %v %v, rest %v; want none", op, bbox, boxes, rest)
				}
			case op == mapcommons.ExprIntersects && e.BBox != nil:
				if bbox != across || rest != nil {
					t.Errorf("%s of a bbox: %v, rest %v", op, bbox, rest)
				}
			case e.BBox != nil:
				if len(boxes) != 2 || boxes[0] != (wkb.Rect{MinX: 170, MinY: -10, MaxX: 180, MaxY: 10}) || boxes[1] != (wkb.Rect{MinX: -180, MinY: -10, MaxX: -170, MaxY: 10}) || rest != e {
					t.Errorf("%s of a bbox: boxes %v, rest %v", op, boxes, rest)
				}
			default:
				if len(boxes) == 0 || rest != e {
					t.Errorf("%s: boxes %v, rest %v", op, boxes, rest)
				}
				for _, b := range boxes {
					if b.MinX > 0 || b.MinY > 0 || b.MaxX < 4 || b.MaxY < 4 {
						t.Errorf("%s: box %v does not cover the literal", op, b)
					}
				}
			}
		}
	}
	// In an AND, a disjoint conjunct gives nothing and the next one serves.
	and := &mapcommons.Expr{Op: mapcommons.ExprAnd, Args: []*mapcommons.Expr{
		{Op: mapcommons.ExprDisjoint, Property: "geometry", BBox: across},
		{Op: mapcommons.ExprWithin, Property: "geometry", Geometry: poly},
	}}
	if _, boxes, rest := Index(and); len(boxes) == 0 || rest != and {
		t.Errorf("AND: boxes %v, rest %v", boxes, rest)
	}
}

// FuzzRelate: the spatial functions never panic, whatever the feature's
// geometry (invalid ones included: rings that cross themselves, spikes,
// repeated points) and a valid literal, and S_DISJOINT is the negation of
// S_INTERSECTS (its test is S_INTERSECTS's).
func FuzzRelate(f *testing.F) {
	f.Add("POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))", "POLYGON((2 2, 6 2, 6 6, 2 6, 2 2), (3 3, 4 3, 4 4, 3 3))")
	f.Add("POLYGON((0 0, 4 4, 4 0, 0 4, 0 0))", "LINESTRING(0 0, 4 4)")
	f.Add("MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)), ((0 0, 1 0, 1 1, 0 0)))", "MULTIPOINT((0 0), (1 1))")
	f.Add("LINESTRING(0 0, 1 1, 0 0, 1 1)", "GEOMETRYCOLLECTION(POINT(1 1), POLYGON((0 0, 2 0, 2 2, 0 0)))")
	f.Add("POLYGON((24.567369012152085 8.229187933785468, 23.805813429466752 8.666318874542526, 23.886979580860668 8.619729712933065, 24.567369012152085 8.229187933785468))", "POLYGON((23.805813429466752 8, 25 8, 25 9, 23.805813429466752 9, 23.805813429466752 8))")
	f.Fuzz(func(t *testing.T, feat, lit string) {
		g, err := wkb.ParseWKT(feat)
		if err != nil {
			return
		}
		l, err := wkb.ParseWKT(lit)
		if err != nil || mapcommons.CheckGeometryLiteral(l) != nil || len(l) > 4000 || len(g) > 4000 {
			return
		}
		got := map[string]tri{}
		for _, op := range mapcommons.SpatialOps {
			n := Compile(nil, &mapcommons.Expr{Op: op, Property: "geometry", Geometry: l})
			got[op] = n.match(&valueCells{g: g})
		}
		i, d := got[mapcommons.ExprIntersects], got[mapcommons.ExprDisjoint]
		if i != triUnknown && d != triUnknown && i == d {
			t.Errorf("%s, %s: intersects %v, disjoint %v", feat, lit, i, d)
		}
	})
}

// BenchmarkRelate: the cost of one feature's test, a point or a
// polygon of 64 vertices against a polygon of 256 with a hole, clear of
// its boundary (the common case) or across it (the overlay).
func BenchmarkRelate(b *testing.B) {
	circle := func(cx, cy, r float64, n int) []float64 {
		var xy []float64
		for i := 0; i <= n; i++ {
			a := 2 * math.Pi * float64(i%n) / float64(n)
			xy = append(xy, cx+r*math.Cos(a), cy+r*math.Sin(a))
		}
		return xy
	}
	lit := wkb.AppendPolygon(nil, [][]float64{circle(0, 0, 10, 256), circle(0, 0, 2, 32)})
	for _, c := range []struct {
		name string
		g    []byte
	}{
		{"PointInside", wkb.AppendPoint(nil, 5, 1)},
		{"PolygonInside", wkb.AppendPolygon(nil, [][]float64{circle(5, 0, 1, 64)})},
		{"PolygonAcross", wkb.AppendPolygon(nil, [][]float64{circle(10, 0, 1, 64)})},
	} {
		b.Run(c.name, func(b *testing.B) {
			n := Compile(nil, &mapcommons.Expr{Op: mapcommons.ExprWithin, Property: "geometry", Geometry: lit})
			cells := &valueCells{g: c.g}
			for i := 0; i < b.N; i++ {
				n.match(cells)
			}
		})
	}
}
