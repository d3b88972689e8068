package storetest

// The query oracle's Where (CQL2) half: random expressions over the
// oracle's attributes, of every operation a Where holds (comparisons,
// BETWEEN, IN, LIKE, IS NULL, NOT, AND, OR, BBOX, the spatial functions),
// drawn so that the
// stores' planners meet what they serve through indexes (conjunctions of
// comparisons, ORs of equalities of one attribute, LIKE of a prefix) and
// what they do not; and their brute-force evaluation in SQL's
// three-valued logic, written here from the rules of mapcommons.Expr.

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/peterstace/simplefeatures/geom"

	"mapcommons"
	"mapcommons/feature"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// oracleTri is a truth value of three-valued logic.
type oracleTri int

const (
	oFalse oracleTri = iota
	oTrue
	oUnknown
)

// oracleLiteral draws a literal that fits attribute a.
func oracleLiteral(r *rand.Rand, a mapcommons.Attribute) mapcommons.Literal {
	switch a.Type {
	case mapcommons.AttrInteger:
		v := float64(r.IntN(41) - 20)
		if r.IntN(5) == 0 {
			v += 0.5
		}
		return mapcommons.Literal{Kind: mapcommons.LitNumber, Num: v}
	case mapcommons.AttrFloat:
		return mapcommons.Literal{Kind: mapcommons.LitNumber, Num: math.Round((r.Float64()*200-100)*4) / 4}
	case mapcommons.AttrBoolean:
		return mapcommons.Literal{Kind: mapcommons.LitBoolean, Bool: r.IntN(2) == 0}
	case mapcommons.AttrDate:
		kind := []string{mapcommons.LitDate, mapcommons.LitString}[r.IntN(2)]
		return mapcommons.Literal{Kind: kind, Str: fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28))}
	}
	return mapcommons.Literal{Kind: mapcommons.LitString, Str: oracleWords[r.IntN(len(oracleWords))]}
}

// oracleLikePattern draws a LIKE pattern from the oracle's words: a
// prefix and '%', a word whole, '_' in it, '%' in the middle or first.
func oracleLikePattern(r *rand.Rand) string {
	w := oracleWords[r.IntN(len(oracleWords))]
	cut := 0
	if n := utf8.RuneCountInString(w); n > 0 {
		cut = len(string([]rune(w)[:r.IntN(n+1)]))
	}
	switch r.IntN(6) {
	case 0:
		return w
	case 1:
		return w[:cut] + "%%"
	case 2:
		return "%" + w[cut:]
	case 3:
		return w[:cut] + "_%"
	case 4:
		return w[:cut] + "%" + w[cut:]
	}
	return w[:cut] + "%"
}

// oracleLeaf draws one condition on one attribute.
func oracleLeaf(r *rand.Rand) *mapcommons.Expr {
	a := oracleAttrs[r.IntN(len(oracleAttrs))]
	e := &mapcommons.Expr{Property: a.Name}
	if r.IntN(12) == 0 {
		e.Op = mapcommons.ExprIsNull
		return e
	}
	ops := []string{mapcommons.ExprEq, mapcommons.ExprNe, mapcommons.ExprLt, mapcommons.ExprLe, mapcommons.ExprGt,
		mapcommons.ExprGe, mapcommons.ExprBetween, mapcommons.ExprIn}
	if a.Type == mapcommons.AttrString || a.Type == mapcommons.AttrDate {
		ops = append(ops, mapcommons.ExprLike, mapcommons.ExprLike)
	}
	e.Op = ops[r.IntN(len(ops))]
	switch e.Op {
	case mapcommons.ExprLike:
		if a.Type == mapcommons.AttrDate {
			return &mapcommons.Expr{Op: mapcommons.ExprLike, Property: a.Name, Values: []mapcommons.Literal{{Kind: mapcommons.LitString, Str: fmt.Sprintf("2026-%02d%%", 1+r.IntN(12))}}}
		}
		e.Values = []mapcommons.Literal{{Kind: mapcommons.LitString, Str: oracleLikePattern(r)}}
	case mapcommons.ExprBetween:
		lo, hi := oracleLiteral(r, a), oracleLiteral(r, a)
		e.Values = []mapcommons.Literal{lo, hi}
	case mapcommons.ExprIn:
		for k := 1 + r.IntN(4); k > 0; k-- {
			e.Values = append(e.Values, oracleLiteral(r, a))
		}
	default:
		e.Values = []mapcommons.Literal{oracleLiteral(r, a)}
	}
	return e
}

