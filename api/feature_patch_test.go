package api_test

// PATCH of one feature (a JSON Merge Patch, RFC 7396) and the partial
// updates of edits.json.

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

const mergePatchType = "application/merge-patch+json"

// featureOf is the feature with id id of fs (a zero feature when none).
func featureOf(fs []editFeature, id int64) editFeature {
	for _, f := range fs {
		if f.ID == id {
			return f
		}
	}
	return editFeature{}
}

// point is the coordinates of a point geometry of an answer ("<nil>": none).
func point(f editFeature) string {
	if f.Geometry == nil {
		return "<nil>"
	}
	return fmt.Sprint(f.Geometry["coordinates"])
}

func TestFeaturePatch(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createCSV("?title=Wells", "n,name,lat,lon\n1,a,10,20\n2,b,11,21\n3,c,12,22\n")
	patch := func(user, p, ctype, body string) *httptest.ResponseRecorder {
		return ts.do(req{method: "PATCH", path: path + p, user: user, ctype: ctype, body: []byte(body)})
	}
	// want checks feature id as stored: its n, name and point.
	want := func(t *testing.T, id int64, n any, name, pt string) {
		t.Helper()
		fs, _ := editState(t, ts, path)
		f := featureOf(fs, id)
		if f.Properties["n"] != n || f.Properties["name"] != name || point(f) != pt {
			t.Fatalf("feature %d: %+v, want n %v name %s point %s", id, f, n, name, pt)
		}
		if len(fs) != 3 {
			t.Fatalf("%d features", len(fs))
		}
	}
	t.Run("Attributes", func(t *testing.T) {
		_, etag := editState(t, ts, path)
		got := decode[editFeature](t, must(t, patch("alice", "/features/2.json", mergePatchType, `{"name": "B"}`), 200))
		if got.ID != 2 || got.Properties["name"] != "B" || got.Properties["n"] != 2.0 || point(got) != "[21 11]" {
			t.Fatalf("answer %+v", got)
		}
		want(t, 2, 2.0, "B", "[21 11]")
		if _, etag2 := editState(t, ts, path); etag2 == etag {
			t.Fatalf("the ETag did not move: %s", etag)
		}
		// Its neighbours are untouched, and it keeps its position.
		want(t, 1, 1.0, "a", "[20 10]")
		flat := decode[[]map[string]any](t, must(t, ts.get(path+"/features.json?start=1&limit=1", ""), 200))
		if len(flat) != 1 || flat[0]["name"] != "B" {
			t.Fatalf("position 1: %v", flat)
		}
	})
	t.Run("NullClears", func(t *testing.T) {
		must(t, patch("alice", "/features/2", jsonType, `{"n": null}`), 200)
		want(t, 2, nil, "B", "[21 11]")
	})
	t.Run("Geometry", func(t *testing.T) {
		got := decode[editFeature](t, must(t, patch("alice", "/features/1.json", jsonType,
			`{"geometry": {"type": "Point", "coordinates": [30, 15]}}`), 200))
		if got.Properties["name"] != "a" || got.Properties["n"] != 1.0 || point(got) != "[30 15]" {
			t.Fatalf("answer %+v", got)
		}
		want(t, 1, 1.0, "a", "[30 15]")
		if doc := datasetDoc(t, ts, path, ""); fmt.Sprint(doc["extent"]) != "[21 11 30 15]" {
			t.Fatalf("extent after a geometry patch: %v", doc["extent"])
		}
	})
	t.Run("GeoJSONFeature", func(t *testing.T) {
		must(t, patch("alice", "/features/3.json", "application/geo+json",
			`{"type": "Feature", "id": 3, "properties": {"name": "C"}}`), 200)
		want(t, 3, 3.0, "C", "[22 12]")
		// Its geometry given null: none, as PUT allows.
		must(t, patch("alice", "/features/3.json", mergePatchType, `{"type": "Feature", "geometry": null}`), 200)
		want(t, 3, 3.0, "C", "<nil>")
		// "properties": null clears them all.
		must(t, patch("alice", "/features/3.json", mergePatchType, `{"type": "Feature", "properties": null}`), 200)
		fs, _ := editState(t, ts, path)
		if f := featureOf(fs, 3); f.Properties["name"] != nil || f.Properties["n"] != nil {
			t.Fatalf("after properties null: %+v", f)
		}
		// A Feature's patch need not repeat its type.
		must(t, patch("alice", "/features/3.json", mergePatchType, `{"properties": {"name": "C2"}, "geometry": {"type": "Point", "coordinates": [22, 12]}}`), 200)
		want(t, 3, nil, "C2", "[22 12]")
		must(t, patch("alice", "/features/3.json", mergePatchType, `{"geometry": null}`), 200)
		// An empty patch changes nothing, and is no error.
		must(t, patch("alice", "/features/3.json", mergePatchType, `{"name": "C3"}`), 200)
		must(t, patch("alice", "/features/3.json", mergePatchType, `{}`), 200)
		want(t, 3, nil, "C3", "<nil>")
	})
	bad := []struct {
		name, user, path, ctype, body string
		status                        int
		code, want                    string
	}{
		{"ErrUnknownFeature", "alice", "/features/99.json", mergePatchType, `{"name": "x"}`, 404, "not_found", "no feature 99"},
		{"ErrNotAnID", "alice", "/features/x.json", mergePatchType, `{"name": "x"}`, 404, "not_found", "feature"},
		{"ErrArray", "alice", "/features/1.json", mergePatchType, `[{"name": "x"}]`, 400, "invalid", "a patch is a JSON object of what changes (attributes, geometry), not an array"},
		{"ErrString", "alice", "/features/1.json", jsonType, `"x"`, 400, "invalid", "not a string"},
		{"ErrNull", "alice", "/features/1.json", jsonType, `null`, 400, "invalid", "not null"},
		{"ErrMalformed", "alice", "/features/1.json", jsonType, `{"name": `, 400, "invalid", "malformed JSON"},
		{"ErrEmpty", "alice", "/features/1.json", mergePatchType, ``, 400, "invalid", "no patch"},
		{"ErrTwo", "alice", "/features/1.json", jsonType, `{"name": "x"} {}`, 400, "invalid", "one feature"},
		{"ErrGeometry", "alice", "/features/1.json", jsonType, `{"geometry": {"type": "Point", "coordinates": [500, 1]}}`, 400, "invalid", "geometry"},
		{"ErrUnknownAttribute", "alice", "/features/1.json", mergePatchType, `{"colour": "red"}`, 400, "invalid", `feature: no attribute "colour"`},
		{"ErrWrongType", "alice", "/features/1.json", mergePatchType, `{"n": "seven"}`, 400, "invalid", "integer"},
		{"ErrOtherID", "alice", "/features/1.json", mergePatchType, `{"type": "Feature", "id": 2, "properties": {}}`, 400, "invalid", "id 2"},
		{"ErrPlainText", "alice", "/features/1.json", "text/plain", `{"name": "x"}`, 415, "unsupported_type", "JSON"},
		{"ErrAnonymous", "", "/features/1.json", mergePatchType, `{"name": "x"}`, 401, "unauthorized", "authentication"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			before, etag := editState(t, ts, path)
			errorOf(t, patch(c.user, c.path, c.ctype, c.body), c.status, c.code, c.want)
			if after, etag2 := editState(t, ts, path); fmt.Sprint(after) != fmt.Sprint(before) || etag2 != etag {
				t.Fatalf("a refused PATCH changed the dataset: %+v (%s), was %+v (%s)", after, etag2, before, etag)
			}
		})
	}
	t.Run("UnknownAttributeAsPUT", func(t *testing.T) {
		// The same refusal as PUT's, word for word.
		p := patch("alice", "/features/1.json", jsonType, `{"colour": "red"}`)
		u := ts.do(req{method: "PUT", path: path + "/features/1.json", user: "alice", ctype: jsonType, body: []byte(`{"colour": "red", "geometry": null}`)})
		if p.Code != 400 || p.Code != u.Code || p.Body.String() != u.Body.String() {
			t.Fatalf("PATCH %d %s; PUT %d %s", p.Code, p.Body, u.Code, u.Body)
		}
	})
	t.Run("ErrViewer", func(t *testing.T) {
		// bob may see the dataset but not change it: refused as PUT refuses him.
		put := ts.do(req{method: "PUT", path: path + "/features/1.json", user: "bob", ctype: jsonType, body: []byte(`{"name": "x", "geometry": null}`)})
		w := patch("bob", "/features/1.json", mergePatchType, `{"name": "x"}`)
		if put.Code != 403 || w.Code != put.Code || w.Body.String() != put.Body.String() {
			t.Fatalf("PATCH by a viewer: %d %s; PUT: %d %s", w.Code, w.Body, put.Code, put.Body)
		}
	})
	t.Run("PUTStillWhole", func(t *testing.T) {
		// PUT keeps replacing: a body without geometry is refused, and
		// what it leaves out becomes null.
		errorOf(t, ts.do(req{method: "PUT", path: path + "/features/1.json", user: "alice", ctype: jsonType, body: []byte(`{"name": "x"}`)}), 400, "invalid", "no geometry")
		must(t, ts.do(req{method: "PUT", path: path + "/features/1.json", user: "alice", ctype: jsonType, body: []byte(`{"name": "A", "geometry": null}`)}), 200)
		want(t, 1, nil, "A", "<nil>")
	})
}

