package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"mapcommons"
	"mapcommons/internal/pgtest"
	"mapcommons/storetest"
)

// TestMapDocsRace: a dataset made private through one server while a map
// gains a layer of it through another. Whichever commits first, the map's
// search entry ends as a fresh computation would write it: it does not
// keep the dataset's count (nor extent) once only its owner may see it.
func TestMapDocsRace(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, b := pgtest.OpenURL(t, url).Services(), pgtest.OpenURL(t, url).Services()
	conn := rawConn(t, url)
	ann := storetest.MustCreateUser(t, a, "ann", false)
	everyone := []mapcommons.Permission{{Group: mapcommons.GroupEveryone, View: true}}
	private := []mapcommons.Permission{}
	entry := func(id int64) (n int64) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT feature_count FROM search_docs WHERE docid = $1`, 2*id+1).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := range 40 {
		ds := storetest.MustCreateDataset(t, a, ann.ID, "Depths", "", "", 4, 52)
		if _, err := a.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Permissions: &everyone}); err != nil {
			t.Fatal(err)
		}
		m := &mapcommons.Map{OwnerID: ann.ID, Title: "Map", Basemap: "Acetate", Projection: mapcommons.ProjectionMercator, Permissions: everyone}
		if err := b.Maps.CreateMap(ctx, m); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := a.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Permissions: &private}); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := b.Maps.UpdateMap(ctx, m.ID, func(m *mapcommons.Map) error {
				m.Layers = append(m.Layers, mapcommons.Layer{Source: fmt.Sprintf("finder:%d", ds.ID)})
				return nil
			}); err != nil {
				t.Error(err)
			}
		}()
		wg.Wait()
		got := entry(m.ID)
		// The entry written afresh.
		if _, err := b.Maps.UpdateMap(ctx, m.ID, func(*mapcommons.Map) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if want := entry(m.ID); got != want {
			t.Fatalf("round %d: the map's entry counts %d features, written afresh %d: the private dataset's count stayed", i, got, want)
		}
	}
}
