package proj

import (
	"math"
	"strings"
)

// helmert is a seven-parameter similarity transformation of Earth-centred
// coordinates to WGS 84 in the position vector convention (EPSG method
// 1033/9606, the convention of WKT1's TOWGS84), linearised in the rotations
// as EPSG and PROJ do.
type helmert struct {
	tx, ty, tz float64 // metres
	rx, ry, rz float64 // radians
	s          float64 // scale difference, as a fraction (ppm * 1e-6)
}

const arcsec = math.Pi / (180 * 3600)

// helmertOf builds a helmert from TOWGS84 values: 3 translations (metres),
// optionally 3 rotations (arc-seconds) and a scale difference (ppm).
func helmertOf(v []float64) *helmert {
	h := &helmert{tx: v[0], ty: v[1], tz: v[2]}
	if len(v) >= 7 {
		h.rx, h.ry, h.rz = v[3]*arcsec, v[4]*arcsec, v[5]*arcsec
		h.s = v[6] * 1e-6
	}
	return h
}

func (h *helmert) zero() bool {
	return *h == helmert{}
}

// apply moves a point at height zero on ellipsoid src, through Earth-centred
// coordinates, to WGS 84 longitude and latitude (radians; the height that
// results is dropped, as PROJ does).
func (h *helmert) apply(src ellipsoid, lam, phi float64) (float64, float64) {
	x, y, z := src.geocentric(lam, phi)
	m := 1 + h.s
	x2 := h.tx + m*(x-h.rz*y+h.ry*z)
	y2 := h.ty + m*(h.rz*x+y-h.rx*z)
	z2 := h.tz + m*(-h.ry*x+h.rx*y+z)
	return wgs84.geodetic(x2, y2, z2)
}

// datumDef is a datum recognised by name.
type datumDef struct {
	name     string    // for messages
	names    []string  // normalised names matched exactly
	prefixes []string  // normalised name prefixes (realisations of a family)
	a, invf  float64   // its ellipsoid; 0: GRS 1980 or WGS 84
	towgs84  []float64 // nil: the same as WGS 84 within its accuracy
}

// Datums known by name. The shifts are EPSG's:
//   - NAD83 (all realisations) and ETRS89 are taken as WGS 84, as EPSG
//     transformations 1188 and 1149 do (null transformations, good to 1-4 m
//     and about 1 m today, as the frames drift apart with plate motion);
//     so is any datum on the GRS 1980 or WGS 84 ellipsoid not otherwise
//     known (GDA94, NZGD2000, SIRGAS, RGF93…: ITRF-aligned realisations,
//     within a few metres).
//   - NAD27: EPSG 1173, the CONUS mean (-8, 160, 176), good to about 10 m
//     over the conterminous US (worse in Alaska, Canada, Mexico; NADCON
//     grids, which this package does not use, are good to decimetres).
//   - OSGB36: EPSG 1314 (7 parameters), good to about 2 m over Great
//     Britain (OSTN15, a grid, is needed for better).
//   - ED50: EPSG 1133 (-87, -98, -121), the European mean, good to about
//     10 m in western Europe.
//   - DHDN: EPSG 1777 (7 parameters), about 3 m over Germany.
//   - NTF: EPSG 1193 (-168, -60, 320), about 2 m over France.
var datums = []datumDef{
	{name: "WGS 84", prefixes: []string{"wgs1984", "wgs84", "worldgeodeticsystem1984"}},
	{name: "NAD83", prefixes: []string{"northamerican1983", "northamericandatum1983", "nad1983", "nad83"}},
	{name: "ETRS89", prefixes: []string{"etrs1989", "etrs89", "europeanterrestrialreferencesystem1989", "europeanterrestrialreferenceframe", "etrf"}},
	{name: "NAD27", names: []string{"northamerican1927", "northamericandatum1927", "nad1927", "nad27"},
		a: 6378206.4, invf: 294.978698213898, towgs84: []float64{-8, 160, 176}},
	{name: "OSGB36", names: []string{"osgb1936", "osgb36", "ordnancesurveyofgreatbritain1936"},
		a: 6377563.396, invf: 299.3249646, towgs84: []float64{446.448, -125.157, 542.06, 0.15, 0.247, 0.842, -20.489}},
	{name: "ED50", names: []string{"european1950", "europeandatum1950", "ed50"},
		a: 6378388, invf: 297, towgs84: []float64{-87, -98, -121}},
	{name: "DHDN", names: []string{"deutscheshauptdreiecksnetz", "dhdn"},
		a: 6377397.155, invf: 299.1528128, towgs84: []float64{598.1, 73.7, 418.2, 0.202, 0.045, -2.455, 6.7}},
	{name: "NTF", names: []string{"ntf", "nouvelletriangulationfrancaise", "nouvelletriangulationfrancaiseparis", "ntfparis"},
		a: 6378249.2, invf: 293.466021293627, towgs84: []float64{-168, -60, 320}},
}

// normDatum normalises a datum name, dropping ESRI's "D_" prefix.
func normDatum(name string) string {
	if len(name) > 2 && (name[0] == 'D' || name[0] == 'd') && name[1] == '_' {
		name = name[2:]
	}
	return norm(name)
}

func lookupDatum(name string) *datumDef {
	n := normDatum(name)
	for i := range datums {
		d := &datums[i]
		for _, s := range d.names {
			if n == s {
				return d
			}
		}
		for _, p := range d.prefixes {
			if strings.HasPrefix(n, p) {
				return d
			}
		}
	}
	return nil
}

// wgs84Like reports whether an ellipsoid is GRS 1980 or WGS 84 (which
// differ by 0.1 mm in the semi-minor axis).
func wgs84Like(a, invf float64) bool {
	return math.Abs(a-6378137) < 0.5 && (math.Abs(invf-298.257223563) < 1e-5 || math.Abs(invf-298.257222101) < 1e-5)
}

func sameEllipsoid(a, invf, wantA, wantInvf float64) bool {
	return math.Abs(a-wantA) < 0.5 && math.Abs(invf-wantInvf) < 1e-4
}
