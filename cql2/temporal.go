// temporal.go: the temporal functions (CQL2's temporal-functions class),
// T_AFTER … T_STARTS of instants and intervals, rewritten at parse time
// into comparisons of a property with a literal, the evaluator's own
// operations (Allen's interval algebra over the ends of the operands).
package cql2

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"mapcommons"
)

// temporalOps are the temporal functions, in lower case.
var temporalOps = map[string]bool{
	"t_after": true, "t_before": true, "t_contains": true, "t_disjoint": true, "t_during": true,
	"t_equals": true, "t_finishedby": true, "t_finishes": true, "t_intersects": true, "t_meets": true,
	"t_metby": true, "t_overlappedby": true, "t_overlaps": true, "t_startedby": true, "t_starts": true,
}

// temporalOp is the temporal function the token names, in lower case;
// "" for none.
func temporalOp(t token) string {
	if t.kind != tIdent {
		return ""
	}
	if op := strings.ToLower(t.text); temporalOps[op] {
		return op
	}
	return ""
}

// bound is one end of a temporal operand: a property, a date or
// timestamp literal, or the open end '..' (inf: -1 at the start, +1 at
// the end).
type bound struct {
	prop string
	inf  int
	kind string    // mapcommons.LitDate or LitTimestamp, for a literal
	str  string    // the literal: a date, or a timestamp in UTC (RFC 3339)
	t    time.Time // the literal's instant (a date: its midnight, UTC)
}

// tempOperand is an instant (start and end the same) or an interval.
type tempOperand struct {
	start, end bound
}

func (b bound) isLit() bool { return b.prop == "" && b.inf == 0 }

// instantLit reads a date or timestamp literal: kind is LitDate or
// LitTimestamp, or LitString for a string of either form (an interval's
// ends are plain strings).
func instantLit(name, kind, s string) (bound, error) {
	if kind == mapcommons.LitString || kind == mapcommons.LitDate {
		if t, err := time.Parse(time.DateOnly, s); err == nil {
			return bound{kind: mapcommons.LitDate, str: s, t: t}, nil
		}
	}
	if kind == mapcommons.LitString || kind == mapcommons.LitTimestamp {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			t = t.UTC()
			return bound{kind: mapcommons.LitTimestamp, str: t.Format(time.RFC3339Nano), t: t}, nil
		}
	}
	return bound{}, mapcommons.Errorf(mapcommons.EINVALID, "%s: %q is neither a date (2024-05-01) nor a timestamp (2024-05-01T12:00:00Z)", strings.ToUpper(name), s)
}

// instantOf is the bound an operand of a temporal function gives: a
// property, or a DATE or TIMESTAMP literal; in an interval (end: -1 for
// its start, +1 for its end) also a string of a date or a timestamp, or '..'.
func instantOf(name string, o operand, end int) (bound, error) {
	if o.caseI || o.accentI {
		return bound{}, mapcommons.Errorf(mapcommons.EINVALID, "%s: CASEI or ACCENTI of %q is not an instant", strings.ToUpper(name), o.prop)
	}
	if !o.isLit {
		return bound{prop: o.prop}, nil
	}
	switch o.lit.Kind {
	case mapcommons.LitDate, mapcommons.LitTimestamp:
		return instantLit(name, o.lit.Kind, o.lit.Str)
	case mapcommons.LitString:
		if end != 0 {
			if o.lit.Str == ".." {
				return bound{inf: end}, nil
			}
			return instantLit(name, o.lit.Kind, o.lit.Str)
		}
	}
	return bound{}, mapcommons.Errorf(mapcommons.EINVALID, "%s: %s is not an instant (a property, DATE(…), TIMESTAMP(…)) or an INTERVAL", strings.ToUpper(name), o.lit)
}

