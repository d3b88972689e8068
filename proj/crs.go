package proj

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"mapcommons"
)

const (
	degree = math.Pi / 180
	grad   = math.Pi / 200
	usFoot = 1200.0 / 3937
)

// errUnsupported is the EINVALID error naming the CRS and what of it is not
// supported.
func errUnsupported(name, what string) error {
	return mapcommons.Errorf(mapcommons.EINVALID, "prj: unsupported coordinate system %q (projection %q)", name, what)
}

func errDatum(name, datum, ellps string) error {
	return mapcommons.Errorf(mapcommons.EINVALID,
		"prj: unsupported coordinate system %q (datum %q on ellipsoid %q has no known shift to WGS 84; a TOWGS84 clause would give one)", name, datum, ellps)
}

func errBad(name, format string, args ...any) error {
	return mapcommons.Errorf(mapcommons.EINVALID, "prj: coordinate system %q: %s", name, fmt.Sprintf(format, args...))
}

// snap replaces a unit factor written with few digits (ESRI writes
// 0.0174532925199433, GDAL 0.304800609601219) by its exact value.
func snap(f float64) float64 {
	for _, c := range [...]float64{1, 0.3048, usFoot, degree, grad} {
		if math.Abs(f-c) <= 1e-12*c {
			return c
		}
	}
	return f
}

// unitFactor reads the conversion factor of a unit node (UNIT,
// LENGTHUNIT, ANGLEUNIT, SCALEUNIT): name, factor.
func unitFactor(u *node) (float64, error) {
	f, ok := u.Number(1)
	if !ok || !(f > 0) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("unit %q has no valid conversion factor", u.Name())
	}
	return snap(f), nil
}

// geodetic is what a geographic CRS (or the base of a projected one) says.
type geodetic struct {
	name    string
	datum   string
	ellps   string
	el      ellipsoid
	shift   *helmert // nil: none (WGS 84 or taken as it)
	pm      float64  // prime meridian, degrees east of Greenwich
	angUnit float64  // radians per angular unit
}

