package api_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"mapcommons/api"
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
