package pgtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestDatabases checks that each test gets a migrated database of its own,
// and that the server does not run as root.
func TestDatabases(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	a := pgtest.URL(t)
	t.Logf("first database (server start, template, clone): %v", time.Since(start))
	start = time.Now()
	b := pgtest.URL(t)
	t.Logf("second database (clone): %v", time.Since(start))
	if a == b {
		t.Fatal("two tests share a database")
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	if _, err := ca.Exec(ctx, `INSERT INTO user_groups (name, created_at) VALUES ('only in a', now())`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := cb.QueryRow(ctx, `SELECT count(*) FROM user_groups`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("b sees %d groups of a (%v)", n, err)
	}
	var postgis string
	if err := cb.QueryRow(ctx, `SELECT postgis_lib_version()`).Scan(&postgis); err != nil {
		t.Fatalf("no PostGIS in a test database: %v", err)
	}
	var super bool
	var runAs string
	if err := cb.QueryRow(ctx, `SELECT usesuper, current_setting('data_directory') FROM pg_user WHERE usename = current_user`).Scan(&super, &runAs); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostGIS %s, data in %s", postgis, runAs)
}
