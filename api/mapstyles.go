// mapstyles.go: a map's styles as documents other tools import —
// /maps/{id}/styles lists them (as OGC API – Styles lists a collection's
// styles), /maps/{id}/styles/{style} answers one: a layer's (its index in
// the map) or the whole map's ("map"), as SLD 1.0, SLD 1.1 / SE 1.1 or a
// MapLibre style document (style.WriteSLD, style.MapLibreStyle). A layer
// whose dataset the caller may not download is not there.
package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"mapcommons"
	"mapcommons/render"
	"mapcommons/style"
)

// The style documents' media types and their f values.
const (
	sldType      = "application/vnd.ogc.sld+xml"
	sld10Type    = sldType + ";version=1.0"
	sld11Type    = sldType + ";version=1.1"
	maplibreType = "application/vnd.maplibre.style+json"
)

var styleFormats = map[string]string{"sld10": sld10Type, "sld11": sld11Type, "maplibre": maplibreType}

// styleLink is a link of the styles list.
type styleLink struct {
	Href  string `json:"href"`
	Rel   string `json:"rel"`
	Type  string `json:"type"`
	Title string `json:"title"`
}

// styleEntry is one style of the list.
type styleEntry struct {
	ID    string      `json:"id"`
	Title string      `json:"title"`
	Links []styleLink `json:"links"`
}

// mapStyles are the styled layers of m the caller may see (with their
// indexes in the map), each with its look.
func (s *Server) mapStyles(r *http.Request, m *mapcommons.Map) ([]style.StyledLayer, []int, error) {
	layers := s.viewableLayers(r.Context(), caller(r), m, map[int64]*mapcommons.Dataset{})
	var out []style.StyledLayer
	var index []int
	for i, l := range layers {
		if l.Dataset == nil {
			continue
		}
		sl, err := s.styledLayer(r, l)
		if err != nil {
			return nil, nil, err
		}
		out, index = append(out, sl), append(index, i)
	}
	return out, index, nil
}

// styledLayer is a map layer with its dataset as a style document says it.
func (s *Server) styledLayer(r *http.Request, l render.Layer) (style.StyledLayer, error) {
	k, err := s.classes.Look(r.Context(), &l.Layer, l.Dataset)
	if err != nil {
		return style.StyledLayer{}, err
	}
	title := l.Layer.Title
	if title == "" {
		title = l.Dataset.Title
	}
	return style.StyledLayer{Name: l.Dataset.ReadableName(), Title: title, Look: k, Dataset: l.Dataset}, nil
}

// handleMapStyles answers GET /maps/{id}/styles: the map's styles, each
// with a link per format.
func (s *Server) handleMapStyles(w http.ResponseWriter, r *http.Request) error {
	m, err := findNoBody(s, r, s.findMap)
	if err != nil {
		return err
	}
	if f := info(r).format; f != "json" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "the styles have no %s form", f)
	}
	if err := onlyParams(r); err != nil {
		return err
	}
	etag := s.mapETag(r, m, "styles")
	if notModified(w, r, etag, cacheControl(r, s.mapPublic(r, m, true))) {
		return nil
	}
	layers, index, err := s.mapStyles(r, m)
	if err != nil {
		return err
	}
	base := s.baseURL(r) + "/maps/" + strconv.FormatInt(m.ID, 10) + "/styles"
	links := func(id, what string) []styleLink {
		return []styleLink{
			{Href: base + "/" + id + "?f=sld10", Rel: "stylesheet", Type: sld10Type, Title: what + " as SLD 1.0"},
			{Href: base + "/" + id + "?f=sld11", Rel: "stylesheet", Type: sld11Type, Title: what + " as SLD 1.1 / SE 1.1"},
			{Href: base + "/" + id + "?f=maplibre", Rel: "stylesheet", Type: maplibreType, Title: what + " as a MapLibre style"},
		}
	}
	doc := struct {
		Styles []styleEntry `json:"styles"`
		Links  []styleLink  `json:"links"`
	}{Styles: []styleEntry{{ID: "map", Title: m.Title, Links: append(links("map", "the map"),
		styleLink{Href: s.ogcBase(r) + "/styles/" + mapcommons.ReadableName(m.Title, m.ID) + "/map", Rel: relMap, Type: pngType, Title: "the map drawn (OGC API – Maps)"})}},
		Links: []styleLink{{Href: base, Rel: "self", Type: "application/json", Title: "this document"}}}
	for j, l := range layers {
		id := strconv.Itoa(index[j])
		doc.Styles = append(doc.Styles, styleEntry{ID: id, Title: l.Title, Links: links(id, "layer "+id)})
	}
	return s.writeJSON(w, r, http.StatusOK, doc)
}

// handleMapStyle answers GET /maps/{id}/styles/{style}: the map's style
// ("map") or a layer's (its index), in the format f names (maplibre, the
// default; sld10; sld11).
func (s *Server) handleMapStyle(w http.ResponseWriter, r *http.Request) error {
	m, err := findNoBody(s, r, s.findMap)
	if err != nil {
		return err
	}
	if f := info(r).format; f != "json" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "styles are asked in a format by f, not by a %s suffix", f)
	}
	if err := onlyParams(r); err != nil {
		return err
	}
	f := r.URL.Query().Get("f")
	if f == "" {
		f = "maplibre"
	}
	ct, ok := styleFormats[f]
	if !ok {
		return mapcommons.Errorf(mapcommons.EINVALID, "f: %q is not a style format (maplibre, sld10, sld11)", f)
	}
	layers, index, err := s.mapStyles(r, m)
	if err != nil {
		return err
	}
	want := r.PathValue("style")
	if want != "map" {
		found := -1
		for j, i := range index {
			if strconv.Itoa(i) == want {
				found = j
			}
		}
		if found < 0 {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "map %d has no style %q", m.ID, want)
		}
		layers = layers[found : found+1]
	}
	etag := s.mapETag(r, m, "style:"+want+":"+f)
	if notModified(w, r, etag, cacheControl(r, s.mapPublic(r, m, true))) {
		return nil
	}
	name := m.Title
	if want != "map" {
		name = layers[0].Title
	}
	var b bytes.Buffer
	switch f {
	case "maplibre":
		doc := style.MapLibreStyle(name, layers, func(l style.StyledLayer) string {
			return s.ogcBase(r) + "/collections/" + l.Name + "/tiles/WebMercatorQuad/tilejson.json"
		})
		if err := json.NewEncoder(&b).Encode(doc); err != nil {
			return err
		}
	default:
		version := style.SLD10
		if f == "sld11" {
			version = style.SLD11
		}
		if err := style.WriteSLD(&b, version, name, layers); err != nil {
			return err
		}
	}
	w.Header().Set("Content-Type", ct)
	_, err = w.Write(b.Bytes())
	return err
}
