// json.go: the cql2-json encoding.
package cql2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format/geojson"
)

// jsonError is a failure at a path of the JSON (args[1].args[0]), built
// as it returns up the tree.
type jsonError struct {
	path []string // innermost first
	msg  string
}

func jfail(format string, args ...any) *jsonError {
	return &jsonError{msg: fmt.Sprintf(format, args...)}
}

// at prefixes the error's path with one step.
func (e *jsonError) at(step string) *jsonError {
	e.path = append(e.path, step)
	return e
}

func (e *jsonError) err() error {
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		if b.Len() > 0 && !strings.HasPrefix(e.path[i], "[") {
			b.WriteByte('.')
		}
		b.WriteString(e.path[i])
	}
	if b.Len() == 0 {
		return mapcommons.Errorf(mapcommons.EINVALID, "filter: %s", e.msg)
	}
	return mapcommons.Errorf(mapcommons.EINVALID, "filter: at %s: %s", b.String(), e.msg)
}

// jsonParser walks a decoded cql2-json document.
type jsonParser struct {
	nodes int
	crs   ToCRS84 // the geometry literals' CRS onto CRS84 (nil: CRS84)
}

// ParseJSON parses a cql2-json filter.
func ParseJSON(b []byte) (*mapcommons.Expr, error) { return parseJSON(b, nil) }

func parseJSON(b []byte, toCRS84 ToCRS84) (*mapcommons.Expr, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "filter: not JSON: %v", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "filter: text after the JSON value")
	}
	p := &jsonParser{crs: toCRS84}
	e, jerr := p.expr(v, 0)
	if jerr != nil {
		return nil, jerr.err()
	}
	return e, nil
}

