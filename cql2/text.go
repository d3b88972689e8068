// Package cql2 parses the filters of OGC API Features Part 3 (CQL2 1.0),
// in its text encoding (cql2-text) and its JSON encoding (cql2-json), into
// a mapcommons.Expr: Basic CQL2 (and, or, not, comparisons of a property
// with a literal, IS [NOT] NULL), LIKE, BETWEEN and IN, and the spatial
// functions S_INTERSECTS, S_DISJOINT, S_EQUALS, S_TOUCHES, S_CROSSES,
// S_WITHIN, S_CONTAINS and S_OVERLAPS of the geometry with a BBOX or a
// geometry literal of any type (WKT in text, GeoJSON in JSON), and the
// temporal functions T_AFTER … T_STARTS of instants and intervals
// (temporal.go, rewritten into comparisons), and CASEI and ACCENTI of a
// property or a string in comparisons, LIKE, BETWEEN and IN, and
// comparisons of two properties and of arithmetic (scalar.go). The
// geometry is the property "geometry" (or "geom").
//
// Parsing is linear in the input and bounded in depth
// (mapcommons.MaxExprDepth); the caller bounds the input's length. Errors
// are EINVALID and say where and why.
package cql2

import (
	"fmt"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format/wkb"
)

// token kinds of cql2-text.
const (
	tEOF    = iota
	tIdent  // a keyword or an unquoted property name
	tQuoted // a "quoted" property name
	tString // a 'string' literal
	tNumber
	tPunct // ( ) , = <> < <= > >=
)

type token struct {
	kind int
	text string // the identifier, unescaped string, number or punctuation
	pos  int    // byte offset in the input
}

// textParser is a recursive-descent parser over a one-token lookahead.
type textParser struct {
	s     string
	pos   int
	tok   token
	depth int
	nodes int
	crs   ToCRS84 // the geometry literals' CRS onto CRS84 (nil: CRS84)
}

// ParseText parses a cql2-text filter.
func ParseText(s string) (*mapcommons.Expr, error) { return parseText(s, nil) }

func parseText(s string, toCRS84 ToCRS84) (*mapcommons.Expr, error) {
	p := &textParser{s: s, crs: toCRS84}
	if err := p.next(); err != nil {
		return nil, err
	}
	e, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.fail("unexpected %s", p.desc())
	}
	return e, nil
}

func (p *textParser) fail(format string, args ...any) error {
	return mapcommons.Errorf(mapcommons.EINVALID, "filter: at offset %d: %s", p.tok.pos, fmt.Sprintf(format, args...))
}

// desc describes the current token for an error.
func (p *textParser) desc() string {
	switch p.tok.kind {
	case tEOF:
		return "end of filter"
	case tString:
		return "string " + strconv.Quote(p.tok.text)
	}
	return strconv.Quote(p.tok.text)
}

func isIdentStart(c byte) bool {
	return c == '_' || (c|0x20) >= 'a' && (c|0x20) <= 'z' || c >= 0x80
}

func isIdentPart(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '.' || c == ':'
}

