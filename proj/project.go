package proj

// The other direction: WGS 84 longitude and latitude onto a CRS's plane,
// for answers asked for in a projected CRS (OGC API Features' crs
// parameter: EPSG:3857). Only CRSs without a datum shift project: the
// inverse Helmert shift is not written.

import (
	"math"

	"mapcommons"
	"mapcommons/format/wkb"
)

// webMercatorWKT is EPSG:3857 as GDAL writes it in WKT1; its authority
// code makes Parse take it as Web Mercator on its sphere.
const webMercatorWKT = `PROJCS["WGS 84 / Pseudo-Mercator",GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],PROJECTION["Mercator_1SP"],PARAMETER["central_meridian",0],PARAMETER["scale_factor",1],PARAMETER["false_easting",0],PARAMETER["false_northing",0],UNIT["metre",1],AUTHORITY["EPSG","3857"]]`

// WebMercator is EPSG:3857, Web Mercator (Popular Visualisation Pseudo
// Mercator) in metres.
var WebMercator = func() *Transform {
	t, err := Parse(webMercatorWKT)
	if err != nil {
		panic(err)
	}
	return t
}()

// Project converts WGS 84 longitude and latitude in degrees to x, y of the
// CRS (in its linear unit, or its angular unit when it is geographic): the
// inverse of Forward. A CRS whose datum is shifted to WGS 84 is refused
// (EINVALID), as are points with no finite image (a pole in Mercator).
func (t *Transform) Project(lon, lat float64) (x, y float64, err error) {
	if t.shift != nil {
		return 0, 0, mapcommons.Errorf(mapcommons.EINVALID, "prj: projecting onto %q, which shifts its datum, is not supported", t.name)
	}
	switch {
	case t.identity:
		x, y = lon, lat
	case t.proj == nil:
		x, y = (lon-t.lon0)*degree/t.angUnit, lat*degree/t.angUnit
	default:
		x, y = t.proj.forward(math.Remainder(lon-t.lon0, 360)*degree, lat*degree)
		x, y = (x+t.fe)/t.unit, (y+t.fn)/t.unit
	}
	if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
		return 0, 0, mapcommons.Errorf(mapcommons.EINVALID, "prj: (%g, %g) has no coordinates in %q", lon, lat, t.name)
	}
	return x, y, nil
}

// ProjectGeom projects every coordinate of g in place (see Project).
func (t *Transform) ProjectGeom(g *wkb.Geom) error {
	walk := func(xy []float64) error {
		for i := 0; i+1 < len(xy); i += 2 {
			x, y, err := t.Project(xy[i], xy[i+1])
			if err != nil {
				return err
			}
			xy[i], xy[i+1] = x, y
		}
		return nil
	}
	if err := walk(g.Coords); err != nil {
		return err
	}
	for _, r := range g.Rings {
		if err := walk(r); err != nil {
			return err
		}
	}
	for i := range g.Parts {
		if err := t.ProjectGeom(&g.Parts[i]); err != nil {
			return err
		}
	}
	return nil
}
