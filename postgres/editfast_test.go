package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/feature"
	"mapcommons/format/wkb"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// numbered is a source of n points, the i-th at (i, 1) with n = i.
func numbered(n int) *storetest.SliceSource {
	src := &storetest.SliceSource{Attrs: []mapcommons.Attribute{{Name: "n", Type: mapcommons.AttrInteger}}}
	for i := range n {
		src.Features = append(src.Features, mapcommons.Feature{Values: []any{int64(i)}, Geometry: wkb.AppendPoint(nil, float64(i), 1)})
	}
	return src
}

// TestFastEditContract runs the contract's parts on features that do not
// check a summary after an edit (which is extended here: made exact again
// later), the query oracle's edits among them, with every edit of a
// dataset after this server's first made in one round trip where it can
// be: they answer as the edits the long way do.
func TestFastEditContract(t *testing.T) {
	postgres.SetExactSummaryMax(t, 0)
	var stores []*postgres.DB
	storetest.RunFeatures(t, func(tb testing.TB) mapcommons.Services {
		db := pgtest.Open(tb)
		db.Now = storetest.ClockFor(tb)
		stores = append(stores, db)
		return db.Services()
	}, "Features", "FeatureIDs", "EditPatches", "EditVersion", "QueryOracle", "LongLike")
	var fast int64
	for _, db := range stores {
		f, _ := postgres.FastEdits(db)
		fast += f
	}
	if fast < 6 { // the oracle edits two datasets four times each
		t.Errorf("%d edits were made in one round trip: the contract hardly ran on them", fast)
	}
}

