package feature_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/cql2"
	"mapcommons/feature"
)

// The temporal functions of CQL2 become comparisons at parse time
// (cql2/temporal.go); this checks what the evaluator makes of them
// against Allen's relations computed directly, over random instants and
// intervals of properties holding dates, timestamps or nothing.

// tInstant is an instant of the test: a date (a day) or a timestamp, or
// an open end (inf -1 or +1).
type tInstant struct {
	t      time.Time
	isDate bool
	inf    int
}

// tText is the instant as a property's value.
func (x tInstant) tText() string {
	if x.isDate {
		return x.t.Format(time.DateOnly)
	}
	return x.t.Format(time.RFC3339)
}

// tCompare orders two instants: a date with a timestamp by the
// timestamp's day; the open ends before and after everything.
func tCompare(x, y tInstant) int {
	if x.inf != 0 || y.inf != 0 {
		switch {
		case x.inf == y.inf:
			return 0
		case x.inf < y.inf:
			return -1
		}
		return 1
	}
	a, b := x.t, y.t
	if x.isDate || y.isDate {
		a = time.Date(a.Year(), a.Month(), a.Day(), 0, 0, 0, 0, time.UTC)
		b = time.Date(b.Year(), b.Month(), b.Day(), 0, 0, 0, 0, time.UTC)
	}
	return a.Compare(b)
}

// allen is the relation op of [s1, e1] and [s2, e2] (CQL2's definitions).
func allen(op string, s1, e1, s2, e2 tInstant) bool {
	c := tCompare
	switch op {
	case "T_AFTER":
		return c(s1, e2) > 0
	case "T_BEFORE":
		return c(e1, s2) < 0
	case "T_CONTAINS":
		return c(s1, s2) < 0 && c(e1, e2) > 0
	case "T_DISJOINT":
		return c(e1, s2) < 0 || c(s1, e2) > 0
	case "T_DURING":
		return c(s1, s2) > 0 && c(e1, e2) < 0
	case "T_EQUALS":
		return c(s1, s2) == 0 && c(e1, e2) == 0
	case "T_FINISHEDBY":
		return c(s1, s2) < 0 && c(e1, e2) == 0
	case "T_FINISHES":
		return c(s1, s2) > 0 && c(e1, e2) == 0
	case "T_INTERSECTS":
		return c(s1, e2) <= 0 && c(e1, s2) >= 0
	case "T_MEETS":
		return c(e1, s2) == 0
	case "T_METBY":
		return c(s1, e2) == 0
	case "T_OVERLAPPEDBY":
		return c(s1, s2) > 0 && c(s1, e2) < 0 && c(e1, e2) > 0
	case "T_OVERLAPS":
		return c(s1, s2) < 0 && c(e1, s2) > 0 && c(e1, e2) < 0
	case "T_STARTEDBY":
		return c(s1, s2) == 0 && c(e1, e2) > 0
	case "T_STARTS":
		return c(s1, s2) == 0 && c(e1, e2) < 0
	}
	panic(op)
}

var tOps = []string{"T_AFTER", "T_BEFORE", "T_CONTAINS", "T_DISJOINT", "T_DURING", "T_EQUALS", "T_FINISHEDBY",
	"T_FINISHES", "T_INTERSECTS", "T_MEETS", "T_METBY", "T_OVERLAPPEDBY", "T_OVERLAPS", "T_STARTEDBY", "T_STARTS"}

// randInstant is a date or a timestamp on one of three days, at times
// that meet at the days' edges.
func randInstant(r *rand.Rand) tInstant {
	d := time.Date(2022, 4, 15+r.IntN(3), 0, 0, 0, 0, time.UTC)
	if r.IntN(3) == 0 {
		return tInstant{t: d, isDate: true}
	}
	hours := []time.Duration{0, 10 * time.Hour, 23*time.Hour + 59*time.Minute + 59*time.Second}
	return tInstant{t: d.Add(hours[r.IntN(len(hours))])}
}

// tBound is one end of an operand in the filter: a property (of the
// feature's values) or a literal.
type tBound struct {
	prop string // "a" or "b"
	lit  tInstant
}

