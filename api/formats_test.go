package api_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"mapcommons/api"
	"mapcommons/internal/gdaltest"
)

// createFrom uploads a body as alice and returns the new dataset's path.
func (ts *testServer) createFrom(t *testing.T, ctype string, body []byte) string {
	t.Helper()
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ctype, body: body})
	must(t, w, http.StatusCreated)
	return strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
}

func extentOf(doc map[string]any) [4]float64 {
	var e [4]float64
	for i, v := range doc["extent"].([]any) {
		e[i] = v.(float64)
	}
	return e
}

// TestDownloadFormats uploads the North Carolina counties and the world's
// cities, downloads each in every format, opens every file with GDAL
// (count and extent), and uploads what it downloaded again: the same
// features come back.
func TestDownloadFormats(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	body, ct := multipartBody(t, ncFiles("dataset"), nil)
	counties := ts.createFrom(t, ct, body)
	body, ct = multipartBody(t, map[string]string{
		"dataset[shp]": realData + "naturalearth_cities.shp", "dataset[dbf]": realData + "naturalearth_cities.dbf",
		"dataset[shx]": realData + "naturalearth_cities.shx", "dataset[prj]": realData + "naturalearth_cities.prj",
		"dataset[cpg]": realData + "naturalearth_cities.cpg"}, nil)
	cities := ts.createFrom(t, ct, body)
	reupload := map[string]string{
		"kml": "application/vnd.google-earth.kml+xml", "kmz": "application/vnd.google-earth.kmz",
		"atom": "application/atom+xml", "zip": "application/zip", "geojson": "application/geo+json", "csv": "text/csv",
	}
	for _, ds := range []struct{ name, path string }{{"Counties", counties}, {"Cities", cities}} {
		doc := datasetDoc(t, ts, ds.path, "")
		count, ext := int64(doc["feature_count"].(float64)), extentOf(doc)
		for _, f := range []string{"csv", "geojson", "kml", "kmz", "atom", "zip", "sqlite", "gpkg"} {
			t.Run(ds.name+"/"+f, func(t *testing.T) {
				w := ts.get(ds.path+"."+f, "")
				data := must(t, w, 200)
				if cd := w.Header().Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") {
					t.Fatalf("Content-Disposition %q", cd)
				}
				path := filepath.Join(t.TempDir(), "download."+f)
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				if f == "zip" {
					zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
					if err != nil {
						t.Fatal(err)
					}
					var names []string
					for _, e := range zr.File {
						names = append(names, e.Name)
					}
					for _, want := range []string{".shp", ".shx", ".dbf", ".prj", ".cpg"} {
						if !strings.Contains(strings.Join(names, " ")+" ", want+" ") {
							t.Fatalf("zip entries %v lack a %s", names, want)
						}
					}
				}
				open := path
				switch f {
				case "zip":
					open = "/vsizip/" + path
				case "kmz":
					open = "/vsizip/" + path + "/doc.kml"
				}
				// GDAL's defaults, as QGIS opens a file dropped on it: the
				// CSV's geometry is found by its column's name alone.
				info := gdaltest.Ogrinfo(t, open)
				for _, l := range info.Layers {
					if l.Geometry == "None" {
						t.Fatalf("GDAL finds no geometry in layer %s\n%s", l.Name, info.Output)
					}
				}
				var n int64
				got := [4]float64{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
				for _, l := range info.Layers {
					n += l.Count
					if l.HasExt {
						got = [4]float64{min(got[0], l.Extent[0]), min(got[1], l.Extent[1]), max(got[2], l.Extent[2]), max(got[3], l.Extent[3])}
					}
				}
				if n != count {
					t.Fatalf("GDAL counts %d features, want %d\n%s", n, count, info.Output)
				}
				if !gdaltest.Near(got, ext, 1e-6) {
					t.Fatalf("GDAL extent %v, want %v\n%s", got, ext, info.Output)
				}
				ctype, ok := reupload[f]
				if !ok {
					return
				}
				again := ts.createFrom(t, ctype, data)
				d2 := datasetDoc(t, ts, again, "")
				if int64(d2["feature_count"].(float64)) != count || !gdaltest.Near(extentOf(d2), ext, 1e-6) {
					t.Fatalf("uploaded again: %v features in %v, want %d in %v", d2["feature_count"], d2["extent"], count, ext)
				}
				if f == "csv" {
					// the same columns: none made of the geometry's copies
					head, _, _ := bytes.Cut(data, []byte("\n"))
					head2, _, _ := bytes.Cut(must(t, ts.get(again+".csv", ""), 200), []byte("\n"))
					if !bytes.Equal(head, head2) {
						t.Fatalf("uploaded again, the CSV's header is %q, was %q", head2, head)
					}
				}
			})
		}
	}
}

