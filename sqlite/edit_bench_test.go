package sqlite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/sqlite"
	"mapcommons/storetest"
)

// BenchmarkEditOne adds, updates, patches (one attribute, the rest kept)
// or deletes one feature of a dataset of
// 200,000 points (the bench's -edits measures the million over HTTP),
// with background compaction off: each edit rewrites the delta, which
// grows by one feature (adds, updates) or one dead position.
func BenchmarkEditOne(b *testing.B) {
	const n = 200000
	db, err := sqlite.Open(filepath.Join(b.TempDir(), "mapcommons.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.CompactInBackground(false)
	s := db.Services()
	ctx := context.Background()
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, storetest.SampleSource(n)); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	feature := func(id int64) mapcommons.Feature {
		return mapcommons.Feature{ID: id, Values: []any{int64(r.IntN(1000)), r.Float64(), "edited", true}, Geometry: wkb.AppendPoint(nil, r.Float64(), r.Float64())}
	}
	next := int64(2)
	for _, kind := range []string{"add", "update", "patch", "delete"} {
		b.Run(kind, func(b *testing.B) {
			for b.Loop() {
				e := &mapcommons.Edits{}
				switch kind {
				case "add":
					e.Adds = []mapcommons.Feature{feature(0)}
				case "update":
					e.Updates = []mapcommons.Feature{feature(next)}
					next += 2
				case "patch":
					e.Updates = []mapcommons.Feature{{ID: next, Values: []any{nil, nil, "patched", nil}}}
					e.Patches = []*mapcommons.Patch{{Attrs: []bool{false, false, true, false}}}
					next += 2
				case "delete":
					e.Deletes = []int64{next}
					next += 2
				}
				if _, err := s.Features.ApplyEdits(ctx, ds.ID, e); err != nil {
					b.Fatal(fmt.Sprint(kind, err))
				}
			}
		})
	}
}
