package kml

import (
	"encoding/xml"
	"math"
	"strconv"

	"mapcommons/format/infer"
	"mapcommons/format/wkb"
)

func isGeometry(local string) bool {
	switch local {
	case "Point", "LineString", "LinearRing", "Polygon", "MultiGeometry", "Track", "MultiTrack":
		return true
	}
	return false
}

// geometry reads the geometry element just started (named local); ok is
// false when it is empty. Collections come back flat.
func (p *parser) geometry(local string) (g wkb.Geom, ok bool, err error) {
	line := p.line()
	switch local {
	case "Point":
		xy, n, err := p.coordinates(local)
		if err != nil || n == 0 {
			return g, false, err
		}
		if n > 1 {
			return g, false, p.fail(line, "Point: %d coordinate tuples, not 1", n)
		}
		return wkb.Geom{Type: wkb.Point, Coords: xy}, true, nil
	case "LineString":
		xy, n, err := p.coordinates(local)
		if err != nil || n == 0 {
			return g, false, err
		}
		if n < 2 {
			return g, false, p.fail(line, "LineString: %d point, at least 2 needed", n)
		}
		return wkb.Geom{Type: wkb.LineString, Coords: xy}, true, nil
	case "LinearRing":
		xy, err := p.ring(line)
		if err != nil || xy == nil {
			return g, false, err
		}
		return wkb.Geom{Type: wkb.LineString, Coords: xy}, true, nil
	case "Polygon":
		return p.polygon(line)
	case "Track":
		return p.track(line)
	}
	return p.multi()
}

