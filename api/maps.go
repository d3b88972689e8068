package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/geocommons"
	"mapcommons/style"
)

// mapTimeLayout is how map times are written (spec "Map").
const mapTimeLayout = "2006/01/02 15:04:05 -0700"

// mapDoc is the JSON of a map: the fields of the spec and of the real
// response of wire-contract 3.1.
type mapDoc struct {
	ID             int64           `json:"id"`
	Title          string          `json:"title"`
	Basemap        string          `json:"basemap"`
	Description    *string         `json:"description"`
	Tags           []string        `json:"tags"`
	Extent         [4]float64      `json:"extent"`
	Projection     string          `json:"projection"`
	Layers         []*layerDoc     `json:"layers"`
	Permissions    []permissionDoc `json:"permissions"`
	Contributor    string          `json:"contributor"`
	CreatedAt      string          `json:"created_at"`
	UpdatedAt      string          `json:"updated_at"`
	ShowState      map[string]any  `json:"show_state"`
	Classification *struct{}       `json:"classification"` // always null, as in the real response
	Link           string          `json:"link"`
}

// layerDoc is the JSON of a layer.
type layerDoc struct {
	LayerID  int       `json:"layer_id"`
	Source   string    `json:"source"`
	Title    string    `json:"title"`
	Subtitle string    `json:"subtitle"`
	Type     string    `json:"type"`
	Opacity  float64   `json:"opacity"`
	Visible  bool      `json:"visible"`
	Styles   stylesDoc `json:"styles"`
}

type stylesDoc struct {
	Type     string       `json:"type"`
	Icon     iconDoc      `json:"icon"`
	Stroke   strokeDoc    `json:"stroke"`
	Fill     fillDoc      `json:"fill"`
	Temporal temporalDoc  `json:"temporal"`
	Click    *string      `json:"click"`
	Hover    *string      `json:"hover"`
	Slider   any          `json:"slider"`
	Timeline *timelineDoc `json:"timeline"`
	// Density is shown when set (an extension: the GeoCommons styles have
	// none).
	Density *string `json:"density,omitempty"`
}

type classingDoc struct {
	SelectedAttribute    *string     `json:"selectedAttribute"`
	ClassificationType   *string     `json:"classificationType"`
	ClassificationBreaks []float64   `json:"classificationBreaks"`
	Categories           *int        `json:"categories"`
	Range                *[2]float64 `json:"range"`
	CriticalValue        *float64    `json:"criticalValue,omitempty"`
}

type iconDoc struct {
	classingDoc
	Color          *int     `json:"color"`
	Symbol         *string  `json:"symbol"`
	Opacity        *float64 `json:"opacity"`
	Dropshadow     int      `json:"dropshadow"`
	LineStyle      *string  `json:"lineStyle"`
	Size           float64  `json:"size"`
	Classification any      `json:"classification,omitempty"`
}

type strokeDoc struct {
	Color  *int     `json:"color"`
	Alpha  float64  `json:"alpha"`
	Weight *float64 `json:"weight"`
}

type fillDoc struct {
	classingDoc
	Color          *int    `json:"color"`
	Colors         []int   `json:"colors"`
	Ramp           *string `json:"ramp,omitempty"`
	Opacity        float64 `json:"opacity"`
	Classification any     `json:"classification,omitempty"`
}

type temporalDoc struct {
	Attributes []string `json:"attributes"`
}

