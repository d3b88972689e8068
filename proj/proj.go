// Package proj converts the coordinates of a shapefile's coordinate
// reference system, as its .prj file describes it, to WGS 84 longitude and
// latitude in degrees, the only coordinates mapcommons stores.
//
// Parse reads the .prj: ESRI WKT1 (what ArcGIS and GDAL's shapefile driver
// write), OGC WKT1 (GDAL's, with or without TOWGS84) or, in large part,
// WKT2 (PROJCRS, GEOGCRS, BOUNDCRS with an abridged Helmert
// transformation, COMPOUNDCRS). The Transform it returns inverts the map
// projection on the CRS's own ellipsoid, then shifts the datum to WGS 84.
//
// # Projections
//
// Inverse (and, for the tests, forward) formulas after EPSG Guidance Note
// 7-2 and Snyder's "Map Projections: A Working Manual", written so that they
// keep full double precision (latitudes are recovered from the conformal
// latitude by Newton's method as in Karney 2011, Albers' from q(phi) by
// Newton's method rather than EPSG's truncated series):
//
//   - Transverse Mercator (ESRI Transverse_Mercator, Gauss_Kruger; OGC
//     Transverse_Mercator; WKT2 "Transverse Mercator"): UTM, national grids,
//     Gauss-Krüger, by Krüger's series in n to sixth order (Karney 2011;
//     EPSG's "JHS" formulas), good to nanometres within 4000 km of the
//     central meridian.
//   - Lambert Conformal Conic 1SP and 2SP (ESRI Lambert_Conformal_Conic with
//     Standard_Parallel_1/2 and Scale_Factor; OGC Lambert_Conformal_Conic_1SP
//     and _2SP): State Plane and national grids.
//   - Albers Equal Area Conic (ESRI Albers; OGC Albers_Conic_Equal_Area).
//   - Mercator variant A (1SP) and B (2SP), ellipsoidal; Web Mercator on its
//     sphere (ESRI Mercator_Auxiliary_Sphere with sphere types 0-2; EPSG
//     Popular Visualisation Pseudo Mercator; GDAL's EPSG:3857 WKT1, a
//     Mercator_1SP with a PROJ4 extension "+a=6378137 +b=6378137").
//   - Polar Stereographic variant A (scale factor at the pole: UPS) and B
//     (latitude of true scale: EPSG:3413, 3031): OGC Polar_Stereographic,
//     ESRI Stereographic_North_Pole/_South_Pole, and ESRI Stereographic when
//     centred on a pole.
//
// Parameters may be given in any linear unit (metres, international and US
// survey feet…: false easting and northing are in the CRS's unit) and
// angular unit (WKT1 projection parameters are in the GEOGCS's unit, as
// GDAL and ESRI write them; the PRIMEM longitude is in degrees); a prime
// meridian other than Greenwich (Paris) is added to the longitudes.
// Axis order declarations are ignored: shapefiles always store x = easting
// (or longitude), y = northing (or latitude).
//
// # Datums
//
// WGS 84, NAD83 (all realisations), ETRS89 and any datum on the GRS 1980 or
// WGS 84 ellipsoid are taken as WGS 84: NAD83 and ETRS89 differ from it by
// one to two metres (EPSG's own transformations are null ones, as GDAL's
// are). NAD27, OSGB36, ED50, DHDN and NTF are shifted with EPSG's
// published 3- or 7-parameter transformations (see datums in datum.go; NAD27
// with the CONUS mean (-8, 160, 176) is good to about 10 m over the
// conterminous US only, OSGB36 to about 2 m), through Earth-centred
// coordinates and a Helmert transformation (position vector convention);
// an explicit TOWGS84[…] (3 or 7 values) in the WKT takes precedence over
// any of these. Other datums are refused.
//
// Everything else (Lambert Azimuthal Equal Area, Oblique Mercator, Cassini,
// oblique Stereographic, other datums without TOWGS84, geocentric CRSs…) is
// an EINVALID error naming the coordinate system and what is unsupported.
package proj

import (
	"math"
	"strings"

	"mapcommons"
	"mapcommons/format/wkb"
)

// Transform converts coordinates of one CRS to WGS 84 lon/lat degrees. It
// is immutable and safe for concurrent use.
type Transform struct {
	name     string
	method   string     // projection method as written, "" when geographic
	proj     projection // nil when geographic
	unit     float64    // metres per linear unit (projected)
	angUnit  float64    // radians per angular unit (geographic)
	fe, fn   float64    // false easting and northing, metres
	lon0     float64    // central meridian east of Greenwich, degrees
	src      ellipsoid  // the datum's ellipsoid
	shift    *helmert   // nil: no datum shift
	identity bool
}

