package postgres_test

import (
	"context"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// TestResummarizeAfterEdits: edits in place of a dataset past
// exactSummaryMax extend its summary (the maximum and the extent of a
// deleted feature stay) and mark it; summarized again once left alone,
// the summary is the exact one, the version moves and the mark goes. A
// dataset changed between the read and the write keeps its mark and the
// summary of the change, and is not left alone before its last change.
func TestResummarizeAfterEdits(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db := pgtest.OpenURL(t, url)
	clock := storetest.ClockFor(t)
	db.Now = clock
	s := db.Services()
	postgres.SetExactSummaryMax(t, 10)
	src := &storetest.SliceSource{Attrs: []mapcommons.Attribute{{Name: "n", Type: mapcommons.AttrInteger}}}
	for i := range 40 {
		src.Features = append(src.Features, mapcommons.Feature{Values: []any{int64(i)}, Geometry: wkb.AppendPoint(nil, float64(i), 1)})
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	// The indexes built first: a build holds the table's lock, which the
	// resummary leaves to it (and it may hold it a moment after: the
	// resummaries below run again until they get it).
	waitIndexes(t, rawConn(t, url), ds.ID)
	stats := func() (mapcommons.Stats, *mapcommons.Dataset) {
		t.Helper()
		got, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Stats["n"], got
	}
	extended := func() bool {
		t.Helper()
		ext, err := postgres.SummaryExtended(ctx, db, ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		return ext
	}
	// Delete the feature of the greatest n and x (id 40).
	if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Deletes: []int64{40}}); err != nil {
		t.Fatal(err)
	}
	st, got := stats()
	if st.Max != 39 || got.Extent.MaxX != 39 || !extended() {
		t.Fatalf("after the deletion: max %v, extent %+v, extended %v; want the old max 39 kept, marked", st.Max, got.Extent, extended())
	}
	// Not left alone since before its edit: untouched.
	if err := postgres.Resummarize(ctx, db, clock().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if st, _ := stats(); st.Max != 39 || !extended() {
		t.Fatalf("summarized again before it was left alone: max %v", st.Max)
	}
	// A change between the read and the write: the write is skipped.
	eventually(t, "a resummary that reads", func() bool {
		read := false
		wrote, err := postgres.ResummarizeOne(ctx, db, ds.ID, func() {
			read = true
			if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Deletes: []int64{1}}); err != nil {
				t.Fatal(err)
			}
		})
		if err != nil || wrote {
			t.Fatalf("summarized over a change: wrote %v, %v", wrote, err)
		}
		return read
	})
	st, got = stats()
	if st.Max != 39 || st.Min != 0 || got.FeatureCount != 38 || !extended() {
		t.Fatalf("after the skipped write: %+v, %d features, extended %v", st, got.FeatureCount, extended())
	}
	version := got.Version
	eventually(t, "summarized again", func() bool {
		if err := postgres.Resummarize(ctx, db, clock().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		return !extended()
	})
	st, got = stats()
	if st.Max != 38 || st.Min != 1 || got.Extent.MaxX != 38 || got.Extent.MinX != 1 || got.FeatureCount != 38 || extended() || got.Version <= version {
		t.Fatalf("summarized again: %+v, extent %+v, %d features, extended %v, version %d (was %d)",
			st, got.Extent, got.FeatureCount, extended(), got.Version, version)
	}
	// Nothing more to do.
	if wrote, err := postgres.ResummarizeOne(ctx, db, ds.ID, nil); err != nil || wrote {
		t.Fatalf("again: wrote %v, %v", wrote, err)
	}
}
