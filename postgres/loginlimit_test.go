package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/pgtest"
)

// TestLoginLimitsSweep: the rows of buckets full again are removed by a
// later spend (at most once a minute), so the table holds only buckets
// that still count.
func TestLoginLimitsSweep(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := pgtest.OpenURL(t, url).Services()
	conn := rawConn(t, url)
	rows := func() (keys []string) {
		t.Helper()
		r, _ := conn.Query(ctx, `SELECT key FROM login_limits ORDER BY key`)
		keys, err := pgx.CollectRows(r, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	now := time.Now().UTC()
	spend := func(at time.Time, key string) {
		t.Helper()
		if err := s.LoginLimits.SpendLoginTokens(ctx, at, []mapcommons.LoginSpend{{Key: key, Per: time.Second, Capacity: 60}}); err != nil {
			t.Fatal(err)
		}
	}
	spend(now, "a")
	spend(now.Add(30*time.Second), "b") // a is full again, but the last sweep was just now
	if got := rows(); len(got) != 2 {
		t.Fatalf("rows %v, want a and b", got)
	}
	spend(now.Add(2*time.Minute), "c") // a sweep: a and b are full again
	if got := rows(); len(got) != 1 || got[0] != "c" {
		t.Fatalf("rows %v after the sweep, want c", got)
	}
}