// coordinates reads the children of a Point or LineString (named what),
// parsing its coordinates element, and returns the flat x,y pairs and
// their number.
func (p *parser) coordinates(what string) (xy []float64, n int, err error) {
	seen := false
	err = p.children(func(t xml.StartElement) error {
		if t.Name.Local != "coordinates" {
			return p.skip()
		}
		if seen {
			return p.fail(p.line(), "%s: more than one <coordinates>", what)
		}
		seen = true
		line := p.line()
		text, err := p.text(p.opt.MaxCoordBytes)
		if err != nil {
			return err
		}
		start := len(p.arena)
		if p.arena, err = p.parseCoords(p.arena, text, line); err != nil {
			return err
		}
		xy = p.arena[start:len(p.arena):len(p.arena)]
		n = len(xy) / 2
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return xy, n, nil
}

// ring reads the LinearRing just started: nil when it is empty, else its
// points, closed.
func (p *parser) ring(line int) ([]float64, error) {
	xy, n, err := p.coordinates("LinearRing")
	if err != nil || n == 0 {
		return nil, err
	}
	if xy[0] != xy[2*n-2] || xy[1] != xy[2*n-1] {
		if p.coords++; p.coords > p.opt.MaxCoords {
			return nil, p.fail(line, "more than %d coordinates", p.opt.MaxCoords)
		}
		start := len(p.arena) - len(xy)
		p.arena = append(p.arena, xy[0], xy[1])
		xy = p.arena[start:len(p.arena):len(p.arena)]
		n++
	}
	if n < 4 {
		return nil, p.fail(line, "LinearRing: %d points once closed, at least 4 needed", n)
	}
	return xy, nil
}

// polygon reads the Polygon just started.
func (p *parser) polygon(line int) (g wkb.Geom, ok bool, err error) {
	var outer []float64
	var holes [][]float64
	outers := 0
	err = p.children(func(t xml.StartElement) error {
		switch t.Name.Local {
		case "outerBoundaryIs", "outerBoundary":
			if outers++; outers > 1 {
				return p.fail(p.line(), "Polygon: more than one outer boundary")
			}
			rings, err := p.boundary()
			if err != nil {
				return err
			}
			if len(rings) > 1 {
				return p.fail(p.line(), "Polygon: more than one LinearRing in the outer boundary")
			}
			if len(rings) == 1 {
				outer = rings[0]
			}
		case "innerBoundaryIs", "innerBoundary":
			rings, err := p.boundary()
			if err != nil {
				return err
			}
			holes = append(holes, rings...)
		default:
			return p.skip()
		}
		return nil
	})
	if err != nil {
		return g, false, err
	}
	if outer == nil {
		if len(holes) > 0 {
			return g, false, p.fail(line, "Polygon: holes but no outer boundary")
		}
		return g, false, nil
	}
	return wkb.Geom{Type: wkb.Polygon, Rings: append([][]float64{outer}, holes...)}, true, nil
}

// boundary reads an outerBoundaryIs or innerBoundaryIs: its non-empty
// LinearRings.
func (p *parser) boundary() ([][]float64, error) {
	var rings [][]float64
	err := p.children(func(t xml.StartElement) error {
		if t.Name.Local != "LinearRing" {
			return p.skip()
		}
		xy, err := p.ring(p.line())
		if xy != nil {
			rings = append(rings, xy)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return rings, nil
}

// track reads a gx:Track: its gx:coord elements ("lon lat alt").
func (p *parser) track(line int) (g wkb.Geom, ok bool, err error) {
	start := len(p.arena)
	err = p.children(func(t xml.StartElement) error {
		if t.Name.Local != "coord" {
			return p.skip()
		}
		cl := p.line()
		text, err := p.text(int64(p.opt.MaxValueBytes))
		if err != nil {
			return err
		}
		p.arena, err = p.parseCoord(p.arena, text, cl)
		return err
	})
	if err != nil {
		return g, false, err
	}
	xy := p.arena[start:len(p.arena):len(p.arena)]
	switch len(xy) / 2 {
	case 0:
		return g, false, nil
	case 1:
		return wkb.Geom{Type: wkb.Point, Coords: xy}, true, nil
	}
	return wkb.Geom{Type: wkb.LineString, Coords: xy}, true, nil
}

// multi reads a MultiGeometry or gx:MultiTrack: its member geometries,
// flattened.
func (p *parser) multi() (g wkb.Geom, ok bool, err error) {
	var parts []wkb.Geom
	err = p.children(func(t xml.StartElement) error {
		l := t.Name.Local
		if !isGeometry(l) {
			return p.skip()
		}
		m, ok, err := p.geometry(l)
		if ok {
			parts = flatten(parts, m)
		}
		return err
	})
	if err != nil {
		return g, false, err
	}
	return combine(parts)
}

// flatten appends g, or its members when it is a collection, to parts.
func flatten(parts []wkb.Geom, g wkb.Geom) []wkb.Geom {
	if g.Type >= wkb.MultiPoint {
		return append(parts, g.Parts...)
	}
	return append(parts, g)
}

// combine makes a collection of single geometries: a Multi* when they are
// all of one type, else a GeometryCollection.
func combine(parts []wkb.Geom) (wkb.Geom, bool, error) {
	if len(parts) == 0 {
		return wkb.Geom{}, false, nil
	}
	typ := parts[0].Type + 3 // Point→MultiPoint etc.
	for _, m := range parts[1:] {
		if m.Type != parts[0].Type {
			typ = wkb.GeometryCollection
			break
		}
	}
	return wkb.Geom{Type: typ, Parts: parts}, true, nil
}

// geometry returns the geometry of a Placemark: its one geometry, several
// combined, ok false for none.
func (pm *placemark) geometry() (wkb.Geom, bool) {
	switch len(pm.geoms) {
	case 0:
		return wkb.Geom{}, false
	case 1:
		return pm.geoms[0], true
	}
	var parts []wkb.Geom
	for _, g := range pm.geoms {
		parts = flatten(parts, g)
	}
	g, ok, _ := combine(parts)
	return g, ok
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parseNum parses one ordinate: a finite decimal number.
func parseNum(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return 0, false
		}
	}
	s := string(b)
	if v, ok := infer.FastFloat(s); ok {
		return v, true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// quoteTok shortens a token for a message.
func quoteTok(b []byte) string {
	if len(b) > 40 {
		return strconv.Quote(string(b[:40]) + "…")
	}
	return strconv.Quote(string(b))
}

// shortTok shortens a number for a message.
func shortTok(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// parseCoords appends the x,y pairs of a coordinates text that starts on
// line to dst. Tuples are lon,lat[,alt], separated by white space; white
// space around a comma does not separate tuples.
func (p *parser) parseCoords(dst []float64, text []byte, line int) ([]float64, error) {
	var (
		vals    [3]float64
		toks    [3][]byte
		nv      int
		comma   bool // a comma follows the last value
		tupLine int
	)
	finish := func() error {
		if nv == 1 {
			return p.fail(tupLine, "coordinates: a tuple with one value %s (lon,lat[,alt] needed)", quoteTok(toks[0]))
		}
		lon, lat, err := p.checkLonLat(vals[0], vals[1], toks[0], toks[1], tupLine)
		if err != nil {
			return err
		}
		dst = append(dst, lon, lat)
		nv = 0
		return nil
	}
	for i := 0; i < len(text); {
		c := text[i]
		if isSpace(c) {
			if c == '\n' {
				line++
			}
			i++
			continue
		}
		if c == ',' {
			if nv == 0 || comma {
				return nil, p.fail(line, "coordinates: an empty value before a comma")
			}
			comma = true
			i++
			continue
		}
		j := i
		for j < len(text) && !isSpace(text[j]) && text[j] != ',' {
			j++
		}
		tok := text[i:j]
		i = j
		if nv > 0 && !comma {
			if err := finish(); err != nil {
				return nil, err
			}
		}
		if nv == 3 {
			return nil, p.fail(line, "coordinates: a tuple with more than 3 values (separate tuples with white space)")
		}
		v, ok := parseNum(tok)
		if !ok {
			return nil, p.fail(line, "coordinates: %s is not a number", quoteTok(tok))
		}
		if nv == 0 {
			tupLine = line
			if p.coords++; p.coords > p.opt.MaxCoords {
				return nil, p.fail(line, "more than %d coordinates", p.opt.MaxCoords)
			}
		}
		vals[nv], toks[nv] = v, tok
		nv++
		comma = false
	}
	if comma {
		return nil, p.fail(line, "coordinates: a comma at the end")
	}
	if nv > 0 {
		if err := finish(); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// parseCoord appends the x,y pair of a gx:coord text ("lon lat [alt]").
func (p *parser) parseCoord(dst []float64, text []byte, line int) ([]float64, error) {
	var (
		vals [3]float64
		toks [3][]byte
		nv   int
	)
	for i := 0; i < len(text); {
		if isSpace(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && !isSpace(text[j]) {
			j++
		}
		tok := text[i:j]
		i = j
		if nv == 3 {
			return nil, p.fail(line, "coord: more than 3 values")
		}
		v, ok := parseNum(tok)
		if !ok {
			return nil, p.fail(line, "coord: %s is not a number", quoteTok(tok))
		}
		vals[nv], toks[nv] = v, tok
		nv++
	}
	if nv < 2 {
		return nil, p.fail(line, "coord: %d values, lon lat [alt] needed", nv)
	}
	if p.coords++; p.coords > p.opt.MaxCoords {
		return nil, p.fail(line, "more than %d coordinates", p.opt.MaxCoords)
	}
	lon, lat, err := p.checkLonLat(vals[0], vals[1], toks[0], toks[1], line)
	if err != nil {
		return nil, err
	}
	return append(dst, lon, lat), nil
}

// checkLonLat returns lon, lat, clamped onto their ranges when they
// overshoot by a rounding's worth (wkb.LonLatTolerance).
func (p *parser) checkLonLat(lon, lat float64, lonTok, latTok []byte, line int) (float64, float64, error) {
	lon, ok := wkb.ClampLon(lon)
	if !ok {
		return 0, 0, p.fail(line, "coordinates: longitude %s out of range", shortTok(lonTok))
	}
	lat, ok = wkb.ClampLat(lat)
	if !ok {
		return 0, 0, p.fail(line, "coordinates: latitude %s out of range", shortTok(latTok))
	}
	return lon, lat, nil
}
