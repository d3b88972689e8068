package proj

import (
	"math"
	"testing"
)

// The worked examples of IOGP Guidance Note 7-2 ("Coordinate Conversions
// and Transformations including Formulas") and, for Albers, of Snyder's
// "Map Projections: A Working Manual" (p. 292), checked to the precision
// they are printed with. These need no GDAL.
//
// Datums the package does not know are given a TOWGS84 so that Parse takes
// them; the projection, not the datum shift, is under test.
var epsgExamples = []struct {
	name     string
	wkt      string
	lon, lat float64 // degrees
	e, n     float64 // published, in the CRS's unit
	tolEN    float64 // half the last printed digit
}{
	{
		name: "Transverse Mercator (9807), OSGB 1936 / British National Grid",
		wkt: `PROJCS["OSGB 1936 / British National Grid",GEOGCS["OSGB 1936",DATUM["OSGB_1936",SPHEROID["Airy 1830",6377563.396,299.3249646]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],
			PROJECTION["Transverse_Mercator"],PARAMETER["latitude_of_origin",49],PARAMETER["central_meridian",-2],PARAMETER["scale_factor",0.9996012717],
			PARAMETER["false_easting",400000],PARAMETER["false_northing",-100000],UNIT["metre",1]]`,
		lon: dms(0, 30, 0), lat: dms(50, 30, 0),
		e: 577274.98, n: 69740.49, tolEN: 0.005,
	},
	{
		name: "Lambert Conic Conformal 2SP (9802), NAD27 / Texas South Central",
		wkt: `PROJCS["NAD27 / Texas South Central",GEOGCS["NAD27",DATUM["North_American_Datum_1927",SPHEROID["Clarke 1866",6378206.4,294.97869821]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],
			PROJECTION["Lambert_Conformal_Conic_2SP"],PARAMETER["latitude_of_origin",27.8333333333333],PARAMETER["central_meridian",-99],
			PARAMETER["standard_parallel_1",28.3833333333333],PARAMETER["standard_parallel_2",30.2833333333333],
			PARAMETER["false_easting",2000000],PARAMETER["false_northing",0],UNIT["US survey foot",0.3048006096012192]]`,
		lon: -96, lat: dms(28, 30, 0),
		e: 2963503.91, n: 254759.80, tolEN: 0.005,
	},
	{
		name: "Lambert Conic Conformal 1SP (9801), JAD69 / Jamaica National Grid",
		wkt: `PROJCS["JAD69 / Jamaica National Grid",GEOGCS["JAD69",DATUM["Jamaica_1969",SPHEROID["Clarke 1866",6378206.4,294.978698213898],TOWGS84[-33.722,153.789,94.959,-8.581,-4.478,4.54,8.95]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],
			PROJECTION["Lambert_Conformal_Conic_1SP"],PARAMETER["latitude_of_origin",18],PARAMETER["central_meridian",-77],PARAMETER["scale_factor",1],
			PARAMETER["false_easting",250000],PARAMETER["false_northing",150000],UNIT["metre",1]]`,
		lon: dms(-76, 56, 37.26), lat: dms(17, 55, 55.80),
		e: 255966.58, n: 142493.51, tolEN: 0.005,
	},
	{
		name: "Albers Equal Area (9822), Snyder's example on Clarke 1866",
		wkt: `PROJCS["Snyder Albers",GEOGCS["NAD27",DATUM["North_American_Datum_1927",SPHEROID["Clarke 1866",6378206.4,294.978698213898]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],
			PROJECTION["Albers_Conic_Equal_Area"],PARAMETER["standard_parallel_1",29.5],PARAMETER["standard_parallel_2",45.5],
			PARAMETER["latitude_of_center",23],PARAMETER["longitude_of_center",-96],PARAMETER["false_easting",0],PARAMETER["false_northing",0],UNIT["metre",1]]`,
		lon: -75, lat: 35,
		e: 1885472.7, n: 1535925.0, tolEN: 0.05,
	},
	{
		name: "Polar Stereographic variant A (9810), WGS 84 / UPS North",
		wkt: `PROJCS["WGS 84 / UPS North",GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],
			PROJECTION["Polar_Stereographic"],PARAMETER["latitude_of_origin",90],PARAMETER["central_meridian",0],PARAMETER["scale_factor",0.994],
			PARAMETER["false_easting",2000000],PARAMETER["false_northing",2000000],UNIT["metre",1]]`,
		lon: 44, lat: 73,
		e: 3320416.75, n: 632668.43, tolEN: 0.005,
	},
	{
		name: "Polar Stereographic variant B (9829), WGS 84 / Australian Antarctic Polar Stereographic",
		wkt: `PROJCS["WGS 84 / Australian Antarctic Polar Stereographic",GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],
			PROJECTION["Polar_Stereographic"],PARAMETER["latitude_of_origin",-71],PARAMETER["central_meridian",70],
			PARAMETER["false_easting",6000000],PARAMETER["false_northing",6000000],UNIT["metre",1]]`,
		lon: 120, lat: -75,
		e: 7255380.79, n: 7053389.56, tolEN: 0.005,
	},
	{
		name: "Mercator variant A (9804), Makassar / NEIEZ",
		wkt: `PROJCS["Makassar / NEIEZ",GEOGCS["Makassar",DATUM["Makassar",SPHEROID["Bessel 1841",6377397.155,299.1528128],TOWGS84[-587.8,519.75,145.76,0,0,0,0]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],
			PROJECTION["Mercator_1SP"],PARAMETER["central_meridian",110],PARAMETER["scale_factor",0.997],
			PARAMETER["false_easting",3900000],PARAMETER["false_northing",900000],UNIT["metre",1]]`,
		lon: 120, lat: -3,
		e: 5009726.58, n: 569150.82, tolEN: 0.005,
	},
	{
		name: "Mercator variant B (9805), Pulkovo 1942 / Caspian Sea Mercator",
		wkt: `PROJCS["Pulkovo 1942 / Caspian Sea Mercator",GEOGCS["Pulkovo 1942",DATUM["Pulkovo_1942",SPHEROID["Krassowsky 1940",6378245,298.3],TOWGS84[23.92,-141.27,-80.9,0,0.35,0.82,-0.12]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],
			PROJECTION["Mercator_2SP"],PARAMETER["standard_parallel_1",42],PARAMETER["central_meridian",51],
			PARAMETER["false_easting",0],PARAMETER["false_northing",0],UNIT["metre",1]]`,
		lon: 53, lat: 53,
		e: 165704.29, n: 5171848.07, tolEN: 0.005,
	},
	{
		name: "Popular Visualisation Pseudo Mercator (1024), WGS 84 / Pseudo-Mercator",
		wkt: `PROJCS["WGS 84 / Pseudo-Mercator",GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],
			PROJECTION["Popular_Visualisation_Pseudo_Mercator"],PARAMETER["central_meridian",0],
			PARAMETER["false_easting",0],PARAMETER["false_northing",0],UNIT["metre",1]]`,
		lon: dms(-100, 20, 0), lat: dms(24, 22, 54.433),
		e: -11169055.58, n: 2800000.00, tolEN: 0.005,
	},
}

