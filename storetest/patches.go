package storetest

// The contract of partial updates (Edits.Patches): an update with a patch
// changes what the patch gives and keeps the rest of the feature.

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/feature"
	"mapcommons/format/wkb"
)

func testEditPatches(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	ds := &mapcommons.Dataset{Type: "csv"}
	src := SampleSource(5) // ids 1..5; attributes n, x, label, flag
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	type row struct {
		id     int64
		values []any
		geom   []byte
	}
	rows := func() []row {
		t.Helper()
		var out []row
		err := s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
			g := append([]byte(nil), f.Geometry...)
			if len(g) == 0 {
				g = nil
			}
			out = append(out, row{f.ID, append([]any(nil), f.Values...), g})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := rows()
	patch := func(t *testing.T, e *mapcommons.Edits) {
		t.Helper()
		if _, err := s.Features.ApplyEdits(ctx, ds.ID, e); err != nil {
			t.Fatal(err)
		}
		if got := rows(); !reflect.DeepEqual(got, want) {
			t.Fatalf("after the patch:\n%v\nwant\n%v", got, want)
		}
	}
	attrs := func(given ...int) []bool {
		out := make([]bool, len(src.Attrs))
		for _, i := range given {
			out[i] = true
		}
		return out
	}
	t.Run("Attributes", func(t *testing.T) {
		// Feature 3 (position 2): only its label changes.
		e := &mapcommons.Edits{
			Updates: []mapcommons.Feature{{ID: 3, Values: []any{nil, nil, "patched", nil}}},
			Patches: []*mapcommons.Patch{{Attrs: attrs(2)}},
		}
		want[2].values = []any{int64(2), 3.0, "patched", true}
		patch(t, e)
		// The caller's edit is as it was.
		if v := e.Updates[0].Values; v[0] != nil || v[2] != "patched" || e.Updates[0].Geometry != nil || len(e.Patches) != 1 {
			t.Fatalf("the edit given changed: %+v", e.Updates[0])
		}
		// Again, now that it is an edited feature: n cleared by its null.
		want[2].values[0] = nil
		patch(t, &mapcommons.Edits{
			Updates: []mapcommons.Feature{{ID: 3, Values: []any{nil, nil, nil, nil}}},
			Patches: []*mapcommons.Patch{{Attrs: attrs(0)}},
		})
	})
	t.Run("Geometry", func(t *testing.T) {
		want[3].geom = wkb.AppendPoint(nil, 40, 30)
		patch(t, &mapcommons.Edits{
			Updates: []mapcommons.Feature{{ID: 4, Values: make([]any, 4), Geometry: wkb.AppendPoint(nil, 40, 30)}},
			Patches: []*mapcommons.Patch{{Attrs: attrs(), Geometry: true}},
		})
		got, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Extent == nil || got.Extent.MaxX != 40 || got.Extent.MaxY != 30 {
			t.Fatalf("extent after a geometry patch: %+v", got.Extent)
		}
		// A null geometry given clears it.
		want[3].geom = nil
		patch(t, &mapcommons.Edits{
			Updates: []mapcommons.Feature{{ID: 4}},
			Patches: []*mapcommons.Patch{{Geometry: true}},
		})
	})
	t.Run("Mixed", func(t *testing.T) {
		// A patch, a whole update (past the end of Patches), and a delete.
		want[0].values[3] = false
		want[4] = row{5, []any{int64(50), nil, nil, nil}, nil}
		want = append(want[:1], want[2:]...)
		patch(t, &mapcommons.Edits{
			Updates: []mapcommons.Feature{{ID: 1, Values: []any{nil, nil, nil, false}}, {ID: 5, Values: []any{int64(50), nil, nil, nil}}},
			Patches: []*mapcommons.Patch{{Attrs: attrs(3)}},
			Deletes: []int64{2},
		})
	})
	t.Run("AllOrNothing", func(t *testing.T) {
		before, _ := s.Datasets.FindDatasetByID(ctx, ds.ID)
		for _, c := range []struct {
			name, mention string
			missing       bool
			e             *mapcommons.Edits
		}{
			{"Missing", "updates[1]: there is no feature 2", true, &mapcommons.Edits{
				Updates: []mapcommons.Feature{{ID: 1, Values: []any{int64(9), nil, nil, nil}}, {ID: 2, Values: make([]any, 4)}},
				Patches: []*mapcommons.Patch{{Attrs: attrs(0)}, {Attrs: attrs(1)}}}},
			{"BadValue", "updates[0]", false, &mapcommons.Edits{
				Updates: []mapcommons.Feature{{ID: 1, Values: []any{"nine", nil, nil, nil}}},
				Patches: []*mapcommons.Patch{{Attrs: attrs(0)}}}},
			{"BadGeometry", "updates[0]", false, &mapcommons.Edits{
				Updates: []mapcommons.Feature{{ID: 1, Geometry: []byte{1, 2, 3}}},
				Patches: []*mapcommons.Patch{{Geometry: true}}}},
			{"Twice", "updates[1]: feature 3 is named twice", false, &mapcommons.Edits{
				Updates: []mapcommons.Feature{{ID: 3, Values: make([]any, 4)}, {ID: 3, Values: make([]any, 4)}},
				Patches: []*mapcommons.Patch{{Attrs: attrs(0)}, {Attrs: attrs(1)}}}},
			{"NoID", "updates[0]", false, &mapcommons.Edits{
				Updates: []mapcommons.Feature{{Values: make([]any, 4)}},
				Patches: []*mapcommons.Patch{{Attrs: attrs(0)}}}},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := s.Features.ApplyEdits(ctx, ds.ID, c.e)
				if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(err.Error(), c.mention) {
					t.Fatalf("error %v, want an EINVALID naming %q", err, c.mention)
				}
				if errors.Is(err, feature.ErrMissingFeature) != c.missing {
					t.Fatalf("error %v: missing feature %v, want %v", err, !c.missing, c.missing)
				}
				if got := rows(); !reflect.DeepEqual(got, want) {
					t.Fatalf("a refused patch changed the features:\n%v\nwant\n%v", got, want)
				}
				if got, _ := s.Datasets.FindDatasetByID(ctx, ds.ID); got.Version != before.Version {
					t.Fatalf("a refused patch moved the version: %d, was %d", got.Version, before.Version)
				}
			})
		}
	})
}