// next reads the following token.
func (p *textParser) next() error {
	for p.pos < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.pos]) >= 0 {
		p.pos++
	}
	start := p.pos
	p.tok = token{pos: start}
	if p.pos >= len(p.s) {
		p.tok.kind = tEOF
		return nil
	}
	c := p.s[p.pos]
	switch {
	case c == '\'' || c == '"':
		// A string or a quoted identifier; the quote doubled escapes it.
		var b strings.Builder
		p.pos++
		for {
			i := strings.IndexByte(p.s[p.pos:], c)
			if i < 0 {
				return p.fail("unterminated %c", c)
			}
			b.WriteString(p.s[p.pos : p.pos+i])
			p.pos += i + 1
			if p.pos < len(p.s) && p.s[p.pos] == c {
				b.WriteByte(c)
				p.pos++
				continue
			}
			break
		}
		p.tok.kind, p.tok.text = tString, b.String()
		if c == '"' {
			p.tok.kind = tQuoted
			if p.tok.text == "" {
				return p.fail("empty quoted name")
			}
		}
	case c >= '0' && c <= '9' || c == '.' || (c == '-' || c == '+') && p.pos+1 < len(p.s) && (p.s[p.pos+1] >= '0' && p.s[p.pos+1] <= '9' || p.s[p.pos+1] == '.'):
		p.pos++
		for p.pos < len(p.s) {
			d := p.s[p.pos]
			if d >= '0' && d <= '9' || d == '.' || d == 'e' || d == 'E' ||
				(d == '-' || d == '+') && (p.s[p.pos-1]|0x20) == 'e' {
				p.pos++
				continue
			}
			break
		}
		p.tok.kind, p.tok.text = tNumber, p.s[start:p.pos]
	case isIdentStart(c):
		for p.pos < len(p.s) && isIdentPart(p.s[p.pos]) {
			p.pos++
		}
		p.tok.kind, p.tok.text = tIdent, p.s[start:p.pos]
	default:
		p.pos++
		if p.pos < len(p.s) && (c == '<' && (p.s[p.pos] == '=' || p.s[p.pos] == '>') || c == '>' && p.s[p.pos] == '=') {
			p.pos++
		}
		if !strings.Contains("(),=<>+-*/%^", string(c)) {
			p.tok.text = p.s[start:p.pos]
			return p.fail("unexpected character %q", c)
		}
		p.tok.kind, p.tok.text = tPunct, p.s[start:p.pos]
	}
	return nil
}

// is reports whether the current token is the keyword (any case) or punctuation.
func (p *textParser) is(word string) bool {
	if p.tok.kind == tPunct {
		return p.tok.text == word
	}
	return p.tok.kind == tIdent && strings.EqualFold(p.tok.text, word)
}

// accept consumes the keyword or punctuation when it comes next.
func (p *textParser) accept(word string) (bool, error) {
	if !p.is(word) {
		return false, nil
	}
	return true, p.next()
}

func (p *textParser) expect(word string) error {
	if !p.is(word) {
		return p.fail("expected %s, found %s", word, p.desc())
	}
	return p.next()
}

// enter counts one level of nesting and one node.
func (p *textParser) enter() error {
	p.depth++
	if p.nodes++; p.nodes > mapcommons.MaxExprNodes {
		return p.fail("more than %d operations", mapcommons.MaxExprNodes)
	}
	if p.depth > mapcommons.MaxExprDepth {
		return p.fail("nested deeper than %d", mapcommons.MaxExprDepth)
	}
	return nil
}

// orExpr: andExpr { OR andExpr }.
func (p *textParser) orExpr() (*mapcommons.Expr, error) {
	return p.chain(mapcommons.ExprOr, p.andExpr)
}

// andExpr: notExpr { AND notExpr }.
func (p *textParser) andExpr() (*mapcommons.Expr, error) {
	return p.chain(mapcommons.ExprAnd, p.notExpr)
}

// chain reads operands joined by the keyword op into one n-ary node.
func (p *textParser) chain(op string, operand func() (*mapcommons.Expr, error)) (*mapcommons.Expr, error) {
	if p.nodes++; p.nodes > mapcommons.MaxExprNodes {
		return nil, p.fail("more than %d operations", mapcommons.MaxExprNodes)
	}
	e, err := operand()
	if err != nil {
		return nil, err
	}
	if !p.is(op) {
		return e, nil
	}
	out := &mapcommons.Expr{Op: op, Args: []*mapcommons.Expr{e}}
	for p.is(op) {
		if err := p.next(); err != nil {
			return nil, err
		}
		e, err := operand()
		if err != nil {
			return nil, err
		}
		out.Args = append(out.Args, e)
	}
	return out, nil
}

// notExpr: NOT notExpr | '(' orExpr ')' | predicate.
func (p *textParser) notExpr() (*mapcommons.Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	if ok, err := p.accept("NOT"); err != nil {
		return nil, err
	} else if ok {
		e, err := p.notExpr()
		if err != nil {
			return nil, err
		}
		return not(e), nil
	}
	if ok, err := p.accept("("); err != nil {
		return nil, err
	} else if ok {
		e, err := p.orExpr()
		if err != nil {
			return nil, err
		}
		return e, p.expect(")")
	}
	return p.predicate()
}