// oracleSpatial draws a spatial function of the geometry (S_WITHIN,
// S_TOUCHES …) with a literal wide enough to hold features: a box with a
// hole, a line, points, a BBOX (across the antimeridian at times).
func oracleSpatial(r *rand.Rand) *mapcommons.Expr {
	// The selective ones less often, so that queries still select features.
	ops := append(slices.Clone(mapcommons.SpatialOps), mapcommons.ExprDisjoint, mapcommons.ExprDisjoint, mapcommons.ExprWithin, mapcommons.ExprIntersects)
	e := &mapcommons.Expr{Op: ops[r.IntN(len(ops))], Property: "geometry"}
	w, h := 40+r.Float64()*80, 20+r.Float64()*40
	x, y := -179+r.Float64()*(358-w), -85+r.Float64()*(170-h)
	switch r.IntN(4) {
	case 0:
		shell := []float64{x, y, x + w, y, x + w, y + h, x, y + h, x, y}
		hole := []float64{x + w/4, y + h/4, x + w/4, y + 3*h/4, x + 3*w/4, y + 3*h/4, x + 3*w/4, y + h/4, x + w/4, y + h/4}
		e.Geometry = wkb.AppendPolygon(nil, [][]float64{shell, hole})
	case 1:
		e.Geometry = wkb.AppendLineString(nil, []float64{x, y, x + w, y + h, x + w, y})
	case 2:
		e.Geometry = wkb.AppendMultiPoint(nil, []float64{x, y, x + w, y + h})
	default:
		b := &mapcommons.BBox{W: x, S: y, E: x + w, N: y + h}
		if r.IntN(3) == 0 {
			b.W, b.E = 180-w/2, -180+w/2
		}
		e.BBox = b
	}
	return e
}

// oracleRelate is op of a feature's geometry and a literal, by the
// simplefeatures library's own predicates (not the stores' evaluator).
func oracleRelate(op string, g wkb.Geom, lit geom.Geometry) bool {
	a, err := geom.UnmarshalWKB(g.AppendWKB(nil), geom.NoValidate{})
	if err != nil {
		panic(err)
	}
	var ok bool
	switch op {
	case mapcommons.ExprIntersects:
		ok = geom.Intersects(a, lit)
	case mapcommons.ExprDisjoint:
		ok, err = geom.Disjoint(a, lit)
	case mapcommons.ExprEquals:
		ok, err = geom.Equals(a, lit)
	case mapcommons.ExprTouches:
		ok, err = geom.Touches(a, lit)
	case mapcommons.ExprCrosses:
		ok, err = geom.Crosses(a, lit)
	case mapcommons.ExprWithin:
		ok, err = geom.Within(a, lit)
	case mapcommons.ExprContains:
		ok, err = geom.Contains(a, lit)
	case mapcommons.ExprOverlaps:
		ok, err = geom.Overlaps(a, lit)
	}
	if err != nil {
		panic(err)
	}
	return ok
}

