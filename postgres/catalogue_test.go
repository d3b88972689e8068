package postgres_test

import (
	"context"
	"reflect"
	"strconv"
	"testing"

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
