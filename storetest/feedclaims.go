package storetest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"mapcommons"
)

// mustCreateFeed registers a feed of n features from a URL of its own.
func mustCreateFeed(tb testing.TB, s mapcommons.Services, name string, n int) *mapcommons.Dataset {
	tb.Helper()
	ds := &mapcommons.Dataset{Type: "csv", DataType: mapcommons.DataTypeFeed, URL: "https://example.com/" + name + ".csv", URLType: "csv"}
	if err := s.Datasets.CreateDataset(context.Background(), ds, SampleSource(n)); err != nil {
		tb.Fatal(err)
	}
	return ds
}

// claimAll claims due feeds (maxAge 0, a long lease) until none is left,
// from workers goroutines of each store, and returns the ids claimed, in
// the order claimed.
func claimAll(t *testing.T, stores []mapcommons.Services, workers int) []int64 {
	t.Helper()
	var (
		mu  sync.Mutex
		ids []int64
		wg  sync.WaitGroup
	)
	for _, s := range stores {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					id, err := s.FeedClaims.ClaimDueFeed(context.Background(), 0, time.Hour)
					if err != nil {
						t.Error(err)
						return
					}
					if id == 0 {
						return
					}
					mu.Lock()
					ids = append(ids, id)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	return ids
}

// testFeedClaims: only feeds that are due and unclaimed are claimed, the
// one fetched longest ago first; a claim holds until its lease ends; a
// failed refresh does not make a feed due again before then; callers
// claiming at once never get the same feed.
func testFeedClaims(t *testing.T, open Opener) {
	ctx := context.Background()
	claim := func(t *testing.T, s mapcommons.Services, maxAge, lease time.Duration) int64 {
		t.Helper()
		id, err := s.FeedClaims.ClaimDueFeed(ctx, maxAge, lease)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	t.Run("Due", func(t *testing.T) {
		s := open(t)
		if id := claim(t, s, 0, time.Hour); id != 0 {
			t.Fatalf("no feeds, claimed %d", id)
		}
		if err := s.Datasets.CreateDataset(ctx, &mapcommons.Dataset{Type: "csv"}, SampleSource(2)); err != nil {
			t.Fatal(err)
		}
		a := mustCreateFeed(t, s, "a", 2)
		time.Sleep(5 * time.Millisecond)
		b := mustCreateFeed(t, s, "b", 2)
		// Fetched just now: not due when the refresh wants an hour's age.
		if id := claim(t, s, time.Hour, time.Hour); id != 0 {
			t.Fatalf("a feed fetched just now claimed as an hour old: %d", id)
		}
		// a was fetched first, so it comes first; an upload never comes.
		if id := claim(t, s, 0, time.Hour); id != a.ID {
			t.Fatalf("claimed %d, want the feed fetched longest ago, %d", id, a.ID)
		}
		if id := claim(t, s, 0, time.Hour); id != b.ID {
			t.Fatalf("claimed %d, want %d", id, b.ID)
		}
		if id := claim(t, s, 0, time.Hour); id != 0 {
			t.Fatalf("both feeds claimed, then %d", id)
		}
		// The claim is not a change: the version stays.
		if got, err := s.Datasets.FindDatasetByID(ctx, a.ID); err != nil || got.Version != a.Version {
			t.Fatalf("after a claim: version %d (was %d), %v", got.Version, a.Version, err)
		}
	})
	t.Run("Lease", func(t *testing.T) {
		s := open(t)
		a := mustCreateFeed(t, s, "a", 2)
		// The lease is long enough for the steps below on a loaded machine
		// (with the race detector, a write may take tens of milliseconds).
		const lease = 500 * time.Millisecond
		if id := claim(t, s, 0, lease); id != a.ID {
			t.Fatalf("claimed %d, want %d", id, a.ID)
		}
		if id := claim(t, s, 0, time.Hour); id != 0 {
			t.Fatalf("claimed %d while the lease holds", id)
		}
		// The refresh failed: the feed keeps its fetch time, and is due
		// again once the lease is over, not before.
		if err := s.Datasets.RecordFetchError(ctx, a.ID, "the remote answered 500"); err != nil {
			t.Fatal(err)
		}
		if id := claim(t, s, 0, time.Hour); id != 0 {
			t.Fatalf("claimed %d after a failed refresh while the lease holds", id)
		}
		time.Sleep(lease + 50*time.Millisecond)
		if id := claim(t, s, 0, time.Hour); id != a.ID {
			t.Fatalf("after the lease: claimed %d, want %d", id, a.ID)
		}
		// A refreshed feed is no longer due.
		time.Sleep(5 * time.Millisecond)
		b := mustCreateFeed(t, s, "b", 1)
		if _, err := s.Datasets.ReplaceFeatures(ctx, a.ID, SampleSource(3)); err != nil {
			t.Fatal(err)
		}
		if id := claim(t, s, time.Minute, time.Hour); id != 0 {
			t.Fatalf("claimed %d, none fetched a minute ago", id)
		}
		// A deleted feed is gone from the claims.
		if err := s.Datasets.DeleteDataset(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		if id := claim(t, s, 0, time.Millisecond); id != 0 {
			t.Fatalf("claimed %d: a is claimed, b deleted", id)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		s := open(t)
		var want []int64
		for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
			want = append(want, mustCreateFeed(t, s, name, 1).ID)
		}
		got := claimAll(t, []mapcommons.Services{s}, 4)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("claimed %v, want each of %v once", got, want)
		}
	})
}

// testSharedFeedClaims: servers claiming at once through two stores on one
// database share the due feeds out, each feed to one of them.
func testSharedFeedClaims(t *testing.T, open TwoOpener) {
	a, b := open(t)
	var want []int64
	for i := range 8 {
		want = append(want, mustCreateFeed(t, a, "feed"+string(rune('a'+i)), 1).ID)
	}
	got := claimAll(t, []mapcommons.Services{a, b}, 3)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("claimed %v through both stores, want each of %v once", got, want)
	}
	if id, err := b.FeedClaims.ClaimDueFeed(context.Background(), 0, time.Hour); err != nil || id != 0 {
		t.Fatalf("every feed claimed through a or b, then b claims %d, %v", id, err)
	}
}
