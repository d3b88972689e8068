package segment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// whereFeatures are random features over small value domains (so that
// equalities hit) and geometries around the origin (so that boxes do).
func whereFeatures(r *rand.Rand, n int, onlyPoints bool) []mapcommons.Feature {
	strs := []string{"", "a", "ab", "abc", "b%c", "ä_x", "ba", "äb"}
	dates := []string{"2020-01-01", "2020-06-30", "2021-01-01T10:00:00Z"}
	feats := make([]mapcommons.Feature, n)
	for i := range feats {
		x, y := float64(r.IntN(41)-20), float64(r.IntN(41)-20) // on a grid: edges are hit
		switch r.IntN(8) {                                     // near the antimeridian
		case 0:
			x = float64(160 + r.IntN(17))
		case 1:
			x = float64(-180 + r.IntN(17))
		}
		var g []byte
		switch k := r.IntN(4); {
		case onlyPoints || k < 2:
			g = wkb.AppendPoint(nil, x, y)
		case k == 2:
			g = wkb.AppendLineString(nil, []float64{x, y, x + float64(r.IntN(5)), y + float64(r.IntN(5)-2)})
		default:
			d := float64(1 + r.IntN(4))
			g = wkb.AppendPolygon(nil, [][]float64{{x, y, x + d, y, x + d, y + d, x, y + d, x, y}})
		}
		if !onlyPoints && r.IntN(20) == 0 {
			g = nil
		}
		vals := []any{int64(r.IntN(11) - 5), float64(r.IntN(9)-4) * 0.75, strs[r.IntN(len(strs))], r.IntN(2) == 0, dates[r.IntN(len(dates))]}
		for j := range vals {
			if r.IntN(6) == 0 {
				vals[j] = nil
			}
		}
		feats[i] = mapcommons.Feature{Values: vals, Geometry: g}
	}
	return feats
}

// randomExpr builds a random expression over testAttrs.
func randomExpr(r *rand.Rand, depth int) *mapcommons.Expr {
	num := func() mapcommons.Literal {
		return mapcommons.Literal{Kind: mapcommons.LitNumber, Num: float64(r.IntN(13)-6) * []float64{1, 0.75}[r.IntN(2)]}
	}
	str := func(col int) mapcommons.Literal {
		if col == 4 {
			return mapcommons.Literal{Kind: mapcommons.LitDate, Str: []string{"2020-01-01", "2020-06-30", "2021"}[r.IntN(3)]}
		}
		return mapcommons.Literal{Kind: mapcommons.LitString, Str: []string{"", "a", "ab", "abc", "b%c", "ä_x", "b", "äb"}[r.IntN(8)]}
	}
	lit := func(col int) mapcommons.Literal {
		switch col {
		case 0, 1:
			return num()
		case 3:
			return mapcommons.Literal{Kind: mapcommons.LitBoolean, Bool: r.IntN(2) == 0}
		}
		return str(col)
	}
	if depth > 0 && r.IntN(3) == 0 {
		switch r.IntN(3) {
		case 0:
			return &mapcommons.Expr{Op: mapcommons.ExprNot, Args: []*mapcommons.Expr{randomExpr(r, depth-1)}}
		default:
			e := &mapcommons.Expr{Op: []string{mapcommons.ExprAnd, mapcommons.ExprOr}[r.IntN(2)]}
			for k := 2 + r.IntN(2); k > 0; k-- {
				e.Args = append(e.Args, randomExpr(r, depth-1))
			}
			return e
		}
	}
	if r.IntN(40) == 0 {
		return &mapcommons.Expr{Op: []string{mapcommons.ExprTrue, mapcommons.ExprFalse}[r.IntN(2)]}
	}
	col := r.IntN(len(testAttrs))
	name := testAttrs[col].Name
	switch r.IntN(9) {
	case 0:
		if r.IntN(4) == 0 {
			return &mapcommons.Expr{Op: mapcommons.ExprIsNull, Property: "geometry"}
		}
		return &mapcommons.Expr{Op: mapcommons.ExprIsNull, Property: name}
	case 1:
		lo, hi := lit(col), lit(col)
		return &mapcommons.Expr{Op: mapcommons.ExprBetween, Property: name, Values: []mapcommons.Literal{lo, hi}}
	case 2:
		e := &mapcommons.Expr{Op: mapcommons.ExprIn, Property: name}
		for k := 1 + r.IntN(12); k > 0; k-- {
			e.Values = append(e.Values, lit(col))
		}
		return e
	case 3:
		pats := []string{"a%", "%b%", "_b%", "%c", "a_", "b\\%c", "ä%", "%", "__", "%_x", "a%b%c"}
		return &mapcommons.Expr{Op: mapcommons.ExprLike, Property: []string{"s", "d"}[r.IntN(2)], Values: []mapcommons.Literal{{Kind: mapcommons.LitString, Str: pats[r.IntN(len(pats))]}}}
	case 4, 5:
		w, s := float64(r.IntN(41)-20), float64(r.IntN(41)-20)
		e, n := w+float64(r.IntN(15)), s+float64(r.IntN(15))
		switch r.IntN(4) {
		case 3: // across the antimeridian
			w, e = float64(160+r.IntN(21)), float64(-180+r.IntN(21))
			fallthrough
		case 0:
			return &mapcommons.Expr{Op: mapcommons.ExprIntersects, Property: "geometry", BBox: &mapcommons.BBox{W: w, S: s, E: e, N: n}}
		case 1: // the same box as a polygon literal
			g := wkb.AppendPolygon(nil, [][]float64{{w, s, e, s, e, n, w, n, w, s}})
			return &mapcommons.Expr{Op: mapcommons.ExprIntersects, Property: "geom", Geometry: g}
		default:
			return &mapcommons.Expr{Op: mapcommons.ExprIntersects, Property: "geometry", Geometry: wkb.AppendPoint(nil, w, s)}
		}
	}
	ops := []string{mapcommons.ExprEq, mapcommons.ExprNe, mapcommons.ExprLt, mapcommons.ExprLe, mapcommons.ExprGt, mapcommons.ExprGe}
	return &mapcommons.Expr{Op: ops[r.IntN(len(ops))], Property: name, Values: []mapcommons.Literal{lit(col)}}
}

