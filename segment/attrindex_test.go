package segment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

var indexAttrs = []mapcommons.Attribute{
	{Name: "n", Type: mapcommons.AttrInteger},
	{Name: "x", Type: mapcommons.AttrFloat},
	{Name: "s", Type: mapcommons.AttrString},
	{Name: "b", Type: mapcommons.AttrBoolean},
	{Name: "d", Type: mapcommons.AttrDate},
}

var indexStrings = []string{"", "a", "a\x00", "a\x00b", "ab", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefghj", "b", "\x00", "\x00\x00", "zz"}

var indexFloats = []float64{math.NaN(), math.Copysign(0, -1), 0, 1, -1, 2.5, math.Inf(1), math.Inf(-1), 1e300, -1e-300}

// indexFeatures draws features from few values, so that duplicates, nulls,
// NaN, -0 and strings with NUL bytes abound.
func indexFeatures(r *rand.Rand, n, spread int) []mapcommons.Feature {
	feats := make([]mapcommons.Feature, n)
	for i := range feats {
		var x float64
		if r.IntN(2) == 0 {
			x = indexFloats[r.IntN(len(indexFloats))]
		} else {
			x = float64(r.IntN(spread)) / 4
		}
		vals := []any{int64(r.IntN(spread) - spread/2), x, indexStrings[r.IntN(len(indexStrings))], r.IntN(2) == 0,
			"2020-01-0" + strconv.Itoa(1+r.IntN(9))}
		if r.IntN(3) == 0 {
			vals[2] = fmt.Sprintf("abcdefgh%d\x00%d", r.IntN(spread), r.IntN(3))
		}
		if r.IntN(4) == 0 {
			vals[0] = int64(1<<53 + r.IntN(3)) // equal as floats, not as integers
		}
		for j := range vals {
			if r.IntN(6) == 0 {
				vals[j] = nil
			}
		}
		var g []byte
		if r.IntN(20) != 0 {
			g = wkb.AppendPoint(nil, r.Float64()*360-180, r.Float64()*170-85)
		}
		feats[i] = mapcommons.Feature{Values: vals, Geometry: g}
	}
	return feats
}

// indexValue draws a filter value for attribute a.
func indexValue(r *rand.Rand, a mapcommons.Attribute, spread int) string {
	switch a.Type {
	case mapcommons.AttrInteger:
		if r.IntN(5) == 0 {
			return strconv.Itoa(1<<53 + r.IntN(3))
		}
		return strconv.Itoa(r.IntN(spread+2) - spread/2 - 1)
	case mapcommons.AttrFloat:
		for {
			x := indexFloats[r.IntN(len(indexFloats))]
			if r.IntN(2) == 0 {
				x = float64(r.IntN(spread)) / 4
			}
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				return strconv.FormatFloat(x, 'g', -1, 64)
			}
		}
	case mapcommons.AttrBoolean:
		return strconv.FormatBool(r.IntN(2) == 0)
	case mapcommons.AttrDate:
		return "2020-01-0" + strconv.Itoa(1+r.IntN(9))
	}
	if r.IntN(3) == 0 {
		return fmt.Sprintf("abcdefgh%d\x00%d", r.IntN(spread), r.IntN(3))
	}
	return indexStrings[r.IntN(len(indexStrings))]
}

func randomIndexQuery(r *rand.Rand, spread int) *mapcommons.FeatureQuery {
	q := &mapcommons.FeatureQuery{Limit: -1}
	if r.IntN(3) != 0 {
		q.Limit = int64(r.IntN(40))
	}
	if r.IntN(3) == 0 {
		q.Offset = int64(r.IntN(50))
	}
	if r.IntN(3) != 0 {
		q.Sort = indexAttrs[r.IntN(len(indexAttrs))].Name
	}
	q.Descending = r.IntN(2) == 0
	for k := r.IntN(3); k >= 0; k-- {
		a := indexAttrs[r.IntN(len(indexAttrs))]
		switch r.IntN(5) {
		case 0:
			q.Filters = append(q.Filters, mapcommons.Filter{Attr: a.Name, Op: mapcommons.OpEquals, Values: []string{indexValue(r, a, spread)}})
		case 1:
			var vs []string
			for range 1 + r.IntN(12) {
				vs = append(vs, indexValue(r, a, spread))
			}
			q.Filters = append(q.Filters, mapcommons.Filter{Attr: a.Name, Op: mapcommons.OpIn, Values: vs})
		case 2:
			q.Filters = append(q.Filters, mapcommons.Filter{Attr: a.Name, Op: mapcommons.OpMin, Values: []string{indexValue(r, a, spread)}})
		case 3:
			q.Filters = append(q.Filters, mapcommons.Filter{Attr: a.Name, Op: mapcommons.OpMax, Values: []string{indexValue(r, a, spread)}})
		default:
			lo, hi := indexValue(r, a, spread), indexValue(r, a, spread)
			q.Filters = append(q.Filters,
				mapcommons.Filter{Attr: a.Name, Op: mapcommons.OpMin, Values: []string{lo}},
				mapcommons.Filter{Attr: a.Name, Op: mapcommons.OpMax, Values: []string{hi}})
		}
	}
	if r.IntN(8) == 0 {
		q.BBox = &mapcommons.BBox{W: -90, S: -40, E: 90, N: 40}
	}
	return q
}