type timelineDoc struct {
	Begin  any    `json:"begin"`
	End    any    `json:"end"`
	Period *int64 `json:"period"`
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func classingJSON(c mapcommons.Classing) classingDoc {
	d := classingDoc{
		SelectedAttribute: strOrNil(c.SelectedAttribute), ClassificationType: strOrNil(c.ClassificationType),
		ClassificationBreaks: c.ClassificationBreaks, Range: c.Range, CriticalValue: c.CriticalValue,
	}
	if d.ClassificationBreaks == nil {
		d.ClassificationBreaks = []float64{}
	}
	if c.Categories != 0 {
		k := c.Categories
		d.Categories = &k
	}
	return d
}

// timeMarkJSON writes a time element as it was given: now, milliseconds
// (a number), or the ISO 8601 text with its offset; one stored before times
// kept their text, as the spec writes it, YYYYMMDDTHH:MM:SSZ.
func timeMarkJSON(t *mapcommons.TimeMark) any {
	switch {
	case t == nil:
		return nil
	case t.Now:
		return "now"
	case t.Text != "" && strings.Trim(t.Text, "-0123456789") == "":
		return t.Millis
	case t.Text != "":
		return t.Text
	}
	return time.UnixMilli(t.Millis).UTC().Format("20060102T15:04:05Z")
}

func timelineJSON(tl *mapcommons.Timeline) *timelineDoc {
	return &timelineDoc{Begin: timeMarkJSON(tl.Begin), End: timeMarkJSON(tl.End), Period: tl.Period}
}

func layerJSON(i int, l *mapcommons.Layer) *layerDoc {
	st := l.Styles
	d := &layerDoc{
		LayerID: i, Source: l.Source, Title: l.Title, Subtitle: l.Subtitle, Type: st.Type,
		Opacity: l.Opacity, Visible: l.Visible,
	}
	s := &d.Styles
	s.Type = st.Type
	s.Icon = iconDoc{
		classingDoc: classingJSON(st.Icon.Classing), Color: st.Icon.Color, Symbol: strOrNil(st.Icon.Symbol),
		Opacity: st.Icon.Opacity, LineStyle: strOrNil(st.Icon.LineStyle), Size: st.Icon.Size,
	}
	if st.Icon.Dropshadow {
		s.Icon.Dropshadow = 1
	}
	s.Stroke = strokeDoc{Color: st.Stroke.Color, Alpha: st.Stroke.Alpha, Weight: st.Stroke.Weight}
	s.Fill = fillDoc{classingDoc: classingJSON(st.Fill.Classing), Color: st.Fill.Color, Colors: st.Fill.Colors,
		Ramp: strOrNil(st.Fill.Ramp), Opacity: st.Fill.Opacity}
	if s.Fill.Colors == nil {
		s.Fill.Colors = []int{}
	}
	s.Temporal.Attributes = st.Temporal.Attributes
	if s.Temporal.Attributes == nil {
		s.Temporal.Attributes = []string{}
	}
	s.Click, s.Hover = strOrNil(st.Click), strOrNil(st.Hover)
	s.Density = strOrNil(st.Density)
	if sl := st.Slider; sl != nil {
		switch {
		case sl.Range != nil:
			s.Slider = timelineJSON(sl.Range)
		case sl.Now:
			s.Slider = "now"
		default:
			s.Slider = sl.Millis
		}
	}
	if tl := st.Timeline; tl != nil {
		s.Timeline = timelineJSON(tl)
	}
	return d
}

// worldExtent is the extent of a map with nothing to show.
func worldExtent(projection string) [4]float64 {
	if projection == mapcommons.ProjectionLonLat {
		return [4]float64{-180, -90, 180, 90}
	}
	return [4]float64{-180, -85, 180, 85}
}

// mapJSON builds the document of m. lookup resolves finder: sources (for
// the default extent). The names of the groups of its sharing list go to
// those who may change the list.
func (s *Server) mapJSON(r *http.Request, m *mapcommons.Map, lookup geocommons.LayerContext) (*mapDoc, error) {
	perms, err := s.sharingJSON(r, m.Permissions, s.policy.CanSetMapPermissions(caller(r), m) == nil)
	if err != nil {
		return nil, err
	}
	d := &mapDoc{
		ID: m.ID, Title: m.Title, Basemap: m.Basemap, Description: m.Description, Tags: m.Tags,
		Projection: m.Projection, Layers: []*layerDoc{}, Permissions: []permissionDoc{}, Contributor: m.Owner,
		CreatedAt: m.CreatedAt.UTC().Format(mapTimeLayout), UpdatedAt: m.UpdatedAt.UTC().Format(mapTimeLayout),
		Link: s.mapLink(r, m.ID),
	}
	if d.Tags == nil {
		d.Tags = []string{}
	}
	for i := range m.Layers {
		d.Layers = append(d.Layers, layerJSON(i, &m.Layers[i]))
	}
	d.Permissions = perms
	if m.Extent != nil {
		d.Extent = *m.Extent
	} else {
		d.Extent = layersExtent(m, lookup)
	}
	d.ShowState = map[string]any{"basemap": map[string]any{
		"name": m.Basemap, "providerType": nil, "mapDisplayName": m.Basemap, "vanillaColor": nil, "tileType": nil,
		"tint": map[string]any{"redMultiplier": 1, "blueMultipler": 1, "greenMultipler": 1, "alphaMultiplier": 1,
			"greenOffset": 1, "blueOffset": 0, "alphaOffset": 0, "color": 0, "redOffset": 0},
	}}
	return d, nil
}

// mapDocument is the JSON of m with the classes of its classed layers.
func (s *Server) mapDocument(r *http.Request, m *mapcommons.Map) (*mapDoc, error) {
	lookup := s.lookupFor(r)
	d, err := s.mapJSON(r, m, lookup)
	if err != nil {
		return nil, err
	}
	if err := s.withClasses(r, m, d, lookup); err != nil {
		return nil, err
	}
	return d, nil
}

// layerDocument is the JSON of layer i of m with its classes.
func (s *Server) layerDocument(r *http.Request, m *mapcommons.Map, i int) (*layerDoc, error) {
	d := layerJSON(i, &m.Layers[i])
	classes, err := s.mapClasses(r, m.Layers[i:i+1], s.lookupFor(r))
	if err != nil {
		return nil, err
	}
	attachClasses(&m.Layers[i], d, classes[0])
	return d, nil
}

// layersExtent is the union of the extents of the layers' datasets (those
// lookup resolves), or the world when none has one.
func layersExtent(m *mapcommons.Map, lookup geocommons.LayerContext) [4]float64 {
	e := [4]float64{181, 91, -181, -91}
	found := false
	for _, l := range m.Layers {
		ds := lookup(l.Source)
		if ds == nil || ds.Extent == nil {
			continue
		}
		found = true
		e = [4]float64{min(e[0], ds.Extent.MinX), min(e[1], ds.Extent.MinY), max(e[2], ds.Extent.MaxX), max(e[3], ds.Extent.MaxY)}
	}
	if !found {
		return worldExtent(m.Projection)
	}
	return e
}

// layerDataset returns the dataset a finder: source names, nil when the
// source is not one or the dataset does not exist (a layer may name a
// dataset that does not exist yet: it then shows nothing).
func (s *Server) layerDataset(ctx context.Context, source string) *mapcommons.Dataset {
	id, ok := geocommons.DatasetOfSource(source)
	if !ok {
		return nil
	}
	ds, err := s.svc.Datasets.FindDatasetByID(ctx, id)
	if err != nil {
		return nil
	}
	return ds
}

func (s *Server) mapLink(r *http.Request, id int64) string {
	return s.baseURL(r) + "/maps/" + strconv.FormatInt(id, 10) + ".json"
}

// mapID parses the {id} path segment.
func mapID(r *http.Request) (int64, error) {
	raw := r.PathValue("id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, mapcommons.Errorf(mapcommons.ENOTFOUND, "map %q not found", raw)
	}
	return id, nil
}

// findMap loads the {id} map and checks that the caller may see it; a
// missing one is refused as a private one would be (Policy.NotFound).
func (s *Server) findMap(r *http.Request) (*mapcommons.Map, error) {
	id, err := mapID(r)
	if err != nil {
		return nil, s.policy.NotFound(caller(r), mapcommons.ModelMap, err)
	}
	m, err := s.svc.Maps.FindMapByID(r.Context(), id)
	if err != nil {
		return nil, s.policy.NotFound(caller(r), mapcommons.ModelMap, err)
	}
	return m, s.policy.CanViewMap(caller(r), m)
}

// layerIndex parses the {index} path segment against m's layers.
func layerIndex(r *http.Request, m *mapcommons.Map) (int, error) {
	raw := r.PathValue("index")
	i, err := strconv.Atoi(raw)
	if err != nil || i < 0 || i >= len(m.Layers) || strconv.Itoa(i) != raw {
		return 0, mapcommons.Errorf(mapcommons.ENOTFOUND, "map %d has no layer %q (it has %d)", m.ID, raw, len(m.Layers))
	}
	return i, nil
}

// lookupFor resolves finder: sources during one request, as its caller
// may see them: a dataset the caller may not view counts as missing (it
// gives the map no extent, its attributes are not checked, its title is
// not the layer's default), so that a map does not tell about private data.
func (s *Server) lookupFor(r *http.Request) geocommons.LayerContext {
	cache := map[string]*mapcommons.Dataset{}
	me := caller(r)
	return func(source string) *mapcommons.Dataset {
		if ds, ok := cache[source]; ok {
			return ds
		}
		ds := s.layerDataset(r.Context(), source)
		if ds != nil && s.policy.CanViewDataset(me, ds) != nil {
			ds = nil
		}
		cache[source] = ds
		return ds
	}
}

// parseLayers reads a posted layer list.
func (s *Server) parseLayers(nodes []geocommons.Node, lookup geocommons.LayerContext) ([]mapcommons.Layer, error) {
	if len(nodes) > maxLayers {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "layers: at most %d layers", maxLayers)
	}
	out := make([]mapcommons.Layer, 0, len(nodes))
	for _, n := range nodes {
		l, err := geocommons.LayerParams(n, nil, lookup)
		if err != nil {
			return nil, err
		}
		if err := style.Check(n.Path(), &l, lookup(l.Source)); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// maxLayers bounds the layers of one map.
const maxLayers = 100

// handleMapCreate answers POST /maps: a new map owned by the caller.
func (s *Server) handleMapCreate(w http.ResponseWriter, r *http.Request) error {
	me := caller(r)
	q, err := s.parseAllowed(r, s.policy.CanCreateMap(me))
	if err != nil {
		return err
	}
	defer q.Cleanup()
	f, err := geocommons.MapParams(q.Params)
	if err != nil {
		return err
	}
	for _, req := range []struct {
		name string
		v    *string
	}{{"title", f.Title}, {"basemap", f.Basemap}} {
		if req.v == nil || *req.v == "" {
			return mapcommons.Errorf(mapcommons.EINVALID, "%s: missing (a map needs a title and a basemap)", req.name)
		}
	}
	m := &mapcommons.Map{OwnerID: me.ID, Owner: me.Login, Title: *f.Title, Basemap: *f.Basemap, Description: f.Description,
		Tags: []string{}, Extent: f.Extent, Projection: mapcommons.ProjectionMercator, Layers: []mapcommons.Layer{},
		Permissions: s.policy.DefaultMapPermissions()}
	if f.Projection != nil {
		m.Projection = *f.Projection
	}
	if f.Tags != nil {
		m.Tags = *f.Tags
	}
	if f.Permissions != nil {
		if err := s.policy.CanSetMapPermissions(me, m); err != nil {
			return err
		}
		if err := s.checkGroups(r, *f.Permissions); err != nil {
			return err
		}
		m.Permissions = *f.Permissions
	}
	lookup := s.lookupFor(r)
	if f.LayersGiven {
		if m.Layers, err = s.parseLayers(f.Layers, lookup); err != nil {
			return err
		}
	}
	// Classify first: a map whose classification is cut short is not
	// created.
	classes, err := s.mapClasses(r, m.Layers, lookup)
	if err != nil {
		return err
	}
	if err := s.svc.Maps.CreateMap(r.Context(), m); err != nil {
		return err
	}
	d, err := s.mapJSON(r, m, lookup)
	if err != nil {
		return err
	}
	for i := range m.Layers {
		attachClasses(&m.Layers[i], d.Layers[i], classes[i])
	}
	return s.created(w, r, s.mapLink(r, m.ID), d)
}

// handleMapGet answers GET /maps/{id}: the map with its layers and their
// classes, or its KML by the path's suffix.
func (s *Server) handleMapGet(w http.ResponseWriter, r *http.Request) error {
	m, err := findNoBody(s, r, s.findMap)
	if err != nil {
		return err
	}
	switch f := info(r).format; f {
	case "json", "kml":
		// Before the layers are classified and their features read.
		if notModified(w, r, s.mapETag(r, m, f), cacheControl(r, s.mapPublic(r, m, f == "kml"))) {
			return nil
		}
	}
	switch f := info(r).format; f {
	case "json":
		d, err := s.mapDocument(r, m)
		if err != nil {
			return err
		}
		return s.writeJSON(w, r, http.StatusOK, d)
	case "kml":
		return s.writeMapKML(w, r, m)
	case "png":
		return s.writeMapImage(w, r, m)
	default:
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "maps are not available as .%s (try .json, .kml or .png)", f)
	}
}

// mapToEdit loads the {id} map for a change.
func (s *Server) mapToEdit(r *http.Request) (*mapcommons.Map, error) {
	return s.mapFor(r, s.policy.CanEditMap)
}

// mapFor loads the {id} map for an action the rule allows; 401 without
// credentials whether it exists or not.
func (s *Server) mapFor(r *http.Request, rule func(*mapcommons.User, *mapcommons.Map) error) (*mapcommons.Map, error) {
	if caller(r) == nil {
		return nil, mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "authentication required")
	}
	id, err := mapID(r)
	if err != nil {
		return nil, err
	}
	m, err := s.svc.Maps.FindMapByID(r.Context(), id)
	if err != nil {
		return nil, err
	}
	return m, rule(caller(r), m)
}

