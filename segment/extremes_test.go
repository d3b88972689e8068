package segment

import (
	"mapcommons/feature"
	"math/rand/v2"
	"reflect"
	"testing"

	"mapcommons"
)

// TestExtremesFromIndex: the minima and maxima of whole columns are read
// from their attribute indexes (two rows a column), and they are what a
// pass over every value finds: strings, dates, integers and booleans, with
// nulls; a float column, a selection or a grouping are left to the scan.
func TestExtremesFromIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	feats := randomFeatures(r, 3000)
	for i := range feats { // dates that differ
		if feats[i].Values[4] != nil {
			feats[i].Values[4] = "20" + string(rune('1'+r.IntN(8))) + "0-0" + string(rune('1'+r.IntN(9))) + "-1" + string(rune('0'+r.IntN(10)))
		}
	}
	s, _ := write(t, testAttrs, feats)
	q := &mapcommons.FeatureQuery{Limit: -1}
	for _, name := range []string{"n", "s", "b", "d"} {
		q.Aggregates = append(q.Aggregates, mapcommons.Aggregate{Name: name, Calc: mapcommons.CalcMin}, mapcommons.Aggregate{Name: name, Calc: mapcommons.CalcMax})
	}
	if err := q.Validate(testAttrs); err != nil {
		t.Fatal(err)
	}
	// What a pass over every value finds.
	want := []any{}
	for _, col := range []int{0, 2, 3, 4} {
		var lo, hi any
		for _, f := range feats {
			v := f.Values[col]
			if v == nil {
				continue
			}
			if lo == nil || less(v, lo) {
				lo = v
			}
			if hi == nil || less(hi, v) {
				hi = v
			}
		}
		want = append(want, lo, hi)
	}
	p, err := s.compile(q)
	if err != nil {
		t.Fatal(err)
	}
	gcols, acols := feature.GroupColumns(testAttrs, q)
	if _, ok := s.extremes(q, p, gcols, acols); !ok {
		t.Fatal("the indexes did not answer")
	}
	got, err := s.Groups(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Count != int64(len(feats)) || !reflect.DeepEqual(got[0].Aggregates, want) {
		t.Fatalf("groups %+v, want the aggregates %v", got, want)
	}
	// Left to the scan: a float column, a selection, a sum, a grouping.
	for _, other := range []*mapcommons.FeatureQuery{
		{Limit: -1, Aggregates: []mapcommons.Aggregate{{Name: "x", Calc: mapcommons.CalcMin}}},
		{Limit: -1, Aggregates: []mapcommons.Aggregate{{Name: "n", Calc: mapcommons.CalcMin}}, BBox: &mapcommons.BBox{W: -10, S: -10, E: 10, N: 10}},
		{Limit: -1, Aggregates: []mapcommons.Aggregate{{Name: "n", Calc: mapcommons.CalcSum}}},
		{Limit: -1, Aggregates: []mapcommons.Aggregate{{Name: "n", Calc: mapcommons.CalcMax}}, GroupBy: []string{"b"}},
	} {
		p, err := s.compile(other)
		if err != nil {
			t.Fatal(err)
		}
		gcols, acols := feature.GroupColumns(testAttrs, other)
		if _, ok := s.extremes(other, p, gcols, acols); ok {
			t.Errorf("%+v answered from the indexes", other)
		}
	}
}

// less orders two non-null values of one column.
func less(a, b any) bool {
	switch a := a.(type) {
	case int64:
		return a < b.(int64)
	case string:
		return a < b.(string)
	case bool:
		return !a && b.(bool)
	}
	panic("no order")
}
