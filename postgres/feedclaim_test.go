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
// once, and again once the lease is over.
func TestClaimDueFeedsOnTable(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, b := pgtest.OpenURL(t, url).Services(), pgtest.OpenURL(t, url).Services()
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
	now := time.Now()
	insert("Dataset", now.Add(-48*time.Hour)) // an upload: never a feed to refresh
	var due []int64
	for i := range 12 {
		due = append(due, insert(mapcommons.DataTypeFeed, now.Add(-time.Duration(24-i)*time.Hour)))
	}
	insert(mapcommons.DataTypeFeed, now) // fetched just now
	if id, err := a.FeedClaims.ClaimDueFeed(ctx, time.Hour, time.Hour); err != nil || id != due[0] {
		t.Fatalf("first claim: %d, %v; want the oldest, %d", id, err, due[0])
	}
	var (
		mu  sync.Mutex
		got = []int64{due[0]}
		wg  sync.WaitGroup
	)
	for _, s := range []mapcommons.Services{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				id, err := s.FeedClaims.ClaimDueFeed(ctx, time.Hour, 50*time.Millisecond)
				if err != nil {
					t.Error(err)
				}
				if id == 0 || err != nil {
					return
				}
				mu.Lock()
				got = append(got, id)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(got)
	if !slices.Equal(got, due) {
		t.Fatalf("claimed %v, want each of %v once", got, due)
	}
	time.Sleep(100 * time.Millisecond)
	if id, err := b.FeedClaims.ClaimDueFeed(ctx, time.Hour, time.Hour); err != nil || id != due[1] {
		t.Fatalf("after the short leases: %d, %v; want %d (the first claim's lease holds)", id, err, due[1])
	}
}