// updateMap applies fn to m, which mapToEdit gave (the caller's right was
// checked before the body was read), in one transaction; the rights are
// checked again on the map as read there. With prepare, fn is first
// applied to m as read before the transaction and prepare given the
// result: work the answer needs (classifying layers) is done, outside the
// write transaction, before the change is stored, and an error of either
// (a bad parameter, the client gone, the deadline passed) stores nothing.
func (s *Server) updateMap(r *http.Request, m *mapcommons.Map, fn, prepare func(*mapcommons.Map) error) (*mapcommons.Map, error) {
	if prepare != nil {
		if err := fn(m); err != nil {
			return nil, err
		}
		if err := prepare(m); err != nil {
			return nil, err
		}
		if err := r.Context().Err(); err != nil {
			return nil, err
		}
	}
	return s.svc.Maps.UpdateMap(r.Context(), m.ID, func(cur *mapcommons.Map) error {
		if err := s.policy.CanEditMap(caller(r), cur); err != nil {
			return err
		}
		return fn(cur)
	})
}

// handleMapUpdate answers PUT /maps/{id}: the map's fields and layers changed,
// those not given kept.
func (s *Server) handleMapUpdate(w http.ResponseWriter, r *http.Request) error {
	m, q, err := parseFor(s, r, s.mapToEdit)
	if err != nil {
		return err
	}
	defer q.Cleanup()
	f, err := geocommons.MapParams(q.Params)
	if err != nil {
		return err
	}
	lookup := s.lookupFor(r)
	m, err = s.updateMap(r, m, func(m *mapcommons.Map) error {
		for _, t := range []struct {
			name string
			v    *string
			dst  *string
		}{{"title", f.Title, &m.Title}, {"basemap", f.Basemap, &m.Basemap}, {"projection", f.Projection, &m.Projection}} {
			if t.v != nil {
				if *t.v == "" {
					return mapcommons.Errorf(mapcommons.EINVALID, "%s: may not be blank", t.name)
				}
				*t.dst = *t.v
			}
		}
		if f.Description != nil {
			m.Description = f.Description
		}
		if f.Tags != nil {
			m.Tags = *f.Tags
		}
		if f.Extent != nil {
			m.Extent = f.Extent
		}
		if f.Permissions != nil {
			if err := s.policy.CanShareMap(caller(r), m, *f.Permissions); err != nil {
				return err
			}
			if err := s.checkGroups(r, *f.Permissions); err != nil {
				return err
			}
			m.Permissions = *f.Permissions
		}
		if f.LayersGiven {
			layers, err := s.parseLayers(f.Layers, lookup)
			if err != nil {
				return err
			}
			m.Layers = layers
		}
		return nil
	}, func(m *mapcommons.Map) error {
		_, err := s.mapClasses(r, m.Layers, lookup)
		return err
	})
	if err != nil {
		return err
	}
	d, err := s.mapDocument(r, m)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, http.StatusOK, d)
}

