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
	borderColour  = "#8c8c8c"
	placeColour   = "#6b4f3a"
	placeHalo     = "#ffffff"
	sourceBuiltin = "basemap"
)

// GlyphsPath is the path of the glyphs' URL template under the server's
// URL: MapLibre fills in a font stack and a range of 256 code points.
const GlyphsPath = "/basemap/fonts/{fontstack}/{range}.pbf"

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
		"layers": []any{
			map[string]any{"id": "background", "type": "background", "paint": map[string]any{"background-color": seaColour}},
			map[string]any{"id": "countries", "type": "fill", "source": sourceBuiltin, "source-layer": LayerCountries,
				"paint": map[string]any{"fill-color": landColour}},
			// The outlines of the countries: coasts and land borders.
			map[string]any{"id": "country-outlines", "type": "line", "source": sourceBuiltin, "source-layer": LayerCountries,
				"paint": map[string]any{"line-color": borderColour,
					"line-width": []any{"interpolate", []any{"linear"}, []any{"zoom"}, 0, 0.4, 6, 1.2}}},
			map[string]any{"id": "places", "type": "circle", "source": sourceBuiltin, "source-layer": LayerPlaces,
				"paint": map[string]any{"circle-color": placeColour, "circle-stroke-color": placeHalo,
					"circle-radius":       []any{"interpolate", []any{"linear"}, []any{"zoom"}, 0, 1.5, 6, 4},
					"circle-stroke-width": 1}},
			// The places' names beside them, haloed; a label that would
			// collide with another is left out (MapLibre's placement).
			map[string]any{"id": "place-labels", "type": "symbol", "source": sourceBuiltin, "source-layer": LayerPlaces,
				"layout": map[string]any{"text-field": []any{"get", "name"}, "text-font": []string{LabelFont},
					"text-size":   []any{"interpolate", []any{"linear"}, []any{"zoom"}, 0, 10, 6, 14},
					"text-anchor": "top", "text-offset": []float64{0, 0.4}, "text-max-width": 8, "text-padding": 2},
				"paint": map[string]any{"text-color": placeColour, "text-halo-color": placeHalo, "text-halo-width": 1.5}},
		},
	}
}
