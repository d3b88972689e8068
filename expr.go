// expr.go: the boolean expression of a feature query (FeatureQuery.Where),
// the form CQL2 filters (package cql2) parse into and stores evaluate.
package mapcommons

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"mapcommons/format/wkb"
)

// Operations of an Expr.
const (
	ExprAnd        = "and"          // every Args holds
	ExprOr         = "or"           // one of Args holds
	ExprNot        = "not"          // Args[0] does not hold
	ExprEq         = "="            // Property = Values[0]
	ExprNe         = "<>"           // Property <> Values[0]
	ExprLt         = "<"            // Property < Values[0]
	ExprLe         = "<="           // Property <= Values[0]
	ExprGt         = ">"            // Property > Values[0]
	ExprGe         = ">="           // Property >= Values[0]
	ExprIsNull     = "isNull"       // Property is null (the geometry property: the feature has no geometry)
	ExprLike       = "like"         // Property matches the pattern Values[0]
	ExprBetween    = "between"      // Values[0] <= Property <= Values[1]
	ExprIn         = "in"           // Property equals one of Values
	ExprIntersects = "s_intersects" // the geometry meets BBox or Geometry
	ExprDisjoint   = "s_disjoint"   // the geometry and BBox or Geometry share no point
	ExprEquals     = "s_equals"     // the geometry is the same point set as BBox or Geometry
	ExprTouches    = "s_touches"    // they meet, on boundaries only
	ExprCrosses    = "s_crosses"    // they cross (DE-9IM, by dimension)
	ExprWithin     = "s_within"     // the geometry is within BBox or Geometry
	ExprContains   = "s_contains"   // the geometry contains BBox or Geometry
	ExprOverlaps   = "s_overlaps"   // they overlap (same dimension, neither within the other)
	ExprTrue       = "true"         // every feature (the literal TRUE)
	ExprFalse      = "false"        // no feature (the literal FALSE)
)

// Limits of expressions.
const (
	// MaxExprDepth is the deepest nesting of an expression.
	MaxExprDepth = 100
	// MaxExprNodes is the most operations an expression may hold.
	MaxExprNodes = 10000
)

// SpatialOps are the spatial predicates of an Expr: the geometry property
// against a BBox or Geometry literal, with the DE-9IM meaning of OGC
// Simple Features (CQL2's spatial-functions class).
var SpatialOps = []string{ExprIntersects, ExprDisjoint, ExprEquals, ExprTouches, ExprCrosses, ExprWithin, ExprContains, ExprOverlaps}

// IsSpatialOp reports whether op is one of SpatialOps.
func IsSpatialOp(op string) bool {
	for _, o := range SpatialOps {
		if o == op {
			return true
		}
	}
	return false
}

// ConverseSpatialOp is the predicate op with its operands exchanged:
// S_WITHIN(literal, geometry) is S_CONTAINS(geometry, literal) and the
// reverse; the others are symmetric.
func ConverseSpatialOp(op string) string {
	switch op {
	case ExprWithin:
		return ExprContains
	case ExprContains:
		return ExprWithin
	}
	return op
}

// GeometryProperties are the names by which an expression refers to the
// features' geometry (the queryable "geometry").
var GeometryProperties = []string{"geometry", "geom"}

