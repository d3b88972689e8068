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
					c, err := s.FeedClaims.ClaimDueFeed(context.Background(), 0, time.Hour)
					if err != nil {
						t.Error(err)
						return
					}
					if c.ID == 0 {
						return
					}
					mu.Lock()
					ids = append(ids, c.ID)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	return ids
}

// checkClock fails tb unless ds was fetched at the time of clock: the
// store reads the clock ClockFor gives.
func checkClock(tb testing.TB, clock *Clock, ds *mapcommons.Dataset) {
	tb.Helper()
	if want := clock.Now(); !ds.FetchedAt.Equal(want) {
		tb.Fatalf("feed fetched at %v, want the contract's clock, %v: the opener must give its store storetest.ClockFor(tb)", ds.FetchedAt, want)
	}
}

// testFeedClaims: only feeds that are due and unclaimed are claimed, the
// one fetched longest ago first; a claim holds until it is released or its
// lease ends; a released feed is due at the time its release says, as a
// failed refresh's is (its fetch time unchanged); a release of a claim
// taken over after its lease leaves the new claim alone; callers claiming
// at once never get the same feed. Time is the contract's clock.
func testFeedClaims(t *testing.T, open Opener) {
	ctx := context.Background()
	claim := func(t *testing.T, s mapcommons.Services, maxAge, lease time.Duration) mapcommons.FeedClaim {
		t.Helper()
		c, err := s.FeedClaims.ClaimDueFeed(ctx, maxAge, lease)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	release := func(t *testing.T, s mapcommons.Services, c mapcommons.FeedClaim, due time.Time) {
		t.Helper()
		if err := s.FeedClaims.ReleaseFeed(ctx, c, due); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("Due", func(t *testing.T) {
		clock := useClock(t)
		s := open(t)
		if c := claim(t, s, 0, time.Hour); c.ID != 0 {
			t.Fatalf("no feeds, claimed %d", c.ID)
		}
		if err := s.Datasets.CreateDataset(ctx, &mapcommons.Dataset{Type: "csv"}, SampleSource(2)); err != nil {
			t.Fatal(err)
		}
		a := mustCreateFeed(t, s, "a", 2)
		checkClock(t, clock, a)
		clock.Advance(time.Second)
		b := mustCreateFeed(t, s, "b", 2)
		// Fetched a second ago: not due when the refresh wants an hour's age.
		if c := claim(t, s, time.Hour, time.Hour); c.ID != 0 {
			t.Fatalf("a feed fetched just now claimed as an hour old: %d", c.ID)
		}
		// a was fetched first, so it comes first; an upload never comes.
		c := claim(t, s, 0, time.Hour)
		if c.ID != a.ID {
			t.Fatalf("claimed %d, want the feed fetched longest ago, %d", c.ID, a.ID)
		}
		if now := clock.Now(); !c.At.Equal(now) || !c.Until.Equal(now.Add(time.Hour)) {
			t.Fatalf("claimed at %v until %v, want %v for an hour", c.At, c.Until, now)
		}
		if c := claim(t, s, 0, time.Hour); c.ID != b.ID {
			t.Fatalf("claimed %d, want %d", c.ID, b.ID)
		}
		if c := claim(t, s, 0, time.Hour); c.ID != 0 {
			t.Fatalf("both feeds claimed, then %d", c.ID)
		}
		// The claim is not a change: the version stays.
		if got, err := s.Datasets.FindDatasetByID(ctx, a.ID); err != nil || got.Version != a.Version {
			t.Fatalf("after a claim: version %d (was %d), %v", got.Version, a.Version, err)
		}
	})
	t.Run("Lease", func(t *testing.T) {
		clock := useClock(t)
		s := open(t)
		a := mustCreateFeed(t, s, "a", 2)
		checkClock(t, clock, a)
		const lease = 10 * time.Minute
		if c := claim(t, s, 0, lease); c.ID != a.ID {
			t.Fatalf("claimed %d, want %d", c.ID, a.ID)
		}
		if c := claim(t, s, 0, time.Hour); c.ID != 0 {
			t.Fatalf("claimed %d while the lease holds", c.ID)
		}
		// The refresh failed and its server died: the feed keeps its fetch
		// time, and is due again once the lease is over, not before.
		if err := s.Datasets.RecordFetchError(ctx, a.ID, "the remote answered 500"); err != nil {
			t.Fatal(err)
		}
		clock.Advance(lease - time.Microsecond)
		if c := claim(t, s, 0, time.Hour); c.ID != 0 {
			t.Fatalf("claimed %d after a failed refresh while the lease holds", c.ID)
		}
		clock.Advance(time.Microsecond)
		if c := claim(t, s, 0, time.Hour); c.ID != a.ID {
			t.Fatalf("after the lease: claimed %d, want %d", c.ID, a.ID)
		}
		// A refreshed feed is no longer due.
		clock.Advance(time.Second)
		b := mustCreateFeed(t, s, "b", 1)
		clock.Advance(time.Second)
		if _, err := s.Datasets.ReplaceFeatures(ctx, a.ID, SampleSource(3)); err != nil {
			t.Fatal(err)
		}
		if c := claim(t, s, 2*time.Second, time.Hour); c.ID != 0 {
			t.Fatalf("claimed %d, none fetched two seconds ago", c.ID)
		}
		// A deleted feed is gone from the claims.
		if err := s.Datasets.DeleteDataset(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		if c := claim(t, s, 0, time.Millisecond); c.ID != 0 {
			t.Fatalf("claimed %d: a is claimed, b deleted", c.ID)
		}
	})
	t.Run("Release", func(t *testing.T) {
		clock := useClock(t)
		s := open(t)
		a := mustCreateFeed(t, s, "a", 2)
		checkClock(t, clock, a)
		// A refresh that failed releases its feed, due again in a minute:
		// not before, though its fetch time has not moved, and then long
		// before its hour's lease is over.
		c := claim(t, s, 0, time.Hour)
		if c.ID != a.ID {
			t.Fatalf("claimed %d, want %d", c.ID, a.ID)
		}
		if err := s.Datasets.RecordFetchError(ctx, a.ID, "the remote answered 500"); err != nil {
			t.Fatal(err)
		}
		release(t, s, c, c.At.Add(time.Minute))
		clock.Advance(time.Minute - time.Microsecond)
		if c := claim(t, s, 0, time.Hour); c.ID != 0 {
			t.Fatalf("claimed %d before the due time of its release", c.ID)
		}
		clock.Advance(time.Microsecond)
		c = claim(t, s, 0, time.Hour)
		if c.ID != a.ID {
			t.Fatalf("at the due time of its release: claimed %d, want %d", c.ID, a.ID)
		}
		// A refresh that succeeded releases its feed due at once: its new
		// fetch time says when it is due.
		clock.Advance(time.Second)
		if _, err := s.Datasets.ReplaceFeatures(ctx, a.ID, SampleSource(3)); err != nil {
			t.Fatal(err)
		}
		release(t, s, c, clock.Now())
		if c := claim(t, s, time.Second, time.Hour); c.ID != 0 {
			t.Fatalf("claimed %d, fetched less than a second ago", c.ID)
		}
		clock.Advance(time.Second)
		c = claim(t, s, time.Second, 10*time.Minute)
		if c.ID != a.ID {
			t.Fatalf("released, a second old: claimed %d, want %d", c.ID, a.ID)
		}
		// That claim's server hangs past its lease; another takes the feed
		// over. The first one's release, late, leaves the second's claim.
		clock.Advance(10 * time.Minute)
		late := c
		c = claim(t, s, 0, time.Hour)
		if c.ID != a.ID {
			t.Fatalf("after the lease: claimed %d, want %d", c.ID, a.ID)
		}
		release(t, s, late, clock.Now())
		if c := claim(t, s, 0, time.Hour); c.ID != 0 {
			t.Fatalf("a claim over and taken over, released late: claimed %d while the new claim holds", c.ID)
		}
		release(t, s, c, clock.Now())
		if c := claim(t, s, 0, time.Hour); c.ID != a.ID {
			t.Fatalf("the new claim released: claimed %d, want %d", c.ID, a.ID)
		}
		// A release of a feed deleted since is no error.
		if err := s.Datasets.DeleteDataset(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		release(t, s, c, clock.Now())
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
// database share the due feeds out, each feed to one of them; a release
// through one store frees the feed for the other.
func testSharedFeedClaims(t *testing.T, open TwoOpener) {
	clock := useClock(t)
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
	ctx := context.Background()
	if c, err := b.FeedClaims.ClaimDueFeed(ctx, 0, time.Hour); err != nil || c.ID != 0 {
		t.Fatalf("every feed claimed through a or b, then b claims %d, %v", c.ID, err)
	}
	// The claims' leases are an hour: a claim through b, ended at once by
	// b and then claimed through a, is the one feed due.
	clock.Advance(time.Hour)
	c, err := b.FeedClaims.ClaimDueFeed(ctx, 0, time.Hour)
	if err != nil || c.ID != want[0] {
		t.Fatalf("after the leases, b claims %d, %v; want %d", c.ID, err, want[0])
	}
	for range want[1:] {
		if _, err := b.FeedClaims.ClaimDueFeed(ctx, 0, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.FeedClaims.ReleaseFeed(ctx, c, clock.Now()); err != nil {
		t.Fatal(err)
	}
	if got, err := a.FeedClaims.ClaimDueFeed(ctx, 0, time.Hour); err != nil || got.ID != c.ID {
		t.Fatalf("released through b, a claims %d, %v; want %d", got.ID, err, c.ID)
	}
}