// expr reads one boolean expression: {"op": …, "args": […]}.
func (p *jsonParser) expr(v any, depth int) (*mapcommons.Expr, *jsonError) {
	if depth > mapcommons.MaxExprDepth {
		return nil, jfail("nested deeper than %d", mapcommons.MaxExprDepth)
	}
	if p.nodes++; p.nodes > mapcommons.MaxExprNodes {
		return nil, jfail("more than %d operations", mapcommons.MaxExprNodes)
	}
	if b, ok := v.(bool); ok {
		return boolExpr(b), nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, jfail("expected an object {\"op\": …, \"args\": […]} or a boolean")
	}
	op, ok := m["op"].(string)
	if !ok {
		return nil, jfail("expected an object with an \"op\" string")
	}
	args, ok := m["args"].([]any)
	if !ok {
		return nil, jfail("%s: expected \"args\", an array", op)
	}
	nargs := func(n int) *jsonError {
		if len(args) != n {
			return jfail("%s takes %d arguments, not %d", op, n, len(args)).at("args")
		}
		return nil
	}
	switch lop := strings.ToLower(op); lop {
	case mapcommons.ExprAnd, mapcommons.ExprOr, mapcommons.ExprNot:
		if lop == mapcommons.ExprNot {
			if err := nargs(1); err != nil {
				return nil, err
			}
		} else if len(args) < 2 {
			return nil, jfail("%s takes two or more arguments", op).at("args")
		}
		e := &mapcommons.Expr{Op: lop}
		for i, a := range args {
			sub, err := p.expr(a, depth+1)
			if err != nil {
				return nil, err.at("args[" + strconv.Itoa(i) + "]")
			}
			e.Args = append(e.Args, sub)
		}
		return e, nil
	case "=", "<>", "<", "<=", ">", ">=":
		if err := nargs(2); err != nil {
			return nil, err
		}
		a, err := operandJSON(args[0])
		if err != nil {
			return nil, err.at("args[0]")
		}
		b, err := operandJSON(args[1])
		if err != nil {
			return nil, err.at("args[1]")
		}
		e, cerr := comparison(lop, a, b)
		if cerr != nil {
			return nil, jfail("%s", offsetless(cerr))
		}
		return e, nil
	case "isnull":
		if err := nargs(1); err != nil {
			return nil, err
		}
		prop, err := propertyJSON(args[0])
		if err != nil {
			return nil, err.at("args[0]")
		}
		return &mapcommons.Expr{Op: mapcommons.ExprIsNull, Property: prop}, nil
	case mapcommons.ExprLike:
		if err := nargs(2); err != nil {
			return nil, err
		}
		a, err := operandJSON(args[0])
		if err != nil {
			return nil, err.at("args[0]")
		}
		pat, err := operandJSON(args[1])
		if err != nil || !pat.isLit || pat.lit.Kind != mapcommons.LitString {
			return nil, jfail("expected a string pattern").at("args[1]")
		}
		e, lerr := likeOf(a, pat)
		if lerr != nil {
			return nil, jfail("%s", offsetless(lerr)).at("args[0]")
		}
		return e, nil
	case mapcommons.ExprBetween:
		if len(args) == 2 { // the draft's form: [property, [low, high]]
			if r, ok := args[1].([]any); ok {
				args = append(args[:1:1], r...)
			}
		}
		if err := nargs(3); err != nil {
			return nil, err
		}
		var ops [3]operand
		for i := range ops {
			o, err := operandJSON(args[i])
			if err != nil {
				return nil, err.at("args[" + strconv.Itoa(i) + "]")
			}
			ops[i] = o
		}
		e, berr := between(ops[0], ops[1], ops[2])
		if berr != nil {
			return nil, jfail("%s", offsetless(berr))
		}
		return e, nil
	case mapcommons.ExprIn:
		if err := nargs(2); err != nil {
			return nil, err
		}
		a, err := operandJSON(args[0])
		if err != nil {
			return nil, err.at("args[0]")
		}
		list, ok := args[1].([]any)
		if !ok || len(list) == 0 || len(list) > mapcommons.MaxInValues {
			return nil, jfail("expected an array of 1 to %d values", mapcommons.MaxInValues).at("args[1]")
		}
		items := make([]operand, 0, len(list))
		for i, v := range list {
			o, err := operandJSON(v)
			if err != nil {
				return nil, err.at("[" + strconv.Itoa(i) + "]").at("args[1]")
			}
			items = append(items, o)
		}
		e, ierr := inList(a, items)
		if ierr != nil {
			return nil, jfail("%s", offsetless(ierr))
		}
		return e, nil
	case mapcommons.ExprIntersects, mapcommons.ExprDisjoint, mapcommons.ExprEquals, mapcommons.ExprTouches,
		mapcommons.ExprCrosses, mapcommons.ExprWithin, mapcommons.ExprContains, mapcommons.ExprOverlaps:
		if len(args) != 2 {
			return nil, jfail("%s takes 2 arguments, the geometry and a literal, not %d", lop, len(args)).at("args")
		}
		e := &mapcommons.Expr{Op: lop}
		for i, a := range args {
			step := "args[" + strconv.Itoa(i) + "]"
			if prop, err := propertyJSON(a); err == nil {
				if e.Property != "" {
					return nil, jfail("%s compares the geometry with a literal, not two properties", lop).at(step)
				}
				e.Property = prop
				continue
			}
			if e.BBox != nil || e.Geometry != nil { // two literals: TRUE or FALSE
				y := &mapcommons.Expr{}
				if err := geometryJSON(a, y, p.crs); err != nil {
					err.msg = lop + ": " + err.msg
					return nil, err.at(step)
				}
				c, err := spatialOfLiterals(lop, &mapcommons.Expr{BBox: e.BBox, Geometry: e.Geometry}, y)
				if err != nil {
					return nil, jfail("%s", mapcommons.ErrorMessage(err))
				}
				return c, nil
			}
			if i == 0 {
				e.Op = mapcommons.ConverseSpatialOp(lop) // literal op geometry
			}
			if err := geometryJSON(a, e, p.crs); err != nil {
				err.msg = lop + ": " + err.msg
				return nil, err.at(step)
			}
		}
		if e.Property == "" {
			return nil, jfail("%s needs the geometry property", lop).at("args")
		}
		return e, nil
	}
	if temporalOps[strings.ToLower(op)] {
		return temporalJSON(strings.ToLower(op), args)
	}
	if lop := strings.ToLower(op); mapcommons.IsArrayOp(lop) {
		return arraysJSON(lop, args)
	}
	return nil, jfail("unknown operation %q", op).at("op")
}

// arraysJSON reads an array function's arguments: each a property or a
// JSON array of literals and arrays.
func arraysJSON(op string, args []any) (*mapcommons.Expr, *jsonError) {
	if len(args) != 2 {
		return nil, jfail("%s takes 2 arrays, not %d", op, len(args)).at("args")
	}
	var ops [2]*mapcommons.Operand
	n := 0
	for i, a := range args {
		step := "args[" + strconv.Itoa(i) + "]"
		if list, ok := a.([]any); ok {
			o, err := arrayJSON(list, &n, 0)
			if err != nil {
				return nil, err.at(step)
			}
			ops[i] = o
			continue
		}
		prop, err := propertyJSON(a)
		if err != nil {
			return nil, jfail("expected a property or an array").at(step)
		}
		ops[i] = &mapcommons.Operand{Op: mapcommons.OperandProperty, Property: prop}
	}
	e, err := arrayFunction(0, op, ops[0], ops[1])
	if err != nil {
		return nil, jfail("%s", offsetless(err))
	}
	return e, nil
}