// Expr is a boolean condition on features, in CQL2's terms: an operation
// (one of the Expr* constants) over sub-expressions (and, or, not), or
// over one attribute (Property) and literals (Values), or a spatial test of
// the geometry against a box or a geometry literal, or the constant TRUE
// or FALSE.
//
// Evaluation follows SQL's three-valued logic: a comparison, LIKE,
// BETWEEN or IN of a null value is UNKNOWN, as is a spatial test of a
// feature without geometry; NOT UNKNOWN is UNKNOWN; AND is false when one
// side is false, else UNKNOWN when one is UNKNOWN; OR is true when one
// side is true, else UNKNOWN when one is UNKNOWN. A feature matches when
// the whole expression is true: "NOT (x = 1)" matches no feature whose x
// is null. IS NULL is never UNKNOWN.
//
// Spatial tests are planar in lon/lat, as the bbox parameter is: a BBox
// whose W > E crosses the antimeridian; polygon and line literals have
// straight edges in lon/lat (no wrap at the antimeridian); edges and
// boundaries count (a point on a polygon's edge intersects it, within the
// rounding of floating point for lines and polygons). The predicates
// other than s_intersects have the DE-9IM meaning of OGC Simple Features
// (as GEOS and PostGIS compute it), the BBox being the polygon of its
// corners (two polygons when it crosses the antimeridian; a line or a
// point when it has no width or height).
type Expr struct {
	Op       string
	Args     []*Expr   // and, or (two or more), not (one)
	Property string    // the attribute of a comparison, isNull, like, between, in; the geometry property of a spatial test
	Values   []Literal // the literals: one for a comparison or like, two for between, one or more for in
	BBox     *BBox     // a spatial test with an envelope
	Geometry []byte    // a spatial test with a geometry literal (stored WKB); nil when BBox is set
	// CaseI and AccentI fold the property's value (FoldText) before a
	// comparison, between, in or like tests it: CASEI(Property) and
	// ACCENTI(Property). (A literal's CASEI or ACCENTI is folded into the
	// literal by the parser.)
	CaseI, AccentI bool
	// Operands are the sides of a comparison (two) or of a between
	// (three: the value, the low and the high end) when they are not one
	// property and literals: two properties, arithmetic or functions;
	// the value of a like that is not a property (Values[0] is still its
	// pattern); the two arrays of an array function (ArrayOps). Property
	// and Values are then empty (but for like's pattern).
	Operands []*Operand
}

// Kinds of Operand other than the arithmetic operators.
const (
	OperandProperty = "property"
	OperandLiteral  = "literal"
)

// ArithmeticOps are the arithmetic operators of an Operand (CQL2's
// arithmetic class): "div" is integer division, "%" the remainder (with
// the dividend's sign), "^" the power.
var ArithmeticOps = []string{"+", "-", "*", "/", "%", "^", "div"}

// Operand is a scalar of an Expr's Operands: a property, a literal, or an
// arithmetic operator of two operands. Arithmetic is of numbers (numeric
// properties and number literals); a division by zero or a result that
// is not a finite number is null (UNKNOWN in a comparison), as a null
// operand is.
type Operand struct {
	Op       string // OperandProperty, OperandLiteral, OperandFunction, OperandArray or one of ArithmeticOps
	Property string
	Literal  Literal
	Function string     // OperandFunction: the name of one of Functions
	Args     []*Operand // the two operands of an operator, a function's arguments, an array's elements
}

// Arithmetic is a op b (op one of ArithmeticOps); false when the result
// is null: a division by zero, or not a finite number.
func Arithmetic(op string, a, b float64) (float64, bool) {
	var r float64
	switch op {
	case "+":
		r = a + b
	case "-":
		r = a - b
	case "*":
		r = a * b
	case "/":
		if b == 0 {
			return 0, false
		}
		r = a / b
	case "%":
		if b == 0 {
			return 0, false
		}
		r = math.Mod(a, b)
	case "div":
		if b == 0 {
			return 0, false
		}
		r = math.Trunc(a / b)
	case "^":
		r = math.Pow(a, b)
	default:
		return 0, false
	}
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, false
	}
	return r, true
}

