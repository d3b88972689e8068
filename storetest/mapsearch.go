package storetest

// The contract of maps' search entries: an entry shows a layer's dataset
// (its extent, its feature count) only when everyone who may see the map
// may see the dataset (mapcommons.MapSearchShows), a private dataset and
// an id that does not exist look the same, and every change the rule
// depends on (the dataset's sharing list, data and existence, the owner's
// groups and administrator flag, a group deleted) shows in the next search.

import (
	"context"
	"fmt"
	"testing"

	"mapcommons"
)

// mapEntry returns the search entry of map id.
func mapEntry(t *testing.T, s mapcommons.Services, id int64) *mapcommons.SearchResult {
	t.Helper()
	res, _ := MustSearch(t, s, "", func(f *mapcommons.SearchFilter) { f.Model = mapcommons.ModelMap })
	for _, r := range res {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("map %d has no search entry", id)
	return nil
}

// wantEntry checks the extent and feature count of map m's entry.
func wantEntry(t *testing.T, s mapcommons.Services, what string, m *mapcommons.Map, want mapcommons.BBox, count int64) {
	t.Helper()
	r := mapEntry(t, s, m.ID)
	if r.Extent == nil || *r.Extent != want || r.FeatureCount != count {
		t.Fatalf("%s: map %q shows %+v, %d features; want %+v, %d", what, m.Title, r.Extent, r.FeatureCount, want, count)
	}
}

func finder(id int64) mapcommons.Layer { return mapcommons.Layer{Source: fmt.Sprintf("finder:%d", id)} }

func testMapSearchEntries(t *testing.T, open Opener) {
	ctx := context.Background()
	world := mapcommons.BBox{W: -180, S: -85, E: 180, N: 85}
	box := func(w, s, e, n float64) mapcommons.BBox { return mapcommons.BBox{W: w, S: s, E: e, N: n} }
	everyone := []mapcommons.Permission{{Group: mapcommons.GroupEveryone, View: true}}
	newMap := func(t *testing.T, s mapcommons.Services, owner int64, title string, perms []mapcommons.Permission, layers ...mapcommons.Layer) *mapcommons.Map {
		m := &mapcommons.Map{OwnerID: owner, Title: title, Basemap: "Acetate", Projection: mapcommons.ProjectionMercator,
			Permissions: perms, Layers: layers}
		if err := s.Maps.CreateMap(ctx, m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	share := func(t *testing.T, s mapcommons.Services, ds *mapcommons.Dataset, perms []mapcommons.Permission) {
		if _, err := s.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Permissions: &perms}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("PrivateAndMissingLookTheSame", func(t *testing.T) {
		s := open(t)
		ann := MustCreateUser(t, s, "ann", false)
		bob := MustCreateUser(t, s, "bob", false)
		pub := MustCreateDataset(t, s, ann.ID, "Public", "", "", 10, 10)
		share(t, s, pub, everyone)
		secret := MustCreateDataset(t, s, bob.ID, "Secret", "", "", 50, 50, 51, 51, 52, 52)
		missing := secret.ID + 1000
		onSecret := newMap(t, s, ann.ID, "On the secret", everyone, finder(pub.ID), finder(secret.ID))
		onNothing := newMap(t, s, ann.ID, "On nothing", everyone, finder(pub.ID), finder(missing))
		wantEntry(t, s, "a private dataset", onSecret, box(10, 10, 10, 10), 1)
		wantEntry(t, s, "a missing dataset", onNothing, box(10, 10, 10, 10), 1)
		a, b := *mapEntry(t, s, onSecret.ID), *mapEntry(t, s, onNothing.ID)
		if *a.Extent != *b.Extent || a.FeatureCount != b.FeatureCount {
			t.Fatalf("a private and a missing dataset differ: %+v, %+v", a, b)
		}
		// Alone on a shared map, the secret gives it nothing: the world, no features.
		alone := newMap(t, s, ann.ID, "Alone", everyone, finder(secret.ID))
		wantEntry(t, s, "only a private dataset", alone, world, 0)
		// On its owner's private map it shows.
		own := newMap(t, s, bob.ID, "Bob's own", nil, finder(secret.ID))
		wantEntry(t, s, "the owner's private map", own, box(50, 50, 52, 52), 3)
		// A map private to someone else shows nothing either.
		annPrivate := newMap(t, s, ann.ID, "Ann's private", nil, finder(secret.ID))
		wantEntry(t, s, "another owner's private map", annPrivate, world, 0)

		// Shared with everyone, the secret shows; unshared, it goes again.
		share(t, s, secret, everyone)
		wantEntry(t, s, "shared with everyone", onSecret, box(10, 10, 52, 52), 4)
		wantEntry(t, s, "shared with everyone", annPrivate, box(50, 50, 52, 52), 3)
		share(t, s, secret, nil)
		wantEntry(t, s, "private again", onSecret, box(10, 10, 10, 10), 1)
		wantEntry(t, s, "private again", annPrivate, world, 0)

		// New data moves the entries that show it, not those that do not.
		if _, err := s.Features.AddFeatures(ctx, secret.ID, PointsSource(60, 60)); err != nil {
			t.Fatal(err)
		}
		wantEntry(t, s, "features added", own, box(50, 50, 60, 60), 4)
		wantEntry(t, s, "features added", onSecret, box(10, 10, 10, 10), 1)
		if _, err := s.Datasets.ReplaceFeatures(ctx, secret.ID, PointsSource(-5, -5)); err != nil {
			t.Fatal(err)
		}
		wantEntry(t, s, "features replaced", own, box(-5, -5, -5, -5), 1)
		wantEntry(t, s, "features replaced", onSecret, box(10, 10, 10, 10), 1)
		// Deleted, it shows nowhere.
		if err := s.Datasets.DeleteDataset(ctx, secret.ID); err != nil {
			t.Fatal(err)
		}
		wantEntry(t, s, "dataset deleted", own, world, 0)
	})

	t.Run("Groups", func(t *testing.T) {
		s := open(t)
		ann := MustCreateUser(t, s, "ann", false)
		bob := MustCreateUser(t, s, "bob", false)
		g := MustCreateGroup(t, s, "team")
		h := MustCreateGroup(t, s, "others")
		MustAddMember(t, s, g, bob)
		team := MustCreateDataset(t, s, bob.ID, "Team data", "", "", 20, 20)
		share(t, s, team, []mapcommons.Permission{{Group: fmt.Sprint(g.ID), View: true}})
		gID, hID := fmt.Sprint(g.ID), fmt.Sprint(h.ID)
		forTeam := newMap(t, s, bob.ID, "For the team", []mapcommons.Permission{{Group: gID, Download: true}}, finder(team.ID))
		forOthers := newMap(t, s, bob.ID, "For others", []mapcommons.Permission{{Group: hID, View: true}}, finder(team.ID))
		forAll := newMap(t, s, bob.ID, "For all", everyone, finder(team.ID))
		wantEntry(t, s, "a map for the dataset's group", forTeam, box(20, 20, 20, 20), 1)
		wantEntry(t, s, "a map for another group", forOthers, world, 0)
		wantEntry(t, s, "a map for everyone", forAll, world, 0)

		// The owner of a private map sees through their groups.
		annMap := newMap(t, s, ann.ID, "Ann's", nil, finder(team.ID))
		wantEntry(t, s, "owner outside the group", annMap, world, 0)
		MustAddMember(t, s, g, ann)
		wantEntry(t, s, "owner joined the group", annMap, box(20, 20, 20, 20), 1)
		if err := s.Groups.RemoveGroupMember(ctx, g.ID, ann.ID); err != nil {
			t.Fatal(err)
		}
		wantEntry(t, s, "owner left the group", annMap, world, 0)
		// An administrator sees everything.
		yes, no := true, false
		if _, err := s.Users.UpdateUser(ctx, ann.ID, mapcommons.UserUpdate{Admin: &yes}); err != nil {
			t.Fatal(err)
		}
		wantEntry(t, s, "owner made administrator", annMap, box(20, 20, 20, 20), 1)
		if _, err := s.Users.UpdateUser(ctx, ann.ID, mapcommons.UserUpdate{Admin: &no}); err != nil {
			t.Fatal(err)
		}
		wantEntry(t, s, "owner no longer administrator", annMap, world, 0)

		// The group gone, its entries go from both lists; ann, back in it
		// and with a private map, loses what it gave her.
		MustAddMember(t, s, g, ann)
		wantEntry(t, s, "owner back in the group", annMap, box(20, 20, 20, 20), 1)
		if err := s.Groups.DeleteGroup(ctx, g.ID); err != nil {
			t.Fatal(err)
		}
		wantEntry(t, s, "group deleted", annMap, world, 0)
		wantEntry(t, s, "group deleted", forTeam, box(20, 20, 20, 20), 1) // private to bob now, who owns the data

		// The owner's account gone, the entry follows.
		if err := s.Users.DeleteUser(ctx, ann.ID); err != nil {
			t.Fatal(err)
		}
		if r := mapEntry(t, s, annMap.ID); r.OwnerID != 0 {
			t.Fatalf("the entry of a map whose owner is gone names owner %d", r.OwnerID)
		}
	})
}
