package postgres_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"mapcommons"
	"mapcommons/cql2"
	"mapcommons/format/wkb"
	"mapcommons/internal/sqlitetest"
	"mapcommons/storetest"
)

// edgeAttrs are the attributes of edgeSource.
var edgeAttrs = []mapcommons.Attribute{
	{Name: "n", Type: mapcommons.AttrInteger},
	{Name: "x", Type: mapcommons.AttrFloat},
	{Name: "s", Type: mapcommons.AttrString},
	{Name: "b", Type: mapcommons.AttrBoolean},
	{Name: "d", Type: mapcommons.AttrDate},
}

// edgeSource is a dataset of values where SQL and Go may disagree: NaN,
// infinities, -0, integers beyond float64's precision, strings with NUL
// bytes, invalid UTF-8, case and accents, nulls; and geometries of every
// kind, across the antimeridian and none.
func edgeSource() *storetest.SliceSource {
	xs := []any{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0.0, 1.5, -2.25, nil, 1e300}
	ns := []any{int64(1<<53 + 1), int64(1 << 53), int64(-3), int64(0), nil, int64(7), int64(math.MaxInt64), int64(math.MinInt64)}
	ss := []any{"a\x00b", "a", "A", "\xff\xfe", "", "ämber", "amber", nil, "a\x00", "zeta"}
	bs := []any{true, false, nil}
	ds := []any{"2026-01-02", "2025-12-31", nil, "2026-01-02"}
	geoms := [][]byte{
		wkb.AppendPoint(nil, 1, 1),
		wkb.AppendPoint(nil, 179.5, 10),
		wkb.AppendLineString(nil, []float64{170, 0, -170, 5}),
		wkb.AppendPolygon(nil, [][]float64{{0, 0, 4, 0, 4, 4, 0, 0}}),
		nil,
		wkb.AppendPoint(nil, -60, 85),
		wkb.AppendLineString(nil, []float64{-10, 60, 10, 60}),
	}
	src := &storetest.SliceSource{Attrs: edgeAttrs}
	for i := range 60 {
		src.Features = append(src.Features, mapcommons.Feature{
			Values:   []any{ns[i%len(ns)], xs[i%len(xs)], ss[i%len(ss)], bs[i%len(bs)], ds[i%len(ds)]},
			Geometry: geoms[i%len(geoms)],
		})
	}
	return src
}

