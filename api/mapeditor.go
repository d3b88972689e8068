package api

// What the map editor of the web application needs beside the map routes:
// the named colour ramps (GET /ramps.json, for its ramp picker) and the
// preview of a layer (POST /maps/{id}/preview.json: the layer as
// the map would hold it, with the classes the API computes, nothing
// stored), so that the editor's live preview shows the API's own classes.

import (
	"net/http"

	"mapcommons"
	"mapcommons/classify"
)

// rampDoc is one family of named colour ramps: its ramps of 2 to 7
// colours (0xRRGGBB numbers), shortest first.
type rampDoc struct {
	Name  string  `json:"name"`
	Ramps [][]int `json:"ramps"`
}

// handleRamps answers GET /ramps.json: the named colour ramp families a
// layer's fill.colors may name, with their colours.
func (s *Server) handleRamps(w http.ResponseWriter, r *http.Request) error {
	if f := info(r).format; f != "json" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "the colour ramps have no %s form: use .json", f)
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	var list []rampDoc
	for _, name := range classify.RampNames() {
		d := rampDoc{Name: name}
		for n := classify.MinRampColors; n <= classify.MaxRampColors; n++ {
			colors, err := classify.Ramp(name, n)
			if err != nil {
				return err
			}
			d.Ramps = append(d.Ramps, colors)
		}
		list = append(list, d)
	}
	// The same answer to anyone (the ETag of its bytes revalidates it).
	return s.writeBasemapDoc(w, r, list)
}

// handleLayerPreview answers POST /maps/{id}/preview: the layer
// the body describes (as POST /maps/{id}/layers takes it), checked and
// classified as the map would hold it and shown as GET
// /maps/{id}/layers/{index}.json would show it, without storing anything.
// It needs the edit right on the map, checked before the body is read.
func (s *Server) handleLayerPreview(w http.ResponseWriter, r *http.Request) error {
	m, err := s.mapToEdit(r)
	if err != nil {
		return err
	}
	if f := info(r).format; f != "json" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "a layer preview has no %s form", f)
	}
	l, lookup, err := s.layerFromRequest(r)
	if err != nil {
		return err
	}
	layers := []mapcommons.Layer{l}
	classes, err := s.mapClasses(r, layers, lookup)
	if err != nil {
		return err
	}
	d := layerJSON(len(m.Layers), &layers[0])
	attachClasses(&layers[0], d, classes[0])
	return s.writeJSON(w, r, http.StatusOK, d)
}
