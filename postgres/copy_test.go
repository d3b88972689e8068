package postgres_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/sqlitetest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// TestLoadInHilbertChunks checks the layout of a load: the rows go into
// the table chunk by chunk, in position order from chunk to chunk and in
// Hilbert order within each, and the answers (bbox pages, the radius,
// sorts, positions) are those of the embedded store all the same.
func TestLoadInHilbertChunks(t *testing.T) {
	postgres.SetCopyChunk(t, 4000) // bytes: about 60 rows a chunk
	ctx := context.Background()
	s, conn := inspect(t)
	lite := sqlitetest.Open(t, filepath.Join(t.TempDir(), "store.db")).Services()
	attrs := []mapcommons.Attribute{{Name: "n", Type: mapcommons.AttrInteger}, {Name: "s", Type: mapcommons.AttrString}}
	r := rand.New(rand.NewPCG(3, 5))
	src := &storetest.SliceSource{Attrs: attrs}
	for i := range 1000 {
		src.Features = append(src.Features, mapcommons.Feature{
			Values:   []any{int64(i), string(rune('a' + i%26))},
			Geometry: wkb.AppendPoint(nil, -180+360*r.Float64(), -80+160*r.Float64()),
		})
	}
	var ids [2]int64
	for k, svc := range []mapcommons.Services{s, lite} {
		ds := &mapcommons.Dataset{Type: "csv"}
		s2 := *src
		if err := svc.Datasets.CreateDataset(ctx, ds, &s2); err != nil {
			t.Fatal(err)
		}
		ids[k] = ds.ID
	}
	var table string
	if err := conn.QueryRow(ctx, `SELECT features FROM datasets WHERE id = $1`, ids[0]).Scan(&table); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT pos, minx, miny FROM `+table+` ORDER BY ctid`)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		pos  int64
		x, y float64
	}
	var phys []row
	for rows.Next() {
		var rw row
		if err := rows.Scan(&rw.pos, &rw.x, &rw.y); err != nil {
			t.Fatal(err)
		}
		phys = append(phys, rw)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(phys) != 1000 {
		t.Fatalf("%d rows", len(phys))
	}
	// Chunks: runs of rows in Hilbert order; every position of a chunk
	// below every position of the next.
	chunks, start, below := 0, 0, int64(-1)
	for i := 1; i <= len(phys); i++ {
		if i < len(phys) && postgres.Hilbert(phys[i].x, phys[i].y) >= postgres.Hilbert(phys[i-1].x, phys[i-1].y) {
			continue
		}
		lo, hi := phys[start].pos, phys[start].pos
		for _, rw := range phys[start:i] {
			lo, hi = min(lo, rw.pos), max(hi, rw.pos)
		}
		if int(hi-lo) != i-start-1 {
			t.Fatalf("chunk of rows %d to %d holds positions %d to %d: not a run", start, i, lo, hi)
		}
		if lo != below+1 {
			t.Fatalf("chunk from row %d starts at position %d, not after the chunk before it (%d)", start, lo, below)
		}
		chunks, start, below = chunks+1, i, hi
	}
	if chunks < 5 || chunks > 60 { // 4,000 bytes a chunk: about 17
		t.Fatalf("%d runs in Hilbert order, want chunks of about 60 rows", chunks)
	}
	for _, q := range []*mapcommons.FeatureQuery{
		{BBox: &mapcommons.BBox{W: -40, S: -30, E: 60, N: 50}, Limit: 30},
		{BBox: &mapcommons.BBox{W: -40, S: -30, E: 60, N: 50}, Limit: 30, Offset: 20, Descending: true},
		{BBox: &mapcommons.BBox{W: 170, S: -80, E: -170, N: 80}, Limit: -1},
		{BBox: &mapcommons.BBox{W: -40, S: -30, E: 60, N: 50}, Sort: "s", Limit: 40},
		{Near: &mapcommons.Near{Kind: mapcommons.NearPoint, XY: []float64{10, 10}, Radius: 2000, Units: "km"}, Limit: -1, WithDistance: true},
		{Limit: 10, Offset: 500},
	} {
		var got [2][]string
		for k, svc := range []mapcommons.Services{s, lite} {
			err := svc.Features.ScanFeatures(ctx, ids[k], q, func(f *mapcommons.Feature) error {
				got[k] = append(got[k], describe(f))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(got[0]) == 0 || !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("%+v:\npostgres %q\nsqlite   %q", q, got[0], got[1])
		}
	}
}
