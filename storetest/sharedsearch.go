package storetest

// Search on stores that share one database: what one store writes (a
// dataset or map created, re-shared, changed, deleted) the other's search
// finds, or hides, at once, and the entries of maps written through both
// at the same time end as the rows they describe.

import (
	"context"
	"fmt"
	"testing"

	"mapcommons"
)

// wantFound checks that a search of query through s as caller (on an
// appliance, where datasets are not public) finds exactly want.
func wantFound(t *testing.T, s mapcommons.Services, what string, caller *mapcommons.User, query string, want ...string) {
	t.Helper()
	vis := mapcommons.Policy{Mode: mapcommons.ModeAppliance}.SearchVisibility(caller)
	res, total := MustSearch(t, s, query, func(f *mapcommons.SearchFilter) { f.Visibility = vis })
	if got := keys(res); !sameSet(got, want) || total != int64(len(want)) {
		t.Fatalf("%s: search %q = %v (total %d), want %v", what, query, got, total, want)
	}
}

func testSharedSearch(t *testing.T, open TwoOpener) {
	ctx := context.Background()
	a, b := open(t)
	ann := MustCreateUser(t, a, "ann", false)
	bob := MustCreateUser(t, a, "bob", false)
	crew := MustCreateGroup(t, b, "crew")
	MustAddMember(t, b, crew, bob)
	// b reads bob as a request would: with the group a's store did not add.
	bob, err := b.Users.FindUserByID(ctx, bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	everyone := []mapcommons.Permission{{Group: mapcommons.GroupEveryone, View: true}}

	// A dataset created through a: its owner finds it through b, no one else.
	ds := MustCreateDataset(t, a, ann.ID, "Harbour depths", "Soundings", "sea, charts", 4, 52)
	wantFound(t, b, "created through a, as its owner", ann, "harbour", dsKey(ds))
	wantFound(t, b, "created through a, as anyone", nil, "harbour")
	// Shared with everyone through a: b finds it for anyone at once.
	share := func(s mapcommons.Services, perms []mapcommons.Permission) {
		t.Helper()
		if _, err := s.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Permissions: &perms}); err != nil {
			t.Fatal(err)
		}
	}
	share(a, everyone)
	wantFound(t, b, "shared through a", nil, "harbour", dsKey(ds))
	// A map created through b, shared with the crew: a finds it for bob,
	// showing the public dataset's extent and count.
	m := &mapcommons.Map{OwnerID: ann.ID, Title: "Harbour map", Basemap: "Acetate", Projection: mapcommons.ProjectionMercator,
		Layers: []mapcommons.Layer{finder(ds.ID)}, Permissions: []mapcommons.Permission{{Group: fmt.Sprint(crew.ID), View: true}}}
	if err := b.Maps.CreateMap(ctx, m); err != nil {
		t.Fatal(err)
	}
	wantFound(t, a, "a map created through b, as a member", bob, "harbour", dsKey(ds), mapKey(m))
	wantFound(t, a, "a map created through b, as anyone", nil, "harbour", dsKey(ds))
	wantEntry(t, a, "a map created through b", m, mapcommons.BBox{W: 4, S: 52, E: 4, N: 52}, 1)
	// Private again through b: a hides it from anyone, and the crew's map
	// no longer shows it.
	share(b, nil)
	wantFound(t, a, "unshared through b, as anyone", nil, "harbour")
	wantFound(t, a, "unshared through b, as a member", bob, "harbour", mapKey(m))
	wantEntry(t, a, "unshared through b", m, mapcommons.BBox{W: -180, S: -85, E: 180, N: 85}, 0)
	// Re-titled through a, found under its new title through b.
	title := "Estuary depths"
	if _, err := a.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	wantFound(t, b, "re-titled through a", ann, "title:harbour", mapKey(m))
	wantFound(t, b, "re-titled through a", ann, "estuary", dsKey(ds))

	// Re-shared and the map updated through both at once: the map's entry
	// ends as the rows it describes, whichever write came last.
	const n = 10
	atOnce(t, 2*n, func(k int) error {
		// The i-th pair: the dataset through one store, the map through
		// the other.
		i := k / 2
		if k%2 == 0 {
			perms := everyone
			if i%3 == 0 {
				perms = []mapcommons.Permission{}
			}
			_, err := either(i, a, b).Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Permissions: &perms})
			return err
		}
		_, err := either(i+1, a, b).Maps.UpdateMap(ctx, m.ID, func(m *mapcommons.Map) error {
			m.Permissions = []mapcommons.Permission{{Group: fmt.Sprint(crew.ID), View: i%2 == 0, Download: i%2 == 1}}
			return nil
		})
		return err
	})
	gotMap, err := b.Maps.FindMapByID(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	gotDS, err := a.Datasets.FindDatasetByID(ctx, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := a.Users.FindUserByID(ctx, ann.ID)
	if err != nil {
		t.Fatal(err)
	}
	doc := mapcommons.MapSearchDocument(gotMap, owner, func(id int64) *mapcommons.Dataset {
		if id == gotDS.ID {
			return gotDS
		}
		return nil
	})
	for _, s := range []mapcommons.Services{a, b} {
		wantEntry(t, s, "after concurrent writes", m, doc.Extent, doc.FeatureCount)
	}
	// Deleted through a, gone from b's search.
	if err := a.Maps.DeleteMap(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.Datasets.DeleteDataset(ctx, ds.ID); err != nil {
		t.Fatal(err)
	}
	wantFound(t, b, "deleted through a", ann, "")
}
