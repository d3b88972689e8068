package api_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// recentFinds records whether each FindDatasetByID may see a recent
// catalogue (mapcommons.WithRecentCatalogue).
type recentFinds struct {
	mapcommons.DatasetService
	mu     sync.Mutex
	recent []bool
}

func (d *recentFinds) FindDatasetByID(ctx context.Context, id int64) (*mapcommons.Dataset, error) {
	d.mu.Lock()
	d.recent = append(d.recent, mapcommons.RecentCatalogue(ctx))
	d.mu.Unlock()
	return d.DatasetService.FindDatasetByID(ctx, id)
}

// TestRecentCatalogueOnlyAnonymousReads: only an anonymous GET or HEAD
// may be answered from a catalogue a moment old; a signed-in caller's
// reads (who may read back their own writes) and every write see it as
// it is.
func TestRecentCatalogueOnlyAnonymousReads(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=pts", string(pointsCSV(5)))
	finds := &recentFinds{}
	ts.rebuild(nil, func(s *mapcommons.Services) { finds.DatasetService = s.Datasets; s.Datasets = finds })
	for _, c := range []struct {
		r      req
		recent bool
	}{
		{req{method: "GET", path: ds + ".json"}, true},
		{req{method: "HEAD", path: ds + "/features.json"}, true},
		{req{method: "GET", path: ds + ".json", user: "alice"}, false},
		{req{method: "PATCH", path: ds + "/features/1.json", user: "alice", ctype: "application/merge-patch+json", body: []byte(`{"name": "x"}`)}, false},
	} {
		finds.mu.Lock()
		finds.recent = nil
		finds.mu.Unlock()
		w := ts.do(c.r)
		if w.Code >= 300 {
			t.Fatalf("%s %s: %d %s", c.r.method, c.r.path, w.Code, w.Body)
		}
		finds.mu.Lock()
		got := slices.Clone(finds.recent)
		finds.mu.Unlock()
		if len(got) == 0 || slices.Contains(got, !c.recent) {
			t.Errorf("%s %s (user %q): finds recent %v, want all %v", c.r.method, c.r.path, c.r.user, got, c.recent)
		}
	}
}

// movedOnce fails the first read of a request marked by
// mapcommons.WithRecentCatalogue with mapcommons.ErrCatalogueMoved, as a
// store does whose row from memory is older than the read's snapshot.
type movedOnce struct {
	mapcommons.FeatureService
	moved, unmarked atomic.Int32
}

func (f *movedOnce) ScanFeatures(ctx context.Context, id int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	if mapcommons.RecentCatalogue(ctx) && f.moved.Add(1) == 1 {
		return mapcommons.ErrCatalogueMoved
	}
	if !mapcommons.RecentCatalogue(ctx) {
		f.unmarked.Add(1)
	}
	return f.FeatureService.ScanFeatures(ctx, id, q, fn)
}

// TestCatalogueMovedRunsAgain: a read refused because the dataset's row
// given from memory was not its snapshot's is run again, unmarked, and
// answered whole; the caller never sees the refusal.
func TestCatalogueMovedRunsAgain(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=pts", string(pointsCSV(5)))
	feats := &movedOnce{}
	ts.rebuild(nil, func(s *mapcommons.Services) { feats.FeatureService = s.Features; s.Features = feats })
	body := must(t, ts.get(ds+"/features.json", ""), 200)
	if feats.moved.Load() != 1 || feats.unmarked.Load() != 1 || !bytes.Contains(body, []byte("point number 4")) {
		t.Fatalf("moved %d, unmarked reads %d: %s", feats.moved.Load(), feats.unmarked.Load(), body)
	}
}