// edgeQueries are queries over edgeSource's dataset.
func edgeQueries(t *testing.T) []*mapcommons.FeatureQuery {
	var qs []*mapcommons.FeatureQuery
	for _, a := range edgeAttrs {
		for _, desc := range []bool{false, true} {
			qs = append(qs, &mapcommons.FeatureQuery{Limit: -1, Sort: a.Name, Descending: desc})
			qs = append(qs, &mapcommons.FeatureQuery{Limit: 7, Offset: 5, Sort: a.Name, Descending: desc,
				BBox: &mapcommons.BBox{W: 170, S: -5, E: 5, N: 20}})
		}
	}
	filters := []mapcommons.Filter{
		{Attr: "x", Op: mapcommons.OpMin, Values: []string{"0"}},
		{Attr: "x", Op: mapcommons.OpMax, Values: []string{"0"}},
		{Attr: "x", Op: mapcommons.OpEquals, Values: []string{"-0"}},
		{Attr: "x", Op: mapcommons.OpIn, Values: []string{"1.5", "-2.25", "1e300", "0", "9", "10", "11", "12", "13"}},
		{Attr: "n", Op: mapcommons.OpMin, Values: []string{"9007199254740993"}},
		{Attr: "n", Op: mapcommons.OpEquals, Values: []string{"9007199254740992"}},
		{Attr: "n", Op: mapcommons.OpMax, Values: []string{"0"}},
		{Attr: "s", Op: mapcommons.OpMin, Values: []string{"a"}},
		{Attr: "s", Op: mapcommons.OpMax, Values: []string{"a\x00"}},
		{Attr: "s", Op: mapcommons.OpIn, Values: []string{"A", "a\x00b", "\xff\xfe"}},
		{Attr: "b", Op: mapcommons.OpMin, Values: []string{"yes"}},
		{Attr: "b", Op: mapcommons.OpEquals, Values: []string{"0"}},
		{Attr: "d", Op: mapcommons.OpMax, Values: []string{"2026-01-01"}},
	}
	for _, f := range filters {
		qs = append(qs, &mapcommons.FeatureQuery{Limit: -1, Filters: []mapcommons.Filter{f}})
		qs = append(qs, &mapcommons.FeatureQuery{Limit: 3, Offset: 2, Filters: []mapcommons.Filter{f}, Sort: "x", Descending: true})
	}
	for _, w := range []string{
		`x > 0`, `x <= 0`, `x <> 1.5`, `n BETWEEN -3 AND 7`, `s LIKE 'a%'`, `s NOT LIKE '_mber'`, `s IN ('a', 'A', 'zeta')`,
		`x IS NULL OR NOT (b = true)`, `d >= '2026-01-01'`, `geometry IS NULL`, `geometry IS NOT NULL AND n < 1`,
		`S_INTERSECTS(geometry, BBOX(170, -5, -170, 20)) AND x > -5`, `S_INTERSECTS(geometry, POLYGON((0 0, 3 0, 3 3, 0 0)))`,
		`S_INTERSECTS(geometry, POINT(1 1)) OR s = ''`, `NOT (b = false) AND TRUE`,
		// The forms the planner turns into filters (mapcommons.SplitWhere).
		`x < 1.5`, `x > -2.25 AND x < 1e300`, `x <= 0 AND x >= 0`, `x = 0 OR x = 1.5 OR x IN (1e300, 7)`,
		`n > 9007199254740992`, `n < -2.5`, `n >= 9007199254740993`, `n < 9223372036854775807`, `n > -9223372036854775808`,
		`s < 'a'`, `s > 'a' AND s <= 'zeta'`, `s LIKE 'a%' AND s <> 'a'`, `s LIKE 'am%r'`, `s LIKE 'zeta'`, `d LIKE '2026%'`,
		`b < true`, `b > false`, `b >= true AND n > 0`, `s = 'a' OR s IN ('A', 'zeta')`, `d BETWEEN '2025-12-31' AND '2026-01-01'`,
		`x < 1.5 AND S_INTERSECTS(geometry, BBOX(170, -5, 5, 20))`,
		// ORs across columns, in SQL when every branch is filters.
		`n = 7 OR s = 'zeta'`, `(x > 0 AND b = true) OR d LIKE '2026%'`, `n < 0 OR (x BETWEEN -3 AND 2 AND s >= 'a')`,
		`(b = true OR n > 5) AND x < 1.5`, `n = 7 OR s IS NULL`, `x <= 0 OR x > 1e299 OR n IN (7, 0)`,
	} {
		e, err := cql2.ParseText(w)
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		qs = append(qs, &mapcommons.FeatureQuery{Limit: -1, Where: e})
		qs = append(qs, &mapcommons.FeatureQuery{Limit: 4, Offset: 1, Where: e, Sort: "s"})
	}
	qs = append(qs,
		&mapcommons.FeatureQuery{Limit: -1, IDs: []int64{3, 1, 3, 60, 61, -1}, Descending: true},
		&mapcommons.FeatureQuery{Limit: -1, WithDistance: true,
			Near: &mapcommons.Near{Kind: mapcommons.NearPoint, XY: []float64{178, 5}, Radius: 1500, Units: "km", Contained: true}},
		&mapcommons.FeatureQuery{Limit: 5, Offset: 3, Descending: true},
	)
	return qs
}

// spatial reports whether a spatial condition drives q: a bbox, a buffer
// or a geometry in its Where.
func spatial(q *mapcommons.FeatureQuery) bool {
	var geometric func(e *mapcommons.Expr) bool
	geometric = func(e *mapcommons.Expr) bool {
		if e == nil {
			return false
		}
		if e.Op == mapcommons.ExprIntersects {
			return true
		}
		return slices.ContainsFunc(e.Args, geometric)
	}
	return q.BBox != nil || q.Near != nil || geometric(q.Where)
}

// describe is a feature as both stores must give it (%#v, so that NaN
// equals NaN and -0 is not 0).
func describe(f *mapcommons.Feature) string {
	return fmt.Sprintf("%d %d %#v %x %v", f.Position, f.ID, f.Values, f.Geometry, f.Distance)
}

