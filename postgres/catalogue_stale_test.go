package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/format/geojson"
	"mapcommons/format/wkb"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// TestTrustedRowNotMixedWithNewFeatures: a row trusted without its
// stamp (an anonymous read, within MaxCatalogueLag of the last beat) is
// an older dataset than the one the read of its features finds in its
// own snapshot: the API encodes the new features with the old
// attributes (api: geojson.Keys(ds.Attributes), mvt's AddLayer(…,
// ds.Attributes, …)), here a text value read as an integer — a panic
// (the request's 500) or garbage, and the answer is cached under the old
// version's key for the other stale readers. The catalogue being "a
// moment old" was meant to give an older answer, not a mixture.
func TestTrustedRowNotMixedWithNewFeatures(t *testing.T) {
	ctx := context.Background()
	recent := mapcommons.WithRecentCatalogue(ctx)
	url := pgtest.URL(t)
	writer, reader := pgtest.OpenURL(t, url), pgtest.OpenURL(t, url)
	base := time.Now()
	reader.Now = func() time.Time { return base } // within the bound throughout
	ws, rs := writer.Services(), reader.Services()
	v1 := &storetest.SliceSource{Attrs: []mapcommons.Attribute{{Name: "n", Type: mapcommons.AttrInteger}}}
	for i := range 3 {
		v1.Features = append(v1.Features, mapcommons.Feature{Values: []any{int64(i)}, Geometry: wkb.AppendPoint(nil, float64(i), 1)})
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := ws.Datasets.CreateDataset(ctx, ds, v1); err != nil {
		t.Fatal(err)
	}
	untilTrusted(t, reader, ds.ID)
	// The listener is slow to hear the next change (within the bound).
	postgres.StallListener(reader, true)
	v2 := &storetest.SliceSource{Attrs: []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}}}
	for i := range 3 {
		v2.Features = append(v2.Features, mapcommons.Feature{Values: []any{fmt.Sprint("x", i)}, Geometry: wkb.AppendPoint(nil, float64(i), 1)})
	}
	if _, err := ws.Datasets.ReplaceFeatures(ctx, ds.ID, v2); err != nil {
		t.Fatal(err)
	}
	// What an anonymous GET of features.geojson does: the dataset, then
	// its features encoded with its attributes.
	got, err := rs.Datasets.FindDatasetByID(recent, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	keys := geojson.Keys(got.Attributes)
	var out []byte
	var crash any
	err = rs.Features.ScanFeatures(recent, ds.ID, &mapcommons.FeatureQuery{Limit: -1, Lazy: true}, func(f *mapcommons.Feature) error {
		defer func() {
			if v := recover(); v != nil && crash == nil {
				crash = v
			}
		}()
		out = geojson.AppendFeatureMembers(append(out, '{'), keys, got.Attributes, f)
		out = append(out, '}')
		return nil
	})
	if errors.Is(err, mapcommons.ErrCatalogueMoved) && len(out) == 0 {
		// Refused before any feature: the server runs the request again
		// without the mark, and then sees the replace.
		plain := mapcommons.WithoutRecentCatalogue(recent)
		if got, err = rs.Datasets.FindDatasetByID(plain, ds.ID); err != nil {
			t.Fatal(err)
		}
		if got.Version != postgres.RowVersion(t, writer, ds.ID) || got.Attributes[0].Name != "name" {
			t.Fatalf("again without the mark: version %d, attributes %v", got.Version, got.Attributes)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if crash != nil || got.Version < postgres.RowVersion(t, writer, ds.ID) {
		t.Fatalf("dataset version %d (attributes %v) with the features of the replace: panic %v; encoded %s",
			got.Version, got.Attributes, crash, out)
	}
}

// TestOwnWriteSeenByOwnAnonymousReads: a server's catalogue keeps, for its
// anonymous reads, the row its own write just replaced until the
// notification of that write comes back from the database (the listener
// is made slow here, as a loaded server's is): the server knows at its
// commit which rows it changed (pipeTx.seen) but does not drop them.
// Fixed: a commit makes the listener wait for a beat sent after it.
func TestOwnWriteSeenByOwnAnonymousReads(t *testing.T) {
	ctx := context.Background()
	recent := mapcommons.WithRecentCatalogue(ctx)
	db := pgtest.Open(t)
	base := time.Now()
	db.Now = func() time.Time { return base }
	s := db.Services()
	ds := &mapcommons.Dataset{Metadata: mapcommons.Metadata{Title: "t0"}}
	if err := s.Datasets.CreateDataset(ctx, ds, storetest.SampleSource(3)); err != nil {
		t.Fatal(err)
	}
	untilTrusted(t, db, ds.ID)
	postgres.StallListener(db, true)
	title := "t1"
	if _, err := s.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Datasets.FindDatasetByID(recent, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Metadata.Title != "t1" {
		t.Fatalf("the server's own committed write: its next anonymous read has title %q, version %d", got.Metadata.Title, got.Version)
	}
}

// TestTrustedRowNeverLeaksUnsharedFeatures: the mixture's
// confidentiality side. An owner unshares a dataset and then replaces
// its features with data never shared; an anonymous read within the
// catalogue's lag is authorized against the old row (shared with
// everyone: Policy.CanDownloadDataset(nil, ds) passes on an appliance)
// and reads the new features — data that was never public at any moment.
// "A catalogue a moment old" promised at most what was public a moment
// ago.
func TestTrustedRowNeverLeaksUnsharedFeatures(t *testing.T) {
	ctx := context.Background()
	recent := mapcommons.WithRecentCatalogue(ctx)
	url := pgtest.URL(t)
	writer, reader := pgtest.OpenURL(t, url), pgtest.OpenURL(t, url)
	base := time.Now()
	reader.Now = func() time.Time { return base }
	ws, rs := writer.Services(), reader.Services()
	attrs := []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}}
	public := &storetest.SliceSource{Attrs: attrs, Features: []mapcommons.Feature{{Values: []any{"public"}, Geometry: wkb.AppendPoint(nil, 1, 1)}}}
	ds := &mapcommons.Dataset{Type: "csv", Permissions: []mapcommons.Permission{{Group: mapcommons.GroupEveryone, View: true, Download: true}}}
	if err := ws.Datasets.CreateDataset(ctx, ds, public); err != nil {
		t.Fatal(err)
	}
	untilTrusted(t, reader, ds.ID)
	postgres.StallListener(reader, true)
	none := []mapcommons.Permission{}
	if _, err := ws.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Permissions: &none}); err != nil {
		t.Fatal(err)
	}
	secret := &storetest.SliceSource{Attrs: attrs, Features: []mapcommons.Feature{{Values: []any{"secret"}, Geometry: wkb.AppendPoint(nil, 1, 1)}}}
	if _, err := ws.Datasets.ReplaceFeatures(ctx, ds.ID, secret); err != nil {
		t.Fatal(err)
	}
	got, err := rs.Datasets.FindDatasetByID(recent, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	policy := mapcommons.Policy{Mode: mapcommons.ModeAppliance}
	if policy.CanDownloadDataset(nil, got) != nil {
		return // refused: nothing leaks
	}
	var names []any
	if err := rs.Features.ScanFeatures(recent, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
		names = append(names, f.Values...)
		return nil
	}); errors.Is(err, mapcommons.ErrCatalogueMoved) && len(names) == 0 {
		return // refused before any feature
	} else if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n == "secret" {
			t.Fatalf("an anonymous read authorized by version %d (shared with everyone) reads features %v, written after the dataset was unshared", got.Version, names)
		}
	}
}

