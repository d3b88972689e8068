package storetest

// The store half of the query oracle: random datasets of points, lines
// and polygons (across the antimeridian and near the poles too), with
// nulls in every attribute and strings that differ only in case, queried
// with random boxes, buffers in every unit (contained and full, with
// distances), attribute filters, id lists, sorts and pages; each answer is
// compared with a brute-force evaluation over every feature (grouped
// queries and their aggregates too), written here
// from the domain's rules: the exact spatial tests of package spatial,
// nulls passing no filter and sorting last in both directions, strings
// compared byte by byte, ties in position order. Every store must give
// exactly these answers (the api package's oracle checks the same
// through HTTP against independent geometry).

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// oracleWords are string values: some differ only in case or accents, one
// is empty.
var oracleWords = []string{"alpha", "Alpha", "ALPHA", "beta", "Beta", "ämber", "amber", "zeta", "", "a b", "Zulu"}

// oracleAttrs are the attributes of the oracle's datasets.
var oracleAttrs = []mapcommons.Attribute{
	{Name: "n", Type: mapcommons.AttrInteger},
	{Name: "x", Type: mapcommons.AttrFloat},
	{Name: "name", Type: mapcommons.AttrString},
	{Name: "flag", Type: mapcommons.AttrBoolean},
	{Name: "day", Type: mapcommons.AttrDate},
}

// oracleLon draws a longitude, often near the antimeridian.
func oracleLon(r *rand.Rand) float64 {
	if r.IntN(4) == 0 {
		return math.Copysign(175+5*r.Float64(), r.Float64()-0.5)
	}
	return -180 + 360*r.Float64()
}

// oracleLat draws a latitude, sometimes near a pole.
func oracleLat(r *rand.Rand) float64 {
	if r.IntN(8) == 0 {
		return math.Copysign(80+9.9*r.Float64(), r.Float64()-0.5)
	}
	return -80 + 160*r.Float64()
}

// oracleGeometry draws a point, a line or a polygon (a small star), or
// none.
func oracleGeometry(r *rand.Rand) []byte {
	x, y := oracleLon(r), oracleLat(r)
	switch k := r.IntN(10); {
	case k < 6:
		return wkb.AppendPoint(nil, x, y)
	case k < 8:
		xy := []float64{x, y}
		for i := 0; i < 1+r.IntN(4); i++ {
			x, y = x+r.Float64()*8-4, math.Max(-89, math.Min(89, y+r.Float64()*8-4))
			xy = append(xy, x, y)
		}
		return wkb.AppendLineString(nil, xy)
	case k < 9:
		var ring []float64
		rad := 0.5 + 3*r.Float64()
		for i := 0; i < 6; i++ {
			a := 2 * math.Pi * float64(i) / 6
			ring = append(ring, x+rad*math.Cos(a), math.Max(-89, math.Min(89, y+rad*math.Sin(a))))
		}
		ring = append(ring, ring[0], ring[1])
		return wkb.AppendPolygon(nil, [][]float64{ring})
	}
	return nil
}

// oracleSource makes n random features.
func oracleSource(r *rand.Rand, n int) *SliceSource {
	src := &SliceSource{Attrs: oracleAttrs}
	for i := 0; i < n; i++ {
		v := make([]any, len(oracleAttrs))
		if r.IntN(8) > 0 {
			v[0] = int64(r.IntN(41) - 20)
		}
		if r.IntN(8) > 0 {
			v[1] = math.Round((r.Float64()*200-100)*4) / 4
		}
		if r.IntN(8) > 0 {
			v[2] = oracleWords[r.IntN(len(oracleWords))]
		}
		if r.IntN(8) > 0 {
			v[3] = r.IntN(2) == 0
		}
		if r.IntN(8) > 0 {
			v[4] = fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28))
		}
		src.Features = append(src.Features, mapcommons.Feature{Values: v, Geometry: oracleGeometry(r)})
	}
	return src
}

// oracleFeature is a stored feature as the oracle knows it.
type oracleFeature struct {
	pos, id int64
	values  []any
	geom    *wkb.Geom // nil without geometry
}

