package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestFeatureCreate(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createCSV("?title=Wells", "n,name,lat,lon\n1,a,10,20\n2,b,11,21\n")
	names := func() []string {
		var out []string
		for _, f := range decode[[]map[string]any](t, must(t, ts.get(path+"/features.json?limit=100", ""), 200)) {
			out = append(out, fmt.Sprint(f["name"]))
		}
		return out
	}
	post := func(user, body string) *httptest.ResponseRecorder {
		return ts.do(req{method: "POST", path: path + "/features.json", user: user, ctype: "application/json", body: []byte(body)})
	}
	t.Run("OKFlatArray", func(t *testing.T) {
		w := post("alice", `[{"n": 3, "name": "c", "geometry": {"type": "Point", "coordinates": [22, 12]}},
			{"name": "d", "geometry": null}]`)
		got := decode[map[string]any](t, must(t, w, http.StatusCreated))
		if got["added"] != 2.0 || got["feature_count"] != 4.0 {
			t.Fatalf("answer %v", got)
		}
		if loc := w.Header().Get("Location"); loc != base+path+"/features.json?start=2&limit=2" {
			t.Fatalf("Location %q", loc)
		}
		doc := datasetDoc(t, ts, path, "")
		if doc["feature_count"] != 4.0 || fmt.Sprint(doc["extent"]) != "[20 10 22 12]" {
			t.Fatalf("dataset after adding: count %v extent %v", doc["feature_count"], doc["extent"])
		}
		if st := doc["stats"].(map[string]any)["n"].(map[string]any); st["max"] != 3.0 || st["mean"] != 2.0 {
			t.Fatalf("stats after adding %v", st)
		}
		if got := strings.Join(names(), ","); got != "a,b,c,d" {
			t.Fatalf("features %s", got)
		}
	})
	t.Run("OKFeatureCollectionAndFeature", func(t *testing.T) {
		must(t, post("alice", `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"e","n":5},"geometry":{"type":"Point","coordinates":[1,2]}}]}`), 201)
		must(t, post("admin", `{"type":"Feature","properties":{"name":"f"},"geometry":{"type":"Point","coordinates":[3,4]}}`), 201)
		if got := strings.Join(names(), ","); got != "a,b,c,d,e,f" {
			t.Fatalf("features %s", got)
		}
	})
	bad := []struct{ name, user, body, status, want string }{
		{"ErrUnknownAttribute", "alice", `[{"name":"x","geometry":null},{"colour":"red","geometry":null}]`, "400", `feature 1: no attribute "colour"`},
		{"ErrWrongType", "alice", `[{"n":"seven","geometry":null}]`, "400", `attribute "n": expected an integer`},
		{"ErrFraction", "alice", `[{"n":1.5,"geometry":null}]`, "400", "integer"},
		{"ErrNoGeometry", "alice", `[{"name":"x","geometry":null},{"name":"y"}]`, "400", "feature 1: no geometry"},
		{"ErrFeatureNoGeometry", "alice", `{"type":"Feature","properties":{"name":"f"}}`, "400", "feature 0: no geometry"},
		{"ErrGeometry", "alice", `[{"name":"x","geometry":{"type":"Point","coordinates":[500,1]}}]`, "400", "geometry"},
		{"ErrMalformed", "alice", `[{"name":"x"`, "400", "feature 0"},
		{"ErrNotFeatures", "alice", `42`, "400", "array"},
		{"ErrEmpty", "alice", ``, "400", "no features"},
		{"ErrAnonymous", "", `[{"name":"x"}]`, "401", "authentication"},
		{"ErrNotOwner", "bob", `[{"name":"x"}]`, "403", "owner"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			var status int
			fmt.Sscan(c.status, &status)
			code := map[int]string{400: "invalid", 401: "unauthorized", 403: "forbidden"}[status]
			errorOf(t, post(c.user, c.body), status, code, c.want)
			if got := len(names()); got != 6 {
				t.Fatalf("a refused create left %d features", got)
			}
		})
	}
}

func TestFeatureDelete(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createCSV("", "name,lat,lon\na,1,1\nb,2,2\nc,3,3\nd,4,4\ne,5,5\n")
	id := strings.TrimPrefix(path, "/datasets/")
	names := func() string {
		var out []string
		for _, f := range decode[[]map[string]any](t, must(t, ts.get(path+"/features.json", ""), 200)) {
			out = append(out, f["name"].(string))
		}
		return strings.Join(out, "")
	}
	errorOf(t, ts.do(req{method: "DELETE", path: path + "/features.json?ids=1,9", user: "alice"}), 400, "invalid", "ids")
	errorOf(t, ts.do(req{method: "DELETE", path: path + "/features.json?ids=x", user: "alice"}), 400, "invalid", "ids")
	errorOf(t, ts.do(req{method: "DELETE", path: path + "/features.json", user: "alice"}), 400, "invalid", "ids: missing")
	errorOf(t, ts.do(req{method: "DELETE", path: path + "/features.json?ids=1", user: "bob"}), 403, "forbidden", "")
	errorOf(t, ts.do(req{method: "DELETE", path: path + "/features.json?ids=1"}), 401, "unauthorized", "")
	if got := names(); got != "abcde" {
		t.Fatalf("refused deletes changed the features: %s", got)
	}
	w := ts.do(req{method: "DELETE", path: path + "/features.json?ids=0,2", user: "alice"})
	if body := must(t, w, 204); len(body) != 0 || w.Header().Get("Status") != "204 No Content" {
		t.Fatalf("delete answered %q", body)
	}
	if got := names(); got != "bde" {
		t.Fatalf("after deleting 0 and 2: %s", got)
	}
	// Positions moved down: 1 is now "d". The spec's path form, under /maps.
	must(t, ts.do(req{method: "DELETE", path: "/maps/" + id + "/features/77.json?ids=1", user: "alice"}), 204)
	if got := names(); got != "be" {
		t.Fatalf("after deleting 1: %s", got)
	}
	if doc := datasetDoc(t, ts, path, ""); doc["feature_count"] != 2.0 || fmt.Sprint(doc["extent"]) != "[2 2 5 5]" {
		t.Fatalf("dataset after deletes %v %v", doc["feature_count"], doc["extent"])
	}
}
