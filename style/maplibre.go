// maplibre.go: a map's layers as a MapLibre GL style document (version
// 8), over the server's vector tiles: the layers the web map draws
// (style.js's layerSpecs), from the same look.

package style

import (
	"fmt"
	"math"
	"strconv"
)

// MapLibreStyle is the style document of layers, named name; tileJSON is
// the URL of the TileJSON of a layer's vector tiles, whose layer (the
// source-layer) is named as the layer is. Symbols are drawn as circles (a
// style document names no pictures of its own), at the palette circle's
// size; polygons' centroids get no symbols (the web map computes them).
func MapLibreStyle(name string, layers []StyledLayer, tileJSON func(StyledLayer) string) map[string]any {
	sources := map[string]any{}
	var specs []any
	for i, l := range layers {
		src := l.Name
		sources[src] = map[string]any{"type": "vector", "url": tileJSON(l)}
		id := "layer-" + strconv.Itoa(i) + "-" + l.Name
		specs = append(specs, maplibreLayers(id, src, l)...)
	}
	return map[string]any{"version": 8, "name": name, "sources": sources, "layers": specs}
}

// The filters of a geometry family's features.
var (
	mlPolygons = []any{"in", []any{"geometry-type"}, []any{"literal", []any{"Polygon", "MultiPolygon"}}}
	mlLines    = []any{"in", []any{"geometry-type"}, []any{"literal", []any{"LineString", "MultiLineString"}}}
	mlPoints   = []any{"in", []any{"geometry-type"}, []any{"literal", []any{"Point", "MultiPoint"}}}
)

// mlClassIndex is the expression of a feature's class (-1: none), as
// ClassOf and style.js's classIndex give it.
func mlClassIndex(k *Look, attr string) []any {
	v := []any{"get", attr}
	b := k.Classes.Breaks
	n := len(k.Classes.Counts)
	step := []any{"step", v, 0}
	for _, r := range k.ClassRanges()[1:] {
		step = append(step, b[r.Class], r.Class)
	}
	var last any = step
	if len(step) == 3 {
		last = 0
	}
	return []any{"case",
		[]any{"!=", []any{"typeof", v}, "number"}, -1,
		[]any{"<", v, b[0]}, -1,
		[]any{">", v, b[n]}, -1,
		last}
}

// mlByClass maps a feature's class to one of values, fallback for none.
func mlByClass(k *Look, attr string, values []any, fallback any) []any {
	e := []any{"match", mlClassIndex(k, attr)}
	for i, v := range values {
		e = append(e, i, v)
	}
	return append(e, fallback)
}

func maplibreLayers(id, src string, l StyledLayer) []any {
	k := l.Look
	attr := ""
	if k.ClassCol >= 0 {
		attr = l.Dataset.Attributes[k.ClassCol].Name
	}
	classed := k.Classes != nil && k.FillNone
	spec := func(suffix, typ string, filter []any, paint map[string]any) map[string]any {
		return map[string]any{"id": id + "-" + suffix, "type": typ, "source": src, "source-layer": src, "filter": filter, "paint": paint}
	}
	var out []any
	var fill any = hex(k.Fill[0])
	if classed {
		colors := make([]any, len(k.Fill))
		for i, c := range k.Fill {
			colors[i] = hex(c)
		}
		fill = mlByClass(k, attr, colors, "rgba(0,0,0,0)")
	}
	out = append(out, spec("fill", "fill", mlPolygons, map[string]any{"fill-color": fill, "fill-opacity": round3(k.FillOpacity)}))
	lineFilter := []any{"any", mlPolygons, mlLines}
	if k.Cased {
		out = append(out, spec("case", "line", lineFilter, map[string]any{
			"line-color": "#ffffff", "line-width": round3(k.CaseWidth), "line-opacity": round3(k.StrokeOpacity)}))
	}
	line := map[string]any{"line-color": hex(k.Stroke), "line-width": round3(k.StrokeWidth), "line-opacity": round3(k.StrokeOpacity)}
	if k.Dash[0] > 0 {
		line["line-dasharray"] = []any{3, 2}
	}
	out = append(out, spec("line", "line", lineFilter, line))

	// Points: circles of the symbol's colour (by class) and size (by class
	// for GRADUATED, by value for PROPORTIONAL).
	radius := func(size float64) float64 { return round3(size * CircleDiameter / 2) }
	var colour, r any = hex(k.IconColor), radius(k.IconScale)
	if k.Classes != nil {
		colors := make([]any, len(k.Classes.Counts))
		sizes := make([]any, len(k.Classes.Counts))
		for i := range colors {
			c, s := k.ClassSymbol(i)
			colors[i], sizes[i] = hex(c), radius(s)
		}
		nc, ns := k.ClassSymbol(-1)
		colour = mlByClass(k, attr, colors, hex(nc))
		if k.Type == "GRADUATED" {
			r = mlByClass(k, attr, sizes, radius(ns))
		}
	}
	if k.SizeCol >= 0 {
		a := l.Dataset.Attributes[k.SizeCol].Name
		r = []any{"*", radius(k.IconScale * ProportionalFactor),
			[]any{"sqrt", []any{"/", []any{"max", []any{"abs", []any{"to-number", []any{"get", a}, 0}}, 0}, k.MaxValue}}}
	}
	op := round3(math.Min(1, k.IconOpacity))
	if k.SizeGone {
		op = 0
	}
	var pointOp any = op
	if k.Heatmap {
		// A heatmap of the points, weighed by how many each of the tiles'
		// stands for, giving way to the points over HeatFade (as the web
		// application draws it).
		heat := spec("heat", "heatmap", mlPoints, map[string]any{
			"heatmap-weight":    mlInterp([]any{"coalesce", []any{"to-number", []any{"get", "point_count"}, 1}, 1}, heatWeightStops),
			"heatmap-intensity": mlInterp([]any{"zoom"}, heatIntensityStops),
			"heatmap-radius":    mlInterp([]any{"zoom"}, heatRadiusStops),
			"heatmap-color":     mlHeatColours(k.IconColor),
			"heatmap-opacity":   mlInterp([]any{"zoom"}, []float64{HeatFade[0], math.Min(1, k.IconOpacity), HeatFade[1], 0}),
		})
		heat["maxzoom"] = HeatFade[1]
		out = append(out, heat)
		pointOp = mlInterp([]any{"zoom"}, []float64{HeatFade[0], 0, HeatFade[1], op})
	}
	point := spec("point", "circle", mlPoints, map[string]any{
		"circle-color": colour, "circle-radius": r, "circle-opacity": pointOp,
		"circle-stroke-color": "#ffffff", "circle-stroke-width": 1.5, "circle-stroke-opacity": pointOp})
	if k.Heatmap {
		point["minzoom"] = HeatFade[0]
	}
	return append(out, point)
}

// mlInterp is MapLibre's linear interpolation of input over stops (input,
// value, …).
func mlInterp(input any, stops []float64) []any {
	e := []any{"interpolate", []any{"linear"}, input}
	for _, v := range stops {
		e = append(e, round3(v))
	}
	return e
}

// mlHeatColours is a heatmap's colour by density: HeatRamp(c).
func mlHeatColours(c int) []any {
	e := []any{"interpolate", []any{"linear"}, []any{"heatmap-density"}}
	for _, st := range HeatRamp(c) {
		e = append(e, st.Density, fmt.Sprintf("rgba(%d,%d,%d,%g)", c0(st.Color, 16), c0(st.Color, 8), c0(st.Color, 0), st.Alpha))
	}
	return e
}

// c0 is the channel of colour c at shift.
func c0(c, shift int) int { return c >> shift & 0xff }