// TestProjectedShapefile reprojects the counties to UTM and to North
// Carolina State Plane (US feet) with GDAL, uploads the projected files, and
// finds the original lon/lat coordinates again.
func TestProjectedShapefile(t *testing.T) {
	t.Parallel()
	gdaltest.Need(t)
	ogr2ogr, err := exec.LookPath("ogr2ogr")
	if err != nil {
		t.Skip("ogr2ogr is not installed")
	}
	ts := newServer(t)
	// The counties are on NAD27: GDAL moves them to WGS84 first, so that the
	// comparison is of projections alone (NAD83 and WGS84 agree to a metre).
	src := filepath.Join(t.TempDir(), "nc_wgs84.shp")
	if b, err := exec.Command(ogr2ogr, "-t_srs", "EPSG:4326", src, realData+"nc.shp").CombinedOutput(); err != nil {
		t.Fatalf("ogr2ogr: %v\n%s", err, b)
	}
	files := map[string]string{}
	for _, ext := range []string{"shp", "shx", "dbf", "prj"} {
		files["dataset["+ext+"]"] = strings.TrimSuffix(src, ".shp") + "." + ext
	}
	body, ct := multipartBody(t, files, nil)
	orig := datasetDoc(t, ts, ts.createFrom(t, ct, body), "")
	for _, c := range []struct{ name, srs, crs string }{
		{"UTM17N", "EPSG:26917", "UTM"},
		{"StatePlaneFeet", "EPSG:2264", "North_Carolina"},
		{"Albers", "EPSG:5070", "Albers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "nc_proj.shp")
			if b, err := exec.Command(ogr2ogr, "-t_srs", c.srs, out, src).CombinedOutput(); err != nil {
				t.Fatalf("ogr2ogr: %v\n%s", err, b)
			}
			files := map[string]string{}
			for _, ext := range []string{"shp", "shx", "dbf", "prj"} {
				files["dataset["+ext+"]"] = filepath.Join(dir, "nc_proj."+ext)
			}
			body, ct := multipartBody(t, files, nil)
			doc := datasetDoc(t, ts, ts.createFrom(t, ct, body), "")
			if !gdaltest.Near(extentOf(doc), extentOf(orig), 1e-5) {
				t.Fatalf("extent %v, want %v", doc["extent"], orig["extent"])
			}
			if crs, _ := doc["crs"].(string); !regexp.MustCompile("(?i)" + c.crs).MatchString(crs) {
				t.Fatalf("crs %q does not name %s", crs, c.crs)
			}
		})
	}
}

