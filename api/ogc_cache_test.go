package api_test

import (
	"bytes"
	"strings"
	"testing"

	"mapcommons"
)

// TestOGCItemsFromCache: a repeated OGC items page or item on the same
// version of a dataset is answered from the response cache, without a
// read of the store, byte for byte the first answer; another page, a
// JSONP callback or a new version of the dataset is read again.
func TestOGCItemsFromCache(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=pts", string(pointsCSV(50)))
	id := strings.TrimPrefix(ds, "/datasets/")
	feats := &countingFeatures{}
	ts.rebuild(nil, func(s *mapcommons.Services) { feats.FeatureService = s.Features; s.Features = feats })
	items := "/ogc/collections/" + id + "/items?limit=5"
	item := "/ogc/collections/" + id + "/items/3"
	read := func(path string, wantScans int32) []byte {
		t.Helper()
		before := feats.scans.Load()
		body := must(t, ts.get(path, ""), 200)
		if got := feats.scans.Load() - before; got != wantScans {
			t.Fatalf("GET %s read the store %d times, want %d", path, got, wantScans)
		}
		return body
	}
	for _, path := range []string{items, item} {
		first := read(path, 1)
		if again := read(path, 0); !bytes.Equal(again, first) {
			t.Fatalf("GET %s from the cache:\n%s\nfirst:\n%s", path, again, first)
		}
		jsonp := read(path+map[bool]string{true: "&", false: "?"}[strings.Contains(path, "?")]+"callback=cb", 1)
		if !bytes.HasPrefix(jsonp, []byte("cb(")) {
			t.Fatalf("JSONP answer: %.40s", jsonp)
		}
	}
	read(items+"&offset=5", 1)
	// An edit is a new version: read again, and the answer shows it.
	must(t, ts.do(req{method: "PATCH", path: ds + "/features/3.json", user: "alice", ctype: "application/merge-patch+json",
		body: []byte(`{"name": "patched"}`)}), 200)
	if body := read(item, 1); !bytes.Contains(body, []byte(`"patched"`)) {
		t.Fatalf("item after the edit: %s", body)
	}
	read(item, 0)
}