// handleMapDelete answers DELETE /maps/{id}: its owner or an administrator
// deletes the map.
func (s *Server) handleMapDelete(w http.ResponseWriter, r *http.Request) error {
	m, err := s.mapFor(r, s.policy.CanDeleteMap)
	if err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	if err := s.svc.Maps.DeleteMap(r.Context(), m.ID); err != nil {
		return err
	}
	return empty(w, http.StatusNoContent)
}

// layerFromRequest reads and checks the layer a request's body describes
// (as POST /maps/{id}/layers takes it), and the lookup of datasets with
// the caller's rights it was checked with.
func (s *Server) layerFromRequest(r *http.Request) (mapcommons.Layer, geocommons.LayerContext, error) {
	q, err := s.parseRequest(r)
	if err != nil {
		return mapcommons.Layer{}, nil, err
	}
	defer q.Cleanup()
	lookup := s.lookupFor(r)
	n := geocommons.LayerNode(q.Params)
	l, err := geocommons.LayerParams(n, nil, lookup)
	if err != nil {
		return mapcommons.Layer{}, nil, err
	}
	if err := style.Check(n.Path(), &l, lookup(l.Source)); err != nil {
		return mapcommons.Layer{}, nil, err
	}
	return l, lookup, nil
}

// handleLayerCreate answers POST /maps/{id}/layers: a layer added to the map.
func (s *Server) handleLayerCreate(w http.ResponseWriter, r *http.Request) error {
	m, err := s.mapToEdit(r)
	if err != nil {
		return err
	}
	l, _, err := s.layerFromRequest(r)
	if err != nil {
		return err
	}
	index := 0
	m, err = s.updateMap(r, m, func(m *mapcommons.Map) error {
		if len(m.Layers) >= maxLayers {
			return mapcommons.Errorf(mapcommons.EINVALID, "map %d has %d layers, the most a map may have", m.ID, maxLayers)
		}
		index = len(m.Layers)
		m.Layers = append(m.Layers, l)
		return nil
	}, nil)
	if err != nil {
		return err
	}
	w.Header().Set("Location", s.baseURL(r)+"/maps/"+strconv.FormatInt(m.ID, 10)+"/layers/"+strconv.Itoa(index)+".json")
	return empty(w, http.StatusCreated)
}

