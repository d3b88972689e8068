package style

import (
	"context"
	"math"
	"strings"

	"mapcommons"
)

// The colours of a layer whose styles name none (the web map's and the
// map KML's defaults), and of a classed symbol of no class.
const (
	DefaultFill   = 0x4682b4
	DefaultStroke = 0x333333
	DefaultIcon   = 0xe6550d
	NoClassIcon   = 0x9e9e9e
)

// The palette's symbols are drawn on a canvas of 48 units shown at
// IconPixels CSS pixels times the icon's size; a circle's radius is 16
// units, so its diameter is CircleDiameter CSS pixels at icon-size 1 (a
// white outline of 3 units around it).
const (
	IconPixels     = 24
	CircleDiameter = 16
)

// GeoJSONMax is the web application's bound on a layer read as GeoJSON
// (layers.js); a bigger dataset is drawn there from vector tiles.
const GeoJSONMax = 5000

// Look is how a layer looks, as the web map draws it (style.js's
// layerPlan and layerSpecs): colours, opacities (the layer's own folded
// in) and widths in CSS pixels. The renderer draws it; the SLD and
// MapLibre style documents say it to other tools.
type Look struct {
	Type     string   // the style type, upper case (PRIMITIVE when none)
	Classes  *Classes // CHOROPLETH, GRADUATED: the classes it is coloured by; nil for none
	ClassCol int      // the column of the classes' attribute, -1 for none
	// PROPORTIONAL: the column of the size attribute (-1 for none), or
	// SizeGone when it names one the dataset lacks (no symbols, as
	// MapLibre reads a missing property as 0), and the attribute's
	// largest magnitude.
	SizeCol  int
	SizeGone bool
	MaxValue float64

	Fill        []int // fill colours: one per class when classed, else one
	FillOpacity float64
	FillNone    bool // features of no class are not filled

	Stroke        int
	StrokeOpacity float64
	StrokeWidth   float64    // CSS pixels
	Cased         bool       // a white case CaseWidth wide under the line
	CaseWidth     float64    // CSS pixels
	Dash          [2]float64 // on, off in CSS pixels; zero: solid

	Symbol      string // a palette symbol
	Shadow      bool
	IconScale   float64 // MapLibre's icon-size: the square root of the icon's size
	IconOpacity float64
	IconColor   int
	Centroids   bool // symbols also at polygons' centroids
	// Heatmap: the points drawn as a heatmap (heat.go), as styles.density
	// asks, unless the layer has a time (the web application's time
	// slider has no heatmap).
	Heatmap bool
}

// LookOf is the look of layer l of dataset ds, classed by cl (nil: not
// classed, or classes that do not fit: no counts, or breaks that are not
// one more than the counts, or an attribute ds lacks).
func LookOf(l *mapcommons.Layer, ds *mapcommons.Dataset, cl *Classes) *Look {
	st := &l.Styles
	k := &Look{Type: strings.ToUpper(st.Type), ClassCol: -1, SizeCol: -1, MaxValue: 1}
	if k.Type == "" {
		k.Type = mapcommons.LayerPrimitive
	}
	if (k.Type == mapcommons.LayerChoropleth || k.Type == mapcommons.LayerGraduated) && cl != nil &&
		len(cl.Counts) > 0 && len(cl.Breaks) == len(cl.Counts)+1 {
		if col := mapcommons.AttrIndex(ds.Attributes, cl.Attribute); col >= 0 {
			k.Classes, k.ClassCol = cl, col
		}
	}
	if k.Type == mapcommons.LayerProportional {
		name := st.Icon.SelectedAttribute
		if name == "" {
			name = st.Fill.SelectedAttribute
		}
		if col := mapcommons.AttrIndex(ds.Attributes, name); name != "" && col >= 0 {
			k.SizeCol = col
			k.MaxValue = StatsMax(ds, ds.Attributes[col].Name)
		} else if name != "" {
			k.SizeGone = true
		}
	}
	op := l.Opacity

	// The fill: by class for a classed layer, else the fill's colour; a
	// symbolic layer's polygons are a faint ground under its symbols.
	k.FillOpacity = st.Fill.Opacity * op
	fill := colorOr(st.Fill.Color, DefaultFill)
	switch {
	case k.Symbolic():
		k.Fill, k.FillOpacity = []int{fill}, k.FillOpacity*0.3
	case k.Classes != nil:
		k.Fill, k.FillNone = k.Classes.Colors, true
	default:
		k.Fill = []int{fill}
	}

	// Lines: the icon's lineStyle says dashed, thick or cased.
	w := 1.0
	if st.Stroke.Weight != nil {
		w = *st.Stroke.Weight
	}
	ls := st.Icon.LineStyle
	if ls == "thick" || ls == "dashedThick" {
		w *= 3
	}
	k.Stroke, k.StrokeOpacity, k.StrokeWidth = colorOr(st.Stroke.Color, DefaultStroke), st.Stroke.Alpha*op, w
	if ls == "cased" {
		k.Cased, k.CaseWidth = k.StrokeOpacity > 0, w+3
	}
	if strings.HasPrefix(ls, "dashed") {
		k.Dash = [2]float64{3 * w, 2 * w} // line-dasharray [3, 2], in line widths
	}

	// Symbols.
	k.Symbol = st.Icon.Symbol
	if !IsIconSymbol(k.Symbol) {
		k.Symbol = "circle"
		if k.Type == mapcommons.LayerProportional {
			k.Symbol = "propCircle"
		}
	}
	k.Shadow = st.Icon.Dropshadow
	k.IconScale = 1
	if st.Icon.Size > 0 {
		k.IconScale = math.Sqrt(st.Icon.Size)
	}
	k.IconOpacity = op
	if st.Icon.Opacity != nil {
		k.IconOpacity *= *st.Icon.Opacity
	}
	k.IconColor = colorOr(st.Icon.Color, DefaultIcon)
	k.Centroids = k.Symbolic() || k.Type == mapcommons.LayerPoint
	k.Heatmap = st.Density == mapcommons.DensityHeatmap && len(st.Temporal.Attributes) == 0
	return k
}

