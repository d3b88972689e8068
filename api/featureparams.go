package api

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/params"
	"mapcommons/spatial"
)

// outputOptions are the parameters of features.json that shape the answer
// rather than choose the features.
type outputOptions struct {
	geojson     bool // a FeatureCollection
	geom        geomMode
	withColumns bool // the column names too
	grouped     bool
}

// invalid is the EINVALID error of a parameter: the message starts with its name.
func invalid(param, format string, args ...any) error {
	return mapcommons.Errorf(mapcommons.EINVALID, "%s: %s", param, fmt.Sprintf(format, args...))
}

// boolParam reads a boolean parameter (absent is false).
func boolParam(p params.Params, name string) (bool, error) {
	v, _, err := p.Bool(name)
	return v, err
}

// numbers parses a comma-separated list of numbers (also given as a list
// parameter, bbox[]=...).
func numbers(p params.Params, name string) ([]float64, bool, error) {
	var parts []string
	if list, ok := p.Strings(name); ok && len(list) > 1 {
		parts = list
	} else if v, ok := p.String(name); ok {
		parts = strings.Split(v, ",")
	} else if ok && len(list) == 1 {
		parts = strings.Split(list[0], ",")
	} else {
		return nil, false, nil
	}
	out := make([]float64, 0, len(parts))
	for _, s := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, true, invalid(name, "%q is not a number", s)
		}
		out = append(out, v)
	}
	return out, true, nil
}

// number parses a single numeric parameter.
func number(p params.Params, name string) (float64, bool, error) {
	v, ok := p.String(name)
	if !ok {
		return 0, false, nil
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, true, invalid(name, "%q is not a number", v)
	}
	return x, true, nil
}

func checkLonLat(name string, xy []float64) error {
	for i := 0; i+1 < len(xy); i += 2 {
		if xy[i] < -180 || xy[i] > 180 {
			return invalid(name, "longitude %v outside -180..180", xy[i])
		}
		if xy[i+1] < -90 || xy[i+1] > 90 {
			return invalid(name, "latitude %v outside -90..90", xy[i+1])
		}
	}
	return nil
}

// parseFeatureQuery reads every parameter of features.json.
func parseFeatureQuery(p params.Params, format string) (*mapcommons.FeatureQuery, outputOptions, error) {
	var out outputOptions
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
				return nil, out, invalid("aggregates", "element %d is not name and calc", i)
			}
			name, _ := params.Params(m).String("name")
			calc, _ := params.Params(m).String("calc")
			if name == "" || calc == "" {
				return nil, out, invalid("aggregates", "element %d needs both name and calc", i)
			}
			q.Aggregates = append(q.Aggregates, mapcommons.Aggregate{Name: name, Calc: strings.ToLower(calc)})
		}
	} else if _, given := p.Get("aggregates"); given {
		return nil, out, invalid("aggregates", "expected aggregates[][name]=...&aggregates[][calc]=...")
	}
	out.grouped = q.Grouped()
	def := int64(mapcommons.DefaultFeatureLimit)
	if out.grouped {
		def = mapcommons.MaxFeatureLimit
	}
	page, err := pageParams(p, def)
	if err != nil {
		return nil, out, err
	}
	q.Offset, q.Limit = page.Offset, page.Limit

	if v, ok := p.String("order"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "ascending", "asc", "":
		case "descending", "desc":
			q.Descending = true
		default:
			return nil, out, invalid("order", "%q is neither ascending nor descending", v)
		}
	}
	if v, ok := p.String("sort"); ok {
		q.Sort = strings.TrimSpace(v)
	}

	if b, given, err := numbers(p, "bbox"); err != nil {
		return nil, out, err
	} else if given {
		if len(b) != 4 {
			return nil, out, invalid("bbox", "needs 4 numbers west,south,east,north, got %d", len(b))
		}
		if err := checkLonLat("bbox", b); err != nil {
			return nil, out, err
		}
		if b[1] > b[3] {
			return nil, out, invalid("bbox", "south %v is north of north %v", b[1], b[3])
		}
		q.BBox = &mapcommons.BBox{W: b[0], S: b[1], E: b[2], N: b[3]}
	}

	if q.Near, err = parseNear(p); err != nil {
		return nil, out, err
	}
	if q.WithDistance, err = boolParam(p, "with_distance"); err != nil {
		return nil, out, err
	}
	if q.WithDistance && q.Near == nil {
		return nil, out, invalid("with_distance", "needs a geometry to measure from: lat/lon/radius, points, line or polygon")
	}

	if q.Filters, err = parseFilters(p); err != nil {
		return nil, out, err
	}

	if out.geojson, err = boolParam(p, "geojson"); err != nil {
		return nil, out, err
	}
	out.geojson = out.geojson || format == "geojson"
	out.geom = geomHex
	if hex, given, err := p.Bool("hex_geometry"); err != nil {
		return nil, out, err
	} else if given && !hex {
		out.geom = geomGeoJSON
	}
	if enc, err := boolParam(p, "encode"); err != nil {
		return nil, out, err
	} else if enc {
		out.geom = geomEncoded
	}
	if out.withColumns, err = boolParam(p, "with_columns"); err != nil {
		return nil, out, err
	}
	return q, out, nil
}

