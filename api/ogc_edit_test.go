package api_test

// OGC API - Features Part 4 on /ogc/collections/{id}/items: create (POST),
// replace (PUT), update (PATCH, a JSON Merge Patch) and delete, their
// refusals, If-Match, and that every read after a write shows it.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// ogcItem is an item as the OGC routes answer it.
type ogcItem struct {
	Type       string
	ID         int64
	Geometry   map[string]any
	Properties map[string]any
	Links      []ogcLink
}

// ogcEditServer is a server with alice's dataset of three wells (ids 1 to
// 3), and the path of its collection by its readable name.
func ogcEditServer(t *testing.T, mutate ...func(*api.Config)) (*testServer, string) {
	t.Helper()
	ts := newServer(t, mutate...)
	path := ts.createCSV("?title=Wells", "n,name,lat,lon\n1,a,10,20\n2,b,11,21\n3,c,12,22\n")
	return ts, "/ogc/collections/wells-" + strings.TrimPrefix(path, "/datasets/")
}

// ogcWrite sends a write as alice (or user) with a body of ctype.
func ogcWrite(ts *testServer, method, path, user, ctype, body string, header map[string]string) *httptest.ResponseRecorder {
	ts.t.Helper()
	return ts.do(req{method: method, path: path, user: user, ctype: ctype, body: []byte(body), header: header})
}

// getItem is the item at path (200) and its ETag.
func getItem(t *testing.T, ts *testServer, path string) (ogcItem, string) {
	t.Helper()
	w := ts.get(path, "alice")
	return decode[ogcItem](t, must(t, w, 200)), w.Header().Get("ETag")
}

// ogcErrorOf asserts an OGC exception: status, code, a description that
// says want.
func ogcErrorOf(t *testing.T, w *httptest.ResponseRecorder, status int, code, want string) {
	t.Helper()
	m := decode[map[string]any](t, must(t, w, status))
	if d, _ := m["description"].(string); m["code"] != code || !strings.Contains(d, want) {
		t.Fatalf("%d %v, want code %s saying %q", w.Code, m, code, want)
	}
}

// itemNames are the names of a collection's items in id order.
func itemNames(t *testing.T, ts *testServer, coll string) string {
	t.Helper()
	fc := items(t, ts, coll+"/items?limit=100", "alice")
	var names []string
	for _, f := range fc.Features {
		names = append(names, fmt.Sprintf("%d:%v", f.ID, f.Properties["name"]))
	}
	return strings.Join(names, ",")
}

const geoJSONType = "application/geo+json"