// TestFastEditFromAnotherServersRow checks that an edit made from the row
// this server's last edit left goes the long way whenever the row is no
// longer that: after another server's edit (the adds take the ids after
// its adds), after another server's change of the metadata (the search
// entry keeps the new title), when a map came to show the dataset (its
// entry counts the features), and that a delete of a feature that is not
// there fails as it always did, leaving everything as it was.
func TestFastEditFromAnotherServersRow(t *testing.T) {
	ctx := context.Background()
	postgres.SetExactSummaryMax(t, 10)
	url := pgtest.URL(t)
	db, other := pgtest.OpenURL(t, url), pgtest.OpenURL(t, url)
	s, o := db.Services(), other.Services()
	conn := rawConn(t, url)
	src := numbered(40)
	ds := &mapcommons.Dataset{Type: "csv", Metadata: mapcommons.Metadata{Title: "Before"}}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	add := func(s mapcommons.Services) int64 {
		t.Helper()
		res, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Adds: []mapcommons.Feature{{Values: []any{int64(7)}, Geometry: wkb.AppendPoint(nil, 3, 3)}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.AddIDs[0]
	}
	counts := func(step string, fast, missed int64) {
		t.Helper()
		if f, m := postgres.FastEdits(db); f != fast || m != missed {
			t.Fatalf("%s: %d edits in one round trip, %d that went the long way after; want %d and %d", step, f, m, fast, missed)
		}
	}
	entry := func(step, title string, count int64) {
		t.Helper()
		var gotTitle string
		var gotCount int64
		if err := conn.QueryRow(ctx, `SELECT title, feature_count FROM search_docs WHERE docid = $1`, 2*ds.ID).Scan(&gotTitle, &gotCount); err != nil {
			t.Fatal(err)
		}
		if gotTitle != title || gotCount != count {
			t.Fatalf("%s: the search entry says %q, %d features; want %q, %d", step, gotTitle, gotCount, title, count)
		}
	}

	if id := add(s); id != 41 {
		t.Fatalf("the first add took id %d", id)
	}
	if id := add(s); id != 42 {
		t.Fatalf("the second add took id %d", id)
	}
	counts("an edit after an edit", 1, 0)
	entry("an edit after an edit", "Before", 42)

	if id := add(o); id != 43 {
		t.Fatalf("the other server's add took id %d", id)
	}
	if id := add(s); id != 44 {
		t.Fatalf("an add after the other server's took id %d, want 44", id)
	}
	counts("after another server's edit", 1, 1)

	title := "Renamed"
	if _, err := o.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Deletes: []int64{3}}); err != nil {
		t.Fatal(err)
	}
	counts("after another server's change of the metadata", 1, 2)
	entry("after another server's change of the metadata", "Renamed", 43)

	// From the row the long way left: in one round trip again.
	if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Deletes: []int64{4}}); err != nil {
		t.Fatal(err)
	}
	counts("a delete after a delete", 2, 2)
	entry("a delete after a delete", "Renamed", 42)
	if _, holes, err := postgres.TableAndHoles(ctx, db, ds.ID); err != nil || !slices.Equal(holes, []int64{2, 3}) {
		t.Fatalf("holes %v (%v), want those of the features 3 and 4", holes, err)
	}

	_, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Deletes: []int64{5, 9999}})
	if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !errors.Is(err, feature.ErrMissingFeature) {
		t.Fatalf("a delete of a feature that is not there: %v", err)
	}
	counts("a delete of a feature that is not there", 2, 3)
	if got, err := s.Datasets.FindDatasetByID(ctx, ds.ID); err != nil || got.FeatureCount != 42 {
		t.Fatalf("after the failed delete the dataset counts %d features (%v), want 42", got.FeatureCount, err)
	}
	found := false
	if err := s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
		found = found || f.ID == 5
		return nil
	}); err != nil || !found {
		t.Fatalf("the failed delete took feature 5 (%v)", err)
	}

	// The long way again; then, from the row it left, an update of a
	// feature that is not there.
	if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Deletes: []int64{6}}); err != nil {
		t.Fatal(err)
	}
	counts("a delete after the failed one (the long way: the row was forgotten)", 2, 3)
	gone := &mapcommons.Edits{Updates: []mapcommons.Feature{{ID: 6, Values: []any{int64(1)}, Geometry: wkb.AppendPoint(nil, 1, 1)}}}
	if _, err := s.Features.ApplyEdits(ctx, ds.ID, gone); !errors.Is(err, feature.ErrMissingFeature) {
		t.Fatalf("an update of a feature deleted: %v", err)
	}
	counts("an update of a feature that is not there", 2, 4)
	if id := add(s); id != 45 {
		t.Fatalf("an add took id %d, want 45", id)
	}
	// 42 features after the delete of 6, and this add
	m := &mapcommons.Map{Title: "Shows", Basemap: "Acetate", Projection: mapcommons.ProjectionMercator,
		Layers: []mapcommons.Layer{{Source: "finder:" + strconv.FormatInt(ds.ID, 10), Visible: true, Opacity: 1}}}
	if err := o.Maps.CreateMap(ctx, m); err != nil {
		t.Fatal(err)
	}
	fast, missed := postgres.FastEdits(db)
	if id := add(s); id != 46 {
		t.Fatalf("an add after the map took id %d, want 46", id)
	}
	counts("an edit after a map came", fast, missed+1)
	var count int64
	if err := conn.QueryRow(ctx, `SELECT feature_count FROM search_docs WHERE docid = $1`, 2*m.ID+1).Scan(&count); err != nil || count != 43 {
		t.Fatalf("the map's search entry counts %d features (%v), want the 43 after the edit", count, err)
	}
	// A dataset a map shows goes the long way, without a try.
	add(s)
	counts("an edit of a dataset a map shows", fast, missed+1)
}

