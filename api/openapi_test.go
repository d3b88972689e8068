package api_test

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"mapcommons/api"
	"mapcommons/format"
)

// TestOpenAPIServed checks how /api answers: the JSON document with its
// media type and this server as its server, the HTML view by suffix, f or
// Accept, and the errors of other formats and methods.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	for _, path := range []string{"/api", "/api.json", "/api?f=json", "//api/"} {
		w := ts.get(path, "")
		b := must(t, w, 200)
		if ct := w.Header().Get("Content-Type"); ct != "application/vnd.oai.openapi+json;version=3.0" {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		var doc struct {
			OpenAPI string
			Servers []struct{ URL string }
			Paths   map[string]map[string]json.RawMessage
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !strings.HasPrefix(doc.OpenAPI, "3.0.") || len(doc.Servers) != 1 || doc.Servers[0].URL != base {
			t.Errorf("%s: openapi %q, servers %+v", path, doc.OpenAPI, doc.Servers)
		}
		if _, ok := doc.Paths["/datasets/{id}/features"]["get"]; !ok {
			t.Errorf("%s: no GET /datasets/{id}/features", path)
		}
	}
	// Without --base-url, the server is the request's own.
	hr := httptest.NewRequest("GET", "http://gis.example.net:8081/api", nil)
	w := httptest.NewRecorder()
	newServer(t, func(c *api.Config) { c.BaseURL = "" }).handler.ServeHTTP(w, hr)
	if b := must(t, w, 200); !strings.Contains(string(b), `"url": "http://gis.example.net:8081"`) {
		t.Errorf("servers without --base-url: %.300s", b)
	}

	for _, r := range []req{
		{method: "GET", path: "/api?f=html"},
		{method: "GET", path: "/api.html"},
		{method: "GET", path: "/api", header: map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}},
	} {
		w := ts.do(r)
		b := string(must(t, w, 200))
		if ct := w.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", r.path, ct)
		}
		for _, want := range []string{"<!DOCTYPE html>", `<h2 id="/datasets/{id}/features">`, "filter", "group_by[]", "aggregates[][calc]",
			"dataset[shp]", "multipart/form-data", "text/csv", `<code>.gpkg</code>`, "WWW-Authenticate", "credentials required", "km | m | ft | miles | degrees", base + "/api.json"} {
			if !strings.Contains(b, want) {
				t.Errorf("%s: the HTML view lacks %q", r.path, want)
			}
		}
		// Its one script is the viewer's bundle, from this server (when
		// the assets are built).
		for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(b, -1) {
			if !strings.HasPrefix(tag, `<script type="module" src="/app/assets/apiview-`) {
				t.Errorf("%s: the HTML view has a script %s", r.path, tag)
			}
		}
	}
	// Accept chooses HTML only when it ranks text/html above JSON.
	for accept, html := range map[string]bool{"*/*": false, "application/json, text/html;q=0.5": false,
		"application/vnd.oai.openapi+json;version=3.0": false, "text/html, application/json;q=0.9": true} {
		w := ts.do(req{method: "GET", path: "/api", header: map[string]string{"Accept": accept}})
		if must(t, w, 200); strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") != html {
			t.Errorf("Accept %q: Content-Type %q", accept, w.Header().Get("Content-Type"))
		}
	}
	// An explicit .json wins over a browser's Accept.
	w = ts.do(req{method: "GET", path: "/api.json", header: map[string]string{"Accept": "text/html"}})
	if must(t, w, 200); !strings.HasPrefix(w.Header().Get("Content-Type"), "application/vnd.oai.openapi+json") {
		t.Errorf("/api.json with Accept text/html: %q", w.Header().Get("Content-Type"))
	}
	errorOf(t, ts.get("/api.csv", ""), 404, "not_found", "json or .html")
	errorOf(t, ts.get("/api?f=xml", ""), 400, "invalid", "f:")
	errorOf(t, ts.do(req{method: "POST", path: "/api"}), 405, "method_not_allowed", "POST")
}

// openAPIFixture is a server with one object of each kind, its document's
// operations, and the path of each described path on those objects.
type openAPIFixture struct {
	ts  *testServer
	ops []openAPIOperation
}

