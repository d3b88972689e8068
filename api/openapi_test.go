package api_test

import (
	"encoding/json"
	"net/http/httptest"
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
		if strings.Contains(b, "<script") {
			t.Errorf("%s: the HTML view has a script", r.path)
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

// TestOpenAPIFormats checks the formats the document gives each read
// against the server: every listed suffix answers 200, and a suffix a read
// does not list answers 404 (except /healthz, which takes any).
func TestOpenAPIFormats(t *testing.T) {
	// Every suffix normalizePath strips (format.ContentType).
	suffixes := []string{"json", "xml", "csv", "geojson", "kml", "kmz", "atom", "rss", "zip", "sqlite", "spatialite", "gpkg", "html"}
	for _, f := range suffixes {
		if _, ok := format.ContentType(f); !ok {
			t.Fatalf("%s is no format suffix", f)
		}
	}
	ts := newServer(t)
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(must(t, ts.get("/api", ""), 200), &doc); err != nil {
		t.Fatal(err)
	}
	ds := ts.createCSV("?title=towns", "name,lat,lon,pop\nAlpha,10,20,5\nBeta,11,21,7\n")
	form := "application/x-www-form-urlencoded"
	must(t, ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: form,
		body: []byte("title=m&basemap=Acetate&layers[][source]=finder:" + strings.TrimPrefix(ds, "/datasets/"))}), 201)
	g := decode[map[string]any](t, must(t, ts.do(req{method: "POST", path: "/groups.json", user: "admin", ctype: form, body: []byte("name=staff")}), 201))
	ids := map[string]string{
		"/datasets/{id}": ds, "/maps/{id}": "/maps/1", "/groups/{id}": "/groups/" + itoa(int64(g["id"].(float64))),
		"/users/{user}": "/users/alice", "/layers/{index}": "/layers/0",
	}
	reads := 0
	for path, item := range doc.Paths {
		raw, ok := item["get"]
		if !ok || strings.HasSuffix(path, "/fetch") { // a GET that refetches: a write
			continue
		}
		var op struct {
			Formats []string `json:"x-formats"`
		}
		if err := json.Unmarshal(raw, &op); err != nil {
			t.Fatal(err)
		}
		p := path
		for k, v := range ids {
			p = strings.ReplaceAll(p, k, v)
		}
		if strings.Contains(p, "{") {
			t.Fatalf("%s: no value for its parameters", path)
		}
		reads++
		for _, f := range op.Formats {
			if w := ts.get(p+"."+f, "admin"); w.Code != 200 {
				t.Errorf("GET %s.%s: %d %.200s", p, f, w.Code, w.Body)
			}
		}
		for _, f := range suffixes {
			if !slices.Contains(op.Formats, f) && path != "/healthz" {
				if w := ts.get(p+"."+f, "admin"); w.Code != 404 {
					t.Errorf("GET %s.%s, a format it does not list: %d", p, f, w.Code)
				}
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
	ts := newServer(t)
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(must(t, ts.get("/api", ""), 200), &doc); err != nil {
		t.Fatal(err)
	}
	ds := ts.createCSV("?title=towns", "name,lat,lon\nAlpha,10,20\n")
	form := "application/x-www-form-urlencoded"
	must(t, ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: form,
		body: []byte("title=m&basemap=Acetate&layers[][source]=finder:" + strings.TrimPrefix(ds, "/datasets/"))}), 201)
	must(t, ts.do(req{method: "POST", path: "/groups.json", user: "admin", ctype: form, body: []byte("name=staff")}), 201)
	values := strings.NewReplacer("/datasets/{id}", ds, "/maps/{id}", "/maps/1", "/groups/{id}", "/groups/1",
		"{user}", "alice", "{index}", "0", "{login}", "bob", "{ignored}", "x")
	required, open := 0, 0
	for path, item := range doc.Paths {
		for method, raw := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				Security []map[string][]string
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			p := values.Replace(path)
			if strings.Contains(p, "{") {
				t.Fatalf("%s: no value for its parameters", path)
			}
			if path == "/search/opensearch" {
				p += ".xml"
			}
			w := ts.do(req{method: strings.ToUpper(method), path: p})
			switch auth := len(op.Security) == 1 && len(op.Security[0]["basic"]) == 0 && op.Security[0]["basic"] != nil; {
			case auth:
				required++
				if w.Code != 401 {
					t.Errorf("%s %s anonymous: %d, want 401 (the document requires credentials)", method, p, w.Code)
				}
			case method == "get":
				open++
				if w.Code != 200 {
					t.Errorf("%s %s anonymous: %d, want 200 (the document asks for no credentials)", method, p, w.Code)
				}
			}
		}
	}
	if required < 20 || open < 8 {
		t.Errorf("%d operations requiring credentials, %d reads without", required, open)
	}
}
