package storetest

import (
	"context"
	"testing"

	"mapcommons"
)

// testTemporalFunctions: the temporal functions of CQL2 (rewritten into
// comparisons by the parser) select the features Allen's relations give,
// over a date property and an interval of timestamps, a date compared
// with a timestamp as its whole day; a feature without a value is in
// neither a predicate nor its negation.
func testTemporalFunctions(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	src := &SliceSource{Attrs: []mapcommons.Attribute{
		{Name: "day", Type: mapcommons.AttrDate}, {Name: "start", Type: mapcommons.AttrDate}, {Name: "end", Type: mapcommons.AttrDate}}}
	if err := mapcommons.NormalizeAttributes(src.Attrs); err != nil {
		t.Fatal(err)
	}
	for _, v := range [][]any{
		{"2021-04-16", "2021-04-16T10:15:59Z", "2022-04-16T10:16:06Z"}, // 1
		{"2023-04-16", "2022-04-16T10:13:19Z", "2024-02-22T09:37:52Z"}, // 2
		{"2022-04-16", "2022-04-16T10:15:10Z", "2022-12-16T10:14:53Z"}, // 3
		{nil, nil, nil}, // 4
		{"2022-04-17", "2022-04-16T10:13:19Z", nil}, // 5: no end
		{"2022-04-15", "2022-04-16", "2022-04-17"},  // 6: an interval of dates
	} {
		src.Features = append(src.Features, mapcommons.Feature{Values: v})
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	checkFilters(t, s, ds.ID, src.Attrs, []filterCase{
		{`T_AFTER(day, DATE('2022-04-16'))`, []int64{2, 5}, []int64{1, 3, 6}},
		{`T_EQUALS(day, TIMESTAMP('2022-04-16T23:00:00Z'))`, []int64{3}, []int64{1, 2, 5, 6}},
		{`T_INTERSECTS(day, INTERVAL('2022-04-16T12:00:00Z', '..'))`, []int64{2, 3, 5}, []int64{1, 6}},
		{`T_BEFORE(INTERVAL(start, "end"), TIMESTAMP('2022-12-16T10:14:53Z'))`, []int64{1, 6}, []int64{2, 3}},
		{`T_METBY(INTERVAL(start, "end"), INTERVAL('..', '2022-04-16T10:15:10Z'))`, []int64{3, 6}, []int64{1, 2}},
		{`T_AFTER(INTERVAL(start, "end"), INTERVAL('2020-01-01', '2022-04-16T10:13:19Z'))`, []int64{3}, []int64{1, 2, 6}},
		{`T_DURING(INTERVAL(start, "end"), INTERVAL('2022-01-01T00:00:00Z', '2022-12-31T23:59:59Z'))`, []int64{3, 6}, []int64{1, 2}},
		{`T_OVERLAPPEDBY(INTERVAL(start, "end"), INTERVAL('2020-04-16T10:13:19Z', '2022-04-16T10:15:10Z'))`, []int64{1, 2}, []int64{3, 6}},
		{`T_DISJOINT(INTERVAL(start, "end"), INTERVAL('2022-04-16T10:13:19Z', '2022-04-16T10:15:09Z')) AND T_BEFORE(day, DATE('2023-01-01'))`, []int64{3}, []int64{1, 2, 6}},
		{`T_DURING(INTERVAL('1969-07-20T20:17:40Z', '1969-07-21T17:54:00Z'), INTERVAL('1969-07-16T13:32:00Z', '1969-07-24T16:50:35Z'))`, []int64{1, 2, 3, 4, 5, 6}, nil},
	})
}

// testFractionalTimes: timestamps with fractions of a second compare in
// time order (12:00:00Z before 12:00:00.25Z before 12:00:00.5Z before
// 12:00:00.55Z), though the indexes order their text as bytes, and a
// literal in another zone or with trailing zeros is the same instant.
func testFractionalTimes(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	src := &SliceSource{Attrs: []mapcommons.Attribute{{Name: "t", Type: mapcommons.AttrDate}}}
	if err := mapcommons.NormalizeAttributes(src.Attrs); err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{
		"2022-01-01T10:00:00Z",     // 1
		"2022-01-01T10:00:00.5Z",   // 2
		"2022-01-01T10:00:00.25Z",  // 3
		"2022-01-01T10:00:00.55Z",  // 4
		"2022-01-01T10:00:01Z",     // 5
		"2022-01-01T09:59:59.999Z", // 6
		nil,                        // 7
	} {
		src.Features = append(src.Features, mapcommons.Feature{Values: []any{v}})
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	checkFilters(t, s, ds.ID, src.Attrs, []filterCase{
		{`t > TIMESTAMP('2022-01-01T10:00:00Z')`, []int64{2, 3, 4, 5}, []int64{1, 6}},
		{`t >= TIMESTAMP('2022-01-01T12:00:00.500+02:00')`, []int64{2, 4, 5}, []int64{1, 3, 6}},
		{`t < TIMESTAMP('2022-01-01T10:00:00.5Z')`, []int64{1, 3, 6}, []int64{2, 4, 5}},
		{`t <= TIMESTAMP('2022-01-01T10:00:00Z')`, []int64{1, 6}, []int64{2, 3, 4, 5}},
		{`t BETWEEN TIMESTAMP('2022-01-01T10:00:00.25Z') AND TIMESTAMP('2022-01-01T10:00:00.550Z')`, []int64{2, 3, 4}, []int64{1, 5, 6}},
		{`t = TIMESTAMP('2022-01-01T10:00:00.50Z')`, []int64{2}, []int64{1, 3, 4, 5, 6}},
		{`T_AFTER(t, TIMESTAMP('2022-01-01T10:00:00.5Z'))`, []int64{4, 5}, []int64{1, 2, 3, 6}},
		{`t > TIMESTAMP('2022-01-01T10:00:00.5Z') AND t < TIMESTAMP('2022-01-01T10:00:01Z')`, []int64{4}, []int64{1, 2, 3, 5, 6}},
	})
}