func TestFeatureEditsPartial(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createCSV("?title=Wells", "n,name,lat,lon\n1,a,10,20\n2,b,11,21\n3,c,12,22\n4,d,13,23\n")
	edits := func(body string) *httptest.ResponseRecorder {
		return ts.do(req{method: "POST", path: path + "/edits.json", user: "alice", ctype: jsonType, body: []byte(body)})
	}
	want := func(t *testing.T, id int64, n any, name, pt string) {
		t.Helper()
		fs, _ := editState(t, ts, path)
		f := featureOf(fs, id)
		if f.Properties["n"] != n || f.Properties["name"] != name || point(f) != pt {
			t.Fatalf("feature %d: %+v, want n %v name %s point %s", id, f, n, name, pt)
		}
	}
	t.Run("WithoutGeometry", func(t *testing.T) {
		// An update without geometry (refused before) is a merge patch,
		// flat or a GeoJSON Feature.
		must(t, edits(`{"updates": [{"id": 2, "name": "B"}, {"type": "Feature", "id": 3, "properties": {"n": null}}]}`), 200)
		want(t, 2, 2.0, "B", "[21 11]")
		want(t, 3, nil, "c", "[22 12]")
	})
	t.Run("WithGeometry", func(t *testing.T) {
		// One that gives a geometry replaces the feature, as it always did.
		must(t, edits(`{"updates": [{"id": 4, "name": "D", "geometry": {"type": "Point", "coordinates": [24, 14]}}]}`), 200)
		want(t, 4, nil, "D", "[24 14]")
	})
	t.Run("MergeTrue", func(t *testing.T) {
		// "merge": true, after the updates it governs: a geometry alone.
		must(t, edits(`{"updates": [{"id": 2, "geometry": {"type": "Point", "coordinates": [31, 16]}}, {"id": 1, "n": 10}], "merge": true}`), 200)
		want(t, 2, 2.0, "B", "[31 16]")
		want(t, 1, 10.0, "a", "[20 10]")
	})
	t.Run("MergeFalse", func(t *testing.T) {
		// "merge": false: every update whole, one without geometry refused.
		before, etag := editState(t, ts, path)
		errorOf(t, edits(`{"merge": false, "updates": [{"id": 1, "name": "A", "geometry": null}, {"id": 2, "name": "B2"}]}`), 400, "invalid", "updates[1]: no geometry")
		if after, etag2 := editState(t, ts, path); fmt.Sprint(after) != fmt.Sprint(before) || etag2 != etag {
			t.Fatalf("a refused edit changed the dataset: %+v, was %+v", after, before)
		}
		must(t, edits(`{"merge": false, "updates": [{"id": 1, "name": "A", "geometry": null}]}`), 200)
		want(t, 1, nil, "A", "<nil>")
	})
	t.Run("Errors", func(t *testing.T) {
		before, etag := editState(t, ts, path)
		for _, c := range []struct{ body, want string }{
			{`{"merge": "yes", "updates": []}`, "merge"},
			{`{"updates": [{"id": 2, "colour": "red"}]}`, `updates[0]: no attribute "colour"`},
			{`{"updates": [{"id": 99, "name": "x"}]}`, "updates[0]: there is no feature 99"},
			{`{"updates": [{"name": "x"}]}`, `updates[0]: no "id"`},
			{`{"updates": [{"id": 2, "n": "two"}]}`, "updates[0]"},
			{`{"updates": [{"id": 2, "name": "x"}], "deletes": [2]}`, "named twice"},
		} {
			errorOf(t, edits(c.body), 400, "invalid", c.want)
		}
		if after, etag2 := editState(t, ts, path); fmt.Sprint(after) != fmt.Sprint(before) || etag2 != etag {
			t.Fatalf("a refused edit changed the dataset: %+v, was %+v", after, before)
		}
	})
}

