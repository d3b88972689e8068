package postgres_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/internal/pgtest"
)

// TestClaimDueFeedsOnTable checks, until the store has a DatasetService
// (and the contract's FeedClaims parts run), the claims on the table:
// only due feeds, the oldest first, each to one of two stores claiming at
// once, and again once the lease is over. The stores' clock stands still
// but where the test moves it: no lease runs out while the claims go on.
func TestClaimDueFeedsOnTable(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	da, db := pgtest.OpenURL(t, url), pgtest.OpenURL(t, url)
	da.Now, db.Now = clock, clock
	a, b := da.Services(), db.Services()
	conn := rawConn(t, url)
	insert := func(dataType string, fetched time.Time) int64 {
		t.Helper()
		var id int64
		if err := conn.QueryRow(ctx, `INSERT INTO datasets (type, data_type, state, fetched_at, created_at, updated_at)
			VALUES ('csv', $1, 'complete', $2, now(), now()) RETURNING id`, dataType, fetched).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	insert("Dataset", now.Add(-48*time.Hour)) // an upload: never a feed to refresh
	var due []int64
	for i := range 12 {
		due = append(due, insert(mapcommons.DataTypeFeed, now.Add(-time.Duration(24-i)*time.Hour)))
	}
	insert(mapcommons.DataTypeFeed, now) // fetched just now
	if c, err := a.FeedClaims.ClaimDueFeed(ctx, time.Hour, time.Hour); err != nil || c.ID != due[0] {
		t.Fatalf("first claim: %d, %v; want the oldest, %d", c.ID, err, due[0])
	}
	var (
		got = []int64{due[0]}
		wg  sync.WaitGroup
	)
	for _, s := range []mapcommons.Services{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := s.FeedClaims.ClaimDueFeed(ctx, time.Hour, 50*time.Millisecond)
				if err != nil {
					t.Error(err)
				}
				if c.ID == 0 || err != nil {
					return
				}
				mu.Lock()
				got = append(got, c.ID)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(got)
	if !slices.Equal(got, due) {
		t.Fatalf("claimed %v, want each of %v once", got, due)
	}
	mu.Lock()
	now = now.Add(50 * time.Millisecond)
	mu.Unlock()
	if c, err := b.FeedClaims.ClaimDueFeed(ctx, time.Hour, time.Hour); err != nil || c.ID != due[1] {
		t.Fatalf("after the short leases: %d, %v; want %d (the first claim's lease holds)", c.ID, err, due[1])
	}
}
