package postgres_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/pgtest"
	"mapcommons/internal/sqlitetest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// indexSource is edgeSource's kind of values (NaN, ±Inf, -0, integers
// beyond 2^53, nulls, strings longer than an index holds), n rows of them
// with many ties, the columns cycling at different lengths (but one x in
// ten, all different).
func indexSource(n int) *storetest.SliceSource {
	xs := []any{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0.0, 1.5, -2.25, nil, 1e300, 500.5}
	ns := []any{int64(1<<53 + 1), int64(1 << 53), int64(-3), int64(0), nil, int64(7), int64(math.MaxInt64), int64(math.MinInt64), int64(1<<53 - 1)}
	long := strings.Repeat("m", 3000)
	ss := []any{"a\x00b", "a", "A", "\xff\xfe", "", "ämber", nil, long, long + "a", "zeta", "m"}
	bs := []any{true, false, nil, true}
	ds := []any{"2026-01-02", "2025-12-31", nil, "2026-01-02", "2024-02-29"}
	src := &storetest.SliceSource{Attrs: edgeAttrs}
	for i := range n {
		src.Features = append(src.Features, mapcommons.Feature{
			Values:   []any{ns[i%len(ns)], xs[i%len(xs)], ss[i%len(ss)], bs[i%len(bs)], ds[i%len(ds)]},
			Geometry: []byte(nil),
		})
		if i%len(xs) == len(xs)-1 {
			src.Features[i].Values[1] = float64(i) / 10
		}
		if i%3 == 0 {
			src.Features[i].Geometry = wkb.AppendPoint(nil, float64(i%360)-180, float64(i%170)-85)
		}
	}
	return src
}

// explainQuery runs EXPLAIN ANALYZE on the SQL db makes of q on dataset
// id, and returns the SQL and the plan.
func explainQuery(t *testing.T, db *postgres.DB, conn *pgx.Conn, id int64, q *mapcommons.FeatureQuery) (sql, plan string) {
	t.Helper()
	ctx := context.Background()
	sql, args, err := postgres.QuerySQL(ctx, db, id, q)
	if err != nil {
		t.Fatal(err)
	}
	return sql, planOf(t, conn, `EXPLAIN ANALYZE `+sql, args...)
}