func TestOGCItemCreate(t *testing.T) {
	t.Parallel()
	ts, coll := ogcEditServer(t)
	// Read once, so that the caches hold the old answers.
	if got := itemNames(t, ts, coll); got != "1:a,2:b,3:c" {
		t.Fatalf("before: %s", got)
	}
	w := ogcWrite(ts, "POST", coll+"/items", "alice", geoJSONType,
		`{"type": "Feature", "id": 77, "geometry": {"type": "Point", "coordinates": [23, 13]}, "properties": {"n": 4, "name": "d"}}`, nil)
	got := decode[ogcItem](t, must(t, w, http.StatusCreated))
	if got.ID != 4 || got.Properties["name"] != "d" || got.Properties["n"] != 4.0 || fmt.Sprint(got.Geometry["coordinates"]) != "[23 13]" {
		t.Fatalf("answer %+v", got) // the id given is not taken: the server gives the next
	}
	if loc := w.Header().Get("Location"); loc != base+coll+"/items/4" {
		t.Fatalf("Location %q", loc)
	}
	if ct := w.Header().Get("Content-Type"); ct != geoJSONType {
		t.Errorf("Content-Type %q", ct)
	}
	if link(got.Links, "self", "") != base+coll+"/items/4?f=json" || link(got.Links, "collection", "") != base+coll {
		t.Errorf("links %+v", got.Links)
	}
	item, etag := getItem(t, ts, coll+"/items/4")
	if item.Properties["name"] != "d" || etag == "" || w.Header().Get("ETag") != etag {
		t.Fatalf("GET after POST: %+v, ETag %q; POST's %q", item, etag, w.Header().Get("ETag"))
	}
	if got := itemNames(t, ts, coll); got != "1:a,2:b,3:c,4:d" {
		t.Fatalf("items after POST: %s", got)
	}
	// The native API sees it too: the same edit.
	if flat := decode[[]map[string]any](t, must(t, ts.get(strings.Replace(coll, "/ogc/collections/wells-", "/datasets/", 1)+"/features.json", ""), 200)); len(flat) != 4 {
		t.Fatalf("features.json: %d features", len(flat))
	}
	t.Run("NullGeometry", func(t *testing.T) {
		got := decode[ogcItem](t, must(t, ogcWrite(ts, "POST", coll+"/items", "alice", jsonType,
			`{"type": "Feature", "geometry": null, "properties": {"name": "nowhere"}}`, nil), 201))
		if got.Geometry != nil || got.Properties["name"] != "nowhere" || got.Properties["n"] != nil {
			t.Fatalf("answer %+v", got)
		}
		must(t, ogcWrite(ts, "DELETE", coll+"/items/"+itoa(got.ID), "alice", "", "", nil), 204)
	})
	t.Run("FeatureCollection", func(t *testing.T) {
		w := ogcWrite(ts, "POST", coll+"/items", "alice", geoJSONType, `{"type": "FeatureCollection", "features": [
			{"type": "Feature", "geometry": {"type": "Point", "coordinates": [24, 14]}, "properties": {"name": "e"}},
			{"type": "Feature", "geometry": {"type": "Point", "coordinates": [25, 15]}, "properties": {"name": "f"}}]}`, nil)
		fc := decode[ogcFC](t, must(t, w, 201))
		if len(fc.Features) != 2 || fc.Features[0].Properties["name"] != "e" || fc.Features[1].Properties["name"] != "f" || fc.NumberReturned != 2 {
			t.Fatalf("answer %+v", fc)
		}
		first := fc.Features[0].ID
		if loc := w.Header().Get("Location"); loc != base+coll+"/items/"+itoa(first) || fc.Features[1].ID != first+1 {
			t.Fatalf("Location %q, ids %d %d", loc, first, fc.Features[1].ID)
		}
		if got := itemNames(t, ts, coll); !strings.HasSuffix(got, fmt.Sprintf(",%d:e,%d:f", first, first+1)) {
			t.Fatalf("items: %s", got)
		}
		// One bad feature and none is added.
		before := itemNames(t, ts, coll)
		ogcErrorOf(t, ogcWrite(ts, "POST", coll+"/items", "alice", geoJSONType, `{"type": "FeatureCollection", "features": [
			{"type": "Feature", "geometry": null, "properties": {"name": "g"}},
			{"type": "Feature", "geometry": null, "properties": {"n": "many"}}]}`, nil), 400, "invalid", "integer")
		if after := itemNames(t, ts, coll); after != before {
			t.Fatalf("a refused collection added: %s, was %s", after, before)
		}
	})
}