// Parse reads a .prj (ESRI WKT1 or OGC WKT1; most WKT2) and returns the
// transform from its CRS to WGS 84 lon/lat degrees. A blank prj gives the
// identity with an empty name (a shapefile without a .prj is taken to be in
// WGS 84 lon/lat). A geographic CRS gives a transform that only converts
// the angular unit, adds the prime meridian and shifts the datum. Anything
// unsupported is an EINVALID *mapcommons.Error naming the CRS.
func Parse(prj string) (*Transform, error) {
	s := strings.TrimSpace(strings.TrimPrefix(prj, "\uFEFF"))
	if s == "" {
		return &Transform{identity: true, angUnit: degree, unit: 1}, nil
	}
	if len(s) > maxPRJLen {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "prj: the .prj is too long (%d bytes, at most %d)", len(s), maxPRJLen)
	}
	root, err := parseWKT(s)
	if err != nil {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "prj: the .prj is not a coordinate system in WKT: %v", err)
	}
	return build(root, 0, false)
}

// build makes the Transform of a CRS node; bound is true inside a BOUNDCRS,
// whose transformation replaces the datum's.
func build(n *node, depth int, bound bool) (*Transform, error) {
	if depth > 3 {
		return nil, errBad(n.Name(), "nested too deeply")
	}
	switch n.Key {
	case "GEOGCS", "GEOGCRS", "GEOGRAPHICCRS", "GEODCRS", "GEODETICCRS":
		g, err := parseGeodetic(n, "", bound)
		if err != nil {
			return nil, err
		}
		t := &Transform{name: g.name, angUnit: g.angUnit, unit: 1, lon0: g.pm, src: g.el, shift: g.shift}
		t.identity = g.shift == nil && g.pm == 0 && g.angUnit == degree
		return t, nil
	case "PROJCS", "PROJCRS", "PROJECTEDCRS":
		return buildProjected(n, bound)
	case "COMPD_CS", "COMPOUNDCRS":
		for _, a := range n.Args {
			if a.Node != nil {
				switch a.Node.Key {
				case "GEOGCS", "GEOGCRS", "GEOGRAPHICCRS", "GEODCRS", "GEODETICCRS", "PROJCS", "PROJCRS", "PROJECTEDCRS", "BOUNDCRS":
					t, err := build(a.Node, depth+1, bound)
					if err == nil && n.Name() != "" {
						t.name = n.Name()
					}
					return t, err
				}
			}
		}
		return nil, errUnsupported(n.Name(), "compound CRS without a horizontal part")
	case "BOUNDCRS":
		return buildBound(n, depth)
	}
	return nil, mapcommons.Errorf(mapcommons.EINVALID, "prj: unsupported coordinate system %q (a %s, not a geographic or projected CRS)", n.Name(), n.Key)
}

func buildProjected(n *node, bound bool) (*Transform, error) {
	name := n.Name()
	base := n.Child("GEOGCS", "BASEGEOGCRS", "BASEGEODCRS", "GEOGCRS", "GEODCRS")
	if base == nil {
		return nil, errBad(name, "%s has no geographic CRS", n.Key)
	}
	// The ellipsoid and units first, the datum once the projection is
	// known to be supported: an unsupported projection is the error to
	// report, whatever the datum.
	g, err := parseGeodetic(base, name, true)
	if err != nil {
		return nil, err
	}
	unit := 1.0
	u := n.Unit("UNIT", "LENGTHUNIT")
	if u != nil {
		if unit, err = unitFactor(u); err != nil {
			return nil, errBad(name, "%v", err)
		}
		if unit > 1e5 {
			return nil, errBad(name, "linear unit %q of %g metres", u.Name(), unit)
		}
	}
	var method string
	var pnodes []*node
	if conv := n.Child("CONVERSION"); conv != nil { // WKT2
		method = conv.Child("METHOD", "PROJECTION").Name()
		pnodes = conv.Children("PARAMETER")
	} else {
		method = n.Child("PROJECTION").Name()
		pnodes = n.Children("PARAMETER")
	}
	if method == "" {
		return nil, errBad(name, "no projection method")
	}
	p, err := readParams(pnodes, g.angUnit, unit, name)
	if err != nil {
		return nil, err
	}
	var web float64
	if m := norm(method); m == "mercator1sp" || m == "mercator" || m == "mercatorvarianta" {
		if wgs84Like(g.el.a, 1/nonzero(g.el.f)) {
			web = webMercatorHint(n, name)
		}
	}
	pr, err := buildProjection(method, g.el, p, web)
	if err == errNoMethod {
		return nil, errUnsupported(name, method)
	}
	if err != nil {
		return nil, errUnsupported(name, method+": "+err.Error())
	}
	t := &Transform{
		name: name, method: method, proj: pr, unit: unit, angUnit: g.angUnit,
		fe: p.get(pFE, 0), fn: p.get(pFN, 0),
		lon0: p.get(pLon0, 0)/degree + g.pm,
		src:  g.el, shift: g.shift,
	}
	if k := p.unused(); k != "" {
		return nil, errUnsupported(name, method+" with parameter "+k)
	}
	if !bound {
		if g, err = parseGeodetic(base, name, false); err != nil {
			return nil, err
		}
		t.shift = g.shift
	}
	return t, nil
}

