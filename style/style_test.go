package style

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"mapcommons"
)

func TestParseColor(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0xFF0000", 0xFF0000, true}, {"#00ff00", 0x00FF00, true}, {" 255 ", 255, true}, {"16777215", 0xFFFFFF, true},
		{"16777216", 0, false}, {"#FFF", 0, false}, {"0x", 0, false}, {"-1", 0, false}, {"red", 0, false}, {"", 0, false},
	} {
		got, ok := ParseColor(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseColor(%q) = %#x, %v; want %#x, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	got := Placeholders("$[name] is $[depth] m deep $[unclosed")
	if !slices.Equal(got, []string{"name", "depth"}) {
		t.Errorf("Placeholders = %q", got)
	}
	if got := Placeholders("no placeholders"); got != nil {
		t.Errorf("Placeholders of plain text = %q", got)
	}
}

func TestDefaults(t *testing.T) {
	l := NewLayer()
	if !l.Visible || l.Opacity != mapcommons.DefaultLayerOpacity || l.Styles.Icon.Size != mapcommons.DefaultIconSize ||
		l.Styles.Stroke.Alpha != mapcommons.DefaultStrokeAlpha || l.Styles.Fill.Opacity != mapcommons.DefaultFillOpacity {
		t.Errorf("NewLayer = %+v", l)
	}
	points := &mapcommons.Dataset{GeometryMask: 1<<1 | 1<<4}
	lines := &mapcommons.Dataset{GeometryMask: 1 << 2}
	if DefaultType(nil) != mapcommons.LayerPoint || DefaultType(points) != mapcommons.LayerPoint || DefaultType(lines) != mapcommons.LayerPrimitive {
		t.Errorf("DefaultType: %s %s %s", DefaultType(nil), DefaultType(points), DefaultType(lines))
	}
}

// counties is a dataset whose numeric column is found by its name or its
// original name.
var counties = &mapcommons.Dataset{ID: 7, Version: 3, Attributes: []mapcommons.Attribute{
	{Name: "name", Type: mapcommons.AttrString},
	{Name: "pop_2020", OriginalName: "Population 2020", Type: mapcommons.AttrInteger},
}}

func choropleth(attr string) *mapcommons.Layer {
	l := NewLayer()
	l.Styles.Type = mapcommons.LayerChoropleth
	l.Styles.Fill.SelectedAttribute = attr
	return &l
}

func TestCheck(t *testing.T) {
	l := choropleth("Population 2020")
	l.Styles.Fill.ClassificationType = "quantiles"
	l.Styles.Fill.Ramp = "White-Blue"
	if err := Check("layers[0]", l, counties); err != nil {
		t.Fatal(err)
	}
	// The method canonicalised, the ramp expanded, the default classes shown.
	if f := l.Styles.Fill; f.ClassificationType != "Quantile" || f.Categories != mapcommons.DefaultCategories || len(f.Colors) != mapcommons.DefaultCategories {
		t.Errorf("checked fill: %+v", f)
	}
	for _, c := range []struct {
		name string
		edit func(*mapcommons.Layer)
		want string
	}{
		{"NoAttribute", func(l *mapcommons.Layer) { l.Styles.Fill.SelectedAttribute = "area" }, `layers[0].styles.fill.selectedAttribute: dataset 7 has no attribute "area"`},
		{"NotNumeric", func(l *mapcommons.Layer) { l.Styles.Fill.SelectedAttribute = "name" }, `"name" is not numeric`},
		{"Unclassed", func(l *mapcommons.Layer) { l.Styles.Fill.SelectedAttribute = "" }, "needs the attribute it classes by"},
		{"Method", func(l *mapcommons.Layer) { l.Styles.Fill.ClassificationType = "guesswork" }, "layers[0].styles.fill.classificationType"},
		{"Manual", func(l *mapcommons.Layer) { l.Styles.Fill.ClassificationType = "Manual" }, "needs at least two breaks"},
		{"Colours", func(l *mapcommons.Layer) { l.Styles.Fill.Colors = []int{1} }, "2 to 7 colours, not 1"},
		{"Hover", func(l *mapcommons.Layer) { l.Styles.Hover = "$[name]: $[area]" }, `$[area]: dataset 7 has no attribute "area"`},
	} {
		l := choropleth("pop_2020")
		c.edit(l)
		err := Check("layers[0]", l, counties)
		if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(mapcommons.ErrorMessage(err), c.want) {
			t.Errorf("%s: %v, want EINVALID saying %q", c.name, err, c.want)
		}
	}
	// Without its dataset, the attributes are not checked.
	if err := Check("", choropleth("area"), nil); err != nil {
		t.Errorf("without a dataset: %v", err)
	}
}

// features is a FeatureService over values of counties' columns.
type features struct {
	mapcommons.FeatureService
	values [][]any
	scans  int
}

func (s *features) ScanFeatures(ctx context.Context, id int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	s.scans++
	for i, v := range s.values {
		if err := fn(&mapcommons.Feature{ID: int64(i + 1), Values: v}); err != nil {
			return err
		}
	}
	return nil
}

func TestClassify(t *testing.T) {
	svc := &features{values: [][]any{{"a", int64(10)}, {"b", int64(20)}, {"c", nil}, {"d", int64(30)}, {"e", int64(40)}}}
	c := NewClassifier(svc)
	l := choropleth("Population 2020") // by its original name
	l.Styles.Fill.Categories = 2
	got, err := c.Classify(t.Context(), l, counties)
	if err != nil || got == nil {
		t.Fatal(got, err)
	}
	if got.Attribute != "pop_2020" || got.Method != "Equal Interval" || !slices.Equal(got.Breaks, []float64{10, 25, 40}) ||
		!slices.Equal(got.Counts, []int64{2, 2}) || got.Nulls != 1 || *got.Min != 10 || *got.Max != 40 || len(got.Colors) != 2 {
		t.Errorf("classes %+v", got)
	}
	if k := got.Result.Class(NumberOf(int64(35))); k != 1 {
		t.Errorf("35 in class %d", k)
	}
	// Cached by version and options: the same classes again, not scanned.
	if _, err := c.Classify(t.Context(), choropleth("pop_2020"), counties); err != nil {
		t.Fatal(err)
	}
	l2 := choropleth("pop_2020")
	l2.Styles.Fill.Categories = 2
	if _, err := c.Classify(t.Context(), l2, counties); err != nil || svc.scans != 2 {
		t.Errorf("scans %d, want 2 (the default classes, then two classes again from the cache): %v", svc.scans, err)
	}
	for _, l := range []*mapcommons.Layer{choropleth("name"), choropleth("area"), func() *mapcommons.Layer { l := NewLayer(); return &l }()} {
		if got, err := c.Classify(t.Context(), l, counties); got != nil || err != nil {
			t.Errorf("%+v: %+v, %v; want no classes", l.Styles.Fill, got, err)
		}
	}
	if !math.IsNaN(NumberOf("ten")) || !math.IsNaN(NumberOf(nil)) || NumberOf(2.5) != 2.5 {
		t.Error("NumberOf")
	}
}