func TestOGCItemReplace(t *testing.T) {
	t.Parallel()
	ts, coll := ogcEditServer(t)
	_, before := getItem(t, ts, coll+"/items/2")
	w := ogcWrite(ts, "PUT", coll+"/items/2", "alice", geoJSONType,
		`{"type": "Feature", "id": 2, "geometry": {"type": "Point", "coordinates": [30, 15]}, "properties": {"name": "B"}}`, nil)
	got := decode[ogcItem](t, must(t, w, 200))
	// Replaced whole: n, which the body leaves out, is null.
	if got.ID != 2 || got.Properties["name"] != "B" || got.Properties["n"] != nil || fmt.Sprint(got.Geometry["coordinates"]) != "[30 15]" {
		t.Fatalf("answer %+v", got)
	}
	item, etag := getItem(t, ts, coll+"/items/2")
	if item.Properties["name"] != "B" || item.Properties["n"] != nil || fmt.Sprint(item.Geometry["coordinates"]) != "[30 15]" {
		t.Fatalf("GET after PUT: %+v", item)
	}
	if etag == before || w.Header().Get("ETag") != etag {
		t.Fatalf("ETag before %s, after %s, PUT's %s", before, etag, w.Header().Get("ETag"))
	}
	// The items show it, and the dataset's extent follows.
	if got := itemNames(t, ts, coll); got != "1:a,2:B,3:c" {
		t.Fatalf("items: %s", got)
	}
	coll2 := decode[struct {
		Extent struct{ Spatial struct{ Bbox [][]float64 } }
	}](t, must(t, ts.get(coll, "alice"), 200))
	if b := coll2.Extent.Spatial.Bbox; len(b) != 1 || !slices.Equal(b[0], []float64{20, 10, 30, 15}) {
		t.Errorf("extent after PUT: %v", b)
	}
	// PUT is whole: no geometry is a 400, nothing changed.
	ogcErrorOf(t, ogcWrite(ts, "PUT", coll+"/items/2", "alice", geoJSONType, `{"type": "Feature", "properties": {"name": "x"}}`, nil), 400, "invalid", "no geometry")
	ogcErrorOf(t, ogcWrite(ts, "PUT", coll+"/items/2", "alice", geoJSONType, `{"type": "Feature", "id": 3, "geometry": null, "properties": {}}`, nil), 400, "invalid", "id 3")
	if got := itemNames(t, ts, coll); got != "1:a,2:B,3:c" {
		t.Fatalf("items after refusals: %s", got)
	}
}

func TestOGCItemPatch(t *testing.T) {
	t.Parallel()
	ts, coll := ogcEditServer(t)
	item := coll + "/items/2"
	getItem(t, ts, item) // cached
	t.Run("Property", func(t *testing.T) {
		w := ogcWrite(ts, "PATCH", item, "alice", mergePatchType, `{"type": "Feature", "properties": {"name": "B"}}`, nil)
		got := decode[ogcItem](t, must(t, w, 200))
		// The geometry, left out, is kept, and so is n.
		if got.Properties["name"] != "B" || got.Properties["n"] != 2.0 || fmt.Sprint(got.Geometry["coordinates"]) != "[21 11]" {
			t.Fatalf("answer %+v", got)
		}
		now, etag := getItem(t, ts, item)
		if now.Properties["name"] != "B" || now.Properties["n"] != 2.0 || fmt.Sprint(now.Geometry["coordinates"]) != "[21 11]" || etag != w.Header().Get("ETag") {
			t.Fatalf("GET after PATCH: %+v %s (PATCH's ETag %s)", now, etag, w.Header().Get("ETag"))
		}
	})
	t.Run("WithoutType", func(t *testing.T) {
		// A merge patch of the Feature need not repeat its type (RFC 7396):
		// {"properties": ...} changes properties, not an attribute
		// "properties".
		got := decode[ogcItem](t, must(t, ogcWrite(ts, "PATCH", item, "alice", mergePatchType, `{"properties": {"name": "B1"}}`, nil), 200))
		if got.Properties["name"] != "B1" || got.Properties["n"] != 2.0 || fmt.Sprint(got.Geometry["coordinates"]) != "[21 11]" {
			t.Fatalf("answer %+v", got)
		}
		must(t, ogcWrite(ts, "PATCH", item, "alice", mergePatchType, `{"id": 2, "properties": {"name": "B"}}`, nil), 200)
		ogcErrorOf(t, ogcWrite(ts, "PATCH", item, "alice", mergePatchType, `{"id": 3, "properties": {"name": "x"}}`, nil), 400, "invalid", "id 3")
	})
	t.Run("NullClears", func(t *testing.T) {
		got := decode[ogcItem](t, must(t, ogcWrite(ts, "PATCH", item, "alice", mergePatchType, `{"type": "Feature", "properties": {"n": null}}`, nil), 200))
		if got.Properties["n"] != nil || got.Properties["name"] != "B" {
			t.Fatalf("answer %+v", got)
		}
		if now, _ := getItem(t, ts, item); now.Properties["n"] != nil || now.Properties["name"] != "B" || fmt.Sprint(now.Geometry["coordinates"]) != "[21 11]" {
			t.Fatalf("GET after null: %+v", now)
		}
	})
	t.Run("Geometry", func(t *testing.T) {
		// As plain JSON, flat: the geometry alone.
		must(t, ogcWrite(ts, "PATCH", item, "alice", jsonType, `{"geometry": {"type": "Point", "coordinates": [26, 16]}}`, nil), 200)
		if now, _ := getItem(t, ts, item); now.Properties["name"] != "B" || fmt.Sprint(now.Geometry["coordinates"]) != "[26 16]" {
			t.Fatalf("GET after a geometry patch: %+v", now)
		}
		// As GeoJSON, a property and the geometry together.
		must(t, ogcWrite(ts, "PATCH", item, "alice", geoJSONType, `{"type": "Feature", "geometry": {"type": "Point", "coordinates": [27, 17]}, "properties": {"n": 20}}`, nil), 200)
		if now, _ := getItem(t, ts, item); now.Properties["name"] != "B" || now.Properties["n"] != 20.0 || fmt.Sprint(now.Geometry["coordinates"]) != "[27 17]" {
			t.Fatalf("GET after a patch of both: %+v", now)
		}
	})
	if got := itemNames(t, ts, coll); got != "1:a,2:B,3:c" {
		t.Fatalf("items: %s", got)
	}
}

