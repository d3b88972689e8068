package segment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/feature"
	"mapcommons/format/wkb"
)

// viewFeatures are indexFeatures (few values: duplicates, nulls, NaN, ±Inf,
// -0, strings with NUL, integers above 2^53) whose geometries are, unless
// onlyPts, also lines and polygons on a small grid (so that boxes and
// buffers hit their edges) and near the antimeridian.
func viewFeatures(r *rand.Rand, n, spread int, onlyPts bool) []mapcommons.Feature {
	feats := indexFeatures(r, n, spread)
	if onlyPts {
		return feats
	}
	for i := range feats {
		x, y := float64(r.IntN(41)-20), float64(r.IntN(41)-20)
		if r.IntN(8) == 0 {
			x = float64(160 + r.IntN(20))
		}
		switch r.IntN(5) {
		case 0: // indexFeatures' point (or none)
		case 1:
			feats[i].Geometry = wkb.AppendPoint(nil, x, y)
		case 2:
			feats[i].Geometry = wkb.AppendLineString(nil, []float64{x, y, x + float64(r.IntN(5)), y + float64(r.IntN(5)-2)})
		default:
			d := float64(1 + r.IntN(4))
			feats[i].Geometry = wkb.AppendPolygon(nil, [][]float64{{x, y, x + d, y, x + d, y + d, x, y + d, x, y}})
		}
	}
	return feats
}

// viewCase is a dataset kept both ways: as a base less dead plus a delta,
// and compacted.
type viewCase struct {
	view      *View
	compacted *Segment
	ids       []int64 // every id a query may ask for: live, dead, missing
	n         int     // live features
	nextID    int64   // the view's next id: the greater of its segments'
}