// oracleQuery draws a query over features.
func oracleQuery(r *rand.Rand, feats []oracleFeature) *mapcommons.FeatureQuery {
	q := &mapcommons.FeatureQuery{Limit: -1}
	if r.IntN(2) == 0 {
		w, s := oracleLon(r), oracleLat(r)
		e, n := w+r.Float64()*90, math.Min(90, s+r.Float64()*60)
		if e > 180 {
			e -= 360 // crosses the antimeridian
		}
		q.BBox = &mapcommons.BBox{W: w, S: s, E: e, N: n}
	}
	if r.IntN(3) == 0 {
		units := []string{"km", "m", "ft", "miles", "degrees"}[r.IntN(5)]
		km := 50 + r.Float64()*2000
		radius := map[string]float64{"km": km, "m": km * 1000, "ft": km * 3280.84, "miles": km / 1.609344, "degrees": km / 111.2}[units]
		n := &mapcommons.Near{Units: units, Radius: radius, Contained: r.IntN(2) == 0}
		x, y := oracleLon(r), oracleLat(r)
		switch r.IntN(4) {
		case 0:
			n.Kind, n.XY = mapcommons.NearPoint, []float64{x, y}
		case 1:
			n.Kind, n.XY = mapcommons.NearPoints, []float64{x, y, oracleLon(r), oracleLat(r)}
		case 2:
			n.Kind, n.XY = mapcommons.NearLine, []float64{x, y, x + 10, math.Min(89, y+5), x + 15, y}
		default:
			d := 5 + 10*r.Float64()
			n.Kind, n.XY = mapcommons.NearPolygon, []float64{x, y, x + d, y, x + d, math.Min(89, y+d), x, math.Min(89, y+d), x, y}
			if r.IntN(2) == 0 {
				n.Radius = 0
			}
		}
		q.Near, q.WithDistance = n, r.IntN(2) == 0
	}
	for k := r.IntN(3); k > 0; k-- {
		q.Filters = append(q.Filters, oracleFilter(r))
	}
	if r.IntN(2) == 0 {
		q.Where = oracleWhere(r)
	}
	if r.IntN(8) == 0 {
		q.IDs = []int64{}
		for k := r.IntN(20); k > 0; k-- {
			q.IDs = append(q.IDs, feats[r.IntN(len(feats))].id+int64(r.IntN(3)-1))
		}
	}
	if r.IntN(2) == 0 {
		q.Sort, q.Descending = oracleAttrs[r.IntN(len(oracleAttrs))].Name, r.IntN(2) == 0
	}
	if r.IntN(2) == 0 {
		q.Offset, q.Limit = int64(r.IntN(40)), int64(r.IntN(30))
	}
	return q
}

// oracleFilter draws one attribute condition with a valid value.
func oracleFilter(r *rand.Rand) mapcommons.Filter {
	a := oracleAttrs[r.IntN(len(oracleAttrs))]
	value := func() string {
		switch a.Type {
		case mapcommons.AttrInteger:
			return strconv.Itoa(r.IntN(41) - 20)
		case mapcommons.AttrFloat:
			return strconv.FormatFloat(math.Round((r.Float64()*200-100)*4)/4, 'f', -1, 64)
		case mapcommons.AttrBoolean:
			return []string{"true", "false", "1", "0", "yes"}[r.IntN(5)]
		case mapcommons.AttrDate:
			return fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28))
		}
		return oracleWords[r.IntN(len(oracleWords))]
	}
	f := mapcommons.Filter{Attr: a.Name, Op: []string{mapcommons.OpMin, mapcommons.OpMax, mapcommons.OpEquals, mapcommons.OpIn}[r.IntN(4)]}
	f.Values = []string{value()}
	if f.Op == mapcommons.OpIn {
		for k := r.IntN(4); k > 0; k-- {
			f.Values = append(f.Values, value())
		}
	}
	return f
}

// oracleCompare compares a value with a filter value of attribute type t.
func oracleCompare(t mapcommons.AttrType, v any, s string) int {
	switch x := v.(type) {
	case int64:
		f, _ := strconv.ParseFloat(s, 64)
		return cmp.Compare(float64(x), f)
	case float64:
		f, _ := strconv.ParseFloat(s, 64)
		return cmp.Compare(x, f)
	case bool:
		b, _ := mapcommons.ParseBool(s)
		return cmp.Compare(boolNum(x), boolNum(b))
	case string:
		return bytes.Compare([]byte(x), []byte(s))
	}
	panic(fmt.Sprintf("oracle: %T for %s", v, t))
}

func boolNum(b bool) int {
	if b {
		return 1
	}
	return 0
}

