// Package geocommons reads the parameters of the GeoCommons API (the
// Rails-style trees of package params) as the domain's values: a feature
// query (features.go) and a map with its layers and their styles
// (maps.go). It knows nothing of HTTP: api hands it a request's
// parameters and answers with what it reads, and any other face that
// speaks GeoCommons parameters can use it as well.
package geocommons

import (
	"mapcommons"
	"mapcommons/params"
	"mapcommons/spatial"
	"slices"
	"strings"
)

// FeatureQuery reads the parameters of features.json that choose the
// features: grouping and aggregates, the page (start, limit: at most
// mapcommons.MaxFeatureLimit, all of them by default when grouped), order
// and sort, bbox, the buffer query (Near), with_distance and the filters.
func FeatureQuery(p params.Params) (*mapcommons.FeatureQuery, error) {
	q := &mapcommons.FeatureQuery{}
	var err error

	// Grouping first: it changes the default page size.
	if g, ok := p.Strings("group_by"); ok {
		for _, name := range g {
			if name = strings.TrimSpace(name); name != "" {
				q.GroupBy = append(q.GroupBy, name)
			}
		}
	}
	if list, ok := p.List("aggregates"); ok {
		for i, item := range list {
			m, isMap := item.(map[string]any)
			if !isMap {
				return nil, params.Invalid("aggregates", "element %d is not name and calc", i)
			}
			name, _ := params.Params(m).String("name")
			calc, _ := params.Params(m).String("calc")
			if name == "" || calc == "" {
				return nil, params.Invalid("aggregates", "element %d needs both name and calc", i)
			}
			q.Aggregates = append(q.Aggregates, mapcommons.Aggregate{Name: name, Calc: strings.ToLower(calc)})
		}
	} else if _, given := p.Get("aggregates"); given {
		return nil, params.Invalid("aggregates", "expected aggregates[][name]=...&aggregates[][calc]=...")
	}
	def := int64(mapcommons.DefaultFeatureLimit)
	if q.Grouped() {
		def = mapcommons.MaxFeatureLimit
	}
	page, err := Page(p, def)
	if err != nil {
		return nil, err
	}
	q.Offset, q.Limit = page.Offset, page.Limit

	if v, ok := p.String("order"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "ascending", "asc", "":
		case "descending", "desc":
			q.Descending = true
		default:
			return nil, params.Invalid("order", "%q is neither ascending nor descending", v)
		}
	}
	if v, ok := p.String("sort"); ok {
		q.Sort = strings.TrimSpace(v)
	}

	if b, given, err := p.Numbers("bbox"); err != nil {
		return nil, err
	} else if given {
		if len(b) != 4 {
			return nil, params.Invalid("bbox", "needs 4 numbers west,south,east,north, got %d", len(b))
		}
		if q.BBox, err = mapcommons.NewBBox("bbox", b[0], b[1], b[2], b[3]); err != nil {
			return nil, err
		}
	}

	if q.Near, err = Near(p); err != nil {
		return nil, err
	}
	if q.WithDistance, err = p.Flag("with_distance"); err != nil {
		return nil, err
	}
	if q.WithDistance && q.Near == nil {
		return nil, params.Invalid("with_distance", "needs a geometry to measure from: lat/lon/radius, points, line or polygon")
	}

	if q.Filters, err = Filters(p); err != nil {
		return nil, err
	}

	return q, nil
}

