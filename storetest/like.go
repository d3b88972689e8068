package storetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// endingContext is a context whose Err is nil for its first calls and
// context.Canceled after: a deadline that passes once the store has
// looked at it that often, whatever the machine's speed.
type endingContext struct {
	context.Context
	calls, after int64
}

func (c *endingContext) Err() error {
	if atomic.AddInt64(&c.calls, 1) > c.after {
		return context.Canceled
	}
	return nil
}

// testLongLike: a LIKE over a long value costs about the lengths of the
// value and the pattern, not their product, and one that does cost more
// stops within the row once the query's context is done (the deadline,
// the client gone), failing with the context's error.
func testLongLike(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	long := strings.Repeat("a", 900<<10) + "b"
	src := &SliceSource{Attrs: []mapcommons.Attribute{{Name: "s", Type: mapcommons.AttrString}}}
	if err := mapcommons.NormalizeAttributes(src.Attrs); err != nil {
		t.Fatal(err)
	}
	src.Features = []mapcommons.Feature{
		{Values: []any{long}, Geometry: wkb.AppendPoint(nil, 1, 2)},
		{Values: []any{"ab"}, Geometry: wkb.AppendPoint(nil, 3, 4)},
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	like := func(pat string) *mapcommons.FeatureQuery {
		return &mapcommons.FeatureQuery{Limit: -1, Where: &mapcommons.Expr{Op: mapcommons.ExprLike, Property: "s",
			Values: []mapcommons.Literal{{Kind: mapcommons.LitString, Str: pat}}}}
	}
	a30 := strings.Repeat("a", 30<<10)
	for _, c := range []struct {
		pat  string
		want []int64
	}{
		{"%" + a30 + "b%", []int64{0}},
		{"%" + a30 + "c%", nil},
		{"%b" + a30 + "%", nil},
		{"%" + a30 + "_b", []int64{0}},
		{"%" + a30 + "%" + a30 + "%b", []int64{0}},
		{"%a%b", []int64{0, 1}},
		{"_b", []int64{1}},
	} {
		ids, _ := featureIDs(t, s, ds.ID, like(c.pat))
		var got []int64
		for _, id := range ids {
			got = append(got, id-1) // ids count from 1
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("LIKE %.20q…(%d bytes): positions %v, want %v", c.pat, len(c.pat), got, c.want)
		}
	}
	// A part whose first run is found at every place and fails after it
	// costs the value's length times the run's: the context stops it.
	q := like("%" + a30 + "_c%")
	scan := &endingContext{Context: ctx, after: 1000}
	err := s.Features.ScanFeatures(scan, ds.ID, q, func(*mapcommons.Feature) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("scan past its deadline: %v, want context.Canceled", err)
	}
	q.GroupBy = []string{"s"}
	group := &endingContext{Context: ctx, after: 1000}
	if _, err := s.Features.GroupFeatures(group, ds.ID, q); !errors.Is(err, context.Canceled) {
		t.Errorf("groups past their deadline: %v, want context.Canceled", err)
	}
}
