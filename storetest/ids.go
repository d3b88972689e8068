package storetest

// The contract of stable feature ids: given from 1, kept by appends,
// deletes and refetches of unchanged rows, never given twice.

import (
	"context"
	"slices"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// rowsSource is a source of one string attribute "k" with a point per row
// whose x is the key's first byte: equal keys make identical rows.
func rowsSource(keys ...string) *SliceSource {
	src := &SliceSource{Attrs: []mapcommons.Attribute{{Name: "k", Type: mapcommons.AttrString}}}
	for _, k := range keys {
		src.Features = append(src.Features, mapcommons.Feature{Values: []any{k}, Geometry: wkb.AppendPoint(nil, float64(k[0]), 1)})
	}
	return src
}

// featureIDs lists the ids of a dataset's features in position order, and
// their values of attribute 0.
func featureIDs(t *testing.T, s mapcommons.Services, id int64, q *mapcommons.FeatureQuery) ([]int64, []any) {
	t.Helper()
	var ids []int64
	var vals []any
	if q == nil {
		q = &mapcommons.FeatureQuery{Limit: -1}
	}
	err := s.Features.ScanFeatures(context.Background(), id, q, func(f *mapcommons.Feature) error {
		ids = append(ids, f.ID)
		vals = append(vals, f.Values[0])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids, vals
}

func wantIDs(t *testing.T, s mapcommons.Services, id int64, want ...int64) {
	t.Helper()
	if got, _ := featureIDs(t, s, id, nil); !slices.Equal(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}
}

func testFeatureIDs(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Run("AppendDelete", func(t *testing.T) {
		s := open(t)
		ds := &mapcommons.Dataset{Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, ds, SampleSource(3)); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, s, ds.ID, 1, 2, 3)
		// Deleting id 3 (position 2) does not free it: the next append gets 4.
		if err := s.Features.DeleteFeatures(ctx, ds.ID, []int64{2}); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, s, ds.ID, 1, 2)
		src := SampleSource(1)
		src.Features[0].ID = 2 // a source's ids are not the store's
		if _, err := s.Features.AddFeatures(ctx, ds.ID, src); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, s, ds.ID, 1, 2, 4)
		// Deleting in the middle keeps the others' ids.
		if err := s.Features.DeleteFeatures(ctx, ds.ID, []int64{0}); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, s, ds.ID, 2, 4)
		// Deleting every feature keeps the high-water mark.
		if err := s.Features.DeleteFeatures(ctx, ds.ID, []int64{0, 1}); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, s, ds.ID)
		if _, err := s.Features.AddFeatures(ctx, ds.ID, SampleSource(2)); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, s, ds.ID, 5, 6)
		// Found by id.
		if got, _ := featureIDs(t, s, ds.ID, &mapcommons.FeatureQuery{Limit: -1, IDs: []int64{6, 1, 4}}); !slices.Equal(got, []int64{6}) {
			t.Fatalf("by ids: %v, want [6]", got)
		}
		// A new dataset starts from 1 again.
		other := &mapcommons.Dataset{Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, other, SampleSource(2)); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, s, other.ID, 1, 2)
	})
	t.Run("Refetch", func(t *testing.T) {
		s := open(t)
		ds := &mapcommons.Dataset{Type: "csv", DataType: mapcommons.DataTypeFeed, URL: "https://example.com/ids.csv", URLType: "csv"}
		if err := s.Datasets.CreateDataset(ctx, ds, rowsSource("a", "b", "c")); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, s, ds.ID, 1, 2, 3)
		steps := []struct {
			keys []string
			ids  []int64
		}{
			{[]string{"a", "b", "c"}, []int64{1, 2, 3}},            // unchanged
			{[]string{"a", "b", "c", "d"}, []int64{1, 2, 3, 4}},    // appended
			{[]string{"a", "c", "d"}, []int64{1, 3, 4}},            // one gone: 2 not given again
			{[]string{"a", "x", "c", "d"}, []int64{1, 5, 6, 7}},    // inserted: what follows is new
			{[]string{"x", "a", "c", "d"}, []int64{5, 8, 9, 10}},   // moved: a's 1 is below x's 5
			{[]string{"x", "x", "a", "x"}, []int64{5, 11, 12, 13}}, // a's 8 is below 11
			{[]string{"x", "x", "a", "x"}, []int64{5, 11, 12, 13}}, // duplicates: each keeps its own
			{nil, nil}, // emptied: the next id stays
			{[]string{"x"}, []int64{14}},
		}
		for i, st := range steps {
			if _, err := s.Datasets.ReplaceFeatures(ctx, ds.ID, rowsSource(st.keys...)); err != nil {
				t.Fatal(err)
			}
			if got, vals := featureIDs(t, s, ds.ID, nil); !slices.Equal(got, st.ids) {
				t.Fatalf("step %d (%v): ids %v (values %v), want %v", i, st.keys, got, vals, st.ids)
			}
		}
		// A changed geometry, or another schema, is another row.
		src := rowsSource("x")
		src.Features[0].Geometry = wkb.AppendPoint(nil, 0, 0)
		if _, err := s.Datasets.ReplaceFeatures(ctx, ds.ID, src); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, s, ds.ID, 15)
		src = rowsSource("x")
		src.Attrs = []mapcommons.Attribute{{Name: "other", Type: mapcommons.AttrString}}
		if _, err := s.Datasets.ReplaceFeatures(ctx, ds.ID, src); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, s, ds.ID, 16)
		src = rowsSource("x")
		src.Attrs = []mapcommons.Attribute{{Name: "other", Type: mapcommons.AttrString}}
		if _, err := s.Datasets.ReplaceFeatures(ctx, ds.ID, src); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, s, ds.ID, 16)
	})
}