// TestFeatureEditsManyAdds: edits.json with more adds than are held in
// memory (read again from the body by the store): all added, in order,
// with the next ids, with a delete and an update in the same batch; and a
// bad add far into the array refuses the whole batch.
func TestFeatureEditsManyAdds(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createCSV("?title=Wells", "n,name,lat,lon\n1,a,10,20\n2,b,11,21\n")
	body := func(bad int) []byte {
		var b strings.Builder
		b.WriteString(`{"updates": [{"id": 2, "name": "B"}], "deletes": [1], "adds": [`)
		for i := range 2500 {
			if i > 0 {
				b.WriteString(",")
			}
			if i == bad {
				fmt.Fprintf(&b, `{"n": "not a number", "name": "x", "geometry": null}`)
				continue
			}
			fmt.Fprintf(&b, `{"n": %d, "name": "p%d", "geometry": {"type": "Point", "coordinates": [%d, 5]}}`, i, i, i%90)
		}
		b.WriteString(`]}`)
		return []byte(b.String())
	}
	before, etag := editState(t, ts, path)
	errorOf(t, ts.do(req{method: "POST", path: path + "/edits.json", user: "alice", ctype: jsonType, body: body(2100)}), 400, "invalid", "adds[2100]")
	if after, etag2 := editState(t, ts, path); fmt.Sprint(after) != fmt.Sprint(before) || etag2 != etag {
		t.Fatalf("a refused edit changed the dataset")
	}
	w := ts.do(req{method: "POST", path: path + "/edits.json", user: "alice", ctype: jsonType, body: body(-1)})
	var ans struct {
		Adds []struct {
			ID int64 `json:"id"`
		} `json:"addResults"`
	}
	if err := json.Unmarshal(must(t, w, 200), &ans); err != nil {
		t.Fatal(err)
	}
	if len(ans.Adds) != 2500 || ans.Adds[0].ID != 3 || ans.Adds[2499].ID != 2502 {
		t.Fatalf("%d adds, ids %v … %v", len(ans.Adds), ans.Adds[0], ans.Adds[len(ans.Adds)-1])
	}
	feats := decode[[]map[string]any](t, must(t, ts.get(path+"/features.json?start=0&limit=3", ""), 200))
	if len(feats) != 3 || feats[0]["name"] != "B" || feats[1]["name"] != "p0" || feats[2]["name"] != "p1" {
		t.Fatalf("first features %v", feats)
	}
	if d := datasetDoc(t, ts, path, ""); d["feature_count"] != 2501.0 {
		t.Fatalf("%v features", d["feature_count"])
	}
}