// TestSameAsSQLite checks that the two stores give the same answers, and
// the same summary, over values and geometries where SQL and Go may
// differ; the queries include Where expressions and groups, which the
// contract's oracle does not draw.
func TestSameAsSQLite(t *testing.T) {
	ctx := context.Background()
	pg := open(t)
	lite := sqlitetest.Open(t, filepath.Join(t.TempDir(), "store.db")).Services()
	var ids [2]int64
	var sums [2]*mapcommons.Dataset
	for k, s := range []mapcommons.Services{pg, lite} {
		ds := &mapcommons.Dataset{Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, ds, edgeSource()); err != nil {
			t.Fatal(err)
		}
		ids[k], sums[k] = ds.ID, ds
	}
	if a, b := sums[0], sums[1]; a.FeatureCount != b.FeatureCount || !reflect.DeepEqual(a.Extent, b.Extent) ||
		!reflect.DeepEqual(a.GeometryTypes, b.GeometryTypes) || a.GeometryMask != b.GeometryMask || !reflect.DeepEqual(a.Stats, b.Stats) {
		t.Fatalf("summaries differ:\npostgres %d %v %v %d %v\nsqlite   %d %v %v %d %v", a.FeatureCount, a.Extent, a.GeometryTypes,
			a.GeometryMask, a.Stats, b.FeatureCount, b.Extent, b.GeometryTypes, b.GeometryMask, b.Stats)
	}
	compareStores(t, pg, lite, ids)
	// Edited in place (postgres: holes where rows went, rows updated where
	// they are, adds past the last slot), then edited again: the same
	// answers, and the same summary (exact below exactSummaryMax on both).
	for round, e := range []*mapcommons.Edits{
		{Deletes: []int64{1, 7, 30, 31, 60}, Updates: []mapcommons.Feature{
			{ID: 2, Values: []any{int64(99), math.NaN(), "zz", true, "2027-01-01"}, Geometry: wkb.AppendPoint(nil, -179.5, -10)},
			{ID: 40, Values: []any{nil, nil, nil, nil, nil}}},
			Adds: []mapcommons.Feature{{Values: []any{int64(-3), 1.5, "a", false, "2026-01-02"}, Geometry: wkb.AppendPoint(nil, 3, 3)}}},
		{Deletes: []int64{2, 3, 61}, Adds: []mapcommons.Feature{{Values: []any{int64(5), -0.0, "", nil, nil}},
			{Values: []any{int64(6), 2.0, "b", true, "2025-12-31"}, Geometry: wkb.AppendLineString(nil, []float64{170, 1, -170, 2})}}},
	} {
		for k, s := range []mapcommons.Services{pg, lite} {
			if _, err := s.Features.ApplyEdits(ctx, ids[k], e); err != nil {
				t.Fatalf("edit %d: %v", round, err)
			}
			ds, err := s.Datasets.FindDatasetByID(ctx, ids[k])
			if err != nil {
				t.Fatal(err)
			}
			sums[k] = ds
		}
		if a, b := sums[0], sums[1]; a.FeatureCount != b.FeatureCount || !reflect.DeepEqual(a.Extent, b.Extent) ||
			!reflect.DeepEqual(a.GeometryTypes, b.GeometryTypes) || !reflect.DeepEqual(a.Stats, b.Stats) {
			t.Fatalf("edit %d: summaries differ:\npostgres %d %v %v %v\nsqlite   %d %v %v %v", round, a.FeatureCount, a.Extent,
				a.GeometryTypes, a.Stats, b.FeatureCount, b.Extent, b.GeometryTypes, b.Stats)
		}
		compareStores(t, pg, lite, ids)
	}
}

