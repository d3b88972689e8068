package feature_test

import (
	"context"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/cql2"
	"mapcommons/feature"
)

// TestPropertyPropertyArithmetic: comparisons and BETWEEN of two
// properties and of arithmetic; a null operand, a division by zero and an
// overflow are unknown (neither the comparison nor its NOT holds).
func TestPropertyPropertyArithmetic(t *testing.T) {
	attrs := []mapcommons.Attribute{{Name: "a", Type: mapcommons.AttrFloat}, {Name: "b", Type: mapcommons.AttrInteger},
		{Name: "s", Type: mapcommons.AttrString}, {Name: "u", Type: mapcommons.AttrString}, {Name: "p", Type: mapcommons.AttrBoolean}, {Name: "q", Type: mapcommons.AttrBoolean}}
	ctx := context.Background()
	row := func(a, b, s, u, p, q any) []any { return []any{a, b, s, u, p, q} }
	const unknown = 2
	for _, c := range []struct {
		filter string
		values []any
		want   int // 0 false, 1 true, unknown
	}{
		{`a = b`, row(2.0, int64(2), nil, nil, nil, nil), 1},
		{`a < b`, row(2.0, int64(2), nil, nil, nil, nil), 0},
		{`a <> b`, row(nil, int64(2), nil, nil, nil, nil), unknown},
		{`s < u`, row(nil, nil, "abc", "abd", nil, nil), 1},
		{`s = u`, row(nil, nil, "x", nil, nil, nil), unknown},
		{`p = q`, row(nil, nil, nil, nil, true, true), 1},
		{`p <> q`, row(nil, nil, nil, nil, true, false), 1},
		{`a + 1 > b * 2`, row(4.5, int64(2), nil, nil, nil, nil), 1},
		{`a - b = 0.5`, row(2.5, int64(2), nil, nil, nil, nil), 1},
		{`a / b = 1.25`, row(2.5, int64(2), nil, nil, nil, nil), 1},
		{`a / b = 0`, row(2.5, int64(0), nil, nil, nil, nil), unknown},
		{`a % b = 1`, row(7.0, int64(3), nil, nil, nil, nil), 1},
		{`a % b = -1`, row(-7.0, int64(3), nil, nil, nil, nil), 1},
		{`a % b = 0`, row(7.0, int64(0), nil, nil, nil, nil), unknown},
		{`a div b = -2`, row(-7.0, int64(3), nil, nil, nil, nil), 1},
		{`a div b = 1`, row(7.0, int64(0), nil, nil, nil, nil), unknown},
		{`a ^ b = 8`, row(2.0, int64(3), nil, nil, nil, nil), 1},
		{`a ^ b > 0`, row(10.0, int64(400), nil, nil, nil, nil), unknown}, // overflow
		{`a * a > 0`, row(1e200, nil, nil, nil, nil, nil), unknown},
		{`a ^ 0.5 > 0`, row(-4.0, nil, nil, nil, nil, nil), unknown}, // NaN
		{`b * 2 = a`, row(nil, int64(1), nil, nil, nil, nil), unknown},
		{`a BETWEEN b AND b + 1`, row(2.5, int64(2), nil, nil, nil, nil), 1},
		{`a BETWEEN b AND b + 1`, row(3.5, int64(2), nil, nil, nil, nil), 0},
		{`a BETWEEN b AND 1 / 0`, row(1.0, int64(2), nil, nil, nil, nil), 0}, // below the low end: false whatever the high
		{`a BETWEEN b AND 1 / 0`, row(3.0, int64(2), nil, nil, nil, nil), unknown},
		{`s BETWEEN u AND 'z'`, row(nil, nil, "m", "a", nil, nil), 1},
		{`a = 1 / 0`, row(1.0, nil, nil, nil, nil, nil), unknown},
		{`-a = b`, row(-2.0, int64(2), nil, nil, nil, nil), 1},
	} {
		e, err := cql2.ParseText(c.filter)
		if err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		if err := (&mapcommons.FeatureQuery{Where: e}).Validate(attrs); err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		yes, _ := feature.CompileWhere(attrs, e).Match(ctx, c.values, nil)
		no, _ := feature.CompileWhere(attrs, &mapcommons.Expr{Op: mapcommons.ExprNot, Args: []*mapcommons.Expr{e}}).Match(ctx, c.values, nil)
		got := unknown
		switch {
		case yes && !no:
			got = 1
		case no && !yes:
			got = 0
		case yes && no:
			got = -1
		}
		if got != c.want {
			t.Errorf("%s of %v: %d, want %d (0 false, 1 true, 2 unknown)", c.filter, c.values, got, c.want)
		}
	}
	// What Validate refuses.
	for _, c := range []struct{ filter, want string }{
		{`a = s`, "a number cannot be compared with a string"},
		{`s + 1 > 2`, `+: arithmetic of numbers, not of "s", a string property`},
		{`p * 2 = 2`, `*: arithmetic of numbers, not of "p", a boolean property`},
		{`a = zz + 1`, `no property "zz"`},
		{`a BETWEEN b AND s`, "a number cannot be compared with a string"},
	} {
		e, err := cql2.ParseText(c.filter)
		if err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		err = (&mapcommons.FeatureQuery{Where: e}).Validate(attrs)
		if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want EINVALID with %q", c.filter, err, c.want)
		}
	}
}