func colorOr(c *int, def int) int {
	if c != nil {
		return *c
	}
	return def
}

// Symbolic reports whether the layer is of symbols sized by class or value
// (GRADUATED, PROPORTIONAL).
func (k *Look) Symbolic() bool {
	return k.Type == mapcommons.LayerGraduated || k.Type == mapcommons.LayerProportional
}

// DrawsFill and DrawsStroke report whether polygons are filled, and lines
// and outlines stroked, at all.
func (k *Look) DrawsFill() bool   { return k.FillOpacity > 0 }
func (k *Look) DrawsStroke() bool { return k.StrokeOpacity > 0 && k.StrokeWidth > 0 }

// ClassOf is the class of value v (-1: none), as style.js's classIndex
// computes it from the breaks: class i is [breaks[i], breaks[i+1]), the
// last one closed; of equal breaks only the first is a stop (MapLibre's
// stops must increase), so a value at a repeated break is in the first
// class that break starts, even if that class is empty. -1 for a layer
// not classed.
func (k *Look) ClassOf(v float64) int {
	c := k.Classes
	if c == nil {
		return -1
	}
	b := c.Breaks
	n := len(c.Counts)
	if math.IsNaN(v) || v < b[0] || v > b[n] {
		return -1
	}
	cls, last := 0, math.Inf(-1)
	for i := 1; i < n; i++ {
		if i == 1 || b[i] > last {
			last = b[i]
			if v >= b[i] {
				cls = i
			}
		}
	}
	return cls
}

// ClassSymbol is the colour and icon-size of the symbol of class cls (-1:
// of no class): its class's colour, and for GRADUATED its size by class.
func (k *Look) ClassSymbol(cls int) (colour int, size float64) {
	if k.Classes == nil {
		return k.IconColor, k.IconScale
	}
	colour, size = NoClassIcon, k.IconScale
	if cls >= 0 {
		colour = k.Classes.Colors[cls]
	}
	if k.Type == mapcommons.LayerGraduated {
		if cls >= 0 {
			size = k.IconScale * (0.6 + 0.9*float64(cls)/float64(max(len(k.Classes.Counts)-1, 1)))
		} else {
			size = k.IconScale * 0.4
		}
	}
	return colour, size
}

// ProportionalSize is the icon-size of a PROPORTIONAL symbol of value v.
func (k *Look) ProportionalSize(v float64) float64 {
	return k.IconScale * ProportionalFactor * math.Sqrt(max(math.Abs(v), 0)/k.MaxValue)
}

// ProportionalFactor is the icon-size of a PROPORTIONAL symbol of the
// largest value, in icon sizes.
const ProportionalFactor = 1.6

// StatsMax is the largest magnitude of a column (style.js's statsMax, the
// tiles' rule), at least 1 for a dataset the web application reads as
// GeoJSON (scanFeatures's rule); 1 when unknown.
func StatsMax(ds *mapcommons.Dataset, name string) float64 {
	s, ok := ds.Stats[name]
	if !ok {
		return 1
	}
	m := max(math.Abs(s.Max), math.Abs(s.Min))
	if m == 0 || math.IsNaN(m) {
		m = 1
	}
	if ds.FeatureCount <= GeoJSONMax {
		m = max(m, 1)
	}
	return m
}

// ClassRange is the values of one class that ClassOf places in it: from
// Min, to Max (included when MaxIn).
type ClassRange struct {
	Class    int
	Min, Max float64
	MaxIn    bool
}

// ClassRanges are the classes ClassOf gives values of, in order, each
// with its values: a class after an equal break holds none (ClassOf puts
// that break's values in the first class it starts) and is left out.
func (k *Look) ClassRanges() []ClassRange {
	c := k.Classes
	if c == nil {
		return nil
	}
	b := c.Breaks
	n := len(c.Counts)
	stops := []int{0}
	last := math.Inf(-1)
	for i := 1; i < n; i++ {
		if i == 1 || b[i] > last {
			last = b[i]
			stops = append(stops, i)
		}
	}
	out := make([]ClassRange, len(stops))
	for j, s := range stops {
		out[j] = ClassRange{Class: s, Min: b[s], Max: b[n], MaxIn: true}
		if j+1 < len(stops) {
			out[j].Max, out[j].MaxIn = b[stops[j+1]], false
		}
	}
	return out
}

// Look is the look of layer l of dataset ds, classed by c (a nil c
// classes nothing).
func (c *Classifier) Look(ctx context.Context, l *mapcommons.Layer, ds *mapcommons.Dataset) (*Look, error) {
	var cl *Classes
	if typ := strings.ToUpper(l.Styles.Type); c != nil && (typ == mapcommons.LayerChoropleth || typ == mapcommons.LayerGraduated) {
		var err error
		if cl, err = c.Classify(ctx, l, ds); err != nil {
			return nil, err
		}
	}
	return LookOf(l, ds, cl), nil
}