// oracle evaluates e for f straightforwardly over f.Values, in
// three-valued logic (0 false, 1 true, 2 unknown).
func oracle(t *testing.T, e *mapcommons.Expr, f *mapcommons.Feature) int {
	switch e.Op {
	case mapcommons.ExprAnd, mapcommons.ExprOr:
		unknown := false
		for _, a := range e.Args {
			switch v := oracle(t, a, f); {
			case v == 2:
				unknown = true
			case (v == 1) == (e.Op == mapcommons.ExprOr):
				return v
			}
		}
		if unknown {
			return 2
		}
		if e.Op == mapcommons.ExprAnd {
			return 1
		}
		return 0
	case mapcommons.ExprTrue, mapcommons.ExprFalse:
		return b2i(e.Op == mapcommons.ExprTrue)
	case mapcommons.ExprNot:
		if v := oracle(t, e.Args[0], f); v != 2 {
			return 1 - v
		}
		return 2
	case mapcommons.ExprIntersects:
		g, err := wkb.Decode(f.Geometry)
		if f.Geometry == nil || err != nil || g.IsEmpty() {
			return 2
		}
		var boxes []wkb.Rect
		if e.BBox != nil {
			boxes = spatial.BBoxRects(e.BBox.W, e.BBox.S, e.BBox.E, e.BBox.N)
		} else {
			lg, _ := wkb.Decode(e.Geometry)
			r, _ := lg.Bounds() // a point, or a polygon that is its box
			boxes = []wkb.Rect{r}
		}
		return b2i(spatial.IntersectsRects(g, boxes))
	}
	if e.Property == "geometry" { // IS NULL
		return b2i(f.Geometry == nil)
	}
	v := f.Values[mapcommons.AttrIndex(testAttrs, e.Property)]
	if e.Op == mapcommons.ExprIsNull {
		return b2i(v == nil)
	}
	if v == nil {
		return 2
	}
	// compare orders v with a literal.
	compare := func(l mapcommons.Literal) int {
		switch x := v.(type) {
		case int64:
			return cmpF(float64(x), l.Num)
		case float64:
			return cmpF(x, l.Num)
		case bool:
			return cmpF(float64(b2i(x)), float64(b2i(l.Bool)))
		case string:
			return strings.Compare(x, l.Str)
		}
		t.Fatalf("value %T", v)
		return 0
	}
	switch e.Op {
	case mapcommons.ExprEq:
		return b2i(compare(e.Values[0]) == 0)
	case mapcommons.ExprNe:
		return b2i(compare(e.Values[0]) != 0)
	case mapcommons.ExprLt:
		return b2i(compare(e.Values[0]) < 0)
	case mapcommons.ExprLe:
		return b2i(compare(e.Values[0]) <= 0)
	case mapcommons.ExprGt:
		return b2i(compare(e.Values[0]) > 0)
	case mapcommons.ExprGe:
		return b2i(compare(e.Values[0]) >= 0)
	case mapcommons.ExprBetween:
		return b2i(compare(e.Values[0]) >= 0 && compare(e.Values[1]) <= 0)
	case mapcommons.ExprIn:
		for _, l := range e.Values {
			if compare(l) == 0 {
				return 1
			}
		}
		return 0
	case mapcommons.ExprLike:
		return b2i(likeRegexp(e.Values[0].Str).MatchString(v.(string)))
	}
	t.Fatalf("op %q", e.Op)
	return 0
}