// oracleWant evaluates q over every feature: the positions selected in
// order, and their distances when q asks for them.
func oracleWant(feats []oracleFeature, q *mapcommons.FeatureQuery) ([]int64, []float64) {
	var near *spatial.Near
	if n := q.Near; n != nil {
		near = &spatial.Near{Kind: n.Kind, XY: n.XY, Radius: n.Radius, Metric: spatial.NewMetric(n.Units), Contained: n.Contained}
		near.Prepare()
	}
	var ids map[int64]bool
	if q.IDs != nil {
		ids = map[int64]bool{}
		for _, id := range q.IDs {
			ids[id] = true
		}
	}
	var sel []oracleFeature
	for _, f := range feats {
		if ids != nil && !ids[f.id] {
			continue
		}
		if (q.BBox != nil || near != nil) && f.geom == nil {
			continue
		}
		if b := q.BBox; b != nil && !spatial.IntersectsRects(*f.geom, spatial.BBoxRects(b.W, b.S, b.E, b.N)) {
			continue
		}
		if near != nil && !near.Match(*f.geom) {
			continue
		}
		if q.Where != nil && oracleEval(q.Where, &f) != oTrue {
			continue
		}
		ok := true
		for _, c := range q.Filters {
			i := mapcommons.AttrIndex(oracleAttrs, c.Attr)
			v := f.values[i]
			if v == nil {
				ok = false
				break
			}
			match := false
			switch c.Op {
			case mapcommons.OpMin:
				match = oracleCompare(oracleAttrs[i].Type, v, c.Values[0]) >= 0
			case mapcommons.OpMax:
				match = oracleCompare(oracleAttrs[i].Type, v, c.Values[0]) <= 0
			default:
				for _, s := range c.Values {
					match = match || oracleCompare(oracleAttrs[i].Type, v, s) == 0
				}
			}
			if !match {
				ok = false
				break
			}
		}
		if ok {
			sel = append(sel, f)
		}
	}
	if q.Sort != "" {
		i := mapcommons.AttrIndex(oracleAttrs, q.Sort)
		slices.SortStableFunc(sel, func(a, b oracleFeature) int {
			va, vb := a.values[i], b.values[i]
			switch {
			case va == nil && vb == nil:
				return 0
			case va == nil:
				return 1
			case vb == nil:
				return -1
			}
			var c int
			switch x := va.(type) {
			case int64:
				c = cmp.Compare(x, vb.(int64))
			case float64:
				c = cmp.Compare(x, vb.(float64))
			case bool:
				c = cmp.Compare(boolNum(x), boolNum(vb.(bool)))
			case string:
				c = bytes.Compare([]byte(x), []byte(vb.(string)))
			}
			if q.Descending {
				return -c
			}
			return c
		})
	}
	off := min(max(q.Offset, 0), int64(len(sel)))
	sel = sel[off:]
	if q.Limit >= 0 && int64(len(sel)) > q.Limit {
		sel = sel[:q.Limit]
	}
	pos := make([]int64, len(sel))
	var dist []float64
	for k, f := range sel {
		pos[k] = f.pos
		if q.WithDistance && near != nil {
			dist = append(dist, near.Distance(*f.geom))
		}
	}
	return pos, dist
}

