package api_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// editFeature is a feature of a GeoJSON features answer.
type editFeature struct {
	ID         int64          `json:"id"`
	Properties map[string]any `json:"properties"`
	Geometry   map[string]any `json:"geometry"`
}

// editState reads a dataset's features (GeoJSON, with their ids, in
// position order), and the ETag of its answer, which moves with the
// dataset's version.
func editState(t *testing.T, ts *testServer, path string) ([]editFeature, string) {
	t.Helper()
	w := ts.get(path+"/features.json?geojson=1&limit=100", "alice")
	fc := decode[struct {
		Features []editFeature `json:"features"`
	}](t, must(t, w, 200))
	return fc.Features, w.Header().Get("ETag")
}

func idsAndNames(fs []editFeature) ([]int64, string) {
	var ids []int64
	var names []string
	for _, f := range fs {
		ids = append(ids, f.ID)
		names = append(names, fmt.Sprint(f.Properties["name"]))
	}
	return ids, strings.Join(names, ",")
}

func TestFeaturePut(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createCSV("?title=Wells", "n,name,lat,lon\n1,a,10,20\n2,b,11,21\n3,c,12,22\n")
	put := func(user, p, ctype, body string) *httptest.ResponseRecorder {
		return ts.do(req{method: "PUT", path: path + p, user: user, ctype: ctype, body: []byte(body)})
	}
	t.Run("OK", func(t *testing.T) {
		got := decode[editFeature](t, must(t, put("alice", "/features/2.json", jsonType,
			`{"n": 20, "name": "B", "geometry": {"type": "Point", "coordinates": [30, 15]}}`), 200))
		if got.ID != 2 || got.Properties["name"] != "B" || got.Properties["n"] != 20.0 || fmt.Sprint(got.Geometry["coordinates"]) != "[30 15]" {
			t.Fatalf("answer %+v", got)
		}
		fs, _ := editState(t, ts, path)
		if ids, names := idsAndNames(fs); !slices.Equal(ids, []int64{1, 2, 3}) || names != "a,B,c" {
			t.Fatalf("after PUT: ids %v names %s", ids, names)
		}
		// Its position is kept: the second of the flat answer.
		flat := decode[[]map[string]any](t, must(t, ts.get(path+"/features.json?start=1&limit=1", ""), 200))
		if len(flat) != 1 || flat[0]["name"] != "B" {
			t.Fatalf("position 1: %v", flat)
		}
		doc := datasetDoc(t, ts, path, "")
		if doc["feature_count"] != 3.0 || fmt.Sprint(doc["extent"]) != "[20 10 30 15]" {
			t.Fatalf("dataset after PUT: count %v extent %v", doc["feature_count"], doc["extent"])
		}
		if st := doc["stats"].(map[string]any)["n"].(map[string]any); st["max"] != 20.0 {
			t.Fatalf("stats after PUT %v", st)
		}
		// Without the suffix, a GeoJSON Feature (its id, when given, the path's).
		must(t, put("alice", "/features/3", "application/geo+json",
			`{"type": "Feature", "id": 3, "properties": {"name": "C"}, "geometry": null}`), 200)
		fs, _ = editState(t, ts, path)
		if _, names := idsAndNames(fs); names != "a,B,C" || fs[2].Geometry != nil || fs[2].Properties["n"] != nil {
			t.Fatalf("after the second PUT: %+v", fs)
		}
	})
	bad := []struct {
		name, user, path, ctype, body string
		status                        int
		code, want                    string
	}{
		{"ErrUnknownFeature", "alice", "/features/99.json", jsonType, `{"name": "x", "geometry": null}`, 404, "not_found", "no feature 99"},
		{"ErrNotAnID", "alice", "/features/x.json", jsonType, `{"name": "x", "geometry": null}`, 404, "not_found", "feature"},
		{"ErrGeometry", "alice", "/features/1.json", jsonType, `{"name": "x", "geometry": {"type": "Point", "coordinates": [500, 1]}}`, 400, "invalid", "geometry"},
		{"ErrNoGeometry", "alice", "/features/1.json", jsonType, `{"name": "x"}`, 400, "invalid", "no geometry"},
		{"ErrUnknownAttribute", "alice", "/features/1.json", jsonType, `{"colour": "red", "geometry": null}`, 400, "invalid", `no attribute "colour"`},
		{"ErrWrongType", "alice", "/features/1.json", jsonType, `{"n": "seven", "geometry": null}`, 400, "invalid", "integer"},
		{"ErrOtherID", "alice", "/features/1.json", jsonType, `{"type": "Feature", "id": 2, "properties": {}, "geometry": null}`, 400, "invalid", "id 2"},
		{"ErrTwo", "alice", "/features/1.json", jsonType, `{"name": "x", "geometry": null} {}`, 400, "invalid", "one feature"},
		{"ErrPlainText", "alice", "/features/1.json", "text/plain", `{"name": "x", "geometry": null}`, 415, "unsupported_type", "JSON"},
		{"ErrAnonymous", "", "/features/1.json", jsonType, `{"name": "x", "geometry": null}`, 401, "unauthorized", "authentication"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			before, etag := editState(t, ts, path)
			errorOf(t, put(c.user, c.path, c.ctype, c.body), c.status, c.code, c.want)
			if after, etag2 := editState(t, ts, path); fmt.Sprint(after) != fmt.Sprint(before) || etag2 != etag {
				t.Fatalf("a refused PUT changed the dataset: %+v (%s), was %+v (%s)", after, etag2, before, etag)
			}
		})
	}
	t.Run("ErrViewer", func(t *testing.T) {
		// bob may see the dataset but not change it: refused as feature create refuses him.
		create := ts.do(req{method: "POST", path: path + "/features.json", user: "bob", ctype: jsonType, body: []byte(`[{"name": "x", "geometry": null}]`)})
		w := put("bob", "/features/1.json", jsonType, `{"name": "x", "geometry": null}`)
		if create.Code != 403 || w.Code != create.Code || w.Body.String() != create.Body.String() {
			t.Fatalf("PUT by a viewer: %d %s; create: %d %s", w.Code, w.Body, create.Code, create.Body)
		}
	})
}