// zipOf builds a zip file of the given entries.
func zipOf(t *testing.T, entries map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range entries {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestUploadFormats creates datasets from each upload form of the formats
// beyond CSV and shapefiles.
func TestUploadFormats(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	kmlDoc := `<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2"><Document><Folder><name>f</name>
<Placemark><name>Raleigh</name><ExtendedData><Data name="pop"><value>467665</value></Data></ExtendedData><Point><coordinates>-78.64,35.78,0</coordinates></Point></Placemark>
<Placemark><name>Trail</name><ExtendedData><Data name="pop"><value>12</value></Data></ExtendedData><LineString><coordinates>-78,35 -77,36</coordinates></LineString></Placemark>
</Folder></Document></kml>`
	atomDoc := `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:georss="http://www.georss.org/georss"><title>Quakes</title>
<entry><title>M 4.5</title><id>q1</id><updated>2011-03-10T15:33:00Z</updated><georss:point>35.5 -78.5</georss:point></entry>
<entry><title>M 5.1</title><id>q2</id><updated>2011-03-11T15:33:00Z</updated><georss:point>36 -77</georss:point></entry>
</feed>`
	geo := `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"a","n":1},"geometry":{"type":"Point","coordinates":[-78.5,35.5]}},` +
		`{"type":"Feature","properties":{"name":"b","n":2},"geometry":{"type":"Point","coordinates":[-77,36]}}]}`
	shpZip := map[string][]byte{}
	for _, ext := range []string{"shp", "shx", "dbf", "prj"} {
		b, err := os.ReadFile(realData + "nc." + ext)
		if err != nil {
			t.Fatal(err)
		}
		shpZip["counties/nc."+ext] = b
	}
	shpZip["__MACOSX/counties/._nc.shp"] = []byte("junk")
	for _, c := range []struct {
		name, field, file, ctype string
		data                     []byte
		count                    float64
		typ                      string
	}{
		{"KMLPart", "dataset[kml]", "places.kml", "", []byte(kmlDoc), 2, "kml"},
		{"KMLBody", "", "", "application/vnd.google-earth.kml+xml", []byte(kmlDoc), 2, "kml"},
		{"KMZPart", "dataset[kmz]", "places.kmz", "", zipOf(t, map[string][]byte{"doc.kml": []byte(kmlDoc), "files/icon.png": {0x89}}), 2, "kmz"},
		{"AtomPart", "overlay[atom]", "quakes.atom", "", []byte(atomDoc), 2, "atom"},
		{"RSSBody", "", "", "application/atom+xml", []byte(atomDoc), 2, "atom"},
		{"GeoJSONPart", "dataset[geojson]", "pts.geojson", "", []byte(geo), 2, "geojson"},
		{"GeoJSONBody", "", "", "application/geo+json", []byte(geo), 2, "geojson"},
		{"GeoJSONOldTypeBody", "", "", "application/vnd.geo+json", []byte(geo), 2, "geojson"},
		{"ZipPart", "dataset[zip]", "counties.zip", "", zipOf(t, shpZip), 100, "shp"},
		{"ZipBody", "", "", "application/zip", zipOf(t, shpZip), 100, "shp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body, ct := c.data, c.ctype
			if c.field != "" {
				path := filepath.Join(t.TempDir(), c.file)
				os.WriteFile(path, c.data, 0o644)
				body, ct = multipartBody(t, map[string]string{c.field: path}, nil)
			}
			doc := datasetDoc(t, ts, ts.createFrom(t, ct, body), "")
			if doc["feature_count"] != c.count || doc["type"] != c.typ {
				t.Fatalf("dataset %v", doc)
			}
			if c.field != "" && c.typ != "shp" && doc["title"] != strings.TrimSuffix(c.file, filepath.Ext(c.file)) {
				t.Fatalf("title %v", doc["title"])
			}
			if c.name == "ZipBody" && doc["title"] != "nc" {
				t.Fatalf("title %v", doc["title"])
			}
		})
	}
}

// TestUploadKMLDocuments: a KMZ laid out as GDAL and QGIS write it (doc.kml
// linking to a document per layer) gives the features of its layers, and a
// KML document's name is the default title.
func TestUploadKMLDocuments(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	layer := `<kml xmlns="http://www.opengis.net/kml/2.2"><Document><name>ignored: not the first document</name>
<Placemark><name>Raleigh</name><Point><coordinates>-78.64,35.78</coordinates></Point></Placemark>
<Placemark><name>Durham</name><Point><coordinates>-78.9,36</coordinates></Point></Placemark></Document></kml>`
	doc := `<kml xmlns="http://www.opengis.net/kml/2.2"><Document id="root_doc"><name>Cities of NC</name>
<NetworkLink><Link><href>layers/cities.kml</href></Link></NetworkLink></Document></kml>`
	kmz := zipOf(t, map[string][]byte{"doc.kml": []byte(doc), "layers/cities.kml": []byte(layer)})
	d := datasetDoc(t, ts, ts.createFrom(t, "application/vnd.google-earth.kmz", kmz), "")
	if d["feature_count"] != 2.0 || d["title"] != "Cities of NC" {
		t.Fatalf("KMZ with a linked layer: %v %v", d["feature_count"], d["title"])
	}
	path := filepath.Join(t.TempDir(), "cities.kml")
	os.WriteFile(path, []byte(strings.Replace(layer, "ignored: not the first document", "Two cities", 1)), 0o644)
	body, ct := multipartBody(t, map[string]string{"dataset[kml]": path}, nil)
	if d := datasetDoc(t, ts, ts.createFrom(t, ct, body), ""); d["title"] != "Two cities" {
		t.Fatalf("KML title %v", d["title"])
	}
	// A title given wins.
	body, ct = multipartBody(t, map[string]string{"dataset[kml]": path}, map[string]string{"dataset[title]": "Mine"})
	if d := datasetDoc(t, ts, ts.createFrom(t, ct, body), ""); d["title"] != "Mine" {
		t.Fatalf("given title %v", d["title"])
	}
}

// TestBadUploads sends broken files of every kind: each is a clear 400 or
// 413, and nothing is created or left behind.
func TestBadUploads(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.MaxUpload = 256 << 10 })
	laughs := `<?xml version="1.0"?><!DOCTYPE kml [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>` +
		`<kml><Placemark><name>&c;</name><Point><coordinates>1,2</coordinates></Point></Placemark></kml>`
	bomb := zipOf(t, map[string][]byte{"big.csv": append([]byte("lat,lon,x\n"), bytes.Repeat([]byte("1,2,0000000000000000000000000000000\n"), 200000)...)})
	two := map[string][]byte{}
	for _, stem := range []string{"a/nc", "b/nc"} {
		for _, ext := range []string{"shp", "dbf"} {
			b, _ := os.ReadFile(realData + "nc." + ext)
			two[stem+"."+ext] = b
		}
	}
	for _, c := range []struct {
		name, ctype string
		body        []byte
		status      int
		want        string
	}{
		{"KMLBillionLaughs", "application/vnd.google-earth.kml+xml", []byte(laughs), 400, "entit"},
		{"KMLTruncated", "application/vnd.google-earth.kml+xml", []byte(`<kml><Placemark><Point><coordinates>1,2</coordinates></Point>`), 400, "kml"},
		{"KMLNotXML", "application/vnd.google-earth.kml+xml", []byte("\x00\x01garbage"), 400, "kml"},
		{"KMLEncoding", "application/vnd.google-earth.kml+xml", []byte(`<?xml version="1.0" encoding="x-klingon"?><kml/>`), 400, "klingon"},
		{"AtomLatitude", "application/atom+xml", []byte(`<feed xmlns="http://www.w3.org/2005/Atom" xmlns:georss="http://www.georss.org/georss"><entry><title>x</title><georss:point>91 0</georss:point></entry></feed>`), 400, "91"},
		{"AtomTruncated", "application/atom+xml", []byte(`<feed xmlns="http://www.w3.org/2005/Atom"><entry><title>x</tit`), 400, "atom"},
		{"GeoJSONTruncated", "application/geo+json", []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,`), 400, ""},
		{"GeoJSONLongitude", "application/geo+json", []byte(`{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[181,0]}}`), 400, "181"},
		{"ZipNotAZip", "application/zip", []byte("PK\x03\x04 not really"), 400, "zip"},
		{"ZipBomb", "application/zip", bomb, 413, ""},
		{"ZipEmpty", "application/zip", zipOf(t, map[string][]byte{"readme.txt": []byte("hi")}), 400, "no shapefile"},
		{"ZipTwoShapefiles", "application/zip", zipOf(t, two), 400, "2 shapefiles"},
		{"ZipClimbs", "application/zip", zipOf(t, map[string][]byte{"../evil.csv": []byte("lat,lon\n1,2\n")}), 400, "unsafe"},
		{"KMZWithoutKML", "application/vnd.google-earth.kmz", zipOf(t, map[string][]byte{"a.txt": []byte("x")}), 400, "no .kml"},
		{"KMLNoPlacemarks", "application/vnd.google-earth.kml+xml", []byte(`<kml><Document><name>Nothing</name></Document></kml>`), 400, "no Placemarks"},
		{"KMLOnlyLinks", "application/vnd.google-earth.kml+xml", []byte(`<kml><Document><NetworkLink><Link><href>http://example.com/a.kml</href></Link></NetworkLink></Document></kml>`), 400, "not fetched"},
		{"KMZLinksOutside", "application/vnd.google-earth.kmz", zipOf(t, map[string][]byte{"doc.kml": []byte(`<kml><Document><NetworkLink><Link><href>../a.kml</href></Link></NetworkLink></Document></kml>`)}), 400, "../a.kml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: c.ctype, body: c.body})
			code := map[int]string{400: "invalid", 413: "too_large"}[c.status]
			errorOf(t, w, c.status, code, c.want)
		})
	}
	t.Run("NothingLeftBehind", func(t *testing.T) {
		errorOf(t, ts.get("/datasets/1.json", ""), 404, "not_found", "")
		left, _ := os.ReadDir(ts.tmp)
		if len(left) != 0 {
			t.Fatalf("temporary files left: %v", left)
		}
	})
}