// writeFeatures writes feats (with their ids) to a new segment and opens it.
func writeFeatures(t testing.TB, dir, name string, feats []mapcommons.Feature, next int64) *Segment {
	t.Helper()
	w, err := NewWriter(dir, indexAttrs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range feats {
		if err := w.Add(&feats[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.SetNextID(next)
	path := filepath.Join(dir, name)
	if _, err := w.Finish(path); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newViewCase draws a base of nBase features (ids with gaps, from first
// on), kills each with probability pDead, updates (in the delta) each
// dead one with probability 1/2, and adds nAdd features in the delta with
// ids absent from the base: in its gaps, below its first id and above its
// last.
func newViewCase(t testing.TB, r *rand.Rand, nBase, nAdd int, pDead float64, spread int, onlyPts bool) *viewCase {
	t.Helper()
	dir := t.TempDir()
	base := viewFeatures(r, nBase, spread, onlyPts)
	id := int64(1 + r.IntN(4))
	inBase := map[int64]bool{}
	for i := range base {
		base[i].ID = id
		inBase[id] = true
		id += int64(1 + r.IntN(3))
	}
	top := id + int64(nAdd) + 2
	var dead []int32
	var delta []mapcommons.Feature
	fresh := viewFeatures(r, nBase+nAdd, spread, onlyPts)
	for i := range base {
		if r.Float64() < pDead {
			dead = append(dead, int32(i))
			if r.IntN(2) == 0 {
				f := fresh[i]
				f.ID = base[i].ID
				delta = append(delta, f)
			}
		}
	}
	used := map[int64]bool{}
	for k := 0; k < nAdd; k++ {
		id := 1 + r.Int64N(top)
		if inBase[id] || used[id] {
			continue
		}
		used[id] = true
		f := fresh[nBase+k]
		f.ID = id
		delta = append(delta, f)
	}
	slices.SortFunc(delta, func(a, b mapcommons.Feature) int { return int(a.ID - b.ID) })
	bs := writeFeatures(t, dir, "base.seg", base, id)
	var ds *Segment
	if len(delta) > 0 || r.IntN(2) == 0 {
		ds = writeFeatures(t, dir, "delta.seg", delta, top+1)
	}
	var live []mapcommons.Feature
	for i := range base {
		if !slices.Contains(dead, int32(i)) {
			live = append(live, base[i])
		}
	}
	live = append(live, delta...)
	slices.SortFunc(live, func(a, b mapcommons.Feature) int { return int(a.ID - b.ID) })
	cs := writeFeatures(t, dir, "compacted.seg", live, top+1)
	v, err := NewView(bs, dead, ds)
	if err != nil {
		t.Fatal(err)
	}
	c := &viewCase{view: v, compacted: cs, n: len(live), nextID: bs.NextID()}
	if ds != nil { // an empty delta still carries the next id
		c.nextID = max(c.nextID, ds.NextID())
	}
	for id := int64(0); id <= top+1; id++ {
		c.ids = append(c.ids, id)
	}
	return c
}

// randomViewQuery draws a query of every kind: randomIndexQuery's filters,
// sorts and pages, and boxes, buffers, Where, ids, Lazy.
func randomViewQuery(r *rand.Rand, spread int, ids []int64, n int) *mapcommons.FeatureQuery {
	q := randomIndexQuery(r, spread)
	if r.IntN(3) == 0 {
		q.Filters = nil
	}
	if r.IntN(4) == 0 {
		q.Offset = int64(r.IntN(n + 10))
	}
	switch r.IntN(8) {
	case 0:
		w, s := float64(r.IntN(41)-25), float64(r.IntN(41)-25)
		q.BBox = &mapcommons.BBox{W: w, S: s, E: w + float64(r.IntN(30)), N: s + float64(r.IntN(30))}
	case 1:
		q.BBox = &mapcommons.BBox{W: float64(150 + r.IntN(30)), S: -30, E: float64(-180 + r.IntN(20)), N: 30}
	case 2:
		q.Near = &mapcommons.Near{Kind: mapcommons.NearPoint, XY: []float64{float64(r.IntN(41) - 20), float64(r.IntN(41) - 20)},
			Radius: float64(100 + r.IntN(2000)), Units: "km", Contained: r.IntN(2) == 0}
	case 3:
		x, y, d := float64(r.IntN(41)-20), float64(r.IntN(41)-20), float64(1+r.IntN(15))
		q.Near = &mapcommons.Near{Kind: mapcommons.NearPolygon, XY: []float64{x, y, x + d, y, x + d, y + d, x, y + d, x, y},
			Radius: float64(r.IntN(2) * 100), Units: "km", Contained: r.IntN(2) == 0}
	}
	q.WithDistance = q.Near != nil && r.IntN(2) == 0
	if r.IntN(4) == 0 {
		q.Where = randomExpr(r, 2)
	}
	if r.IntN(5) == 0 {
		q.IDs = []int64{}
		for k := r.IntN(30); k > 0; k-- {
			q.IDs = append(q.IDs, ids[r.IntN(len(ids))])
		}
	}
	q.Lazy = r.IntN(3) == 0
	if r.IntN(40) == 0 {
		q.Sort = "nope" // EINVALID
	}
	return q
}

type queryFunc func(context.Context, *mapcommons.FeatureQuery, func(*mapcommons.Feature) error) error

// answers renders what a query sends, values (read from Row when Lazy),
// geometry and distance included; NaN and -0 print as themselves.
func answers(run queryFunc, attrs []mapcommons.Attribute, q *mapcommons.FeatureQuery) (string, error) {
	var b strings.Builder
	err := run(context.Background(), q, func(f *mapcommons.Feature) error {
		vals := f.Values
		if q.Lazy {
			if f.Values != nil || f.Row == nil {
				return fmt.Errorf("lazy feature with values %v", f.Values)
			}
			vals = make([]any, len(attrs))
			for i, a := range attrs {
				switch {
				case f.Row.IsNull(i):
				case a.Type == mapcommons.AttrInteger:
					vals[i] = f.Row.Int(i)
				case a.Type == mapcommons.AttrFloat:
					vals[i] = f.Row.Float(i)
				case a.Type == mapcommons.AttrBoolean:
					vals[i] = f.Row.Bool(i)
				default:
					vals[i] = string(f.Row.Bytes(i))
				}
			}
		}
		fmt.Fprintf(&b, "%d %d %q %x", f.Position, f.ID, fmt.Sprint(vals), f.Geometry)
		if q.WithDistance {
			fmt.Fprintf(&b, " %v", f.Distance)
		}
		b.WriteByte('\n')
		return nil
	})
	return b.String(), err
}

// checkQuery compares a query on the view with the same on the compacted
// segment.
func (c *viewCase) checkQuery(t testing.TB, q *mapcommons.FeatureQuery) {
	t.Helper()
	want, err1 := answers(c.compacted.Query, indexAttrs, q)
	got, err2 := answers(c.view.Query, indexAttrs, q)
	if mapcommons.ErrorCode(err1) != mapcommons.ErrorCode(err2) || (err1 == nil) != (err2 == nil) {
		t.Fatalf("query %s: view err %v, compacted err %v", describe(q), err2, err1)
	}
	if got != want {
		t.Fatalf("query %s:\nview\n%s\ncompacted\n%s", describe(q), head2(got), head2(want))
	}
}

func head2(s string) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(len(lines), 12)], "")
}

func describe(q *mapcommons.FeatureQuery) string {
	s := fmt.Sprintf("%+v", *q)
	if q.Where != nil {
		s += " where " + exprString(q.Where)
	}
	if q.BBox != nil {
		s += fmt.Sprintf(" bbox %+v", *q.BBox)
	}
	if q.Near != nil {
		s += fmt.Sprintf(" near %+v", *q.Near)
	}
	return s
}

// checkGroups compares a grouped query on the view with the same on the
// compacted segment: exactly without a spatial condition (both accumulate
// in position order); with one, the compacted segment accumulates in its
// index's order, so float sums and averages agree within 1e-9 relative.
func (c *viewCase) checkGroups(t testing.TB, q *mapcommons.FeatureQuery) {
	t.Helper()
	want, err1 := c.compacted.Groups(context.Background(), q)
	got, err2 := c.view.Groups(context.Background(), q)
	if (err1 == nil) != (err2 == nil) || mapcommons.ErrorCode(err1) != mapcommons.ErrorCode(err2) {
		t.Fatalf("groups %s: view err %v, compacted err %v", describe(q), err2, err1)
	}
	exact := q.BBox == nil && q.Near == nil && (q.Where == nil || feature.Boxes(q.Where) == nil)
	if fmt.Sprint(got) == fmt.Sprint(want) && reflect.DeepEqual(len(got), len(want)) {
		return
	}
	if !exact && len(got) == len(want) {
		same := true
		for i := range got {
			if fmt.Sprint(got[i].Values) != fmt.Sprint(want[i].Values) || got[i].Count != want[i].Count {
				same = false
				break
			}
			for j, a := range got[i].Aggregates {
				x, ok1 := a.(float64)
				y, ok2 := want[i].Aggregates[j].(float64)
				if ok1 && ok2 && (math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y)) || (math.IsNaN(x) && math.IsNaN(y)) || x == y) {
					continue
				}
				if fmt.Sprint(a) != fmt.Sprint(want[i].Aggregates[j]) {
					same = false
				}
			}
		}
		if same {
			return
		}
	}
	t.Fatalf("groups %s:\nview      %v\ncompacted %v", describe(q), got, want)
}

// randomGroupQuery turns a query into a grouped one. The aggregates are
// those whose result does not depend on the order of accumulation beyond
// float rounding: no min or max of the float column (NaN makes them
// depend on it) when a spatial condition drives the compacted segment's
// order.
func randomGroupQuery(r *rand.Rand, q *mapcommons.FeatureQuery) *mapcommons.FeatureQuery {
	g := *q
	g.Sort, g.Lazy, g.WithDistance = "", false, false
	g.GroupBy = nil
	for _, a := range indexAttrs {
		if r.IntN(4) == 0 {
			g.GroupBy = append(g.GroupBy, a.Name)
		}
	}
	g.Aggregates = []mapcommons.Aggregate{{Name: "n", Calc: mapcommons.CalcSum}, {Name: "n", Calc: mapcommons.CalcAverage},
		{Name: "x", Calc: mapcommons.CalcSum}, {Name: "x", Calc: mapcommons.CalcAverage}, {Name: "s", Calc: mapcommons.CalcMin},
		{Name: "d", Calc: mapcommons.CalcMax}, {Name: "b", Calc: mapcommons.CalcMin}, {Name: "n", Calc: mapcommons.CalcMax}}
	spatial := g.BBox != nil || g.Near != nil || (g.Where != nil && feature.Boxes(g.Where) != nil)
	if !spatial {
		g.Aggregates = append(g.Aggregates, mapcommons.Aggregate{Name: "x", Calc: mapcommons.CalcMin}, mapcommons.Aggregate{Name: "x", Calc: mapcommons.CalcMax})
	}
	r.Shuffle(len(g.Aggregates), func(i, j int) { g.Aggregates[i], g.Aggregates[j] = g.Aggregates[j], g.Aggregates[i] })
	g.Aggregates = g.Aggregates[:r.IntN(len(g.Aggregates)+1)]
	if r.IntN(3) == 0 {
		g.Offset, g.Limit = int64(r.IntN(5)), int64(r.IntN(6)-1)
	} else {
		g.Offset, g.Limit = 0, -1
	}
	return &g
}

// checkAccessors compares the view's positions, ids and reads with the
// compacted segment's.
func (c *viewCase) checkAccessors(t testing.TB) {
	t.Helper()
	v, s := c.view, c.compacted
	if v.Len() != s.Len() || !reflect.DeepEqual(v.Attributes(), s.Attributes()) {
		t.Fatalf("len %d, compacted %d", v.Len(), s.Len())
	}
	var f, g mapcommons.Feature
	for pos := 0; pos < s.Len(); pos++ {
		if v.ID(pos) != s.ID(pos) {
			t.Fatalf("ID(%d) = %d, compacted %d", pos, v.ID(pos), s.ID(pos))
		}
		v.Read(pos, &f)
		s.Read(pos, &g)
		if fmt.Sprint(f) != fmt.Sprint(g) {
			t.Fatalf("Read(%d) = %v, compacted %v", pos, f, g)
		}
		seg, p := v.Locate(pos)
		if seg == v.Base() && v.BasePosition(p) != pos || seg == v.Delta() && v.DeltaPosition(p) != pos {
			t.Fatalf("Locate(%d) = %p %d, which is elsewhere", pos, seg, p)
		}
		if seg == v.Base() && v.IsDead(p) {
			t.Fatalf("Locate(%d) = dead base position %d", pos, p)
		}
	}
	for _, id := range c.ids {
		p1, ok1 := v.Position(id)
		p2, ok2 := s.Position(id)
		if ok1 != ok2 || ok1 && p1 != p2 {
			t.Fatalf("Position(%d) = %d %v, compacted %d %v", id, p1, ok1, p2, ok2)
		}
	}
	pos := 0
	v.Each(func(seg *Segment, p int) bool {
		if seg.ID(p) != s.ID(pos) {
			t.Fatalf("Each: feature %d is %d, compacted %d", pos, seg.ID(p), s.ID(pos))
		}
		pos++
		return true
	})
	if pos != s.Len() {
		t.Fatalf("Each gave %d features, want %d", pos, s.Len())
	}
	if v.Pending() != (v.Delta() != nil || len(v.Dead()) > 0) {
		t.Fatal("Pending")
	}
	if v.NextID() != c.nextID {
		t.Fatalf("NextID %d, want %d", v.NextID(), c.nextID)
	}
}

// run checks the accessors and queries of every kind.
func (c *viewCase) run(t testing.TB, r *rand.Rand, spread, queries int) {
	t.Helper()
	c.checkAccessors(t)
	// Whole pages of every plain order, offsets beyond the end included.
	for _, desc := range []bool{false, true} {
		for _, off := range []int64{0, 1, int64(c.n / 2), int64(c.n - 1), int64(c.n), int64(c.n + 5)} {
			for _, lim := range []int64{-1, 0, 1, 3, 30} {
				if lim < 0 && c.n > 2000 && off < int64(c.n-100) {
					continue // whole answers of large datasets: a few
				}
				c.checkQuery(t, &mapcommons.FeatureQuery{Offset: off, Limit: lim, Descending: desc, Lazy: lim == 3})
				for _, a := range indexAttrs {
					c.checkQuery(t, &mapcommons.FeatureQuery{Offset: off, Limit: lim, Descending: desc, Sort: a.Name})
				}
			}
		}
	}
	c.checkQuery(t, &mapcommons.FeatureQuery{Limit: -1, IDs: c.ids})
	c.checkQuery(t, &mapcommons.FeatureQuery{Limit: -1, IDs: []int64{}})
	for range queries {
		q := randomViewQuery(r, spread, c.ids, c.n)
		c.checkQuery(t, q)
		c.checkGroups(t, randomGroupQuery(r, q))
	}
}

// TestView compares views with compacted segments holding the same
// features: accessors, queries of every kind, groups. Each dataset is
// queried with the attribute indexes and without (scans).
func TestView(t *testing.T) {
	for i, tc := range []struct {
		name        string
		base, added int
		pDead       float64
		spread      int
		onlyPts     bool
		queries     int
	}{
		{"empty", 0, 0, 0, 4, false, 30},
		{"empty base", 0, 20, 0, 4, false, 100},
		{"all dead", 40, 0, 1, 4, false, 100},
		{"all dead and delta", 60, 30, 1, 4, false, 150},
		{"no delta", 200, 0, 0.2, 4, true, 150},
		{"delta only", 100, 50, 0, 8, false, 200},
		{"small", 37, 10, 0.3, 4, false, 300},
		{"points", 3000, 300, 0.1, 40, true, 300},
		{"mixed", 2000, 400, 0.2, 16, false, 250},
		{"large", raceCut(20000), 1000, 0.05, 400, true, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 11))
			c := newViewCase(t, r, tc.base, tc.added, tc.pDead, tc.spread, tc.onlyPts)
			c.run(t, r, tc.spread, raceCut(tc.queries))
			// The same without the attribute indexes.
			c.view.base.noAttrIndex, c.compacted.noAttrIndex = true, true
			if c.view.delta != nil {
				c.view.delta.noAttrIndex = true
			}
			for range raceCut(tc.queries / 3) {
				q := randomViewQuery(r, tc.spread, c.ids, c.n)
				c.checkQuery(t, q)
				c.checkGroups(t, randomGroupQuery(r, q))
			}
		})
	}
}