// parseNear reads lat/lon/radius/units, points, line, polygon and intersect.
func parseNear(p params.Params) (*mapcommons.Near, error) {
	lat, hasLat, err := number(p, "lat")
	if err != nil {
		return nil, err
	}
	lon, hasLon, err := number(p, "lon")
	if err != nil {
		return nil, err
	}
	radius, hasRadius, err := number(p, "radius")
	if err != nil {
		return nil, err
	}
	if hasRadius && radius < 0 {
		return nil, invalid("radius", "must not be negative")
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
			return nil, invalid("units", "%q is not one of km, m, ft, miles, degrees", v)
		}
		if !hasRadius {
			return nil, invalid("units", "needs radius")
		}
	}
	n := &mapcommons.Near{Units: units, Radius: radius, Contained: true}
	if v, ok := p.String("intersect"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "contained", "":
		case "full":
			n.Contained = false
		default:
			return nil, invalid("intersect", "%q is neither contained nor full", v)
		}
	}
	kinds := 0
	if hasLat || hasLon {
		kinds++
		switch {
		case !hasLat:
			return nil, invalid("lat", "missing (lon needs lat and radius)")
		case !hasLon:
			return nil, invalid("lon", "missing (lat needs lon and radius)")
		case !hasRadius:
			return nil, invalid("radius", "missing (lat and lon need radius)")
		}
		n.Kind, n.XY = mapcommons.NearPoint, []float64{lon, lat}
		if lon < -180 || lon > 180 {
			return nil, invalid("lon", "longitude %v outside -180..180", lon)
		}
		if lat < -90 || lat > 90 {
			return nil, invalid("lat", "latitude %v outside -90..90", lat)
		}
	}
	first := "lat/lon"
	for _, k := range []struct {
		name, kind string
		min        int
	}{{"points", mapcommons.NearPoints, 1}, {"line", mapcommons.NearLine, 2}, {"polygon", mapcommons.NearPolygon, 4}} {
		xy, given, err := numbers(p, k.name)
		if err != nil {
			return nil, err
		}
		if !given {
			continue
		}
		if kinds++; kinds > 1 {
			return nil, invalid(k.name, "give one of lat/lon, points, line or polygon, not several (%s given too)", first)
		}
		first = k.name
		if len(xy)/2 > mapcommons.MaxNearVertices {
			// Every feature tested costs a pass over the vertices.
			return nil, invalid(k.name, "%d vertices, at most %d", len(xy)/2, mapcommons.MaxNearVertices)
		}
		if len(xy)%2 != 0 || len(xy)/2 < k.min {
			return nil, invalid(k.name, "needs at least %d longitude,latitude pairs, got %d numbers", k.min, len(xy))
		}
		if err := checkLonLat(k.name, xy); err != nil {
			return nil, err
		}
		if k.kind == mapcommons.NearPolygon && (xy[0] != xy[len(xy)-2] || xy[1] != xy[len(xy)-1]) {
			return nil, invalid("polygon", "the ring is not closed: the last point must repeat the first")
		}
		if k.kind != mapcommons.NearPolygon && !hasRadius {
			return nil, invalid("radius", "missing (%s needs radius)", k.name)
		}
		n.Kind, n.XY = k.kind, xy
	}
	switch {
	case kinds == 0 && hasRadius:
		return nil, invalid("radius", "needs lat/lon, points, line or polygon")
	case kinds == 0:
		return nil, nil
	}
	return n, nil
}

// parseFilters reads filter[<attr>][][<op>]=<value> (also filter[<attr>][<op>]).
func parseFilters(p params.Params) ([]mapcommons.Filter, error) {
	raw, given := p.Get("filter")
	if !given {
		return nil, nil
	}
	byAttr, ok := raw.(map[string]any)
	if !ok {
		return nil, invalid("filter", "expected filter[<attribute>][][<min|max|equals|in>]=<value>")
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
					return nil, invalid("filter["+attr+"]", "expected [][<min|max|equals|in>]=<value>")
				}
				conds = append(conds, m)
			}
		default:
			return nil, invalid("filter["+attr+"]", "expected [][<min|max|equals|in>]=<value>")
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
					return nil, invalid("filter["+attr+"]["+op+"]", "expected one value")
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
