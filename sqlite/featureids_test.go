package sqlite

import (
	"context"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/segment"
)

var matchAttrs = []mapcommons.Attribute{
	{Name: "n", Type: mapcommons.AttrInteger},
	{Name: "x", Type: mapcommons.AttrFloat},
	{Name: "s", Type: mapcommons.AttrString},
	{Name: "b", Type: mapcommons.AttrBoolean},
}

// matchRow is row i of the segments of these tests.
func matchRow(i int) *mapcommons.Feature {
	return &mapcommons.Feature{Values: []any{int64(i % 1000), float64(i) / 4, "row " + strconv.Itoa(i), i%2 == 0},
		Geometry: wkb.AppendPoint(nil, float64(i%360)-180, float64(i%170)-85)}
}

// writeSegment writes rows as a segment and opens it.
func writeSegment(tb testing.TB, rows []*mapcommons.Feature) *segment.Segment {
	tb.Helper()
	dir := tb.TempDir()
	w, err := segment.NewWriter(dir, matchAttrs)
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range rows {
		if err := w.Add(f); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := w.Finish(filepath.Join(dir, "x.seg")); err != nil {
		tb.Fatal(err)
	}
	s, err := segment.Open(filepath.Join(dir, "x.seg"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestIDMatcher(t *testing.T) {
	rows := []*mapcommons.Feature{matchRow(0), matchRow(1), matchRow(0), {Values: []any{nil, math.Copysign(0, -1), nil, nil}}}
	old := writeSegment(t, rows) // ids 1, 2, 3, 4
	m := newIDMatcher(context.Background(), old, matchAttrs)
	if m == nil {
		t.Fatal("no matcher")
	}
	for _, c := range []struct {
		f    *mapcommons.Feature
		last int64
		want int64
	}{
		{matchRow(0), 0, 1},
		{matchRow(0), 1, 3}, // the duplicate's own id
		{matchRow(0), 3, 0},
		{matchRow(1), 0, 2},
		{matchRow(1), 2, 0},
		{matchRow(2), 0, 0},
		{&mapcommons.Feature{Values: []any{nil, math.Copysign(0, -1), nil, nil}}, 0, 4},
		{&mapcommons.Feature{Values: []any{nil, 0.0, nil, nil}}, 0, 0}, // bit for bit
		{&mapcommons.Feature{Values: []any{nil, nil, nil, nil}}, 0, 0},
	} {
		if got := m.id(c.f, c.last); got != c.want {
			t.Errorf("id(%v, %d) = %d, want %d", c.f.Values, c.last, got, c.want)
		}
	}
	// A hash may collide: same compares the rows, values of the wrong
	// type included (they must not be read as another column type).
	for _, f := range []*mapcommons.Feature{
		{Values: []any{"0", 0.0, "row 0", true}, Geometry: rows[0].Geometry},
		{Values: []any{int64(0), int64(0), "row 0", true}, Geometry: rows[0].Geometry},
		{Values: []any{int64(0), 0.0, int64(0), true}, Geometry: rows[0].Geometry},
		{Values: []any{int64(0), 0.0, "row 0", "true"}, Geometry: rows[0].Geometry},
		{Values: []any{int64(0), 0.0, "row 0", true}},
		{Values: []any{int64(0), 0.0, "row 0"}, Geometry: rows[0].Geometry},
	} {
		if m.same(f, 0) {
			t.Errorf("%v equals row 0", f.Values)
		}
	}
	if !m.same(matchRow(0), 0) || !m.same(matchRow(0), 2) || m.same(matchRow(0), 1) {
		t.Error("same is wrong on the rows themselves")
	}
	// Other attributes: no matching at all.
	if m := newIDMatcher(context.Background(), old, matchAttrs[:3]); m != nil {
		t.Error("a matcher for other attributes")
	}
}

// BenchmarkRefetchIDs is the cost a refetch adds per feature to keep ids,
// 1,000,000 old rows refetched unchanged: "InOrder" in their order (no
// index), "Indexed" after a first row that is new (every row looked up in
// the index, its building included). Rows keep their ids in both:
// go test -run X -bench RefetchIDs ./sqlite/
func BenchmarkRefetchIDs(b *testing.B) {
	const n = 1000000
	rows := make([]*mapcommons.Feature, n)
	for i := range rows {
		rows[i] = matchRow(i)
	}
	old := writeSegment(b, rows)
	for _, mode := range []string{"InOrder", "Indexed"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				m := newIDMatcher(context.Background(), old, matchAttrs)
				if mode == "Indexed" {
					m.id(matchRow(-1), 0) // new, and before the others' ids
				}
				last := int64(0)
				for _, f := range rows {
					if id := m.id(f, last); id != last+1 {
						b.Fatalf("id %d after %d", id, last)
					}
					last++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/feature")
		})
	}
}
