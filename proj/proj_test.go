package proj

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mapcommons/format/wkb"
)

// unsupportedPRJ are the testdata files Parse must refuse, with what the
// error must name.
var unsupportedPRJ = map[string][]string{
	"etrs89_laea.esri.prj":      {`"ETRS_1989_LAEA"`, `"Lambert_Azimuthal_Equal_Area"`},
	"etrs89_laea.ogc.prj":       {`"ETRS89-extended / LAEA Europe"`, `"Lambert_Azimuthal_Equal_Area"`},
	"michigan_oblique.esri.prj": {`"NAD_1983_Michigan_GeoRef_Meters"`, `"Hotine_Oblique_Mercator_Azimuth_Natural_Origin"`},
	"michigan_oblique.ogc.prj":  {`"NAD83 / Michigan Oblique Mercator"`, `"Hotine_Oblique_Mercator"`},
	"ch1903plus_lv95.esri.prj":  {`"CH1903+_LV95"`, `"Hotine_Oblique_Mercator_Azimuth_Center"`},
	"ch1903plus_lv95.ogc.prj":   {`"CH1903+ / LV95"`, `"Hotine_Oblique_Mercator_Azimuth_Center"`},
}

// TestTestdata parses every .prj of testdata: the supported ones give a
// transform named as the WKT names the CRS, the others the EINVALID error
// naming the CRS and its projection.
func TestTestdata(t *testing.T) {
	files, err := filepath.Glob("testdata/*.prj")
	if err != nil || len(files) < 30 {
		t.Fatalf("testdata: %d files, %v", len(files), err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		wkt := readPRJ(t, name)
		tr, err := Parse(wkt)
		if want, bad := unsupportedPRJ[name]; bad {
			wantInvalid(t, err, append([]string{"prj: unsupported coordinate system"}, want...)...)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		root, _ := parseWKT(strings.TrimSpace(wkt))
		if root.Key == "BOUNDCRS" {
			root = root.Child("SOURCECRS").Args[0].Node
		}
		if tr.Name() != root.Name() {
			t.Errorf("%s: Name() = %q, want %q", name, tr.Name(), root.Name())
		}
		if got, want := tr.Identity(), name == "wgs84_geographic.esri.prj" || name == "wgs84_geographic.ogc.prj"; got != want {
			t.Errorf("%s: Identity() = %v", name, got)
		}
	}
}

func TestNames(t *testing.T) {
	for file, want := range map[string]string{
		"utm33n_wgs84.esri.prj":              "WGS_1984_UTM_Zone_33N",
		"nad83_utm17n.ogc.prj":               "NAD83 / UTM zone 17N",
		"nad83_nc_ftus.esri.prj":             "NAD_1983_StatePlane_North_Carolina_FIPS_3200_Feet",
		"nad27_texas_south_central.esri.prj": "NAD_1927_StatePlane_Texas_South_Central_FIPS_4204",
		"osgb36_bng.esri.prj":                "British_National_Grid",
		"web_mercator.esri.prj":              "WGS_1984_Web_Mercator_Auxiliary_Sphere",
		"nsidc_north.ogc.prj":                "WGS 84 / NSIDC Sea Ice Polar Stereographic North",
		"antarctic_ps.esri.prj":              "WGS_1984_Antarctic_Polar_Stereographic",
		"conus_albers.esri.prj":              "NAD_1983_Contiguous_USA_Albers",
		"epsg3857.wkt2.prj":                  "WGS 84 / Pseudo-Mercator",
		"osgb36_bound.wkt2.prj":              "unknown",
	} {
		if got := mustParse(t, readPRJ(t, file)).Name(); got != want {
			t.Errorf("%s: Name() = %q, want %q", file, got, want)
		}
	}
}

const (
	gcsWGS84 = `GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]`
	gcsNAD83 = `GEOGCS["GCS_North_American_1983",DATUM["D_North_American_1983",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]`
	gcsNAD27 = `GEOGCS["GCS_North_American_1927",DATUM["D_North_American_1927",SPHEROID["Clarke_1866",6378206.4,294.9786982]],PRIMEM["Greenwich",0],UNIT["Degree",0.017453292519943295]]`
)

func TestIdentity(t *testing.T) {
	for _, wkt := range []string{
		"", "  \n", gcsWGS84, gcsNAD83,
		`GEOGCS["ETRS89",DATUM["European_Terrestrial_Reference_System_1989",SPHEROID["GRS 1980",6378137,298.257222101]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]]`,
		`GEOGCS["GDA94",DATUM["Geocentric_Datum_of_Australia_1994",SPHEROID["GRS 1980",6378137,298.257222101]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]]`,
		`GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563],TOWGS84[0,0,0,0,0,0,0]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]]`,
		"\uFEFF" + gcsWGS84,
		readPRJ(t, "wgs84_geographic.ogc.prj"),
		`GEOGCRS["WGS 84",ENSEMBLE["World Geodetic System 1984 ensemble",MEMBER["World Geodetic System 1984 (G2139)"],ELLIPSOID["WGS 84",6378137,298.257223563,LENGTHUNIT["metre",1]],ENSEMBLEACCURACY[2.0]],PRIMEM["Greenwich",0,ANGLEUNIT["degree",0.0174532925199433]],CS[ellipsoidal,2],AXIS["geodetic latitude (Lat)",north,ORDER[1],ANGLEUNIT["degree",0.0174532925199433]],AXIS["geodetic longitude (Lon)",east,ORDER[2],ANGLEUNIT["degree",0.0174532925199433]],ID["EPSG",4326]]`,
	} {
		tr := mustParse(t, wkt)
		if !tr.Identity() {
			t.Errorf("not identity: %s", wkt)
		}
		for _, p := range [][2]float64{{0, 0}, {-180, -90}, {180, 90}, {12.345678901234, -45.6789}} {
			if lon, lat, err := tr.Forward(p[0], p[1]); err != nil || lon != p[0] || lat != p[1] {
				t.Errorf("Forward(%v) = %v %v %v", p, lon, lat, err)
			}
		}
	}
	for _, wkt := range []string{gcsNAD27, readPRJ(t, "utm33n_wgs84.esri.prj"), readPRJ(t, "ntf_paris_geographic.ogc.prj"),
		strings.Replace(gcsWGS84, `PRIMEM["Greenwich",0.0]`, `PRIMEM["Ferro",-17.666666666666668]`, 1)} {
		if mustParse(t, wkt).Identity() {
			t.Errorf("identity: %s", wkt)
		}
	}
}

// TestGeographicUnits: the angular unit of a GEOGCS, and its prime
// meridian (in degrees, as GDAL and ESRI write it).
func TestGeographicUnits(t *testing.T) {
	grads := mustParse(t, `GEOGCS["grads",DATUM["D_unknown",SPHEROID["GRS_1980",6378137,298.257222101]],PRIMEM["Paris",2.33722917],UNIT["Grad",0.0157079632679489]]`)
	lon, lat, err := grads.Forward(10, 50)
	if err != nil || math.Abs(lon-(9+2.33722917)) > 1e-12 || math.Abs(lat-45) > 1e-12 {
		t.Errorf("grads: %v %v %v", lon, lat, err)
	}
	radians := mustParse(t, `GEOGCS["radians",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["radian",1]]`)
	lon, lat, err = radians.Forward(-1, 0.5)
	if err != nil || math.Abs(lon+180/math.Pi) > 1e-12 || math.Abs(lat-90/math.Pi) > 1e-12 {
		t.Errorf("radians: %v %v %v", lon, lat, err)
	}
	if _, _, err := radians.Forward(0, 2); err == nil {
		t.Error("latitude of 2 radians converted")
	}
	// WKT2 with its own prime meridian unit.
	w2 := mustParse(t, `GEOGCRS["x",DATUM["d",ELLIPSOID["GRS 1980",6378137,298.257222101,LENGTHUNIT["metre",1]]],PRIMEM["Paris",2.5969213,ANGLEUNIT["grad",0.015707963267949]],CS[ellipsoidal,2],AXIS["lon",east,ANGLEUNIT["degree",0.0174532925199433]],AXIS["lat",north,ANGLEUNIT["degree",0.0174532925199433]]]`)
	lon, _, _ = w2.Forward(1, 45)
	if math.Abs(lon-3.33722917) > 1e-12 {
		t.Errorf("WKT2 Paris: %v", lon)
	}
}

// TestLinearUnits: false easting and northing are in the CRS's unit, and
// so are the coordinates: the same CRS in metres, US survey feet and
// international feet agrees.
func TestLinearUnits(t *testing.T) {
	const lcc = `PROJCS["x",` + gcsNAD83 + `,PROJECTION["Lambert_Conformal_Conic"],PARAMETER["False_Easting",%FE%],PARAMETER["False_Northing",%FN%],PARAMETER["Central_Meridian",-79.0],PARAMETER["Standard_Parallel_1",36.16666666666666],PARAMETER["Standard_Parallel_2",34.33333333333334],PARAMETER["Latitude_Of_Origin",33.75],UNIT[%UNIT%]]`
	mk := func(unit float64, name string) *Transform {
		f := func(v float64) string { return strconv.FormatFloat(v/unit, 'g', -1, 64) }
		return mustParse(t, strings.NewReplacer("%FE%", f(2000000*usFoot), "%FN%", f(100),
			"%UNIT%", `"`+name+`",`+strconv.FormatFloat(unit, 'g', -1, 64)).Replace(lcc))
	}
	m := mk(1, "Meter")
	ftUS := mk(0.3048006096012192, "Foot_US")
	ft := mk(0.3048, "Foot")
	lon0, lat0, _ := m.Forward(609601.2192024384, 100)
	if math.Abs(lon0+79) > 1e-12 || math.Abs(lat0-33.75) > 1e-12 {
		t.Errorf("origin: %v %v", lon0, lat0)
	}
	for _, p := range [][2]float64{{500000, 200000}, {900000, 10000}, {609601.2192024384, 100}} {
		a, b, _ := m.Forward(p[0], p[1])
		c, d, _ := ftUS.Forward(p[0]/usFoot, p[1]/usFoot)
		e, f, _ := ft.Forward(p[0]/0.3048, p[1]/0.3048)
		if metres(a, b, c, d) > 1e-6 || metres(a, b, e, f) > 1e-6 {
			t.Errorf("%v: metres %v %v, ftUS %v %v, ft %v %v", p, a, b, c, d, e, f)
		}
	}
	if ftUS.unit != usFoot || ft.unit != 0.3048 {
		t.Errorf("units %v %v", ftUS.unit, ft.unit)
	}
}

// TestDatums: datums are recognised by name (ESRI and OGC spellings) and
// ellipsoid; TOWGS84 takes precedence.
func TestDatums(t *testing.T) {
	geog := func(datum, spheroid, extra string) string {
		return `GEOGCS["g",DATUM["` + datum + `",SPHEROID[` + spheroid + `]` + extra + `],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]]`
	}
	const (
		clarke66 = `"Clarke_1866",6378206.4,294.978698213898`
		airy     = `"Airy 1830",6377563.396,299.3249646`
		intl     = `"International_1924",6378388.0,297.0`
		grs80    = `"GRS 1980",6378137,298.257222101`
		bessel   = `"Bessel 1841",6377397.155,299.1528128`
	)
	for _, c := range []struct {
		datum, spheroid, extra string
		shift                  []float64 // nil: none
	}{
		{"D_North_American_1927", clarke66, "", []float64{-8, 160, 176}},
		{"North_American_Datum_1927", clarke66, "", []float64{-8, 160, 176}},
		{"North American Datum 1927", clarke66, "", []float64{-8, 160, 176}},
		{"North_American_Datum_1927", clarke66, ",TOWGS84[-3,142,183,0,0,0,0]", []float64{-3, 142, 183}},
		{"D_OSGB_1936", airy, "", []float64{446.448, -125.157, 542.06, 0.15, 0.247, 0.842, -20.489}},
		{"OSGB_1936", airy, "", []float64{446.448, -125.157, 542.06, 0.15, 0.247, 0.842, -20.489}},
		{"Ordnance_Survey_of_Great_Britain_1936", airy, "", []float64{446.448, -125.157, 542.06, 0.15, 0.247, 0.842, -20.489}},
		{"D_European_1950", intl, "", []float64{-87, -98, -121}},
		{"European_Datum_1950", intl, "", []float64{-87, -98, -121}},
		{"D_Deutsches_Hauptdreiecksnetz", bessel, "", []float64{598.1, 73.7, 418.2, 0.202, 0.045, -2.455, 6.7}},
		{"D_North_American_1983", grs80, "", nil},
		{"NAD83_National_Spatial_Reference_System_2011", grs80, "", nil},
		{"D_North_American_1983_HARN", grs80, "", nil},
		{"D_ETRS_1989", grs80, "", nil},
		{"D_SIRGAS_2000", grs80, "", nil},
		{"Tokyo", bessel, ",TOWGS84[-146.414,507.337,680.507,0,0,0,0]", []float64{-146.414, 507.337, 680.507}},
	} {
		tr, err := Parse(geog(c.datum, c.spheroid, c.extra))
		if err != nil {
			t.Errorf("%s: %v", c.datum, err)
			continue
		}
		if c.shift == nil {
			if tr.shift != nil || !tr.Identity() {
				t.Errorf("%s: shift %+v", c.datum, tr.shift)
			}
			continue
		}
		if want := helmertOf(c.shift); tr.shift == nil || *tr.shift != *want {
			t.Errorf("%s: shift %+v, want %+v", c.datum, tr.shift, want)
		}
	}
	for _, c := range []struct{ datum, spheroid, extra string }{
		{"Tokyo", bessel, ""},                                       // unknown, not GRS 1980
		{"D_North_American_1927", grs80, ""},                        // NAD27 on the wrong ellipsoid
		{"D_OSGB_1936", intl, ""},                                   // same
		{"D_North_American_1983", clarke66, ""},                     // NAD83 on Clarke 1866
		{"Tokyo", bessel, ",TOWGS84[1,2]"},                          // bad TOWGS84
		{"Tokyo", bessel, ",TOWGS84[1,2,3,4,5]"},                    // same
		{"Mars", `"Mars_2000",3396190,169.8944472236118`, ""},       // not the Earth
		{"Moon", `"Moon_2000",1737400,0`, ",TOWGS84[0,0,0]"},        // same
		{"D_North_American_1927", `"Clarke_1866",6378206.4,-5`, ""}, // bad flattening
	} {
		_, err := Parse(geog(c.datum, c.spheroid, c.extra))
		wantInvalid(t, err, `"g"`)
	}
}

func TestUnsupported(t *testing.T) {
	for _, c := range []struct {
		wkt   string
		parts []string
	}{
		{`PROJCS["NAD_1983_StatePlane_Pennsylvania_South_FIPS_3702_Feet",` + gcsNAD83 + `,PROJECTION["Cassini"],PARAMETER["False_Easting",0],PARAMETER["Central_Meridian",0],PARAMETER["Scale_Factor",1],PARAMETER["Latitude_Of_Origin",0],UNIT["Meter",1]]`,
			[]string{`unsupported coordinate system "NAD_1983_StatePlane_Pennsylvania_South_FIPS_3702_Feet" (projection "Cassini"`}},
		{`PROJCS["RD_New",GEOGCS["GCS_Amersfoort",DATUM["D_Amersfoort",SPHEROID["Bessel_1841",6377397.155,299.1528128]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Double_Stereographic"],PARAMETER["False_Easting",155000.0],PARAMETER["False_Northing",463000.0],PARAMETER["Central_Meridian",5.38763888888889],PARAMETER["Scale_Factor",0.9999079],PARAMETER["Latitude_Of_Origin",52.1561605555556],UNIT["Meter",1.0]]`,
			[]string{`"RD_New"`}},
		{`PROJCS["x",` + gcsWGS84 + `,PROJECTION["Stereographic"],PARAMETER["False_Easting",0],PARAMETER["Central_Meridian",5],PARAMETER["Scale_Factor",1],PARAMETER["Latitude_Of_Origin",52],UNIT["Meter",1]]`,
			[]string{`"x"`, `"Stereographic: oblique stereographic"`}},
		{`PROJCS["x",` + gcsWGS84 + `,PROJECTION["Mercator_Auxiliary_Sphere"],PARAMETER["Central_Meridian",0],PARAMETER["Auxiliary_Sphere_Type",3],UNIT["Meter",1]]`,
			[]string{`"x"`, "auxiliary sphere type 3"}},
		{`PROJCS["x",` + gcsWGS84 + `,PROJECTION["Transverse_Mercator"],PARAMETER["Central_Meridian",0],PARAMETER["Azimuth",30],UNIT["Meter",1]]`,
			[]string{`"x"`, "Transverse_Mercator with parameter Azimuth"}},
		{`PROJCS["x",` + gcsWGS84 + `,PROJECTION["Lambert_Conformal_Conic"],PARAMETER["Central_Meridian",0],PARAMETER["Standard_Parallel_1",30],PARAMETER["Standard_Parallel_2",-30],UNIT["Meter",1]]`,
			[]string{`"x"`, "no cone"}},
		{`PROJCS["x",` + gcsWGS84 + `,PROJECTION["Albers"],PARAMETER["Central_Meridian",0],PARAMETER["Standard_Parallel_1",90],PARAMETER["Standard_Parallel_2",45],UNIT["Meter",1]]`,
			[]string{`"x"`, "between the poles"}},
		{`PROJCS["x",` + gcsNAD27 + `,PROJECTION["Transverse_Mercator"],UNIT["Meter",0]]`, []string{`"x"`, "unit"}},
		{`GEOCCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["metre",1]]`,
			[]string{`"WGS 84"`, "GEOCCS"}},
		{`VERT_CS["NAVD88",VERT_DATUM["North American Vertical Datum 1988",2005],UNIT["metre",1]]`, []string{`"NAVD88"`}},
		{`GEODCRS["WGS 84",DATUM["World Geodetic System 1984",ELLIPSOID["WGS 84",6378137,298.257223563]],CS[Cartesian,3],AXIS["(X)",geocentricX],LENGTHUNIT["metre",1]]`,
			[]string{`"WGS 84"`, "Cartesian"}},
		{`not WKT at all`, []string{"not a coordinate system in WKT"}},
		{`PROJCS["x",GEOGCS["y"`, []string{"not a coordinate system in WKT"}},
		{`PROJCS["x",` + gcsWGS84 + `]`, []string{`"x"`, "no projection"}},
		{`PROJCS["x",PROJECTION["Transverse_Mercator"]]`, []string{`"x"`, "no geographic CRS"}},
		{strings.Repeat(" ", 10) + "GEOGCS[" + strings.Repeat("x", maxPRJLen) + "]", []string{"too long"}},
		{strings.Repeat("A[", 100) + strings.Repeat("]", 100), []string{"nested too deeply"}},
	} {
		_, err := Parse(c.wkt)
		wantInvalid(t, err, c.parts...)
	}
}

// TestSpecialCases: CRS forms that take a special path.
func TestSpecialCases(t *testing.T) {
	// ESRI 102113, Web Mercator on the "auxiliary sphere" datum.
	old := mustParse(t, `PROJCS["WGS_1984_Web_Mercator",GEOGCS["GCS_WGS_1984_Major_Auxiliary_Sphere",DATUM["D_WGS_1984_Major_Auxiliary_Sphere",SPHEROID["WGS_1984_Major_Auxiliary_Sphere",6378137.0,0.0]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.017453292519943295]],PROJECTION["Mercator"],PARAMETER["False_Easting",0.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",0.0],PARAMETER["Standard_Parallel_1",0.0],UNIT["Meter",1.0]]`)
	web := mustParse(t, readPRJ(t, "web_mercator.esri.prj"))
	for _, p := range [][2]float64{{-11169055.58, 2800000}, {1e6, -1e7}} {
		a, b, _ := old.Forward(p[0], p[1])
		c, d, _ := web.Forward(p[0], p[1])
		if a != c || b != d {
			t.Errorf("102113 %v %v, 3857 %v %v", a, b, c, d)
		}
	}
	// A compound CRS takes its horizontal part and keeps its own name.
	comp := mustParse(t, `COMPD_CS["OSGB 1936 / British National Grid + ODN height",`+readPRJ(t, "osgb36_bng.esri.prj")+`,VERT_CS["ODN height",VERT_DATUM["Ordnance Datum Newlyn",2005],UNIT["metre",1]]]`)
	if comp.Name() != "OSGB 1936 / British National Grid + ODN height" || comp.shift == nil {
		t.Errorf("compound: %q %+v", comp.Name(), comp.shift)
	}
	// Polar stereographic: the pole itself, and UPS given as ESRI's
	// Stereographic_North_Pole with a scale factor.
	for _, f := range []string{"nsidc_north.esri.prj", "ups_north.ogc.prj", "antarctic_ps.esri.prj"} {
		tr := mustParse(t, readPRJ(t, f))
		lon, lat, err := tr.Forward(tr.fe/tr.unit, tr.fn/tr.unit)
		if err != nil || math.Abs(math.Abs(lat)-90) > 1e-12 {
			t.Errorf("%s: pole gives %v %v %v", f, lon, lat, err)
		}
	}
	ups := mustParse(t, readPRJ(t, "ups_north.ogc.prj"))
	esriUPS := mustParse(t, `PROJCS["UPS",`+gcsWGS84+`,PROJECTION["Stereographic_North_Pole"],PARAMETER["False_Easting",2000000.0],PARAMETER["False_Northing",2000000.0],PARAMETER["Central_Meridian",0.0],PARAMETER["Scale_Factor",0.994],PARAMETER["Standard_Parallel_1",90.0],UNIT["Meter",1.0]]`)
	a, b, _ := ups.Forward(3320416.75, 632668.43)
	c, d, _ := esriUPS.Forward(3320416.75, 632668.43)
	if metres(a, b, c, d) > 1e-9 || metres(a, b, 44, 73) > 0.01 {
		t.Errorf("UPS: %v %v, ESRI %v %v", a, b, c, d)
	}
	// Longitudes come back in [-180, 180].
	utm60 := mustParse(t, strings.Replace(readPRJ(t, "utm33n_wgs84.esri.prj"), `"Central_Meridian",15.0`, `"Central_Meridian",177.0`, 1))
	lon, _, err := utm60.Forward(900000, 5000000)
	if err != nil || lon > -170 || lon < -180 {
		t.Errorf("east of the antimeridian: %v %v", lon, err)
	}
}

func TestForwardErrors(t *testing.T) {
	for _, f := range []string{"utm33n_wgs84.esri.prj", "nad83_nc_ftus.esri.prj", "conus_albers.esri.prj", "web_mercator.esri.prj",
		"nsidc_north.esri.prj", "osgb36_bng.esri.prj", "nad27_geographic.esri.prj", "wgs84_geographic.esri.prj"} {
		tr := mustParse(t, readPRJ(t, f))
		for _, p := range [][2]float64{{math.NaN(), 0}, {0, math.NaN()}, {math.Inf(1), 0}, {0, math.Inf(-1)}, {1e300, 1e300}} {
			if lon, lat, err := tr.Forward(p[0], p[1]); err == nil {
				t.Errorf("%s: Forward(%v) = %v %v", f, p, lon, lat)
			} else {
				wantInvalid(t, err, tr.Name())
			}
		}
	}
	// Albers: a point beyond the pole's circle is off the map.
	aea := mustParse(t, readPRJ(t, "conus_albers.esri.prj"))
	if _, _, err := aea.Forward(0, -4e7); err == nil {
		t.Error("Albers: a point off the map converted")
	}
}

// TestRoundTrip checks forward then inverse over each CRS's area, with no
// GDAL: micrometres.
func TestRoundTrip(t *testing.T) {
	for _, c := range gdalCases {
		tr := mustParse(t, readPRJ(t, c.file))
		for _, p := range grid(c.bbox, 25) {
			x, y := project(tr, p[0], p[1])
			lon, lat := unproject(tr, x, y)
			if d := metres(lon, lat, p[0], p[1]); !(d < 1e-6) {
				t.Errorf("%s: %v -> %v %v -> %v %v: %.3g m", c.file, p, x, y, lon, lat, d)
			}
		}
	}
}

func TestWKB(t *testing.T) {
	tr := mustParse(t, readPRJ(t, "nad27_texas_south_central.esri.prj"))
	pt := func(i int) (float64, float64) { return 2000000 + float64(i)*1000, 500000 + float64(i)*700 }
	xy := func(n, off int) []float64 {
		var s []float64
		for i := 0; i < n; i++ {
			x, y := pt(off + i)
			s = append(s, x, y)
		}
		return s
	}
	x0, y0 := pt(0)
	point := wkb.AppendPoint(nil, x0, y0)
	line := wkb.AppendLineString(nil, xy(5, 1))
	poly := wkb.AppendPolygon(nil, [][]float64{xy(4, 10), xy(4, 20)})
	geoms := map[string][]byte{
		"point":      point,
		"empty":      wkb.AppendPoint(nil, math.NaN(), math.NaN()),
		"line":       line,
		"polygon":    poly,
		"multipoint": wkb.AppendMultiPoint(nil, xy(3, 30)),
		"multiline":  wkb.AppendMultiLineString(nil, [][]float64{xy(2, 40), xy(3, 50)}),
		"multipoly":  wkb.AppendMultiPolygon(nil, [][][]float64{{xy(4, 60)}, {xy(4, 70), xy(4, 80)}}),
		"collection": wkb.AppendCollection(nil, [][]byte{point, line, wkb.AppendCollection(nil, [][]byte{poly}), wkb.AppendLineString(nil, nil)}),
	}
	for name, src := range geoms {
		prefix := []byte("prefix")
		got, err := tr.WKB(src, prefix)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(got[:len(prefix)]) != "prefix" {
			t.Fatalf("%s: dst not appended to", name)
		}
		g, err := wkb.Decode(got[len(prefix):])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		in, _ := wkb.Decode(src)
		if g.Type != in.Type || len(g.Parts) != len(in.Parts) || len(g.Rings) != len(in.Rings) {
			t.Errorf("%s: structure changed: %+v", name, g)
		}
		a, b := flat(in, nil), flat(g, nil)
		if len(a) != len(b) {
			t.Fatalf("%s: %d coordinates, %d out", name, len(a), len(b))
		}
		for i := 0; i < len(a); i += 2 {
			lon, lat, err := tr.Forward(a[i], a[i+1])
			if err != nil || lon != b[i] || lat != b[i+1] {
				t.Errorf("%s: %v %v -> %v %v, Forward %v %v %v", name, a[i], a[i+1], b[i], b[i+1], lon, lat, err)
			}
		}
		if name == "empty" && (g.Type != wkb.Point || len(g.Coords) != 0) {
			t.Errorf("empty point became %+v", g)
		}
	}

	// Big-endian input comes out in the stored form.
	be := []byte{0, 0, 0, 0, 1}
	be = binary.BigEndian.AppendUint64(be, math.Float64bits(x0))
	be = binary.BigEndian.AppendUint64(be, math.Float64bits(y0))
	got, err := tr.WKB(be, nil)
	want, _ := tr.WKB(point, nil)
	if err != nil || string(got) != string(want) {
		t.Errorf("big endian: %x %v, want %x", got, err, want)
	}

	// Errors leave dst alone.
	bad := map[string][]byte{
		"truncated":  point[:10],
		"garbage":    []byte("hello world"),
		"trailing":   append(append([]byte(nil), point...), 0),
		"infinite":   wkb.AppendLineString(nil, []float64{x0, y0, math.Inf(1), 0}),
		"nan member": wkb.AppendCollection(nil, [][]byte{line, wkb.AppendLineString(nil, []float64{x0, math.NaN()})}),
	}
	for name, src := range bad {
		dst := []byte("keep")
		out, err := tr.WKB(src, dst)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		wantInvalid(t, err, "prj:")
		if string(out) != "keep" {
			t.Errorf("%s: dst became %q", name, out)
		}
	}
}

// TestConcurrent uses one Transform from many goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	tr := mustParse(t, readPRJ(t, "osgb36_bng.esri.prj"))
	want, _, _ := tr.Forward(500000, 200000)
	done := make(chan bool)
	for i := 0; i < 8; i++ {
		go func() {
			ok := true
			for j := 0; j < 200; j++ {
				if lon, _, err := tr.Forward(500000, 200000); err != nil || lon != want {
					ok = false
				}
				if _, err := tr.WKB(wkb.AppendLineString(nil, []float64{500000, 200000, 510000, 210000}), nil); err != nil {
					ok = false
				}
			}
			done <- ok
		}()
	}
	for i := 0; i < 8; i++ {
		if !<-done {
			t.Error("concurrent use failed")
		}
	}
}
