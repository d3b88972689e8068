package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/cql2"
	"mapcommons/format/wkb"
)

// spatialFeatures are the features of testSpatialFunctions (ids 1 on),
// around the square A = POLYGON((0 0, 4 0, 4 4, 0 4, 0 0)).
var spatialFeatures = []string{
	"POINT(1 1)",                         // 1: inside A
	"POINT(0 2)",                         // 2: on A's edge
	"POINT(10 10)",                       // 3: away
	"LINESTRING(-1 2, 5 2)",              // 4: across A
	"LINESTRING(1 1, 3 3)",               // 5: inside A
	"POLYGON((0 4, 0 0, 4 0, 4 4, 0 4))", // 6: A, from another vertex
	"POLYGON((4 0, 6 0, 6 4, 4 4, 4 0))", // 7: A's neighbour along x = 4
	"POLYGON((2 2, 6 2, 6 6, 2 6, 2 2))", // 8: over A's corner
	"POLYGON((-2 -2, 6 -2, 6 6, -2 6, -2 -2), (-1 -1, 5 -1, 5 5, -1 5, -1 -1))", // 9: A in its hole
	"",                                   // 10: no geometry
	"POLYGON((1 1, 2 1, 2 2, 1 2, 1 1))", // 11: inside A
	"MULTIPOINT((1.5 1.5), (1.6 1.6))",   // 12: inside A, in the hole of the literal holed
	"POINT(179 0)",                       // 13: east of the antimeridian
}