func nonzero(f float64) float64 {
	if f == 0 {
		return math.Inf(1)
	}
	return f
}

// buildBound reads a WKT2 BOUNDCRS whose transformation to WGS 84 is a
// Helmert one (what GDAL writes for a WKT1 CRS with TOWGS84).
func buildBound(n *node, depth int) (*Transform, error) {
	src := n.Child("SOURCECRS")
	var crs *node
	if src != nil {
		for _, a := range src.Args {
			if a.Node != nil {
				crs = a.Node
				break
			}
		}
	}
	if crs == nil {
		return nil, errBad("", "BOUNDCRS has no source CRS")
	}
	t, err := build(crs, depth+1, true)
	if err != nil {
		return nil, err
	}
	tr := n.Child("ABRIDGEDTRANSFORMATION", "COORDINATEOPERATION")
	var method string
	if tr != nil {
		method = norm(tr.Child("METHOD").Name())
	}
	if method == "" {
		return nil, errBad(t.name, "BOUNDCRS has no transformation")
	}
	if tgt := n.Child("TARGETCRS"); tgt != nil {
		for _, a := range tgt.Args {
			if a.Node != nil {
				d := a.Node.Child("DATUM", "GEODETICDATUM", "TRF", "ENSEMBLE")
				if def := lookupDatum(d.Name()); def == nil || def.name != "WGS 84" {
					return nil, errUnsupported(t.name, "transformation to "+a.Node.Name())
				}
				break
			}
		}
	}
	var rot float64
	switch {
	case strings.Contains(method, "positionvector"):
		rot = 1
	case strings.Contains(method, "coordinateframe"):
		rot = -1
	case strings.Contains(method, "geocentrictranslation"):
		rot = 0
	default:
		return nil, errUnsupported(t.name, "datum transformation "+tr.Child("METHOD").Name())
	}
	var h helmert
	for _, pn := range tr.Children("PARAMETER") {
		v, ok := pn.Number(1)
		if !ok || math.IsInf(v, 0) || math.Abs(v) > 1e5 {
			return nil, errBad(t.name, "parameter %q has no valid value", pn.Name())
		}
		f := 0.0
		if u := pn.Child("LENGTHUNIT", "ANGLEUNIT", "SCALEUNIT", "UNIT"); u != nil {
			if f, err = unitFactor(u); err != nil {
				return nil, errBad(t.name, "%v", err)
			}
		}
		or := func(def float64) float64 {
			if f == 0 {
				return v * def
			}
			return v * f
		}
		switch norm(pn.Name()) {
		case "xaxistranslation":
			h.tx = or(1)
		case "yaxistranslation":
			h.ty = or(1)
		case "zaxistranslation":
			h.tz = or(1)
		case "xaxisrotation":
			h.rx = rot * or(arcsec)
		case "yaxisrotation":
			h.ry = rot * or(arcsec)
		case "zaxisrotation":
			h.rz = rot * or(arcsec)
		case "scaledifference":
			// PROJ writes the abridged transformation's scale as a factor
			// (0.999979511 for -20.489 ppm); TOWGS84 and most others as ppm.
			switch {
			case f != 0 && f != 1:
				h.s = v * f
			case math.Abs(v-1) < 0.01:
				h.s = v - 1
			case f == 1:
				h.s = v
			default:
				h.s = v * 1e-6
			}
		default:
			if v != 0 {
				return nil, errUnsupported(t.name, "datum transformation parameter "+pn.Name())
			}
		}
	}
	if h.zero() && wgs84Like(t.src.a, 1/nonzero(t.src.f)) {
		t.shift = nil
	} else {
		t.shift = &h
	}
	t.identity = t.proj == nil && t.shift == nil && t.lon0 == 0 && t.angUnit == degree
	return t, nil
}

