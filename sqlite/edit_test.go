package sqlite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/sqlite"
	"mapcommons/storetest"
)

// TestDeltaEdits makes random edits (adds, deletes by position, applyEdits
// batches, refused batches) with compactions between them, some of them
// with edits made while the compaction writes its new base, and checks
// after each step that the dataset answers exactly as a dataset created
// from the features expected: positions, ids, values, geometries, sorted
// and filtered pages, groups and the summary (exact at once with a small
// exactSummaryMax; after the compaction with none). No file is left
// behind.
//
// With a tiny maxDelta, writes whose delta would outgrow it write the
// dataset whole (promoteDelta): the same answers.
func TestDeltaEdits(t *testing.T) {
	for _, c := range []struct{ exact, maxDelta int }{{20000, 0}, {0, 0}, {20000, 4}} {
		exact := c.exact
		t.Run(fmt.Sprintf("exactSummaryMax=%d,maxDelta=%d", exact, c.maxDelta), func(t *testing.T) {
			sqlite.SetExactSummaryMax(t, exact)
			if c.maxDelta > 0 {
				sqlite.SetMaxDelta(t, c.maxDelta)
			}
			dir := t.TempDir()
			db, err := sqlite.Open(filepath.Join(dir, "mapcommons.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			db.CompactInBackground(false)
			testDeltaEdits(t, db, dir, uint64(exact))
		})
	}
}

func testDeltaEdits(t *testing.T, db *sqlite.DB, dir string, seed uint64) {
	ctx := context.Background()
	s := db.Services()
	src := storetest.SampleSource(150)
	attrs := src.Attrs
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	type feat struct {
		id     int64
		values []any
		geom   []byte
	}
	scan := func(id int64, q *mapcommons.FeatureQuery) []feat {
		t.Helper()
		var out []feat
		err := s.Features.ScanFeatures(ctx, id, q, func(f *mapcommons.Feature) error {
			if q.Offset >= 0 && f.Position < 0 {
				t.Fatalf("position %d", f.Position)
			}
			out = append(out, feat{f.ID, append([]any(nil), f.Values...), append([]byte(nil), f.Geometry...)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	model := scan(ds.ID, &mapcommons.FeatureQuery{Limit: -1})
	maxID := int64(150)
	r := rand.New(rand.NewPCG(seed, 7))
	newFeature := func() mapcommons.Feature {
		n := int64(r.IntN(40))
		v := []any{n, float64(r.IntN(1000)) / 8, fmt.Sprintf("label%d", r.IntN(9)), r.IntN(2) == 0}
		if r.IntN(6) == 0 {
			v[r.IntN(4)] = nil
		}
		return mapcommons.Feature{Values: v, Geometry: wkb.AppendPoint(nil, r.Float64()*300-150, r.Float64()*160-80)}
	}
	randomIDs := func(k int, except map[int64]bool) []int64 {
		var ids []int64
		for _, i := range r.Perm(len(model)) {
			if len(ids) == k {
				break
			}
			if id := model[i].id; !except[id] {
				ids = append(ids, id)
				except[id] = true
			}
		}
		return ids
	}
	// apply applies a batch to the model and returns it.
	apply := func(e *mapcommons.Edits) {
		for _, u := range e.Updates {
			for i := range model {
				if model[i].id == u.ID {
					model[i] = feat{u.ID, u.Values, u.Geometry}
				}
			}
		}
		model = slices.DeleteFunc(model, func(f feat) bool { return slices.Contains(e.Deletes, f.id) })
		for _, a := range e.Adds {
			maxID++
			model = append(model, feat{maxID, a.Values, a.Geometry})
		}
	}
	edit := func() {
		t.Helper()
		e := &mapcommons.Edits{}
		used := map[int64]bool{}
		for range r.IntN(4) {
			e.Adds = append(e.Adds, newFeature())
		}
		for _, id := range randomIDs(r.IntN(4), used) {
			f := newFeature()
			f.ID = id
			e.Updates = append(e.Updates, f)
		}
		e.Deletes = randomIDs(r.IntN(3), used)
		res, err := s.Features.ApplyEdits(ctx, ds.ID, e)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range res.AddIDs {
			if id != maxID+1+int64(i) {
				t.Fatalf("add %d got id %d, want %d", i, id, maxID+1+int64(i))
			}
		}
		apply(e)
	}
	check := func(step int, compacted bool) {
		t.Helper()
		if got := scan(ds.ID, &mapcommons.FeatureQuery{Limit: -1}); !reflect.DeepEqual(got, model) {
			t.Fatalf("step %d: the features differ from those expected:\n%v\nwant\n%v", step, got, model)
		}
		// The oracle: a dataset created from the expected features.
		ref := &mapcommons.Dataset{Type: "csv"}
		rs := &storetest.SliceSource{Attrs: attrs}
		for _, f := range model {
			rs.Features = append(rs.Features, mapcommons.Feature{Values: f.values, Geometry: f.geom})
		}
		if err := s.Datasets.CreateDataset(ctx, ref, rs); err != nil {
			t.Fatal(err)
		}
		defer s.Datasets.DeleteDataset(ctx, ref.ID)
		noIDs := func(fs []feat) []feat {
			for i := range fs {
				fs[i].id = 0
			}
			return fs
		}
		for _, q := range []*mapcommons.FeatureQuery{
			{Limit: 7, Offset: int64(r.IntN(len(model) + 3))},
			{Limit: 5, Descending: true},
			{Sort: "n", Limit: 9, Offset: int64(r.IntN(20))},
			{Sort: "x", Descending: true, Limit: 9, Offset: int64(r.IntN(20))},
			{Sort: "label", Limit: -1},
			{BBox: &mapcommons.BBox{W: -100, S: -50, E: 20, N: 30}, Limit: 11, Offset: 2},
			{BBox: &mapcommons.BBox{W: -60, S: -80, E: 150, N: 10}, Sort: "x", Limit: 6},
			{Filters: []mapcommons.Filter{{Attr: "n", Op: mapcommons.OpEquals, Values: []string{fmt.Sprint(r.IntN(40))}}}, Limit: -1},
			{Filters: []mapcommons.Filter{{Attr: "x", Op: mapcommons.OpMin, Values: []string{"60"}}}, Limit: 10, Offset: 3},
			{Near: &mapcommons.Near{Kind: mapcommons.NearPoint, XY: []float64{10, 10}, Radius: 3000, Units: "km"}, Limit: -1, WithDistance: true},
		} {
			if got, want := noIDs(scan(ds.ID, q)), noIDs(scan(ref.ID, q)); !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d: query %+v:\n%v\nwant\n%v", step, q, got, want)
			}
		}
		gq := &mapcommons.FeatureQuery{GroupBy: []string{"label"}, Limit: -1,
			Aggregates: []mapcommons.Aggregate{{Name: "n", Calc: mapcommons.CalcSum}, {Name: "x", Calc: mapcommons.CalcMax}}}
		g1, err1 := s.Features.GroupFeatures(ctx, ds.ID, gq)
		g2, err2 := s.Features.GroupFeatures(ctx, ref.ID, gq)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(g1, g2) {
			t.Fatalf("step %d: groups %v %v\n%v\nwant\n%v", step, err1, err2, g1, g2)
		}
		a, _ := s.Datasets.FindDatasetByID(ctx, ds.ID)
		b, _ := s.Datasets.FindDatasetByID(ctx, ref.ID)
		if a.FeatureCount != int64(len(model)) {
			t.Fatalf("step %d: count %d, want %d", step, a.FeatureCount, len(model))
		}
		if seed != 0 || compacted {
			if !reflect.DeepEqual([]any{a.Extent, a.GeometryTypes, a.GeometryMask, a.Stats}, []any{b.Extent, b.GeometryTypes, b.GeometryMask, b.Stats}) {
				t.Fatalf("step %d: summary %v %v %v\nwant %v %v %v", step, a.Extent, a.GeometryTypes, a.Stats, b.Extent, b.GeometryTypes, b.Stats)
			}
		}
	}
	files := func() []string {
		entries, _ := os.ReadDir(filepath.Join(dir, "features"))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	for step := 0; step < 120; step++ {
		compacted := false
		switch op := r.IntN(8); op {
		case 0: // an append
			as := &storetest.SliceSource{Attrs: attrs}
			for range 1 + r.IntN(5) {
				as.Features = append(as.Features, newFeature())
			}
			fs := slices.Clone(as.Features)
			if _, err := s.Features.AddFeatures(ctx, ds.ID, as); err != nil {
				t.Fatal(err)
			}
			apply(&mapcommons.Edits{Adds: fs})
		case 1: // deletes by position
			if len(model) == 0 {
				continue
			}
			var pos []int64
			var ids []int64
			for _, p := range r.Perm(len(model))[:min(len(model), 1+r.IntN(3))] {
				pos = append(pos, int64(p))
				ids = append(ids, model[p].id)
			}
			if err := s.Features.DeleteFeatures(ctx, ds.ID, pos); err != nil {
				t.Fatal(err)
			}
			apply(&mapcommons.Edits{Deletes: ids})
		case 2, 3:
			edit()
		case 4:
			if err := db.Compact(ctx, ds.ID); err != nil {
				t.Fatal(err)
			}
			compacted = true
		case 5: // edits while the compaction writes its base
			n := 1 + r.IntN(3)
			sqlite.SetCompactHook(t, func(int64) {
				for range n {
					edit()
				}
			})
			if err := db.Compact(ctx, ds.ID); err != nil {
				t.Fatal(err)
			}
			sqlite.SetCompactHook(t, nil)
		case 6: // refused: nothing changes
			e := &mapcommons.Edits{Adds: []mapcommons.Feature{newFeature()}, Deletes: []int64{maxID + 5}}
			if _, err := s.Features.ApplyEdits(ctx, ds.ID, e); mapcommons.ErrorCode(err) != mapcommons.EINVALID {
				t.Fatalf("a delete of a missing feature: %v", err)
			}
		case 7: // deleting everything added since, then adding: no id again
			if len(model) > 160 {
				var ids []int64
				for _, f := range model[150:] {
					ids = append(ids, f.id)
				}
				if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Deletes: ids}); err != nil {
					t.Fatal(err)
				}
				apply(&mapcommons.Edits{Deletes: ids})
			}
		}
		check(step, compacted)
		if compacted {
			if l := db.LayoutOf(ds.ID); strings.Contains(l, " ") {
				t.Fatalf("step %d: compacted, the layout is %q", step, l)
			}
		}
		// The files are the base's; the delta is in the catalogue, alone.
		parts := strings.Fields(db.LayoutOf(ds.ID))
		if got := files(); !reflect.DeepEqual(got, parts[:1]) {
			t.Fatalf("step %d: files %v, the layout %v", step, got, parts)
		}
		var deltas []string
		for _, p := range parts[1:] {
			if strings.HasPrefix(p, "dl-") {
				deltas = append(deltas, p)
			}
		}
		if got := db.DeltaNames(); !reflect.DeepEqual(got, deltas) {
			t.Fatalf("step %d: deltas %v, the layout %v", step, got, parts)
		}
	}
	if err := db.Compact(ctx, ds.ID); err != nil {
		t.Fatal(err)
	}
	check(-1, true)
	if got := files(); len(got) != 1 {
		t.Fatalf("after the last compaction: %v", got)
	}
}

// TestLargeAddsWriteWhole: an append of more features than a delta takes
// (maxDelta) writes the dataset whole, as a compaction would, instead of
// a delta the catalogue keeps and every reader holds in memory: no delta
// is left, and the features and their ids are those expected.
func TestLargeAddsWriteWhole(t *testing.T) {
	sqlite.SetMaxDelta(t, 1000)
	dir := t.TempDir()
	db, err := sqlite.Open(filepath.Join(dir, "mapcommons.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.CompactInBackground(false)
	ctx := context.Background()
	s := db.Services()
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, storetest.SampleSource(150)); err != nil {
		t.Fatal(err)
	}
	// A small edit first, so that the promoted write carries a delta.
	if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Deletes: []int64{3}, Adds: []mapcommons.Feature{{Values: []any{int64(1), 1.5, "x", true}}}}); err != nil {
		t.Fatal(err)
	}
	if len(db.DeltaNames()) != 1 {
		t.Fatalf("deltas %v after a small edit", db.DeltaNames())
	}
	more := storetest.SampleSource(5000)
	added, err := s.Features.AddFeatures(ctx, ds.ID, more)
	if err != nil || added != 5000 {
		t.Fatalf("added %d: %v", added, err)
	}
	if d := db.DeltaNames(); len(d) != 0 || strings.Contains(db.LayoutOf(ds.ID), " ") {
		t.Fatalf("deltas %v, layout %q after a large append", d, db.LayoutOf(ds.ID))
	}
	var ids []int64
	err = s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
		ids = append(ids, f.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 150+5000 || ids[2] != 4 || ids[149] != 151 || ids[len(ids)-1] != 151+5000 {
		t.Fatalf("%d features, ids %v … %v", len(ids), ids[:4], ids[len(ids)-3:])
	}
}