func TestOGCItemDelete(t *testing.T) {
	t.Parallel()
	ts, coll := ogcEditServer(t)
	getItem(t, ts, coll+"/items/2") // cached
	itemNames(t, ts, coll)
	w := ogcWrite(ts, "DELETE", coll+"/items/2", "alice", "", "", nil)
	if must(t, w, http.StatusNoContent); w.Body.Len() != 0 {
		t.Fatalf("204 with a body: %s", w.Body)
	}
	ogcErrorOf(t, ts.get(coll+"/items/2", "alice"), 404, "not_found", "feature 2")
	if got := itemNames(t, ts, coll); got != "1:a,3:c" {
		t.Fatalf("items after DELETE: %s", got)
	}
	// Gone: a second DELETE, a PUT or a PATCH of it is a 404.
	ogcErrorOf(t, ogcWrite(ts, "DELETE", coll+"/items/2", "alice", "", "", nil), 404, "not_found", "no feature 2")
	ogcErrorOf(t, ogcWrite(ts, "PUT", coll+"/items/2", "alice", geoJSONType, `{"type": "Feature", "geometry": null, "properties": {}}`, nil), 404, "not_found", "no feature 2")
	ogcErrorOf(t, ogcWrite(ts, "PATCH", coll+"/items/2", "alice", mergePatchType, `{"name": "x"}`, nil), 404, "not_found", "no feature 2")
	ogcErrorOf(t, ogcWrite(ts, "DELETE", coll+"/items/x", "alice", "", "", nil), 404, "not_found", "feature")
	// A new item does not take the deleted one's id.
	got := decode[ogcItem](t, must(t, ogcWrite(ts, "POST", coll+"/items", "alice", geoJSONType, `{"type": "Feature", "geometry": null, "properties": {"name": "d"}}`, nil), 201))
	if got.ID != 4 {
		t.Fatalf("new id %d", got.ID)
	}
}

