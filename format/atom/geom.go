package atom

import (
	"encoding/xml"
	"strconv"
	"strings"

	"mapcommons/format/infer"
	"mapcommons/format/wkb"
)

// appendPoint appends a Point at lon, lat.
func appendPoint(dst []byte, lon, lat float64) []byte { return wkb.AppendPoint(dst, lon, lat) }

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// checkPos reports a latitude or longitude out of range.
func (p *parser) checkPos(lat, lon float64, elem string) error {
	if lat < -90 || lat > 90 {
		return p.errorf(elem, "latitude %s out of range", fmtNum(lat))
	}
	if lon < -180 || lon > 180 {
		return p.errorf(elem, "longitude %s out of range", fmtNum(lon))
	}
	return nil
}

// addPos appends the position lat, lon as x, y to xy, checking it and the
// number of positions of the geometry.
func (p *parser) addPos(xy []float64, lat, lon float64, elem string) ([]float64, error) {
	if err := p.checkPos(lat, lon, elem); err != nil {
		return xy, err
	}
	p.points++
	if p.points > maxPoints {
		return xy, p.errorf(elem, "more than %d positions", maxPoints)
	}
	return append(xy, lon, lat), nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// numbers appends the numbers in s, separated by white space (and commas
// when commas is set), to dst.
func (p *parser) numbers(dst []float64, s string, commas bool, elem string) ([]float64, error) {
	for i := 0; i < len(s); {
		c := s[i]
		if isSpace(c) || commas && c == ',' {
			i++
			continue
		}
		j := i
		for j < len(s) && !isSpace(s[j]) && !(commas && s[j] == ',') {
			j++
		}
		v, err := p.number(s[i:j], elem)
		if err != nil {
			return dst, err
		}
		if len(dst) >= 3*maxPoints {
			return dst, p.errorf(elem, "more than %d positions", maxPoints)
		}
		dst = append(dst, v)
		i = j
	}
	return dst, nil
}

// number parses a decimal number (no NaN, Inf, hex or digit separators).
func (p *parser) number(s, elem string) (float64, error) {
	if infer.NumberKind(s, false) == infer.NotNumber {
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return 0, p.errorf(elem, "%q is not a number", s)
	}
	return infer.ParseFloat(s), nil
}

// setGeom keeps g as the entry's geometry unless it has one already.
func (e *rawEntry) setGeom(g wkb.Geom, ok bool) {
	if ok && !e.hasGeom {
		e.geom, e.hasGeom = g.AppendWKB(e.geom[:0]), true
	}
}

// geomText reads the text of a geometry element just started.
func (p *parser) geomText(t xml.StartElement) (string, error) {
	elem := displayName(t.Name)
	b, markup, err := p.text(p.scratch[:0], false, maxGeomText, elem)
	p.scratch = b
	if err != nil {
		return "", err
	}
	if markup {
		return "", p.errorf(elem, "holds elements, not coordinates")
	}
	return string(b), nil
}

// simple reads a GeoRSS Simple geometry element just started.
func (p *parser) simple(t xml.StartElement, e *rawEntry) error {
	elem := "georss:" + t.Name.Local
	s, err := p.geomText(t)
	if err != nil {
		return err
	}
	p.points = 0
	v, err := p.numbers(nil, s, true, elem)
	if err != nil {
		return err
	}
	var g wkb.Geom
	switch t.Name.Local {
	case "point":
		if len(v) != 2 {
			return p.errorf(elem, "%d numbers, want a latitude and a longitude", len(v))
		}
		xy, err := p.addPos(nil, v[0], v[1], elem)
		if err != nil {
			return err
		}
		g = wkb.Geom{Type: wkb.Point, Coords: xy}
	case "box":
		if len(v) != 4 {
			return p.errorf(elem, "%d numbers, want 4: south-west latitude and longitude, north-east latitude and longitude", len(v))
		}
		var ok bool
		if g, ok, err = p.box(v[0], v[1], v[2], v[3], elem); err != nil || !ok {
			return err
		}
	default:
		if len(v)%2 != 0 {
			return p.errorf(elem, "an odd number of coordinates (%d): latitude longitude pairs expected", len(v))
		}
		var xy []float64
		for i := 0; i < len(v); i += 2 {
			if xy, err = p.addPos(xy, v[i], v[i+1], elem); err != nil {
				return err
			}
		}
		if t.Name.Local == "line" {
			if len(xy) < 4 {
				return p.errorf(elem, "a line needs at least 2 positions, has %d", len(xy)/2)
			}
			g = wkb.Geom{Type: wkb.LineString, Coords: xy}
		} else {
			ring, err := p.ring(xy, elem)
			if err != nil {
				return err
			}
			g = wkb.Geom{Type: wkb.Polygon, Rings: [][]float64{ring}}
		}
	}
	e.setGeom(g, true)
	return nil
}

// ring closes xy when it is open and checks it has 3 distinct positions.
func (p *parser) ring(xy []float64, elem string) ([]float64, error) {
	n := len(xy)
	if n >= 2 && (xy[0] != xy[n-2] || xy[1] != xy[n-1]) {
		xy = append(xy, xy[0], xy[1])
	}
	if len(xy) < 8 {
		return nil, p.errorf(elem, "a polygon ring needs at least 3 different positions, has %d", max(0, len(xy)/2-1))
	}
	return xy, nil
}

// box returns the polygon of a box given by its south-west and north-east
// corners: a point when they are equal, nothing (ok false) for 0 0 0 0.
func (p *parser) box(s, w, n, e float64, elem string) (g wkb.Geom, ok bool, err error) {
	if err := p.checkPos(s, w, elem); err != nil {
		return g, false, err
	}
	if err := p.checkPos(n, e, elem); err != nil {
		return g, false, err
	}
	switch {
	case s == 0 && w == 0 && n == 0 && e == 0:
		return g, false, nil
	case s > n:
		return g, false, p.errorf(elem, "the south-west corner (latitude %s) is north of the north-east corner (latitude %s)", fmtNum(s), fmtNum(n))
	case w > e:
		return g, false, p.errorf(elem, "the west longitude %s is east of the east longitude %s (boxes across the antimeridian are not supported)", fmtNum(w), fmtNum(e))
	case s == n && w == e:
		return wkb.Geom{Type: wkb.Point, Coords: []float64{w, s}}, true, nil
	}
	ring := []float64{w, s, e, s, e, n, w, n, w, s}
	return wkb.Geom{Type: wkb.Polygon, Rings: [][]float64{ring}}, true, nil
}

// geo reads a W3C Basic Geo element just started.
func (p *parser) geo(t xml.StartElement, e *rawEntry) error {
	elem := "geo:" + t.Name.Local
	switch t.Name.Local {
	case "lat", "long", "lon", "lat_long":
	case "Point":
		return p.children(func(c xml.StartElement) error {
			if nsKind(c.Name.Space) == kGeo {
				return p.geo(c, e)
			}
			return p.skip()
		})
	default:
		return p.skip() // geo:alt and the like
	}
	s, err := p.geomText(t)
	if err != nil {
		return err
	}
	v, err := p.numbers(nil, s, t.Name.Local == "lat_long", elem)
	if err != nil {
		return err
	}
	want := 1
	if t.Name.Local == "lat_long" {
		want = 2
	}
	if len(v) != want {
		return p.errorf(elem, "%d numbers, want %d", len(v), want)
	}
	switch t.Name.Local {
	case "lat":
		if v[0] < -90 || v[0] > 90 {
			return p.errorf(elem, "latitude %s out of range", fmtNum(v[0]))
		}
		if !e.hasLat {
			e.lat, e.hasLat = v[0], true
		}
	case "long", "lon":
		if v[0] < -180 || v[0] > 180 {
			return p.errorf(elem, "longitude %s out of range", fmtNum(v[0]))
		}
		if !e.hasLon {
			e.lon, e.hasLon = v[0], true
		}
	default:
		if err := p.checkPos(v[0], v[1], elem); err != nil {
			return err
		}
		if !e.hasLat && !e.hasLon {
			e.lat, e.lon, e.hasLat, e.hasLon = v[0], v[1], true, true
		}
	}
	return nil
}

// gnode is an element of a GML geometry, read whole.
type gnode struct {
	name xml.Name
	attr []xml.Attr
	text []byte
	kids []*gnode
}

func (n *gnode) attrValue(local string) (string, bool) {
	for _, a := range n.attr {
		if a.Name.Local == local && (a.Name.Space == "" || nsKind(a.Name.Space) == kGML) {
			return a.Value, true
		}
	}
	return "", false
}

// treeBudget bounds what one GML geometry may hold.
type treeBudget struct{ nodes, text int }

// tree reads the element just started, and all it holds.
func (p *parser) tree(t xml.StartElement, b *treeBudget) (*gnode, error) {
	n := &gnode{name: t.Name}
	for _, a := range t.Attr {
		switch a.Name.Local {
		case "srsName", "srsDimension", "dimension", "cs", "ts", "decimal":
			n.attr = append(n.attr, a)
			b.text += len(a.Value)
		}
	}
	d0 := p.depth
	for {
		tok, err := p.token()
		if err != nil {
			return nil, err
		}
		switch c := tok.(type) {
		case xml.CharData:
			b.text += len(c)
			if b.text > maxGeomText {
				return nil, p.errorf(displayName(t.Name), "longer than %d MiB", maxGeomText>>20)
			}
			n.text = append(n.text, c...)
		case xml.StartElement:
			b.nodes++
			if b.nodes > maxGMLNodes {
				return nil, p.errorf(displayName(t.Name), "more than %d elements", maxGMLNodes)
			}
			kid, err := p.tree(c, b)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, kid)
		case xml.EndElement:
			if p.depth < d0 {
				return n, nil
			}
		}
	}
}

