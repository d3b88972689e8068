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
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := postgres.ResummarizeOne(ctx, db, ds.ID, nil)
		done <- err
	}()
	// Wait until the sweep's scan of the features runs.
	conn := rawConn(t, url)
	for {
		var k int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE state = 'active'
			AND query LIKE 'SELECT geom, fid%ORDER BY pos'`).Scan(&k); err != nil {
			t.Fatal(err)
		}
		if k > 0 {
			break
		}
		select {
		case err := <-done:
			t.Skipf("the resummary ended (%v, %v) before its scan was seen", err, time.Since(start))
		default:
		}
		time.Sleep(2 * time.Millisecond)
	}
	postgres.SetDropLockTimeout(t, 50*time.Millisecond)
	seen := time.Since(start)
	err := s.Datasets.DeleteDataset(ctx, ds.ID)
	deleted := time.Since(start)
	rerr := <-done
	t.Logf("scan seen at %v, delete returned at %v, resummary ended at %v (err %v)", seen, deleted, time.Since(start), rerr)
	if err != nil {
		t.Fatalf("a deletion during the background resummary: %v (code %s)", err, mapcommons.ErrorCode(err))
	}
}