func TestOGCItemIfMatch(t *testing.T) {
	t.Parallel()
	ts, coll := ogcEditServer(t)
	item := coll + "/items/2"
	_, etag := getItem(t, ts, item)
	ifMatch := func(tag string) map[string]string { return map[string]string{"If-Match": tag} }
	patch := func(tag, body string) *httptest.ResponseRecorder {
		return ogcWrite(ts, "PATCH", item, "alice", mergePatchType, body, ifMatch(tag))
	}
	// The item's tag: the write goes on, and answers the new one.
	w := patch(etag, `{"name": "B"}`)
	must(t, w, 200)
	next := w.Header().Get("ETag")
	if next == "" || next == etag {
		t.Fatalf("ETag after the write %q, before %q", next, etag)
	}
	// The old tag is stale now: 412, nothing changes.
	for _, tc := range []struct{ name, method, body string }{
		{"PATCH", "PATCH", `{"name": "stale"}`},
		{"PUT", "PUT", `{"type": "Feature", "geometry": null, "properties": {"name": "stale"}}`},
		{"DELETE", "DELETE", ""},
	} {
		t.Run("Stale"+tc.name, func(t *testing.T) {
			ctype := mergePatchType
			if tc.method != "PATCH" {
				ctype = geoJSONType
			}
			ogcErrorOf(t, ogcWrite(ts, tc.method, item, "alice", ctype, tc.body, ifMatch(etag)), http.StatusPreconditionFailed, "precondition_failed", "If-Match")
			if now, tag := getItem(t, ts, item); now.Properties["name"] != "B" || tag != next {
				t.Fatalf("after a stale %s: %+v, ETag %s (was %s)", tc.method, now, tag, next)
			}
		})
	}
	// A tag that is none of the server's, or of another collection.
	ogcErrorOf(t, patch(`"abc"`, `{"name": "x"}`), 412, "precondition_failed", "If-Match")
	other := strings.Replace(next, "W/\"d", "W/\"d9", 1)
	ogcErrorOf(t, patch(other, `{"name": "x"}`), 412, "precondition_failed", "If-Match")
	// A stale tag of an item that does not exist: 404, as without it.
	ogcErrorOf(t, ogcWrite(ts, "PATCH", coll+"/items/99", "alice", mergePatchType, `{"name": "x"}`, ifMatch(etag)), 404, "not_found", "no feature 99")
	// The new tag, strong or weak, in a list, and "*": accepted.
	must(t, patch(`"x", `+next, `{"name": "B2"}`), 200)
	_, cur := getItem(t, ts, item)
	must(t, patch(strings.TrimPrefix(cur, "W/"), `{"name": "B3"}`), 200)
	must(t, patch("*", `{"name": "B4"}`), 200)
	// A write of another item moves the collection's version: the item's
	// tag moves with it, and the GET's tag is the write's.
	_, cur = getItem(t, ts, item)
	w = ogcWrite(ts, "PUT", coll+"/items/3", "alice", geoJSONType, `{"type": "Feature", "geometry": null, "properties": {"name": "C"}}`, ifMatch(cur))
	must(t, w, 200)
	if _, tag3 := getItem(t, ts, coll+"/items/3"); tag3 != w.Header().Get("ETag") {
		t.Fatalf("item 3's ETag %s, the PUT's %s", tag3, w.Header().Get("ETag"))
	}
	ogcErrorOf(t, patch(cur, `{"name": "x"}`), 412, "precondition_failed", "If-Match")
	_, cur = getItem(t, ts, item)
	must(t, ogcWrite(ts, "DELETE", item, "alice", "", "", ifMatch(cur)), 204)
	// "*" and a deleted item: 404.
	ogcErrorOf(t, patch("*", `{"name": "x"}`), 404, "not_found", "no feature 2")
	if got := itemNames(t, ts, coll); got != "1:a,3:C" {
		t.Fatalf("items: %s", got)
	}
}

