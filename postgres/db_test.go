package postgres_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// open opens a store for the contract, on the contract's clock.
func open(tb testing.TB) mapcommons.Services {
	db := pgtest.Open(tb)
	db.Now = storetest.ClockFor(tb)
	return db.Services()
}

// openTwo opens two stores on one database, as two servers would, on the
// contract's clock.
func openTwo(tb testing.TB) (a, b mapcommons.Services) {
	url := pgtest.URL(tb)
	da, db := pgtest.OpenURL(tb, url), pgtest.OpenURL(tb, url)
	da.Now, db.Now = storetest.ClockFor(tb), storetest.ClockFor(tb)
	return da.Services(), db.Services()
}

// rawConn is a connection of the test's own to the database at url, for
// reading and writing tables as they are, closed at the end of the test.
func rawConn(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestContract(t *testing.T) { storetest.Run(t, open) }

func TestShared(t *testing.T) { storetest.RunShared(t, openTwo) }

// TestMigrateConcurrently starts several stores at once on a database
// never migrated: one migrates (under the advisory lock), the others wait
// and find the work done.
func TestMigrateConcurrently(t *testing.T) {
	url := pgtest.EmptyURL(t)
	ctx := context.Background()
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := postgres.Open(ctx, url)
			if err == nil {
				err = db.Ping(ctx)
				db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	files, err := fs.Glob(postgres.Migrations, "migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v %v", files, err)
	}
	conn := rawConn(t, url)
	rows, _ := conn.Query(ctx, `SELECT name FROM schema_migrations ORDER BY name`)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(files) || filepath.Base(names[0]) != filepath.Base(files[0]) {
		t.Fatalf("schema_migrations = %v; want one row per file %v", names, files)
	}
	// Opening again applies nothing and still works.
	db := pgtest.OpenURL(t, url)
	if _, err := db.Services().Users.FindUserByID(ctx, 1); mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
		t.Fatalf("after migrating: %v", err)
	}
}

func TestOpenBadURL(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://[::1")
	if mapcommons.ErrorCode(err) != mapcommons.EINVALID {
		t.Fatalf("a malformed url: %v", err)
	}
}

// TestPoolSize: a server's pool holds 16 connections unless the URL says
// otherwise (pgxpool's own default is max(4, CPUs), which a few slow
// downloads fill).
func TestPoolSize(t *testing.T) {
	url := pgtest.URL(t)
	for _, c := range []struct {
		url  string
		want int32
	}{{url, 16}, {url + "&pool_max_conns=3", 3}} {
		db, err := postgres.Open(context.Background(), c.url)
		if err != nil {
			t.Fatal(err)
		}
		got := postgres.MaxConns(db)
		db.Close()
		if got != c.want {
			t.Errorf("%s: %d connections, want %d", c.url, got, c.want)
		}
	}
}
