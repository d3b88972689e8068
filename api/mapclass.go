package api

import (
	"mapcommons/geocommons"
	"mapcommons/style"
	"net/http"

	"mapcommons"
)

// mapClasses classifies the classed layers of m (nil for the others): the
// work a map's document needs. Map creates and updates call it before they
// store anything, so that a change whose classification is cut short (the
// client went away, the query deadline passed) is not stored, and the
// document written afterwards finds the classes in the cache.
func (s *Server) mapClasses(r *http.Request, layers []mapcommons.Layer, lookup geocommons.LayerContext) ([]*style.Classes, error) {
	out := make([]*style.Classes, len(layers))
	for i := range layers {
		cd, err := s.layerClasses(r, &layers[i], lookup)
		if err != nil {
			return nil, err
		}
		out[i] = cd
	}
	// A lookup cut short looks like a missing dataset: no classes.
	return out, r.Context().Err()
}

// withClasses adds the classifications of m's layers to its document.
func (s *Server) withClasses(r *http.Request, m *mapcommons.Map, d *mapDoc, lookup geocommons.LayerContext) error {
	classes, err := s.mapClasses(r, m.Layers, lookup)
	if err != nil {
		return err
	}
	for i := range m.Layers {
		attachClasses(&m.Layers[i], d.Layers[i], classes[i])
	}
	return nil
}

// layerClasses classifies a classed layer, when the caller may download
// its dataset (the classes are computed from the data); nil otherwise.
func (s *Server) layerClasses(r *http.Request, l *mapcommons.Layer, lookup geocommons.LayerContext) (*style.Classes, error) {
	ds := lookup(l.Source)
	if ds != nil && s.policy.CanDownloadDataset(caller(r), ds) != nil {
		return nil, nil
	}
	return s.classes.Classify(r.Context(), l, ds)
}

// attachClasses puts the classification cd (nil: none) of l in its
// document.
func attachClasses(l *mapcommons.Layer, d *layerDoc, cd *style.Classes) {
	switch {
	case cd == nil:
	case style.Classing(l) == &l.Styles.Icon.Classing:
		d.Styles.Icon.Classification = cd
	default:
		d.Styles.Fill.Classification = cd
	}
}