func TestOGCItemEditPermissions(t *testing.T) {
	t.Parallel()
	ts, coll := ogcEditServer(t) // hosted: anyone may see alice's dataset, only she change it
	writes := []struct{ method, path, ctype, body string }{
		{"POST", coll + "/items", geoJSONType, `{"type": "Feature", "geometry": null, "properties": {"name": "x"}}`},
		{"PUT", coll + "/items/1", geoJSONType, `{"type": "Feature", "geometry": null, "properties": {"name": "x"}}`},
		{"PATCH", coll + "/items/1", mergePatchType, `{"name": "x"}`},
		{"DELETE", coll + "/items/1", "", ""},
	}
	for _, c := range writes {
		t.Run(c.method, func(t *testing.T) {
			ogcErrorOf(t, ogcWrite(ts, c.method, c.path, "", c.ctype, c.body, nil), 401, "unauthorized", "authentication")
			// bob may see it: 403, the native API's refusal.
			ogcErrorOf(t, ogcWrite(ts, c.method, c.path, "bob", c.ctype, c.body, nil), 403, "forbidden", "may be changed by")
			// Authorized before the body is read: a bad body changes nothing of it.
			ogcErrorOf(t, ogcWrite(ts, c.method, c.path, "bob", c.ctype, `{"name": `, nil), 403, "forbidden", "may be changed by")
			// And before If-Match is compared.
			ogcErrorOf(t, ogcWrite(ts, c.method, c.path, "bob", c.ctype, c.body, map[string]string{"If-Match": `"stale"`}), 403, "forbidden", "may be changed by")
			// A missing collection: 404 to bob, 401 anonymous.
			missing := strings.Replace(c.path, coll, "/ogc/collections/9999", 1)
			ogcErrorOf(t, ogcWrite(ts, c.method, missing, "bob", c.ctype, c.body, nil), 404, "not_found", "not found")
			ogcErrorOf(t, ogcWrite(ts, c.method, missing, "", c.ctype, c.body, nil), 401, "unauthorized", "authentication")
		})
	}
	if got := itemNames(t, ts, coll); got != "1:a,2:b,3:c" {
		t.Fatalf("refused writes changed the items: %s", got)
	}
	// The admin may, as natively.
	must(t, ogcWrite(ts, "PATCH", coll+"/items/1", "admin", mergePatchType, `{"name": "A"}`, nil), 200)
	// A private dataset (an appliance's): a stranger gets the 404 of a
	// missing one, anonymous the 401; a group with edit may.
	ap := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	id := uploadNC(t, ap, "")
	for _, c := range []struct{ method, path, ctype, body string }{
		{"POST", "/items", geoJSONType, `{"type": "Feature", "geometry": null, "properties": {}}`},
		{"PUT", "/items/1", geoJSONType, `{"type": "Feature", "geometry": null, "properties": {}}`},
		{"PATCH", "/items/1", mergePatchType, `{"NAME": "x"}`},
		{"DELETE", "/items/1", "", ""},
	} {
		p := "/ogc/collections/" + id + c.path
		missing := "/ogc/collections/9999" + c.path
		for _, who := range []string{"", "bob"} {
			w, m := ogcWrite(ap, c.method, p, who, c.ctype, c.body, nil), ogcWrite(ap, c.method, missing, who, c.ctype, c.body, nil)
			if w.Code != m.Code || (who == "" && w.Code != 401) || (who == "bob" && w.Code != 404) {
				t.Errorf("%s %s by %q: %d, a missing collection %d", c.method, c.path, who, w.Code, m.Code)
			}
			if strings.Contains(w.Body.String(), id) && who == "bob" && !strings.Contains(m.Body.String(), "9999") {
				t.Errorf("the refusal names the dataset: %s", w.Body)
			}
		}
	}
	if fc := items(t, ap, "/ogc/collections/"+id+"/items?limit=1000", "alice"); fc.NumberMatched != 100 {
		t.Fatalf("refused writes changed the private dataset: %d features", fc.NumberMatched)
	}
}