func (b tBound) text(inInterval bool) string {
	switch {
	case b.prop != "":
		return b.prop
	case b.lit.inf != 0:
		return "'..'"
	case inInterval && rand.IntN(2) == 0: // a plain string in an interval
		return "'" + b.lit.tText() + "'"
	case b.lit.isDate:
		return "DATE('" + b.lit.tText() + "')"
	}
	return "TIMESTAMP('" + b.lit.tText() + "')"
}

func TestTemporalFunctions(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	attrs := []mapcommons.Attribute{{Name: "a", Type: mapcommons.AttrDate}, {Name: "b", Type: mapcommons.AttrDate}}
	ctx := context.Background()
	// operand is an instant or an interval of bounds; props says which
	// properties it may use.
	operand := func(props []string) (string, tBound, tBound) {
		pick := func(end int) tBound {
			if len(props) > 0 && r.IntN(3) > 0 {
				p := props[0]
				props = props[1:]
				return tBound{prop: p}
			}
			if end != 0 && r.IntN(5) == 0 {
				return tBound{lit: tInstant{inf: end}}
			}
			return tBound{lit: randInstant(r)}
		}
		if r.IntN(3) == 0 {
			b := pick(0)
			return b.text(false), b, b
		}
		s, e := pick(-1), pick(1)
		return "INTERVAL(" + s.text(true) + ", " + e.text(true) + ")", s, e
	}
	checked := 0
	for range 3000 {
		op := tOps[r.IntN(len(tOps))]
		at, s1, e1 := operand([]string{"a", "b"})
		bt, s2, e2 := operand(nil)
		if r.IntN(2) == 0 { // the literal first
			at, s1, e1, bt, s2, e2 = bt, s2, e2, at, s1, e1
		}
		filter := fmt.Sprintf("%s(%s, %s)", op, at, bt)
		e, err := cql2.ParseText(filter)
		if err != nil {
			t.Fatalf("%s: %v", filter, err)
		}
		if err := (&mapcommons.FeatureQuery{Where: e}).Validate(attrs); err != nil {
			t.Fatalf("%s: %v", filter, err)
		}
		w := feature.CompileWhere(attrs, e)
		nw := feature.CompileWhere(attrs, &mapcommons.Expr{Op: mapcommons.ExprNot, Args: []*mapcommons.Expr{e}})
		for range 8 {
			vals := map[string]*tInstant{}
			values := make([]any, 2)
			for i, p := range []string{"a", "b"} {
				if r.IntN(6) == 0 {
					continue // null
				}
				x := randInstant(r)
				vals[p], values[i] = &x, x.tText()
			}
			resolve := func(b tBound) (tInstant, bool) {
				if b.prop == "" {
					return b.lit, true
				}
				if v := vals[b.prop]; v != nil {
					return *v, true
				}
				return tInstant{}, false
			}
			x1, ok1 := resolve(s1)
			y1, ok2 := resolve(e1)
			x2, ok3 := resolve(s2)
			y2, ok4 := resolve(e2)
			known := ok1 && ok2 && ok3 && ok4
			want := known && allen(op, x1, y1, x2, y2)
			wantNot := known && !want
			got, err := w.Match(ctx, values, nil)
			if err != nil {
				t.Fatal(err)
			}
			gotNot, _ := nw.Match(ctx, values, nil)
			if got != want || gotNot != wantNot {
				t.Fatalf("%s with a=%v b=%v: %v, NOT %v; want %v, NOT %v\n%s", filter, values[0], values[1], got, gotNot, want, wantNot, exprString(e))
			}
			checked++
		}
	}
	t.Logf("%d evaluations checked", checked)
}

func exprString(e *mapcommons.Expr) string {
	switch e.Op {
	case mapcommons.ExprAnd, mapcommons.ExprOr, mapcommons.ExprNot:
		var parts []string
		for _, a := range e.Args {
			parts = append(parts, exprString(a))
		}
		return e.Op + "(" + strings.Join(parts, ", ") + ")"
	case mapcommons.ExprTrue, mapcommons.ExprFalse:
		return e.Op
	}
	return fmt.Sprintf("%s %s %v", e.Property, e.Op, e.Values)
}