func TestFeatureEdits(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.MaxFeatures = 6 })
	path := ts.createCSV("?title=Wells", "n,name,lat,lon\n1,a,10,20\n2,b,11,21\n3,c,12,22\n4,d,13,23\n")
	edits := func(user, body string) *httptest.ResponseRecorder {
		return ts.do(req{method: "POST", path: path + "/edits.json", user: user, ctype: jsonType, body: []byte(body)})
	}
	type result struct {
		ID       int64 `json:"id"`
		ObjectID int64 `json:"objectId"`
		Success  bool  `json:"success"`
	}
	type answer struct {
		Adds    []result `json:"addResults"`
		Updates []result `json:"updateResults"`
		Deletes []result `json:"deleteResults"`
	}
	ids := func(rs []result) []int64 {
		var out []int64
		for _, r := range rs {
			if !r.Success || r.ObjectID != r.ID {
				t.Fatalf("result %+v", r)
			}
			out = append(out, r.ID)
		}
		return out
	}
	// Refused batches first: each leaves the dataset as it was.
	bad := []struct {
		name, body string
		status     int
		code, want string
	}{
		{"ErrUnknownUpdate", `{"adds": [{"name": "e", "geometry": null}], "updates": [{"id": 2, "name": "B", "geometry": null}, {"id": 99, "name": "x", "geometry": null}]}`, 400, "invalid", "updates[1]: there is no feature 99"},
		{"ErrUnknownDelete", `{"updates": [{"id": 2, "name": "B", "geometry": null}], "deletes": [1, 99]}`, 400, "invalid", "deletes[1]"},
		{"ErrUpdatedAndDeleted", `{"updates": [{"id": 2, "name": "B", "geometry": null}], "deletes": [2]}`, 400, "invalid", "deletes[0]: feature 2 is named twice"},
		{"ErrDeletedTwice", `{"deletes": [3, 3]}`, 400, "invalid", "deletes[1]"},
		{"ErrBadItem", `{"adds": [{"name": "e", "geometry": null}], "updates": [{"id": 2, "name": "B", "geometry": null}, {"id": 3, "colour": "red", "geometry": null}, {"id": 4, "name": "D", "geometry": null}]}`, 400, "invalid", `updates[1]: no attribute "colour"`},
		{"ErrBadGeometry", `{"adds": [{"name": "e", "geometry": {"type": "Point", "coordinates": [1, 500]}}], "deletes": [1]}`, 400, "invalid", "adds[0]: geometry"},
		{"ErrUpdateWithoutID", `{"updates": [{"name": "B", "geometry": null}]}`, 400, "invalid", `updates[0]: no "id"`},
		{"ErrBadID", `{"deletes": ["one"]}`, 400, "invalid", "deletes[0]"},
		{"ErrUnknownMember", `{"removes": [1]}`, 400, "invalid", "removes"},
		{"ErrNotObject", `[1]`, 400, "invalid", "object"},
		{"ErrTooMany", `{"adds": [{"name": "e", "geometry": null}, {"name": "f", "geometry": null}, {"name": "g", "geometry": null}]}`, 413, "too_large", "6 features"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			before, etag := editState(t, ts, path)
			errorOf(t, edits("alice", c.body), c.status, c.code, c.want)
			if after, etag2 := editState(t, ts, path); fmt.Sprint(after) != fmt.Sprint(before) || etag2 != etag {
				t.Fatalf("a refused edit changed the dataset: %+v (%s), was %+v (%s)", after, etag2, before, etag)
			}
			if ids, names := idsAndNames(before); !slices.Equal(ids, []int64{1, 2, 3, 4}) || names != "a,b,c,d" {
				t.Fatalf("features %v %s", ids, names)
			}
		})
	}
	t.Run("OK", func(t *testing.T) {
		_, etag := editState(t, ts, path)
		got := decode[answer](t, must(t, edits("alice", `{
			"adds": [{"n": 5, "name": "e", "geometry": {"type": "Point", "coordinates": [40, 30]}},
				{"type": "Feature", "id": 1, "properties": {"name": "f"}, "geometry": null},
				{"name": "g", "geometry": null}],
			"updates": [{"id": 2, "n": 20, "name": "B", "geometry": {"type": "Point", "coordinates": [21, 11]}},
				{"type": "Feature", "id": 4, "properties": {"name": "D", "n": 40}, "geometry": null}],
			"deletes": [1]}`), 200))
		if !slices.Equal(ids(got.Adds), []int64{5, 6, 7}) || !slices.Equal(ids(got.Updates), []int64{2, 4}) || !slices.Equal(ids(got.Deletes), []int64{1}) {
			t.Fatalf("answer %+v", got)
		}
		fs, etag2 := editState(t, ts, path)
		if ids, names := idsAndNames(fs); !slices.Equal(ids, []int64{2, 3, 4, 5, 6, 7}) || names != "B,c,D,e,f,g" || etag2 == etag {
			t.Fatalf("after the edit: ids %v names %s (ETag %s, was %s)", ids, names, etag2, etag)
		}
		// Positions: the flat answer in the same order, from 0.
		flat := decode[[]map[string]any](t, must(t, ts.get(path+"/features.json?start=2&limit=1", ""), 200))
		if len(flat) != 1 || flat[0]["name"] != "D" || flat[0]["n"] != 40.0 {
			t.Fatalf("position 2: %v", flat)
		}
		doc := datasetDoc(t, ts, path, "")
		if doc["feature_count"] != 6.0 || fmt.Sprint(doc["extent"]) != "[21 11 40 30]" {
			t.Fatalf("dataset after the edit: count %v extent %v", doc["feature_count"], doc["extent"])
		}
		if st := doc["stats"].(map[string]any)["n"].(map[string]any); st["max"] != 40.0 || st["min"] != 3.0 {
			t.Fatalf("stats after the edit %v", st)
		}
		// An empty edit, without the suffix: nothing to do.
		w := ts.do(req{method: "POST", path: path + "/edits", user: "alice", ctype: jsonType, body: []byte(`{"rollbackOnFailure": true}`)})
		if got := decode[answer](t, must(t, w, 200)); got.Adds == nil || len(got.Adds)+len(got.Updates)+len(got.Deletes) != 0 {
			t.Fatalf("empty edit: %s", w.Body)
		}
		// The dataset is full (6): deleting one makes room for one.
		errorOf(t, edits("alice", `{"adds": [{"name": "h", "geometry": null}]}`), 413, "too_large", "")
		got = decode[answer](t, must(t, edits("alice", `{"adds": [{"name": "h", "geometry": null}], "deletes": [7]}`), 200))
		if !slices.Equal(ids(got.Adds), []int64{8}) {
			t.Fatalf("answer %+v", got)
		}
	})
	t.Run("ErrAuth", func(t *testing.T) {
		body := `{"adds": [{"name": "x", "geometry": null}]}`
		errorOf(t, edits("", body), 401, "unauthorized", "")
		create := ts.do(req{method: "POST", path: path + "/features.json", user: "bob", ctype: jsonType, body: []byte(`[{"name": "x", "geometry": null}]`)})
		w := edits("bob", body)
		if create.Code != 403 || w.Code != create.Code || w.Body.String() != create.Body.String() {
			t.Fatalf("edits by a viewer: %d %s; create: %d %s", w.Code, w.Body, create.Code, create.Body)
		}
		errorOf(t, ts.do(req{method: "POST", path: path + "/edits.json", user: "alice", ctype: "text/plain", body: []byte(body)}), 415, "unsupported_type", "")
		errorOf(t, ts.do(req{method: "GET", path: path + "/edits.json", user: "alice"}), 405, "method_not_allowed", "")
	})
}

