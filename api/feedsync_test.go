package api_test

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// countingStore counts the store calls a refetch makes: ApplyEdits (and
// what each carried) and ReplaceFeatures.
type countingStore struct {
	mapcommons.FeatureService
	datasets mapcommons.DatasetService
	mu       sync.Mutex
	edits    []mapcommons.Edits
	replaces int
}

func (c *countingStore) ApplyEdits(ctx context.Context, id int64, e *mapcommons.Edits) (*mapcommons.EditResult, error) {
	c.mu.Lock()
	c.edits = append(c.edits, *e)
	c.mu.Unlock()
	return c.FeatureService.ApplyEdits(ctx, id, e)
}

type countingDatasets struct {
	mapcommons.DatasetService
	c *countingStore
}

func (d countingDatasets) ReplaceFeatures(ctx context.Context, id int64, src mapcommons.FeatureSource) (*mapcommons.Dataset, error) {
	d.c.mu.Lock()
	d.c.replaces++
	d.c.mu.Unlock()
	return d.DatasetService.ReplaceFeatures(ctx, id, src)
}

// calls returns and forgets the calls counted so far.
func (c *countingStore) calls() ([]mapcommons.Edits, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, n := c.edits, c.replaces
	c.edits, c.replaces = nil, 0
	return e, n
}

// storedRow is a feature as the store holds it.
type storedRow struct {
	Pos, ID int64
	Values  []any
	Geom    []byte
}