// arrayJSON reads an array literal; n counts its elements.
func arrayJSON(list []any, n *int, depth int) (*mapcommons.Operand, *jsonError) {
	if depth >= mapcommons.MaxExprDepth {
		return nil, jfail("nested deeper than %d", mapcommons.MaxExprDepth)
	}
	a := &mapcommons.Operand{Op: mapcommons.OperandArray, Args: make([]*mapcommons.Operand, 0, len(list))}
	for i, v := range list {
		step := "[" + strconv.Itoa(i) + "]"
		if *n++; *n > mapcommons.MaxArrayElements {
			return nil, jfail("arrays of more than %d elements", mapcommons.MaxArrayElements)
		}
		if sub, ok := v.([]any); ok {
			el, err := arrayJSON(sub, n, depth+1)
			if err != nil {
				return nil, err.at(step)
			}
			a.Args = append(a.Args, el)
			continue
		}
		l, err := literalOperandJSON(v)
		if err != nil {
			return nil, jfail("an array's elements are literals and arrays").at(step)
		}
		a.Args = append(a.Args, &mapcommons.Operand{Op: mapcommons.OperandLiteral, Literal: l})
	}
	return a, nil
}

// operandJSON reads a property or a literal, or CASEI or ACCENTI of one
// ({"op": "casei", "args": [x]}).
func operandJSON(v any) (operand, *jsonError) {
	return operandDepth(v, 0)
}

func operandDepth(v any, depth int) (operand, *jsonError) {
	if prop, err := propertyJSON(v); err == nil {
		return operand{prop: prop}, nil
	}
	if m, ok := v.(map[string]any); ok && len(m) == 2 {
		if fn, ok := m["op"].(string); ok && slices.Contains(mapcommons.ArithmeticOps, strings.ToLower(fn)) {
			args, _ := m["args"].([]any)
			return arithJSON(fn, args, depth)
		}
		if fn, ok := m["op"].(string); ok && mapcommons.LookupFunction(fn) != nil {
			return callJSON(fn, m["args"], depth)
		}
		if fn, ok := m["op"].(string); ok && (strings.EqualFold(fn, "casei") || strings.EqualFold(fn, "accenti")) {
			args, ok := m["args"].([]any)
			if !ok || len(args) != 1 {
				return operand{}, jfail("%s takes one argument, a string or a property", fn).at("args")
			}
			if depth >= mapcommons.MaxExprDepth {
				return operand{}, jfail("nested deeper than %d", mapcommons.MaxExprDepth)
			}
			in, err := operandDepth(args[0], depth+1)
			if err != nil {
				return operand{}, err.at("args[0]")
			}
			o, ferr := folded(fn, in)
			if ferr != nil {
				return operand{}, jfail("%s takes a string or a property, not %s", strings.ToUpper(fn), in.lit).at("args[0]")
			}
			return o, nil
		}
	}
	if m, ok := v.(map[string]any); ok {
		if fn, ok := m["op"].(string); ok && len(m) == 2 && !temporalOps[strings.ToLower(fn)] && !mapcommons.IsSpatialOp(strings.ToLower(fn)) {
			return operand{}, jfail("unknown function %q (the functions offered are at /ogc/functions)", fn).at("op")
		}
	}
	l, err := literalJSON(v)
	return operand{isLit: true, lit: l}, err
}

// callJSON reads {"op": name, "args": [...]} of a function offered.
func callJSON(fn string, v any, depth int) (operand, *jsonError) {
	args, ok := v.([]any)
	if !ok {
		return operand{}, jfail("%s: expected \"args\", an array", fn)
	}
	if depth >= mapcommons.MaxExprDepth {
		return operand{}, jfail("nested deeper than %d", mapcommons.MaxExprDepth)
	}
	ops := make([]operand, 0, len(args))
	for i, a := range args {
		o, err := operandDepth(a, depth+1)
		if err != nil {
			return operand{}, err.at("args[" + strconv.Itoa(i) + "]")
		}
		ops = append(ops, o)
	}
	o, err := call(0, fn, ops)
	if err != nil {
		return operand{}, jfail("%s", offsetless(err))
	}
	return o, nil
}

// literalOperandJSON reads a literal, or CASEI or ACCENTI of a string.
func literalOperandJSON(v any) (mapcommons.Literal, *jsonError) {
	o, err := operandJSON(v)
	if err == nil && !o.isLit {
		err = jfail("expected a literal, not a property")
	}
	return o.lit, err
}

// propertyJSON reads {"property": "name"}.
func propertyJSON(v any) (string, *jsonError) {
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		if s, ok := m["property"].(string); ok && s != "" {
			return s, nil
		}
	}
	return "", jfail("expected {\"property\": \"name\"}")
}

