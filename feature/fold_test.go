package feature_test

import (
	"context"
	"testing"

	"mapcommons"
	"mapcommons/cql2"
	"mapcommons/feature"
)

// TestCaseAccentInsensitive: CASEI and ACCENTI of a property fold its
// value before =, <, IN (a list and a set), BETWEEN and LIKE test it; a
// null is unknown; a short ASCII value folds with no allocation.
func TestCaseAccentInsensitive(t *testing.T) {
	attrs := []mapcommons.Attribute{{Name: "s", Type: mapcommons.AttrString}}
	ctx := context.Background()
	for _, c := range []struct {
		filter string
		yes    []any
		no     []any
	}{
		{`CASEI(s) = CASEI('Straße')`, []any{"STRASSE", "straße", "Strasse"}, []any{"Strase", "Straβe", nil}},
		{`CASEI(s) = 'Straße'`, nil, []any{"Straße", "STRASSE"}}, // the literal as it is: never folded
		{`s = CASEI('ABC')`, []any{"abc"}, []any{"ABC"}},
		{`ACCENTI(s) = ACCENTI('débárquér')`, []any{"debarquer", "débarquer", "de\u0301barquer"}, []any{"Debarquer", nil}},
		{`CASEI(ACCENTI(s)) = CASEI(ACCENTI('Beyoncé'))`, []any{"BEYONCE", "beyoncé", "BEYONCÉ"}, []any{"beyonc"}},
		{`CASEI(s) IN (CASEI('Οδος'), CASEI('Straße'))`, []any{"ΟΔΟΣ", "οδος", "STRASSE"}, []any{"odos", nil}},
		{`CASEI(s) IN ('a','b','c','d','e','f','g','h','i','j')`, []any{"J", "a"}, []any{"k"}},
		{`CASEI(s) LIKE CASEI('%Calcutta%')`, []any{"CALCUTTA survey", "new calcutta"}, []any{"Kolkata", nil}},
		{`ACCENTI(s) LIKE 'e_e%'`, []any{"été", "eve"}, []any{"Été"}},
		{`CASEI(s) BETWEEN 'b' AND 'c'`, []any{"B", "Bz", "C"}, []any{"A", "Ca"}},
		{`CASEI(s) < 'b'`, []any{"A", "a"}, []any{"B", "b"}},
		{`NOT CASEI(s) = 'x'`, []any{"y"}, []any{"X", nil}},
	} {
		e, err := cql2.ParseText(c.filter)
		if err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		if err := (&mapcommons.FeatureQuery{Where: e}).Validate(attrs); err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		w := feature.CompileWhere(attrs, e)
		for _, set := range []struct {
			vals []any
			want bool
		}{{c.yes, true}, {c.no, false}} {
			for _, v := range set.vals {
				if got, err := w.Match(ctx, []any{v}, nil); err != nil || got != set.want {
					t.Errorf("%s of %q: %v, %v; want %v", c.filter, v, got, err, set.want)
				}
			}
		}
	}
	// Folding adds no allocation to a match of a short ASCII value
	// (valueCells has its own).
	allocs := func(filter string) float64 {
		e, _ := cql2.ParseText(filter)
		w := feature.CompileWhere(attrs, e)
		vals := []any{"Hello, World"}
		return testing.AllocsPerRun(100, func() { _, _ = w.Match(ctx, vals, nil) })
	}
	if plain, folded := allocs(`s = 'Hello, World'`), allocs(`CASEI(ACCENTI(s)) = 'hello, world'`); folded != plain {
		t.Errorf("CASEI and ACCENTI of an ASCII value: %v allocations a match, %v without", folded, plain)
	}
}
