package shapefile

import (
	"strings"
	"testing"
)

const prjUTM = `PROJCS["WGS_1984_UTM_Zone_33N",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["False_Easting",500000.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",15.0],PARAMETER["Scale_Factor",0.9996],PARAMETER["Latitude_Of_Origin",0.0],UNIT["Meter",1.0]]`

// The WKT2 form GDAL prints for EPSG:4267.
const prjWKT2NAD27 = `GEOGCRS["NAD27",
    DATUM["North American Datum 1927",
        ELLIPSOID["Clarke 1866",6378206.4,294.978698213898,
            LENGTHUNIT["metre",1]]],
    PRIMEM["Greenwich",0,
        ANGLEUNIT["degree",0.0174532925199433]],
    CS[ellipsoidal,2],
        AXIS["latitude",north,
            ORDER[1],
            ANGLEUNIT["degree",0.0174532925199433]],
        AXIS["longitude",east,
            ORDER[2],
            ANGLEUNIT["degree",0.0174532925199433]],
    ID["EPSG",4267]]`

func TestClassifyPRJ(t *testing.T) {
	for _, tc := range []struct {
		name, prj  string
		want       string
		geographic bool
	}{
		{"OK/Empty", "", "", true},
		{"OK/Blank", " \r\n", "", true},
		{"OK/ESRIWGS84", `GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]`, "GCS_WGS_1984", true},
		{"OK/ESRINAD27", `GEOGCS["GCS_North_American_1927",DATUM["D_North_American_1927",SPHEROID["Clarke_1866",6378206.4,294.9786982]],PRIMEM["Greenwich",0],UNIT["Degree",0.017453292519943295]]`, "GCS_North_American_1927", true},
		{"OK/ESRINAD83", `GEOGCS["GCS_North_American_1983",DATUM["D_North_American_1983",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]` + "\n", "GCS_North_American_1983", true},
		{"OK/ESRIETRS89", `GEOGCS["GCS_ETRS_1989",DATUM["D_ETRS_1989",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]`, "GCS_ETRS_1989", true},
		{"OK/ESRIGRS80", `GEOGCS["GCS_GRS_1980",DATUM["D_GRS_1980",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]`, "GCS_GRS_1980", true},
		{"OK/OGCWGS84", `GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AXIS["Latitude",NORTH],AXIS["Longitude",EAST],AUTHORITY["EPSG","4326"]]`, "WGS 84", true},
		{"OK/OGCNAD83", `GEOGCS["NAD83",DATUM["North_American_Datum_1983",SPHEROID["GRS 1980",6378137,298.257222101]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]]`, "NAD83", true},
		{"OK/OGCETRS89", `GEOGCS["ETRS89",DATUM["European_Terrestrial_Reference_System_1989",SPHEROID["GRS 1980",6378137,298.257222101]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]]`, "ETRS89", true},
		{"OK/OtherDatum", `GEOGCS["GCS_Tokyo",DATUM["D_Tokyo",SPHEROID["Bessel_1841",6377397.155,299.1528128]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]`, "GCS_Tokyo", true},
		{"OK/UnitByFactor", `GEOGCS["x",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],UNIT["deg",0.017453292519943295]]`, "x", true},
		{"OK/NoUnit", `GEOGCS["x",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]]]`, "x", true},
		{"OK/Parentheses", `GEOGCS("GCS_WGS_1984",DATUM("D_WGS_1984",SPHEROID("WGS_1984",6378137.0,298.257223563)),PRIMEM("Greenwich",0.0),UNIT("Degree",0.0174532925199433))`, "GCS_WGS_1984", true},
		{"OK/EscapedQuote", `GEOGCS["a ""b""",UNIT["degree",0.0174532925199433]]`, `a "b"`, true},
		{"OK/LowerCase", `geogcs["x",unit["degree",0.0174532925199433]]`, "x", true},
		{"OK/BOM", "\uFEFF" + `GEOGCS["x"]`, "x", true},
		{"OK/WKT2", prjWKT2NAD27, "NAD27", true},
		{"OK/WKT2Geodetic", `GEODCRS["WGS 84",DATUM["World Geodetic System 1984",ELLIPSOID["WGS 84",6378137,298.257223563]],CS[ellipsoidal,2],AXIS["longitude",east],AXIS["latitude",north],ANGLEUNIT["degree",0.0174532925199433]]`, "WGS 84", true},
		{"OK/ESRIProjected", prjUTM, "WGS_1984_UTM_Zone_33N", false},
		{"OK/OGCProjected", `PROJCS["NAD83 / UTM zone 17N",GEOGCS["NAD83",DATUM["North_American_Datum_1983",SPHEROID["GRS 1980",6378137,298.257222101]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["central_meridian",-81],UNIT["metre",1],AXIS["Easting",EAST],AXIS["Northing",NORTH]]`, "NAD83 / UTM zone 17N", false},
		{"OK/WKT2Projected", `PROJCRS["WGS 84 / Pseudo-Mercator",BASEGEOGCRS["WGS 84",DATUM["World Geodetic System 1984",ELLIPSOID["WGS 84",6378137,298.257223563]]],CONVERSION["Popular Visualisation Pseudo-Mercator",METHOD["Popular Visualisation Pseudo Mercator"]],CS[Cartesian,2],AXIS["easting (X)",east],AXIS["northing (Y)",north],LENGTHUNIT["metre",1]]`, "WGS 84 / Pseudo-Mercator", false},
		{"OK/CompoundGeographic", `COMPD_CS["WGS 84 + EGM96 height",GEOGCS["WGS 84",UNIT["degree",0.0174532925199433]],VERT_CS["EGM96 height",VERT_DATUM["EGM96 geoid",2005],UNIT["metre",1]]]`, "WGS 84", true},
		{"OK/CompoundProjected", `COMPOUNDCRS["x",PROJCRS["UTM 33N",BASEGEOGCRS["WGS 84"]],VERTCRS["h"]]`, "UTM 33N", false},
		{"OK/Bound", `BOUNDCRS[SOURCECRS[GEOGCRS["NAD27",ANGLEUNIT["degree",0.0174532925199433]]],TARGETCRS[GEOGCRS["WGS 84"]],ABRIDGEDTRANSFORMATION["t",METHOD["m"]]]`, "NAD27", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, geographic, err := ClassifyPRJ(tc.prj)
			if err != nil {
				t.Fatal(err)
			}
			if name != tc.want || geographic != tc.geographic {
				t.Errorf("got (%q, %v), want (%q, %v)", name, geographic, tc.want, tc.geographic)
			}
		})
	}
	for _, tc := range []struct {
		name, prj string
		want      []string
	}{
		{"ErrProj4", "+proj=longlat +datum=WGS84 +no_defs", []string{".prj", "WKT"}},
		{"ErrEPSGCode", "EPSG:4326", []string{".prj", "WKT"}},
		{"ErrUnclosed", `GEOGCS["x",UNIT["degree",1]`, []string{".prj", "not closed"}},
		{"ErrMismatchedBrackets", `GEOGCS["x",UNIT["degree",1))`, []string{".prj"}},
		{"ErrUnterminatedString", `GEOGCS["x`, []string{".prj", "unterminated"}},
		{"ErrTrailing", `GEOGCS["x"] GEOGCS["y"]`, []string{".prj", "after the end"}},
		{"ErrBadNumber", `GEOGCS["x",UNIT["degree",1.2.3]]`, []string{".prj", "number"}},
		{"ErrNoName", `GEOGCS[]`, []string{".prj", "no name"}},
		{"ErrGrads", `GEOGCS["NTF (Paris)",DATUM["Nouvelle_Triangulation_Francaise_Paris",SPHEROID["Clarke 1880 (IGN)",6378249.2,293.4660212936269]],PRIMEM["Paris",2.5969213],UNIT["grad",0.01570796326794897]]`, []string{`"NTF (Paris)"`, `"grad"`, "degrees"}},
		{"ErrGeocentric", `GEOCCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["metre",1]]`, []string{"GEOCCS", `"WGS 84"`, "not supported"}},
		{"ErrGeodeticCartesian", `GEODCRS["WGS 84",CS[Cartesian,3]]`, []string{"cartesian", `"WGS 84"`}},
		{"ErrLocal", `LOCAL_CS["site"]`, []string{"LOCAL_CS", "not supported"}},
		{"ErrDeep", strings.Repeat("A[", 100) + strings.Repeat("]", 100), []string{".prj", "deeply"}},
		{"ErrTooLong", `GEOGCS["` + strings.Repeat("x", 70000) + `"]`, []string{".prj", "too long"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ClassifyPRJ(tc.prj)
			wantInvalid(t, err, tc.want...)
		})
	}
}

func TestOpenPRJ(t *testing.T) {
	f := (&tFile{typ: shapePoint, shapes: []tShape{pt(shapePoint, 1, 2)}}).withIDs()
	t.Run("OK/Geographic", func(t *testing.T) {
		r, err := open(f, Options{PRJ: prjWKT2NAD27})
		if err != nil {
			t.Fatal(err)
		}
		if r.CRS() != "NAD27" {
			t.Errorf("CRS = %q, want NAD27", r.CRS())
		}
	})
	t.Run("OK/None", func(t *testing.T) {
		r, err := open(f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.CRS() != "" {
			t.Errorf("CRS = %q, want none", r.CRS())
		}
	})
	t.Run("ErrProjected", func(t *testing.T) {
		_, err := open(f, Options{PRJ: prjUTM})
		wantInvalid(t, err, `projected coordinate system "WGS_1984_UTM_Zone_33N" is not supported yet (reprojection comes later); upload data in geographic lon/lat`)
	})
	t.Run("ErrGarbage", func(t *testing.T) {
		_, err := open(f, Options{PRJ: "not wkt"})
		wantInvalid(t, err, ".prj")
	})
}