// boolExpr is the expression of the literal TRUE or FALSE.
func boolExpr(b bool) *mapcommons.Expr {
	if b {
		return &mapcommons.Expr{Op: mapcommons.ExprTrue}
	}
	return &mapcommons.Expr{Op: mapcommons.ExprFalse}
}

func not(e *mapcommons.Expr) *mapcommons.Expr {
	return &mapcommons.Expr{Op: mapcommons.ExprNot, Args: []*mapcommons.Expr{e}}
}

// operand is one side of a comparison: a property or a literal.
type operand struct {
	prop  string
	isLit bool
	lit   mapcommons.Literal
	pos   int
	// CASEI, ACCENTI of a property (of a literal: folded into it).
	caseI, accentI bool
	calc           *mapcommons.Operand // arithmetic (prop and lit unset)
}

// folded is the operand o under the function fn, CASEI or ACCENTI: a
// string literal folded, a property marked.
func folded(fn string, o operand) (operand, error) {
	caseI := strings.EqualFold(fn, "CASEI")
	if o.isLit {
		if o.lit.Kind != mapcommons.LitString {
			return o, failAt(o.pos, "%s takes a string or a property, not %s", strings.ToUpper(fn), o.lit)
		}
		o.lit.Str = mapcommons.FoldText(o.lit.Str, caseI, !caseI)
		return o, nil
	}
	if caseI {
		o.caseI = true
	} else {
		o.accentI = true
	}
	return o, nil
}

// expr is the expression op of the operand o (a property) and values,
// with o's functions.
func (o operand) expr(op string, values ...mapcommons.Literal) *mapcommons.Expr {
	return &mapcommons.Expr{Op: op, Property: o.prop, Values: values, CaseI: o.caseI, AccentI: o.accentI}
}