func storedRows(t *testing.T, ts *testServer, id int64) []storedRow {
	t.Helper()
	var out []storedRow
	err := ts.svc.Features.ScanFeatures(t.Context(), id, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
		out = append(out, storedRow{f.Position, f.ID, slices.Clone(f.Values), slices.Clone(f.Geometry)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// byCode maps the rows by their first value (the key, code).
func byCode(rows []storedRow) map[int64]storedRow {
	m := map[int64]storedRow{}
	for _, r := range rows {
		if c, ok := r.Values[0].(int64); ok {
			m[c] = r
		}
	}
	return m
}

// TestFeedKey: a feed registered with key= is refreshed by the difference
// (one ApplyEdits: adds, updates in place, deletes), unchanged rows keeping
// their ids and positions; schema changes, repeated or null keys fall back
// to replacing everything; the key is checked, shown and changed.
func TestFeedKey(t *testing.T) {
	t.Parallel()
	ts := newServer(t, allowPrivate)
	cs := &countingStore{FeatureService: ts.svc.Features}
	cs.datasets = countingDatasets{DatasetService: ts.svc.Datasets, c: cs}
	ts.svc.Features, ts.svc.Datasets = cs, cs.datasets
	ts.restart()
	rm := newRemote(t)
	const header = "code,name,lat,lon,height\n"
	v1 := header + "1,one,1,1,1.5\n2,two,2,2,2.5\n3,three,3,3,3.5\n4,four,4,4,4.5\n5,five,5,5,5.5\n"
	rm.set("/wells.csv", remotePage{ctype: "text/csv", body: v1})
	enc := url.QueryEscape

	w := ts.do(req{method: "POST", path: "/datasets.json?key=code&title=Wells&url=" + enc(rm.URL+"/wells.csv"), user: "alice"})
	must(t, w, http.StatusCreated)
	feed := strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
	doc := datasetDoc(t, ts, feed, "")
	if doc["key"] != "code" || doc["feature_count"] != 5.0 {
		t.Fatalf("dataset: %v", doc)
	}
	ds, err := ts.svc.Datasets.FindDatasetByURL(t.Context(), rm.URL+"/wells.csv")
	if err != nil || ds.FeedKey != "code" {
		t.Fatalf("stored: %+v, %v", ds, err)
	}
	fetch := func(t *testing.T) map[string]any {
		t.Helper()
		return decode[map[string]any](t, must(t, ts.do(req{method: "PUT", path: feed + "/fetch.json", user: "alice"}), 200))
	}
	version := func() int64 {
		t.Helper()
		d, err := ts.svc.Datasets.FindDatasetByID(t.Context(), ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		return d.Version
	}

	t.Run("OnlyTheChange", func(t *testing.T) {
		before := byCode(storedRows(t, ts, ds.ID))
		// A failed fetch first: the keyed one that follows clears it.
		rm.set("/wells.csv", remotePage{status: 503, body: "down"})
		errorOf(t, ts.do(req{method: "PUT", path: feed + "/fetch.json", user: "alice"}), 502, "upstream", "503")
		v0 := version()
		cs.calls()
		// 2's height changes in its last bit, 3 goes, 6 comes (amid the
		// file), and the rows are in another order.
		rm.set("/wells.csv", remotePage{ctype: "text/csv", body: header +
			"5,five,5,5,5.5\n1,one,1,1,1.5\n6,six,6,6,6.5\n2,two,2,2,2.5000000000000004\n4,four,4,4,4.5\n"})
		hits := rm.count("/wells.csv")
		doc := fetch(t)
		if doc["state"] != "complete" || doc["last_fetch_error"] != nil || doc["feature_count"] != 5.0 || doc["key"] != "code" {
			t.Fatalf("after the refetch: %v", doc)
		}
		if rm.count("/wells.csv") != hits+1 {
			t.Errorf("fetched %d times", rm.count("/wells.csv")-hits)
		}
		if v := version(); v <= v0 {
			t.Errorf("version %d, was %d", v, v0)
		}
		edits, replaces := cs.calls()
		if replaces != 0 || len(edits) != 1 {
			t.Fatalf("%d ApplyEdits, %d ReplaceFeatures; want one edit", len(edits), replaces)
		}
		e := edits[0]
		if len(e.Adds) != 1 || e.Adds[0].Values[0] != int64(6) || len(e.Updates) != 1 || e.Updates[0].ID != before[2].ID ||
			!slices.Equal(e.Deletes, []int64{before[3].ID}) {
			t.Fatalf("edits: adds %v updates %v deletes %v", e.Adds, e.Updates, e.Deletes)
		}
		rows := storedRows(t, ts, ds.ID)
		after := byCode(rows)
		// Unchanged rows untouched: ids, positions (shifted down by the
		// deleted row only), values and geometry.
		for code, pos := range map[int64]int64{1: 0, 4: 2, 5: 3} {
			b, a := before[code], after[code]
			b.Pos = pos
			if !reflect.DeepEqual(a, b) {
				t.Errorf("row %d: %+v, was %+v", code, a, before[code])
			}
		}
		if a := after[2]; a.ID != before[2].ID || a.Pos != 1 || a.Values[2] != 2.5000000000000004 {
			t.Errorf("the changed row: %+v, was %+v", a, before[2])
		}
		if _, ok := after[3]; ok {
			t.Error("the removed row is still there")
		}
		for _, r := range rows {
			if r.ID == before[3].ID {
				t.Errorf("the removed row's id %d is still given", r.ID)
			}
		}
		if a := after[6]; a.Pos != 4 || a.ID <= before[5].ID || a.Values[1] != "six" {
			t.Errorf("the added row: %+v (ids were up to %d)", a, before[5].ID)
		}
		// The features' answers follow.
		feats := decode[[]map[string]any](t, must(t, ts.get(feed+"/features.json", ""), 200))
		var names []string
		for _, f := range feats {
			names = append(names, f["name"].(string))
		}
		if strings.Join(names, ",") != "one,two,four,five,six" {
			t.Errorf("features: %v", names)
		}
	})

	t.Run("Unchanged", func(t *testing.T) {
		before := storedRows(t, ts, ds.ID)
		v0 := version()
		cs.calls()
		fetch(t)
		edits, replaces := cs.calls()
		if len(edits) != 0 || replaces != 0 {
			t.Fatalf("%d edits, %d replaces for an unchanged feed", len(edits), replaces)
		}
		if got := storedRows(t, ts, ds.ID); !reflect.DeepEqual(got, before) {
			t.Fatalf("rows %v, were %v", got, before)
		}
		if v := version(); v <= v0 {
			t.Errorf("version %d, was %d: the fetch was not recorded", v, v0)
		}
	})

	// Each fallback replaces every feature: the dataset is the file, in
	// its order.
	fallback := func(t *testing.T, body string, names string) {
		t.Helper()
		rm.set("/wells.csv", remotePage{ctype: "text/csv", body: body})
		cs.calls()
		hits := rm.count("/wells.csv")
		v0 := version()
		doc := fetch(t)
		if doc["state"] != "complete" || doc["last_fetch_error"] != nil {
			t.Fatalf("after the refetch: %v", doc)
		}
		edits, replaces := cs.calls()
		if len(edits) != 0 || replaces != 1 {
			t.Fatalf("%d edits, %d replaces; want one replace", len(edits), replaces)
		}
		if n := rm.count("/wells.csv") - hits; n != 1 {
			t.Errorf("fetched %d times: the fetched file is read again, not the remote", n)
		}
		if v := version(); v <= v0 {
			t.Errorf("version %d, was %d", v, v0)
		}
		var got []string
		for _, r := range storedRows(t, ts, ds.ID) {
			got = append(got, r.Values[1].(string))
		}
		if strings.Join(got, ",") != names {
			t.Fatalf("features %v, want %s", got, names)
		}
	}
	t.Run("FallbackRepeatedKey", func(t *testing.T) {
		fallback(t, header+"1,one,1,1,1.5\n2,two,2,2,2.5\n1,uno,1,1,1.5\n7,seven,7,7,7.5\n", "one,two,uno,seven")
		// The stored rows repeat a key now: the next refresh replaces too
		// (before reading the new rows).
		fallback(t, header+"1,one,1,1,1.5\n7,seven,7,7,7.5\n2,two,2,2,2.5\n", "one,seven,two")
	})
	t.Run("FallbackNullKey", func(t *testing.T) {
		fallback(t, header+"1,one,1,1,1.5\n,nobody,9,9,9.5\n2,two,2,2,2.5\n", "one,nobody,two")
		fallback(t, header+"2,two,2,2,2.5\n1,one,1,1,1.5\n", "two,one")
	})
	t.Run("FallbackSchemaChange", func(t *testing.T) {
		fallback(t, "code,name,lat,lon,height,depth\n1,one,1,1,1.5,10\n3,three,3,3,3.5,30\n", "one,three")
		d := datasetDoc(t, ts, feed, "")
		if d["key"] != "code" || d["feature_count"] != 2.0 {
			t.Fatalf("dataset: %v", d)
		}
		// Keyed again from then on.
		rm.set("/wells.csv", remotePage{ctype: "text/csv", body: "code,name,lat,lon,height,depth\n1,one,1,1,1.5,11\n3,three,3,3,3.5,30\n"})
		before := byCode(storedRows(t, ts, ds.ID))
		cs.calls()
		fetch(t)
		if edits, replaces := cs.calls(); len(edits) != 1 || replaces != 0 || len(edits[0].Updates) != 1 || edits[0].Updates[0].ID != before[1].ID {
			t.Fatalf("%v edits, %d replaces", edits, replaces)
		}
	})

	t.Run("FallbackPastBounds", func(t *testing.T) {
		srv := ts.handler.(*api.Server)
		defer srv.SetSyncLimits(1<<22, 64<<20, 64<<20)
		const h = "code,name,lat,lon,height,depth\n"
		// The change held for the edit is too large (found reading).
		srv.SetSyncLimits(100, 1000, 300)
		fallback(t, h+"1,one,1,1,1.5,11\n3,three,3,3,3.5,30\n4,four,4,4,4.5,40\n5,five,5,5,5.5,50\n6,six,6,6,6.5,60\n", "one,three,four,five,six")
		// Too many stored features, or their keys too large (found
		// before reading).
		srv.SetSyncLimits(4, 1000, 64<<20)
		fallback(t, h+"1,one,1,1,1.5,11\n3,three,3,3,3.5,30\n", "one,three")
		srv.SetSyncLimits(100, 8, 64<<20)
		fallback(t, h+"3,three,3,3,3.5,30\n1,one,1,1,1.5,11\n", "three,one")
	})
	t.Run("ErrBadKey", func(t *testing.T) {
		rm.set("/other.csv", remotePage{ctype: "text/csv", body: v1})
		_, n := countDatasets(t, ts)
		errorOf(t, ts.do(req{method: "POST", path: "/datasets.json?key=nope&url=" + enc(rm.URL+"/other.csv"), user: "alice"}), 400, "invalid", "key")
		errorOf(t, ts.do(req{method: "POST", path: "/datasets.json?type=wms&key=code&url=" + enc("http://tiles.invalid/wms"), user: "alice"}), 400, "invalid", "key")
		if _, after := countDatasets(t, ts); after != n {
			t.Fatalf("a refused registration left a dataset")
		}
		// A feed without a key shows none.
		w := ts.do(req{method: "POST", path: "/datasets.json?url=" + enc(rm.URL+"/other.csv"), user: "alice"})
		must(t, w, http.StatusCreated)
		if d := datasetDoc(t, ts, strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json"), ""); d["key"] != nil {
			t.Fatalf("key %v on a feed without one", d["key"])
		}
	})

	t.Run("Update", func(t *testing.T) {
		form := func(body string) req {
			return req{method: "PUT", path: feed + ".json", user: "alice", ctype: "application/x-www-form-urlencoded", body: []byte(body)}
		}
		errorOf(t, ts.do(form("key=nope")), 400, "invalid", "key")
		must(t, ts.do(form("key=name")), 201)
		if d := datasetDoc(t, ts, feed, ""); d["key"] != "name" {
			t.Fatalf("key %v after an update to name", d["key"])
		}
		must(t, ts.do(req{method: "PUT", path: feed + ".json", user: "alice", ctype: "application/json", body: []byte(`{"dataset":{"key":"code"}}`)}), 201)
		if d := datasetDoc(t, ts, feed, ""); d["key"] != "code" {
			t.Fatalf("key %v after an update to code", d["key"])
		}
		must(t, ts.do(form("key=")), 201)
		if d := datasetDoc(t, ts, feed, ""); d["key"] != nil {
			t.Fatalf("key %v after its removal", d["key"])
		}
		// Without a key, a refetch replaces.
		cs.calls()
		fetch(t)
		if edits, replaces := cs.calls(); len(edits) != 0 || replaces != 1 {
			t.Fatalf("%d edits, %d replaces without a key", len(edits), replaces)
		}
		upload := ts.createCSV("", "code,lat,lon\n1,2,3\n")
		errorOf(t, ts.do(req{method: "PUT", path: upload + ".json", user: "alice", ctype: "application/x-www-form-urlencoded", body: []byte("key=code")}),
			400, "invalid", "key")
	})
}
