package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// BenchmarkEditOne measures the store's transaction of an edit of one
// feature of a 200,000-point dataset (add, update, delete), and beside
// it PostgreSQL's own single-row statement on the same table
// (autocommit), for the ratio. The test server runs with fsync off;
// `mapcommons bench -edits -database-url …` measures both on a real one.
func BenchmarkEditOne(b *testing.B) {
	const n = 200000
	ctx := context.Background()
	url := pgtest.URL(b)
	db := pgtest.OpenURL(b, url)
	s := db.Services()
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, storetest.SampleSource(n)); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	for {
		ok, err := postgres.IndexesReady(ctx, conn, ds.ID)
		if err != nil {
			b.Fatal(err)
		}
		if ok {
			break
		}
		postgres.SweepAgain(db)
	}
	table, _, err := postgres.TableAndHoles(ctx, db, ds.ID)
	if err != nil {
		b.Fatal(err)
	}
	t := pgx.Identifier{table}.Sanitize()
	r := rand.New(rand.NewPCG(1, 2))
	feature := func(id int64) mapcommons.Feature {
		return mapcommons.Feature{ID: id, Values: []any{int64(r.IntN(1000)), r.Float64(), "edited", true}, Geometry: wkb.AppendPoint(nil, r.Float64(), r.Float64())}
	}
	next := int64(2)
	for _, kind := range []string{"add", "update", "delete"} {
		b.Run(kind, func(b *testing.B) {
			for b.Loop() {
				e := &mapcommons.Edits{}
				switch kind {
				case "add":
					e.Adds = []mapcommons.Feature{feature(0)}
				case "update":
					e.Updates = []mapcommons.Feature{feature(next)}
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
	pos := int64(1 << 40)
	for _, st := range []struct{ name, sql string }{
		{"row/insert", `INSERT INTO ` + t + ` (pos, fid, geom, minx, miny, maxx, maxy, a0, a1, a2, a3)
			VALUES ($1, $1, $2, $3, $4, $3, $4, $5, $6, 'edited', true)`},
		{"row/update", `UPDATE ` + t + ` SET geom = $2, minx = $3, miny = $4, maxx = $3, maxy = $4, a2 = 'edited' WHERE fid = $1`},
		{"row/delete", `DELETE FROM ` + t + ` WHERE fid = $1`},
	} {
		b.Run(st.name, func(b *testing.B) {
			k := int64(0)
			for b.Loop() {
				k++
				x, y := r.Float64(), r.Float64()
				var args []any
				switch st.name {
				case "row/insert":
					args = []any{pos + k, wkb.AppendPoint(nil, x, y), x, y, int64(r.IntN(1000)), r.Float64()}
				case "row/update":
					args = []any{1 + 2*k, wkb.AppendPoint(nil, x, y), x, y}
				case "row/delete":
					args = []any{pos + k}
				}
				if _, err := conn.Exec(ctx, st.sql, args...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