// temporal builds the expression of the temporal function op of a and b.
func temporal(op string, a, b tempOperand) (*mapcommons.Expr, error) {
	s1, e1, s2, e2 := a.start, a.end, b.start, b.end
	t := &tempBuilder{name: strings.ToUpper(op)}
	var e *mapcommons.Expr
	switch op {
	case "t_after":
		e = t.cmp(s1, ">", e2)
	case "t_before":
		e = t.cmp(e1, "<", s2)
	case "t_contains":
		e = t.and(t.cmp(s1, "<", s2), t.cmp(e1, ">", e2))
	case "t_disjoint":
		e = t.or(t.cmp(e1, "<", s2), t.cmp(s1, ">", e2))
	case "t_during":
		e = t.and(t.cmp(s1, ">", s2), t.cmp(e1, "<", e2))
	case "t_equals":
		e = t.and(t.cmp(s1, "=", s2), t.cmp(e1, "=", e2))
	case "t_finishedby":
		e = t.and(t.cmp(s1, "<", s2), t.cmp(e1, "=", e2))
	case "t_finishes":
		e = t.and(t.cmp(s1, ">", s2), t.cmp(e1, "=", e2))
	case "t_intersects":
		e = t.and(t.cmp(s1, "<=", e2), t.cmp(e1, ">=", s2))
	case "t_meets":
		e = t.cmp(e1, "=", s2)
	case "t_metby":
		e = t.cmp(s1, "=", e2)
	case "t_overlappedby":
		e = t.and(t.cmp(s1, ">", s2), t.cmp(s1, "<", e2), t.cmp(e1, ">", e2))
	case "t_overlaps":
		e = t.and(t.cmp(s1, "<", s2), t.cmp(e1, ">", s2), t.cmp(e1, "<", e2))
	case "t_startedby":
		e = t.and(t.cmp(s1, "=", s2), t.cmp(e1, ">", e2))
	case "t_starts":
		e = t.and(t.cmp(s1, "=", s2), t.cmp(e1, "<", e2))
	default:
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "unknown temporal function %q", op)
	}
	if t.err != nil {
		return nil, t.err
	}
	// A null property makes the whole UNKNOWN, not only the comparisons
	// it takes part in: with one property every comparison is of it (the
	// constant ones folded), unless the whole is a constant; otherwise e
	// becomes (e AND known) OR NOT known, known being TRUE when every
	// property has a value and UNKNOWN when one has none.
	var props []string
	for _, x := range []bound{s1, e1, s2, e2} {
		if x.prop != "" && !containsStr(props, x.prop) {
			props = append(props, x.prop)
		}
	}
	constant := e.Op == mapcommons.ExprTrue || e.Op == mapcommons.ExprFalse
	if len(props) > 1 || len(props) == 1 && constant {
		var known []*mapcommons.Expr
		for _, p := range props {
			known = append(known, hasValue(p))
		}
		k := t.and(known...)
		e = t.or(t.and(e, k), not(k))
	}
	return e, nil
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hasValue is TRUE for a property with a value (every text is at least
// the empty one) and UNKNOWN for a null one.
func hasValue(p string) *mapcommons.Expr {
	return &mapcommons.Expr{Op: mapcommons.ExprGe, Property: p, Values: []mapcommons.Literal{{Kind: mapcommons.LitString}}}
}

// tempBuilder builds the comparisons of a temporal function, folding the
// constant ones, and keeps the first error.
type tempBuilder struct {
	name string
	err  error
}

var flipOp = map[string]string{"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// holds applies the comparison op to the result c of a comparison.
func holds(op string, c int) bool {
	switch op {
	case "=":
		return c == 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return c != 0
}

// cmp is x op y. Instants compare in time, a date with a timestamp at the
// date's granularity: the timestamp's date (UTC) is compared with it, so
// that a date stands for its whole day (as the datetime parameter takes
// it). '..' is before (at an interval's start) or after (at its end)
// every instant. A property holding dates and timestamps as ISO 8601
// text is compared with a literal by the same rule, in text.
func (t *tempBuilder) cmp(x bound, op string, y bound) *mapcommons.Expr {
	if x.prop != "" && y.prop != "" {
		if t.err == nil {
			t.err = mapcommons.Errorf(mapcommons.EINVALID, "%s: comparing two properties (%q and %q) is not supported", t.name, x.prop, y.prop)
		}
		return boolExpr(false)
	}
	if x.prop == "" && y.prop != "" {
		x, y, op = y, x, flipOp[op]
	}
	switch {
	case x.inf != 0 || y.inf != 0:
		// The open end against anything but itself is a constant order.
		c := x.inf - y.inf
		if x.inf != 0 && y.inf != 0 && x.inf == y.inf {
			c = 0
		}
		r := holds(op, sign(c))
		if x.prop != "" { // TRUE or FALSE when the property has a value
			if r {
				return hasValue(x.prop)
			}
			return not(hasValue(x.prop))
		}
		return boolExpr(r)
	case x.prop == "": // two literals
		a, b := x.t, y.t
		if x.kind != y.kind { // at the date's granularity
			a, b = day(a), day(b)
		}
		return boolExpr(holds(op, a.Compare(b)))
	}
	p, lit := x.prop, y
	c := func(op, kind, s string) *mapcommons.Expr {
		return &mapcommons.Expr{Op: op, Property: p, Values: []mapcommons.Literal{{Kind: kind, Str: s}}}
	}
	if lit.kind == mapcommons.LitDate {
		// date(v) op D, v a date or a timestamp "DThh…" (which sorts
		// after D and before D+"T99").
		d, top := lit.str, lit.str+"T99"
		switch op {
		case "=":
			return t.and(c(">=", mapcommons.LitDate, d), c("<=", mapcommons.LitString, top))
		case "<":
			return c("<", mapcommons.LitDate, d)
		case "<=":
			return c("<=", mapcommons.LitString, top)
		case ">":
			return c(">", mapcommons.LitString, top)
		case ">=":
			return c(">=", mapcommons.LitDate, d)
		}
		return not(t.cmp(x, "=", y))
	}
	// A timestamp T of date D: a timestamp value compares with T, a date
	// value with D (D sorts before T, and before every other timestamp
	// of its day).
	ts, d := lit.str, lit.str[:len(time.DateOnly)]
	switch op {
	case "=":
		return t.or(c("=", mapcommons.LitTimestamp, ts), c("=", mapcommons.LitDate, d))
	case "<":
		return t.and(c("<", mapcommons.LitTimestamp, ts), not(c("=", mapcommons.LitDate, d)))
	case "<=":
		return c("<=", mapcommons.LitTimestamp, ts)
	case ">":
		return c(">", mapcommons.LitTimestamp, ts)
	case ">=":
		return t.or(c(">=", mapcommons.LitTimestamp, ts), c("=", mapcommons.LitDate, d))
	}
	return not(t.cmp(x, "=", y))
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// day is the date (midnight UTC) of an instant.
func day(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// and joins conditions, folding TRUE and FALSE.
func (t *tempBuilder) and(es ...*mapcommons.Expr) *mapcommons.Expr {
	return t.join(mapcommons.ExprAnd, mapcommons.ExprTrue, mapcommons.ExprFalse, es)
}

// or joins conditions, folding TRUE and FALSE.
func (t *tempBuilder) or(es ...*mapcommons.Expr) *mapcommons.Expr {
	return t.join(mapcommons.ExprOr, mapcommons.ExprFalse, mapcommons.ExprTrue, es)
}

// join is es joined by op: unit (TRUE for and) drops out, zero (FALSE for
// and) is the whole.
func (t *tempBuilder) join(op, unit, zero string, es []*mapcommons.Expr) *mapcommons.Expr {
	var args []*mapcommons.Expr
	for _, e := range es {
		switch e.Op {
		case unit:
			continue
		case zero:
			return e
		}
		subs := []*mapcommons.Expr{e}
		if e.Op == op {
			subs = e.Args
		}
		for _, sub := range subs {
			if !slices.ContainsFunc(args, func(a *mapcommons.Expr) bool { return reflect.DeepEqual(a, sub) }) {
				args = append(args, sub) // an instant's start and end give the same comparison
			}
		}
	}
	switch len(args) {
	case 0:
		return &mapcommons.Expr{Op: unit}
	case 1:
		return args[0]
	}
	return &mapcommons.Expr{Op: op, Args: args}
}

// temporalText: T_… '(' operand ',' operand ')', each an instant (a
// property, DATE(…), TIMESTAMP(…)) or INTERVAL(start, end).
func (p *textParser) temporal(op string) (*mapcommons.Expr, error) {
	name := strings.ToUpper(op)
	pos := p.tok.pos
	if err := p.next(); err != nil {
		return nil, err
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var args []tempOperand
	for i := 0; i < 2; i++ {
		if i == 1 {
			if p.is(")") {
				return nil, p.fail("%s takes two arguments, instants or intervals, not one", name)
			}
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
		a, err := p.temporalOperand(op)
		if err != nil {
			if msg := mapcommons.ErrorMessage(err); !strings.Contains(msg, name) {
				return nil, mapcommons.Errorf(mapcommons.EINVALID, "%s (in %s)", msg, name)
			}
			return nil, err
		}
		args = append(args, a)
	}
	if p.is(",") {
		return nil, p.fail("%s takes two arguments, instants or intervals, not more", name)
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	e, err := temporal(op, args[0], args[1])
	if err != nil {
		return nil, failAt(pos, "%s", mapcommons.ErrorMessage(err))
	}
	return e, nil
}

func (p *textParser) temporalOperand(op string) (tempOperand, error) {
	if p.is("INTERVAL") {
		if err := p.next(); err != nil {
			return tempOperand{}, err
		}
		if err := p.expect("("); err != nil {
			return tempOperand{}, err
		}
		var ends [2]bound
		for i := range ends {
			if i == 1 {
				if err := p.expect(","); err != nil {
					return tempOperand{}, err
				}
			}
			o, err := p.operand()
			if err != nil {
				return tempOperand{}, err
			}
			if ends[i], err = instantOf(op, o, 2*i-1); err != nil {
				return tempOperand{}, failAt(o.pos, "%s", mapcommons.ErrorMessage(err))
			}
		}
		return tempOperand{ends[0], ends[1]}, p.expect(")")
	}
	o, err := p.operand()
	if err != nil {
		return tempOperand{}, err
	}
	b, err := instantOf(op, o, 0)
	if err != nil {
		return tempOperand{}, failAt(o.pos, "%s", mapcommons.ErrorMessage(err))
	}
	return tempOperand{b, b}, nil
}

// temporalJSON reads the arguments of a temporal function: instants
// ({"property": …}, {"date": …}, {"timestamp": …}) or {"interval": [start,
// end]}, whose ends are also strings (a date, a timestamp or "..").
func temporalJSON(op string, args []any) (*mapcommons.Expr, *jsonError) {
	if len(args) != 2 {
		return nil, jfail("%s takes 2 arguments, instants or intervals, not %d", op, len(args)).at("args")
	}
	var ops []tempOperand
	for i, a := range args {
		step := "args[" + strconv.Itoa(i) + "]"
		if m, ok := a.(map[string]any); ok && len(m) == 1 && m["interval"] != nil {
			list, ok := m["interval"].([]any)
			if !ok || len(list) != 2 {
				return nil, jfail("%s: an interval is an array of its start and its end", op).at("interval").at(step)
			}
			var ends [2]bound
			for j, v := range list {
				jstep := "[" + strconv.Itoa(j) + "]"
				o, err := operandJSON(v)
				if err != nil {
					return nil, err.at(jstep).at("interval").at(step)
				}
				b, berr := instantOf(op, o, 2*j-1)
				if berr != nil {
					return nil, jfail("%s", mapcommons.ErrorMessage(berr)).at(jstep).at("interval").at(step)
				}
				ends[j] = b
			}
			ops = append(ops, tempOperand{ends[0], ends[1]})
			continue
		}
		o, err := operandJSON(a)
		if err != nil {
			return nil, err.at(step)
		}
		b, berr := instantOf(op, o, 0)
		if berr != nil {
			return nil, jfail("%s", mapcommons.ErrorMessage(berr)).at(step)
		}
		ops = append(ops, tempOperand{b, b})
	}
	e, err := temporal(op, ops[0], ops[1])
	if err != nil {
		return nil, jfail("%s", mapcommons.ErrorMessage(err))
	}
	return e, nil
}