// validate is the type class of an operand against attrs: "number",
// "string" (string and date properties, string, date and timestamp
// literals) or "boolean"; it checks the properties and the arithmetic.
func (o *Operand) validate(attrs []Attribute, depth int, nodes *int) (string, error) {
	if o == nil {
		return "", Errorf(EINVALID, "filter: empty operand")
	}
	if *nodes++; *nodes > MaxExprNodes {
		return "", Errorf(EINVALID, "filter: more than %d operations", MaxExprNodes)
	}
	if depth > MaxExprDepth {
		return "", Errorf(EINVALID, "filter: nested deeper than %d", MaxExprDepth)
	}
	switch o.Op {
	case OperandProperty:
		i := AttrIndex(attrs, o.Property)
		if i < 0 {
			return "", Errorf(EINVALID, "filter: no property %q", o.Property)
		}
		switch t := attrs[i].Type; {
		case t.Numeric():
			return LitNumber, nil
		case t == AttrBoolean:
			return LitBoolean, nil
		}
		return LitString, nil
	case OperandLiteral:
		switch o.Literal.Kind {
		case LitNumber:
			if math.IsNaN(o.Literal.Num) || math.IsInf(o.Literal.Num, 0) {
				return "", Errorf(EINVALID, "filter: not a finite number")
			}
			return LitNumber, nil
		case LitBoolean:
			return LitBoolean, nil
		case LitString, LitDate, LitTimestamp:
			return LitString, nil
		}
		return "", Errorf(EINVALID, "filter: unknown literal kind %q", o.Literal.Kind)
	case OperandFunction:
		return o.validateCall(attrs, depth, nodes)
	case OperandArray:
		return "", Errorf(EINVALID, "filter: an array is an argument of an array function (A_EQUALS, A_CONTAINS, A_CONTAINEDBY, A_OVERLAPS)")
	}
	if !slices.Contains(ArithmeticOps, o.Op) {
		return "", Errorf(EINVALID, "filter: unknown operator %q", o.Op)
	}
	if len(o.Args) != 2 {
		return "", Errorf(EINVALID, "filter: %s takes two operands", o.Op)
	}
	for _, a := range o.Args {
		t, err := a.validate(attrs, depth+1, nodes)
		if err != nil {
			return "", err
		}
		if t != LitNumber {
			what := "a " + t
			if a.Op == OperandProperty {
				what = fmt.Sprintf("%q, a %s property", a.Property, t)
			}
			return "", Errorf(EINVALID, "filter: %s: arithmetic of numbers, not of %s", o.Op, what)
		}
	}
	return LitNumber, nil
}

// Kinds of Literal.
const (
	LitString    = "string"
	LitNumber    = "number"
	LitBoolean   = "boolean"
	LitDate      = "date"      // DATE('2020-01-31'): compares as its text
	LitTimestamp = "timestamp" // TIMESTAMP('2020-01-31T12:00:00Z'): compares as its text
)

// Literal is a constant of an expression: Str holds a string, date or
// timestamp, Num a (finite) number, Bool a boolean.
type Literal struct {
	Kind string
	Str  string
	Num  float64
	Bool bool
}

// String is the literal in CQL2 text.
func (l Literal) String() string {
	switch l.Kind {
	case LitNumber:
		return fmt.Sprint(l.Num)
	case LitBoolean:
		return fmt.Sprint(l.Bool)
	case LitDate:
		return fmt.Sprintf("DATE(%q)", l.Str)
	case LitTimestamp:
		return fmt.Sprintf("TIMESTAMP(%q)", l.Str)
	}
	return fmt.Sprintf("%q", l.Str)
}

// IsGeometryProperty reports whether name refers to the features' geometry
// (in any case).
func IsGeometryProperty(name string) bool {
	for _, g := range GeometryProperties {
		if strings.EqualFold(name, g) {
			return true
		}
	}
	return false
}

// Validate checks e against a dataset's attributes: the properties exist,
// literals fit their column's type (a number for numeric columns, a
// boolean for boolean ones, a string, date or timestamp for string and
// date columns; LIKE needs a string or date column), the shape of each
// operation is right and e is within MaxExprDepth and MaxExprNodes.
// Errors are EINVALID and name the offending property.
func (e *Expr) Validate(attrs []Attribute) error {
	nodes := 0
	return e.validate(attrs, 0, &nodes)
}