// parseGeodetic reads GEOGCS (WKT1) or GEOGCRS/GEODCRS/BASEGEOGCRS (WKT2).
// With bound (the CRS of a BOUNDCRS) the datum is not resolved: the
// BOUNDCRS's transformation is its shift.
func parseGeodetic(n *node, crsName string, bound bool) (*geodetic, error) {
	g := &geodetic{name: n.Name(), angUnit: degree}
	if crsName == "" {
		crsName = g.name
	}
	if cs := n.Child("CS"); cs != nil && !strings.EqualFold(cs.Word(0), "ellipsoidal") {
		return nil, errUnsupported(crsName, cs.Word(0)+" coordinate system")
	}
	d := n.Child("DATUM", "GEODETICDATUM", "TRF", "ENSEMBLE")
	if d == nil {
		return nil, errBad(crsName, "%s has no DATUM", n.Key)
	}
	g.datum = d.Name()
	sp := d.Child("SPHEROID", "ELLIPSOID")
	if sp == nil {
		sp = n.Child("SPHEROID", "ELLIPSOID") // tolerate it misplaced
	}
	if sp == nil {
		return nil, errBad(crsName, "datum %q has no SPHEROID", g.datum)
	}
	g.ellps = sp.Name()
	a, ok1 := sp.Number(1)
	invf, ok2 := sp.Number(2)
	if !ok1 || !ok2 {
		return nil, errBad(crsName, "spheroid %q needs a semi-major axis and an inverse flattening", g.ellps)
	}
	if u := sp.Child("LENGTHUNIT", "UNIT"); u != nil {
		f, err := unitFactor(u)
		if err != nil {
			return nil, errBad(crsName, "%v", err)
		}
		a *= f
	}
	if !(a > 6.0e6 && a < 6.5e6) || !(invf == 0 || invf >= 100 && invf < 1e9) {
		return nil, errUnsupported(crsName, fmt.Sprintf("spheroid %s[%g, %g] is not the Earth's", g.ellps, a, invf))
	}
	if invf >= 1e9 {
		invf = 0
	}
	g.el = newEllipsoid(a, invf)

	if pm := n.Child("PRIMEM", "PRIMEMERIDIAN"); pm != nil {
		v, ok := pm.Number(1)
		if !ok || math.IsInf(v, 0) || math.Abs(v) > 360 {
			return nil, errBad(crsName, "prime meridian %q has no valid longitude", pm.Name())
		}
		// WKT1 (GDAL and ESRI alike) writes it in degrees whatever the
		// angular unit of the GEOGCS; WKT2 says its unit.
		if u := pm.Child("ANGLEUNIT", "UNIT"); u != nil {
			f, err := unitFactor(u)
			if err != nil {
				return nil, errBad(crsName, "%v", err)
			}
			v = v * f / degree
		}
		g.pm = v
	}

	u := n.Unit("UNIT", "ANGLEUNIT")
	if u != nil {
		f, err := unitFactor(u)
		if err != nil {
			return nil, errBad(crsName, "%v", err)
		}
		if f > 1 {
			return nil, errBad(crsName, "angular unit %q of %g radians", u.Name(), f)
		}
		g.angUnit = f
	}

	if bound {
		return g, nil
	}
	// The datum: an explicit TOWGS84, else one known by name, else the
	// GRS 1980 / WGS 84 ellipsoid.
	if tw := d.Child("TOWGS84"); tw != nil {
		v := make([]float64, 0, 7)
		for i := range tw.Args {
			x, ok := tw.Number(i)
			if !ok || math.IsInf(x, 0) || math.Abs(x) > 1e5 {
				return nil, errBad(crsName, "TOWGS84 must be 3 or 7 numbers")
			}
			v = append(v, x)
		}
		if len(v) != 3 && len(v) != 7 {
			return nil, errBad(crsName, "TOWGS84 must be 3 or 7 numbers, not %d", len(v))
		}
		h := helmertOf(v)
		if !h.zero() || !wgs84Like(a, invf) {
			g.shift = h
		}
		return g, nil
	}
	if def := lookupDatum(g.datum); def != nil {
		if def.towgs84 == nil {
			if wgs84Like(a, invf) {
				return g, nil
			}
			if invf == 0 && a == 6378137 && strings.Contains(norm(g.datum), "auxiliarysphere") {
				return g, nil // ESRI's Web Mercator sphere, lon/lat taken as WGS 84's
			}
			return nil, errDatum(crsName, g.datum, g.ellps)
		}
		if !sameEllipsoid(a, invf, def.a, def.invf) {
			return nil, errDatum(crsName, g.datum, g.ellps)
		}
		g.shift = helmertOf(def.towgs84)
		return g, nil
	}
	if wgs84Like(a, invf) {
		return g, nil
	}
	return nil, errDatum(crsName, g.datum, g.ellps)
}

// param keys.
const (
	pFE      = "false easting"
	pFN      = "false northing"
	pLon0    = "central meridian"
	pLat0    = "latitude of origin"
	pSP1     = "standard parallel 1"
	pSP2     = "standard parallel 2"
	pK0      = "scale factor"
	pAuxType = "auxiliary sphere type"
)

var paramAliases = map[string]string{
	"falseeasting":                  pFE,
	"eastingatfalseorigin":          pFE,
	"falsenorthing":                 pFN,
	"northingatfalseorigin":         pFN,
	"centralmeridian":               pLon0,
	"longitudeofnaturalorigin":      pLon0,
	"longitudeoforigin":             pLon0,
	"longitudeofcenter":             pLon0,
	"longitudeofcentre":             pLon0,
	"longitudeoffalseorigin":        pLon0,
	"latitudeoforigin":              pLat0,
	"latitudeofnaturalorigin":       pLat0,
	"latitudeofcenter":              pLat0,
	"latitudeofcentre":              pLat0,
	"latitudeoffalseorigin":         pLat0,
	"standardparallel1":             pSP1,
	"latitudeof1ststandardparallel": pSP1,
	"latitudeofstandardparallel":    pSP1,
	"standardparallel2":             pSP2,
	"latitudeof2ndstandardparallel": pSP2,
	"scalefactor":                   pK0,
	"scalefactoratnaturalorigin":    pK0,
	"auxiliaryspheretype":           pAuxType,
}

// params holds a projection's parameters in radians, metres and unity.
type params struct {
	vals map[string]float64
	used map[string]bool
}

func (p *params) get(key string, def float64) float64 {
	p.used[key] = true
	if v, ok := p.vals[key]; ok {
		return v
	}
	return def
}

func (p *params) has(key string) bool {
	_, ok := p.vals[key]
	return ok
}