// compareStores compares every query of edgeQueries, and its groups, on
// the two stores' copies of edgeSource's dataset.
func compareStores(t *testing.T, pg, lite mapcommons.Services, ids [2]int64) {
	t.Helper()
	ctx := context.Background()
	for i, q := range edgeQueries(t) {
		compareScans(t, i, q, pg, lite, ids)
		if q.Where == nil && q.Near == nil && q.IDs == nil && q.BBox == nil && len(q.Filters) == 0 {
			continue
		}
		// Grouped by each attribute, with every aggregate that fits.
		// The segment engine accumulates a spatially driven query's groups
		// in its index's order, which SQL cannot follow: there, only the
		// aggregates whose value does not depend on the order (not a float
		// min with NaN or -0, not an integer sum that overflows on the way)
		// are compared.
		aggs := []mapcommons.Aggregate{{Name: "n", Calc: mapcommons.CalcMin}, {Name: "n", Calc: mapcommons.CalcMax},
			{Name: "s", Calc: mapcommons.CalcMax}, {Name: "d", Calc: mapcommons.CalcMin}, {Name: "b", Calc: mapcommons.CalcMin}}
		if !spatial(q) {
			aggs = append(aggs, mapcommons.Aggregate{Name: "n", Calc: mapcommons.CalcSum},
				mapcommons.Aggregate{Name: "x", Calc: mapcommons.CalcAverage}, mapcommons.Aggregate{Name: "x", Calc: mapcommons.CalcMin})
		}
		for _, a := range append(slices.Clone(edgeAttrs), mapcommons.Attribute{}) {
			gq := *q
			gq.Sort, gq.GroupBy, gq.Aggregates = "", []string{a.Name}, aggs
			if a.Name == "" { // a count alone (OGC's numberMatched)
				gq.GroupBy, gq.Aggregates = nil, nil
			}
			var groups [2]string
			for k, s := range []mapcommons.Services{pg, lite} {
				g, err := s.Features.GroupFeatures(ctx, ids[k], &gq)
				if err != nil {
					t.Fatalf("query %d grouped by %s: %v", i, a.Name, err)
				}
				groups[k] = fmt.Sprintf("%#v", g)
			}
			if groups[0] != groups[1] {
				t.Errorf("query %d grouped by %s:\npostgres %s\nsqlite   %s", i, a.Name, groups[0], groups[1])
			}
		}
	}
}

// compareScans fails t unless query q (the i-th) gives the same features
// on both stores, pg's dataset ids[0] and lite's ids[1].
func compareScans(t *testing.T, i int, q *mapcommons.FeatureQuery, pg, lite mapcommons.Services, ids [2]int64) {
	t.Helper()
	var got [2][]string
	for k, s := range []mapcommons.Services{pg, lite} {
		err := s.Features.ScanFeatures(context.Background(), ids[k], q, func(f *mapcommons.Feature) error {
			got[k] = append(got[k], describe(f))
			return nil
		})
		if err != nil {
			t.Fatalf("query %d %+v: %v", i, q, err)
		}
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("query %d %+v %+v:\npostgres %.2000q\nsqlite   %.2000q", i, q, q.Filters, got[0], got[1])
	}
	// Lazily, the values read through Feature.Row where a store gives it.
	lq := *q
	lq.Lazy = true
	for k, s := range []mapcommons.Services{pg, lite} {
		var lazy []string
		err := s.Features.ScanFeatures(context.Background(), ids[k], &lq, func(f *mapcommons.Feature) error {
			c := *f
			if f.Row != nil {
				c.Values = rowValues(f.Row)
			}
			lazy = append(lazy, describe(&c))
			return nil
		})
		if err != nil {
			t.Fatalf("query %d lazily: %v", i, err)
		}
		if !reflect.DeepEqual(lazy, got[k]) {
			t.Errorf("query %d %+v lazily on store %d:\n%.2000q\nnot lazily:\n%.2000q", i, q, k, lazy, got[k])
		}
	}
}

// rowValues reads a Row of edgeAttrs' columns into values.
func rowValues(r mapcommons.Row) []any {
	out := make([]any, len(edgeAttrs))
	for i, a := range edgeAttrs {
		switch {
		case r.IsNull(i):
		case a.Type == mapcommons.AttrInteger:
			out[i] = r.Int(i)
		case a.Type == mapcommons.AttrFloat:
			out[i] = r.Float(i)
		case a.Type == mapcommons.AttrBoolean:
			out[i] = r.Bool(i)
		default:
			out[i] = string(r.Bytes(i))
		}
	}
	return out
}
