package postgres_test

import (
	"context"
	"slices"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// TestSlotsAndPositions checks the arithmetic of holes against a list of
// the rows left.
func TestSlotsAndPositions(t *testing.T) {
	for _, holes := range [][]int64{nil, {0}, {3}, {0, 1, 2}, {2, 4, 5, 9}, {9, 10, 11}} {
		var rows []int64 // the pos of the rows left, of 12 slots
		for pos := int64(0); pos < 12; pos++ {
			if !slices.Contains(holes, pos) {
				rows = append(rows, pos)
			}
		}
		n := int64(len(rows))
		for k, pos := range rows {
			if got := postgres.Slot(holes, n, int64(k)); got != pos {
				t.Errorf("holes %v: slot(%d) = %d, want %d", holes, k, got, pos)
			}
			if got := postgres.Position(holes, pos); got != int64(k) {
				t.Errorf("holes %v: position(%d) = %d, want %d", holes, pos, got, k)
			}
		}
		// Past the last row: the next slot, the last slot plus one at least.
		if got := postgres.Slot(holes, n, n); got <= rows[len(rows)-1] || slices.Contains(holes, got) && got < 12 {
			t.Errorf("holes %v: slot(count) = %d", holes, got)
		}
	}
}

// TestEditsInPlace checks that an edit of a few features changes the
// dataset's table in place (the row points at the same table; a delete
// leaves a hole), that the features read back are those a fresh store
// gives, and that past maxHoles the table is rewritten without holes.
func TestEditsInPlace(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t)
	db.Now = storetest.ClockFor(t)
	s := db.Services()
	postgres.SetMaxHoles(t, 4)
	postgres.SetExactSummaryMax(t, 10) // the extended summary, for 40 features
	src := &storetest.SliceSource{Attrs: []mapcommons.Attribute{{Name: "n", Type: mapcommons.AttrInteger}, {Name: "s", Type: mapcommons.AttrString}}}
	for i := range 40 {
		src.Features = append(src.Features, mapcommons.Feature{Values: []any{int64(i), "f"}, Geometry: wkb.AppendPoint(nil, float64(i), 1)})
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	table, _, err := postgres.TableAndHoles(ctx, db, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(src.Features) // the features as they should be, in order, ids from 1
	for i := range want {
		want[i].ID = int64(i + 1)
	}
	check := func(step string, wantTable bool, wantHoles []int64) {
		t.Helper()
		got, holes, err := postgres.TableAndHoles(ctx, db, ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		if (got == table) != wantTable || !slices.Equal(holes, wantHoles) {
			t.Fatalf("%s: table %s (was %s), holes %v; want the same table %v, holes %v", step, got, table, holes, wantTable, wantHoles)
		}
		var feats []mapcommons.Feature
		err = s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
			if f.Position != int64(len(feats)) {
				t.Errorf("%s: feature %d at position %d", step, len(feats), f.Position)
			}
			feats = append(feats, mapcommons.Feature{ID: f.ID, Values: slices.Clone(f.Values), Geometry: slices.Clone(f.Geometry)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(feats) != len(want) {
			t.Fatalf("%s: %d features, want %d", step, len(feats), len(want))
		}
		for i := range want {
			if feats[i].ID != want[i].ID || !slices.Equal(feats[i].Values, want[i].Values) || !slices.Equal(feats[i].Geometry, want[i].Geometry) {
				t.Fatalf("%s: feature %d is %+v, want %+v", step, i, feats[i], want[i])
			}
		}
		// The last page from the end and one from the middle, by position.
		for _, q := range []*mapcommons.FeatureQuery{{Offset: 3, Limit: 2, Descending: true}, {Offset: 7, Limit: 3}} {
			var ids []int64
			if err := s.Features.ScanFeatures(ctx, ds.ID, q, func(f *mapcommons.Feature) error { ids = append(ids, f.ID); return nil }); err != nil {
				t.Fatal(err)
			}
			var wantIDs []int64
			for k := q.Offset; k < q.Offset+q.Limit && k < int64(len(want)); k++ {
				i := k
				if q.Descending {
					i = int64(len(want)) - 1 - k
				}
				wantIDs = append(wantIDs, want[i].ID)
			}
			if !slices.Equal(ids, wantIDs) {
				t.Fatalf("%s: page %+v gives ids %v, want %v", step, q, ids, wantIDs)
			}
		}
		got2, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil || got2.FeatureCount != int64(len(want)) {
			t.Fatalf("%s: count %d, %v", step, got2.FeatureCount, err)
		}
	}
	edit := func(e *mapcommons.Edits) {
		t.Helper()
		if _, err := s.Features.ApplyEdits(ctx, ds.ID, e); err != nil {
			t.Fatal(err)
		}
	}
	del := func(ids ...int64) {
		want = slices.DeleteFunc(want, func(f mapcommons.Feature) bool { return slices.Contains(ids, f.ID) })
	}

	edit(&mapcommons.Edits{Deletes: []int64{5, 1}})
	del(5, 1)
	check("two deletes", true, []int64{0, 4})

	u := mapcommons.Feature{ID: 10, Values: []any{int64(-1), "updated"}, Geometry: wkb.AppendPoint(nil, 120, -45)}
	edit(&mapcommons.Edits{Updates: []mapcommons.Feature{u}})
	want[slices.IndexFunc(want, func(f mapcommons.Feature) bool { return f.ID == 10 })] = u
	check("an update", true, []int64{0, 4})
	if got, _ := s.Datasets.FindDatasetByID(ctx, ds.ID); got.Extent == nil || got.Extent.MaxX != 120 || got.Extent.MinY != -45 {
		t.Fatalf("the extent %+v does not take in the updated feature", got.Extent)
	}

	edit(&mapcommons.Edits{Adds: []mapcommons.Feature{{Values: []any{int64(100), "new"}, Geometry: wkb.AppendPoint(nil, 5, 5)}}, Deletes: []int64{40}})
	del(40)
	want = append(want, mapcommons.Feature{ID: 41, Values: []any{int64(100), "new"}, Geometry: wkb.AppendPoint(nil, 5, 5)})
	check("an add and a delete", true, []int64{0, 4, 39})

	// Two more holes would make five: the table is rewritten.
	edit(&mapcommons.Edits{Deletes: []int64{2, 3}})
	del(2, 3)
	check("a rewrite", false, nil)
}