// testSpatialFunctions: the spatial functions of CQL2 (S_INTERSECTS with
// every literal, S_DISJOINT, S_EQUALS, S_TOUCHES, S_CROSSES, S_WITHIN,
// S_CONTAINS, S_OVERLAPS) select the features their DE-9IM meaning
// gives, alone, negated (a feature without geometry is unknown), with
// other conditions, and counted; the literal may come first.
func testSpatialFunctions(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	src := &SliceSource{Attrs: []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}, {Name: "n", Type: mapcommons.AttrInteger}}}
	if err := mapcommons.NormalizeAttributes(src.Attrs); err != nil {
		t.Fatal(err)
	}
	for i, w := range spatialFeatures {
		f := mapcommons.Feature{Values: []any{fmt.Sprintf("f%d", i+1), int64(i + 1)}}
		if w != "" {
			g, err := wkb.ParseWKT(w)
			if err != nil {
				t.Fatalf("%s: %v", w, err)
			}
			f.Geometry = g
		}
		src.Features = append(src.Features, f)
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	const (
		a     = "POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))"
		holed = "POLYGON((0 0, 4 0, 4 4, 0 4, 0 0), (1.25 1.25, 1.75 1.25, 1.75 1.75, 1.25 1.75, 1.25 1.25))"
	)
	for _, c := range []struct {
		filter string
		want   []int64
	}{
		{"S_INTERSECTS(geometry, " + a + ")", []int64{1, 2, 4, 5, 6, 7, 8, 11, 12}},
		{"S_DISJOINT(geometry, " + a + ")", []int64{3, 9, 13}},
		{"NOT S_DISJOINT(geometry, " + a + ")", []int64{1, 2, 4, 5, 6, 7, 8, 11, 12}},
		{"S_EQUALS(geometry, " + a + ")", []int64{6}},
		{"S_TOUCHES(geometry, " + a + ")", []int64{2, 7}},
		{"S_CROSSES(geometry, " + a + ")", []int64{4}},
		{"S_WITHIN(geometry, " + a + ")", []int64{1, 5, 6, 11, 12}},
		{"NOT S_WITHIN(geometry, " + a + ")", []int64{2, 3, 4, 7, 8, 9, 13}},
		{"S_CONTAINS(geometry, " + a + ")", []int64{6}},
		{"S_WITHIN(" + a + ", geometry)", []int64{6}},
		{"S_OVERLAPS(geometry, " + a + ")", []int64{8}},
		{"S_WITHIN(geometry, BBOX(0, 0, 4, 4))", []int64{1, 5, 6, 11, 12}},
		{"S_TOUCHES(geometry, BBOX(4, 0, 6, 4))", []int64{6}},
		{"S_EQUALS(geometry, BBOX(4, 0, 6, 4))", []int64{7}},
		{"S_WITHIN(geometry, BBOX(170, -10, -170, 10))", []int64{13}},
		{"S_DISJOINT(geometry, BBOX(170, -10, -170, 10)) AND n > 8", []int64{9, 11, 12}},
		// A literal with a hole: the point in the hole is out.
		{"S_INTERSECTS(geometry, " + holed + ")", []int64{1, 2, 4, 5, 6, 7, 8, 11}},
		{"S_INTERSECTS(geometry, MULTIPOLYGON(" + holed[7:] + ", ((9 9, 11 9, 11 11, 9 9))))", []int64{1, 2, 3, 4, 5, 6, 7, 8, 11}},
		{"S_DISJOINT(geometry, " + holed + ")", []int64{3, 9, 12, 13}},
		{"S_WITHIN(geometry, " + holed + ")", []int64{1}},
		{"S_CONTAINS(geometry, " + holed + ")", []int64{6}},
		{"S_OVERLAPS(geometry, " + holed + ")", []int64{8, 11}},
		// Points and lines as literals.
		{"S_INTERSECTS(geometry, MULTIPOINT((1.5 1.5), (10 10)))", []int64{3, 5, 6, 11, 12}},
		{"S_CONTAINS(geometry, POINT(1.5 1.5))", []int64{5, 6, 11, 12}},
		{"S_TOUCHES(geometry, POINT(4 2))", []int64{6, 7, 8}},
		{"S_CROSSES(geometry, LINESTRING(3 -1, 3 5))", []int64{4, 6, 8}},
		{"S_EQUALS(geometry, MULTILINESTRING((3 3, 1 1)))", []int64{5}},
		{"S_INTERSECTS(geometry, GEOMETRYCOLLECTION(POINT(10 10), LINESTRING(5 -1, 5 5)))", []int64{3, 4, 7, 8, 9}},
		{"S_OVERLAPS(geometry, MULTIPOINT((1 1), (7 7)))", nil},
		{"S_OVERLAPS(geometry, MULTIPOINT((1.5 1.5), (7 7)))", []int64{12}},
		{"S_WITHIN(geometry, " + a + ") AND name IN ('f1', 'f6', 'f9')", []int64{1, 6}},
		{"S_WITHIN(geometry, " + a + ") OR S_TOUCHES(geometry, " + a + ")", []int64{1, 2, 5, 6, 7, 11, 12}},
	} {
		e, err := cql2.ParseText(c.filter)
		if err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		q := &mapcommons.FeatureQuery{Limit: -1, Where: e}
		if err := q.Validate(src.Attrs); err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		ids, _ := featureIDs(t, s, ds.ID, q)
		if !slices.Equal(ids, c.want) {
			t.Errorf("%s: ids %v, want %v", c.filter, ids, c.want)
		}
		// A page of them, counted.
		count := int64(-1)
		page := &mapcommons.FeatureQuery{Limit: 2, Offset: 1, Where: e, Count: &count}
		got, _ := featureIDs(t, s, ds.ID, page)
		want := c.want[min(1, len(c.want)):min(3, len(c.want))]
		if !slices.Equal(got, want) || count >= 0 && count != int64(len(c.want)) {
			t.Errorf("%s: page ids %v, want %v; count %d, want %d", c.filter, got, want, count, len(c.want))
		}
	}

	// A relate over many features stops once the query's context is done.
	var ring []string
	for i := 0; i <= 4000; i++ {
		x := float64(i%2000) / 1000
		y := 0.0
		if i >= 2000 {
			x, y = 2-x, 2
		}
		ring = append(ring, fmt.Sprintf("%g %g", x, y))
	}
	ring[len(ring)-1] = ring[0]
	big := &SliceSource{Attrs: src.Attrs}
	for i := 0; i < 2000; i++ {
		big.Features = append(big.Features, mapcommons.Feature{Values: []any{"x", int64(i)}, Geometry: wkb.AppendPoint(nil, 1+float64(i)/4000, 1)})
	}
	bds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, bds, big); err != nil {
		t.Fatal(err)
	}
	e, err := cql2.ParseText("S_WITHIN(geometry, POLYGON((" + strings.Join(ring, ", ") + ")))")
	if err != nil {
		t.Fatal(err)
	}
	scan := &endingContext{Context: ctx, after: 5}
	err = s.Features.ScanFeatures(scan, bds.ID, &mapcommons.FeatureQuery{Limit: -1, Where: e}, func(*mapcommons.Feature) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a scan of S_WITHIN past its deadline: %v, want context.Canceled", err)
	}
}
