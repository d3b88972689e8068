package api_test

import (
	"net/http"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// TestETagNotModified: dataset JSON, feature answers and downloads carry a
// weak ETag of the dataset's version; If-None-Match with it (alone, in a
// list, or "*") is a 304 with no body, the ETag and Cache-Control; after a
// change of the dataset the old tag gets the new answer.
func TestETagNotModified(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=pts", string(pointsCSV(300)))
	paths := []string{ds + ".json", ds + ".json?include_features=1", ds + "/features.json?limit=5", ds + "/features.geojson?limit=5",
		ds + "/features.json?limit=6", ds + ".csv", ds + ".geojson", ds + ".kml", ds + ".kmz", ds + ".atom", ds + ".zip", ds + ".gpkg", ds + ".sqlite"}
	tags := map[string]string{}
	for _, p := range paths {
		w := ts.get(p, "")
		must(t, w, 200)
		tag := w.Header().Get("ETag")
		if !strings.HasPrefix(tag, `W/"`) || !strings.HasSuffix(tag, `"`) {
			t.Fatalf("%s: ETag %q", p, tag)
		}
		for q, other := range tags {
			if other == tag {
				t.Fatalf("%s and %s share the ETag %s", p, q, tag)
			}
		}
		tags[p] = tag
		if cc := w.Header().Get("Cache-Control"); cc != "public, max-age=0, must-revalidate" {
			t.Fatalf("%s: Cache-Control %q", p, cc)
		}
		for _, inm := range []string{tag, `"nope", ` + tag, strings.TrimPrefix(tag, "W/"), "*"} {
			nm := ts.do(req{method: "GET", path: p, header: map[string]string{"If-None-Match": inm}})
			if nm.Code != http.StatusNotModified || nm.Body.Len() != 0 || nm.Header().Get("ETag") != tag ||
				nm.Header().Get("Cache-Control") == "" || nm.Header().Get("Content-Disposition") != "" {
				t.Fatalf("%s, If-None-Match %s: %d %v %q", p, inm, nm.Code, nm.Header(), nm.Body.String())
			}
		}
		if w := ts.do(req{method: "GET", path: p, header: map[string]string{"If-None-Match": `W/"other"`}}); w.Code != 200 {
			t.Fatalf("%s: other tag: %d", p, w.Code)
		}
		// The same tag for the gzip-encoded form (weak: it names the
		// answer, not its coding).
		if z := ts.do(req{method: "GET", path: p, header: map[string]string{"Accept-Encoding": "gzip"}}); z.Header().Get("ETag") != tag {
			t.Fatalf("%s: gzip form tagged %q, plain %q", p, z.Header().Get("ETag"), tag)
		}
	}
	// A new version: every old tag now gets the full new answer.
	must(t, ts.do(req{method: "PUT", path: ds + ".json?title=renamed", user: "alice"}), 201)
	for _, p := range paths {
		w := ts.do(req{method: "GET", path: p, header: map[string]string{"If-None-Match": tags[p]}})
		must(t, w, 200)
		if w.Header().Get("ETag") == tags[p] || w.Body.Len() == 0 {
			t.Fatalf("%s: after a change: ETag %q (was %q)", p, w.Header().Get("ETag"), tags[p])
		}
	}
	// Another caller, another tag (rights and links may differ); and a
	// caller who identified themselves gets a private answer.
	a := ts.get(ds+".json", "alice")
	if a.Header().Get("ETag") == ts.get(ds+".json", "").Header().Get("ETag") {
		t.Fatal("alice's answer has the anonymous tag")
	}
	if cc := a.Header().Get("Cache-Control"); !strings.HasPrefix(cc, "private") {
		t.Fatalf("alice: Cache-Control %q", cc)
	}
	// Errors are not kept and carry no tag.
	e := ts.do(req{method: "GET", path: "/datasets/999.json", header: map[string]string{"If-None-Match": "*"}})
	if e.Code != 404 || e.Header().Get("ETag") != "" || e.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("404: %d %v", e.Code, e.Header())
	}
}

// TestCacheControlByPermissions: on an appliance, a dataset shared with
// nobody is private to its owner's answers; shared with everyone it is
// public to anonymous callers (and still private to identified ones); a
// dataset anyone may view but not download has public metadata and private
// downloads, which anonymous callers do not get at all.
func TestCacheControlByPermissions(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	ds := ts.createCSV("?title=pts", string(pointsCSV(20)))
	cc := func(w interface{ Header() http.Header }) string { return w.Header().Get("Cache-Control") }
	for _, p := range []string{ds + ".json", ds + ".csv", ds + "/features.json"} {
		w := ts.get(p, "alice")
		must(t, w, 200)
		if !strings.HasPrefix(cc(w), "private") {
			t.Fatalf("%s unshared: %q", p, cc(w))
		}
		if w := ts.get(p, ""); w.Code == 200 || cc(w) != "no-store" {
			t.Fatalf("%s anonymous: %d %q", p, w.Code, cc(w))
		}
	}
	share := func(perms string) {
		t.Helper()
		if w := ts.do(req{method: "PUT", path: ds + ".json", user: "alice", ctype: "application/json", body: []byte(`{"permissions":[` + perms + `]}`)}); w.Code >= 300 {
			t.Fatalf("share: %d %s", w.Code, w.Body.String())
		}
	}
	share(`{"group_id":"everyone","permissions":{"view":true,"download":true}}`)
	for _, p := range []string{ds + ".json", ds + ".csv", ds + "/features.json"} {
		if w := ts.get(p, ""); w.Code != 200 || cc(w) != "public, max-age=0, must-revalidate" {
			t.Fatalf("%s shared with everyone, anonymous: %d %q", p, w.Code, cc(w))
		}
		if w := ts.get(p, "bob"); w.Code != 200 || !strings.HasPrefix(cc(w), "private") {
			t.Fatalf("%s shared with everyone, bob: %d %q", p, w.Code, cc(w))
		}
	}
	share(`{"group_id":"everyone","permissions":{"view":true}}`)
	if w := ts.get(ds+".json", ""); w.Code != 200 || !strings.HasPrefix(cc(w), "public") {
		t.Fatalf("view only, metadata: %d %q", w.Code, cc(w))
	}
	if w := ts.get(ds+".csv", "bob"); w.Code == 200 {
		t.Fatalf("view only, bob downloads: %d", w.Code)
	}
	if w := ts.get(ds+".csv", "alice"); w.Code != 200 || !strings.HasPrefix(cc(w), "private") {
		t.Fatalf("view only, owner downloads: %d %q", w.Code, cc(w))
	}
}

