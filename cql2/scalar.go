// scalar.go: the property-property and arithmetic classes: comparisons
// and BETWEEN of scalar expressions (properties, literals, + - * / % ^
// DIV), their literal parts folded when parsed, and spatial functions of
// two literals folded into TRUE or FALSE.
package cql2

import (
	"cmp"
	"context"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/feature"
	"mapcommons/format/wkb"
)

// tree is the operand as a mapcommons.Operand.
func (o operand) tree() *mapcommons.Operand {
	switch {
	case o.calc != nil:
		return o.calc
	case o.isLit:
		return &mapcommons.Operand{Op: mapcommons.OperandLiteral, Literal: o.lit}
	}
	return &mapcommons.Operand{Op: mapcommons.OperandProperty, Property: o.prop}
}

// simpleProp reports whether o is a property, maybe under CASEI or ACCENTI.
func (o operand) simpleProp() bool { return !o.isLit && o.calc == nil }

// arith is a op b, folded into a literal when both are numbers whose
// result is one (a division by zero stays, to be null when evaluated).
func arith(op string, a, b operand) (operand, error) {
	for _, x := range []operand{a, b} {
		if x.caseI || x.accentI {
			return operand{}, failAt(x.pos, "%s: arithmetic of CASEI or ACCENTI", op)
		}
		if x.isLit && x.lit.Kind != mapcommons.LitNumber {
			return operand{}, failAt(x.pos, "%s: arithmetic of numbers, not of %s", op, x.lit)
		}
	}
	if a.isLit && b.isLit {
		if r, ok := mapcommons.Arithmetic(op, a.lit.Num, b.lit.Num); ok {
			return operand{isLit: true, lit: mapcommons.Literal{Kind: mapcommons.LitNumber, Num: r}, pos: a.pos}, nil
		}
	}
	return operand{pos: a.pos, calc: &mapcommons.Operand{Op: op, Args: []*mapcommons.Operand{a.tree(), b.tree()}}}, nil
}

// compareLiterals compares two literals of one kind (a date or timestamp
// with a string or one another, as text); false for kinds that do not
// compare.
func compareLiterals(a, b mapcommons.Literal) (int, bool) {
	text := func(k string) bool {
		return k == mapcommons.LitString || k == mapcommons.LitDate || k == mapcommons.LitTimestamp
	}
	switch {
	case a.Kind == mapcommons.LitNumber && b.Kind == mapcommons.LitNumber:
		return cmp.Compare(a.Num, b.Num), true
	case a.Kind == mapcommons.LitBoolean && b.Kind == mapcommons.LitBoolean:
		x, y := 0, 0
		if a.Bool {
			x = 1
		}
		if b.Bool {
			y = 1
		}
		return cmp.Compare(x, y), true
	case text(a.Kind) && text(b.Kind):
		return strings.Compare(a.Str, b.Str), true
	}
	return 0, false
}

// scalarComparison is a op b when one of them is not a plain property
// against a literal: two literals fold into TRUE or FALSE, otherwise
// the comparison of Operands.
func scalarComparison(op string, a, b operand) (*mapcommons.Expr, error) {
	if a.isLit && b.isLit {
		c, ok := compareLiterals(a.lit, b.lit)
		if !ok {
			return nil, failAt(a.pos, "%s cannot be compared with %s", a.lit, b.lit)
		}
		return boolExpr(holds(op, c)), nil
	}
	for _, x := range []operand{a, b} {
		if x.caseI || x.accentI {
			return nil, failAt(x.pos, "CASEI and ACCENTI compare a property with a literal, not with another property or arithmetic")
		}
	}
	return &mapcommons.Expr{Op: op, Operands: []*mapcommons.Operand{a.tree(), b.tree()}}, nil
}

// between is a BETWEEN lo AND hi.
func between(a, lo, hi operand) (*mapcommons.Expr, error) {
	for _, x := range []operand{a, lo, hi} {
		if x.isLit && x.lit.Kind == mapcommons.LitBoolean {
			return nil, failAt(x.pos, "BETWEEN is of numbers, strings or instants, not of %s", x.lit)
		}
	}
	if lo.isLit && hi.isLit {
		if _, ok := compareLiterals(lo.lit, hi.lit); !ok {
			return nil, failAt(lo.pos, "BETWEEN's ends are of one type, not %s and %s", lo.lit, hi.lit)
		}
	}
	if a.simpleProp() && lo.isLit && hi.isLit {
		return a.expr(mapcommons.ExprBetween, lo.lit, hi.lit), nil
	}
	if a.isLit && lo.isLit && hi.isLit {
		c1, ok1 := compareLiterals(a.lit, lo.lit)
		c2, ok2 := compareLiterals(a.lit, hi.lit)
		if !ok1 || !ok2 {
			return nil, failAt(a.pos, "BETWEEN of literals that do not compare")
		}
		return boolExpr(c1 >= 0 && c2 <= 0), nil
	}
	for _, x := range []operand{a, lo, hi} {
		if x.caseI || x.accentI {
			return nil, failAt(x.pos, "CASEI and ACCENTI in BETWEEN are of a property between literals")
		}
	}
	return &mapcommons.Expr{Op: mapcommons.ExprBetween, Operands: []*mapcommons.Operand{a.tree(), lo.tree(), hi.tree()}}, nil
}

