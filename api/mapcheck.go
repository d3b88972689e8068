package api

import (
	"mapcommons"
	"mapcommons/classify"
)

// checkLayer validates a parsed layer as a whole: the classification
// options, the colours against the classes, and the attributes it names
// against its dataset when that exists. It canonicalises the
// classification method names and expands named colour ramps.
func checkLayer(path string, l *mapcommons.Layer, ds *mapcommons.Dataset) error {
	at := func(rest string) string {
		if path == "" {
			return rest
		}
		return path + "." + rest
	}
	fail := func(where, format string, args ...any) error {
		return mapcommons.Errorf(mapcommons.EINVALID, "%s: "+format, append([]any{at(where)}, args...)...)
	}
	attr := func(name string) *mapcommons.Attribute {
		if ds == nil {
			return nil
		}
		// By the rule the layer's features and classes use.
		if i := mapcommons.AttrIndex(ds.Attributes, name); i >= 0 {
			return &ds.Attributes[i]
		}
		return nil
	}
	st := &l.Styles
	classed := st.Type == mapcommons.LayerChoropleth || st.Type == mapcommons.LayerGraduated
	for _, c := range []struct {
		where string
		c     *mapcommons.Classing
	}{{"styles.icon", &st.Icon.Classing}, {"styles.fill", &st.Fill.Classing}} {
		if c.c.ClassificationType != "" || classed && c.c.SelectedAttribute != "" {
			m, err := classify.ParseMethod(c.c.ClassificationType)
			if err != nil {
				return fail(c.where+".classificationType", "%v", mapcommons.ErrorMessage(err))
			}
			c.c.ClassificationType = string(m)
			if m == classify.Manual && len(c.c.ClassificationBreaks) < 2 {
				return fail(c.where+".classificationBreaks", "Manual classification needs at least two breaks")
			}
		}
		if a := c.c.SelectedAttribute; a != "" && ds != nil {
			def := attr(a)
			if def == nil {
				return fail(c.where+".selectedAttribute", "dataset %d has no attribute %q", ds.ID, a)
			}
			if classed && !def.Type.Numeric() {
				return fail(c.where+".selectedAttribute", "%q is not numeric (%s): a %s layer classes by a number", a, def.Type, st.Type)
			}
		}
	}
	if classed && st.Fill.SelectedAttribute == "" && st.Icon.SelectedAttribute == "" {
		return fail("styles.fill.selectedAttribute", "a %s layer needs the attribute it classes by", st.Type)
	}
	// The colours of the classes: a named ramp takes as many colours as
	// there are classes; a list must have that many.
	classes := st.Fill.Categories
	if classes == 0 {
		classes = mapcommons.DefaultCategories
	}
	if st.Fill.ClassificationType == string(classify.Manual) && len(st.Fill.ClassificationBreaks) >= 2 {
		classes = len(st.Fill.ClassificationBreaks) - 1
	}
	if st.Fill.Ramp != "" {
		colors, err := classify.Ramp(st.Fill.Ramp, classes)
		if err != nil {
			return fail("styles.fill.colors", "%v", mapcommons.ErrorMessage(err))
		}
		st.Fill.Colors = colors
	} else if n := len(st.Fill.Colors); n > 0 {
		if n < 2 || n > 7 {
			return fail("styles.fill.colors", "a ramp has 2 to 7 colours, not %d", n)
		}
		if st.Fill.Categories != 0 && n != st.Fill.Categories {
			return fail("styles.fill.categories", "%d categories but %d colours: give one colour per category", st.Fill.Categories, n)
		}
		if st.Fill.Categories == 0 && classed {
			st.Fill.Categories = n
		}
	} else if k := st.Fill.Categories; k != 0 && (k < classify.MinRampColors || k > classify.MaxRampColors) {
		return fail("styles.fill.categories", "a ramp has %d to %d colours: without colors, categories must be %d to %d, not %d",
			classify.MinRampColors, classify.MaxRampColors, classify.MinRampColors, classify.MaxRampColors, k)
	}
	// The default number of classes shows in the stored style.
	if classed && st.Fill.Categories == 0 && st.Fill.ClassificationType != string(classify.Manual) {
		st.Fill.Categories = mapcommons.DefaultCategories
	}
	if ds == nil {
		return nil
	}
	for _, a := range st.Temporal.Attributes {
		if attr(a) == nil {
			return fail("styles.temporal.attributes", "dataset %d has no attribute %q", ds.ID, a)
		}
	}
	for _, t := range []struct{ where, text string }{{"styles.click", st.Click}, {"styles.hover", st.Hover}} {
		for _, a := range placeholders(t.text) {
			if attr(a) == nil {
				return fail(t.where, "$[%s]: dataset %d has no attribute %q", a, ds.ID, a)
			}
		}
	}
	return nil
}
