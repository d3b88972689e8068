package feature

import (
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
