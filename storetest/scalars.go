package storetest

import (
	"context"
	"slices"
	"testing"

	"mapcommons"
	"mapcommons/cql2"
)

// testPropertyPropertyArithmetic: comparisons and BETWEEN of two
// properties and of arithmetic (CQL2's property-property and arithmetic
// classes) select the same features in every store, beside an indexed
// condition, in an OR and negated; a null operand, a division by zero and
// an overflow are unknown (in neither the condition nor its NOT).
func testPropertyPropertyArithmetic(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	src := &SliceSource{Attrs: []mapcommons.Attribute{{Name: "a", Type: mapcommons.AttrFloat}, {Name: "b", Type: mapcommons.AttrInteger},
		{Name: "s", Type: mapcommons.AttrString}, {Name: "u", Type: mapcommons.AttrString}}}
	if err := mapcommons.NormalizeAttributes(src.Attrs); err != nil {
		t.Fatal(err)
	}
	for _, v := range [][]any{
		{1.0, int64(1), "a", "a"},   // 1
		{2.5, int64(2), "b", "c"},   // 2
		{7.0, int64(3), "d", "c"},   // 3
		{-7.0, int64(0), "x", "y"},  // 4
		{nil, int64(4), nil, "z"},   // 5
		{1e300, int64(5), "m", "m"}, // 6
	} {
		src.Features = append(src.Features, mapcommons.Feature{Values: v})
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	checkFilters(t, s, ds.ID, src.Attrs, []filterCase{
		{`a = b`, []int64{1}, []int64{2, 3, 4, 6}},
		{`s = u`, []int64{1, 6}, []int64{2, 3, 4}},
		{`s < u AND b >= 2`, []int64{2}, []int64{1, 3, 4, 6}},
		{`a > b + 0.25`, []int64{2, 3, 6}, []int64{1, 4}},
		{`a / b > 2`, []int64{3, 6}, []int64{1, 2}}, // 4: a division by zero
		{`a * a > 1`, []int64{2, 3, 4}, []int64{1}}, // 6: an overflow
		{`a % b = 1 OR b = 4`, []int64{3, 5}, []int64{1, 2, 6}},
		{`a div 2 = b`, []int64{3}, []int64{1, 2, 4, 6}},
		{`-a = b OR a = -b`, []int64{}, []int64{1, 2, 3, 4, 6}},
		{`b BETWEEN a AND a + 1`, []int64{1}, []int64{2, 3, 4, 6}},
		{`a BETWEEN b AND b ^ 2`, []int64{1, 2, 3}, []int64{4, 6}},
		{`1 + 1 = 2 AND 2 * b > 7`, []int64{5, 6}, []int64{1, 2, 3, 4}},
	})
}

// filterCase is a CQL2 text filter and the ids of the features it
// selects, and of those its NOT selects (neither: the unknown ones).
type filterCase struct {
	filter      string
	want, notIn []int64
}

// checkFilters runs each case's filter and its NOT on dataset id of attrs
// and checks the ids each selects.
func checkFilters(t *testing.T, s mapcommons.Services, id int64, attrs []mapcommons.Attribute, cases []filterCase) {
	t.Helper()
	for _, c := range cases {
		for _, neg := range []bool{false, true} {
			f, want := c.filter, c.want
			if neg {
				f, want = "NOT ("+f+")", c.notIn
			}
			e, err := cql2.ParseText(f)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			q := &mapcommons.FeatureQuery{Limit: -1, Where: e}
			if err := q.Validate(attrs); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			ids, _ := featureIDs(t, s, id, q)
			if !slices.Equal(ids, want) {
				t.Errorf("%s: ids %v, want %v", f, ids, want)
			}
		}
	}
}
