package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestDatasetUpdateType: a URL-registered dataset's type changes how its
// feed is read from the next fetch on, validated; an upload's type is its
// file's: another is a 400, its own (clients echo the dataset back) fine.
func TestDatasetUpdateType(t *testing.T) {
	t.Parallel()
	ts := newServer(t, allowPrivate)
	rm := newRemote(t)
	geo := `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"n":1},"geometry":{"type":"Point","coordinates":[1,2]}}]}`
	// Served as text/plain from a .txt path: read as what it says it is.
	rm.set("/data.txt", remotePage{ctype: "text/plain", body: "name,lat,lon\na,1,2\nb,3,4\n"})
	w := ts.do(req{method: "POST", path: "/datasets.json?url=" + rm.URL + "/data.txt&type=csv", user: "alice"})
	must(t, w, http.StatusCreated)
	feed := strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
	if d := datasetDoc(t, ts, feed, ""); d["feature_count"] != 2.0 || d["url_type"] != "csv" {
		t.Fatalf("registered: %v %v", d["feature_count"], d["url_type"])
	}
	for _, bad := range []string{"wms", "pdf"} {
		errorOf(t, ts.do(req{method: "PUT", path: feed + ".json", user: "alice", ctype: "application/x-www-form-urlencoded",
			body: []byte("dataset[type]=" + bad)}), 400, "invalid", "type")
	}
	rm.set("/data.txt", remotePage{ctype: "text/plain", body: geo})
	must(t, ts.do(req{method: "PUT", path: feed + ".json", user: "alice", ctype: "application/x-www-form-urlencoded", body: []byte("type=geojson")}), 201)
	if d := datasetDoc(t, ts, feed, ""); d["url_type"] != "geojson" || d["feature_count"] != 2.0 {
		t.Fatalf("after the type change, before a fetch: %v %v", d["url_type"], d["feature_count"])
	}
	d := decode[map[string]any](t, must(t, ts.do(req{method: "PUT", path: feed + "/fetch.json", user: "alice"}), 200))
	if d["feature_count"] != 1.0 {
		t.Fatalf("refetched as GeoJSON: %v", d)
	}

	up := ts.createCSV("?title=Up", "lat,lon\n1,2\n")
	errorOf(t, ts.do(req{method: "PUT", path: up + ".json", user: "alice", ctype: "application/json", body: []byte(`{"dataset":{"type":"kml"}}`)}),
		400, "invalid", "type")
	must(t, ts.do(req{method: "PUT", path: up + ".json", user: "alice", ctype: "application/json", body: []byte(`{"dataset":{"type":"csv","title":"Echo"}}`)}), 201)
	if d := datasetDoc(t, ts, up, ""); d["title"] != "Echo" || d["type"] != "csv" {
		t.Fatalf("echoed update: %v %v", d["title"], d["type"])
	}
}
