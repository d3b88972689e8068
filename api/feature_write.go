package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format/geojson"
	"mapcommons/params"
)

// handleFeatureCreate answers POST /datasets/{id}/features: a JSON array of
// feature objects (attributes and a GeoJSON "geometry"), a GeoJSON
// FeatureCollection, or one Feature. Every feature is checked against the
// dataset's attributes; one bad feature and nothing is added.
func (s *Server) handleFeatureCreate(w http.ResponseWriter, r *http.Request) error {
	ds, f, cleanup, err := s.editBody(r, s.datasetToEdit, "no features: send a JSON array of features or a GeoJSON FeatureCollection")
	if err != nil {
		return err
	}
	defer cleanup()
	src, err := newJSONFeatures(f, ds.Attributes)
	if err != nil {
		return err
	}
	added, err := s.svc.Features.AddFeatures(r.Context(), ds.ID, s.limitFeatures(src, ds.FeatureCount))
	if err != nil {
		return err
	}
	after, err := s.svc.Datasets.FindDatasetByID(r.Context(), ds.ID)
	if err != nil {
		return err
	}
	first := after.FeatureCount - added
	return s.created(w, r, fmt.Sprintf("%s/datasets/%d/features.json?start=%d&limit=%d", s.baseURL(r), ds.ID, first, added),
		map[string]int64{"added": added, "feature_count": after.FeatureCount})
}

// handleFeatureDelete answers DELETE /datasets/{id}/features?ids=0,5,7 (and
// the spec's form with an ignored extra path segment, DELETE
// /datasets/{id}/features/{ignored}, under /maps too: DELETE
// /maps/{id}/features/{ignored}).
func (s *Server) handleFeatureDelete(w http.ResponseWriter, r *http.Request) error {
	ds, q, err := parseFor(s, r, s.datasetToEdit)
	if err != nil {
		return err
	}
	defer q.Cleanup()
	var parts []string
	if list, ok := q.Params.Strings("ids"); ok {
		for _, v := range list {
			parts = append(parts, strings.Split(v, ",")...)
		}
	}
	var ids []int64
	for _, p := range parts {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return params.Invalid("ids", "%q is not a feature position", p)
		}
		ids = append(ids, n)
	}
	if len(ids) == 0 {
		return params.Invalid("ids", "missing: give the zero-based positions of the features, ids=0,5,7")
	}
	if err := s.svc.Features.DeleteFeatures(r.Context(), ds.ID, ids); err != nil {
		return err
	}
	return empty(w, http.StatusNoContent)
}

// jsonFeatures reads features from a JSON body as a stream.
type jsonFeatures struct {
	dec    *json.Decoder
	attrs  []mapcommons.Attribute
	n      int
	f      mapcommons.Feature
	inList bool // inside the array of features
	// name, when set, is how errors name the feature converted instead
	// of "feature N" ("updates[2]").
	name   string
	single []byte
	done   bool
	// patch, when set, makes convert read a merge patch (RFC 7396): the
	// geometry may be left out, and patch records what is given.
	patch *mapcommons.Patch
}

// newJSONFeatures positions a decoder on the features of a body: a
// top-level array, the "features" array of an object, or a single Feature.
func newJSONFeatures(r io.Reader, attrs []mapcommons.Attribute) (*jsonFeatures, error) {
	j := &jsonFeatures{dec: json.NewDecoder(r), attrs: attrs}
	j.dec.UseNumber()
	bad := func(err error) error {
		return mapcommons.Errorf(mapcommons.EINVALID, "malformed JSON body: %v", err)
	}
	tok, err := j.dec.Token()
	if err != nil {
		return nil, bad(err)
	}
	switch tok {
	case json.Delim('['):
		j.inList = true
		return j, nil
	case json.Delim('{'):
	default:
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "expected a JSON array of features or a FeatureCollection")
	}
	// An object: find "features", or gather a single Feature.
	single := map[string]json.RawMessage{}
	for j.dec.More() {
		kt, err := j.dec.Token()
		if err != nil {
			return nil, bad(err)
		}
		key, _ := kt.(string)
		if key == "features" {
			if t, err := j.dec.Token(); err != nil || t != json.Delim('[') {
				return nil, mapcommons.Errorf(mapcommons.EINVALID, "features: expected an array")
			}
			j.inList = true
			return j, nil
		}
		var raw json.RawMessage
		if err := j.dec.Decode(&raw); err != nil {
			return nil, bad(err)
		}
		single[key] = raw
	}
	if t, _ := single["type"]; !bytes.Equal(bytes.TrimSpace(t), []byte(`"Feature"`)) {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "expected a JSON array of features, a FeatureCollection or a Feature")
	}
	b, _ := json.Marshal(single)
	j.single = b
	return j, nil
}