// openAPIOperation is what the tests read of one operation.
type openAPIOperation struct {
	method, template, path string                // path: the template on the fixture's objects
	query                  string                // what follows the path: its required query parameters
	Formats                []string              `json:"x-formats"`
	Security               []map[string][]string `json:"security"`
	Parameters             []struct {
		Ref string `json:"$ref"`
	}
	Responses map[string]json.RawMessage
}

// requiresBasic reports whether the operation requires credentials: HTTP
// Basic (the fixture's), or else the session cookie; no anonymous
// alternative.
func (o *openAPIOperation) requiresBasic() bool {
	return slices.ContainsFunc(o.Security, func(alt map[string][]string) bool { return alt["basic"] != nil }) &&
		!slices.ContainsFunc(o.Security, func(alt map[string][]string) bool { return len(alt) == 0 })
}

func newOpenAPIFixture(t *testing.T) *openAPIFixture {
	ts := newServer(t, withPMTiles(t))
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(must(t, ts.get("/api", ""), 200), &doc); err != nil {
		t.Fatal(err)
	}
	ds := ts.createCSV("?title=towns", "name,lat,lon,pop\nAlpha,10,20,5\nBeta,11,21,7\n")
	id := strings.TrimPrefix(ds, "/datasets/")
	form := "application/x-www-form-urlencoded"
	m := decode[map[string]any](t, must(t, ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: form,
		body: []byte("title=m&basemap=Acetate&layers[][source]=finder:" + id)}), 201))
	g := decode[map[string]any](t, must(t, ts.do(req{method: "POST", path: "/groups.json", user: "admin", ctype: form, body: []byte("name=staff")}), 201))
	values := strings.NewReplacer("/datasets/{id}", ds, "/maps/{id}", "/maps/"+itoa(int64(m["id"].(float64))),
		"/groups/{id}", "/groups/"+itoa(int64(g["id"].(float64))), "{user}", "alice", "{index}", "0", "{login}", "bob",
		"{ignored}", "x", "{fid}", "1", "{collectionId}", id, "{featureId}", "1", "{z}", "0", "{y}", "0", "{x}", "0", "{tileMatrix}", "0", "{tileRow}", "0", "{tileCol}", "0",
		"{tileMatrixSetId}", "WebMercatorQuad", "{asset}", "favicon.svg", "{style}", "0", "{styleId}", itoa(int64(m["id"].(float64))),
		"{fontstack}", "Go%20Regular", "{range}", "0-255.pbf", "{name}", "world")
	f := &openAPIFixture{ts: ts}
	for path, item := range doc.Paths {
		for method, raw := range item {
			if method == "parameters" {
				continue
			}
			op := openAPIOperation{method: strings.ToUpper(method), template: path, path: values.Replace(path)}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			switch path {
			case "/oembed":
				op.query = "?url=" + url.QueryEscape(base+"/app/maps/"+itoa(int64(m["id"].(float64))))
			case "/wms": // a GetMap, the operation that is tagged
				op.query = "?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=towns-" + id + "&STYLES=&CRS=CRS:84&BBOX=19,9,22,12&WIDTH=32&HEIGHT=32&FORMAT=image/png"
			}
			if strings.Contains(op.path, "{") {
				t.Fatalf("%s: no value for its parameters", path)
			}
			f.ops = append(f.ops, op)
		}
	}
	return f
}