func TestOGCItemEditBadBodies(t *testing.T) {
	t.Parallel()
	ts, coll := ogcEditServer(t)
	item := coll + "/items/1"
	for _, c := range []struct {
		name, method, path, ctype, body string
		status                          int
		code, want                      string
	}{
		{"PostMalformed", "POST", coll + "/items", geoJSONType, `{"type": "Feature", `, 400, "invalid", "malformed JSON"},
		{"PostEmpty", "POST", coll + "/items", geoJSONType, ``, 400, "invalid", "no feature"},
		{"PostNotAFeature", "POST", coll + "/items", geoJSONType, `{"type": "Point", "coordinates": [1, 2]}`, 400, "invalid", "Feature"},
		{"PostNoGeometry", "POST", coll + "/items", geoJSONType, `{"type": "Feature", "properties": {"name": "x"}}`, 400, "invalid", "no geometry"},
		{"PostBadGeometry", "POST", coll + "/items", geoJSONType, `{"type": "Feature", "geometry": {"type": "Point", "coordinates": [500, 1]}, "properties": {}}`, 400, "invalid", "geometry"},
		{"PostBadGeometryType", "POST", coll + "/items", geoJSONType, `{"type": "Feature", "geometry": {"type": "Blob", "coordinates": [1, 1]}, "properties": {}}`, 400, "invalid", "geometry"},
		{"PostUnknownProperty", "POST", coll + "/items", geoJSONType, `{"type": "Feature", "geometry": null, "properties": {"colour": "red"}}`, 400, "invalid", `no attribute "colour"`},
		{"PostWrongType", "POST", coll + "/items", geoJSONType, `{"type": "Feature", "geometry": null, "properties": {"n": "seven"}}`, 400, "invalid", "integer"},
		{"PostEmptyCollection", "POST", coll + "/items", geoJSONType, `{"type": "FeatureCollection", "features": []}`, 400, "invalid", "no features"},
		{"PostPlainText", "POST", coll + "/items", "text/plain", `{"type": "Feature", "geometry": null, "properties": {}}`, 415, "unsupported_type", "JSON"},
		{"PutMalformed", "PUT", item, geoJSONType, `{"type": `, 400, "invalid", "malformed JSON"},
		{"PutTwo", "PUT", item, geoJSONType, `{"type": "Feature", "geometry": null, "properties": {}} {}`, 400, "invalid", "one feature"},
		{"PutBadGeometry", "PUT", item, geoJSONType, `{"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[1, 1]]}, "properties": {}}`, 400, "invalid", "geometry"},
		{"PutEmpty", "PUT", item, geoJSONType, ``, 400, "invalid", "no feature"},
		{"PatchArray", "PATCH", item, mergePatchType, `[{"name": "x"}]`, 400, "invalid", "not an array"},
		{"PatchMalformed", "PATCH", item, mergePatchType, `{"name": `, 400, "invalid", "malformed JSON"},
		{"PatchBadGeometry", "PATCH", item, mergePatchType, `{"geometry": {"type": "Point", "coordinates": "here"}}`, 400, "invalid", "geometry"},
		{"PatchUnknownProperty", "PATCH", item, mergePatchType, `{"type": "Feature", "properties": {"colour": "red"}}`, 400, "invalid", `no attribute "colour"`},
		{"PatchEmpty", "PATCH", item, mergePatchType, ``, 400, "invalid", "no patch"},
		{"PatchPlainText", "PATCH", item, "text/plain", `{"name": "x"}`, 415, "unsupported_type", "JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := itemNames(t, ts, coll)
			_, etag := getItem(t, ts, item)
			ogcErrorOf(t, ogcWrite(ts, c.method, c.path, "alice", c.ctype, c.body, nil), c.status, c.code, c.want)
			if after, etag2 := itemNames(t, ts, coll), getETag(t, ts, item); after != before || etag2 != etag {
				t.Fatalf("a refused %s changed the collection: %s (%s), was %s (%s)", c.method, after, etag2, before, etag)
			}
		})
	}
	t.Run("TooLarge", func(t *testing.T) {
		small, coll := ogcEditServer(t, func(c *api.Config) { c.MaxUpload = 1 << 10 })
		body := `{"type": "Feature", "geometry": null, "properties": {"name": "` + strings.Repeat("x", 2<<10) + `"}}`
		for _, m := range []string{"POST", "PUT", "PATCH"} {
			p := coll + "/items/1"
			if m == "POST" {
				p = coll + "/items"
			}
			if w := ogcWrite(small, m, p, "alice", geoJSONType, body, nil); w.Code != http.StatusRequestEntityTooLarge {
				t.Errorf("%s of %d bytes: %d %s", m, len(body), w.Code, w.Body)
			}
		}
		maxed, coll2 := ogcEditServer(t, func(c *api.Config) { c.MaxFeatures = 3 })
		ogcErrorOf(t, ogcWrite(maxed, "POST", coll2+"/items", "alice", geoJSONType, `{"type": "Feature", "geometry": null, "properties": {}}`, nil), 413, "too_large", "max-features")
	})
}

// getETag is the ETag of a GET of path by alice.
func getETag(t *testing.T, ts *testServer, path string) string {
	t.Helper()
	_, tag := getItem(t, ts, path)
	return tag
}

