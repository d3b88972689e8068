package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"mapcommons"
	"mapcommons/cql2"
	"mapcommons/storetest"
)

// TestCountWithPage checks that FeatureQuery.Count comes from the same
// snapshot as the page while edits commit one after another: a count from
// another read than the page's (as a query left to Go had it) disagreed
// with the page within a few reads.
func TestCountWithPage(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, storetest.SampleSource(200)); err != nil {
		t.Fatal(err)
	}
	where, err := cql2.ParseText(`NOT (label = 'nobody')`) // left to Go
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // each edit adds one feature
		defer wg.Done()
		add := storetest.SampleSource(1).Features[0]
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Adds: []mapcommons.Feature{add}}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var bad []string
	queries := []func(count *int64) *mapcommons.FeatureQuery{
		func(c *int64) *mapcommons.FeatureQuery {
			return &mapcommons.FeatureQuery{Limit: -1, Where: where, Count: c}
		},
		// SQL's page, past the first: the count is the read's prelude.
		func(c *int64) *mapcommons.FeatureQuery {
			return &mapcommons.FeatureQuery{Limit: -1, Offset: 5, Where: &mapcommons.Expr{Op: mapcommons.ExprGe, Property: "n",
				Values: []mapcommons.Literal{{Kind: mapcommons.LitNumber, Num: -1e9}}}, Count: c}
		},
		// SQL's first page: the count comes with it.
		func(c *int64) *mapcommons.FeatureQuery {
			return &mapcommons.FeatureQuery{Limit: -1, Where: &mapcommons.Expr{Op: mapcommons.ExprGe, Property: "n",
				Values: []mapcommons.Literal{{Kind: mapcommons.LitNumber, Num: -1e9}}}, Count: c}
		},
	}
	for k := 0; k < 300 && len(bad) < 3; k++ {
		count, n := int64(-1), int64(0)
		q := queries[k%len(queries)](&count)
		if err := s.Features.ScanFeatures(ctx, ds.ID, q, func(*mapcommons.Feature) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if n+max(q.Offset, 0) != count {
			bad = append(bad, fmt.Sprintf("read %d (query %d): %d features past offset %d, count %d", k, k%len(queries), n, q.Offset, count))
		}
	}
	close(stop)
	wg.Wait()
	for _, b := range bad {
		t.Error(b)
	}
}
