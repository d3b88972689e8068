package api_test

import (
	"net/http"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// TestOGCReadableNames: a collection is listed by a name a person reads,
// made of its title and its number; that name, any name of it since its
// title changed, and the number all find it; the tiles' layer is named as
// the tiles' path names the collection.
func TestOGCReadableNames(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "?title=North%20Carolina%20Counties")
	name := "north_carolina_counties-" + id

	colls := decode[struct{ Collections []struct{ ID, Title string } }](t, must(t, ts.get("/ogc/collections", ""), 200)).Collections
	if len(colls) != 1 || colls[0].ID != name || colls[0].Title != "North Carolina Counties" {
		t.Fatalf("collections %+v, want %s", colls, name)
	}
	byName := must(t, ts.get("/ogc/collections/"+name, ""), 200)
	if got := decode[struct{ ID string }](t, byName).ID; got != name {
		t.Errorf("by name: id %q", got)
	}
	if got := decode[struct{ ID string }](t, must(t, ts.get("/ogc/collections/"+id, ""), 200)).ID; got != name {
		t.Errorf("by number: id %q, want the name %s", got, name)
	}
	if n := len(items(t, ts, "/ogc/collections/"+name+"/items?limit=1000", "").Features); n != 100 {
		t.Errorf("items by name: %d", n)
	}

	// A new title: a new name, and the old one still finds it.
	must(t, ts.do(req{method: "PUT", path: "/datasets/" + id + ".json", user: "alice", ctype: "application/json", body: []byte(`{"title":"Counties of NC"}`)}), 201)
	renamed := "counties_of_nc-" + id
	colls = decode[struct{ Collections []struct{ ID, Title string } }](t, must(t, ts.get("/ogc/collections", ""), 200)).Collections
	if len(colls) != 1 || colls[0].ID != renamed {
		t.Errorf("after the new title: %+v, want %s", colls, renamed)
	}
	for _, p := range []string{name, renamed, id} {
		if got := decode[struct{ ID string }](t, must(t, ts.get("/ogc/collections/"+p, ""), 200)).ID; got != renamed {
			t.Errorf("%s: id %q, want %s", p, got, renamed)
		}
	}

	// What is no name of it is a missing collection, as a missing number is.
	for _, p := range []string{"North_Carolina-" + id, "nc-0" + id, "a-b-" + id, "nc-" + id + "x", "nc-", "-" + id, "nc-999999", "n%20c-" + id} {
		w := ts.get("/ogc/collections/"+p, "")
		if m := decode[map[string]any](t, must(t, w, 404)); m["code"] != mapcommons.ENOTFOUND {
			t.Errorf("%s: %v", p, m)
		}
	}

	// The tiles' layer has the name the tiles' path gives, and their
	// TileJSON says so: a style that names both keeps working.
	for _, p := range []string{renamed, name, id} {
		getTile(t, ts, p, 0, 0, 0, "") // (checks the one layer's name)
		tj := decode[struct {
			Tiles        []string
			VectorLayers []struct{ ID string } `json:"vector_layers"`
		}](t, must(t, ts.get("/ogc/collections/"+p+"/tiles/WebMercatorQuad/tilejson", ""), 200))
		if len(tj.VectorLayers) != 1 || tj.VectorLayers[0].ID != p || len(tj.Tiles) != 1 || pathOf(t, tj.Tiles[0]) != "/ogc/collections/"+p+"/tiles/WebMercatorQuad/{z}/{y}/{x}" {
			t.Errorf("%s: TileJSON %+v", p, tj)
		}
	}
}

// TestOGCReadableNamesPrivate: a private collection's name finds nothing
// for those who may not view it, with the same answer as a missing one.
func TestOGCReadableNamesPrivate(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	id := uploadNC(t, ts, "") // private to alice on an appliance
	for _, who := range []string{"", "bob"} {
		want := ts.get("/ogc/collections/999999", who)
		for _, p := range []string{"nc-" + id, "other-" + id} {
			w := ts.get("/ogc/collections/"+p, who)
			if w.Code != want.Code || w.Code == http.StatusOK {
				t.Errorf("%q on %s: %d, a missing one %d", who, p, w.Code, want.Code)
			}
		}
	}
	if got := decode[struct{ ID string }](t, must(t, ts.get("/ogc/collections/nc-"+id, "alice"), 200)).ID; got != "nc-"+id {
		t.Errorf("alice: %q", got)
	}
}
