package api_test

import (
	"net/http"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// TestMapSearchEntryHidesPrivateData: on an appliance, a map whose layer
// names another user's private dataset tells its maker nothing of it in
// search (neither its extent nor its feature count), and looks exactly as
// a map on an id that does not exist. Shared with the map's audience, the
// dataset shows.
func TestMapSearchEntryHidesPrivateData(t *testing.T) {
	t.Parallel()
	fx := newSearchFixture(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	ts := fx.ts
	secret := fx.dataset("bob", "Secret stations", "", "", 50, 50, 51, 52, 53, 54)
	newMap := func(title, source string) string {
		w := ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: form, body: []byte("title=" + title + "&basemap=Acetate")})
		must(t, w, http.StatusCreated)
		path := strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
		must(t, ts.do(req{method: "POST", path: path + "/layers.json", user: "alice", ctype: form, body: []byte("source=" + source)}), http.StatusCreated)
		return path
	}
	newMap("Finder", "finder:"+itoa(secret.ID))
	newMap("Nothing", "finder:"+itoa(secret.ID+1000))
	entry := func(title string) map[string]any {
		doc := decode[map[string]any](t, must(t, ts.get("/search.json?model=Map&query=title:"+title, "alice"), 200))
		entries := doc["entries"].([]any)
		if len(entries) != 1 {
			t.Fatalf("search for map %q: %v", title, doc)
		}
		return entries[0].(map[string]any)
	}
	finder, nothing := entry("Finder"), entry("Nothing")
	if finder["bbox"] != "-180,-85,180,85" || finder["feature_count"] != 0.0 {
		t.Errorf("the map on a private dataset shows bbox %v and %v features", finder["bbox"], finder["feature_count"])
	}
	if finder["bbox"] != nothing["bbox"] || finder["feature_count"] != nothing["feature_count"] {
		t.Errorf("a private dataset (%v, %v) and a missing one (%v, %v) differ", finder["bbox"], finder["feature_count"],
			nothing["bbox"], nothing["feature_count"])
	}
	// Shared with everyone (who may see the map, alice), the dataset shows.
	must(t, ts.do(req{method: "PUT", path: "/datasets/" + itoa(secret.ID) + ".json", user: "bob", ctype: jsonType,
		body: []byte(`{"permissions":[{"group_id":"everyone","permissions":{"view":true}}]}`)}), http.StatusOK)
	if e := entry("Finder"); e["bbox"] != "50,50,53,54" || e["feature_count"] != 3.0 {
		t.Errorf("shared, the dataset gives the map bbox %v and %v features", e["bbox"], e["feature_count"])
	}
}