// oracleTerm draws one conjunct of a Where.
func oracleTerm(r *rand.Rand, depth int) *mapcommons.Expr {
	switch k := r.IntN(22); {
	case k >= 20:
		return oracleSpatial(r)
	case k < 11 || depth > 2:
		return oracleLeaf(r)
	case k < 14: // equalities of one attribute
		a := oracleAttrs[r.IntN(len(oracleAttrs))]
		or := &mapcommons.Expr{Op: mapcommons.ExprOr}
		for n := 2 + r.IntN(2); n > 0; n-- {
			or.Args = append(or.Args, &mapcommons.Expr{Op: mapcommons.ExprEq, Property: a.Name, Values: []mapcommons.Literal{oracleLiteral(r, a)}})
		}
		return or
	case k < 16:
		return &mapcommons.Expr{Op: mapcommons.ExprOr, Args: []*mapcommons.Expr{oracleTerm(r, depth+1), oracleTerm(r, depth+1)}}
	case k < 18:
		return &mapcommons.Expr{Op: mapcommons.ExprNot, Args: []*mapcommons.Expr{oracleTerm(r, depth+1)}}
	case k < 19:
		w, s := oracleLon(r), oracleLat(r)
		e, n := w+r.Float64()*120, math.Min(90, s+r.Float64()*70)
		if e > 180 {
			e -= 360
		}
		return &mapcommons.Expr{Op: mapcommons.ExprIntersects, Property: "geometry", BBox: &mapcommons.BBox{W: w, S: s, E: e, N: n}}
	}
	return &mapcommons.Expr{Op: mapcommons.ExprIsNull, Property: "geometry"}
}

// oracleWhere draws a Where: one to three conjuncts.
func oracleWhere(r *rand.Rand) *mapcommons.Expr {
	n := 1 + r.IntN(3)
	if n == 1 {
		return oracleTerm(r, 0)
	}
	e := &mapcommons.Expr{Op: mapcommons.ExprAnd}
	for ; n > 0; n-- {
		e.Args = append(e.Args, oracleTerm(r, 0))
	}
	return e
}

// oracleEval evaluates e for feature f.
func oracleEval(e *mapcommons.Expr, f *oracleFeature) oracleTri {
	switch e.Op {
	case mapcommons.ExprTrue:
		return oTrue
	case mapcommons.ExprFalse:
		return oFalse
	case mapcommons.ExprAnd:
		out := oTrue
		for _, a := range e.Args {
			switch oracleEval(a, f) {
			case oFalse:
				return oFalse
			case oUnknown:
				out = oUnknown
			}
		}
		return out
	case mapcommons.ExprOr:
		out := oFalse
		for _, a := range e.Args {
			switch oracleEval(a, f) {
			case oTrue:
				return oTrue
			case oUnknown:
				out = oUnknown
			}
		}
		return out
	case mapcommons.ExprNot:
		switch oracleEval(e.Args[0], f) {
		case oTrue:
			return oFalse
		case oFalse:
			return oTrue
		}
		return oUnknown
	case mapcommons.ExprIntersects, mapcommons.ExprDisjoint, mapcommons.ExprEquals, mapcommons.ExprTouches,
		mapcommons.ExprCrosses, mapcommons.ExprWithin, mapcommons.ExprContains, mapcommons.ExprOverlaps:
		if f.geom == nil {
			return oUnknown
		}
		if b := e.BBox; b != nil && e.Op == mapcommons.ExprIntersects {
			return oTruth(spatial.IntersectsRects(*f.geom, spatial.BBoxRects(b.W, b.S, b.E, b.N)))
		}
		var lit geom.Geometry
		if e.BBox != nil {
			lit = feature.BBoxGeometry(e.BBox)
		} else {
			var err error
			if lit, err = geom.UnmarshalWKB(e.Geometry, geom.NoValidate{}); err != nil {
				panic(err)
			}
		}
		return oTruth(oracleRelate(e.Op, *f.geom, lit))
	}
	i := mapcommons.AttrIndex(oracleAttrs, e.Property)
	if i < 0 { // the geometry IS NULL
		return oTruth(f.geom == nil)
	}
	v := f.values[i]
	if e.Op == mapcommons.ExprIsNull {
		return oTruth(v == nil)
	}
	if v == nil {
		return oUnknown
	}
	// c compares the value with literal k: numbers as float64 (NaN below
	// every number), booleans as 0 and 1, strings and dates byte by byte.
	c := func(k int) int {
		l := e.Values[k]
		switch x := v.(type) {
		case int64:
			return cmp.Compare(float64(x), l.Num)
		case float64:
			return cmp.Compare(x, l.Num)
		case bool:
			return cmp.Compare(boolNum(x), boolNum(l.Bool))
		}
		return bytes.Compare([]byte(v.(string)), []byte(e.Values[k].Str))
	}
	switch e.Op {
	case mapcommons.ExprEq:
		return oTruth(c(0) == 0)
	case mapcommons.ExprNe:
		return oTruth(c(0) != 0)
	case mapcommons.ExprLt:
		return oTruth(c(0) < 0)
	case mapcommons.ExprLe:
		return oTruth(c(0) <= 0)
	case mapcommons.ExprGt:
		return oTruth(c(0) > 0)
	case mapcommons.ExprGe:
		return oTruth(c(0) >= 0)
	case mapcommons.ExprBetween:
		if x, ok := v.(float64); ok && math.IsNaN(x) {
			return oFalse // NaN is between nothing
		}
		return oTruth(c(0) >= 0 && c(1) <= 0)
	case mapcommons.ExprIn:
		if x, ok := v.(float64); ok && math.IsNaN(x) {
			return oFalse
		}
		for k := range e.Values {
			if c(k) == 0 {
				return oTrue
			}
		}
		return oFalse
	case mapcommons.ExprLike:
		return oTruth(oracleLike(e.Values[0].Str, v.(string)))
	}
	panic("oracle: operation " + e.Op)
}