// Name returns the name of the CRS as the WKT gives it.
func (t *Transform) Name() string { return t.name }

// Identity reports whether Forward changes nothing: a geographic CRS in
// degrees, on Greenwich, whose datum is WGS 84 or taken as it (NAD83,
// ETRS89, any GRS 1980 datum).
func (t *Transform) Identity() bool { return t.identity }

func (t *Transform) rangeError(x, y float64) error {
	return mapcommons.Errorf(mapcommons.EINVALID, "prj: coordinates (%g, %g) in %q do not convert to a longitude and latitude", x, y, t.name)
}

// Forward converts x, y of the CRS (easting and northing in its linear
// unit, or longitude and latitude in its angular unit) to WGS 84 longitude
// and latitude in degrees, longitudes in [-180, 180]. Non-finite input and
// results, and points off the projection, are EINVALID errors.
func (t *Transform) Forward(x, y float64) (lon, lat float64, err error) {
	if t.identity && x >= -180 && x <= 180 && y >= -90 && y <= 90 {
		return x, y, nil
	}
	lam, phi := t.source(x, y)
	if !(math.Abs(phi) <= math.Pi/2+1e-12) || t.proj == nil && !(math.Abs(lam) <= 3*math.Pi) {
		return 0, 0, t.rangeError(x, y)
	}
	if t.shift != nil {
		lam, phi = t.shift.apply(t.src, lam, phi)
	}
	lon, lat = lam/degree, phi/degree
	if math.IsNaN(lon) || math.IsInf(lon, 0) || math.IsNaN(lat) || !(math.Abs(lat) <= 90+1e-9) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return 0, 0, t.rangeError(x, y)
	}
	lat = math.Max(-90, math.Min(90, lat))
	if lon < -180 || lon > 180 {
		lon = math.Remainder(lon, 360)
	}
	return lon, lat, nil
}

// maxProjected bounds projected coordinates (metres from the false
// origin): no projection of the Earth reaches it except Mercator within
// 1e-60 degrees of a pole. Beyond, input is garbage rather than a point.
const maxProjected = 1e9

// source converts x, y to longitude (east of Greenwich) and latitude in
// radians on the CRS's own datum, before any datum shift.
func (t *Transform) source(x, y float64) (lam, phi float64) {
	if t.proj == nil {
		return x*t.angUnit + t.lon0*degree, y * t.angUnit
	}
	x, y = x*t.unit-t.fe, y*t.unit-t.fn
	if !(math.Abs(x) <= maxProjected && math.Abs(y) <= maxProjected) {
		return math.NaN(), math.NaN()
	}
	lam, phi = t.proj.inverse(x, y)
	return lam + t.lon0*degree, phi
}

// WKB reprojects a 2-D WKB geometry (any type, collections included; any
// byte order; Z and M are dropped) and appends it to dst in the stored
// form (2-D, little endian). An empty point stays empty. On error dst is
// returned unchanged with an EINVALID error.
func (t *Transform) WKB(src, dst []byte) ([]byte, error) {
	g, err := wkb.Decode(src)
	if err != nil {
		return dst, mapcommons.Errorf(mapcommons.EINVALID, "prj: %v", err)
	}
	if err := t.geom(&g); err != nil {
		return dst, err
	}
	return g.AppendWKB(dst), nil
}

func (t *Transform) geom(g *wkb.Geom) error {
	if err := t.coords(g.Coords); err != nil {
		return err
	}
	for _, r := range g.Rings {
		if err := t.coords(r); err != nil {
			return err
		}
	}
	for i := range g.Parts {
		if err := t.geom(&g.Parts[i]); err != nil {
			return err
		}
	}
	return nil
}

func (t *Transform) coords(xy []float64) error {
	for i := 0; i+1 < len(xy); i += 2 {
		lon, lat, err := t.Forward(xy[i], xy[i+1])
		if err != nil {
			return err
		}
		xy[i], xy[i+1] = lon, lat
	}
	return nil
}
