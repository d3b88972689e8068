package postgres_test

import (
	"context"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// TestReplaceWhileReadingStalls: a reader that does not end (a client that
// stopped reading its download, too big for the socket's buffers to hold
// the rest: the transaction's COMMIT waits behind its rows) holds the
// features table; a replace waits
// for it only so long, then fails with ETIMEOUT, and the readers that
// came meanwhile are not held behind it; once the reader ends, a replace
// goes through.
func TestReplaceWhileReadingStalls(t *testing.T) {
	postgres.SetDropLockTimeout(t, 300*time.Millisecond)
	ctx := context.Background()
	s := pgtest.Open(t).Services()
	ds := &mapcommons.Dataset{Type: "csv"}
	const big = 20000 // features: megabytes of rows
	if err := s.Datasets.CreateDataset(ctx, ds, storetest.SampleSource(big)); err != nil {
		t.Fatal(err)
	}
	reading, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		first := true
		done <- s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(*mapcommons.Feature) error {
			if first {
				first = false
				close(reading)
				<-release // the client stops reading
			}
			return nil
		})
	}()
	<-reading
	replaced := make(chan error, 1)
	go func() {
		_, err := s.Datasets.ReplaceFeatures(ctx, ds.ID, storetest.SampleSource(3))
		replaced <- err
	}()
	time.Sleep(100 * time.Millisecond) // the replace waits for the reader
	start := time.Now()
	n := 0
	if err := s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(*mapcommons.Feature) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	select {
	case err := <-replaced:
		if mapcommons.ErrorCode(err) != mapcommons.ETIMEOUT {
			t.Fatalf("a replace while a reader stalls: %v, want ETIMEOUT", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the replace waits for the stalled reader without end")
	}
	if n != big {
		t.Fatalf("a reader meanwhile read %d features, want the %d the replace left", n, big)
	}
	t.Logf("a reader meanwhile waited %v", waited.Round(time.Millisecond))
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Datasets.ReplaceFeatures(ctx, ds.ID, storetest.SampleSource(3)); err != nil || rep.FeatureCount != 3 {
		t.Fatalf("a replace once the reader is done: %+v, %v", rep, err)
	}
}