// likeRegexp translates a LIKE pattern into a regular expression.
func likeRegexp(pat string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; {
		case c == '%':
			b.WriteString(`.*`)
		case c == '_':
			b.WriteString(`.`)
		case c == '\\' && i+1 < len(rs):
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestWhereOracle compares the engine's answers to Where with the oracle's
// over random features and expressions, through the scan, the index (a
// top-level box), the sorted path and Groups, in mixed and point-only
// segments, alone and with a bbox parameter.
func TestWhereOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 31))
	for _, onlyPoints := range []bool{false, true} {
		feats := whereFeatures(r, 3000, onlyPoints)
		s, _ := write(t, testAttrs, feats)
		for i := 0; i < raceCut(400); i++ {
			e := randomExpr(r, 3)
			if r.IntN(4) == 0 { // a top-level box, served by the index
				box := randomExpr(r, 0)
				for box.Op != mapcommons.ExprIntersects {
					box = randomExpr(r, 0)
				}
				e = &mapcommons.Expr{Op: mapcommons.ExprAnd, Args: []*mapcommons.Expr{box, e}}
			}
			q := &mapcommons.FeatureQuery{Limit: -1, Where: e}
			want := []int{}
			for pos := range feats {
				if oracle(t, e, &feats[pos]) != 1 {
					continue
				}
				if i%5 == 1 { // with a bbox parameter as well
					if g, err := wkb.Decode(feats[pos].Geometry); err != nil || g.IsEmpty() || !spatial.IntersectsRects(g, []wkb.Rect{{MinX: -10, MinY: -10, MaxX: 5, MaxY: 5}}) {
						continue
					}
				}
				want = append(want, pos)
			}
			if i%5 == 1 {
				q.BBox = &mapcommons.BBox{W: -10, S: -10, E: 5, N: 5}
			}
			if i%3 == 2 {
				q.Sort = "n" // through matches and the sort
			}
			got := []int{}
			if err := s.Query(context.Background(), q, func(f *mapcommons.Feature) error {
				got = append(got, int(f.Position))
				return nil
			}); err != nil {
				t.Fatalf("%s: %v", exprString(e), err)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("points only %v, %s: %d features, want %d (%v… vs %v…)", onlyPoints, exprString(e), len(got), len(want), head(got), head(want))
			}
			q.Sort = ""
			gs, err := s.Groups(context.Background(), &mapcommons.FeatureQuery{Limit: -1, Where: e, BBox: q.BBox, Aggregates: []mapcommons.Aggregate{{Name: "n", Calc: mapcommons.CalcMin}}})
			if err != nil || len(gs) != 1 || gs[0].Count != int64(len(want)) {
				t.Fatalf("%s: groups %+v, %v; want a count of %d", exprString(e), gs, err, len(want))
			}
		}
	}
}

func head(xs []int) []int { return xs[:min(len(xs), 8)] }

// exprString renders an expression for failure messages.
func exprString(e *mapcommons.Expr) string {
	switch e.Op {
	case mapcommons.ExprAnd, mapcommons.ExprOr:
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			parts[i] = exprString(a)
		}
		return "(" + strings.Join(parts, " "+strings.ToUpper(e.Op)+" ") + ")"
	case mapcommons.ExprNot:
		return "NOT " + exprString(e.Args[0])
	case mapcommons.ExprIntersects:
		if e.BBox != nil {
			return fmt.Sprintf("S_INTERSECTS(%s, BBOX(%v,%v,%v,%v))", e.Property, e.BBox.W, e.BBox.S, e.BBox.E, e.BBox.N)
		}
		w, _ := wkb.ToWKT(nil, e.Geometry)
		return fmt.Sprintf("S_INTERSECTS(%s, %s)", e.Property, w)
	}
	return fmt.Sprintf("%s %s %v", e.Property, e.Op, e.Values)
}

