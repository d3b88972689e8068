package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// The OGC's own OpenAPI 3.0 building blocks of Features Part 1
// (testdata/ogc/ogcapi-features-1-oas30.yaml, as the standard's repository
// publishes them) describe each answer of the core: its status, its
// content type and the schema of its body.

// officialFeatures is that document, loaded.
func officialFeatures(t *testing.T) *openapi3.T {
	t.Helper()
	b, err := os.ReadFile("../testdata/ogc/ogcapi-features-1-oas30.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	doc.Paths = openapi3.NewPaths() // building blocks: no paths of its own
	// (Its examples abbreviate coordinates as "…", which no schema takes.)
	if err := doc.Validate(openapi3.NewLoader().Context, openapi3.DisableExamplesValidation()); err != nil {
		t.Fatalf("the official document: %v", err)
	}
	return doc
}

// fitsResponse checks an answer against one of the document's responses
// (LandingPage, Features, …): its body, decoded, must match the schema of
// the answer's content type there. A response with no content described
// (NotFound, NotAcceptable) takes any body.
func fitsResponse(doc *openapi3.T, name string, w *httptest.ResponseRecorder) error {
	ref := doc.Components.Responses[name]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("the document has no response %s", name)
	}
	if len(ref.Value.Content) == 0 {
		return nil
	}
	ct := w.Header().Get("Content-Type")
	media := ref.Value.Content.Get(ct)
	if media == nil {
		return fmt.Errorf("Content-Type %q is not one the %s response gives", ct, name)
	}
	var v any
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		return fmt.Errorf("the body is no JSON: %v", err)
	}
	return media.Schema.Value.VisitJSON(v, openapi3.MultiErrors())
}

// TestOGCAnswersFitTheOfficialDocument: every answer of the core —
// landing page, conformance, collections, a collection, pages of items
// (bounded, in a box, in time, empty), one item, and the errors — fits
// the OGC's own description of it, for points with dates and nulls, the
// standard's countries (multipolygons) and lines. (As the owner sees
// them: the temporal extent is for those who may see statistics.)
func TestOGCAnswersFitTheOfficialDocument(t *testing.T) {
	t.Parallel()
	doc := officialFeatures(t)
	ts := newServer(t)
	points := createDated(t, ts, "towns", "2021-04-16", nil, "1999-12-31")
	gp, err := os.ReadFile("../testdata/ogc/ne110m4cql2.gpkg")
	if err != nil {
		t.Fatal(err)
	}
	w := ts.do(req{method: "POST", path: "/datasets.json?layer=ne_110m_admin_0_countries", user: "alice", ctype: "application/geopackage+sqlite3", body: gp})
	must(t, w, http.StatusCreated)
	countries := strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base+"/datasets/"), ".json")
	lines := strings.TrimPrefix(ts.createFrom(t, "application/geo+json", []byte(`{"type":"FeatureCollection","features":[
		{"type":"Feature","properties":{"name":"a","n":1},"geometry":{"type":"LineString","coordinates":[[0,0],[1,1],[2,0]]}},
		{"type":"Feature","properties":{"name":null,"n":2},"geometry":{"type":"MultiLineString","coordinates":[[[5,5],[6,6]],[[7,7],[8,8]]]}}]}`)), "/datasets/")

	type check struct {
		path, response string
		status         int
	}
	checks := []check{
		{"/ogc", "LandingPage", 200},
		{"/ogc/conformance", "ConformanceDeclaration", 200},
		{"/ogc/collections", "Collections", 200},
		{"/ogc/collections/999999", "NotFound", 404},
		{"/ogc/collections/" + points + "/items?limit=0", "InvalidParameter", 400},
		{"/ogc/collections/" + points + "/items?bbox=1,2,3", "InvalidParameter", 400},
		{"/ogc/collections/" + points + "/items?datetime=notadate", "InvalidParameter", 400},
	}
	for _, id := range []string{points, countries, lines} {
		c := "/ogc/collections/" + id
		checks = append(checks,
			check{c, "Collection", 200},
			check{c + "/items", "Features", 200},
			check{c + "/items?limit=2", "Features", 200},
			check{c + "/items?limit=1&offset=1", "Features", 200},
			check{c + "/items?bbox=-180,-90,180,90&limit=3", "Features", 200},
			check{c + "/items?bbox=170,80,171,81", "Features", 200}, // empty
			check{c + "/items?datetime=2020-01-01T00:00:00Z/..", "Features", 200},
			check{c + "/items/1", "Feature", 200},
			check{c + "/items/999999", "NotFound", 404},
		)
	}
	for _, c := range checks {
		w := ts.get(c.path, "alice")
		if w.Code != c.status {
			t.Errorf("GET %s: %d, want %d: %.300s", c.path, w.Code, c.status, w.Body.String())
			continue
		}
		if err := fitsResponse(doc, c.response, w); err != nil {
			t.Errorf("GET %s does not fit the official %s response: %v; body %.300s", c.path, c.response, err, w.Body.String())
		}
	}

	// The check can fail: the same answers, made wrong, do not fit.
	for _, c := range []struct {
		path, response string
		spoil          func(map[string]any)
	}{
		{"/ogc", "LandingPage", func(d map[string]any) { delete(d, "links") }},
		{"/ogc/collections/" + points, "Collection", func(d map[string]any) {
			d["extent"].(map[string]any)["temporal"].(map[string]any)["interval"] = []any{[]any{"2021-04-16", nil}}
		}},
		{"/ogc/collections/" + lines + "/items", "Features", func(d map[string]any) { d["numberReturned"] = "two" }},
		{"/ogc/collections/" + countries + "/items/1", "Feature", func(d map[string]any) { d["type"] = "Country" }},
	} {
		w := ts.get(c.path, "alice")
		var d map[string]any
		if err := json.Unmarshal(must(t, w, 200), &d); err != nil {
			t.Fatal(err)
		}
		c.spoil(d)
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		w.Body.Reset()
		w.Body.Write(b)
		if err := fitsResponse(doc, c.response, w); err == nil {
			t.Errorf("GET %s, spoiled, still fits the %s response", c.path, c.response)
		}
	}
}
