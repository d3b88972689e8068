package cql2

import (
	"context"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/feature"
)

// TestFunctionsAndArrays: the functions offered, array functions over a
// property holding a JSON array and literals, IN and LIKE of operands,
// evaluated on features in both encodings alike.
func TestFunctionsAndArrays(t *testing.T) {
	attrs := []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}, {Name: "n", Type: mapcommons.AttrFloat}, {Name: "tags", Type: mapcommons.AttrString}, {Name: "m", Type: mapcommons.AttrFloat}}
	feat := []any{"  Olinda ", -2.5, `["a", "b", 3.0, "2012-08-10T07:30:00+02:00"]`, 3.0}
	for _, c := range []struct {
		text, json string
		want       bool
	}{
		{"lower(trim(name)) = 'olinda'", `{"op":"=","args":[{"op":"lower","args":[{"op":"trim","args":[{"property":"name"}]}]},"olinda"]}`, true},
		{"upper(name) LIKE '%OLI%'", `{"op":"like","args":[{"op":"upper","args":[{"property":"name"}]},"%OLI%"]}`, true},
		{"length(name) = 9", `{"op":"=","args":[{"op":"length","args":[{"property":"name"}]},9]}`, true},
		{"abs(n) > 2 AND floor(n) = -3 AND ceil(n) = -2 AND round(n) = -3", "", true},
		{"m IN (n, 3)", `{"op":"in","args":[{"property":"m"},[{"property":"n"},3]]}`, true},
		{"m IN (n, 4)", "", false},
		{"3 IN (m)", "", true},
		{"A_CONTAINS(tags, ('a', 3))", `{"op":"a_contains","args":[{"property":"tags"},["a",3]]}`, true},
		{"A_CONTAINS(tags, ('a', 'c'))", "", false},
		{"A_CONTAINEDBY(tags, ('a', 'b', 3, TIMESTAMP('2012-08-10T05:30:00Z'), 'z'))", "", true},
		{"A_EQUALS(tags, ('a', 'b', 3, TIMESTAMP('2012-08-10T05:30:00.000Z')))", "", true},
		{"A_EQUALS(tags, ('b', 'a', 3, TIMESTAMP('2012-08-10T05:30:00Z')))", "", false},
		{"A_OVERLAPS(tags, ('x', 3))", "", true},
		{"A_OVERLAPS(tags, ('x', 'y'))", "", false},
		{"A_OVERLAPS(name, ('x'))", "", false}, // not an array: unknown
		{"NOT A_OVERLAPS(name, ('x'))", "", false},
	} {
		for enc, src := range map[string]string{"cql2-text": c.text, "cql2-json": c.json} {
			if src == "" {
				continue
			}
			e, err := Parse(enc, src)
			if err != nil {
				t.Errorf("%s: %v", src, err)
				continue
			}
			if err := e.Validate(attrs); err != nil {
				t.Errorf("%s: %v", src, err)
				continue
			}
			got, err := feature.CompileWhere(attrs, e).Match(context.Background(), feat, nil)
			if err != nil || got != c.want {
				t.Errorf("%s: %v %v, want %v", src, got, err, c.want)
			}
		}
	}
	for _, c := range []struct{ filter, want string }{
		{"lower(n) = 'x'", "lower of a string, not of a number"},
		{"abs(name) = 1", "abs of a number, not of a string"},
		{"A_CONTAINS(n, ('a'))", "not an array"},
		{"lower(name, name) = 'x'", "lower takes 1 arguments, not 2"},
	} {
		e, err := Parse("", c.filter)
		if err == nil {
			err = e.Validate(attrs)
		}
		if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.filter, err, c.want)
		}
	}
}
