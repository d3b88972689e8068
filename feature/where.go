// where.go: FeatureQuery.Where compiled into a tree of tests over column
// indexes (Node), evaluated per row in SQL's three-valued logic over any
// store's cells (Cells).
package feature

import (
	"bytes"
	"cmp"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// tri is a truth value of three-valued logic.
type tri int8

const (
	triFalse tri = iota
	triTrue
	triUnknown // a null took part
)

// Kinds of Node.
const (
	wAnd = iota
	wOr
	wNot
	wIsNull
	wCompare // numbers (numeric and boolean columns) or strings
	wBetween
	wIn
	wLike
	wBBox // the geometry meets boxes
	wGeom // the geometry meets a geometry literal
	wTrue
	wFalse
	wNoGeometry // the geometry IS NULL
	wRelate     // a DE-9IM predicate of the geometry and a literal (relate.go)
	wOperands   // a comparison or between of operands (properties, arithmetic, functions)
	wLikeCalc   // a function's value LIKE a pattern
	wArrays     // an array function of two arrays (properties or literals)
)

// SetMin is the length of an "in" list above which it is matched through
// a set rather than compared with each value (below it comparing is
// cheaper than hashing).
const SetMin = 8

// Comparison operators of wCompare.
const (
	cmpEq = iota
	cmpNe
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

var cmpOps = map[string]int{
	mapcommons.ExprEq: cmpEq, mapcommons.ExprNe: cmpNe, mapcommons.ExprLt: cmpLt,
	mapcommons.ExprLe: cmpLe, mapcommons.ExprGt: cmpGt, mapcommons.ExprGe: cmpGe,
}

// Node is a compiled expression, or one operation of it. Literals are
// converted once to the column's form: numbers (booleans as 0 and 1) or
// bytes.
type Node struct {
	kind   int
	col    int
	isStr  bool // the column holds strings (string, date)
	isTime bool // … dates and timestamps: compared by mapcommons.CompareTimes
	isBool bool
	op     int
	nums   []float64 // compare: 1; between: 2; in: n
	strs   [][]byte
	// An "in" list longer than setMin is matched through a set.
	numSet map[float64]struct{}
	strSet map[string]struct{}
	like   []likePart
	rects  []wkb.Rect      // wBBox: the box; wGeom: the literal's points
	nears  []*spatial.Near // wGeom: the literal's lines and polygons, planar
	rel    *relation       // wRelate
	kids   []Node
	// caseI, accentI: the value is folded (mapcommons.AppendFold) before
	// it is tested (CASEI, ACCENTI of the property).
	caseI, accentI bool
	calcs          []calc      // wOperands: the two sides, or the value and the ends of a between; wLikeCalc: the value
	arrays         []arraySide // wArrays: the two arrays
	arrayOp        string
}

// arraySide is one array of an array function: a column's JSON arrays,
// or a literal's elements (canonical, mapcommons.ArrayElements).
type arraySide struct {
	col   int // -1 for a literal
	elems []string
}

// elements are the side's elements for the feature c reads; false when
// the value is null or not an array.
func (a *arraySide) elements(c Cells) ([]string, bool) {
	if a.col < 0 {
		return a.elems, true
	}
	if c.Null(a.col) {
		return nil, false
	}
	return mapcommons.ArrayOf(c.Str(a.col))
}

// calc is a compiled mapcommons.Operand: a column, a literal or an
// arithmetic operator of two calcs.
type calc struct {
	op    string // mapcommons.OperandProperty, OperandLiteral, OperandFunction or an arithmetic operator
	col   int
	isStr bool // a string or date column or literal, or a function whose result is a string
	// isTime: a date column, or a date or timestamp literal (compared by
	// mapcommons.CompareTimes)
	isTime bool
	num    float64
	str    []byte
	fn     *mapcommons.Function
	args   []calc
}

func compileCalc(attrs []mapcommons.Attribute, o *mapcommons.Operand) calc {
	k := calc{op: o.Op}
	switch o.Op {
	case mapcommons.OperandProperty:
		k.col = mapcommons.AttrIndex(attrs, o.Property)
		t := attrs[k.col].Type
		k.isStr = t == mapcommons.AttrString || t == mapcommons.AttrDate
		k.isTime = t == mapcommons.AttrDate
	case mapcommons.OperandLiteral:
		switch l := o.Literal; l.Kind {
		case mapcommons.LitNumber:
			k.num = l.Num
		case mapcommons.LitBoolean:
			if l.Bool {
				k.num = 1
			}
		default:
			k.isStr, k.str = true, []byte(l.Str)
			k.isTime = l.Kind == mapcommons.LitDate || l.Kind == mapcommons.LitTimestamp
		}
	case mapcommons.OperandFunction:
		k.fn = mapcommons.LookupFunction(o.Function)
		k.isStr = k.fn.Returns == mapcommons.LitString
		fallthrough
	default:
		for _, a := range o.Args {
			k.args = append(k.args, compileCalc(attrs, a))
		}
	}
	return k
}

// call is the calc's function of its argument for the feature c reads:
// its text or its number; false for null.
func (k *calc) call(c Cells) (text []byte, num float64, ok bool) {
	a := &k.args[0]
	if a.isStr {
		s, ok := a.text(c)
		if !ok {
			return nil, 0, false
		}
		text, num = k.fn.CallString(s)
		return text, num, true
	}
	x, ok := a.number(c)
	if !ok {
		return nil, 0, false
	}
	num, ok = k.fn.CallNumber(x)
	return nil, num, ok
}

// number is the calc's number for the feature c reads; false for null.
func (k *calc) number(c Cells) (float64, bool) {
	switch k.op {
	case mapcommons.OperandProperty:
		if c.Null(k.col) {
			return 0, false
		}
		return c.Num(k.col), true
	case mapcommons.OperandLiteral:
		return k.num, true
	case mapcommons.OperandFunction:
		_, num, ok := k.call(c)
		return num, ok
	}
	a, ok := k.args[0].number(c)
	if !ok {
		return 0, false
	}
	b, ok := k.args[1].number(c)
	if !ok {
		return 0, false
	}
	return mapcommons.Arithmetic(k.op, a, b)
}

// text is the calc's text (a string column or literal); false for null.
func (k *calc) text(c Cells) ([]byte, bool) {
	switch k.op {
	case mapcommons.OperandLiteral:
		return k.str, true
	case mapcommons.OperandFunction:
		text, _, ok := k.call(c)
		return text, ok
	}
	if c.Null(k.col) {
		return nil, false
	}
	return c.Str(k.col), true
}

// compare compares calcs a and b; false when one is null.
func compareCalcs(a, b *calc, c Cells) (int, bool) {
	if a.isStr {
		x, ok := a.text(c)
		if !ok {
			return 0, false
		}
		y, ok := b.text(c)
		if !ok {
			return 0, false
		}
		if a.isTime || b.isTime {
			return mapcommons.CompareTimes(x, y), true
		}
		return bytes.Compare(x, y), true
	}
	x, ok := a.number(c)
	if !ok {
		return 0, false
	}
	y, ok := b.number(c)
	if !ok {
		return 0, false
	}
	return cmp.Compare(x, y), true
}

// matchOperands evaluates a wOperands node.
func (n *Node) matchOperands(c Cells) tri {
	v := &n.calcs[0]
	if len(n.calcs) == 3 { // between
		lo, ok1 := compareCalcs(v, &n.calcs[1], c)
		hi, ok2 := compareCalcs(v, &n.calcs[2], c)
		switch {
		case ok1 && lo < 0, ok2 && hi > 0:
			return triFalse
		case !ok1 || !ok2:
			return triUnknown
		}
		return triTrue
	}
	r, ok := compareCalcs(v, &n.calcs[1], c)
	if !ok {
		return triUnknown
	}
	return truth(compared(n.op, r))
}

// Compile compiles a validated expression (mapcommons.Expr.Validate)
// against attributes attrs.
func Compile(attrs []mapcommons.Attribute, e *mapcommons.Expr) Node {
	switch e.Op {
	case mapcommons.ExprTrue:
		return Node{kind: wTrue}
	case mapcommons.ExprFalse:
		return Node{kind: wFalse}
	case mapcommons.ExprAnd, mapcommons.ExprOr, mapcommons.ExprNot:
		n := Node{kind: map[string]int{mapcommons.ExprAnd: wAnd, mapcommons.ExprOr: wOr, mapcommons.ExprNot: wNot}[e.Op]}
		for _, a := range e.Args {
			n.kids = append(n.kids, Compile(attrs, a))
		}
		return n
	case mapcommons.ExprIntersects:
		if e.BBox != nil {
			return Node{kind: wBBox, rects: spatial.BBoxRects(e.BBox.W, e.BBox.S, e.BBox.E, e.BBox.N)}
		}
		if hasHoles(e.Geometry) {
			return Node{kind: wRelate, rel: compileRelation(e)}
		}
		rects, nears := literalParts(e.Geometry)
		return Node{kind: wGeom, rects: rects, nears: nears}
	case mapcommons.ExprDisjoint:
		// NOT S_INTERSECTS, by the same test, so that the two agree on
		// every geometry (invalid ones too); unknown without one.
		in := *e
		in.Op = mapcommons.ExprIntersects
		return Node{kind: wNot, kids: []Node{Compile(attrs, &in)}}
	case mapcommons.ExprEquals, mapcommons.ExprTouches, mapcommons.ExprCrosses,
		mapcommons.ExprWithin, mapcommons.ExprContains, mapcommons.ExprOverlaps:
		return Node{kind: wRelate, rel: compileRelation(e)}
	}
	if mapcommons.IsArrayOp(e.Op) {
		n := Node{kind: wArrays, arrayOp: e.Op}
		for _, o := range e.Operands {
			side := arraySide{col: -1}
			if o.Op == mapcommons.OperandProperty {
				side.col = mapcommons.AttrIndex(attrs, o.Property)
			} else {
				side.elems = mapcommons.ArrayElements(o)
			}
			n.arrays = append(n.arrays, side)
		}
		return n
	}
	if e.Operands != nil && e.Op == mapcommons.ExprLike {
		return Node{kind: wLikeCalc, calcs: []calc{compileCalc(attrs, e.Operands[0])}, like: compileLike(e.Values[0].Str)}
	}
	if e.Operands != nil {
		n := Node{kind: wOperands, op: cmpOps[e.Op]}
		for _, o := range e.Operands {
			n.calcs = append(n.calcs, compileCalc(attrs, o))
		}
		return n
	}
	n := Node{col: mapcommons.AttrIndex(attrs, e.Property)}
	if n.col < 0 { // Validate let only the geometry's IS NULL through
		return Node{kind: wNoGeometry}
	}
	t := attrs[n.col].Type
	n.isStr = t == mapcommons.AttrString || t == mapcommons.AttrDate
	n.isTime = t == mapcommons.AttrDate && !e.CaseI && !e.AccentI
	n.isBool = t == mapcommons.AttrBoolean
	n.caseI, n.accentI = e.CaseI, e.AccentI
	for _, v := range e.Values {
		switch {
		case n.isStr:
			n.strs = append(n.strs, []byte(v.Str))
		case v.Kind == mapcommons.LitBoolean:
			n.nums = append(n.nums, map[bool]float64{false: 0, true: 1}[v.Bool])
		default:
			n.nums = append(n.nums, v.Num)
		}
	}
	switch e.Op {
	case mapcommons.ExprIsNull:
		n.kind = wIsNull
	case mapcommons.ExprBetween:
		n.kind = wBetween
	case mapcommons.ExprLike:
		n.kind, n.like = wLike, compileLike(e.Values[0].Str)
	case mapcommons.ExprIn:
		n.kind = wIn
		if len(e.Values) > SetMin {
			if n.isStr {
				n.strSet = make(map[string]struct{}, len(n.strs))
				for _, v := range n.strs {
					n.strSet[string(v)] = struct{}{}
				}
			} else {
				n.numSet = make(map[float64]struct{}, len(n.nums))
				for _, v := range n.nums {
					n.numSet[v] = struct{}{}
				}
			}
		}
	default:
		n.kind, n.op = wCompare, cmpOps[e.Op]
	}
	return n
}

// literalParts turns a geometry literal into what the spatial package
// tests exactly: its points become boxes of no size (tested as the bbox
// parameter's boxes are), its lines and polygons planar buffer queries of
// radius 0 (a feature at distance 0 from one meets it). A polygon is its
// shell: the test of a literal with holes is the relate engine's
// (relate.go), and the shell's boxes are what the index searches with.
func literalParts(b []byte) (rects []wkb.Rect, nears []*spatial.Near) {
	g, err := wkb.Decode(b)
	if err != nil {
		return nil, nil
	}
	add := func(kind string, xy []float64) {
		q := &spatial.Near{Kind: kind, XY: xy, Metric: spatial.NewMetric("degrees")}
		q.Prepare()
		nears = append(nears, q)
	}
	var walk func(g wkb.Geom)
	walk = func(g wkb.Geom) {
		switch g.Type {
		case wkb.Point:
			if len(g.Coords) >= 2 {
				x, y := g.Coords[0], g.Coords[1]
				rects = append(rects, wkb.Rect{MinX: x, MinY: y, MaxX: x, MaxY: y})
			}
		case wkb.LineString:
			if len(g.Coords) >= 4 {
				add(spatial.KindLine, g.Coords)
			}
		case wkb.Polygon:
			if len(g.Rings) > 0 && len(g.Rings[0]) >= 8 {
				add(spatial.KindPolygon, g.Rings[0])
			}
		default:
			for _, p := range g.Parts {
				walk(p)
			}
		}
	}
	walk(g)
	return rects, nears
}

// Index finds a top-level condition of the expression (itself or a
// conjunct of its AND) that an index search can serve: an S_INTERSECTS
// of a BBOX, whose exact test is the bbox parameter's, is returned as
// bbox and taken out of the expression (rest is what remains, nil when
// nothing does); otherwise the boxes of the first literal of a spatial
// test that implies intersection (every one but S_DISJOINT: a feature
// that is within, equals, touches, crosses, contains or overlaps the
// literal meets it) are returned, to search with, and the expression
// stays whole (its exact test is per row).
func Index(e *mapcommons.Expr) (bbox *mapcommons.BBox, boxes []wkb.Rect, rest *mapcommons.Expr) {
	conj := []*mapcommons.Expr{e}
	if e.Op == mapcommons.ExprAnd {
		conj = e.Args
	}
	for i, c := range conj {
		if !mapcommons.IsSpatialOp(c.Op) || c.Op == mapcommons.ExprDisjoint {
			continue
		}
		if c.BBox != nil && c.Op != mapcommons.ExprIntersects {
			if boxes == nil {
				boxes = spatial.BBoxRects(c.BBox.W, c.BBox.S, c.BBox.E, c.BBox.N)
			}
			continue
		}
		if c.BBox != nil {
			others := append(append([]*mapcommons.Expr{}, conj[:i]...), conj[i+1:]...)
			switch len(others) {
			case 0:
				rest = nil
			case 1:
				rest = others[0]
			default:
				rest = &mapcommons.Expr{Op: mapcommons.ExprAnd, Args: others}
			}
			return c.BBox, nil, rest
		}
		if boxes == nil {
			rects, nears := literalParts(c.Geometry)
			boxes = rects
			for _, q := range nears {
				boxes = append(boxes, q.Boxes()...)
			}
		}
	}
	return nil, boxes, e
}

// Cells reads one feature's attribute values (by column) and geometry
// for Node.Matches: in a store's own form, or in a feature's values
// (valueCells).
type Cells interface {
	Null(col int) bool
	Num(col int) float64 // numbers; booleans as 0 and 1
	Str(col int) []byte  // strings, dates
	Geom() []byte
	Stopper() *Stopper // the query's context, for the costly tests; may be nil
}

// Matches reports whether the expression is true (not false, not unknown)
// for the feature c reads.
func (n *Node) Matches(c Cells) bool { return n.match(c) == triTrue }

// match evaluates the node for the feature c reads.
func (n *Node) match(c Cells) tri {
	switch n.kind {
	case wAnd:
		out := triTrue
		for i := range n.kids {
			switch n.kids[i].match(c) {
			case triFalse:
				return triFalse
			case triUnknown:
				out = triUnknown
			}
		}
		return out
	case wOr:
		out := triFalse
		for i := range n.kids {
			switch n.kids[i].match(c) {
			case triTrue:
				return triTrue
			case triUnknown:
				out = triUnknown
			}
		}
		return out
	case wNot:
		switch n.kids[0].match(c) {
		case triTrue:
			return triFalse
		case triFalse:
			return triTrue
		}
		return triUnknown
	case wIsNull:
		return truth(c.Null(n.col))
	case wNoGeometry:
		return truth(len(c.Geom()) == 0)
	case wTrue:
		return triTrue
	case wFalse:
		return triFalse
	case wBBox, wGeom:
		return n.matchGeometry(c.Geom())
	case wRelate:
		return n.rel.match(c.Geom(), c.Stopper())
	case wOperands:
		return n.matchOperands(c)
	case wLikeCalc:
		v, ok := n.calcs[0].text(c)
		if !ok {
			return triUnknown
		}
		return truth(matchLike(n.like, v, c.Stopper()))
	case wArrays:
		a, ok1 := n.arrays[0].elements(c)
		b, ok2 := n.arrays[1].elements(c)
		if !ok1 || !ok2 {
			return triUnknown
		}
		return truth(mapcommons.ArrayRelation(n.arrayOp, a, b))
	}
	if c.Null(n.col) {
		return triUnknown
	}
	if n.isStr {
		v := c.Str(n.col)
		var buf [128]byte // a short ASCII value folds on the stack
		if n.caseI || n.accentI {
			v = mapcommons.AppendFold(buf[:0], v, n.caseI, n.accentI)
		}
		switch n.kind {
		case wCompare:
			return truth(compared(n.op, n.order(v, n.strs[0])))
		case wBetween:
			return truth(n.order(v, n.strs[0]) >= 0 && n.order(v, n.strs[1]) <= 0)
		case wLike:
			return truth(matchLike(n.like, v, c.Stopper()))
		}
		if n.strSet != nil {
			_, ok := n.strSet[string(v)]
			return truth(ok)
		}
		for _, w := range n.strs {
			if bytes.Equal(v, w) {
				return triTrue
			}
		}
		return triFalse
	}
	v := c.Num(n.col)
	switch n.kind {
	case wCompare:
		return truth(compared(n.op, cmp.Compare(v, n.nums[0])))
	case wBetween:
		return truth(v >= n.nums[0] && v <= n.nums[1])
	}
	if n.numSet != nil {
		_, ok := n.numSet[v]
		return truth(ok)
	}
	for _, w := range n.nums {
		if v == w {
			return triTrue
		}
	}
	return triFalse
}

// order compares two of the node's strings: dates and timestamps in time
// order, other text as bytes.
func (n *Node) order(a, b []byte) int {
	if n.isTime {
		return mapcommons.CompareTimes(a, b)
	}
	return bytes.Compare(a, b)
}

// matchGeometry tests a feature's geometry; a feature without one (or
// with an empty or unreadable one) is UNKNOWN.
func (n *Node) matchGeometry(b []byte) tri {
	if x, y, ok := wkb.StoredPoint(b); ok { // no decoding for points
		if spatial.InAnyRect(x, y, n.rects) {
			return triTrue
		}
		for _, q := range n.nears {
			if q.MatchPoint(x, y) {
				return triTrue
			}
		}
		return triFalse
	}
	g, err := wkb.Decode(b)
	if b == nil || err != nil || g.IsEmpty() {
		return triUnknown
	}
	if spatial.IntersectsRects(g, n.rects) {
		return triTrue
	}
	for _, q := range n.nears {
		if q.Match(g) {
			return triTrue
		}
	}
	return triFalse
}

func truth(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

// compared applies a comparison operator to the result c of a comparison.
func compared(op, c int) bool {
	switch op {
	case cmpEq:
		return c == 0
	case cmpNe:
		return c != 0
	case cmpLt:
		return c < 0
	case cmpLe:
		return c <= 0
	case cmpGt:
		return c > 0
	}
	return c >= 0
}