// planOf is the text of the plan an EXPLAIN statement gives, through q
// (a connection or a transaction).
func planOf(t *testing.T, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, explain string, args ...any) string {
	t.Helper()
	rows, err := q.Query(context.Background(), explain, args...)
	if err != nil {
		t.Fatalf("%s: %v", explain, err)
	}
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// waitIndexes waits until dataset id's indexes are all valid.
func waitIndexes(t *testing.T, conn *pgx.Conn, id int64) {
	t.Helper()
	eventually(t, fmt.Sprintf("the attribute indexes of dataset %d", id), func() bool {
		ok, err := postgres.IndexesReady(context.Background(), conn, id)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	})
}

// TestAttrIndexes checks that the indexes are built after a create, that
// the filters and sorts' SQL uses them (the sorts stopping after the
// page), and that the answers are the segment engine's.
func TestAttrIndexes(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db := pgtest.OpenURL(t, url)
	pg := db.Services()
	conn := rawConn(t, url)
	lite := sqlitetest.Open(t, filepath.Join(t.TempDir(), "store.db")).Services()
	const n = 20000
	var ids [2]int64
	for k, s := range []mapcommons.Services{pg, lite} {
		ds := &mapcommons.Dataset{Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, ds, indexSource(n)); err != nil {
			t.Fatal(err)
		}
		ids[k] = ds.ID
	}
	waitIndexes(t, conn, ids[0])

	// The plans: each filter through its column's index, each sort's page
	// read from it and no further.
	if _, err := conn.Exec(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	indexScan := regexp.MustCompile(`(?:Index Scan Backward|Index Scan|Bitmap Index Scan) (?:using|on) (\S+) .*actual time=\S+ rows=(\d+)`)
	for _, c := range []struct {
		q     *mapcommons.FeatureQuery
		index string // the index's suffix
		most  int    // rows read from it, at most
	}{
		{&mapcommons.FeatureQuery{Limit: -1, Filters: []mapcommons.Filter{{Attr: "n", Op: mapcommons.OpEquals, Values: []string{"7"}}}}, "_a0", n},
		{&mapcommons.FeatureQuery{Limit: 30, Filters: []mapcommons.Filter{{Attr: "x", Op: mapcommons.OpMin, Values: []string{"500"}},
			{Attr: "x", Op: mapcommons.OpMax, Values: []string{"501"}}}}, "_a1", n},
		{&mapcommons.FeatureQuery{Limit: -1, Filters: []mapcommons.Filter{{Attr: "s", Op: mapcommons.OpEquals, Values: []string{"zeta"}}}}, "_a2", n},
		{&mapcommons.FeatureQuery{Limit: 30, Offset: 10, Sort: "n"}, "_a0", 40},
		// Descending, ties are sorted again by position: the run of the
		// greatest value is read whole, and the first row past it.
		{&mapcommons.FeatureQuery{Limit: 30, Sort: "n", Descending: true}, "_a0", n/9 + 1},
		{&mapcommons.FeatureQuery{Limit: 30, Sort: "x", Descending: true}, "_a1", n/10 + 1},
		// (Strings and dates: the planner merges the short values through
		// the index with the long ones only when it expects few long ones;
		// here it sorts, which the answers below check.)
	} {
		sql, text := explainQuery(t, db, conn, ids[0], c.q)
		used := false
		for _, m := range indexScan.FindAllStringSubmatch(text, -1) {
			if strings.HasSuffix(m[1], c.index) {
				used = true
				if k, _ := strconv.Atoi(m[2]); k > c.most {
					t.Errorf("%+v: %d rows read from %s, at most %d wanted:\n%s", c.q, k, m[1], c.most, text)
				}
			}
		}
		if !used || strings.Contains(text, "Seq Scan") {
			t.Errorf("%+v does not use the index *%s:\n%s\n%s", c.q, c.index, sql, text)
		}
	}

	// A sorted page runs on its generic plan only without a condition,
	// whose values would decide the plan (a filter of 51 matches: the
	// generic plan walked the sort's index for them, 86 ms against 0.5).
	for _, c := range []struct {
		q       *mapcommons.FeatureQuery
		generic bool
	}{
		{&mapcommons.FeatureQuery{Limit: 30, Sort: "n"}, true},
		{&mapcommons.FeatureQuery{Limit: 30, Sort: "n", Filters: []mapcommons.Filter{{Attr: "x", Op: mapcommons.OpMax, Values: []string{"50"}}}}, false},
		{&mapcommons.FeatureQuery{Limit: 30, Sort: "x", BBox: &mapcommons.BBox{W: 0, S: 0, E: 10, N: 10}}, false},
	} {
		sql, _, err := postgres.QuerySQL(ctx, db, ids[0], c.q)
		if err != nil {
			t.Fatal(err)
		}
		if postgres.GenericPlan(sql) != c.generic {
			t.Errorf("%+v: on the generic plan %v, want %v: %.200s", c.q, !c.generic, c.generic, sql)
		}
	}

	// The answers, with the indexes, are the segment engine's.
	var qs []*mapcommons.FeatureQuery
	for _, a := range edgeAttrs {
		for _, desc := range []bool{false, true} {
			for _, off := range []int64{0, 5, 700, n/3 - 3, n - 40, n + 5} {
				qs = append(qs, &mapcommons.FeatureQuery{Limit: 30, Offset: off, Sort: a.Name, Descending: desc})
			}
			qs = append(qs, &mapcommons.FeatureQuery{Limit: 9, Offset: 3, Sort: a.Name, Descending: desc,
				Filters: []mapcommons.Filter{{Attr: "b", Op: mapcommons.OpEquals, Values: []string{"true"}}}})
		}
	}
	long := strings.Repeat("m", 3000)
	for _, f := range [][]mapcommons.Filter{
		{{Attr: "x", Op: mapcommons.OpMin, Values: []string{"0"}}},
		{{Attr: "x", Op: mapcommons.OpMax, Values: []string{"0"}}},
		{{Attr: "x", Op: mapcommons.OpMax, Values: []string{"-1"}}, {Attr: "x", Op: mapcommons.OpMin, Values: []string{"-1e300"}}},
		{{Attr: "x", Op: mapcommons.OpMin, Values: []string{"-3"}}, {Attr: "x", Op: mapcommons.OpMax, Values: []string{"1.5"}}},
		{{Attr: "x", Op: mapcommons.OpEquals, Values: []string{"-0"}}},
		{{Attr: "x", Op: mapcommons.OpIn, Values: []string{"1.5", "1e300", "500.5", "3"}}},
		{{Attr: "n", Op: mapcommons.OpMin, Values: []string{"9007199254740993"}}},
		{{Attr: "n", Op: mapcommons.OpMin, Values: []string{"9007199254740992.5"}}},
		{{Attr: "n", Op: mapcommons.OpMax, Values: []string{"9007199254740991"}}},
		{{Attr: "n", Op: mapcommons.OpEquals, Values: []string{"9007199254740992"}}},
		{{Attr: "n", Op: mapcommons.OpIn, Values: []string{"9223372036854775807", "-9223372036854775808", "7.5", "-3", "0"}}},
		{{Attr: "n", Op: mapcommons.OpMin, Values: []string{"9223372036854775808"}}},
		{{Attr: "n", Op: mapcommons.OpMax, Values: []string{"-9223372036854775809"}}},
		{{Attr: "n", Op: mapcommons.OpMax, Values: []string{"-1e300"}}},
		{{Attr: "n", Op: mapcommons.OpMin, Values: []string{"6.5"}}, {Attr: "n", Op: mapcommons.OpMax, Values: []string{"7"}}},
		{{Attr: "s", Op: mapcommons.OpMin, Values: []string{"m"}}},
		{{Attr: "s", Op: mapcommons.OpMax, Values: []string{long}}},
		{{Attr: "s", Op: mapcommons.OpIn, Values: []string{"A", long, "a\x00b", long + "a"}}},
		{{Attr: "s", Op: mapcommons.OpEquals, Values: []string{long + "a"}}},
		{{Attr: "b", Op: mapcommons.OpMin, Values: []string{"yes"}}},
		{{Attr: "b", Op: mapcommons.OpMin, Values: []string{"no"}}},
		{{Attr: "b", Op: mapcommons.OpMax, Values: []string{"0"}}},
		{{Attr: "b", Op: mapcommons.OpIn, Values: []string{"0", "1"}}},
		{{Attr: "d", Op: mapcommons.OpMax, Values: []string{"2026-01-01"}}},
	} {
		qs = append(qs, &mapcommons.FeatureQuery{Limit: -1, Filters: f},
			&mapcommons.FeatureQuery{Limit: 30, Offset: 2, Filters: f},
			&mapcommons.FeatureQuery{Limit: 30, Offset: 2, Filters: f, Sort: "x", Descending: true},
			&mapcommons.FeatureQuery{Limit: 30, Offset: 2, Filters: f, Sort: "s"})
	}
	for i, q := range qs {
		compareScans(t, i, q, pg, lite, ids)
	}
}

// TestIndexBuildDuringWrites checks that replacing or deleting a dataset
// while its indexes are being built neither fails nor waits for the
// build, and leaves no index behind but the current table's, all valid.
// The builds cannot end while the test holds a snapshot older than them
// (CREATE INDEX CONCURRENTLY waits for such snapshots' transactions): a
// write that waited for a build would wait for ever, and fail when its
// wait for the build lock is over (a bound on a hang, not a measure).
func TestIndexBuildDuringWrites(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	postgres.SetDropLockTimeout(t, 2*time.Minute)
	db := pgtest.OpenURL(t, url)
	s := db.Services()
	conn := rawConn(t, url)
	old := rawConn(t, url)
	snap, err := old.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Rollback(ctx)
	if _, err := snap.Exec(ctx, `SELECT 1`); err != nil { // takes the snapshot
		t.Fatal(err)
	}
	// A build of the table ds points to is under way. The server builds
	// one table's indexes at a time: the datasets are made one after the
	// other, each when the build before is over.
	building := func(ds *mapcommons.Dataset) bool {
		var k int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'
			AND query LIKE '%' || (SELECT features FROM datasets WHERE id = $2) || '%'`, postgres.BuildApp, ds.ID).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k > 0
	}
	waitBuilding := func(ds *mapcommons.Dataset) {
		t.Helper()
		eventually(t, fmt.Sprintf("an index build of dataset %d", ds.ID), func() bool { return building(ds) })
	}
	keep, gone := &mapcommons.Dataset{Type: "csv"}, &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, gone, indexSource(30000)); err != nil {
		t.Fatal(err)
	}
	waitBuilding(gone)
	if err := s.Datasets.DeleteDataset(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Datasets.CreateDataset(ctx, keep, indexSource(30000)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		waitBuilding(keep)
		if _, err := s.Datasets.ReplaceFeatures(ctx, keep.ID, indexSource(30000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := snap.Rollback(ctx); err != nil { // the builds may end
		t.Fatal(err)
	}
	waitIndexes(t, conn, keep.ID)
	var table string
	if err := conn.QueryRow(ctx, `SELECT features FROM datasets WHERE id = $1`, keep.ID).Scan(&table); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE c.relname LIKE 'features\_%' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var name string
		var valid bool
		rows.Scan(&name, &valid)
		if !strings.HasPrefix(name, table+"_") || !valid {
			t.Errorf("index %s (valid %v) is left, the table is %s", name, valid, table)
		}
		names = append(names, name)
	}
	if len(names) != 4+len(edgeAttrs)+1 { // the key, the ids', the boxes', the boxes and positions', an attribute's each, the long strings'
		t.Errorf("indexes %v", names)
	}
	if postgres.IndexesBuilt(db) == 0 {
		t.Error("the server built no index")
	}
}

// TestBuildLeftToAnotherRetried checks that a table whose build lock
// another session holds (a builder at work, or the backend of a server
// stopped in a build, which keeps the lock until its statement ends) is
// swept again soon after, not at the next periodic sweep: the benchmark's
// first server, stopped after the ingest, left its new table's indexes
// unbuilt for five minutes.
func TestBuildLeftToAnotherRetried(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	postgres.SetBusyRetry(t, 50*time.Millisecond)
	db := pgtest.OpenURL(t, url)
	conn, other := rawConn(t, url), rawConn(t, url)
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := db.Services().Datasets.CreateDataset(ctx, ds, indexSource(500)); err != nil {
		t.Fatal(err)
	}
	waitIndexes(t, conn, ds.ID)
	table, _, err := postgres.TableAndHoles(ctx, db, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext($2))`, postgres.IndexLock, table); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `DROP INDEX `+pgx.Identifier{table + "_a0"}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	done := postgres.Sweeps(db)
	postgres.SweepAgain(db)
	eventually(t, "a sweep while another holds the table", func() bool { return postgres.Sweeps(db) > done+1 })
	if ok, err := postgres.IndexesReady(ctx, conn, ds.ID); err != nil || ok {
		t.Fatalf("built while another held the table's lock: %v %v", ok, err)
	}
	if _, err := other.Exec(ctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, postgres.IndexLock, table); err != nil {
		t.Fatal(err)
	}
	waitIndexes(t, conn, ds.ID)
}

// TestKNNIndexOnlyOnLargeTables: a table under minKNNRows features gets
// its attribute indexes but no (box, position) index; one at the bound
// gets it too.
func TestKNNIndexOnlyOnLargeTables(t *testing.T) {
	postgres.SetMinKNNRows(t, 60)
	ctx := context.Background()
	url := pgtest.URL(t)
	db := pgtest.OpenURL(t, url)
	conn := rawConn(t, url)
	for _, n := range []int{59, 60} {
		ds := &mapcommons.Dataset{Type: "csv"}
		if err := db.Services().Datasets.CreateDataset(ctx, ds, indexSource(n)); err != nil {
			t.Fatal(err)
		}
		waitIndexes(t, conn, ds.ID)
		table, _, err := postgres.TableAndHoles(ctx, db, ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		var near, a0 bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL`, table+"_near", table+"_a0").Scan(&near, &a0); err != nil {
			t.Fatal(err)
		}
		if near != (n >= 60) || !a0 {
			t.Fatalf("%d features: the (box, position) index %v, the first attribute's %v", n, near, a0)
		}
	}
}