// TestHolesMigrate checks migration 0016: the holes a dataset's row kept
// as an array become rows of dataset_holes, and the features keep their
// positions.
func TestHolesMigrate(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := pgtest.OpenURL(t, url).Services()
	src := numbered(10)
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Deletes: []int64{2, 7, 5}}); err != nil {
		t.Fatal(err)
	}
	ids := func(s mapcommons.Services) (out []int64) {
		t.Helper()
		if err := s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Offset: 2, Limit: 4}, func(f *mapcommons.Feature) error {
			out = append(out, f.ID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := ids(s); !slices.Equal(got, []int64{4, 6, 8, 9}) {
		t.Fatalf("positions 2 to 5 are the features %v", got)
	}

	// The database as it was before the migration.
	conn := rawConn(t, url)
	if _, err := conn.Exec(ctx, `ALTER TABLE datasets ADD COLUMN holes bigint[] NOT NULL DEFAULT '{}';
		UPDATE datasets d SET holes = (SELECT array_agg(pos ORDER BY pos) FROM dataset_holes h WHERE h.dataset_id = d.id)
			WHERE EXISTS (SELECT 1 FROM dataset_holes h WHERE h.dataset_id = d.id);
		DROP TABLE dataset_holes;
		DELETE FROM schema_migrations WHERE name = 'migrations/0016_dataset_holes.sql'`); err != nil {
		t.Fatal(err)
	}
	db := pgtest.OpenURL(t, url)
	if !slices.Equal(db.Applied, []string{"0016_dataset_holes.sql"}) {
		t.Fatalf("applied %v", db.Applied)
	}
	if _, holes, err := postgres.TableAndHoles(ctx, db, ds.ID); err != nil || !slices.Equal(holes, []int64{1, 4, 6}) {
		t.Fatalf("holes %v (%v) after the migration", holes, err)
	}
	if got := ids(db.Services()); !slices.Equal(got, []int64{4, 6, 8, 9}) {
		t.Fatalf("after the migration, positions 2 to 5 are the features %v", got)
	}
}

// TestFastEditAfterTheTableWent checks that an edit made from the row this
// server's last edit left, whose table another server replaced (or whose
// dataset it deleted) since, goes the long way: the edit is made on the
// new table, or fails as an edit of a dataset that is not there does. Its
// statements on the old table fail before they run (their Parse), the
// transaction not begun.
func TestFastEditAfterTheTableWent(t *testing.T) {
	ctx := context.Background()
	postgres.SetExactSummaryMax(t, 10)
	url := pgtest.URL(t)
	db, other := pgtest.OpenURL(t, url), pgtest.OpenURL(t, url)
	s, o := db.Services(), other.Services()
	add := &mapcommons.Edits{Adds: []mapcommons.Feature{{Values: []any{int64(7)}, Geometry: wkb.AppendPoint(nil, 3, 3)}}}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, numbered(40)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Features.ApplyEdits(ctx, ds.ID, add); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Datasets.ReplaceFeatures(ctx, ds.ID, numbered(30)); err != nil {
		t.Fatal(err)
	}
	res, err := s.Features.ApplyEdits(ctx, ds.ID, add)
	if err != nil || res.FeatureCount != 31 {
		t.Fatalf("an edit after another server's replace: %+v, %v", res, err)
	}
	if _, missed := postgres.FastEdits(db); missed != 1 {
		t.Fatalf("%d edits went the long way after a try, want 1", missed)
	}
	if err := o.Datasets.DeleteDataset(ctx, ds.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Features.ApplyEdits(ctx, ds.ID, add); mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
		t.Fatalf("an edit after another server deleted the dataset: %v", err)
	}
}

// TestFastEditWritesWhatChanged checks what an edit made in one round trip
// writes besides the features (migration 0018): the search entry's
// count, extent and time follow the dataset's row, the extent too when an
// add goes past it; the stats are written when an add goes past them and
// stay when a delete leaves them; and the holes of a deleted dataset go
// with it (a trigger now, where a foreign key's cascade took them).
func TestFastEditWritesWhatChanged(t *testing.T) {
	ctx := context.Background()
	postgres.SetExactSummaryMax(t, 10)
	url := pgtest.URL(t)
	db := pgtest.OpenURL(t, url)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	s := db.Services()
	conn := rawConn(t, url)
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, numbered(40)); err != nil {
		t.Fatal(err)
	}
	edit := func(step string, e *mapcommons.Edits) *mapcommons.Dataset {
		t.Helper()
		now = now.Add(time.Minute)
		if _, err := s.Features.ApplyEdits(ctx, ds.ID, e); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		got, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		var count int64
		var ext [4]float64
		var updated time.Time
		if err := conn.QueryRow(ctx, `SELECT feature_count, minx, miny, maxx, maxy, updated_at FROM search_docs WHERE docid = $1`, 2*ds.ID).
			Scan(&count, &ext[0], &ext[1], &ext[2], &ext[3], &updated); err != nil {
			t.Fatal(err)
		}
		x := got.Extent
		if count != got.FeatureCount || ext != [4]float64{x.MinX, x.MinY, x.MaxX, x.MaxY} || !updated.Equal(now) || !got.UpdatedAt.Equal(now) {
			t.Fatalf("%s: the search entry has %d features, extent %v, changed at %v; the dataset %d, %+v, at %v; now %v",
				step, count, ext, updated, got.FeatureCount, *x, got.UpdatedAt, now)
		}
		return got
	}
	add := func(n int64, x, y float64) *mapcommons.Edits {
		return &mapcommons.Edits{Adds: []mapcommons.Feature{{Values: []any{n}, Geometry: wkb.AppendPoint(nil, x, y)}}}
	}
	edit("the first edit (the long way)", add(5, 2, 1))
	got := edit("an add inside", add(6, 3, 1))
	if st := got.Stats["n"]; st.Min != 0 || st.Max != 39 {
		t.Fatalf("after an add inside them the stats are %+v", st)
	}
	got = edit("an add past the extent and the stats", add(1000, 500, 7))
	if st := got.Stats["n"]; st.Min != 0 || st.Max != 1000 {
		t.Fatalf("after an add past them the stats are %+v", st)
	}
	if x := got.Extent; x.MaxX != 500 || x.MaxY != 7 {
		t.Fatalf("after an add past it the extent is %+v", *x)
	}
	got = edit("a delete", &mapcommons.Edits{Deletes: []int64{1, 2}})
	if st := got.Stats["n"]; st.Min != 0 || st.Max != 1000 || got.FeatureCount != 41 {
		t.Fatalf("after a delete the stats are %+v, %d features", st, got.FeatureCount)
	}
	if fast, missed := postgres.FastEdits(db); fast != 3 || missed != 0 {
		t.Fatalf("%d edits in one round trip, %d missed; want 3 and 0", fast, missed)
	}
	var holes int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM dataset_holes WHERE dataset_id = $1`, ds.ID).Scan(&holes); err != nil || holes != 2 {
		t.Fatalf("%d holes (%v), want 2", holes, err)
	}
	if err := s.Datasets.DeleteDataset(ctx, ds.ID); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM dataset_holes WHERE dataset_id = $1`, ds.ID).Scan(&holes); err != nil || holes != 0 {
		t.Fatalf("%d holes (%v) of the deleted dataset", holes, err)
	}
}