// untilTrusted waits until db answers an anonymous find of dataset id
// from memory, without the stamp (its listener has heard a beat).
func untilTrusted(t *testing.T, db *postgres.DB, id int64) {
	t.Helper()
	recent := mapcommons.WithRecentCatalogue(context.Background())
	eventually(t, "a trusted find", func() bool {
		n := postgres.CatalogueTrusted(db)
		if _, err := db.Services().Datasets.FindDatasetByID(recent, id); err != nil {
			t.Fatal(err)
		}
		return postgres.CatalogueTrusted(db) > n
	})
}

// TestOwnWriteReadInOneRoundTrip checks that the dataset rows a server's
// write held are not kept by its catalogue cache past the commit: the
// next find reads the row whole, in one round trip, rather than its stamp
// (which differs) and then the row, even while the write's notification
// has not come back (the listener stalled here).
func TestOwnWriteReadInOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t)
	s := db.Services()
	ds := storetest.MustCreateDataset(t, s, 0, "Before", "", "", 1, 1)
	if _, err := s.Datasets.FindDatasetByID(ctx, ds.ID); err != nil {
		t.Fatal(err)
	}
	postgres.StallListener(db, true)
	defer postgres.StallListener(db, false)
	for _, write := range []func() error{
		func() error {
			title := "After"
			_, err := s.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Title: &title})
			return err
		},
		func() error {
			_, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Adds: []mapcommons.Feature{{Values: make([]any, len(ds.Attributes)), Geometry: wkb.AppendPoint(nil, 1, 2)}}})
			return err
		},
	} {
		if _, err := s.Datasets.FindDatasetByID(ctx, ds.ID); err != nil { // cached
			t.Fatal(err)
		}
		if err := write(); err != nil {
			t.Fatal(err)
		}
		stamps := postgres.CatalogueStamps(db)
		got, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n := postgres.CatalogueStamps(db) - stamps; n != 0 {
			t.Errorf("the find after the server's own write read a stamp (%d) before the row", n)
		}
		if got.Title != "After" {
			t.Errorf("title %q after the write", got.Title)
		}
	}
}
