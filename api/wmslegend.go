// wmslegend.go: legends as images — GetLegendGraphic (the SLD extension
// of WMS) and GET /maps/{id}/legend.png: a map's or a layer's legend as a
// small PNG, in the colours its image is drawn with (render.LegendRows,
// from the layers' looks).
package api

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/render"
)

// wmsLegend answers GetLegendGraphic: LAYER (one), STYLE ("" or default),
// FORMAT image/png, WIDTH and HEIGHT of a swatch (default 20). A classed
// layer has a swatch per class with its range; another one of its colour;
// a map, its layers' in order, each under its title.
func (s *Server) wmsLegend(w http.ResponseWriter, r *http.Request, p wmsParams) error {
	if f := p["FORMAT"]; f != "" && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(f)), pngType) {
		return wmsErr(wmsInvalidFormat, "FORMAT: %q is not one of this WMS (image/png)", f)
	}
	name := strings.TrimSpace(p["LAYER"])
	if name == "" {
		return wmsErr(wmsLayerNotDefined, "LAYER is missing: the name of the layer")
	}
	l, err := s.wmsFindLayer(r, name)
	if err != nil {
		return err
	}
	if err := checkWMSStyle(name, p["STYLE"]); err != nil {
		return err
	}
	sw, sh := render.LegendSwatch, render.LegendSwatch
	for _, side := range []struct {
		name string
		v    *int
	}{{"WIDTH", &sw}, {"HEIGHT", &sh}} {
		if v := p[side.name]; v != "" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 || n > render.LegendMaxSwatch {
				return wmsErr("", "%s: a swatch of 1 to %d pixels, not %q", side.name, render.LegendMaxSwatch, v)
			}
			*side.v = n
		}
	}
	rows, err := s.legendRows(r, l.layers)
	if err != nil {
		return err
	}
	return writePNG(w, rows, sw, sh, 1)
}

// legendRows are the rows of the legend of layers: each drawn layer's (one
// whose dataset is nil is left out of the image, and of its legend),
// under its title when there are more than one.
func (s *Server) legendRows(r *http.Request, layers []render.Layer) ([]render.LegendRow, error) {
	drawn := 0
	for _, rl := range layers {
		if rl.Dataset != nil {
			drawn++
		}
	}
	var rows []render.LegendRow
	for _, rl := range layers {
		if rl.Dataset == nil {
			continue
		}
		k, err := s.classes.Look(r.Context(), &rl.Layer, rl.Dataset)
		if err != nil {
			return nil, err
		}
		title := rl.Layer.Title
		if title == "" {
			title = rl.Dataset.Title
		}
		if drawn > 1 {
			rows = append(rows, render.LegendRow{Text: title})
		}
		rows = append(rows, render.LegendRows(title, k, rl.Dataset)...)
	}
	return rows, nil
}

// writePNG answers the legend of rows as a PNG.
func writePNG(w http.ResponseWriter, rows []render.LegendRow, sw, sh int, scale float64) error {
	var b bytes.Buffer
	if err := render.EncodePNG(&b, render.DrawLegend(rows, sw, sh, scale)); err != nil {
		return err
	}
	w.Header().Set("Content-Type", pngType)
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	_, err := w.Write(b.Bytes())
	return err
}

// handleMapLegend answers GET /maps/{id}/legend.png: the legend of the
// map's layers the caller may see (as its image draws them), or of one
// (layer, its index in the map); swatch, the side of a swatch in CSS
// pixels (default 20); scale, 1 to 4 device pixels per CSS pixel.
func (s *Server) handleMapLegend(w http.ResponseWriter, r *http.Request) error {
	m, err := findNoBody(s, r, s.findMap)
	if err != nil {
		return err
	}
	if !pngPath(r) {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "a legend is PNG, not %s", info(r).format)
	}
	if err := onlyParams(r, "layer", "swatch", "scale"); err != nil {
		return err
	}
	q := r.URL.Query()
	sw, scale := render.LegendSwatch, 1.0
	if v := q.Get("swatch"); q.Has("swatch") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > render.LegendMaxSwatch {
			return mapcommons.Errorf(mapcommons.EINVALID, "swatch: a side of 1 to %d pixels, not %q", render.LegendMaxSwatch, v)
		}
		sw = n
	}
	if v := q.Get("scale"); q.Has("scale") {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 1 && f <= render.MaxScale) {
			return mapcommons.Errorf(mapcommons.EINVALID, "scale: 1 to %d device pixels per CSS pixel, not %q", render.MaxScale, v)
		}
		scale = f
	}
	layers, drawn := s.mapLayers(r.Context(), caller(r), m)
	if v := q.Get("layer"); q.Has("layer") {
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 || i >= len(layers) || strconv.Itoa(i) != v || layers[i].Dataset == nil {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "map %d has no layer %q to show", m.ID, v)
		}
		layers = layers[i : i+1]
	}
	if notModified(w, r, s.mapETag(r, m, "legend"+drawn), cacheControl(r, s.mapPublic(r, m, true))) {
		return nil
	}
	rows, err := s.legendRows(r, layers)
	if err != nil {
		return err
	}
	return writePNG(w, rows, sw, sw, scale)
}
