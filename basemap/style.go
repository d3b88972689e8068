package basemap

// This file writes the MapLibre styles (style specification version 8)
// of the basemaps. The built-in style names only the server's own URLs:
// its one source is the server's vector tiles, its glyphs the server's
// (glyphs.go: the Go fonts), and it has no sprite (places are circles,
// labelled by name); a map page using it loads nothing from elsewhere.

// The colours of the built-in style.
const (
	seaColour     = "#a8cce0"
	landColour    = "#f2efe6"
	coastColour   = "#86adc4"
	riverColour   = "#96bfd8"
	borderColour  = "#8c8c8c"
	placeColour   = "#6b4f3a"
	placeHalo     = "#ffffff"
	urbanColour   = "#e6dfcf" // UrbanColour
	divisionColor = "#a39e96" // DivisionColour
	regionColour  = "#6e675e"
	sourceBuiltin = "basemap"
)

// GlyphsPath is the path of the glyphs' URL template under the server's
// URL: MapLibre fills in a font stack and a range of 256 code points.
const GlyphsPath = "/basemap/fonts/{fontstack}/{range}.pbf"

// byZoom is a MapLibre expression interpolating linearly on the zoom
// between stops (zoom, value, zoom, value, …).
func byZoom(stops ...any) []any {
	return append([]any{"interpolate", []any{"linear"}, []any{"zoom"}}, stops...)
}

// builtinLayers are the built-in style's layers, bottom first: the sea
// (the background), the land, the lakes (in the sea's colour), the
// coasts, the urban areas (from zoom 4, a shade darker than the land),
// the rivers (wider as the zoom deepens, the major ones, of low rank,
// wider still), the first-order divisions' boundaries (dashed, from zoom
// 2), the borders, the places, as circles, the larger the more important
// (of low rank; a country's capital the largest), their names, and the
// divisions' names (in capitals, from zoom 3), last so that MapLibre,
// which places the labels of a later layer first, shows them where the
// towns' names crowd a zoom of 5 or 6. The countries layer of the tiles (1:110m) is not drawn: it is
// there for its names.
func builtinLayers() []any {
	layer := func(id, typ, sourceLayer string, paint map[string]any) map[string]any {
		return map[string]any{"id": id, "type": typ, "source": sourceBuiltin, "source-layer": sourceLayer, "paint": paint}
	}
	rank := []any{"coalesce", []any{"get", "rank"}, 10}
	capital := []any{"==", []any{"get", "capital"}, true}
	coast := layer("coastline", "line", LayerCoastline, map[string]any{"line-color": coastColour,
		"line-width": byZoom(3, 0.4, 9, 1)})
	coast["minzoom"] = BandMinZoom[1]
	urban := layer("urban", "fill", LayerUrban, map[string]any{"fill-color": urbanColour})
	urban["minzoom"] = 4
	divisions := layer("divisions", "line", LayerDivisions, map[string]any{"line-color": divisionColor,
		"line-width": byZoom(2, 0.4, 9, 1), "line-dasharray": []float64{4, 2}})
	divisions["minzoom"] = 2
	return []any{
		map[string]any{"id": "background", "type": "background", "paint": map[string]any{"background-color": seaColour}},
		layer("land", "fill", LayerLand, map[string]any{"fill-color": landColour}),
		layer("lakes", "fill", LayerLakes, map[string]any{"fill-color": seaColour}),
		coast,
		urban,
		layer("rivers", "line", LayerRivers, map[string]any{"line-color": riverColour,
			"line-width": byZoom(1, 0.4, 5, []any{"case", []any{"<=", rank, 3}, 1.2, 0.6}, 9, []any{"case", []any{"<=", rank, 3}, 2.5, 1.2})}),
		divisions,
		layer("borders", "line", LayerBorders, map[string]any{"line-color": borderColour,
			"line-width": byZoom(0, 0.4, 9, 1.4)}),
		layer("places", "circle", LayerPlaces, map[string]any{"circle-color": placeColour, "circle-stroke-color": placeHalo,
			"circle-radius": byZoom(0, []any{"case", capital, 2.5, 1.5},
				9, []any{"case", capital, 6, []any{"max", 2, []any{"-", 5.5, []any{"*", 0.35, rank}}}}),
			"circle-stroke-width": 1}),
		// The places' names beside them, haloed, the important ones
		// placed first; a label that would collide with another is left
		// out (MapLibre's placement).
		map[string]any{"id": "place-labels", "type": "symbol", "source": sourceBuiltin, "source-layer": LayerPlaces,
			"layout": map[string]any{"text-field": []any{"get", "name"}, "text-font": []string{LabelFont},
				"symbol-sort-key": rank,
				"text-size":       byZoom(0, 10, 9, 14),
				"text-anchor":     "top", "text-offset": []float64{0, 0.4}, "text-max-width": 8, "text-padding": 2},
			"paint": map[string]any{"text-color": placeColour, "text-halo-color": placeHalo, "text-halo-width": 1.5}},
		map[string]any{"id": "region-labels", "type": "symbol", "source": sourceBuiltin, "source-layer": LayerRegions,
			"minzoom": 3,
			"layout": map[string]any{"text-field": []any{"get", "name"}, "text-font": []string{LabelFont},
				"text-transform": "uppercase", "text-letter-spacing": 0.08,
				"symbol-sort-key": rank,
				"text-size":       byZoom(3, 9, 9, 12),
				"text-max-width":  7, "text-padding": 4},
			"paint": map[string]any{"text-color": regionColour, "text-halo-color": placeHalo, "text-halo-width": 1.2}},
	}
}

// Style is the MapLibre style of a basemap: of r, or of the built-in
// basemap when r is nil. base is the server's absolute URL (no trailing
// slash), the root of the built-in tiles' template.
func Style(base string, r *Raster) map[string]any {
	if r != nil {
		return map[string]any{
			"version": 8, "name": r.Name,
			"sources": map[string]any{r.Name: map[string]any{
				"type": "raster", "tiles": []string{r.URL}, "tileSize": 256,
				"minzoom": 0, "maxzoom": 19, "attribution": r.Attribution,
			}},
			"layers": []any{
				map[string]any{"id": "background", "type": "background", "paint": map[string]any{"background-color": seaColour}},
				map[string]any{"id": r.Name, "type": "raster", "source": r.Name},
			},
		}
	}
	return map[string]any{
		"version": 8, "name": Builtin,
		"metadata": map[string]any{"mapcommons:version": Version()},
		"glyphs":   base + GlyphsPath,
		"sources": map[string]any{sourceBuiltin: map[string]any{
			"type": "vector", "tiles": []string{base + "/basemap/tiles/{z}/{y}/{x}"},
			"minzoom": 0, "maxzoom": MaxZoom, "attribution": Attribution,
		}},
		"layers": builtinLayers(),
	}
}