// TestViewFirstDelta pins a delta feature before the first base id, one
// after the last, and one in a gap, with the base's first feature dead.
func TestViewFirstDelta(t *testing.T) {
	dir := t.TempDir()
	pt := func(id int64, x float64) mapcommons.Feature {
		return mapcommons.Feature{ID: id, Values: []any{id, x, "s", true, "2020-01-01"}, Geometry: wkb.AppendPoint(nil, x, x)}
	}
	base := writeFeatures(t, dir, "b.seg", []mapcommons.Feature{pt(5, 1), pt(6, 2), pt(9, 3)}, 10)
	delta := writeFeatures(t, dir, "d.seg", []mapcommons.Feature{pt(2, 4), pt(5, 0.5), pt(7, 5), pt(12, 6)}, 13)
	comp := writeFeatures(t, dir, "c.seg", []mapcommons.Feature{pt(2, 4), pt(5, 0.5), pt(6, 2), pt(7, 5), pt(9, 3), pt(12, 6)}, 13)
	v, err := NewView(base, []int32{0}, delta)
	if err != nil {
		t.Fatal(err)
	}
	c := &viewCase{view: v, compacted: comp, n: 6, nextID: 13, ids: []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}}
	c.run(t, rand.New(rand.NewPCG(1, 2)), 4, 200)
	// An empty delta still carries the next id.
	empty := writeFeatures(t, dir, "e.seg", nil, 20)
	if v, err := NewView(base, []int32{1}, empty); err != nil || v.NextID() != 20 || v.Len() != 2 {
		t.Fatalf("view with an empty delta: %v", err)
	}
	// A delta id live in the base, dead positions out of order or range,
	// other attributes: refused.
	if _, err := NewView(base, nil, delta); err == nil {
		t.Fatal("a delta id live in the base")
	}
	for _, dead := range [][]int32{{1, 0}, {0, 0}, {3}, {-1}} {
		if _, err := NewView(base, dead, nil); err == nil {
			t.Fatalf("dead %v accepted", dead)
		}
	}
}