// where reads a georss:where element just started.
func (p *parser) where(t xml.StartElement, e *rawEntry) error {
	found := false
	err := p.children(func(c xml.StartElement) error {
		if err := p.gmlElement(c, e); err != nil {
			return err
		}
		found = true
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return p.errorf("georss:where", "no GML geometry in it")
	}
	return nil
}

// gmlElement reads a GML geometry element just started.
func (p *parser) gmlElement(t xml.StartElement, e *rawEntry) error {
	n, err := p.tree(t, &treeBudget{})
	if err != nil {
		return err
	}
	p.points = 0
	g, ok, err := p.gml(n, gmlCtx{dim: 2}, 0)
	if err != nil {
		return err
	}
	e.setGeom(g, ok)
	return nil
}

// gmlCtx is what a GML element inherits from its ancestors.
type gmlCtx struct {
	lonFirst bool // pos and posList are lon lat (CRS84)
	dim      int  // srsDimension
}

// srs applies the srsName and srsDimension of n to c.
func (p *parser) srs(n *gnode, c gmlCtx) (gmlCtx, error) {
	if v, ok := n.attrValue("srsName"); ok {
		s := strings.ToLower(strings.TrimSpace(v))
		switch {
		case strings.HasSuffix(s, "crs84") || s == "crs:84" || strings.HasSuffix(s, "ogc:2:84"):
			c.lonFirst = true
		case s == "epsg:4326" || strings.HasSuffix(s, ":4326") || strings.HasSuffix(s, "/4326"):
			c.lonFirst = false
		case strings.HasSuffix(s, "epsg.xml#4326"): // the GML 2 form: x,y = lon,lat
			c.lonFirst = true
		default:
			return c, p.errorf(displayName(n.name), "srsName %q is not WGS 84 (EPSG:4326 or CRS84)", v)
		}
	}
	for _, name := range []string{"srsDimension", "dimension"} {
		if v, ok := n.attrValue(name); ok {
			switch strings.TrimSpace(v) {
			case "2":
				c.dim = 2
			case "3":
				c.dim = 3
			default:
				return c, p.errorf(displayName(n.name), "%s %q: only 2 and 3 are supported", name, v)
			}
		}
	}
	return c, nil
}

// elements returns the GML element children of n.
func gmlKids(n *gnode) []*gnode {
	var out []*gnode
	for _, k := range n.kids {
		if nsKind(k.name.Space) == kGML {
			out = append(out, k)
		}
	}
	return out
}

// posList appends the positions of a pos, posList, lowerCorner or
// upperCorner element.
func (p *parser) posList(n *gnode, c gmlCtx, xy []float64) ([]float64, error) {
	elem := displayName(n.name)
	c, err := p.srs(n, c)
	if err != nil {
		return xy, err
	}
	v, err := p.numbers(nil, string(n.text), false, elem)
	if err != nil {
		return xy, err
	}
	if len(v)%c.dim != 0 {
		if c.dim == 2 {
			return xy, p.errorf(elem, "an odd number of coordinates (%d): pairs expected", len(v))
		}
		return xy, p.errorf(elem, "%d numbers is not a multiple of srsDimension %d", len(v), c.dim)
	}
	for i := 0; i < len(v); i += c.dim {
		lat, lon := v[i], v[i+1]
		if c.lonFirst {
			lat, lon = lon, lat
		}
		if xy, err = p.addPos(xy, lat, lon, elem); err != nil {
			return xy, err
		}
	}
	return xy, nil
}

// coordinates appends the positions of a GML 2 coordinates element:
// "lon,lat" tuples separated by white space (cs, ts and decimal may say
// otherwise).
func (p *parser) coordinates(n *gnode, xy []float64) ([]float64, error) {
	elem := displayName(n.name)
	cs, ts, dec := ",", " ", "."
	if v, ok := n.attrValue("cs"); ok && v != "" {
		cs = v
	}
	if v, ok := n.attrValue("ts"); ok && v != "" {
		ts = v
	}
	if v, ok := n.attrValue("decimal"); ok && v != "" {
		dec = v
	}
	if cs == ts || cs == dec || ts == dec {
		return xy, p.errorf(elem, "cs, ts and decimal must differ")
	}
	text := string(n.text)
	var tuples []string
	if strings.TrimSpace(ts) == "" {
		tuples = strings.Fields(text)
	} else {
		tuples = strings.Split(text, ts)
	}
	for _, tuple := range tuples {
		tuple = strings.TrimSpace(tuple)
		if tuple == "" {
			continue
		}
		parts := strings.Split(tuple, cs)
		if len(parts) < 2 || len(parts) > 3 {
			return xy, p.errorf(elem, "tuple %q: want x%sy", tuple, cs)
		}
		var v [2]float64
		for i := range v {
			s := strings.TrimSpace(parts[i])
			if dec != "." {
				s = strings.ReplaceAll(s, dec, ".")
			}
			f, err := p.number(s, elem)
			if err != nil {
				return xy, err
			}
			v[i] = f
		}
		var err error
		if xy, err = p.addPos(xy, v[1], v[0], elem); err != nil {
			return xy, err
		}
	}
	return xy, nil
}

// sequence appends the positions n holds in pos, posList or coordinates
// children (or in Point children of pointProperty/pointRep).
func (p *parser) sequence(n *gnode, c gmlCtx, xy []float64) ([]float64, error) {
	var err error
	found := false
	for _, k := range gmlKids(n) {
		switch k.name.Local {
		case "pos", "posList":
			xy, err = p.posList(k, c, xy)
		case "coordinates":
			xy, err = p.coordinates(k, xy)
		case "pointProperty", "pointRep":
			for _, pt := range gmlKids(k) {
				if pt.name.Local == "Point" {
					var pc gmlCtx
					if pc, err = p.srs(pt, c); err == nil {
						xy, err = p.sequence(pt, pc, xy)
					}
				}
			}
		default:
			continue
		}
		if err != nil {
			return xy, err
		}
		found = true
	}
	if !found {
		return xy, p.errorf(displayName(n.name), "no coordinates (pos, posList or coordinates)")
	}
	return xy, nil
}

// linearRing reads the ring inside an exterior, interior, outerBoundaryIs or
// innerBoundaryIs element.
func (p *parser) linearRing(b *gnode, c gmlCtx) ([]float64, error) {
	for _, k := range gmlKids(b) {
		if k.name.Local == "LinearRing" {
			rc, err := p.srs(k, c)
			if err != nil {
				return nil, err
			}
			xy, err := p.sequence(k, rc, nil)
			if err != nil {
				return nil, err
			}
			return p.ring(xy, "gml:LinearRing")
		}
	}
	return nil, p.errorf(displayName(b.name), "no gml:LinearRing in it")
}

// Member element names of the GML collections and the type of their members.
var collections = map[string]struct {
	typ, member uint32
}{
	"MultiPoint":      {wkb.MultiPoint, wkb.Point},
	"MultiLineString": {wkb.MultiLineString, wkb.LineString},
	"MultiCurve":      {wkb.MultiLineString, wkb.LineString},
	"MultiPolygon":    {wkb.MultiPolygon, wkb.Polygon},
	"MultiSurface":    {wkb.MultiPolygon, wkb.Polygon},
	"MultiGeometry":   {wkb.GeometryCollection, 0},
}

// gml interprets a GML geometry. ok is false for an envelope of 0 0 0 0.
func (p *parser) gml(n *gnode, c gmlCtx, level int) (g wkb.Geom, ok bool, err error) {
	elem := displayName(n.name)
	if nsKind(n.name.Space) != kGML {
		return g, false, p.errorf(elem, "not a GML geometry")
	}
	if level > maxGMLDepth {
		return g, false, p.errorf(elem, "collections nested more than %d deep", maxGMLDepth)
	}
	if c, err = p.srs(n, c); err != nil {
		return g, false, err
	}
	switch n.name.Local {
	case "Point":
		xy, err := p.sequence(n, c, nil)
		if err != nil {
			return g, false, err
		}
		if len(xy) != 2 {
			return g, false, p.errorf(elem, "%d positions, want 1", len(xy)/2)
		}
		return wkb.Geom{Type: wkb.Point, Coords: xy}, true, nil
	case "LineString":
		xy, err := p.sequence(n, c, nil)
		if err != nil {
			return g, false, err
		}
		if len(xy) < 4 {
			return g, false, p.errorf(elem, "a line needs at least 2 positions, has %d", len(xy)/2)
		}
		return wkb.Geom{Type: wkb.LineString, Coords: xy}, true, nil
	case "LinearRing":
		xy, err := p.sequence(n, c, nil)
		if err == nil {
			xy, err = p.ring(xy, elem)
		}
		return wkb.Geom{Type: wkb.Polygon, Rings: [][]float64{xy}}, err == nil, err
	case "Polygon":
		var rings [][]float64
		for _, k := range gmlKids(n) {
			switch k.name.Local {
			case "exterior", "outerBoundaryIs":
				if len(rings) > 0 {
					return g, false, p.errorf(elem, "more than one exterior ring")
				}
			case "interior", "innerBoundaryIs":
				if len(rings) == 0 {
					return g, false, p.errorf(elem, "an interior ring before the exterior ring")
				}
			default:
				continue
			}
			r, err := p.linearRing(k, c)
			if err != nil {
				return g, false, err
			}
			rings = append(rings, r)
		}
		if len(rings) == 0 {
			return g, false, p.errorf(elem, "no exterior ring")
		}
		return wkb.Geom{Type: wkb.Polygon, Rings: rings}, true, nil
	case "Envelope", "Box":
		var xy []float64
		if n.name.Local == "Envelope" {
			for _, k := range gmlKids(n) {
				if k.name.Local == "lowerCorner" || k.name.Local == "upperCorner" {
					if xy, err = p.posList(k, c, xy); err != nil {
						return g, false, err
					}
				}
			}
			if len(xy) == 0 {
				xy, err = p.sequence(n, c, nil)
			}
		} else {
			xy, err = p.sequence(n, c, nil)
		}
		if err != nil {
			return g, false, err
		}
		if len(xy) != 4 {
			return g, false, p.errorf(elem, "%d positions, want 2 corners", len(xy)/2)
		}
		return p.box(xy[1], xy[0], xy[3], xy[2], elem)
	}
	coll, known := collections[n.name.Local]
	if !known {
		return g, false, p.errorf(elem, "not a supported GML geometry (Point, LineString, Polygon, Envelope, or a Multi- collection of them)")
	}
	g.Type = coll.typ
	for _, m := range gmlKids(n) {
		if !strings.HasSuffix(m.name.Local, "Member") && !strings.HasSuffix(m.name.Local, "Members") {
			continue
		}
		mc, err := p.srs(m, c)
		if err != nil {
			return g, false, err
		}
		for _, k := range gmlKids(m) {
			part, ok, err := p.gml(k, mc, level+1)
			if err != nil {
				return g, false, err
			}
			if !ok {
				continue
			}
			if coll.member != 0 && part.Type != coll.member {
				return g, false, p.errorf(displayName(k.name), "a %s in a %s", wkb.TypeName(part.Type), elem)
			}
			g.Parts = append(g.Parts, part)
		}
	}
	if len(g.Parts) == 0 {
		return g, false, p.errorf(elem, "no members")
	}
	return g, true, nil
}
