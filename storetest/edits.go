package storetest

// The contract of ApplyEdits: adds, updates and deletes of features by
// stable id, applied together, all or nothing.

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

func testEdits(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	ds := &mapcommons.Dataset{Type: "csv"}
	src := SampleSource(6) // ids 1..6 at positions 0..5
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	type row struct {
		pos, id int64
		values  []any
		geom    []byte
	}
	rows := func(id int64) []row {
		t.Helper()
		var out []row
		err := s.Features.ScanFeatures(ctx, id, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
			out = append(out, row{f.Position, f.ID, append([]any(nil), f.Values...), append([]byte(nil), f.Geometry...)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	feature := func(id int64, n int64, x, y float64) mapcommons.Feature {
		return mapcommons.Feature{ID: id, Values: []any{n, float64(n) * 0.5, "edited", n%2 == 0}, Geometry: wkb.AppendPoint(nil, x, y)}
	}
	before := rows(ds.ID)
	dsBefore, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	unchanged := func(t *testing.T, err error, code, mention string) {
		t.Helper()
		if got := mapcommons.ErrorCode(err); got != code {
			t.Fatalf("error %v, want %s", err, code)
		}
		if mention != "" && !strings.Contains(err.Error(), mention) {
			t.Fatalf("error %q does not name %q", err, mention)
		}
		if got := rows(ds.ID); !reflect.DeepEqual(got, before) {
			t.Fatalf("a failed edit changed the features: %v, want %v", got, before)
		}
		if got, _ := s.Datasets.FindDatasetByID(ctx, ds.ID); got.Version != dsBefore.Version || got.FeatureCount != dsBefore.FeatureCount {
			t.Fatalf("a failed edit changed the dataset: version %d count %d", got.Version, got.FeatureCount)
		}
	}
	good := func() *mapcommons.Edits {
		return &mapcommons.Edits{
			Adds:    []mapcommons.Feature{feature(2, 100, 100, -50), feature(0, 101, 101, -50.5)},
			Updates: []mapcommons.Feature{feature(2, 42, 200, 10)},
			Deletes: []int64{6, 4},
		}
	}
	t.Run("AllOrNothing", func(t *testing.T) {
		for _, c := range []struct {
			name, code, mention string
			edit                func(e *mapcommons.Edits)
		}{
			{"UnknownUpdate", mapcommons.EINVALID, "updates[1]", func(e *mapcommons.Edits) { e.Updates = append(e.Updates, feature(99, 1, 1, 1)) }},
			{"UnknownDelete", mapcommons.EINVALID, "deletes[2]", func(e *mapcommons.Edits) { e.Deletes = append(e.Deletes, 7) }},
			{"UpdatedAndDeleted", mapcommons.EINVALID, "deletes[2]", func(e *mapcommons.Edits) { e.Deletes = append(e.Deletes, 2) }},
			{"DeletedTwice", mapcommons.EINVALID, "deletes[2]", func(e *mapcommons.Edits) { e.Deletes = append(e.Deletes, 4) }},
			{"UpdatedTwice", mapcommons.EINVALID, "updates[1]", func(e *mapcommons.Edits) { e.Updates = append(e.Updates, feature(2, 1, 1, 1)) }},
			{"UpdateWithoutID", mapcommons.EINVALID, "updates[1]", func(e *mapcommons.Edits) { e.Updates = append(e.Updates, feature(0, 1, 1, 1)) }},
			{"BadGeometry", mapcommons.EINVALID, "updates[0]", func(e *mapcommons.Edits) { e.Updates[0].Geometry = []byte{1, 2, 3} }},
			{"OutOfBounds", mapcommons.EINVALID, "adds[1]", func(e *mapcommons.Edits) { e.Adds[1].Geometry = wkb.AppendPoint(nil, math.Inf(1), 0) }},
			{"BadValue", mapcommons.EINVALID, "adds[0]", func(e *mapcommons.Edits) { e.Adds[0].Values[0] = "not an integer" }},
			{"TooMany", mapcommons.ETOOLARGE, "", func(e *mapcommons.Edits) { e.MaxFeatures = 5 }},
		} {
			t.Run(c.name, func(t *testing.T) {
				e := good()
				c.edit(e)
				_, err := s.Features.ApplyEdits(ctx, ds.ID, e)
				unchanged(t, err, c.code, c.mention)
			})
		}
		_, err := s.Features.ApplyEdits(ctx, 9999, good())
		code(t, err, mapcommons.ENOTFOUND)
	})
	t.Run("Apply", func(t *testing.T) {
		e := good()
		e.MaxFeatures = 6 // exactly: 6 - 2 + 2
		res, err := s.Features.ApplyEdits(ctx, ds.ID, e)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res.AddIDs, []int64{7, 8}) || res.FeatureCount != 6 {
			t.Fatalf("result %+v, want adds 7, 8 and 6 features", res)
		}
		// Kept: 1, 2 (updated in place), 3, 5; added: 7, 8 after them.
		u, a0, a1 := feature(0, 42, 200, 10), feature(0, 100, 100, -50), feature(0, 101, 101, -50.5)
		want := []row{
			{0, 1, src.Features[0].Values, src.Features[0].Geometry},
			{1, 2, u.Values, u.Geometry},
			{2, 3, src.Features[2].Values, src.Features[2].Geometry},
			{3, 5, src.Features[4].Values, src.Features[4].Geometry},
			{4, 7, a0.Values, a0.Geometry},
			{5, 8, a1.Values, a1.Geometry},
		}
		if got := rows(ds.ID); !reflect.DeepEqual(got, want) {
			t.Fatalf("after the edit:\n%v\nwant\n%v", got, want)
		}
		// The summary is that of a dataset made of those features.
		same := &SliceSource{Attrs: src.Attrs}
		for _, r := range want {
			same.Features = append(same.Features, mapcommons.Feature{Values: r.values, Geometry: r.geom})
		}
		ref := &mapcommons.Dataset{Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, ref, same); err != nil {
			t.Fatal(err)
		}
		got, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ref, err = s.Datasets.FindDatasetByID(ctx, ref.ID); err != nil {
			t.Fatal(err)
		}
		if got.FeatureCount != 6 || !reflect.DeepEqual(got.Extent, ref.Extent) || !reflect.DeepEqual(got.Stats, ref.Stats) ||
			!reflect.DeepEqual(got.GeometryTypes, ref.GeometryTypes) || got.Version <= dsBefore.Version {
			t.Fatalf("summary after the edit: count %d extent %+v stats %+v types %v version %d (was %d); want extent %+v stats %+v",
				got.FeatureCount, got.Extent, got.Stats, got.GeometryTypes, got.Version, dsBefore.Version, ref.Extent, ref.Stats)
		}
		// Found by id where it is.
		if ids, _ := featureIDs(t, s, ds.ID, &mapcommons.FeatureQuery{Limit: -1, IDs: []int64{2, 8}}); !reflect.DeepEqual(ids, []int64{2, 8}) {
			t.Fatalf("by ids: %v", ids)
		}
	})
	t.Run("IDsNotReused", func(t *testing.T) {
		// Deleting the last ones, then adding: the deleted ids are not given again.
		res, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Deletes: []int64{7, 8}})
		if err != nil || res.FeatureCount != 4 || len(res.AddIDs) != 0 {
			t.Fatalf("delete only: %+v, %v", res, err)
		}
		res, err = s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Adds: []mapcommons.Feature{feature(0, 1, 1, 1)}})
		if err != nil || !reflect.DeepEqual(res.AddIDs, []int64{9}) {
			t.Fatalf("add only: %+v, %v", res, err)
		}
		wantIDs(t, s, ds.ID, 1, 2, 3, 5, 9)
		// An update alone, of a feature without geometry.
		nogeom := feature(3, 7, 0, 0)
		nogeom.Geometry = nil
		if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Updates: []mapcommons.Feature{nogeom}}); err != nil {
			t.Fatal(err)
		}
		got := rows(ds.ID)
		if len(got) != 5 || got[2].id != 3 || got[2].geom != nil && len(got[2].geom) != 0 || got[2].values[0] != int64(7) {
			t.Fatalf("after updating 3: %v", got)
		}
		// An empty edit changes nothing but is no error.
		if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{}); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, s, ds.ID, 1, 2, 3, 5, 9)
	})
}