// TestCORSExposesETag: pages of the allowed origins may read the ETag (to
// send it back in If-None-Match), and a 304 keeps the CORS headers and
// the Vary of the full answer.
func TestCORSExposesETag(t *testing.T) {
	t.Parallel()
	app := "https://app.example.org"
	ts := newServer(t, func(c *api.Config) { c.CORSOrigins = []string{app, "*"} })
	ds := ts.createCSV("?title=T", string(pointsCSV(50)))
	for _, c := range []struct{ user, origin, allow string }{{"alice", app, app}, {"", "https://other.example", "*"}} {
		w := ts.do(req{method: "GET", path: ds + ".geojson", user: c.user, header: map[string]string{"Origin": c.origin}})
		must(t, w, 200)
		h := w.Header()
		if h.Get("Access-Control-Allow-Origin") != c.allow || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "ETag") {
			t.Fatalf("%s: %v", c.origin, h)
		}
		nm := ts.do(req{method: "GET", path: ds + ".geojson", user: c.user, header: map[string]string{"Origin": c.origin, "If-None-Match": h.Get("ETag")}})
		vary := strings.Join(nm.Header().Values("Vary"), ",")
		if nm.Code != 304 || nm.Header().Get("Access-Control-Allow-Origin") != c.allow || !strings.Contains(vary, "Origin") || !strings.Contains(vary, "Accept-Encoding") {
			t.Fatalf("%s 304: %d %v", c.origin, nm.Code, nm.Header())
		}
	}
}

// TestMapETag: map JSON, map KML and layer features carry a weak ETag and
// answer 304 to it; a change of the map, or of a layer's dataset, gives
// them a new one. Maps shared with everyone are public to anonymous
// callers; on an appliance a private map is private.
func TestMapETag(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=pts", string(pointsCSV(100)))
	id := strings.TrimPrefix(ds, "/datasets/")
	m := ts.createMap(t, "alice", "title=M&basemap=Acetate&layers[][source]=finder:"+id+"&layers[][title]=L&layers[][visible]=true")
	paths := []string{m + ".json", m + ".kml", m + "/layers/0/features.json", m + "/layers/0/features.json?limit=5"}
	tags := map[string]string{}
	for _, p := range paths {
		w := ts.get(p, "")
		must(t, w, 200)
		tag := w.Header().Get("ETag")
		if !strings.HasPrefix(tag, `W/"m`) || w.Header().Get("Cache-Control") != "public, max-age=0, must-revalidate" {
			t.Fatalf("%s: %v", p, w.Header())
		}
		for q, other := range tags {
			if other == tag {
				t.Fatalf("%s and %s share %s", p, q, tag)
			}
		}
		tags[p] = tag
		if nm := ts.do(req{method: "GET", path: p, header: map[string]string{"If-None-Match": tag}}); nm.Code != 304 || nm.Body.Len() != 0 {
			t.Fatalf("%s: %d", p, nm.Code)
		}
	}
	changed := func(what string) {
		t.Helper()
		for _, p := range paths {
			w := ts.do(req{method: "GET", path: p, header: map[string]string{"If-None-Match": tags[p]}})
			must(t, w, 200)
			if w.Header().Get("ETag") == tags[p] {
				t.Fatalf("%s after %s: same tag", p, what)
			}
			tags[p] = w.Header().Get("ETag")
		}
	}
	if w := ts.do(req{method: "PUT", path: m + ".json?title=M2", user: "alice"}); w.Code >= 300 {
		t.Fatalf("map update: %d %s", w.Code, w.Body.String())
	}
	changed("a map update")
	must(t, ts.do(req{method: "PUT", path: ds + ".json?title=renamed", user: "alice"}), 201)
	changed("a dataset update")

	app := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	pm := app.createMap(t, "alice", "title=P&basemap=Acetate")
	if w := app.get(pm+".json", "alice"); w.Code != 200 || !strings.HasPrefix(w.Header().Get("Cache-Control"), "private") {
		t.Fatalf("private map: %d %v", w.Code, w.Header())
	}
}