// literalJSON reads a string, number, boolean, {"date": …} or {"timestamp": …}.
func literalJSON(v any) (mapcommons.Literal, *jsonError) {
	switch x := v.(type) {
	case string:
		return mapcommons.Literal{Kind: mapcommons.LitString, Str: x}, nil
	case bool:
		return mapcommons.Literal{Kind: mapcommons.LitBoolean, Bool: x}, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return mapcommons.Literal{}, jfail("bad number %s", x)
		}
		return mapcommons.Literal{Kind: mapcommons.LitNumber, Num: f}, nil
	case map[string]any:
		if len(x) == 1 {
			for _, kind := range []string{mapcommons.LitDate, mapcommons.LitTimestamp} {
				if s, ok := x[kind].(string); ok {
					s, err := instant(kind, s)
					if err != nil {
						return mapcommons.Literal{}, jfail("%s", mapcommons.ErrorMessage(err))
					}
					return mapcommons.Literal{Kind: kind, Str: s}, nil
				}
			}
		}
	}
	return mapcommons.Literal{}, jfail("expected a literal (string, number, boolean, {\"date\": …}, {\"timestamp\": …})")
}

// geometryJSON reads {"bbox": [w, s, e, n]} or a GeoJSON geometry into e.
func geometryJSON(v any, e *mapcommons.Expr, toCRS84 ToCRS84) *jsonError {
	m, ok := v.(map[string]any)
	if !ok {
		return jfail("expected a geometry: {\"bbox\": […]} or a GeoJSON geometry")
	}
	if raw, ok := m["bbox"]; ok && len(m) == 1 {
		list, ok := raw.([]any)
		if !ok {
			return jfail("expected a bbox array")
		}
		var xs []float64
		for _, x := range list {
			n, ok := x.(json.Number)
			if !ok {
				return jfail("expected a bbox of numbers")
			}
			f, err := strconv.ParseFloat(string(n), 64)
			if err != nil {
				return jfail("bad number %s", n)
			}
			xs = append(xs, f)
		}
		b, err := bboxIn(xs, toCRS84)
		if err != nil {
			return jfail("%s", mapcommons.ErrorMessage(err))
		}
		e.BBox = b
		return nil
	}
	if _, ok := m["type"].(string); !ok {
		return jfail("expected a geometry: {\"bbox\": […]} or a GeoJSON geometry")
	}
	if toCRS84 != nil {
		if err := positionsIn(m, toCRS84); err != nil {
			return jfail("%s", mapcommons.ErrorMessage(err))
		}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return jfail("%v", err)
	}
	g, err := geojson.ParseGeometry(raw)
	if err != nil {
		err = mapcommons.Errorf(mapcommons.EINVALID, "%v", err)
	} else if g == nil {
		err = mapcommons.Errorf(mapcommons.EINVALID, "a null geometry")
	}
	if err == nil {
		err = mapcommons.CheckGeometryLiteral(g)
	}
	if err != nil {
		return jfail("%s", mapcommons.ErrorMessage(err))
	}
	e.Geometry = g
	return nil
}

// positionsIn maps the positions of a decoded GeoJSON geometry (its
// coordinates, and those of a collection's geometries) from the filter's
// CRS onto CRS84 in place, before the geometry is read as longitudes and
// latitudes. A position is a list of numbers; a third and more are kept.
func positionsIn(v any, toCRS84 ToCRS84) error {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"coordinates", "geometries"} {
			if c, ok := x[k]; ok {
				if err := positionsIn(c, toCRS84); err != nil {
					return err
				}
			}
		}
	case []any:
		if len(x) >= 2 {
			a, oka := x[0].(json.Number)
			b, okb := x[1].(json.Number)
			if oka && okb {
				xy := make([]float64, 2)
				var err error
				if xy[0], err = a.Float64(); err != nil {
					return mapcommons.Errorf(mapcommons.EINVALID, "bad number %s", a)
				}
				if xy[1], err = b.Float64(); err != nil {
					return mapcommons.Errorf(mapcommons.EINVALID, "bad number %s", b)
				}
				if err := toCRS84(xy); err != nil {
					return err
				}
				x[0] = json.Number(strconv.FormatFloat(xy[0], 'g', -1, 64))
				x[1] = json.Number(strconv.FormatFloat(xy[1], 'g', -1, 64))
				return nil
			}
		}
		for _, e := range x {
			if err := positionsIn(e, toCRS84); err != nil {
				return err
			}
		}
	}
	return nil
}

// offsetless is the message of a text parser's error without its
// "filter: at offset N: " (which has no meaning in JSON).
func offsetless(err error) string {
	msg := strings.TrimPrefix(mapcommons.ErrorMessage(err), "filter: ")
	if rest, ok := strings.CutPrefix(msg, "at offset "); ok {
		if _, after, ok := strings.Cut(rest, ": "); ok {
			return after
		}
	}
	return msg
}