// testEditVersion: an edit made against a version of the dataset
// (Edits.Version, an If-Match) applies while the dataset is at that
// version, and fails with StaleVersion's error, nothing applied, once it
// has moved; without a version, an edit applies whatever the version.
func testEditVersion(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, SampleSource(5)); err != nil {
		t.Fatal(err)
	}
	version := func() int64 {
		t.Helper()
		d, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		return d.Version
	}
	label := func(id int64) any {
		t.Helper()
		var got any
		err := s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{IDs: []int64{id}, Limit: 1}, func(f *mapcommons.Feature) error {
			got = f.Values[2]
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	update := func(v int64, id int64, l string) error {
		_, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Version: v,
			Updates: []mapcommons.Feature{{ID: id, Values: []any{int64(id), 1.0, l, true}}}})
		return err
	}
	v0 := version()
	if err := update(v0, 2, "first"); err != nil {
		t.Fatal(err)
	}
	v1 := version()
	if v1 == v0 || label(2) != "first" {
		t.Fatalf("after an edit at its version: version %d (was %d), label %v", v1, v0, label(2))
	}
	// Against the old version: refused, nothing applied, the version kept.
	// Twice: the second after an edit of this store, as the first was.
	for i := range 2 {
		err := update(v0, 3, "stale")
		if !errors.Is(err, feature.ErrStaleVersion) || mapcommons.ErrorCode(err) != mapcommons.ECONFLICT {
			t.Fatalf("an edit against version %d at %d (%d): %v", v0, v1, i, err)
		}
		if version() != v1 || label(3) == "stale" {
			t.Fatalf("a stale edit applied: version %d, label %v", version(), label(3))
		}
	}
	_, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Version: v0, Deletes: []int64{4}})
	if !errors.Is(err, feature.ErrStaleVersion) {
		t.Fatalf("a stale delete: %v", err)
	}
	_, err = s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Version: v0 + 100, Adds: []mapcommons.Feature{{Values: []any{nil, nil, "new", nil}}}})
	if !errors.Is(err, feature.ErrStaleVersion) {
		t.Fatalf("an add against a version to come: %v", err)
	}
	// At the current version, and without one: applied.
	if err := update(v1, 3, "second"); err != nil || label(3) != "second" {
		t.Fatalf("an edit at the current version: %v, label %v", err, label(3))
	}
	if err := update(0, 4, "third"); err != nil || label(4) != "third" {
		t.Fatalf("an edit without a version: %v, label %v", err, label(4))
	}
	if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Version: version(), Deletes: []int64{5}}); err != nil {
		t.Fatalf("a delete at the current version: %v", err)
	}
}
