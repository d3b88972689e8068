// wheresplit.go: the one planner's first step, shared by every store. A
// Where (a CQL2 filter) is split into the attribute Filters its top-level
// conditions are equivalent to, which the stores serve through their
// attribute indexes (and the PostgreSQL store in SQL, paged there), and
// the rest, which they test per row.
package mapcommons

import (
	"cmp"
	"strconv"
	"strings"
)

// Filter operations that only SplitWhere gives (from a Where's strict
// comparisons); FeatureQuery.Validate refuses them from a caller, whose
// filter parameters are min, max, equals and in.
const (
	OpLess    = "less"    // the value is below Values[0]
	OpGreater = "greater" // the value is above Values[0]
)

// SplitWhere splits a validated expression into filters and a rest, so
// that a feature matches e exactly when it passes every filter and rest
// is true (rest nil: nothing left). The filters come from e's top-level
// conditions (e itself, or the conjuncts of its AND):
//
//   - a comparison =, <, <=, >, >= of an attribute with a literal, a
//     BETWEEN, an IN: the equals, less, max, greater, min and in filters
//     that are the same test (three-valued logic aside, which at the top
//     level excludes a null as a filter does);
//   - an OR of equalities and INs of one attribute: one in filter;
//   - a LIKE without wildcards: an equality; one whose only wildcards
//     end it ('abc%'): the range of the values that start with its prefix;
//     one with a literal prefix and more ('ab%c'): that range as filters
//     that narrow, the LIKE itself staying in the rest.
//
// A comparison or BETWEEN with a timestamp (text of 20 bytes or more, a
// 'T' after the date) gives filters that only narrow: the indexes order
// values as bytes, where "12:00:00Z" is after "12:00:00.5Z", so the
// filters take in the literal's whole second (from its first 19 bytes)
// and the exact test, in time order (CompareTimes), stays in the rest.
//
// Everything else stays in the rest: <>, IS NULL, NOT, ORs of other
// kinds, spatial tests (whose top-level BBOX the stores' spatial indexes
// serve already).
func SplitWhere(e *Expr) (filters []Filter, rest *Expr) {
	if e == nil {
		return nil, nil
	}
	all := Conjuncts(e)
	var left []*Expr
	for _, c := range all {
		fs, exact := exprFilters(c)
		filters = append(filters, fs...)
		if !exact {
			left = append(left, c)
		}
	}
	switch {
	case len(left) == 0:
		return filters, nil
	case len(left) == 1:
		return filters, left[0]
	case len(left) == len(all):
		return filters, e // nothing taken out: e as it was
	}
	return filters, &Expr{Op: ExprAnd, Args: left}
}

// Conjuncts are the top-level conjuncts of e: e itself, or the parts of
// its AND (nested ANDs flattened).
func Conjuncts(e *Expr) []*Expr { return conjuncts(e, nil) }

// Disjuncts are the branches of e: e itself, or the parts of its OR
// (nested ORs flattened).
func Disjuncts(e *Expr) []*Expr { return flatten(e, ExprOr, nil) }

// conjuncts appends the top-level conjuncts of e (nested ANDs flattened).
func conjuncts(e *Expr, out []*Expr) []*Expr { return flatten(e, ExprAnd, out) }

// flatten appends the parts of e's nested operations op (e itself when it
// is another operation).
func flatten(e *Expr, op string, out []*Expr) []*Expr {
	if e.Op != op {
		return append(out, e)
	}
	for _, a := range e.Args {
		out = flatten(a, op, out)
	}
	return out
}

// filterValue is a literal as a filter value: the text that parses back
// to it (numbers in the shortest form that round-trips).
func filterValue(l Literal) string {
	switch l.Kind {
	case LitNumber:
		return strconv.FormatFloat(l.Num, 'g', -1, 64)
	case LitBoolean:
		return strconv.FormatBool(l.Bool)
	}
	return l.Str
}

// exprFilters gives the filters of one top-level condition and whether
// they are the whole of it (else they only narrow, and it stays).
func exprFilters(c *Expr) (fs []Filter, exact bool) {
	if c.Op == ExprOr {
		if f, ok := orEqualities(c); ok {
			return []Filter{f}, true
		}
		return nil, false
	}
	if c.Property == "" || IsGeometryProperty(c.Property) || c.CaseI || c.AccentI {
		return nil, false // a folded value is not what the indexes hold
	}
	one := func(op string, l Literal) Filter {
		return Filter{Attr: c.Property, Op: op, Values: []string{filterValue(l)}}
	}
	if fs, ok := timeFilters(c); ok {
		return fs, false
	}
	switch c.Op {
	case ExprEq:
		return []Filter{one(OpEquals, c.Values[0])}, true
	case ExprLt:
		return []Filter{one(OpLess, c.Values[0])}, true
	case ExprLe:
		return []Filter{one(OpMax, c.Values[0])}, true
	case ExprGt:
		return []Filter{one(OpGreater, c.Values[0])}, true
	case ExprGe:
		return []Filter{one(OpMin, c.Values[0])}, true
	case ExprBetween:
		return []Filter{one(OpMin, c.Values[0]), one(OpMax, c.Values[1])}, true
	case ExprIn:
		f := Filter{Attr: c.Property, Op: OpIn}
		for _, v := range c.Values {
			f.Values = append(f.Values, filterValue(v))
		}
		return []Filter{f}, true
	case ExprLike:
		return likeFilters(c.Property, c.Values[0].Str)
	}
	return nil, false
}

