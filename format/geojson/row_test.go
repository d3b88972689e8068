package geojson

import (
	"math"
	"testing"

	"mapcommons"
)

// boxedRow is a mapcommons.Row over boxed values, for comparing AppendRow
// with AppendMembers.
type boxedRow []any

func (r boxedRow) IsNull(col int) bool   { return r[col] == nil }
func (r boxedRow) Int(col int) int64     { return r[col].(int64) }
func (r boxedRow) Float(col int) float64 { return r[col].(float64) }
func (r boxedRow) Bytes(col int) []byte  { return []byte(r[col].(string)) }
func (r boxedRow) Bool(col int) bool     { return r[col].(bool) }

// TestAppendRowMatchesValues: a feature read lazily encodes exactly as the
// same feature with boxed values.
func TestAppendRowMatchesValues(t *testing.T) {
	attrs := []mapcommons.Attribute{
		{Name: "i", Type: mapcommons.AttrInteger}, {Name: "f", Type: mapcommons.AttrFloat},
		{Name: "s", Type: mapcommons.AttrString}, {Name: "b", Type: mapcommons.AttrBoolean},
		{Name: "d", Type: mapcommons.AttrDate},
	}
	keys := Keys(attrs)
	for _, vals := range [][]any{
		{int64(-7), 2.5, "a \"quoted\"\n\u2028 ünïcode", true, "2011-03-10"},
		{nil, nil, nil, nil, nil},
		{int64(math.MaxInt64), 3.0, "", false, ""},
		{int64(0), math.Inf(1), "\xff bad utf-8", true, "x"},
		{int64(1), math.NaN(), "</script>", false, nil},
		{int64(2), 1e300, "tab\there", nil, "2020-01-01T00:00:00Z"},
	} {
		want := string(AppendMembers(nil, keys, vals))
		got := string(AppendFeatureMembers(nil, keys, attrs, &mapcommons.Feature{Row: boxedRow(vals)}))
		if got != want {
			t.Errorf("lazy %s\nboxed %s", got, want)
		}
		f := &mapcommons.Feature{Values: vals}
		if got := string(AppendFeatureMembers(nil, keys, attrs, f)); got != want {
			t.Errorf("boxed through AppendFeatureMembers %s, want %s", got, want)
		}
	}
}