// TestOpenAPIFormats checks the formats the document gives each read
// against the server: every listed suffix answers 200, and a suffix a read
// does not list is refused, with a 404 on the GeoCommons routes (/healthz
// takes any suffix; an operation that lists none is not chosen by suffix).
func TestOpenAPIFormats(t *testing.T) {
	t.Parallel()
	// Every suffix normalizePath strips (format.ContentType).
	suffixes := []string{"json", "xml", "csv", "geojson", "kml", "kmz", "atom", "rss", "zip", "sqlite", "spatialite", "gpkg", "html"}
	for _, f := range suffixes {
		if _, ok := format.ContentType(f); !ok {
			t.Fatalf("%s is no format suffix", f)
		}
	}
	fx := newOpenAPIFixture(t)
	reads := 0
	for _, op := range fx.ops {
		if op.method != "GET" || strings.HasSuffix(op.template, "/fetch") { // a GET that refetches: a write
			continue
		}
		reads++
		for _, f := range op.Formats {
			if w := fx.ts.get(op.path+"."+f+op.query, "admin"); w.Code != 200 {
				t.Errorf("GET %s.%s: %d %.200s", op.path, f, w.Code, w.Body)
			}
		}
		if op.template == "/healthz" || len(op.Formats) == 0 {
			continue
		}
		ogc := strings.HasPrefix(op.template, "/ogc")
		for _, f := range suffixes {
			if slices.Contains(op.Formats, f) {
				continue
			}
			if w := fx.ts.get(op.path+"."+f+op.query, "admin"); w.Code != 404 && !(ogc && w.Code >= 400 && w.Code < 500) {
				t.Errorf("GET %s.%s, a format it does not list: %d", op.path, f, w.Code)
			}
		}
	}
	if reads < 10 {
		t.Errorf("%d reads checked", reads)
	}
}

// TestOpenAPISecurity checks the credentials the document asks for: an
// operation that requires HTTP Basic refuses an anonymous caller with 401,
// and a read that does not is answered (hosted instance, public objects).
func TestOpenAPISecurity(t *testing.T) {
	t.Parallel()
	fx := newOpenAPIFixture(t)
	required, open := 0, 0
	for _, op := range fx.ops {
		p := op.path
		if len(op.Formats) > 0 && !slices.Contains(op.Formats, "json") {
			p += "." + op.Formats[0]
		}
		w := fx.ts.do(req{method: op.method, path: p + op.query})
		switch {
		case op.requiresBasic():
			required++
			if w.Code != 401 {
				t.Errorf("%s %s anonymous: %d, want 401 (the document requires credentials)", op.method, p, w.Code)
			}
		case op.method == "GET":
			open++
			if w.Code < 200 || w.Code > 299 {
				t.Errorf("%s %s anonymous: %d, want a success (the document asks for no credentials)", op.method, p, w.Code)
			}
		}
	}
	if required < 20 || open < 8 {
		t.Errorf("%d operations requiring credentials, %d reads without", required, open)
	}
}

// TestOpenAPIConditional checks the reads the document says take
// If-None-Match: their answer carries an ETag, and sending it back is a 304;
// and a read that does not list a 304 never answers one.
func TestOpenAPIConditional(t *testing.T) {
	t.Parallel()
	fx := newOpenAPIFixture(t)
	conditional := 0
	for _, op := range fx.ops {
		if op.method != "GET" || strings.HasSuffix(op.template, "/fetch") {
			continue
		}
		takes := slices.ContainsFunc(op.Parameters, func(p struct {
			Ref string `json:"$ref"`
		}) bool {
			return p.Ref == "#/components/parameters/ifNoneMatch"
		})
		_, lists304 := op.Responses["304"]
		if takes != lists304 {
			t.Errorf("%s: If-None-Match %v, 304 %v", op.template, takes, lists304)
		}
		p := op.path
		if len(op.Formats) > 0 && !slices.Contains(op.Formats, "json") {
			p += "." + op.Formats[0]
		}
		user := ""
		if op.requiresBasic() {
			user = "admin"
		}
		w := fx.ts.get(p+op.query, user)
		must(t, w, 200)
		tag := w.Header().Get("ETag")
		if takes != (tag != "") {
			t.Errorf("%s: ETag %q, the document says If-None-Match %v", op.template, tag, takes)
		}
		if !takes {
			continue
		}
		conditional++
		if w := fx.ts.do(req{method: "GET", path: p + op.query, user: user, header: map[string]string{"If-None-Match": tag}}); w.Code != 304 {
			t.Errorf("%s with its ETag: %d", op.template, w.Code)
		}
	}
	// Eight GeoCommons reads (a map's tiles the fifth, its styles, a style
	// and its legend the last), five OGC Features documents, four of Tiles
	// and four of map tiles and the map, the styled map, WMS's GetMap,
	// six of the basemaps (its glyphs, and two of a PMTiles basemap), one
	// of the web application's files, the colour ramps.
	if conditional != 31 {
		t.Errorf("%d conditional reads, want 31", conditional)
	}
}