// handleLayerGet answers GET /maps/{id}/layers/{index}: one layer of the map,
// with its classes.
func (s *Server) handleLayerGet(w http.ResponseWriter, r *http.Request) error {
	m, err := findNoBody(s, r, s.findMap)
	if err != nil {
		return err
	}
	i, err := layerIndex(r, m)
	if err != nil {
		return err
	}
	if f := info(r).format; f != "json" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "layers have no %s form", f)
	}
	d, err := s.layerDocument(r, m, i)
	if err != nil {
		return err
	}
	privateAnswer(w) // the layer's dataset as the caller may see it
	return s.writeJSON(w, r, http.StatusOK, d)
}

// handleLayerUpdate answers PUT /maps/{id}/layers/{index}: the layer's options
// changed, those not given kept.
func (s *Server) handleLayerUpdate(w http.ResponseWriter, r *http.Request) error {
	m, q, err := parseFor(s, r, s.mapToEdit)
	if err != nil {
		return err
	}
	defer q.Cleanup()
	lookup := s.lookupFor(r)
	index := 0
	m, err = s.updateMap(r, m, func(m *mapcommons.Map) error {
		i, err := layerIndex(r, m)
		if err != nil {
			return err
		}
		n := geocommons.LayerNode(q.Params)
		l, err := geocommons.LayerParams(n, &m.Layers[i], lookup)
		if err != nil {
			return err
		}
		if err := style.Check(n.Path(), &l, lookup(l.Source)); err != nil {
			return err
		}
		m.Layers[i] = l
		index = i
		return nil
	}, func(m *mapcommons.Map) error {
		_, err := s.mapClasses(r, m.Layers[index:index+1], lookup)
		return err
	})
	if err != nil {
		return err
	}
	d, err := s.layerDocument(r, m, index)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, http.StatusOK, d)
}

// handleLayerDelete answers DELETE /maps/{id}/layers/{index}: the layer
// taken out of the map.
func (s *Server) handleLayerDelete(w http.ResponseWriter, r *http.Request) error {
	m, err := findNoBody(s, r, s.mapToEdit)
	if err != nil {
		return err
	}
	_, err = s.updateMap(r, m, func(m *mapcommons.Map) error {
		i, err := layerIndex(r, m)
		if err != nil {
			return err
		}
		m.Layers = append(m.Layers[:i], m.Layers[i+1:]...)
		return nil
	}, nil)
	if err != nil {
		return err
	}
	return empty(w, http.StatusNoContent)
}