func (e *Expr) validate(attrs []Attribute, depth int, nodes *int) error {
	if e == nil {
		return Errorf(EINVALID, "filter: empty expression")
	}
	if *nodes++; *nodes > MaxExprNodes {
		return Errorf(EINVALID, "filter: more than %d operations", MaxExprNodes)
	}
	if depth > MaxExprDepth {
		return Errorf(EINVALID, "filter: nested deeper than %d", MaxExprDepth)
	}
	switch e.Op {
	case ExprTrue, ExprFalse:
		return nil
	case ExprAnd, ExprOr, ExprNot:
		if e.Op == ExprNot && len(e.Args) != 1 {
			return Errorf(EINVALID, "filter: not takes one argument")
		}
		if e.Op != ExprNot && len(e.Args) < 2 {
			return Errorf(EINVALID, "filter: %s takes two or more arguments", e.Op)
		}
		for _, a := range e.Args {
			if err := a.validate(attrs, depth+1, nodes); err != nil {
				return err
			}
		}
		return nil
	case ExprIntersects, ExprDisjoint, ExprEquals, ExprTouches, ExprCrosses, ExprWithin, ExprContains, ExprOverlaps:
		if e.Operands != nil {
			return Errorf(EINVALID, "filter: %s of scalar operands", e.Op)
		}
		if !IsGeometryProperty(e.Property) {
			return Errorf(EINVALID, "filter: %s: %q is not the geometry (geometry)", e.Op, e.Property)
		}
		if e.BBox != nil {
			b := e.BBox
			for _, v := range []float64{b.W, b.S, b.E, b.N} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return Errorf(EINVALID, "filter: %s: a bbox of non-finite numbers", e.Op)
				}
			}
			if b.S > b.N {
				return Errorf(EINVALID, "filter: %s: bbox south %v above north %v", e.Op, b.S, b.N)
			}
			return nil
		}
		if err := CheckGeometryLiteral(e.Geometry); err != nil {
			return Errorf(EINVALID, "filter: %s: %s", e.Op, ErrorMessage(err))
		}
		return nil
	}
	if IsArrayOp(e.Op) {
		return e.validateArrays(attrs, nodes)
	}
	if e.Operands != nil {
		return e.validateOperands(attrs, depth, nodes)
	}
	i := AttrIndex(attrs, e.Property)
	if i < 0 && e.Op == ExprIsNull && IsGeometryProperty(e.Property) {
		return nil // whether the feature has a geometry
	}
	if i < 0 {
		return Errorf(EINVALID, "filter: no property %q", e.Property)
	}
	t := attrs[i].Type
	want := 1
	switch e.Op {
	case ExprEq, ExprNe, ExprLt, ExprLe, ExprGt, ExprGe, ExprLike:
	case ExprIsNull:
		want = 0
	case ExprBetween:
		want = 2
	case ExprIn:
		want = -1
		if len(e.Values) == 0 || len(e.Values) > MaxInValues {
			return Errorf(EINVALID, "filter: %q in: from 1 to %d values, not %d", e.Property, MaxInValues, len(e.Values))
		}
	default:
		return Errorf(EINVALID, "filter: unknown operation %q", e.Op)
	}
	if want >= 0 && len(e.Values) != want {
		return Errorf(EINVALID, "filter: %q %s takes %d values, not %d", e.Property, e.Op, want, len(e.Values))
	}
	if e.Op == ExprLike && t != AttrString && t != AttrDate {
		return Errorf(EINVALID, "filter: %q like: the property is %s, not a string", e.Property, t)
	}
	if e.CaseI || e.AccentI {
		fn := "CASEI"
		if !e.CaseI {
			fn = "ACCENTI"
		}
		if t != AttrString {
			return Errorf(EINVALID, "filter: %s(%q): the property is %s, not a string", fn, e.Property, t)
		}
		if e.Op == ExprIsNull {
			return Errorf(EINVALID, "filter: %s(%q) is null: the function of a property is for comparisons, like and in", fn, e.Property)
		}
	}
	for _, v := range e.Values {
		if err := checkLiteral(t, v); err != nil {
			return Errorf(EINVALID, "filter: %q %s %s: %s", e.Property, e.Op, v, ErrorMessage(err))
		}
	}
	return nil
}

