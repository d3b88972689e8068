package postgres_test

import (
	"context"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// TestResummaryGivesWayToDrop: the sweep's exact summary of a large
// dataset reads every feature in a transaction that holds the features
// table (AccessShareLock) for the whole scan. A replace's or a deletion's DROP of that
// table then waits for it — and every new read of the dataset queues
// behind the DROP — and fails with ETIMEOUT past dropLockTimeout, though
// the holder is a background job of the server itself (an index build
// in the same place is cancelled by cancelBuild; this one is not).
func TestResummaryGivesWayToDrop(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db := pgtest.OpenURL(t, url)
	s := db.Services()
	postgres.SetExactSummaryMax(t, 10)
	src := &storetest.SliceSource{Attrs: []mapcommons.Attribute{{Name: "n", Type: mapcommons.AttrInteger},
		{Name: "x", Type: mapcommons.AttrFloat}, {Name: "y", Type: mapcommons.AttrFloat}}}
	const n = 300000
	for i := range n {
		src.Features = append(src.Features, mapcommons.Feature{Values: []any{int64(i), float64(i) / 3, float64(i) / 7},
			Geometry: wkb.AppendPoint(nil, float64(i%360)-180, float64(i%160)-80)})
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Deletes: []int64{n}}); err != nil {
		t.Fatal(err)
	}
	// The indexes built first: their builds hold the lock the resummary
	// takes (it would leave the table to them).
	waitIndexes(t, rawConn(t, url), ds.ID)
	// The deletion starts once the scan is under way (its first row),
	// and must not wait for it: whichever ends first, it succeeds.
	postgres.SetDropLockTimeout(t, 50*time.Millisecond)
	scanning := make(chan struct{})
	postgres.OnResummaryScan(t, func() { close(scanning) })
	done := make(chan error, 1)
	// A build may still hold the table's lock for a moment after its
	// indexes are valid: the resummary then leaves it, and runs again.
	eventually(t, "a resummary's scan under way", func() bool {
		go func() {
			_, err := postgres.ResummarizeOne(ctx, db, ds.ID, nil)
			done <- err
		}()
		select {
		case <-scanning:
			return true
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return false
		}
	})
	err := s.Datasets.DeleteDataset(ctx, ds.ID)
	<-done // cancelled, or done: either is fine
	if err != nil {
		t.Fatalf("a deletion during the background resummary: %v (code %s)", err, mapcommons.ErrorCode(err))
	}
}