// TestFeatureEditsPrivate: to an outsider, a private dataset's edit routes
// answer 404, as feature create does: its existence is not told.
func TestFeatureEditsPrivate(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	path := ts.createCSV("?title=Secret", "n,name,lat,lon\n1,a,10,20\n")
	id, err := strconv.ParseInt(strings.TrimPrefix(path, "/datasets/"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	none := []mapcommons.Permission{}
	if _, err := ts.svc.Datasets.UpdateDataset(context.Background(), id, mapcommons.MetadataUpdate{Permissions: &none}); err != nil {
		t.Fatal(err)
	}
	create := ts.do(req{method: "POST", path: path + "/features.json", user: "bob", ctype: jsonType, body: []byte(`[{"name": "x", "geometry": null}]`)})
	if create.Code != 404 {
		t.Fatalf("create by an outsider: %d %s", create.Code, create.Body)
	}
	for _, r := range []req{
		{method: "PUT", path: path + "/features/1.json", body: []byte(`{"name": "x", "geometry": null}`)},
		{method: "PUT", path: path + "/features/99.json", body: []byte(`{"name": "x", "geometry": null}`)},
		{method: "PATCH", path: path + "/features/1.json", body: []byte(`{"name": "x"}`)},
		{method: "PATCH", path: path + "/features/99.json", body: []byte(`{"name": "x"}`)},
		{method: "POST", path: path + "/edits.json", body: []byte(`{"deletes": [1]}`)},
	} {
		r.user, r.ctype = "bob", jsonType
		w := ts.do(r)
		errorOf(t, w, 404, "not_found", "")
		if w.Body.String() != create.Body.String() {
			t.Fatalf("%s %s by an outsider: %s; create: %s", r.method, r.path, w.Body, create.Body)
		}
	}
	fs, _ := editState(t, ts, path)
	if ids, names := idsAndNames(fs); !slices.Equal(ids, []int64{1}) || names != "a" {
		t.Fatalf("features %v %s", ids, names)
	}
}