// validateOperands checks a comparison or between of Operands: two or
// three of them, of one type.
func (e *Expr) validateOperands(attrs []Attribute, depth int, nodes *int) error {
	want, values := 2, 0
	switch e.Op {
	case ExprEq, ExprNe, ExprLt, ExprLe, ExprGt, ExprGe:
	case ExprBetween:
		want = 3
	case ExprLike: // a function's value LIKE the pattern Values[0]
		want, values = 1, 1
	default:
		return Errorf(EINVALID, "filter: %s of scalar operands", e.Op)
	}
	if len(e.Operands) != want || e.Property != "" || len(e.Values) != values || e.CaseI || e.AccentI {
		return Errorf(EINVALID, "filter: %s takes %d operands, not %d", e.Op, want, len(e.Operands))
	}
	var first string
	for i, o := range e.Operands {
		t, err := o.validate(attrs, depth+1, nodes)
		if err != nil {
			return err
		}
		if i == 0 {
			first = t
		} else if t != first {
			return Errorf(EINVALID, "filter: %s: a %s cannot be compared with a %s", e.Op, first, t)
		}
	}
	if e.Op == ExprLike && (first != LitString || e.Values[0].Kind != LitString) {
		return Errorf(EINVALID, "filter: like: a string and a string pattern, not a %s", first)
	}
	return nil
}

// validateCall checks a function's call: a function offered, with as
// many arguments as it takes, of its types; its type is its result's.
func (o *Operand) validateCall(attrs []Attribute, depth int, nodes *int) (string, error) {
	f := LookupFunction(o.Function)
	if f == nil {
		return "", Errorf(EINVALID, "filter: unknown function %q (the functions offered are at /ogc/functions)", o.Function)
	}
	if len(o.Args) != len(f.Args) {
		return "", Errorf(EINVALID, "filter: %s takes %d arguments, not %d", f.Name, len(f.Args), len(o.Args))
	}
	for i, a := range o.Args {
		t, err := a.validate(attrs, depth+1, nodes)
		if err != nil {
			return "", err
		}
		if t != f.Args[i] {
			return "", Errorf(EINVALID, "filter: %s of a %s, not of a %s", f.Name, f.Args[i], t)
		}
	}
	return f.Returns, nil
}

// validateArrays checks an array function: two operands, each a string
// property (whose values are JSON arrays) or an array literal of at most
// MaxArrayElements literals and arrays.
func (e *Expr) validateArrays(attrs []Attribute, nodes *int) error {
	if len(e.Operands) != 2 || e.Property != "" || len(e.Values) > 0 || e.CaseI || e.AccentI {
		return Errorf(EINVALID, "filter: %s takes two arrays", e.Op)
	}
	for _, o := range e.Operands {
		switch o.Op {
		case OperandProperty:
			i := AttrIndex(attrs, o.Property)
			if i < 0 {
				return Errorf(EINVALID, "filter: no property %q", o.Property)
			}
			if attrs[i].Type != AttrString {
				return Errorf(EINVALID, "filter: %s: %q is a %s property, not an array (arrays are string properties holding JSON arrays)", e.Op, o.Property, attrs[i].Type)
			}
		case OperandArray:
			n := 0
			if err := checkArray(o, &n, 0); err != nil {
				return Errorf(EINVALID, "filter: %s: %s", e.Op, ErrorMessage(err))
			}
			if *nodes += n; *nodes > MaxExprNodes {
				return Errorf(EINVALID, "filter: more than %d operations", MaxExprNodes)
			}
		default:
			return Errorf(EINVALID, "filter: %s of arrays: a property or an array literal, not %s", e.Op, o.Op)
		}
	}
	return nil
}

