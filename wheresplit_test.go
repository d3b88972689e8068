package mapcommons_test

import (
	"fmt"
	"testing"

	"mapcommons"
	"mapcommons/cql2"
)

// TestSplitWhere checks which conditions of a Where become filters (that
// the stores serve through their attribute indexes) and what is left to
// test per row. That the split gives the same answers is the query
// oracle's (storetest) and the stores' comparison's (postgres) to check.
func TestSplitWhere(t *testing.T) {
	for _, c := range []struct{ where, filters, rest string }{
		{`id = 123456`, `[{id equals [123456]}]`, ``},
		{`x BETWEEN 500 AND 501`, `[{x min [500]} {x max [501]}]`, ``},
		{`x > 1.5 AND x < 2 AND x >= -0.25 AND x <= 1e300`, `[{x greater [1.5]} {x less [2]} {x min [-0.25]} {x max [1e+300]}]`, ``},
		{`cat IN ('c1', 'c2')`, `[{cat in [c1 c2]}]`, ``},
		{`cat = 'c1' OR cat = 'c2' OR cat IN ('c3')`, `[{cat in [c1 c2 c3]}]`, ``},
		{`b = true AND (n = 1 AND s = 'x')`, `[{b equals [true]} {n equals [1]} {s equals [x]}]`, ``},
		{`s LIKE 'abc%'`, `[{s min [abc]} {s less [abd]}]`, ``},
		{`s LIKE 'ab\%c%%'`, `[{s min [ab%c]} {s less [ab%d]}]`, ``},
		{`s LIKE 'plain'`, `[{s equals [plain]}]`, ``},
		{`s LIKE 'a_c'`, `[{s min [a]} {s less [b]}]`, `like`},
		{`s LIKE 'ab%c'`, `[{s min [ab]} {s less [ac]}]`, `like`},
		{`s LIKE '%c'`, `[]`, `like`},
		{`n <> 3`, `[]`, `<>`},
		{`n = 3 AND n <> 4`, `[{n equals [3]}]`, `<>`},
		{`n = 3 OR m = 4`, `[]`, `or`},
		{`n = 3 OR n > 4`, `[]`, `or`},
		{`NOT (n = 3)`, `[]`, `not`},
		{`n IS NULL AND x IS NULL`, `[]`, `and`},
		{`S_INTERSECTS(geometry, BBOX(0, 0, 1, 1)) AND cat = 'c3'`, `[{cat equals [c3]}]`, `s_intersects`},
		{`geometry IS NULL`, `[]`, `isNull`},
	} {
		e, err := cql2.ParseText(c.where)
		if err != nil {
			t.Fatalf("%s: %v", c.where, err)
		}
		fs, rest := mapcommons.SplitWhere(e)
		if fs == nil {
			fs = []mapcommons.Filter{}
		}
		restOp := ""
		if rest != nil {
			restOp = rest.Op
		}
		if got := fmt.Sprint(fs); got != c.filters || restOp != c.rest {
			t.Errorf("%s: filters %s, rest %q; want %s, %q", c.where, got, restOp, c.filters, c.rest)
		}
	}
	// An all-0xff prefix has no end: its range is open above.
	fs, rest := mapcommons.SplitWhere(&mapcommons.Expr{Op: mapcommons.ExprLike, Property: "s", Values: []mapcommons.Literal{{Kind: mapcommons.LitString, Str: "\xff\xff%"}}})
	if fmt.Sprint(fs) != "[{s min [\xff\xff]}]" || rest != nil {
		t.Errorf("LIKE '\\xff\\xff%%': filters %q, rest %v", fmt.Sprint(fs), rest)
	}
	// Filters from a caller may not use the planner's own operations.
	attrs := []mapcommons.Attribute{{Name: "n", Type: mapcommons.AttrInteger}}
	q := mapcommons.FeatureQuery{Filters: []mapcommons.Filter{{Attr: "n", Op: mapcommons.OpLess, Values: []string{"1"}}}}
	if err := q.Validate(attrs); err == nil {
		t.Errorf("a caller's filter of operation %q passed Validate", mapcommons.OpLess)
	}
}

// TestSplitWhereFolded: a comparison of a folded value (CASEI, ACCENTI)
// is no filter, alone or in an OR of equalities: the indexes hold the
// values as they are.
func TestSplitWhereFolded(t *testing.T) {
	lit := []mapcommons.Literal{{Kind: mapcommons.LitString, Str: "abc"}}
	for _, e := range []*mapcommons.Expr{
		{Op: mapcommons.ExprEq, Property: "s", Values: lit, CaseI: true},
		{Op: mapcommons.ExprLike, Property: "s", Values: lit, AccentI: true},
		{Op: mapcommons.ExprIn, Property: "s", Values: lit, CaseI: true, AccentI: true},
		{Op: mapcommons.ExprOr, Args: []*mapcommons.Expr{
			{Op: mapcommons.ExprEq, Property: "s", Values: lit},
			{Op: mapcommons.ExprEq, Property: "s", Values: lit, CaseI: true}}},
	} {
		fs, rest := mapcommons.SplitWhere(e)
		if len(fs) != 0 || rest != e {
			t.Errorf("%+v: filters %v, rest %+v", e, fs, rest)
		}
	}
	and := &mapcommons.Expr{Op: mapcommons.ExprAnd, Args: []*mapcommons.Expr{
		{Op: mapcommons.ExprEq, Property: "s", Values: lit, CaseI: true},
		{Op: mapcommons.ExprEq, Property: "t", Values: lit}}}
	fs, rest := mapcommons.SplitWhere(and)
	if len(fs) != 1 || fs[0].Attr != "t" || rest != and.Args[0] {
		t.Errorf("and: filters %v, rest %+v", fs, rest)
	}
}