// TestFastEditAfterOwnWrite checks that this server's own write of a
// dataset's row after its last edit (a change of the metadata, a replace
// of the features) forgets the row that edit left: the next edit goes the
// long way at once, with no round trip refused, and the one after it is
// made in one round trip again.
func TestFastEditAfterOwnWrite(t *testing.T) {
	ctx := context.Background()
	postgres.SetExactSummaryMax(t, 10)
	db := pgtest.Open(t)
	s := db.Services()
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, numbered(40)); err != nil {
		t.Fatal(err)
	}
	add := func() {
		t.Helper()
		if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Adds: []mapcommons.Feature{{Values: []any{int64(7)}, Geometry: wkb.AppendPoint(nil, 3, 3)}}}); err != nil {
			t.Fatal(err)
		}
	}
	counts := func(step string, fast, missed int64) {
		t.Helper()
		if f, m := postgres.FastEdits(db); f != fast || m != missed {
			t.Fatalf("%s: %d edits in one round trip, %d refused; want %d and %d", step, f, m, fast, missed)
		}
	}
	add()
	add()
	counts("an edit after an edit", 1, 0)
	title := "Renamed"
	if _, err := s.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	add()
	counts("an edit after this server renamed the dataset", 1, 0)
	add()
	counts("an edit after that", 2, 0)
	if _, err := s.Datasets.ReplaceFeatures(ctx, ds.ID, numbered(30)); err != nil {
		t.Fatal(err)
	}
	add()
	counts("an edit after this server replaced the features", 2, 0)
	add()
	counts("an edit after that", 3, 0)
	got, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
	if err != nil || got.FeatureCount != 32 || got.Title != "Renamed" {
		t.Fatalf("after the edits the dataset has %d features, title %q (%v)", got.FeatureCount, got.Title, err)
	}
}