// likeFilters are the filters of property LIKE pattern (see SplitWhere):
// '%' and '_' are its wildcards, '\' makes the next character literal.
func likeFilters(prop, pattern string) ([]Filter, bool) {
	var prefix strings.Builder
	i := 0
	for i < len(pattern) {
		c := pattern[i]
		if c == '%' || c == '_' {
			break
		}
		if c == '\\' && i+1 < len(pattern) {
			i++
		}
		prefix.WriteByte(pattern[i])
		i++
	}
	p := prefix.String()
	if i == len(pattern) { // no wildcard: an equality
		return []Filter{{Attr: prop, Op: OpEquals, Values: []string{p}}}, true
	}
	if p == "" {
		return nil, false
	}
	exact := strings.Trim(pattern[i:], "%") == ""
	fs := []Filter{{Attr: prop, Op: OpMin, Values: []string{p}}}
	if next, ok := prefixEnd(p); ok {
		fs = append(fs, Filter{Attr: prop, Op: OpLess, Values: []string{next}})
	}
	return fs, exact
}

// prefixEnd is the least string above every string that starts with p
// (byte by byte): p with its last byte below 0xff raised, what follows
// it dropped; false when p is all 0xff bytes.
func prefixEnd(p string) (string, bool) {
	b := []byte(p)
	for k := len(b) - 1; k >= 0; k-- {
		if b[k] < 0xff {
			b[k]++
			return string(b[:k+1]), true
		}
	}
	return "", false
}

// orEqualities is the in filter of an OR whose every branch is an
// equality or an IN of the same attribute (false otherwise); see
// SplitWhere.
func orEqualities(c *Expr) (Filter, bool) {
	if c.Op != ExprOr {
		return Filter{}, false
	}
	f := Filter{Op: OpIn}
	for _, e := range Disjuncts(c) {
		if e.Op != ExprEq && e.Op != ExprIn || e.CaseI || e.AccentI || e.Operands != nil {
			return Filter{}, false
		}
		if f.Attr == "" {
			f.Attr = e.Property
		}
		if e.Property != f.Attr || IsGeometryProperty(e.Property) {
			return Filter{}, false
		}
		for _, v := range e.Values {
			f.Values = append(f.Values, filterValue(v))
		}
		if len(f.Values) > MaxInValues {
			return Filter{}, false
		}
	}
	return f, true
}

// timestampText reports whether a literal is the text of a timestamp
// (what CompareTimes and the bytes of it may order apart).
func timestampText(l Literal) bool {
	return l.Kind != LitNumber && l.Kind != LitBoolean && len(l.Str) >= 20 && l.Str[10] == 'T'
}

// timeFilters are the filters that narrow an ordering comparison or a
// BETWEEN of a timestamp to the whole seconds it may hold (see
// SplitWhere); false for another condition.
func timeFilters(c *Expr) ([]Filter, bool) {
	switch c.Op {
	case ExprLt, ExprLe, ExprGt, ExprGe, ExprBetween:
	default:
		return nil, false
	}
	if !timestampText(c.Values[0]) && (c.Op != ExprBetween || !timestampText(c.Values[1])) {
		return nil, false
	}
	from := func(l Literal) Filter { // the values of its second and after
		v := filterValue(l)
		if timestampText(l) {
			v = v[:19]
		}
		return Filter{Attr: c.Property, Op: OpMin, Values: []string{v}}
	}
	upTo := func(l Literal) Filter { // the values of its second and before
		if !timestampText(l) {
			return Filter{Attr: c.Property, Op: OpMax, Values: []string{filterValue(l)}}
		}
		return Filter{Attr: c.Property, Op: OpLess, Values: []string{l.Str[:19] + "\x7f"}}
	}
	switch c.Op {
	case ExprLt, ExprLe:
		return []Filter{upTo(c.Values[0])}, true
	case ExprGt, ExprGe:
		return []Filter{from(c.Values[0])}, true
	}
	return []Filter{from(c.Values[0]), upTo(c.Values[1])}, true
}

// CompareTimes compares two stored dates or timestamps (ISO 8601 text;
// timestamps in UTC as RFC 3339 with the fewest digits of a fraction, as
// uploads store them) in time order: as their bytes, but with the 'Z' that
// ends a timestamp before any other byte, so that 12:00:00Z comes before
// 12:00:00.5Z, and .5Z before .55Z. Text of another form compares as its
// bytes.
func CompareTimes(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if x, y := a[i], b[i]; x != y {
			switch {
			case x == 'Z':
				return -1
			case y == 'Z':
				return 1
			}
			return cmp.Compare(x, y)
		}
	}
	return cmp.Compare(len(a), len(b))
}