// testQueryOracle compares the store's answers with oracleWant.
func testQueryOracle(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	for seed := uint64(1); seed <= 3; seed++ {
		r := rand.New(rand.NewPCG(seed, 42))
		ds := &mapcommons.Dataset{Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, ds, oracleSource(r, 400)); err != nil {
			t.Fatal(err)
		}
		n := 400
		if seed > 1 {
			// Edited: the queries run over a dataset with features
			// deleted, updated and added, as each store keeps such
			// edits (pending changes, rows edited in place).
			live := make([]int64, 400)
			for i := range live {
				live[i] = int64(i + 1)
			}
			for round := 0; round < 4; round++ {
				e := &mapcommons.Edits{}
				more := oracleSource(r, 30)
				r.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
				e.Deletes = slices.Clone(live[:25])
				for k := 0; k < 15; k++ {
					f := more.Features[k]
					f.ID = live[25+k]
					e.Updates = append(e.Updates, f)
				}
				e.Adds = more.Features[15:]
				res, err := s.Features.ApplyEdits(ctx, ds.ID, e)
				if err != nil {
					t.Fatalf("seed %d: editing the dataset: %v", seed, err)
				}
				live = append(live[25:], res.AddIDs...)
			}
			n = len(live)
		}
		var feats []oracleFeature
		err := s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
			if f.Position != int64(len(feats)) {
				return fmt.Errorf("feature %d (id %d) at position %d", len(feats), f.ID, f.Position)
			}
			of := oracleFeature{pos: f.Position, id: f.ID, values: slices.Clone(f.Values)}
			if len(f.Geometry) > 0 {
				g, err := wkb.Decode(slices.Clone(f.Geometry))
				if err != nil {
					return err
				}
				of.geom = &g
			}
			feats = append(feats, of)
			return nil
		})
		if err != nil || len(feats) != n {
			t.Fatalf("reading the dataset back: %d features, %v", len(feats), err)
		}
		compared, nonEmpty := 0, 0
		for trial := 0; trial < 300; trial++ {
			q := oracleQuery(r, feats)
			want, wantDist := oracleWant(feats, q)
			count := int64(-1)
			if trial%2 == 0 { // the count of every match with the page
				q.Count = &count
			}
			var got []int64
			var gotDist []float64
			err := s.Features.ScanFeatures(ctx, ds.ID, q, func(f *mapcommons.Feature) error {
				if q.Count != nil && count < 0 {
					return fmt.Errorf("a feature before the count")
				}
				got = append(got, f.Position)
				if q.WithDistance && q.Near != nil {
					gotDist = append(gotDist, f.Distance)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("seed %d trial %d: %+v: %v", seed, trial, describeQuery(q), err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d trial %d: %s\n got %v\nwant %v", seed, trial, describeQuery(q), got, want)
			}
			if q.Count != nil {
				if all, _ := oracleWant(feats, q.CountQuery()); count != int64(len(all)) {
					t.Fatalf("seed %d trial %d: %s: count %d, want %d", seed, trial, describeQuery(q), count, len(all))
				}
			}
			for k := range wantDist {
				if d := math.Abs(gotDist[k] - wantDist[k]); d > 1e-9*math.Max(1, math.Abs(wantDist[k])) {
					t.Fatalf("seed %d trial %d: %s: distance of %d is %v, want %v", seed, trial, describeQuery(q), got[k], gotDist[k], wantDist[k])
				}
			}
			compared++
			if len(want) > 0 {
				nonEmpty++
			}
		}
		for trial := 0; trial < 100; trial++ {
			q := oracleQuery(r, feats)
			q.Sort, q.IDs = "", nil
			for k := r.IntN(3); k > 0; k-- {
				q.GroupBy = append(q.GroupBy, []string{"name", "flag", "n", "day", "x"}[r.IntN(5)])
			}
			q.GroupBy = slices.Compact(q.GroupBy)
			for k := r.IntN(3); k > 0 || len(q.GroupBy) == 0 && len(q.Aggregates) == 0; k-- {
				a := oracleAttrs[r.IntN(len(oracleAttrs))]
				calc := []string{mapcommons.CalcMin, mapcommons.CalcMax, mapcommons.CalcSum, mapcommons.CalcAverage}[r.IntN(4)]
				if !a.Type.Numeric() {
					calc = []string{mapcommons.CalcMin, mapcommons.CalcMax}[r.IntN(2)]
				}
				q.Aggregates = append(q.Aggregates, mapcommons.Aggregate{Name: a.Name, Calc: calc})
			}
			if trial%4 == 0 { // a count alone (OGC's numberMatched)
				q.GroupBy, q.Aggregates = nil, nil
			}
			got, err := s.Features.GroupFeatures(ctx, ds.ID, q)
			if err != nil {
				t.Fatalf("seed %d group trial %d: %s group by %v %v: %v", seed, trial, describeQuery(q), q.GroupBy, q.Aggregates, err)
			}
			if want := oracleGroups(feats, q); !sameGroups(got, want) {
				t.Fatalf("seed %d group trial %d: %s group by %v %v\n got %v\nwant %v", seed, trial, describeQuery(q), q.GroupBy, q.Aggregates, got, want)
			}
		}
		if nonEmpty < compared/4 {
			t.Errorf("seed %d: only %d of %d queries selected anything: the oracle tests little", seed, nonEmpty, compared)
		}
	}
}

// oracleGroups evaluates a grouped query over every feature: one group per
// distinct combination of the GroupBy values (-0 with 0) among the
// features the query selects, ordered by those values (nulls last, the
// others reversed when Descending), paged; aggregates over the non-null
// values (nil for none): min and max of the column's type, sum of integers
// an integer, averages and sums of floats a float.
func oracleGroups(feats []oracleFeature, q *mapcommons.FeatureQuery) []mapcommons.Group {
	sel := *q
	sel.Offset, sel.Limit, sel.Sort, sel.GroupBy, sel.Aggregates = 0, -1, "", nil, nil
	positions, _ := oracleWant(feats, &sel)
	type acc struct {
		g    mapcommons.Group
		vals [][]any // per aggregate, the non-null values
	}
	groups := map[string]*acc{}
	var order []string
	for _, pos := range positions {
		f := feats[pos]
		var values []any
		for _, name := range q.GroupBy {
			v := f.values[mapcommons.AttrIndex(oracleAttrs, name)]
			if x, ok := v.(float64); ok && x == 0 {
				v = 0.0
			}
			values = append(values, v)
		}
		key := fmt.Sprintf("%#v", values)
		a, ok := groups[key]
		if !ok {
			a = &acc{g: mapcommons.Group{Values: values}, vals: make([][]any, len(q.Aggregates))}
			groups[key] = a
			order = append(order, key)
		}
		a.g.Count++
		for i, ag := range q.Aggregates {
			if v := f.values[mapcommons.AttrIndex(oracleAttrs, ag.Name)]; v != nil {
				a.vals[i] = append(a.vals[i], v)
			}
		}
	}
	if len(q.GroupBy) == 0 && len(groups) == 0 {
		groups[""] = &acc{vals: make([][]any, len(q.Aggregates))}
		order = append(order, "")
	}
	var out []mapcommons.Group
	for _, key := range order {
		a := groups[key]
		a.g.Aggregates = make([]any, len(q.Aggregates))
		for i, ag := range q.Aggregates {
			a.g.Aggregates[i] = oracleAggregate(ag.Calc, a.vals[i])
		}
		out = append(out, a.g)
	}
	slices.SortStableFunc(out, func(a, b mapcommons.Group) int {
		for i := range a.Values {
			va, vb := a.Values[i], b.Values[i]
			switch {
			case va == nil && vb == nil:
				continue
			case va == nil:
				return 1
			case vb == nil:
				return -1
			}
			if c := oracleCompareValues(va, vb); c != 0 {
				if q.Descending {
					return -c
				}
				return c
			}
		}
		return 0
	})
	off := min(max(q.Offset, 0), int64(len(out)))
	out = out[off:]
	if q.Limit >= 0 && int64(len(out)) > q.Limit {
		out = out[:q.Limit]
	}
	return out
}

// oracleCompareValues orders two non-null values of one column.
func oracleCompareValues(a, b any) int {
	switch x := a.(type) {
	case int64:
		return cmp.Compare(x, b.(int64))
	case float64:
		return cmp.Compare(x, b.(float64))
	case bool:
		return cmp.Compare(boolNum(x), boolNum(b.(bool)))
	}
	return bytes.Compare([]byte(a.(string)), []byte(b.(string)))
}

// oracleAggregate computes one aggregate over non-null values.
func oracleAggregate(calc string, vals []any) any {
	if len(vals) == 0 {
		return nil
	}
	switch calc {
	case mapcommons.CalcMin, mapcommons.CalcMax:
		best := vals[0]
		for _, v := range vals[1:] {
			c := oracleCompareValues(v, best)
			if (calc == mapcommons.CalcMin && c < 0) || (calc == mapcommons.CalcMax && c > 0) {
				best = v
			}
		}
		return best
	}
	var sum float64
	var isum int64
	for _, v := range vals {
		switch x := v.(type) {
		case int64:
			isum += x
			sum += float64(x)
		case float64:
			sum += x
		}
	}
	if calc == mapcommons.CalcSum {
		if _, ok := vals[0].(int64); ok {
			return isum
		}
		return sum
	}
	return sum / float64(len(vals))
}

// sameGroups compares groups, floats within a relative 1e-9 (a store may
// add in another order).
func sameGroups(got, want []mapcommons.Group) bool {
	if len(got) != len(want) {
		return false
	}
	same := func(a, b any) bool {
		x, okx := a.(float64)
		y, oky := b.(float64)
		if okx && oky {
			return math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y))
		}
		return a == b
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Count != w.Count || len(g.Values) != len(w.Values) || len(g.Aggregates) != len(w.Aggregates) {
			return false
		}
		for k := range g.Values {
			if !same(g.Values[k], w.Values[k]) {
				return false
			}
		}
		for k := range g.Aggregates {
			if !same(g.Aggregates[k], w.Aggregates[k]) {
				return false
			}
		}
	}
	return true
}

// describeQuery shows a query in a failure message.
func describeQuery(q *mapcommons.FeatureQuery) string {
	s := fmt.Sprintf("offset %d limit %d sort %q desc %v filters %v ids %v", q.Offset, q.Limit, q.Sort, q.Descending, q.Filters, q.IDs)
	if q.BBox != nil {
		s += fmt.Sprintf(" bbox %+v", *q.BBox)
	}
	if q.Near != nil {
		s += fmt.Sprintf(" near %+v distance %v", *q.Near, q.WithDistance)
	}
	if q.Where != nil {
		s += " where " + describeWhere(q.Where)
	}
	return s
}