// TestWhereNullLogic pins the three-valued logic on a feature whose x is
// null: neither x = 1 nor NOT (x = 1) selects it; IS NULL does, and an OR
// with a true side does.
func TestWhereNullLogic(t *testing.T) {
	feats := []mapcommons.Feature{
		{Values: []any{int64(1), nil, "a", true, nil}, Geometry: wkb.AppendPoint(nil, 1, 1)},
		{Values: []any{int64(2), 1.0, "b", false, nil}},
	}
	s, _ := write(t, testAttrs, feats)
	eq := &mapcommons.Expr{Op: mapcommons.ExprEq, Property: "x", Values: []mapcommons.Literal{{Kind: mapcommons.LitNumber, Num: 1}}}
	not := func(e *mapcommons.Expr) *mapcommons.Expr {
		return &mapcommons.Expr{Op: mapcommons.ExprNot, Args: []*mapcommons.Expr{e}}
	}
	box := &mapcommons.Expr{Op: mapcommons.ExprIntersects, Property: "geometry", BBox: &mapcommons.BBox{W: 0, S: 0, E: 2, N: 2}}
	isNull := &mapcommons.Expr{Op: mapcommons.ExprIsNull, Property: "x"}
	nTrue := &mapcommons.Expr{Op: mapcommons.ExprEq, Property: "n", Values: []mapcommons.Literal{{Kind: mapcommons.LitNumber, Num: 1}}}
	for _, c := range []struct {
		e    *mapcommons.Expr
		want []int64
	}{
		{eq, []int64{1}},
		{not(eq), []int64{}},
		{not(not(eq)), []int64{1}},
		{isNull, []int64{0}},
		{not(isNull), []int64{1}},
		{&mapcommons.Expr{Op: mapcommons.ExprOr, Args: []*mapcommons.Expr{eq, nTrue}}, []int64{0, 1}},
		{&mapcommons.Expr{Op: mapcommons.ExprAnd, Args: []*mapcommons.Expr{not(eq), nTrue}}, []int64{}},
		{not(box), []int64{}}, // feature 1 has no geometry: unknown
		{&mapcommons.Expr{Op: mapcommons.ExprOr, Args: []*mapcommons.Expr{box, eq}}, []int64{0, 1}},
	} {
		got := []int64{}
		err := s.Query(context.Background(), &mapcommons.FeatureQuery{Limit: -1, Where: c.e}, func(f *mapcommons.Feature) error {
			got = append(got, f.Position)
			return nil
		})
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", exprString(c.e), got, err, c.want)
		}
	}
}

// TestWhereAllocs: evaluating attribute conditions and boxes on points
// allocates nothing per row.
func TestWhereAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s, _ := write(t, testAttrs, whereFeatures(r, 5000, true))
	box := &mapcommons.Expr{Op: mapcommons.ExprIntersects, Property: "geometry", BBox: &mapcommons.BBox{W: -5, S: -5, E: 5, N: 5}}
	e := &mapcommons.Expr{Op: mapcommons.ExprOr, Args: []*mapcommons.Expr{
		{Op: mapcommons.ExprNot, Args: []*mapcommons.Expr{box}},
		{Op: mapcommons.ExprLike, Property: "s", Values: []mapcommons.Literal{{Kind: mapcommons.LitString, Str: "%b%"}}},
		{Op: mapcommons.ExprIn, Property: "s", Values: []mapcommons.Literal{{Kind: mapcommons.LitString, Str: "a"}}},
		{Op: mapcommons.ExprBetween, Property: "x", Values: []mapcommons.Literal{{Kind: mapcommons.LitNumber, Num: -1}, {Kind: mapcommons.LitNumber, Num: 1}}},
		{Op: mapcommons.ExprIn, Property: "n", Values: []mapcommons.Literal{{Kind: mapcommons.LitNumber, Num: 1}, {Kind: mapcommons.LitNumber, Num: 2}, {Kind: mapcommons.LitNumber, Num: 3}, {Kind: mapcommons.LitNumber, Num: 4}, {Kind: mapcommons.LitNumber, Num: 5}, {Kind: mapcommons.LitNumber, Num: 6}, {Kind: mapcommons.LitNumber, Num: 7}, {Kind: mapcommons.LitNumber, Num: 8}, {Kind: mapcommons.LitNumber, Num: 9}}},
	}}
	p, err := s.compile(&mapcommons.FeatureQuery{Limit: -1, Where: e})
	if err != nil {
		t.Fatal(err)
	}
	matched := 0
	allocs := testing.AllocsPerRun(5, func() {
		matched = 0
		for pos := 0; pos < s.Len(); pos++ {
			if p.matchValues(pos) {
				matched++
			}
		}
	})
	if allocs != 0 || matched == 0 || matched == s.Len() {
		t.Fatalf("%v allocations per scan of %d rows (%d matched)", allocs, s.Len(), matched)
	}
}

