// Package style holds the rules of the styling model of a map layer: the
// palettes a style picks from, the defaults of a new layer, the check of a
// layer as a whole against its dataset, and the classes of a classed layer
// (classes.go). The faces decode styles in their own way (the GeoCommons
// API's map parameters, in api) and share these rules, so that a renderer
// or any other face styles a layer as the API stored it.
package style

import (
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/classify"
)

// The palette of icon symbols and the line styles (the GeoCommons "Icon
// options"), and the layer types.
var (
	iconSymbols = map[string]bool{
		"circle": true, "propCircle": true, "outlineCircle": true, "hollowCircle": true, "square": true,
		"propSquare": true, "outlineSquare": true, "hollowSquare": true, "balloonIcon": true, "pushpinIcon": true,
		"circleIcon": true, "featherIcon": true, "flagIcon": true, "ringIcon": true, "squareIcon": true, "xPointIcon": true,
	}
	lineStyles = map[string]bool{"dashedThin": true, "dashedThick": true, "cased": true, "thick": true, "regular": true}
	layerTypes = map[string]bool{
		mapcommons.LayerPoint: true, mapcommons.LayerPrimitive: true, mapcommons.LayerGraduated: true,
		mapcommons.LayerProportional: true, mapcommons.LayerChoropleth: true,
	}
	densities = map[string]bool{
		mapcommons.DensityAuto: true, mapcommons.DensityClusters: true, mapcommons.DensityHeatmap: true, mapcommons.DensityNone: true,
	}
)

// IsIconSymbol tells whether s names a symbol of the palette.
func IsIconSymbol(s string) bool { return iconSymbols[s] }

// IsLineStyle tells whether s names a line style.
func IsLineStyle(s string) bool { return lineStyles[s] }

// IsDensity tells whether d (lower case) is a way of drawing a layer's
// density (Styles.Density).
func IsDensity(d string) bool { return densities[d] }

// IsLayerType tells whether t (upper case) is a layer type.
func IsLayerType(t string) bool { return layerTypes[t] }

// NewLayer is a layer with the defaults of one a map is given: opaque as
// the default says, visible, and its styles' defaults (the icon's size,
// the stroke's alpha, the fill's opacity).
func NewLayer() mapcommons.Layer {
	l := mapcommons.Layer{Opacity: mapcommons.DefaultLayerOpacity, Visible: true}
	l.Styles.Icon.Size = mapcommons.DefaultIconSize
	l.Styles.Stroke.Alpha = mapcommons.DefaultStrokeAlpha
	l.Styles.Fill.Opacity = mapcommons.DefaultFillOpacity
	return l
}

// DefaultType is the type of a layer that names none: POINT, or PRIMITIVE
// when its dataset (nil: unknown) holds geometries other than points and
// multipoints.
func DefaultType(ds *mapcommons.Dataset) string {
	if ds != nil && ds.GeometryMask&^(1<<1|1<<4) != 0 {
		return mapcommons.LayerPrimitive
	}
	return mapcommons.LayerPoint
}

// ParseColor reads a colour: 0xRRGGBB, #RRGGBB, or a decimal integer up to
// 0xFFFFFF.
func ParseColor(s string) (int, bool) {
	s = strings.TrimSpace(s)
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		s, base = s[2:], 16
	case strings.HasPrefix(s, "#"):
		s, base = s[1:], 16
	}
	if s == "" || (base == 16 && len(s) != 6) {
		return 0, false
	}
	v, err := strconv.ParseInt(s, base, 64)
	if err != nil || v < 0 || v > 0xFFFFFF {
		return 0, false
	}
	return int(v), true
}

// Placeholders returns the attribute names of the $[name] placeholders of
// s (a layer's click or hover text).
func Placeholders(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "$[")
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i+2:], ']')
		if j < 0 {
			return out
		}
		out = append(out, s[i+2:i+2+j])
		s = s[i+2+j+1:]
	}
}

// Check validates a decoded layer as a whole: the classification options,
// the colours against the classes, and the attributes it names against its
// dataset when that exists (nil: not known). It canonicalises the
// classification method names and expands named colour ramps. path is
// where the layer is in its request ("layers[0]"), for the errors.
func Check(path string, l *mapcommons.Layer, ds *mapcommons.Dataset) error {
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
		for _, a := range Placeholders(t.text) {
			if attr(a) == nil {
				return fail(t.where, "$[%s]: dataset %d has no attribute %q", a, ds.ID, a)
			}
		}
	}
	return nil
}