// unused returns a parameter that was given, not used and not zero (or
// one for a scale factor): a parameter the projection does not understand
// would silently be ignored otherwise.
func (p *params) unused() string {
	for k, v := range p.vals {
		if p.used[k] || v == 0 || k == pK0 && v == 1 {
			continue
		}
		return k
	}
	return ""
}

// readParams reads PARAMETER nodes. Angles are in angUnit (WKT1: the unit
// of the GEOGCS) and lengths in linUnit unless the parameter carries its own
// unit (WKT2).
func readParams(nodes []*node, angUnit, linUnit float64, crsName string) (*params, error) {
	p := &params{vals: map[string]float64{}, used: map[string]bool{}}
	for _, n := range nodes {
		v, ok := n.Number(1)
		if !ok || math.IsInf(v, 0) || math.Abs(v) > 1e12 {
			return nil, errBad(crsName, "parameter %q has no valid value", n.Name())
		}
		nn := norm(n.Name())
		key, known := paramAliases[nn]
		if !known {
			key = n.Name()
		}
		var f float64
		if u := n.Child("ANGLEUNIT", "LENGTHUNIT", "SCALEUNIT", "UNIT"); u != nil {
			var err error
			if f, err = unitFactor(u); err != nil {
				return nil, errBad(crsName, "%v", err)
			}
		}
		switch key {
		case pFE, pFN:
			if f == 0 {
				f = linUnit
			}
			v *= f
		case pLon0, pLat0, pSP1, pSP2:
			if f == 0 {
				f = angUnit
			}
			v *= f
			if math.Abs(v) > 2*math.Pi {
				return nil, errBad(crsName, "parameter %q out of range", n.Name())
			}
		case pK0:
			if f != 0 {
				v *= f
			}
			if !(v > 0 && v < 10) {
				return nil, errBad(crsName, "scale factor %g out of range", v)
			}
		}
		if _, dup := p.vals[key]; !dup {
			p.vals[key] = v
		}
	}
	return p, nil
}

// nearPole reports whether a latitude (radians) is a pole.
func nearPole(phi float64) bool {
	return math.Abs(math.Abs(phi)-math.Pi/2) < 1e-9
}