func TestOGCItemEditDeclared(t *testing.T) {
	t.Parallel()
	ts, coll := ogcEditServer(t, func(c *api.Config) { c.CORSOrigins = []string{"https://app.example.org"} })
	conf := decode[struct{ ConformsTo []string }](t, must(t, ts.get("/ogc/conformance", ""), 200))
	for _, c := range []string{"http://www.opengis.net/spec/ogcapi-features-4/1.0/conf/create-replace-delete", "http://www.opengis.net/spec/ogcapi-features-4/1.0/conf/update"} {
		if !slices.Contains(conf.ConformsTo, c) {
			t.Errorf("conformance: no %s", c)
		}
	}
	// A page of the trusted origin may send the writes, with If-Match.
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		w := ts.do(req{method: "OPTIONS", path: coll + "/items/1", header: map[string]string{"Origin": "https://app.example.org",
			"Access-Control-Request-Method": m, "Access-Control-Request-Headers": "content-type, if-match"}})
		h := w.Header()
		if w.Code != 204 || !strings.Contains(h.Get("Access-Control-Allow-Methods"), m) || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "If-Match") {
			t.Errorf("preflight of %s: %d %v", m, w.Code, h)
		}
	}
	// Other methods on items are still refused.
	ogcErrorOf(t, ts.do(req{method: "PUT", path: coll + "/items", user: "alice"}), 405, "method_not_allowed", "PUT")
	ogcErrorOf(t, ts.do(req{method: "POST", path: coll + "/items/1", user: "alice"}), 405, "method_not_allowed", "POST")
}

// interleaving is a FeatureService that runs between before each edit,
// once: another client's write arriving between a request's check of its
// If-Match and its edit.
type interleaving struct {
	mapcommons.FeatureService
	between func()
}

func (f *interleaving) ApplyEdits(ctx context.Context, id int64, e *mapcommons.Edits) (*mapcommons.EditResult, error) {
	if b := f.between; b != nil {
		f.between = nil
		b()
	}
	return f.FeatureService.ApplyEdits(ctx, id, e)
}

// TestOGCItemIfMatchUnderLock: the version an If-Match names is checked
// again by the store, under the dataset's write lock: a write that came
// in between makes the request a 412, nothing of it applied; and of many
// writes sent at once with one tag, exactly one applies.
func TestOGCItemIfMatchUnderLock(t *testing.T) {
	t.Parallel()
	ts, coll := ogcEditServer(t)
	inner := ts.svc.Features
	f := &interleaving{FeatureService: inner}
	ts.svc.Features = f
	ts.restart()
	id, _ := strconv.ParseInt(strings.TrimPrefix(coll, "/ogc/collections/wells-"), 10, 64)
	item := coll + "/items/2"
	for _, m := range []string{"PATCH", "PUT", "DELETE"} {
		_, etag := getItem(t, ts, item)
		f.between = func() {
			if _, err := inner.ApplyEdits(t.Context(), id, &mapcommons.Edits{Updates: []mapcommons.Feature{{ID: 3, Values: []any{int64(3), "other " + m}}}}); err != nil {
				t.Error(err)
			}
		}
		body := `{"type": "Feature", "geometry": null, "properties": {"name": "mine"}}`
		if m == "DELETE" {
			body = ""
		}
		ogcErrorOf(t, ogcWrite(ts, m, item, "alice", geoJSONType, body, map[string]string{"If-Match": etag}), 412, "precondition_failed", "If-Match")
		if got := itemNames(t, ts, coll); got != "1:a,2:b,3:other "+m {
			t.Fatalf("after %s: %s", m, got)
		}
	}
	// Many at once with the current tag: one wins.
	_, etag := getItem(t, ts, item)
	codes := make([]int, 8)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Go(func() {
			w := ogcWrite(ts, "PATCH", item, "alice", mergePatchType, fmt.Sprintf(`{"name": "w%d"}`, i), map[string]string{"If-Match": etag})
			codes[i] = w.Code
		})
	}
	wg.Wait()
	if slices.Sort(codes); codes[0] != 200 || codes[1] != 412 || codes[len(codes)-1] != 412 {
		t.Fatalf("statuses of writes at once with one tag: %v", codes)
	}
}