// Near reads the buffer query: lat/lon/radius/units, points, line, polygon
// and intersect; nil when none is given.
func Near(p params.Params) (*mapcommons.Near, error) {
	lat, hasLat, err := p.Number("lat")
	if err != nil {
		return nil, err
	}
	lon, hasLon, err := p.Number("lon")
	if err != nil {
		return nil, err
	}
	radius, hasRadius, err := p.Number("radius")
	if err != nil {
		return nil, err
	}
	if hasRadius && radius < 0 {
		return nil, params.Invalid("radius", "must not be negative")
	}
	units := "km"
	if v, ok := p.String("units"); ok {
		units = strings.ToLower(strings.TrimSpace(v))
		switch units {
		case "mi", "mile":
			units = "miles"
		case "feet", "foot":
			units = "ft"
		case "meters", "metres", "meter", "metre":
			units = "m"
		case "kilometers", "kilometres":
			units = "km"
		case "degree":
			units = "degrees"
		}
		if !spatial.ValidUnit(units) {
			return nil, params.Invalid("units", "%q is not one of km, m, ft, miles, degrees", v)
		}
		if !hasRadius {
			return nil, params.Invalid("units", "needs radius")
		}
	}
	// A value until the end: most queries have no buffer, and allocate none.
	n := mapcommons.Near{Units: units, Radius: radius, Contained: true}
	if v, ok := p.String("intersect"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "contained", "":
		case "full":
			n.Contained = false
		default:
			return nil, params.Invalid("intersect", "%q is neither contained nor full", v)
		}
	}
	kinds := 0
	if hasLat || hasLon {
		kinds++
		switch {
		case !hasLat:
			return nil, params.Invalid("lat", "missing (lon needs lat and radius)")
		case !hasLon:
			return nil, params.Invalid("lon", "missing (lat needs lon and radius)")
		case !hasRadius:
			return nil, params.Invalid("radius", "missing (lat and lon need radius)")
		}
		n.Kind, n.XY = mapcommons.NearPoint, []float64{lon, lat}
		if lon < -180 || lon > 180 {
			return nil, params.Invalid("lon", "longitude %v outside -180..180", lon)
		}
		if lat < -90 || lat > 90 {
			return nil, params.Invalid("lat", "latitude %v outside -90..90", lat)
		}
	}
	first := "lat/lon"
	for _, k := range []struct {
		name, kind string
		min        int
	}{{"points", mapcommons.NearPoints, 1}, {"line", mapcommons.NearLine, 2}, {"polygon", mapcommons.NearPolygon, 4}} {
		xy, given, err := p.Numbers(k.name)
		if err != nil {
			return nil, err
		}
		if !given {
			continue
		}
		if kinds++; kinds > 1 {
			return nil, params.Invalid(k.name, "give one of lat/lon, points, line or polygon, not several (%s given too)", first)
		}
		first = k.name
		if len(xy)/2 > mapcommons.MaxNearVertices {
			// Every feature tested costs a pass over the vertices.
			return nil, params.Invalid(k.name, "%d vertices, at most %d", len(xy)/2, mapcommons.MaxNearVertices)
		}
		if len(xy)%2 != 0 || len(xy)/2 < k.min {
			return nil, params.Invalid(k.name, "needs at least %d longitude,latitude pairs, got %d numbers", k.min, len(xy))
		}
		if err := mapcommons.CheckLonLat(k.name, xy); err != nil {
			return nil, err
		}
		if k.kind == mapcommons.NearPolygon && (xy[0] != xy[len(xy)-2] || xy[1] != xy[len(xy)-1]) {
			return nil, params.Invalid("polygon", "the ring is not closed: the last point must repeat the first")
		}
		if k.kind != mapcommons.NearPolygon && !hasRadius {
			return nil, params.Invalid("radius", "missing (%s needs radius)", k.name)
		}
		n.Kind, n.XY = k.kind, xy
	}
	switch {
	case kinds == 0 && hasRadius:
		return nil, params.Invalid("radius", "needs lat/lon, points, line or polygon")
	case kinds == 0:
		return nil, nil
	}
	out := n
	return &out, nil
}

// Filters reads filter[<attr>][][<op>]=<value> (also filter[<attr>][<op>]).
func Filters(p params.Params) ([]mapcommons.Filter, error) {
	raw, given := p.Get("filter")
	if !given {
		return nil, nil
	}
	byAttr, ok := raw.(map[string]any)
	if !ok {
		return nil, params.Invalid("filter", "expected filter[<attribute>][][<min|max|equals|in>]=<value>")
	}
	names := make([]string, 0, len(byAttr))
	for name := range byAttr {
		names = append(names, name)
	}
	slices.Sort(names) // a stable order for stable error messages
	var out []mapcommons.Filter
	for _, attr := range names {
		var conds []map[string]any
		switch v := byAttr[attr].(type) {
		case map[string]any:
			conds = append(conds, v)
		case []any:
			for _, c := range v {
				m, ok := c.(map[string]any)
				if !ok {
					return nil, params.Invalid("filter["+attr+"]", "expected [][<min|max|equals|in>]=<value>")
				}
				conds = append(conds, m)
			}
		default:
			return nil, params.Invalid("filter["+attr+"]", "expected [][<min|max|equals|in>]=<value>")
		}
		for _, c := range conds {
			ops := make([]string, 0, len(c))
			for op := range c {
				ops = append(ops, op)
			}
			slices.Sort(ops)
			for _, op := range ops {
				v, ok := c[op].(string)
				if !ok {
					return nil, params.Invalid("filter["+attr+"]["+op+"]", "expected one value")
				}
				f := mapcommons.Filter{Attr: attr, Op: strings.ToLower(op), Values: []string{v}}
				if f.Op == mapcommons.OpIn {
					f.Values = strings.Split(v, "|")
				}
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// Page reads start (a zero-based offset, wire contract 9) and limit
// (default def, negative meaning all; capped at MaxFeatureLimit when def is
// not "all").
func Page(p params.Params, def int64) (mapcommons.FeatureQuery, error) {
	var q mapcommons.FeatureQuery
	var err error
	if q.Offset, err = p.Int("start", 0); err != nil {
		return q, err
	}
	if q.Offset < 0 {
		return q, mapcommons.Errorf(mapcommons.EINVALID, "start: must not be negative")
	}
	if q.Limit, err = p.Int("limit", def); err != nil {
		return q, err
	}
	if q.Limit < 0 && def >= 0 {
		return q, mapcommons.Errorf(mapcommons.EINVALID, "limit: must not be negative")
	}
	if def >= 0 && q.Limit > mapcommons.MaxFeatureLimit {
		q.Limit = mapcommons.MaxFeatureLimit
	}
	return q, nil
}
