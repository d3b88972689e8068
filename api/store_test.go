package api_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/pgtest"
	"mapcommons/internal/sqlitetest"
	"mapcommons/postgres"
	"mapcommons/segment"
	"mapcommons/sqlite"
)

// testStoreKind is the store the api tests run on: MAPCOMMONS_TEST_STORE=
// postgres runs them on PostgreSQL (a private server that pgtest starts),
// anything else on the embedded store.
var testStoreKind = os.Getenv("MAPCOMMONS_TEST_STORE")

// TestMain stops pgtest's PostgreSQL, if a test started it, at the end.
func TestMain(m *testing.M) { pgtest.Main(m) }

// testStore is the store under one test server.
type testStore struct {
	path string // the embedded store's file
	url  string // PostgreSQL's database
	sq   *sqlite.DB
	pg   *postgres.DB
	now  func() time.Time
}

// openTestStore opens a fresh store of testStoreKind for tb, in dir for
// the embedded one, closed at the end of tb. On PostgreSQL, tb is skipped
// while the store does not give every service.
func openTestStore(tb testing.TB, dir string) *testStore {
	tb.Helper()
	s := &testStore{}
	if testStoreKind == "postgres" {
		s.url = pgtest.URL(tb)
		s.pg = openPG(tb, s.url)
		v := reflect.ValueOf(s.pg.Services())
		for i := range v.NumField() {
			if v.Field(i).IsNil() {
				tb.Skipf("the PostgreSQL store gives no %s service yet", v.Type().Field(i).Name)
			}
		}
		return s
	}
	s.path = filepath.Join(dir, "mapcommons.db")
	s.sq = sqlitetest.Open(tb, s.path)
	return s
}

// openPG opens the PostgreSQL store at url as a server does: with local
// copies of the datasets (built in the background, so that a test's
// reads go to the database or to a copy as a server's would).
func openPG(tb testing.TB, url string) *postgres.DB {
	tb.Helper()
	db := pgtest.OpenURL(tb, url)
	if err := db.SetMirror(tb.TempDir(), 1<<30, segment.Copies{}); err != nil {
		tb.Fatal(err)
	}
	return db
}

// services are the store's services.
func (s *testStore) services() mapcommons.Services {
	if s.pg != nil {
		return s.pg.Services()
	}
	return s.sq.Services()
}

// setNow sets the store's clock.
func (s *testStore) setNow(now func() time.Time) {
	s.now = now
	if s.pg != nil {
		s.pg.Now = now
	} else {
		s.sq.Now = now
	}
}

// reopen closes the store and opens it again, as a restarted server
// would, keeping its clock; the new one is closed at the end of tb.
func (s *testStore) reopen(tb testing.TB) {
	tb.Helper()
	if s.pg != nil {
		s.pg.Close()
		s.pg = openPG(tb, s.url)
	} else {
		s.sq.Close()
		db, err := sqlite.Open(s.path)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { db.Close() })
		s.sq = db
	}
	if s.now != nil {
		s.setNow(s.now)
	}
}

// queryRow reads one row of a query written for both stores' SQL (no
// parameters) from a connection of its own into dst.
func (s *testStore) queryRow(tb testing.TB, query string, dst ...any) error {
	tb.Helper()
	if s.pg != nil {
		conn, err := pgx.Connect(context.Background(), s.url)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		return conn.QueryRow(context.Background(), query).Scan(dst...)
	}
	db, err := sql.Open("sqlite", "file:"+s.path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	return db.QueryRow(query).Scan(dst...)
}
