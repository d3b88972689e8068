package api_test

import (
	"fmt"
	"strings"
	"testing"

	"mapcommons/api"
)

// TestGeoJSONAsJSON: GeoJSON posted as application/json (what web code
// sends) is read as GeoJSON, whatever the order of its members and however
// large (within max-upload, not max-form); other JSON is parameters as
// before.
func TestGeoJSONAsJSON(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.MaxForm = 4 << 10 })
	var big strings.Builder
	big.WriteString(`{"features":[`)
	for i := 0; i < 2000; i++ {
		if i > 0 {
			big.WriteString(",")
		}
		fmt.Fprintf(&big, `{"type":"Feature","properties":{"n":%d,"nested":{"a":[1,{"b":2}]}},"geometry":{"type":"Point","coordinates":[%d.5,%d.25]}}`, i, i%170, i%80)
	}
	big.WriteString(`],"type":"FeatureCollection"}`)
	for _, c := range []struct {
		name, body string
		count      float64
	}{
		{"collection, type last, larger than max-form", big.String(), 2000},
		{"feature", `{"type":"Feature","properties":{"name":"a"},"geometry":{"type":"Point","coordinates":[1,2]}}`, 1},
		{"geometry", `{"coordinates":[[1,2],[3,4]],"type":"LineString"}`, 1},
	} {
		w := ts.do(req{method: "POST", path: "/datasets.json?title=Web", user: "alice", ctype: "application/json; charset=utf-8", body: []byte(c.body)})
		if w.Code != 201 {
			t.Fatalf("%s: %d %s", c.name, w.Code, w.Body)
		}
		d := decode[map[string]any](t, w.Body.Bytes())
		if d["feature_count"] != c.count || d["type"] != "geojson" || d["title"] != "Web" {
			t.Errorf("%s: %v features, type %v, title %v", c.name, d["feature_count"], d["type"], d["title"])
		}
	}
	// JSON that is not GeoJSON is parameters, as before.
	errorOf(t, ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: "application/json", body: []byte(`{"dataset":{"title":"x"}}`)}),
		400, "invalid", "no data")
	errorOf(t, ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: "application/json", body: []byte(`{"title": `)}),
		400, "invalid", "JSON")
	errorOf(t, ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: "application/json", body: []byte(`{"title":"` + strings.Repeat("x", 5000) + `"}`)}),
		413, "too_large", "max-form")
}