// predicate: a comparison, LIKE, BETWEEN, IN, IS NULL or a spatial function.
func (p *textParser) predicate() (*mapcommons.Expr, error) {
	if op := spatialOp(p.tok); op != "" {
		return p.spatial(op)
	}
	if op := temporalOp(p.tok); op != "" {
		return p.temporal(op)
	}
	if op := arrayOp(p.tok); op != "" {
		return p.arrays(op)
	}
	a, err := p.scalar()
	if err != nil {
		return nil, err
	}
	if a.isLit && a.lit.Kind == mapcommons.LitBoolean && !p.is("NOT") && !p.is("IS") && !p.is("LIKE") &&
		!p.is("BETWEEN") && !p.is("IN") && (p.tok.kind != tPunct || p.is(")")) {
		return boolExpr(a.lit.Bool), nil // TRUE or FALSE alone
	}
	negate := false
	if p.is("NOT") {
		negate = true
		if err := p.next(); err != nil {
			return nil, err
		}
		if !p.is("LIKE") && !p.is("BETWEEN") && !p.is("IN") {
			return nil, p.fail("expected LIKE, BETWEEN or IN after NOT, found %s", p.desc())
		}
	}
	var e *mapcommons.Expr
	switch {
	case p.tok.kind == tPunct && p.tok.text != "(" && p.tok.text != ")" && p.tok.text != ",":
		op := p.tok.text
		if err := p.next(); err != nil {
			return nil, err
		}
		b, err := p.scalar()
		if err != nil {
			return nil, err
		}
		if e, err = comparison(op, a, b); err != nil {
			return nil, err
		}
	case p.is("IS"):
		if err := p.next(); err != nil {
			return nil, err
		}
		if negate, err = p.accept("NOT"); err != nil {
			return nil, err
		}
		if err := p.expect("NULL"); err != nil {
			return nil, err
		}
		if !a.simpleProp() {
			return nil, failAt(a.pos, "IS NULL needs a property")
		}
		if a.caseI || a.accentI {
			return nil, failAt(a.pos, "IS NULL of CASEI or ACCENTI: test the property itself")
		}
		e = &mapcommons.Expr{Op: mapcommons.ExprIsNull, Property: a.prop}
	case p.is("LIKE"):
		if err := p.next(); err != nil {
			return nil, err
		}
		b, err := p.operand()
		if err != nil {
			return nil, err
		}
		if e, err = likeOf(a, b); err != nil {
			return nil, err
		}
	case p.is("BETWEEN"):
		if err := p.next(); err != nil {
			return nil, err
		}
		lo, err := p.scalar()
		if err != nil {
			return nil, err
		}
		if err := p.expect("AND"); err != nil {
			return nil, err
		}
		hi, err := p.scalar()
		if err != nil {
			return nil, err
		}
		if e, err = between(a, lo, hi); err != nil {
			return nil, err
		}
	case p.is("IN"):
		if err := p.next(); err != nil {
			return nil, err
		}
		if err := p.expect("("); err != nil {
			return nil, err
		}
		var items []operand
		for {
			v, err := p.scalar()
			if err != nil {
				return nil, err
			}
			if len(items) >= mapcommons.MaxInValues {
				return nil, failAt(v.pos, "IN lists at most %d values", mapcommons.MaxInValues)
			}
			items = append(items, v)
			if ok, err := p.accept(","); err != nil {
				return nil, err
			} else if !ok {
				break
			}
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		if e, err = inList(a, items); err != nil {
			return nil, err
		}
	default:
		return nil, p.fail("expected a comparison, LIKE, BETWEEN, IN or IS NULL, found %s", p.desc())
	}
	if negate {
		e = not(e)
	}
	return e, nil
}

// comparison builds property op literal, turning literal op property around.
func comparison(op string, a, b operand) (*mapcommons.Expr, error) {
	flip := map[string]string{"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
	if _, ok := flip[op]; !ok {
		return nil, failAt(a.pos, "unknown comparison %q", op)
	}
	switch {
	case a.simpleProp() && b.isLit:
	case a.isLit && b.simpleProp():
		a, b, op = b, a, flip[op]
	default: // two properties, two literals, arithmetic
		return scalarComparison(op, a, b)
	}
	return a.expr(op, b.lit), nil
}

func failAt(pos int, format string, args ...any) error {
	return mapcommons.Errorf(mapcommons.EINVALID, "filter: at offset %d: %s", pos, fmt.Sprintf(format, args...))
}

// operand reads a property or a literal: 'string', number, TRUE, FALSE,
// DATE('…'), TIMESTAMP('…').
func (p *textParser) operand() (operand, error) {
	o := operand{pos: p.tok.pos}
	switch p.tok.kind {
	case tQuoted:
		o.prop = p.tok.text
	case tString:
		o.isLit, o.lit = true, mapcommons.Literal{Kind: mapcommons.LitString, Str: p.tok.text}
	case tNumber:
		v, err := strconv.ParseFloat(p.tok.text, 64)
		if err != nil || v != v {
			return o, p.fail("bad number %q", p.tok.text)
		}
		o.isLit, o.lit = true, mapcommons.Literal{Kind: mapcommons.LitNumber, Num: v}
	case tIdent:
		switch strings.ToUpper(p.tok.text) {
		case "TRUE", "FALSE":
			o.isLit, o.lit = true, mapcommons.Literal{Kind: mapcommons.LitBoolean, Bool: strings.EqualFold(p.tok.text, "TRUE")}
		case "DATE", "TIMESTAMP":
			kind := strings.ToLower(p.tok.text)
			if err := p.next(); err != nil {
				return o, err
			}
			if err := p.expect("("); err != nil {
				return o, err
			}
			if p.tok.kind != tString {
				return o, p.fail("expected a quoted %s, found %s", kind, p.desc())
			}
			s, err := instant(kind, p.tok.text)
			if err != nil {
				return o, p.fail("%s", mapcommons.ErrorMessage(err))
			}
			o.isLit, o.lit = true, mapcommons.Literal{Kind: kind, Str: s}
			if err := p.next(); err != nil {
				return o, err
			}
			return o, p.expect(")")
		case "CASEI", "ACCENTI":
			fn := strings.ToUpper(p.tok.text)
			if err := p.next(); err != nil {
				return o, err
			}
			if err := p.expect("("); err != nil {
				return o, err
			}
			if p.is(")") {
				return o, p.fail("%s takes one argument, a string or a property", fn)
			}
			if err := p.enter(); err != nil {
				return o, err
			}
			in, err := p.operand()
			p.depth--
			if err != nil {
				return o, err
			}
			if p.is(",") {
				return o, p.fail("%s takes one argument, a string or a property", fn)
			}
			if o, err = folded(fn, in); err != nil {
				return o, err
			}
			return o, p.expect(")")
		case "AND", "OR", "NOT", "IS", "NULL", "LIKE", "BETWEEN", "IN":
			return o, p.fail("expected a property or a literal, found %s", p.desc())
		default:
			o.prop = p.tok.text
			if err := p.next(); err != nil {
				return o, err
			}
			if p.is("(") { // a function call
				return p.call(o.pos, o.prop)
			}
			return o, nil
		}
	default:
		return o, p.fail("expected a property or a literal, found %s", p.desc())
	}
	return o, p.next()
}

// spatialOp is the spatial function (a mapcommons.SpatialOps member) the
// token names, S_INTERSECTS and the like in any case; "" for none.
func spatialOp(t token) string {
	if t.kind != tIdent {
		return ""
	}
	if op := strings.ToLower(t.text); mapcommons.IsSpatialOp(op) {
		return op
	}
	return ""
}

// spatial: S_INTERSECTS | S_DISJOINT | … '(' geometry ',' literal ')',
// or with the literal first, which for S_WITHIN and S_CONTAINS is the
// converse predicate of the geometry (mapcommons.ConverseSpatialOp).
func (p *textParser) spatial(op string) (*mapcommons.Expr, error) {
	name := strings.ToUpper(op)
	if err := p.next(); err != nil {
		return nil, err
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	e := &mapcommons.Expr{Op: op}
	for i := 0; i < 2; i++ {
		if i == 1 {
			if p.is(")") {
				return nil, p.fail("%s takes two arguments, the geometry and a literal, not one", name)
			}
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
		if p.tok.kind == tQuoted || p.tok.kind == tIdent && !isGeomWord(p.tok.text) {
			prop, pos := p.tok.text, p.tok.pos
			if err := p.next(); err != nil {
				return nil, err
			}
			if p.is("(") {
				return nil, failAt(pos, "%s: %q is not a geometry literal", name, prop)
			}
			if e.Property != "" {
				return nil, failAt(pos, "%s compares the geometry with a literal, not two properties", name)
			}
			e.Property = prop
			continue
		}
		if e.BBox != nil || e.Geometry != nil { // two literals: TRUE or FALSE
			pos := p.tok.pos
			y := &mapcommons.Expr{}
			if err := p.geometry(y); err != nil {
				return nil, err
			}
			if p.is(",") {
				return nil, p.fail("%s takes two arguments, the geometry and a literal, not more", name)
			}
			c, err := spatialOfLiterals(op, &mapcommons.Expr{BBox: e.BBox, Geometry: e.Geometry}, y)
			if err != nil {
				return nil, failAt(pos, "%s", mapcommons.ErrorMessage(err))
			}
			return c, p.expect(")")
		}
		if i == 0 {
			e.Op = mapcommons.ConverseSpatialOp(op) // literal op geometry
		}
		if err := p.geometry(e); err != nil {
			return nil, err
		}
	}
	if e.Property == "" {
		return nil, p.fail("%s needs the geometry property", name)
	}
	if p.is(",") {
		return nil, p.fail("%s takes two arguments, the geometry and a literal, not more", name)
	}
	return e, p.expect(")")
}

func isGeomWord(w string) bool {
	switch strings.ToUpper(w) {
	case "BBOX", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION":
		return true
	}
	return false
}

// geometry reads a BBOX(w,s,e,n) (or its 3-D form w,s,zmin,e,n,zmax) or a
// WKT geometry literal into e.
func (p *textParser) geometry(e *mapcommons.Expr) error {
	if p.tok.kind != tIdent || !isGeomWord(p.tok.text) {
		return p.fail("expected a geometry literal, found %s", p.desc())
	}
	if strings.EqualFold(p.tok.text, "BBOX") {
		if err := p.next(); err != nil {
			return err
		}
		if err := p.expect("("); err != nil {
			return err
		}
		var xs []float64
		for {
			if p.tok.kind != tNumber || len(xs) == 6 {
				return p.fail("expected a BBOX of 4 or 6 numbers, found %s", p.desc())
			}
			v, err := strconv.ParseFloat(p.tok.text, 64)
			if err != nil {
				return p.fail("bad number %q", p.tok.text)
			}
			xs = append(xs, v)
			if err := p.next(); err != nil {
				return err
			}
			if ok, err := p.accept(","); err != nil {
				return err
			} else if !ok {
				break
			}
		}
		b, err := bboxIn(xs, p.crs)
		if err != nil {
			return p.fail("%s", mapcommons.ErrorMessage(err))
		}
		e.BBox = b
		return p.expect(")")
	}
	// WKT holds no quotes: its end is the parenthesis closing its first.
	start, depth := p.tok.pos, 0
	i := start
	for ; i < len(p.s); i++ {
		c := p.s[i]
		if c == '(' {
			depth++
		} else if c == ')' {
			if depth == 0 {
				break // POINT EMPTY)
			}
			if depth--; depth == 0 {
				i++
				break
			}
		} else if c == ',' && depth == 0 || c == '\'' || c == '"' {
			break
		}
	}
	if depth != 0 {
		return p.fail("unbalanced parentheses in the geometry")
	}
	g, err := wkb.ParseWKT(p.s[start:i])
	if err == nil {
		g, err = geometryIn(g, p.crs)
		if err != nil {
			return p.fail("%s", mapcommons.ErrorMessage(err))
		}
	}
	if err != nil {
		return p.fail("%v", err)
	}
	if err := mapcommons.CheckGeometryLiteral(g); err != nil {
		return p.fail("%s", mapcommons.ErrorMessage(err))
	}
	e.Geometry = g
	p.pos = i
	return p.next()
}

// call reads the arguments of the function name, whose "(" is the token:
// '(' [ scalar { ',' scalar } ] ')'.
func (p *textParser) call(pos int, name string) (operand, error) {
	if mapcommons.LookupFunction(name) == nil {
		return call(pos, name, nil) // the error naming it
	}
	if err := p.enter(); err != nil {
		return operand{}, err
	}
	defer func() { p.depth-- }()
	if err := p.expect("("); err != nil {
		return operand{}, err
	}
	var args []operand
	for !p.is(")") {
		if len(args) > 0 {
			if err := p.expect(","); err != nil {
				return operand{}, err
			}
		}
		a, err := p.scalar()
		if err != nil {
			return operand{}, err
		}
		args = append(args, a)
	}
	if err := p.next(); err != nil {
		return operand{}, err
	}
	return call(pos, name, args)
}

// arrays: A_EQUALS | A_CONTAINS | … '(' array ',' array ')', each a
// property or an array literal.
func (p *textParser) arrays(op string) (*mapcommons.Expr, error) {
	pos := p.tok.pos
	if err := p.next(); err != nil {
		return nil, err
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var args [2]*mapcommons.Operand
	for i := range args {
		if i == 1 {
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
		var err error
		if p.is("(") {
			n := 0
			args[i], err = p.array(&n)
		} else {
			var o operand
			if o, err = p.operand(); err == nil {
				args[i], err = arrayOperand(o)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	return arrayFunction(pos, op, args[0], args[1])
}

// array reads an array literal: '(' [ element { ',' element } ] ')', an
// element a literal or an array; n counts the elements read.
func (p *textParser) array(n *int) (*mapcommons.Operand, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	if err := p.expect("("); err != nil {
		return nil, err
	}
	a := &mapcommons.Operand{Op: mapcommons.OperandArray}
	for !p.is(")") {
		if len(a.Args) > 0 {
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
		if *n++; *n > mapcommons.MaxArrayElements {
			return nil, p.fail("arrays of more than %d elements", mapcommons.MaxArrayElements)
		}
		var el *mapcommons.Operand
		var err error
		if p.is("(") {
			el, err = p.array(n)
		} else {
			var o operand
			if o, err = p.operand(); err == nil {
				el, err = arrayElement(o)
			}
		}
		if err != nil {
			return nil, err
		}
		a.Args = append(a.Args, el)
	}
	return a, p.next()
}