// BenchmarkWhere measures "n = 1 OR x > 3" over 1M rows, per row.
func BenchmarkWhere(b *testing.B) {
	dir := b.TempDir()
	w, err := NewWriter(dir, testAttrs)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	const rows = 1 << 20
	for i := 0; i < rows; i++ {
		f := mapcommons.Feature{Values: []any{int64(r.IntN(100)), r.Float64() * 10, "s", true, "d"}, Geometry: wkb.AppendPoint(nil, r.Float64()*360-180, r.Float64()*180-90)}
		if err := w.Add(&f); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := w.Finish(dir + "/x.seg"); err != nil {
		b.Fatal(err)
	}
	s, err := Open(dir + "/x.seg")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	e := &mapcommons.Expr{Op: mapcommons.ExprOr, Args: []*mapcommons.Expr{
		{Op: mapcommons.ExprEq, Property: "n", Values: []mapcommons.Literal{{Kind: mapcommons.LitNumber, Num: 1}}},
		{Op: mapcommons.ExprGt, Property: "x", Values: []mapcommons.Literal{{Kind: mapcommons.LitNumber, Num: 3}}},
	}}
	// Scan reads the matches; Count also groups them (a count and a max).
	b.Run("Scan", func(b *testing.B) {
		p, err := s.compile(&mapcommons.FeatureQuery{Limit: -1, Where: e})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			n := 0
			if err := p.matches(b.Context(), false, func(int) bool { n++; return true }); err != nil || n == 0 {
				b.Fatal(n, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
	})
	b.Run("Count", func(b *testing.B) {
		q := &mapcommons.FeatureQuery{Limit: -1, Where: e, Aggregates: []mapcommons.Aggregate{{Name: "n", Calc: mapcommons.CalcMax}}}
		for b.Loop() {
			if _, err := s.Groups(b.Context(), q); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
	})
}

// TestWhereGeometryLiterals pins S_INTERSECTS with polygon, line and point
// literals on hand-made features: inside, outside, on an edge, crossing,
// containing the literal.
func TestWhereGeometryLiterals(t *testing.T) {
	vals := []any{int64(0), 0.0, "", true, ""}
	feats := []mapcommons.Feature{
		{Values: vals, Geometry: wkb.AppendPoint(nil, 1, 1)},                                                          // 0: inside the triangle
		{Values: vals, Geometry: wkb.AppendPoint(nil, 3, 3)},                                                          // 1: outside it, beyond its hypotenuse
		{Values: vals, Geometry: wkb.AppendPoint(nil, 2, 0)},                                                          // 2: on its base
		{Values: vals, Geometry: wkb.AppendLineString(nil, []float64{-1, 1, 5, 1})},                                   // 3: crossing it
		{Values: vals, Geometry: wkb.AppendPolygon(nil, [][]float64{{-10, -10, 10, -10, 10, 10, -10, 10, -10, -10}})}, // 4: containing it
		{Values: vals, Geometry: wkb.AppendLineString(nil, []float64{3, 3, 6, 0.5})},                                  // 5: outside, near
		{Values: vals, Geometry: wkb.AppendPoint(nil, 20, 20)},                                                        // 6: far
		{Values: vals, Geometry: wkb.AppendLineString(nil, []float64{18, 22, 22, 18})},                                // 7: through (20, 20)
	}
	s, _ := write(t, testAttrs, feats)
	triangle := wkb.AppendPolygon(nil, [][]float64{{0, 0, 4, 0, 0, 4, 0, 0}})
	for _, c := range []struct {
		name string
		g    []byte
		want []int64
	}{
		{"triangle", triangle, []int64{0, 2, 3, 4}},
		{"line", wkb.AppendLineString(nil, []float64{1, -1, 1, 5}), []int64{0, 3, 4}},
		{"point", wkb.AppendPoint(nil, 20, 20), []int64{6, 7}},
		{"point on an edge", wkb.AppendPoint(nil, 10, 0), []int64{4}},
		{"multipoint", wkb.AppendMultiPoint(nil, []float64{1, 1, 3, 3}), []int64{0, 1, 3, 4, 5}},
	} {
		e := &mapcommons.Expr{Op: mapcommons.ExprIntersects, Property: "geometry", Geometry: c.g}
		for _, where := range []*mapcommons.Expr{e, {Op: mapcommons.ExprOr, Args: []*mapcommons.Expr{e, e}}} { // through the index, and per row
			got := []int64{}
			err := s.Query(context.Background(), &mapcommons.FeatureQuery{Limit: -1, Where: where}, func(f *mapcommons.Feature) error {
				got = append(got, f.Position)
				return nil
			})
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("%s (%s): %v, %v; want %v", c.name, where.Op, got, err, c.want)
			}
		}
	}
}