// TestViewCancelled checks that the view's queries give up with a
// context already done.
func TestViewCancelled(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	c := newViewCase(t, r, 3000, 100, 0.1, 40, true)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, q := range []mapcommons.FeatureQuery{{Limit: -1}, {Limit: -1, Descending: true, Offset: 10}, {Limit: 10, Sort: "x"},
		{Limit: -1, BBox: &mapcommons.BBox{W: -180, S: -90, E: 180, N: 90}}, {Limit: -1, Filters: []mapcommons.Filter{{Attr: "n", Op: mapcommons.OpMin, Values: []string{"-1000"}}}}} {
		n := 0
		err := c.view.Query(ctx, &q, func(*mapcommons.Feature) error { n++; return nil })
		if err != context.Canceled || n > 0 {
			t.Fatalf("%+v: %v after %d features", q, err, n)
		}
		if _, err := c.view.Groups(ctx, &q); err != context.Canceled {
			t.Fatalf("groups %+v: %v", q, err)
		}
	}
	// Cancelled while sending: stops within checkCostlyEvery features.
	for _, q := range []mapcommons.FeatureQuery{{Limit: -1}, {Limit: -1, Sort: "n"}, {Limit: -1, BBox: &mapcommons.BBox{W: -180, S: -90, E: 180, N: 90}}} {
		ctx, cancel := context.WithCancel(t.Context())
		n := 0
		err := c.view.Query(ctx, &q, func(*mapcommons.Feature) error { n++; cancel(); return nil })
		if err != context.Canceled || n > checkCostlyEvery+1 {
			t.Fatalf("%+v: %v after %d features", q, err, n)
		}
	}
	// The function's error stops the query and is returned.
	stop := fmt.Errorf("stop")
	for _, q := range []mapcommons.FeatureQuery{{Limit: -1}, {Limit: -1, Sort: "s", Descending: true}, {Limit: -1, Filters: []mapcommons.Filter{{Attr: "b", Op: mapcommons.OpEquals, Values: []string{"true"}}}}} {
		n := 0
		if err := c.view.Query(t.Context(), &q, func(*mapcommons.Feature) error { n++; return stop }); err != stop || n != 1 {
			t.Fatalf("%+v: %v after %d", q, err, n)
		}
	}
}

func FuzzView(f *testing.F) {
	f.Add(uint64(1), uint16(100), uint16(20), uint8(30), uint8(4), false)
	f.Add(uint64(2), uint16(2000), uint16(300), uint8(10), uint8(40), true)
	f.Add(uint64(3), uint16(0), uint16(50), uint8(0), uint8(4), false)
	f.Add(uint64(4), uint16(50), uint16(0), uint8(255), uint8(8), false)
	f.Fuzz(func(t *testing.T, seed uint64, nBase, nAdd uint16, dead, spread uint8, onlyPts bool) {
		r := rand.New(rand.NewPCG(seed, 3))
		sp := int(spread)%64 + 2
		c := newViewCase(t, r, int(nBase)%2000, int(nAdd)%300, float64(dead)/255, sp, onlyPts)
		c.checkAccessors(t)
		for range 40 {
			q := randomViewQuery(r, sp, c.ids, c.n)
			c.checkQuery(t, q)
			c.checkGroups(t, randomGroupQuery(r, q))
		}
	})
}
