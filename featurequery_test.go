package mapcommons_test

import (
	"slices"
	"strings"
	"testing"

	"mapcommons"
)

// TestFeatureQueryValidateLimits checks the filter values a query may not
// carry: NaN and infinities against numeric columns (NaN as a min matched
// every row), and "in" lists longer than MaxInValues.
func TestFeatureQueryValidateLimits(t *testing.T) {
	attrs := []mapcommons.Attribute{{Name: "n", Type: mapcommons.AttrInteger}, {Name: "x", Type: mapcommons.AttrFloat}, {Name: "s", Type: mapcommons.AttrString}}
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "1"
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    mapcommons.Filter
		want string // "" for valid
	}{
		{"MinNaN", mapcommons.Filter{Attr: "x", Op: "min", Values: []string{"NaN"}}, "filter[x][][min]"},
		{"MaxNaN", mapcommons.Filter{Attr: "n", Op: "max", Values: []string{"nan"}}, "filter[n][][max]"},
		{"EqualsInf", mapcommons.Filter{Attr: "x", Op: "equals", Values: []string{"Inf"}}, "filter[x][][equals]"},
		{"MinMinusInf", mapcommons.Filter{Attr: "x", Op: "min", Values: []string{"-Infinity"}}, "filter[x][][min]"},
		{"Overflow", mapcommons.Filter{Attr: "x", Op: "max", Values: []string{"1e999"}}, "filter[x][][max]"},
		{"InNaN", mapcommons.Filter{Attr: "x", Op: "in", Values: []string{"1", "NaN"}}, "filter[x][][in]"},
		{"StringNaN", mapcommons.Filter{Attr: "s", Op: "equals", Values: []string{"NaN"}}, ""},
		{"InMax", mapcommons.Filter{Attr: "n", Op: "in", Values: many(mapcommons.MaxInValues)}, ""},
		{"InTooMany", mapcommons.Filter{Attr: "n", Op: "in", Values: many(mapcommons.MaxInValues + 1)}, "filter[n][][in]: 1001 values, at most 1000"},
		{"InTooManyStrings", mapcommons.Filter{Attr: "s", Op: "in", Values: many(100000)}, "filter[s][][in]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := &mapcommons.FeatureQuery{Filters: []mapcommons.Filter{tc.f}}
			err := q.Validate(attrs)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
			case mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.HasPrefix(mapcommons.ErrorMessage(err), tc.want):
				t.Fatalf("err %v, want EINVALID starting %q", err, tc.want)
			}
		})
	}
}

// TestMapDatasetIDs: the datasets a map's layers name, each once, in
// layer order; other sources are not datasets.
func TestMapDatasetIDs(t *testing.T) {
	m := &mapcommons.Map{Layers: []mapcommons.Layer{{Source: "finder:7"}, {Source: "url:http://x/y.kml"}, {Source: "finder:3"},
		{Source: "finder:7"}, {Source: "finder:0"}, {Source: "finder:x"}}}
	if got := m.DatasetIDs(); !slices.Equal(got, []int64{7, 3}) {
		t.Fatalf("DatasetIDs = %v, want [7 3]", got)
	}
}