// buildProjection makes the projection named method on ellipsoid el from
// the parameters (the false origin and central meridian are the caller's).
// webHint, when not zero, is the radius of the sphere of a Web Mercator
// written as a plain Mercator. errNoMethod means an unsupported method;
// other errors say why the parameters do not fit.
func buildProjection(method string, el ellipsoid, p *params, webHint float64) (projection, error) {
	lat0 := func() float64 { return p.get(pLat0, 0) }
	k0 := func() float64 { return p.get(pK0, 1) }
	switch norm(method) {
	case "transversemercator", "gausskruger", "transversemercatorcomplex":
		return newTmerc(el, k0(), lat0()), nil

	case "lambertconformalconic": // ESRI: 2SP, or 1SP when only one parallel
		sp1 := p.get(pSP1, math.NaN())
		if math.IsNaN(sp1) {
			sp1 = lat0()
		}
		sp2 := p.get(pSP2, sp1)
		return newLcc(el, sp1, sp2, p.get(pLat0, sp1), k0())
	case "lambertconformalconic1sp", "lambertconicconformal1sp":
		phi0 := lat0()
		if p.has(pSP1) && math.Abs(p.get(pSP1, 0)-phi0) > 1e-12 {
			return nil, errors.New("a 1SP Lambert with a different standard parallel")
		}
		return newLcc(el, phi0, phi0, phi0, k0())
	case "lambertconformalconic2sp", "lambertconicconformal2sp":
		sp1 := p.get(pSP1, 0)
		return newLcc(el, sp1, p.get(pSP2, sp1), lat0(), k0())

	case "albers", "albersconicequalarea", "albersequalarea":
		if k0() != 1 {
			return nil, errors.New("an Albers projection with a scale factor")
		}
		sp1 := p.get(pSP1, 0)
		return newAea(el, sp1, p.get(pSP2, sp1), lat0())

	case "mercator", "mercator1sp", "mercatorvarianta", "mercator2sp", "mercatorvariantb":
		if lat0() != 0 {
			return nil, errors.New("a Mercator with a latitude of origin")
		}
		sp1, k := p.get(pSP1, 0), k0()
		if sp1 != 0 && k != 1 {
			return nil, errors.New("a Mercator with both a standard parallel and a scale factor")
		}
		if webHint > 0 { // Web Mercator written as a Mercator
			return &merc{el: newEllipsoid(webHint, 0), ak0: webHint * k * math.Cos(sp1)}, nil
		}
		return &merc{el: el, ak0: el.a * k * el.m(sp1)}, nil
	case "mercatorauxiliarysphere":
		if lat0() != 0 {
			return nil, errors.New("a Mercator with a latitude of origin")
		}
		var r float64
		switch p.get(pAuxType, 0) {
		case 0:
			r = el.a
		case 1:
			r = el.a * (1 - el.f)
		case 2:
			r = el.a * math.Sqrt(el.q(1)/2)
		default:
			return nil, errors.New("auxiliary sphere type 3 (authalic latitudes)")
		}
		return &merc{el: newEllipsoid(r, 0), ak0: r * k0() * math.Cos(p.get(pSP1, 0))}, nil
	case "popularvisualisationpseudomercator", "popularvisualizationpseudomercator", "pseudomercator", "webmercator":
		if lat0() != 0 {
			return nil, errors.New("a Mercator with a latitude of origin")
		}
		return &merc{el: newEllipsoid(el.a, 0), ak0: el.a * k0()}, nil

	case "polarstereographic", "polarstereographicvarianta", "polarstereographicvariantb",
		"stereographicnorthpole", "stereographicsouthpole", "stereographic":
		m := norm(method)
		pole := 0.0 // +1 north, -1 south, 0 from the parameters
		switch m {
		case "stereographicnorthpole":
			pole = 1
		case "stereographicsouthpole":
			pole = -1
		}
		k := k0()
		var phi float64 // latitude of true scale, or the pole for variant A
		switch {
		case p.has(pSP1):
			phi = p.get(pSP1, 0)
			if p.has(pLat0) && !nearPole(lat0()) && lat0() != 0 {
				return nil, errors.New("a polar stereographic with both a standard parallel and a latitude of origin")
			}
		case p.has(pLat0):
			phi = lat0()
		case pole != 0:
			phi = pole * math.Pi / 2
		default:
			return nil, errors.New("a polar stereographic with no pole")
		}
		if m == "stereographic" && !nearPole(phi) {
			return nil, errors.New("oblique stereographic")
		}
		if pole != 0 && phi*pole <= 0 {
			return nil, errors.New("a polar stereographic with its parallel in the other hemisphere")
		}
		if nearPole(phi) {
			return newPstereA(el, k, phi < 0), nil
		}
		if k != 1 {
			return nil, errors.New("a polar stereographic with both a standard parallel and a scale factor")
		}
		return newPstereB(el, phi)
	}
	return nil, errNoMethod
}

var errNoMethod = errors.New("no such method")

// webMercatorHint returns the sphere's radius when a Mercator_1SP is Web
// Mercator in disguise: GDAL's EPSG:3857 WKT1 (EXTENSION["PROJ4", "+proj=merc
// +a=6378137 +b=6378137 …"]), or a CRS so named or numbered.
func webMercatorHint(n *node, name string) float64 {
	if ext := n.Child("EXTENSION"); ext != nil && strings.EqualFold(ext.Word(0), "PROJ4") {
		var a, b float64
		isMerc := false
		for _, f := range strings.Fields(ext.Word(1)) {
			k, v, _ := strings.Cut(strings.TrimPrefix(f, "+"), "=")
			x, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "proj":
				isMerc = v == "merc"
			case "a", "R":
				a = x
			case "b":
				b = x
			}
		}
		if isMerc && a > 6e6 && a < 6.5e6 && (b == a || b == 0) {
			return a
		}
	}
	nn := norm(name)
	if strings.Contains(nn, "pseudomercator") || strings.Contains(nn, "webmercator") || strings.Contains(nn, "popularvisuali") {
		return 6378137
	}
	if id := n.Child("AUTHORITY", "ID"); id != nil {
		code := id.Word(1)
		if code == "" {
			if v, ok := id.Number(1); ok {
				code = strconv.FormatFloat(v, 'f', -1, 64)
			}
		}
		switch code {
		case "3857", "900913", "3785", "102100", "102113":
			return 6378137
		}
	}
	return 0
}
