package postgres_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/pgtest"
	"mapcommons/internal/sqlitetest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// TestBoxPageInPositionOrder checks that a page of a box's points, in
// position order either way, is read through the box and position index and
// stops after the page, instead of reading every match of the box to sort
// them; that the count with a first page is not planned as if it stopped
// there too (a walk of the whole key); and that the answers are the
// segment engine's.
func TestBoxPageInPositionOrder(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db := pgtest.OpenURL(t, url)
	pg := db.Services()
	conn := rawConn(t, url)
	lite := sqlitetest.Open(t, filepath.Join(t.TempDir(), "store.db")).Services()
	// Points on a grid whose positions run across it, so that the box's
	// first positions are spread over the table.
	const n = 40000
	source := func() *storetest.SliceSource {
		src := &storetest.SliceSource{Attrs: edgeAttrs}
		for i := range n {
			j := (i * 7919) % n
			src.Features = append(src.Features, mapcommons.Feature{Values: []any{int64(i % 10), nil, nil, nil, nil},
				Geometry: wkb.AppendPoint(nil, float64(j%200)-100, float64(j/200)/2-50)})
		}
		return src
	}
	var ids [2]int64
	for k, s := range []mapcommons.Services{pg, lite} {
		ds := &mapcommons.Dataset{Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, ds, source()); err != nil {
			t.Fatal(err)
		}
		ids[k] = ds.ID
	}
	waitIndexes(t, conn, ids[0])
	if _, err := conn.Exec(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	box := &mapcommons.BBox{W: -50, S: -30, E: 30, N: 20} // 81 × 101 of the 200 × 200 points
	knn := regexp.MustCompile(`Index Scan using \S+_near .*actual time=\S+ rows=(\d+)`)
	removed := regexp.MustCompile(`Rows Removed by Filter: (\d+)`)
	var count int64
	for _, c := range []struct {
		q    *mapcommons.FeatureQuery
		most int // rows read through the box and position index, at most; 0: not asked
	}{
		{&mapcommons.FeatureQuery{BBox: box, Limit: 30}, 30},
		{&mapcommons.FeatureQuery{BBox: box, Limit: 30, Offset: 40}, 70},
		{&mapcommons.FeatureQuery{BBox: box, Limit: 30, Descending: true}, 30},
		{&mapcommons.FeatureQuery{BBox: box, Limit: 30, Count: &count}, 0},
	} {
		sql, text := explainQuery(t, db, conn, ids[0], c.q)
		if c.most > 0 {
			m := knn.FindStringSubmatch(text)
			if m == nil {
				t.Errorf("%+v does not read the page through the box and position index:\n%s\n%s", c.q, sql, text)
			} else if k, _ := strconv.Atoi(m[1]); k > c.most {
				t.Errorf("%+v: %d rows read, at most %d wanted:\n%s", c.q, k, c.most, text)
			}
		}
		for _, m := range removed.FindAllStringSubmatch(text, -1) {
			if k, _ := strconv.Atoi(m[1]); k > n/10 {
				t.Errorf("%+v: %d rows read and left:\n%s\n%s", c.q, k, sql, text)
			}
		}
	}
	for i, q := range []*mapcommons.FeatureQuery{
		{BBox: box, Limit: 30}, {BBox: box, Limit: 30, Offset: 40}, {BBox: box, Limit: 30, Descending: true},
		{BBox: box, Limit: 30, Offset: 8170}, {BBox: box, Limit: 30, Descending: true, Offset: 8170},
		{BBox: box, Limit: 100, Filters: []mapcommons.Filter{{Attr: "n", Op: mapcommons.OpEquals, Values: []string{"3"}}}},
		{BBox: &mapcommons.BBox{W: 170, S: -30, E: -60, N: 20}, Limit: 30}, // across the antimeridian: two boxes
	} {
		compareScans(t, i, q, pg, lite, ids)
	}
	// The count with the first page is every match's.
	var counts [2]int64
	for k, s := range []mapcommons.Services{pg, lite} {
		q := &mapcommons.FeatureQuery{BBox: box, Limit: 30, Count: &counts[k]}
		if err := s.Features.ScanFeatures(ctx, ids[k], q, func(*mapcommons.Feature) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if counts[0] != 81*101 || counts[1] != counts[0] {
		t.Errorf("counts %v, want %d", counts, 81*101)
	}
}

// TestOneRowStatementsTakeTheKey checks that the statements of an edit
// that name one position, on their generic plan (which a prepared
// statement runs after its fifth execution), read it through the primary
// key and not through the box and position index: when that index held
// the column pos itself, PostgreSQL chose it for pos = $1 and read it
// whole (38 ms for an UPDATE of one row of a million). And that the index
// of that first form, where a server made it, is dropped by the indexer.
func TestOneRowStatementsTakeTheKey(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db := pgtest.OpenURL(t, url)
	conn := rawConn(t, url)
	src := &storetest.SliceSource{Attrs: edgeAttrs}
	for i := range 20000 {
		src.Features = append(src.Features, mapcommons.Feature{Values: []any{int64(i % 10), nil, nil, nil, nil},
			Geometry: wkb.AppendPoint(nil, float64(i%200)-100, float64(i/200)/2-50)})
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := db.Services().Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	table, _, err := postgres.TableAndHoles(ctx, db, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The first form, as a server of that time built it, once this
	// server's indexer has built the table's indexes (a plain CREATE INDEX
	// beside its builds can deadlock with them).
	waitIndexes(t, conn, ds.ID)
	old := pgx.Identifier{table + "_knn"}.Sanitize()
	if _, err := conn.Exec(ctx, `CREATE INDEX `+old+` ON `+pgx.Identifier{table}.Sanitize()+` USING gist (box, pos)`); err != nil {
		t.Fatal(err)
	}
	postgres.SweepAgain(db)
	waitIndexes(t, conn, ds.ID)
	eventually(t, "the first form's index dropped", func() bool {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname = $1`, table+"_knn").Scan(&n)
		return err == nil && n == 0
	})
	if _, err := conn.Exec(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	tbl := pgx.Identifier{table}.Sanitize()
	for _, sql := range []string{
		`UPDATE ` + tbl + ` SET minx = $2 WHERE pos = $1`,
		`SELECT fid FROM ` + tbl + ` WHERE pos = $1`,
		`SELECT fid FROM ` + tbl + ` WHERE pos >= $1 ORDER BY pos LIMIT 30`,
	} {
		if _, err := tx.Exec(ctx, `PREPARE one AS `+sql); err != nil {
			t.Fatal(err)
		}
		explain := `EXPLAIN EXECUTE one(5, 1.5)`
		if strings.Count(sql, "$") == 1 {
			explain = `EXPLAIN EXECUTE one(5)`
		}
		if plan := planOf(t, tx, explain); !strings.Contains(plan, table+"_pkey") {
			t.Errorf("%s does not take the key:\n%s", sql, plan)
		}
		if _, err := tx.Exec(ctx, `DEALLOCATE one`); err != nil {
			t.Fatal(err)
		}
	}
}