type answer struct {
	Pos    int64
	ID     int64
	Values []any
}

func queryAll(t *testing.T, s *Segment, q *mapcommons.FeatureQuery) []answer {
	t.Helper()
	var out []answer
	err := s.Query(context.Background(), q, func(f *mapcommons.Feature) error {
		out = append(out, answer{f.Position, f.ID, append([]any(nil), f.Values...)})
		return nil
	})
	if err != nil {
		t.Fatalf("%+v: %v", q, err)
	}
	return out
}

// TestAttrIndexMatchesScan compares the plans through the attribute
// indexes with the scan, on random data and queries.
func TestAttrIndexMatchesScan(t *testing.T) {
	for _, tc := range []struct{ n, spread, queries int }{{0, 4, 20}, {1, 4, 50}, {37, 4, 300}, {500, 8, 600}, {5000, 40, 600}, {20000, 4000, 300}} {
		r := rand.New(rand.NewPCG(uint64(tc.n), 7))
		indexed, scan := writeTwice(t, indexFeatures(r, tc.n, tc.spread))
		for col := range indexAttrs {
			if tc.n > 0 && !indexed.HasAttrIndex(col) {
				t.Fatalf("n %d: column %d has no index", tc.n, col)
			}
		}
		for range tc.queries {
			q := randomIndexQuery(r, tc.spread)
			if err := q.Validate(indexAttrs); err != nil {
				continue
			}
			got, want := queryAll(t, indexed, q), queryAll(t, scan, q)
			if !reflect.DeepEqual(got, want) && !sameNaN(got, want) {
				t.Fatalf("n %d, query %+v:\nindexed %v\nscan    %v", tc.n, q, got, want)
			}
			qc := *q
			qc.Sort, qc.GroupBy = "", []string{"s"}
			qc.Aggregates = []mapcommons.Aggregate{{Name: "n", Calc: mapcommons.CalcSum}}
			qc.Limit, qc.Offset = -1, 0
			if qc.Validate(indexAttrs) == nil {
				g1, err1 := indexed.Groups(context.Background(), &qc)
				g2, err2 := scan.Groups(context.Background(), &qc)
				if err1 != nil || err2 != nil || !reflect.DeepEqual(g1, g2) {
					t.Fatalf("groups of %+v: %v %v\n%v\n%v", qc, err1, err2, g1, g2)
				}
			}
		}
	}
}

// sameNaN compares answers whose values may hold NaN (never DeepEqual).
func sameNaN(a, b []answer) bool {
	return fmt.Sprintf("%v", a) == fmt.Sprintf("%v", b)
}

// writeTwice writes features to a segment and opens it twice: with its
// attribute indexes and forced to scan.
func writeTwice(t *testing.T, feats []mapcommons.Feature) (indexed, scan *Segment) {
	t.Helper()
	dir := t.TempDir()
	w, err := NewWriter(dir, indexAttrs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range feats {
		if err := w.Add(&feats[i]); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "x.seg")
	if _, err := w.Finish(path); err != nil {
		t.Fatal(err)
	}
	if indexed, err = Open(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { indexed.Close() })
	if scan, err = Open(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { scan.Close() })
	scan.noAttrIndex = true
	return indexed, scan
}

func FuzzAttrIndex(f *testing.F) {
	f.Add(uint64(1), uint16(100), uint8(4))
	f.Add(uint64(2), uint16(3000), uint8(200))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, spread uint8) {
		r := rand.New(rand.NewPCG(seed, 1))
		sp := int(spread)%64 + 2
		indexed, scan := writeTwice(t, indexFeatures(r, int(n)%5000, sp))
		for range 50 {
			q := randomIndexQuery(r, sp)
			if q.Validate(indexAttrs) != nil {
				continue
			}
			got, want := queryAll(t, indexed, q), queryAll(t, scan, q)
			if !reflect.DeepEqual(got, want) && !sameNaN(got, want) {
				t.Fatalf("query %+v:\nindexed %v\nscan    %v", q, got, want)
			}
		}
	})
}
