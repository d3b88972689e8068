package postgres_test

import (
	"context"
	"reflect"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// TestCatalogueSeesEveryChange: a server's catalogue cache answers a
// dataset it read before while the row is as it was, and shows every
// change made since by another server — those that move the version and
// those that do not (a group's deletion strips its sharing entries, an
// owner's deletion, a statement outside the store) — and a deletion.
func TestCatalogueSeesEveryChange(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	writer, reader := pgtest.OpenURL(t, url), pgtest.OpenURL(t, url)
	ws, rs := writer.Services(), reader.Services()
	owner := &mapcommons.User{Login: "owner", Email: "o@example.org", PasswordHash: "x"}
	if err := ws.Users.CreateUser(ctx, owner); err != nil {
		t.Fatal(err)
	}
	g := &mapcommons.UserGroup{Name: "readers"}
	if err := ws.Groups.CreateGroup(ctx, g); err != nil {
		t.Fatal(err)
	}
	ds := &mapcommons.Dataset{OwnerID: owner.ID, Metadata: mapcommons.Metadata{Title: "first"},
		Permissions: []mapcommons.Permission{{Group: strconv.FormatInt(g.ID, 10), View: true}}}
	if err := ws.Datasets.CreateDataset(ctx, ds, storetest.SampleSource(3)); err != nil {
		t.Fatal(err)
	}
	find := func() *mapcommons.Dataset {
		t.Helper()
		got, err := rs.Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// fresh is the row as a server without the cache reads it.
	fresh := func() *mapcommons.Dataset {
		t.Helper()
		got, err := pgtest.OpenURL(t, url).Services().Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	same := func(what string) {
		t.Helper()
		hits := postgres.CatalogueHits(reader)
		got, want := find(), fresh()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the reader's row\n%+v\nthe database's\n%+v", what, got, want)
		}
		if got2 := find(); !reflect.DeepEqual(got2, want) || postgres.CatalogueHits(reader) <= hits {
			t.Fatalf("%s: the unchanged row again is not the cached one (hits %d, then %d)", what, hits, postgres.CatalogueHits(reader))
		}
	}
	same("created")
	if find().Metadata.Title != "first" || find().Owner != "owner" {
		t.Fatalf("created: %+v", find())
	}

	title := "second"
	if _, err := ws.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if got := find(); got.Metadata.Title != "second" {
		t.Fatalf("after the update, title %q", got.Metadata.Title)
	}
	same("updated")

	// Deleting the group strips its entry without a new version.
	version := find().Version
	if err := ws.Groups.DeleteGroup(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	if got := find(); len(got.Permissions) != 0 || got.Version != version {
		t.Fatalf("after the group's deletion: permissions %v, version %d (was %d)", got.Permissions, got.Version, version)
	}
	same("group deleted")

	// A statement of no store's.
	if _, err := rawConn(t, url).Exec(ctx, `UPDATE datasets SET title = 'third' WHERE id = $1`, ds.ID); err != nil {
		t.Fatal(err)
	}
	if got := find(); got.Metadata.Title != "third" {
		t.Fatalf("after a raw update, title %q", got.Metadata.Title)
	}
	same("raw update")

	// The owner's deletion leaves the dataset without an owner.
	if err := ws.Users.DeleteUser(ctx, owner.ID); err != nil {
		t.Fatal(err)
	}
	if got := find(); got.OwnerID != 0 || got.Owner != "" {
		t.Fatalf("after the owner's deletion: owner %d %q", got.OwnerID, got.Owner)
	}
	same("owner deleted")

	if err := ws.Datasets.DeleteDataset(ctx, ds.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Datasets.FindDatasetByID(ctx, ds.ID); mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
		t.Fatalf("after the deletion: %v", err)
	}
}

// TestCatalogueListens: reads that may see a recent catalogue
// (mapcommons.WithRecentCatalogue) are answered from memory while the
// listener hears its beats, see another server's change once its
// notification comes, and stop trusting memory when the listener stops
// hearing: a listener that hangs is distrusted once its last beat heard
// is older than mapcommons.MaxCatalogueLag (the store's clock moved past
// it here), and one whose connection is cut is not trusted until it
// listens again, having forgotten what it might have missed.
func TestCatalogueListens(t *testing.T) {
	ctx := context.Background()
	recent := mapcommons.WithRecentCatalogue(ctx)
	url := pgtest.URL(t)
	writer, reader := pgtest.OpenURL(t, url), pgtest.OpenURL(t, url)
	var offset atomic.Int64 // the reader's clock, moved by the test
	base := time.Now()
	reader.Now = func() time.Time { return base.Add(time.Duration(offset.Load())) }
	ws, rs := writer.Services(), reader.Services()
	ds := &mapcommons.Dataset{Metadata: mapcommons.Metadata{Title: "t0"}}
	if err := ws.Datasets.CreateDataset(ctx, ds, storetest.SampleSource(3)); err != nil {
		t.Fatal(err)
	}
	title := func() string {
		t.Helper()
		got, err := rs.Datasets.FindDatasetByID(recent, ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Metadata.Title
	}
	retitle := func(s string) {
		t.Helper()
		if _, err := ws.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Title: &s}); err != nil {
			t.Fatal(err)
		}
	}
	trustedFind := func(what string) string {
		t.Helper()
		var got string
		eventually(t, what, func() bool {
			n := postgres.CatalogueTrusted(reader)
			got = title()
			return postgres.CatalogueTrusted(reader) > n
		})
		return got
	}
	if got := trustedFind("a trusted find"); got != "t0" {
		t.Fatalf("trusted find: %q", got)
	}
	retitle("t1")
	eventually(t, "the change heard", func() bool { return title() == "t1" })
	if got := trustedFind("trusted after the change"); got != "t1" {
		t.Fatalf("trusted find after the change: %q", got)
	}

	// A listener that hears nothing more is trusted within the bound
	// (the clock has not moved), and not past it.
	postgres.StallListener(reader, true)
	retitle("t2")
	offset.Add(int64(mapcommons.MaxCatalogueLag + time.Millisecond))
	n := postgres.CatalogueTrusted(reader)
	if got := title(); got != "t2" || postgres.CatalogueTrusted(reader) != n {
		t.Fatalf("past the bound, with a stalled listener: %q, trusted %d times more", got, postgres.CatalogueTrusted(reader)-n)
	}
	postgres.StallListener(reader, false)
	if got := trustedFind("trusted once beats are heard again"); got != "t2" {
		t.Fatalf("after the stall: %q", got)
	}

	// A listener whose connection is cut: past the bound, changes made
	// before it listens again are seen by every find.
	conn := rawConn(t, url)
	if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN mapcommons_catalogue' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	retitle("t3")
	offset.Add(int64(mapcommons.MaxCatalogueLag + time.Millisecond))
	eventually(t, "the listener back", func() bool {
		if got := title(); got != "t3" {
			t.Fatalf("after the listener's connection was cut: %q", got)
		}
		n := postgres.CatalogueTrusted(reader)
		title()
		return postgres.CatalogueTrusted(reader) > n
	})
	retitle("t4")
	eventually(t, "a change heard by the listener that came back", func() bool { return title() == "t4" })
}