// Attributes implements mapcommons.FeatureSource.
func (j *jsonFeatures) Attributes() []mapcommons.Attribute { return j.attrs }

// Next implements mapcommons.FeatureSource.
func (j *jsonFeatures) Next() (*mapcommons.Feature, error) {
	if j.done {
		return nil, mapcommons.EOF
	}
	var obj map[string]json.RawMessage
	switch {
	case j.single != nil:
		j.done = true
		dec := json.NewDecoder(bytes.NewReader(j.single))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "malformed JSON body: %v", err)
		}
	case !j.dec.More():
		j.done = true
		if t, err := j.dec.Token(); err != nil || t != json.Delim(']') {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "malformed JSON body: the array of features does not end")
		}
		return nil, mapcommons.EOF
	default:
		if err := j.dec.Decode(&obj); err != nil {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "feature %d: %v", j.n, err)
		}
	}
	err := j.convert(obj)
	j.n++
	if err != nil {
		return nil, err
	}
	return &j.f, nil
}

// convert turns one decoded object into the feature, checking each value
// against its attribute's type.
func (j *jsonFeatures) convert(obj map[string]json.RawMessage) error {
	fail := func(format string, args ...any) error {
		where := fmt.Sprintf("feature %d", j.n)
		if j.name != "" {
			where = j.name
		}
		return mapcommons.Errorf(mapcommons.EINVALID, "%s: %s", where, fmt.Sprintf(format, args...))
	}
	var props map[string]json.RawMessage
	cleared := false // a patch's "properties": null, which clears them all
	if featureForm(obj, j.attrs, j.patch != nil) {
		props = map[string]json.RawMessage{} // a GeoJSON Feature: attributes in properties
		if p, ok := obj["properties"]; ok && !bytes.Equal(bytes.TrimSpace(p), []byte("null")) {
			dec := json.NewDecoder(bytes.NewReader(p))
			dec.UseNumber()
			if err := dec.Decode(&props); err != nil {
				return fail("properties: %v", err)
			}
		} else {
			cleared = ok
		}
	} else { // a flat object: attributes next to geometry
		props = obj
	}
	rawGeom, given := obj["geometry"]
	if !given && j.patch == nil {
		// A feature must say where it is; "geometry": null says it has no place.
		return fail("no geometry: a feature needs a GeoJSON geometry (or null)")
	}
	j.f.Geometry = nil
	if given {
		g, err := geojson.ParseGeometry(rawGeom)
		if err != nil {
			return fail("geometry: %v", err)
		}
		j.f.Geometry = g
	}
	j.f.Values = make([]any, len(j.attrs))
	if j.patch != nil {
		// What a patch leaves out the feature keeps: the store merges.
		j.patch.Geometry = given
		j.patch.Attrs = make([]bool, len(j.attrs))
		for i := range j.patch.Attrs {
			j.patch.Attrs[i] = cleared
		}
	}
	for key, raw := range props {
		i, ok := attrByName(j.attrs, key)
		if !ok && key == "geometry" {
			continue // the flat object's geometry
		}
		if !ok {
			return fail("no attribute %q in this dataset", key)
		}
		v, err := jsonValue(raw, j.attrs[i].Type)
		if err != nil {
			return fail("attribute %q: %v", key, err)
		}
		j.f.Values[i] = v
		if j.patch != nil {
			j.patch.Attrs[i] = true
		}
	}
	return nil
}

// featureForm reports whether obj is a GeoJSON Feature, its attributes
// in "properties": its "type" says so or, for a merge patch, it has a
// "properties" member and the dataset no attribute of that name (a merge
// patch of a Feature, {"properties": {"name": "x"}}, need not repeat its
// type).
func featureForm(obj map[string]json.RawMessage, attrs []mapcommons.Attribute, patch bool) bool {
	if isGeoJSONFeature(obj) {
		return true
	}
	_, ok := obj["properties"]
	return ok && patch && mapcommons.AttrIndex(attrs, "properties") < 0
}

func attrByName(attrs []mapcommons.Attribute, name string) (int, bool) {
	i := mapcommons.AttrIndex(attrs, name)
	return i, i >= 0
}

// jsonValue converts a JSON value to an attribute of type t.
func jsonValue(raw json.RawMessage, t mapcommons.AttrType) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	switch t {
	case mapcommons.AttrInteger:
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return i, nil
			}
			if f, err := n.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return int64(f), nil
			}
		}
		return nil, errors.New("expected an integer")
	case mapcommons.AttrFloat:
		if n, ok := v.(json.Number); ok {
			if f, err := n.Float64(); err == nil && !math.IsInf(f, 0) {
				return f, nil
			}
		}
		return nil, errors.New("expected a number")
	case mapcommons.AttrBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, errors.New("expected true or false")
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return nil, errors.New("expected a string")
}