// checkArray checks an array literal's elements: literals and arrays, at
// most MaxArrayElements in all (n counts them), nested at most
// MaxExprDepth deep.
func checkArray(o *Operand, n *int, depth int) error {
	if depth > MaxExprDepth {
		return Errorf(EINVALID, "arrays nested deeper than %d", MaxExprDepth)
	}
	for _, a := range o.Args {
		if *n++; *n > MaxArrayElements {
			return Errorf(EINVALID, "arrays of more than %d elements", MaxArrayElements)
		}
		switch a.Op {
		case OperandArray:
			if err := checkArray(a, n, depth+1); err != nil {
				return err
			}
		case OperandLiteral:
			if a.Literal.Kind == LitNumber && (math.IsNaN(a.Literal.Num) || math.IsInf(a.Literal.Num, 0)) {
				return Errorf(EINVALID, "not a finite number")
			}
		default:
			return Errorf(EINVALID, "an array's elements are literals and arrays")
		}
	}
	return nil
}

// checkLiteral checks that a literal can be compared with a column of type t.
func checkLiteral(t AttrType, v Literal) error {
	ok := false
	switch v.Kind {
	case LitNumber:
		ok = t.Numeric()
		if math.IsNaN(v.Num) || math.IsInf(v.Num, 0) {
			return Errorf(EINVALID, "not a finite number")
		}
	case LitBoolean:
		ok = t == AttrBoolean
	case LitString, LitDate, LitTimestamp:
		ok = t == AttrString || t == AttrDate
	default:
		return Errorf(EINVALID, "unknown literal kind %q", v.Kind)
	}
	if !ok {
		return Errorf(EINVALID, "a %s cannot be compared with a %s property", v.Kind, t)
	}
	return nil
}

// CheckGeometryLiteral checks the geometry literal of a spatial test
// (stored WKB): not empty, in lon/lat, at most MaxNearVertices vertices,
// lines of two positions or more, polygons' rings (the shell, then any
// holes) closed, of four positions or more.
func CheckGeometryLiteral(b []byte) error {
	g, err := wkb.Decode(b)
	if err != nil {
		return Errorf(EINVALID, "%v", err)
	}
	if g.IsEmpty() {
		return Errorf(EINVALID, "an empty geometry intersects nothing")
	}
	n := 0
	var walk func(g wkb.Geom) error
	coords := func(xy []float64) error {
		if n += len(xy) / 2; n > MaxNearVertices {
			return Errorf(EINVALID, "a geometry of more than %d vertices", MaxNearVertices)
		}
		for i := 0; i+1 < len(xy); i += 2 {
			if !(xy[i] >= -180 && xy[i] <= 180 && xy[i+1] >= -90 && xy[i+1] <= 90) {
				return Errorf(EINVALID, "position %v %v is not a longitude, latitude", xy[i], xy[i+1])
			}
		}
		return nil
	}
	walk = func(g wkb.Geom) error {
		switch g.Type {
		case wkb.Point, wkb.LineString:
			if g.Type == wkb.LineString && len(g.Coords) < 4 {
				return Errorf(EINVALID, "a line needs two positions")
			}
			return coords(g.Coords)
		case wkb.Polygon:
			for _, r := range g.Rings {
				if len(r) < 8 || r[0] != r[len(r)-2] || r[1] != r[len(r)-1] {
					return Errorf(EINVALID, "a polygon's ring is closed, of 4 or more positions")
				}
				if err := coords(r); err != nil {
					return err
				}
			}
			return nil
		}
		for _, p := range g.Parts {
			if err := walk(p); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(g)
}
