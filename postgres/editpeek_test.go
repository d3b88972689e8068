package postgres_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
)

// TestEditWhileAMapComes checks the end of an edit in place that saw no
// map show its dataset: a map that comes to show it while the edit runs
// (here: saved between the edit's read of the dataset's row and its
// writes) has the dataset's count after the edit in its search entry, as
// it would if the edit had looked for the maps under their lock. And the
// edit's rows, read from the table the dataset had at its last edit on
// the server, are read again when another server replaced the table
// meanwhile.
func TestEditWhileAMapComes(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db, other := pgtest.OpenURL(t, url), pgtest.OpenURL(t, url)
	s := db.Services()
	conn := rawConn(t, url)
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, numbered(10)); err != nil {
		t.Fatal(err)
	}
	add := &mapcommons.Edits{Adds: []mapcommons.Feature{{Values: []any{int64(99)}, Geometry: wkb.AppendPoint(nil, 5, 5)}}}
	var m *mapcommons.Map
	var once sync.Once
	postgres.SetAfterEditRead(t, func() {
		once.Do(func() {
			m = &mapcommons.Map{Title: "Comes", Basemap: "Acetate", Projection: mapcommons.ProjectionMercator,
				Layers: []mapcommons.Layer{{Source: "finder:" + strconv.FormatInt(ds.ID, 10), Visible: true, Opacity: 1}}}
			if err := other.Services().Maps.CreateMap(ctx, m); err != nil {
				t.Error(err)
			}
		})
	})
	if _, err := s.Features.ApplyEdits(ctx, ds.ID, add); err != nil {
		t.Fatal(err)
	}
	if m == nil {
		t.Fatal("no map was made during the edit")
	}
	var count int64
	if err := conn.QueryRow(ctx, `SELECT feature_count FROM search_docs WHERE docid = $1`, 2*m.ID+1).Scan(&count); err != nil || count != 11 {
		t.Fatalf("the map's search entry counts %d features (%v), want the 11 after the edit", count, err)
	}

	// Another server replaces the features: the table this one edited
	// is gone.
	postgres.SetAfterEditRead(t, nil)
	before, _, err := postgres.TableAndHoles(ctx, db, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Services().Datasets.ReplaceFeatures(ctx, ds.ID, numbered(20)); err != nil {
		t.Fatal(err)
	}
	if after, _, err := postgres.TableAndHoles(ctx, db, ds.ID); err != nil || after == before {
		t.Fatalf("the replace kept the table %s (%v)", after, err)
	}
	var ids []int64
	if err := s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: 2}, func(f *mapcommons.Feature) error {
		ids = append(ids, f.ID)
		return nil
	}); err != nil || len(ids) != 2 {
		t.Fatal(ids, err)
	}
	up := &mapcommons.Edits{Updates: []mapcommons.Feature{{ID: ids[0], Values: []any{int64(-15)}, Geometry: wkb.AppendPoint(nil, 7, 7)}},
		Deletes: []int64{ids[1]}}
	if _, err := s.Features.ApplyEdits(ctx, ds.ID, up); err != nil {
		t.Fatalf("an edit after another server replaced the table: %v", err)
	}
	n, k := int64(0), 0
	if err := s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
		k++
		if f.ID == ids[0] {
			n = f.Values[0].(int64)
		}
		if f.ID == ids[1] {
			t.Errorf("feature %d is still there", f.ID)
		}
		return nil
	}); err != nil || n != -15 || k != 19 {
		t.Fatalf("feature %d has n %d, %d features (%v); want -15, 19", ids[0], n, k, err)
	}
}