func oTruth(b bool) oracleTri {
	if b {
		return oTrue
	}
	return oFalse
}

// oracleLike matches s against a LIKE pattern by backtracking: '%' any
// run of characters, '_' one character (a byte of invalid UTF-8 being
// one), '\' makes the next character literal; the rest byte by byte.
func oracleLike(pat, s string) bool {
	if pat == "" {
		return s == ""
	}
	switch c := pat[0]; {
	case c == '%':
		for k := 0; ; {
			if oracleLike(pat[1:], s[k:]) {
				return true
			}
			if k == len(s) {
				return false
			}
			_, size := utf8.DecodeRuneInString(s[k:])
			k += size
		}
	case c == '_':
		if s == "" {
			return false
		}
		_, size := utf8.DecodeRuneInString(s)
		return oracleLike(pat[1:], s[size:])
	case c == '\\' && len(pat) > 1:
		pat = pat[1:]
	}
	_, size := utf8.DecodeRuneInString(pat)
	return strings.HasPrefix(s, pat[:size]) && oracleLike(pat[size:], s[size:])
}

// describeWhere is a Where in a CQL2-like text, for failure messages.
func describeWhere(e *mapcommons.Expr) string {
	switch e.Op {
	case mapcommons.ExprAnd, mapcommons.ExprOr:
		var parts []string
		for _, a := range e.Args {
			parts = append(parts, describeWhere(a))
		}
		return "(" + strings.Join(parts, " "+strings.ToUpper(e.Op)+" ") + ")"
	case mapcommons.ExprNot:
		return "NOT " + describeWhere(e.Args[0])
	case mapcommons.ExprIntersects, mapcommons.ExprDisjoint, mapcommons.ExprEquals, mapcommons.ExprTouches,
		mapcommons.ExprCrosses, mapcommons.ExprWithin, mapcommons.ExprContains, mapcommons.ExprOverlaps:
		if e.BBox == nil {
			w, _ := wkb.ToWKT(nil, e.Geometry)
			return fmt.Sprintf("%s(geometry, %s)", strings.ToUpper(e.Op), w)
		}
		return fmt.Sprintf("%s(geometry, BBOX(%v, %v, %v, %v))", strings.ToUpper(e.Op), e.BBox.W, e.BBox.S, e.BBox.E, e.BBox.N)
	case mapcommons.ExprIsNull:
		return e.Property + " IS NULL"
	}
	var vs []string
	for _, v := range e.Values {
		vs = append(vs, v.String())
	}
	return fmt.Sprintf("%s %s %s", e.Property, strings.ToUpper(e.Op), strings.Join(vs, ", "))
}