// spatialOfLiterals is the spatial function op of two literals (x first),
// TRUE or FALSE, as the evaluator relates a feature's geometry x with y.
func spatialOfLiterals(op string, x, y *mapcommons.Expr) (*mapcommons.Expr, error) {
	if x.Geometry == nil { // a BBOX first: the converse of the geometry first
		if y.Geometry == nil {
			g, ok := bboxPolygon(x.BBox)
			if !ok {
				return nil, mapcommons.Errorf(mapcommons.EINVALID, "%s of two BBOXes, one across the antimeridian", strings.ToUpper(op))
			}
			x = &mapcommons.Expr{Geometry: g}
		} else {
			x, y, op = y, x, mapcommons.ConverseSpatialOp(op)
		}
	}
	e := &mapcommons.Expr{Op: op, Property: "geometry", BBox: y.BBox, Geometry: y.Geometry}
	// As costly as relating one feature's geometry with the literal
	// (both are bounded to mapcommons.MaxNearVertices vertices).
	ok, err := feature.CompileWhere(nil, e).Match(context.Background(), nil, x.Geometry)
	if err != nil {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "%s: %v", strings.ToUpper(op), err)
	}
	return boolExpr(ok), nil
}

// bboxPolygon is the polygon of a box's corners (false across the
// antimeridian).
func bboxPolygon(b *mapcommons.BBox) ([]byte, bool) {
	if b == nil || b.W > b.E {
		return nil, false
	}
	return wkb.AppendPolygon(nil, [][]float64{{b.W, b.S, b.E, b.S, b.E, b.N, b.W, b.N, b.W, b.S}}), true
}

// scalar: term { ('+' | '-') term }, left to right.
func (p *textParser) scalar() (operand, error) {
	a, err := p.term()
	if err != nil {
		return a, err
	}
	for {
		var op string
		switch {
		case p.is("+") || p.is("-"):
			op = p.tok.text
			if err := p.next(); err != nil {
				return a, err
			}
		case p.tok.kind == tNumber && (p.tok.text[0] == '-' || p.tok.text[0] == '+'):
			// "balance-150": the sign read with the number is the operator.
			op = p.tok.text[:1]
			p.tok.text, p.tok.pos = p.tok.text[1:], p.tok.pos+1
		default:
			return a, nil
		}
		b, err := p.term()
		if err != nil {
			return a, err
		}
		if a, err = arith(op, a, b); err != nil {
			return a, err
		}
	}
}

// term: power { ('*' | '/' | '%' | DIV) power }.
func (p *textParser) term() (operand, error) {
	a, err := p.power()
	if err != nil {
		return a, err
	}
	for p.is("*") || p.is("/") || p.is("%") || p.is("DIV") {
		op := strings.ToLower(p.tok.text)
		if err := p.next(); err != nil {
			return a, err
		}
		b, err := p.power()
		if err != nil {
			return a, err
		}
		if a, err = arith(op, a, b); err != nil {
			return a, err
		}
	}
	return a, nil
}

// power: factor [ '^' factor ].
func (p *textParser) power() (operand, error) {
	a, err := p.factor()
	if err != nil || !p.is("^") {
		return a, err
	}
	if err := p.next(); err != nil {
		return a, err
	}
	b, err := p.factor()
	if err != nil {
		return a, err
	}
	return arith("^", a, b)
}

// factor: '(' scalar ')' | '-' factor | an operand.
func (p *textParser) factor() (operand, error) {
	if err := p.enter(); err != nil {
		return operand{}, err
	}
	defer func() { p.depth-- }()
	pos := p.tok.pos
	switch {
	case p.is("("):
		if err := p.next(); err != nil {
			return operand{}, err
		}
		a, err := p.scalar()
		if err != nil {
			return a, err
		}
		return a, p.expect(")")
	case p.is("-"):
		if err := p.next(); err != nil {
			return operand{}, err
		}
		a, err := p.factor()
		if err != nil {
			return a, err
		}
		minus := operand{isLit: true, lit: mapcommons.Literal{Kind: mapcommons.LitNumber, Num: -1}, pos: pos}
		return arith("*", minus, a)
	}
	return p.operand()
}

// arithJSON reads {"op": "+", "args": [a, b]} and the other operators.
func arithJSON(fn string, args []any, depth int) (operand, *jsonError) {
	if len(args) != 2 {
		return operand{}, jfail("%s takes 2 operands, not %d", fn, len(args)).at("args")
	}
	if depth >= mapcommons.MaxExprDepth {
		return operand{}, jfail("nested deeper than %d", mapcommons.MaxExprDepth)
	}
	var ops [2]operand
	for i, a := range args {
		o, err := operandDepth(a, depth+1)
		if err != nil {
			return operand{}, err.at("args[" + strconv.Itoa(i) + "]")
		}
		ops[i] = o
	}
	o, err := arith(strings.ToLower(fn), ops[0], ops[1])
	if err != nil {
		return operand{}, jfail("%s", offsetless(err))
	}
	return o, nil
}
