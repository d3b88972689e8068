package api_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestOGCTilesOAS30: the Tiles OpenAPI 3.0 class is declared, and the API
// definition at /api (of the OpenAPI 3.0 type the landing page links)
// describes every tiles path with the standard's names for its
// parameters (tileMatrixSetId, tileMatrix, tileRow, tileCol), each GET
// with its success, its 404 and a default for the other errors.
func TestOGCTilesOAS30(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	conf := decode[struct{ ConformsTo []string }](t, must(t, ts.get("/ogc/conformance", ""), 200))
	if !slices.Contains(conf.ConformsTo, "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/oas30") {
		t.Errorf("conformance lacks tiles oas30: %v", conf.ConformsTo)
	}
	w := ts.get("/api", "")
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/vnd.oai.openapi+json;version=3.0") {
		t.Errorf("/api is %q", ct)
	}
	var doc struct {
		OpenAPI    string `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Parameters map[string]openAPIParam
		}
	}
	if err := json.Unmarshal(must(t, w, 200), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0") {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	want := []string{
		"/ogc/tileMatrixSets",
		"/ogc/tileMatrixSets/{tileMatrixSetId}",
		"/ogc/collections/{collectionId}/tiles",
		"/ogc/collections/{collectionId}/tiles/{tileMatrixSetId}",
		"/ogc/collections/{collectionId}/tiles/{tileMatrixSetId}/tilejson",
		"/ogc/collections/{collectionId}/tiles/{tileMatrixSetId}/{tileMatrix}/{tileRow}/{tileCol}",
	}
	for _, p := range want {
		item, ok := doc.Paths[p]
		if !ok {
			t.Errorf("no path %s", p)
			continue
		}
		var get struct {
			Parameters []openAPIParam
			Responses  map[string]json.RawMessage
		}
		if err := json.Unmarshal(item["get"], &get); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var shared []openAPIParam
		if raw := item["parameters"]; raw != nil {
			if err := json.Unmarshal(raw, &shared); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
		var names []string
		for _, prm := range append(shared, get.Parameters...) {
			if prm.Ref != "" {
				prm = doc.Components.Parameters[strings.TrimPrefix(prm.Ref, "#/components/parameters/")]
			}
			if prm.In == "path" {
				names = append(names, prm.Name)
			}
		}
		for _, seg := range strings.Split(p, "/") {
			if name, ok := strings.CutPrefix(strings.TrimSuffix(seg, "}"), "{"); ok && !slices.Contains(names, name) {
				t.Errorf("%s: no path parameter %s among %v", p, name, names)
			}
		}
		for _, status := range []string{"200", "default"} {
			if get.Responses[status] == nil {
				t.Errorf("%s: no %s response", p, status)
			}
		}
		if strings.Contains(p, "{") && get.Responses["404"] == nil {
			t.Errorf("%s: no 404", p)
		}
	}
}

// openAPIParam is a parameter of an OpenAPI document, or a reference to one.
type openAPIParam struct {
	Ref      string `json:"$ref"`
	Name, In string
}