func TestEPSGExamples(t *testing.T) {
	for _, ex := range epsgExamples {
		t.Run(ex.name, func(t *testing.T) {
			tr := mustParse(t, ex.wkt)
			e, n := project(tr, ex.lon, ex.lat)
			if math.Abs(e-ex.e) > ex.tolEN || math.Abs(n-ex.n) > ex.tolEN {
				t.Errorf("forward: (%.4f, %.4f), published (%.2f, %.2f)", e, n, ex.e, ex.n)
			}
			// Reverse from the published (rounded) values: off by at most
			// the rounding, a few millimetres on the ground.
			lon, lat := unproject(tr, ex.e, ex.n)
			if d := metres(lon, lat, ex.lon, ex.lat) / tr.unit; d > 1.5*ex.tolEN {
				t.Errorf("reverse: (%.9f, %.9f), published (%.9f, %.9f): %.4f units off", lon, lat, ex.lon, ex.lat, d)
			}
			// Round trip from the exact forward: nanometres.
			lon, lat = unproject(tr, e, n)
			if d := metres(lon, lat, ex.lon, ex.lat); d > 1e-6 {
				t.Errorf("round trip: %.3g m off", d)
			}
		})
	}
}

// TestEPSGHelmert is GN7-2's example of the position vector transformation
// (EPSG 1033/9606), WGS 72 to WGS 84: 55°N 4°E on WGS 72 gives
// X, Y, Z = 3657660.66, 255768.55, 5201382.11 and then 3657660.78,
// 255778.43, 5201387.75, that is 55°00'00.090"N 4°00'00.554"E.
func TestEPSGHelmert(t *testing.T) {
	wgs72 := newEllipsoid(6378135, 298.26)
	x, y, z := wgs72.geocentric(4*degree, 55*degree)
	if math.Abs(x-3657660.66) > 0.005 || math.Abs(y-255768.55) > 0.005 || math.Abs(z-5201382.11) > 0.005 {
		t.Errorf("geocentric: %.3f %.3f %.3f", x, y, z)
	}
	tr := mustParse(t, `GEOGCS["WGS 72",DATUM["WGS_1972",SPHEROID["WGS 72",6378135,298.26],TOWGS84[0,0,4.5,0,0,0.554,0.219]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]]`)
	lon, lat, err := tr.Forward(4, 55)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(lat-dms(55, 0, 0.090)) > 0.0005/3600 || math.Abs(lon-dms(4, 0, 0.554)) > 0.0005/3600 {
		t.Errorf("WGS 72 -> WGS 84: %.9f %.9f, published 55°00'00.090\"N 4°00'00.554\"E", lon, lat)
	}
}

// TestEPSGGeocentric is GN7-2's example of the geographic/geocentric
// conversion (EPSG 9602), reversed: X, Y, Z = 3771793.968, 140253.342,
// 5124304.349 on WGS 84 is 53°48'33.820"N 2°07'46.380"E (h = 73 m).
func TestEPSGGeocentric(t *testing.T) {
	lam, phi := wgs84.geodetic(3771793.968, 140253.342, 5124304.349)
	if math.Abs(phi/degree-dms(53, 48, 33.820)) > 0.0005/3600 || math.Abs(lam/degree-dms(2, 7, 46.380)) > 0.0005/3600 {
		t.Errorf("geodetic: %.9f %.9f", lam/degree, phi/degree)
	}
}
