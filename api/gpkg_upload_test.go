package api_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mapcommons/internal/gdaltest"
)

// TestUploadGeoPackage: a GeoPackage mapcommons wrote uploads back the
// same, as a part, a body, and in a zip; GDAL's, projected, is reprojected;
// layer picks the table; broken files are 400s that leave nothing.
func TestUploadGeoPackage(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	body, ct := multipartBody(t, ncFiles("dataset"), nil)
	nc := ts.createFrom(t, ct, body)
	want := datasetDoc(t, ts, nc, "")
	gp := must(t, ts.get(nc+".gpkg", ""), 200)
	if !bytes.HasPrefix(gp, []byte("SQLite format 3\x00")) {
		t.Fatalf("not a GeoPackage download: %.40q", gp)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "counties.gpkg")
	os.WriteFile(file, gp, 0o644)
	part, pct := multipartBody(t, map[string]string{"dataset[gpkg]": file}, nil)
	for name, c := range map[string]struct {
		ctype string
		body  []byte
	}{
		"part": {pct, part},
		"body": {"application/geopackage+sqlite3", gp},
		"zip":  {"application/zip", zipOf(t, map[string][]byte{"data/counties.gpkg": gp})},
	} {
		id := ts.createFrom(t, c.ctype, c.body)
		d := datasetDoc(t, ts, id, "")
		if d["feature_count"] != 100.0 || d["type"] != "gpkg" || !near(extentOf(d), extentOf(want), 1e-9) {
			t.Errorf("%s: %v features, type %v, extent %v (want %v)", name, d["feature_count"], d["type"], d["extent"], want["extent"])
		}
		if name == "part" && d["title"] != "counties" {
			t.Errorf("title %v", d["title"])
		}
		page := must(t, ts.get(id+"/features.json?limit=1", ""), 200)
		if !bytes.Contains(page, []byte(`"NAME":"Ashe"`)) || !bytes.Contains(page, []byte(`"BIR74":1091`)) {
			t.Errorf("%s: first feature %s", name, page)
		}
	}
	for _, c := range []struct {
		name, ctype, path string
		body              []byte
		want              string
	}{
		{"junk", "application/geopackage+sqlite3", "/datasets.json", []byte("SQLite format 3\x00 but not really, just text after it ........................................................................................"), "GeoPackage"},
		{"layer", "application/geopackage+sqlite3", "/datasets.json?layer=nope", gp, "no such feature table"},
	} {
		w := ts.do(req{method: "POST", path: c.path, user: "alice", ctype: c.ctype, body: c.body})
		errorOf(t, w, 400, "invalid", c.want)
	}
	if left, _ := os.ReadDir(ts.tmp); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// Written by GDAL, projected to UTM 17N, with two layers.
	gdaltest.Need(t)
	utm := filepath.Join(dir, "two.gpkg")
	gdaltest.Ogr2ogr(t, "-f", "GPKG", "-t_srs", "EPSG:32617", "-nln", "a_counties", utm, "../testdata/real/nc.shp")
	gdaltest.Ogr2ogr(t, "-update", "-nln", "b_cities", utm, "../testdata/real/naturalearth_cities.shp")
	b, _ := os.ReadFile(utm)
	d := datasetDoc(t, ts, ts.createFrom(t, "application/geopackage+sqlite3", b), "")
	if d["feature_count"] != 100.0 || !near(extentOf(d), extentOf(want), 1e-3) { // NAD27 to WGS 84: tens of metres
		t.Errorf("UTM: %v features, extent %v, want %v", d["feature_count"], d["extent"], want["extent"])
	}
	w := ts.do(req{method: "POST", path: "/datasets.json?layer=b_cities", user: "alice", ctype: "application/geopackage+sqlite3", body: b})
	must(t, w, http.StatusCreated)
	if d := datasetDoc(t, ts, ts.createFrom(t, "application/geopackage+sqlite3", b), ""); d["feature_count"] != 100.0 {
		t.Errorf("default layer: %v", d["feature_count"])
	}
	loc := w.Header().Get("Location")
	if d := decode[map[string]any](t, must(t, ts.get(loc[len(base):], ""), 200)); d["feature_count"] != 243.0 {
		t.Errorf("layer b_cities: %v features", d["feature_count"])
	}
}

func near(a, b [4]float64, tol float64) bool { return gdaltest.Near(a, b, tol) }

// TestUploadLonLatOvershoot: the OGC's CQL2 test GeoPackage, whose
// countries reach 180.00000000000006 on the antimeridian, uploads with
// those coordinates clamped to 180; so do GeoJSON, KML and CSV with such
// an overshoot, while one of a thousandth of a degree is still refused.
func TestUploadLonLatOvershoot(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	gp, err := os.ReadFile("../testdata/ogc/ne110m4cql2.gpkg")
	if err != nil {
		t.Fatal(err)
	}
	w := ts.do(req{method: "POST", path: "/datasets.json?layer=ne_110m_admin_0_countries", user: "alice", ctype: "application/geopackage+sqlite3", body: gp})
	must(t, w, http.StatusCreated)
	d := decode[map[string]any](t, must(t, ts.get(w.Header().Get("Location")[len(base):], ""), 200))
	if e := extentOf(d); d["feature_count"] != 177.0 || e[0] != -180 || e[2] != 180 {
		t.Errorf("countries: %v features, extent %v", d["feature_count"], d["extent"])
	}

	const over = "180.00000000000006"
	for _, c := range []struct {
		name, ctype, body string
	}{
		{"geojson", "application/geo+json", `{"type":"Feature","properties":{"n":1},"geometry":{"type":"LineString","coordinates":[[170,10],[` + over + `,10.5]]}}`},
		{"kml", "application/vnd.google-earth.kml+xml", `<kml xmlns="http://www.opengis.net/kml/2.2"><Placemark><name>a</name><LineString><coordinates>170,10 ` + over + `,10.5</coordinates></LineString></Placemark></kml>`},
		{"csv", "text/csv", "n,wkt\n1,\"LINESTRING (170 10, " + over + " 10.5)\"\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := ts.createFrom(t, c.ctype, []byte(c.body))
			if e := extentOf(datasetDoc(t, ts, id, "")); e != [4]float64{170, 10, 180, 10.5} {
				t.Errorf("extent %v", e)
			}
			far := strings.Replace(c.body, over, "180.001", 1)
			errorOf(t, ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: c.ctype, body: []byte(far)}), 400, "invalid", "")
		})
	}
}
