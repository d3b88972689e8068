// funcs.go: what both encodings build for the functions class (calls of
// mapcommons.Functions), the array-functions class (A_EQUALS, A_CONTAINS,
// A_CONTAINEDBY, A_OVERLAPS of properties and array literals), and IN
// and LIKE of operands other than a property and literals.
package cql2

import (
	"context"
	"strings"

	"mapcommons"
	"mapcommons/feature"
)

// call is the operand of the function name of args: a function offered
// (mapcommons.Functions), else an error that names it.
func call(pos int, name string, args []operand) (operand, error) {
	if lower := strings.ToLower(name); mapcommons.IsSpatialOp(lower) || temporalOps[lower] || mapcommons.IsArrayOp(lower) {
		return operand{}, failAt(pos, "%s is a predicate, not a value", strings.ToUpper(name))
	}
	f := mapcommons.LookupFunction(name)
	if f == nil {
		return operand{}, failAt(pos, "unknown function %q (the functions offered are at /ogc/functions)", name)
	}
	if len(args) != len(f.Args) {
		return operand{}, failAt(pos, "%s takes %d arguments, not %d", f.Name, len(f.Args), len(args))
	}
	o := &mapcommons.Operand{Op: mapcommons.OperandFunction, Function: f.Name}
	for _, a := range args {
		if a.caseI || a.accentI {
			return operand{}, failAt(a.pos, "%s of CASEI or ACCENTI: CASEI and ACCENTI are of a property compared with a literal", f.Name)
		}
		o.Args = append(o.Args, a.tree())
	}
	return operand{pos: pos, calc: o}, nil
}

// inList is a IN (items): a property IN literals as it is, anything else
// the OR of the equalities of a with each item (SQL's meaning of IN).
func inList(a operand, items []operand) (*mapcommons.Expr, error) {
	if len(items) == 0 || len(items) > mapcommons.MaxInValues {
		return nil, failAt(a.pos, "IN lists from 1 to %d values", mapcommons.MaxInValues)
	}
	lits := a.simpleProp()
	for _, it := range items {
		lits = lits && it.isLit
	}
	if lits {
		e := a.expr(mapcommons.ExprIn)
		for _, it := range items {
			e.Values = append(e.Values, it.lit)
		}
		return e, nil
	}
	var or []*mapcommons.Expr
	for _, it := range items {
		c, err := comparison("=", a, it)
		if err != nil {
			return nil, err
		}
		switch c.Op {
		case mapcommons.ExprTrue:
			return c, nil
		case mapcommons.ExprFalse:
			continue
		}
		or = append(or, c)
	}
	switch len(or) {
	case 0:
		return boolExpr(false), nil
	case 1:
		return or[0], nil
	}
	return &mapcommons.Expr{Op: mapcommons.ExprOr, Args: or}, nil
}

// likeOf is a LIKE pattern: of a property as it is, of a string literal
// folded into TRUE or FALSE, of a function's value as an Operand.
func likeOf(a, pattern operand) (*mapcommons.Expr, error) {
	if !pattern.isLit || pattern.lit.Kind != mapcommons.LitString {
		return nil, failAt(pattern.pos, "LIKE needs a string pattern")
	}
	switch {
	case a.simpleProp():
		return a.expr(mapcommons.ExprLike, pattern.lit), nil
	case a.calc != nil && a.calc.Op != mapcommons.OperandFunction:
		return nil, failAt(a.pos, "LIKE matches strings, not arithmetic")
	case a.isLit:
		if a.lit.Kind != mapcommons.LitString {
			return nil, failAt(a.pos, "LIKE of %s: a string is matched", a.lit)
		}
	}
	e := &mapcommons.Expr{Op: mapcommons.ExprLike, Operands: []*mapcommons.Operand{a.tree()}, Values: []mapcommons.Literal{pattern.lit}}
	if a.isLit {
		ok, err := feature.CompileWhere(nil, e).Match(context.Background(), nil, nil)
		if err != nil {
			return nil, failAt(a.pos, "%v", err)
		}
		return boolExpr(ok), nil
	}
	return e, nil
}

// arrayOp is the array function the token names, in lower case; "" for
// none.
func arrayOp(t token) string {
	if t.kind != tIdent {
		return ""
	}
	if op := strings.ToLower(t.text); mapcommons.IsArrayOp(op) {
		return op
	}
	return ""
}

// arrayFunction is the array function op of a and b (each a property or
// an array literal, OperandProperty or OperandArray); two literals fold
// into TRUE or FALSE.
func arrayFunction(pos int, op string, a, b *mapcommons.Operand) (*mapcommons.Expr, error) {
	e := &mapcommons.Expr{Op: op, Operands: []*mapcommons.Operand{a, b}}
	if err := e.Validate(nil); err != nil && a.Op == mapcommons.OperandArray && b.Op == mapcommons.OperandArray {
		return nil, failAt(pos, "%s", strings.TrimPrefix(mapcommons.ErrorMessage(err), "filter: "))
	}
	if a.Op == mapcommons.OperandArray && b.Op == mapcommons.OperandArray {
		return boolExpr(mapcommons.ArrayRelation(op, mapcommons.ArrayElements(a), mapcommons.ArrayElements(b))), nil
	}
	return e, nil
}

// arrayOperand is an argument of an array function from an operand (a
// property) or an array literal's elements.
func arrayOperand(o operand) (*mapcommons.Operand, error) {
	if !o.simpleProp() || o.caseI || o.accentI {
		return nil, failAt(o.pos, "an array function takes a property or an array, not %s", o.describe())
	}
	return o.tree(), nil
}

// arrayElement is an element of an array literal from an operand: a
// literal.
func arrayElement(o operand) (*mapcommons.Operand, error) {
	if !o.isLit {
		return nil, failAt(o.pos, "an array's elements are literals and arrays, not %s", o.describe())
	}
	return &mapcommons.Operand{Op: mapcommons.OperandLiteral, Literal: o.lit}, nil
}

// describe names the operand in an error.
func (o operand) describe() string {
	switch {
	case o.isLit:
		return o.lit.String()
	case o.calc != nil:
		return "an expression"
	}
	return "the property " + o.prop
}
