package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
)

// TestDropCancelsOnlyBuilds checks that a write dropping a table cancels
// only an index build holding the table's build lock, never another
// write's: two tables whose names hash alike share the lock, and the
// drop of one must wait for the other's drop (whose DROP waits for a
// reader), not cancel it.
func TestDropCancelsOnlyBuilds(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db := pgtest.OpenURL(t, url)
	s := db.Services()
	conn := rawConn(t, url)
	postgres.SetDropLockTimeout(t, 2*time.Minute) // a bound on a hang: the waits below are for events
	// Two features table names, of datasets and generations yet unused,
	// that hashtext (the build locks' key) takes to one number.
	// (Found with hashtext over features_<1000–1999>_<1000–1199>.)
	const i1, j1, i2, j2 = 1370, 1091, 1497, 1095
	var same bool
	conn.QueryRow(ctx, `SELECT hashtext($1) = hashtext($2)`, fmt.Sprintf("features_%d_%d", i1, j1), fmt.Sprintf("features_%d_%d", i2, j2)).Scan(&same)
	if !same {
		t.Fatal("the names do not collide")
	}
	create := func(id, gen int64) *mapcommons.Dataset {
		if _, err := conn.Exec(ctx, fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('datasets', 'id'), %d), setval('feature_generations', %d)`, id-1, gen-1)); err != nil {
			t.Fatal(err)
		}
		ds := &mapcommons.Dataset{Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, ds, indexSource(50)); err != nil {
			t.Fatal(err)
		}
		var table string
		if err := conn.QueryRow(ctx, `SELECT features FROM datasets WHERE id = $1`, ds.ID).Scan(&table); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("features_%d_%d", id, gen); table != want {
			t.Fatalf("table %s, want %s", table, want)
		}
		waitIndexes(t, conn, ds.ID)
		return ds
	}
	x, y := create(i1, j1), create(i2, j2)

	// A reader of x's table holds x's DROP for a while.
	reader := rawConn(t, url)
	if _, err := reader.Exec(ctx, fmt.Sprintf(`BEGIN; SELECT count(*) FROM features_%d_%d`, i1, j1)); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	go func() { errs <- s.Datasets.DeleteDataset(ctx, x.ID) }()
	// x's delete holds the shared lock and waits in its DROP.
	eventually(t, "the first delete waiting in its DROP", func() bool {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DROP TABLE%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
	go func() { errs <- s.Datasets.DeleteDataset(ctx, y.ID) }()
	// y's delete finds the build lock held, and has looked for a build to
	// cancel (its session's last statement says so): it must not have
	// cancelled x's DROP.
	eventually(t, "the second delete looking for a build to cancel", func() bool {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE pid <> pg_backend_pid() AND query LIKE 'SELECT CASE WHEN a.application_name%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
	if _, err := reader.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("delete: %v", err)
		}
	}
}

// TestCancelBuildSeesNewBuilds: a write's transaction that looked at the
// server's activity before a build connected still finds and cancels
// that build (pg_stat_activity is one snapshot per transaction unless
// cleared), rather than waiting for it until the write times out.
func TestCancelBuildSeesNewBuilds(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	// Long enough for any machine's load (the build sleeps a minute: a
	// write that did not see it would get the lock only then, and find it
	// not cancelled).
	postgres.SetDropLockTimeout(t, 2*time.Minute)
	writer := rawConn(t, url)
	tx, err := writer.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	// A build, connected after that look, holding the table's lock.
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["application_name"] = postgres.BuildApp
	build, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer build.Close(ctx)
	const table = "features_7_7"
	if _, err := build.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext($2))`, int32(0x6978), table); err != nil {
		t.Fatal(err)
	}
	sleeping := make(chan error, 1)
	go func() {
		_, err := build.Exec(ctx, `SELECT pg_sleep(60)`)
		if err == nil {
			_, err = build.Exec(ctx, `SELECT pg_advisory_unlock_all()`)
		} else {
			build.Exec(ctx, `SELECT pg_advisory_unlock_all()`)
		}
		sleeping <- err
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	err = postgres.CancelBuild(ctx, tx, table)
	if err != nil {
		t.Fatalf("the write waited %v for the build and gave up: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if err := <-sleeping; err == nil {
		t.Fatal("the build was not cancelled")
	}
}

// TestBuildAfterAFailureConnectsAfresh: once a build fails or is cut
// short, no other statement runs on its server process; the next build
// connects afresh (the tests' PostgreSQL aborted in a GiST build on the
// build connection after builds on it were cancelled). Here the failure
// is that of a dataset whose row names a table that is not there, whose
// build the sweep tries before the next dataset's.
func TestBuildAfterAFailureConnectsAfresh(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db := pgtest.OpenURL(t, url)
	s := db.Services()
	conn := rawConn(t, url)
	create := func() (*mapcommons.Dataset, string) {
		ds := &mapcommons.Dataset{Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, ds, indexSource(50)); err != nil {
			t.Fatal(err)
		}
		var table string
		if err := conn.QueryRow(ctx, `SELECT features FROM datasets WHERE id = $1`, ds.ID).Scan(&table); err != nil {
			t.Fatal(err)
		}
		return ds, table
	}
	x, _ := create()
	waitIndexes(t, conn, x.ID)
	if _, err := conn.Exec(ctx, `UPDATE datasets SET features = 'features_gone' WHERE id = $1`, x.ID); err != nil {
		t.Fatal(err)
	}
	y, table := create()
	waitIndexes(t, conn, y.ID)
	failed, next := postgres.BuildBackend(db, "features_gone_a0"), postgres.BuildBackend(db, table+"_a0")
	if failed == 0 || next == 0 {
		t.Fatalf("builds on processes %d (the failed one) and %d", failed, next)
	}
	if failed == next {
		t.Errorf("the build after a failed one ran on the same server process, %d", next)
	}
}