// TestCSVDownloadOpensInGDAL: a dataset without attributes downloads as a
// CSV GDAL opens with its defaults (no CSV of one column), geometry found.
func TestCSVDownloadOpensInGDAL(t *testing.T) {
	t.Parallel()
	gdaltest.Need(t)
	ts := newServer(t)
	for name, body := range map[string]string{
		"lines":  `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}},{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[[5,6],[7,8]]}}]}`,
		"points": `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[1,2]}},{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[7,8]}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			id := ts.createFrom(t, "application/geo+json", []byte(body))
			path := filepath.Join(t.TempDir(), "download.csv")
			if err := os.WriteFile(path, must(t, ts.get(id+".csv", ""), 200), 0o644); err != nil {
				t.Fatal(err)
			}
			info := gdaltest.Ogrinfo(t, path)
			if len(info.Layers) != 1 || info.Layers[0].Count != 2 || info.Layers[0].Geometry == "None" ||
				!gdaltest.Near(info.Layers[0].Extent, [4]float64{1, 2, 7, 8}, 1e-9) {
				t.Fatalf("GDAL reads\n%s", info.Output)
			}
		})
	}
}

// TestCSVDownloadOpensInQGIS: QGIS opens the CSV downloads of polygons,
// of points and of a dataset without attributes as it opens a file added
// or dropped on it, and finds their geometry by itself: every feature,
// within the dataset's extent.
func TestCSVDownloadOpensInQGIS(t *testing.T) {
	t.Parallel()
	py := qgisPython(t)
	ts := newServer(t)
	body, ct := multipartBody(t, ncFiles("dataset"), nil)
	dir := t.TempDir()
	var files []string
	var want []map[string]any
	for _, id := range []string{
		ts.createFrom(t, ct, body),
		ts.createCSV("?title=Pts", "name,lat,lon\na,1.5,2.25\nc,-3,4\n"),
		ts.createFrom(t, "application/geo+json", []byte(`{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}}`)),
	} {
		p := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(id, "/"), "/", "_")+".csv")
		if err := os.WriteFile(p, must(t, ts.get(id+".csv", ""), 200), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
		want = append(want, datasetDoc(t, ts, id, ""))
	}
	var got []struct {
		Valid, Geometry bool
		Count           int
		Extent          []float64
	}
	out := runQGIS(t, py, append([]string{"testdata/csv_qgis.py"}, files...)...)
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(files) {
		t.Fatalf("qgis said: %s", out)
	}
	for i, g := range got {
		if !g.Valid || !g.Geometry || float64(g.Count) != want[i]["feature_count"] ||
			!gdaltest.Near([4]float64(g.Extent), extentOf(want[i]), 1e-6) {
			t.Errorf("%s: qgis %+v, dataset %v features in %v", filepath.Base(files[i]), g, want[i]["feature_count"], want[i]["extent"])
		}
	}
}
