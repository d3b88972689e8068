package api_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"testing"

	"mapcommons/api"
	"mapcommons/format/wkb"
)

// sculptures is a CSV like the Ruby client's test/data/sculptures.csv:
// header name,latitude,longitude and 20 rows.
func sculptures() string {
	var b strings.Builder
	b.WriteString("name,latitude,longitude\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "Sculpture %d,%.4f,%.4f\n", i+1, 38.88+float64(i)*0.001, -77.02-float64(i)*0.002)
	}
	return b.String()
}

func datasetDoc(t *testing.T, ts *testServer, path, user string) map[string]any {
	t.Helper()
	return decode[map[string]any](t, must(t, ts.get(path+".json", user), 200))
}

func TestDatasetCreateCSVBody(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	w := ts.do(req{method: "POST", path: "/datasets.json?title=garden%20sculptures&citation_url=http%3A%2F%2Fexample.com%2Fc&metadata_url=http%3A%2F%2Fexample.com%2Fm",
		user: "alice", ctype: "text/csv", body: []byte(sculptures())})
	must(t, w, http.StatusCreated)
	loc := w.Header().Get("Location")
	if !strings.HasPrefix(loc, base+"/datasets/") || !strings.HasSuffix(loc, ".json") {
		t.Fatalf("Location %q", loc)
	}
	doc := datasetDoc(t, ts, strings.TrimSuffix(strings.TrimPrefix(loc, base), ".json"), "")
	if doc["title"] != "garden sculptures" || doc["feature_count"] != 20.0 || doc["state"] != "complete" ||
		doc["citation_url"] != "http://example.com/c" || doc["metadata_url"] != "http://example.com/m" ||
		doc["contributor"] != "alice" || doc["type"] != "csv" || doc["data_type"] != "Dataset" {
		t.Fatalf("dataset %v", doc)
	}
	if _, isNum := doc["id"].(float64); !isNum {
		t.Fatalf("id %v is not a number", doc["id"])
	}
	// Without a title the dataset is Untitled.
	path := ts.createCSV("", "lat,lon\n1,2\n")
	if got := datasetDoc(t, ts, path, "")["title"]; got != "Untitled" {
		t.Fatalf("title %v", got)
	}
}

func TestDatasetCreateShapefile(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	check := func(t *testing.T, w interface {
		Header() http.Header
	}, wantTitle string) map[string]any {
		t.Helper()
		loc := w.Header().Get("Location")
		doc := datasetDoc(t, ts, strings.TrimSuffix(strings.TrimPrefix(loc, base), ".json"), "")
		if doc["title"] != wantTitle || doc["feature_count"] != 100.0 || doc["type"] != "shp" {
			t.Fatalf("dataset %v", doc)
		}
		ext := doc["extent"].([]any)
		want := []float64{-84.32385, 33.88199, -75.45698, 36.58965} // ogrinfo -so nc.shp
		for i := range want {
			if math.Abs(ext[i].(float64)-want[i]) > 1e-5 {
				t.Fatalf("extent %v, want %v", ext, want)
			}
		}
		if fmt.Sprint(doc["geometry_types"]) != "[area]" {
			t.Fatalf("geometry_types %v", doc["geometry_types"])
		}
		return doc
	}
	t.Run("OKStandardMultipart", func(t *testing.T) {
		body, ct := multipartBody(t, ncFiles("dataset"), map[string]string{"description": "NC counties", "tags": "nc, counties", "data_type": "ignored"})
		w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
		must(t, w, 201)
		doc := check(t, w, "nc")
		if doc["description"] != "NC counties" || doc["tags"] != "nc, counties" {
			t.Fatalf("metadata %v", doc)
		}
	})
	t.Run("OKRubyCommaHeader", func(t *testing.T) {
		var b bytes.Buffer
		for _, ext := range []string{"shp", "dbf", "shx"} {
			data, _ := os.ReadFile(realData + "nc." + ext)
			fmt.Fprintf(&b, "--89d6e3836995\r\nContent-Disposition: form-data; name=\"dataset[%s]\"; filename=\"nc.%s\"\r\nContent-Type: application/octet-stream\r\n\r\n", ext, ext)
			b.Write(data)
			b.WriteString("\r\n")
		}
		b.WriteString("--89d6e3836995--\r\n")
		w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: "multipart/form-data, boundary=89d6e3836995", body: b.Bytes()})
		must(t, w, 201)
		check(t, w, "nc")
	})
	t.Run("OKDotNetUnterminated", func(t *testing.T) {
		const boundary = "----------------------------8d0c1b2a3f4e5d6"
		var b bytes.Buffer
		for _, ext := range []string{"shp", "shx", "dbf"} {
			data, _ := os.ReadFile(realData + "nc." + ext)
			fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"overlay[%s]\" ; filename=\"nc.%s\"; \r\nContent-Type: application/octet-stream\r\n\r\n", boundary, ext, ext)
			b.Write(data)
			b.WriteString("\r\n")
		}
		fmt.Fprintf(&b, "\r\n--%s\r\n", boundary) // no closing "--", and an extra CRLF on the last part
		w := ts.do(req{method: "POST", path: "/datasets.json?tags=a%20b%20c&name=Counties", user: "alice",
			ctype: "multipart/form-data; boundary=" + boundary, body: b.Bytes()})
		must(t, w, 201)
		doc := check(t, w, "Counties")
		if doc["tags"] != "a, b, c" {
			t.Fatalf("tags %v", doc["tags"])
		}
	})
	t.Run("OKCSVPart", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(dir+"/places.csv", []byte(sculptures()), 0o644)
		body, ct := multipartBody(t, map[string]string{"dataset[csv]": dir + "/places.csv"}, nil)
		w := ts.do(req{method: "POST", path: "/overlays.xml", user: "alice", ctype: ct, body: body})
		must(t, w, 201)
		doc := datasetDoc(t, ts, strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json"), "")
		if doc["title"] != "places" || doc["feature_count"] != 20.0 {
			t.Fatalf("dataset %v", doc)
		}
	})
}

func TestDatasetCreateErrors(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.MaxUpload = 200 << 10 })
	files := ncFiles("dataset")
	delete(files, "dataset[dbf]")
	missing, missingCT := multipartBody(t, files, nil)
	dir := t.TempDir()
	os.WriteFile(dir+"/x.foo", []byte("hello"), 0o644)
	os.WriteFile(dir+"/x.kml", []byte("<kml><Placemark><Point><coordinates>200,10</coordinates></Point></Placemark></kml>"), 0o644)
	os.WriteFile(dir+"/x.prj", []byte(`PROJCS["ETRS_1989_LAEA",GEOGCS["GCS_ETRS_1989",DATUM["D_ETRS_1989",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Lambert_Azimuthal_Equal_Area"],PARAMETER["False_Easting",4321000.0],PARAMETER["False_Northing",3210000.0],PARAMETER["Central_Meridian",10.0],PARAMETER["Latitude_Of_Origin",52.0],UNIT["Meter",1.0]]`), 0o644)
	foo, fooCT := multipartBody(t, map[string]string{"dataset[foo]": dir + "/x.foo"}, nil)
	kml, kmlCT := multipartBody(t, map[string]string{"dataset[kml]": dir + "/x.kml"}, nil)
	projected := ncFiles("dataset")
	projected["dataset[prj]"] = dir + "/x.prj"
	proj, projCT := multipartBody(t, projected, nil)
	big := bytes.Repeat([]byte("1,2\n"), 100<<10)
	cases := []struct {
		name   string
		r      req
		status int
		code   string
		want   string
	}{
		{"ErrAnonymous", req{method: "POST", path: "/datasets.json", ctype: "text/csv", body: []byte(sculptures())}, 401, "unauthorized", "authentication"},
		{"ErrMissingDBF", req{method: "POST", path: "/datasets.json", user: "alice", ctype: missingCT, body: missing}, 400, "invalid", "dataset[dbf]"},
		{"ErrUnknownPart", req{method: "POST", path: "/datasets.json", user: "alice", ctype: fooCT, body: foo}, 415, "unsupported_type", "foo"},
		{"ErrKMLCoordinates", req{method: "POST", path: "/datasets.json", user: "alice", ctype: kmlCT, body: kml}, 400, "invalid", "200"},
		{"ErrNoData", req{method: "POST", path: "/datasets.json?title=x", user: "alice"}, 400, "invalid", "no data"},
		{"ErrBodyType", req{method: "POST", path: "/datasets.json", user: "alice", ctype: "application/pdf", body: []byte("%PDF")}, 415, "unsupported_type", "application/pdf"},
		{"ErrTooLarge", req{method: "POST", path: "/datasets.json", user: "alice", ctype: "text/csv", body: append([]byte("lat,lon\n"), big...)}, 413, "too_large", ""},
		{"ErrProjectionUnsupported", req{method: "POST", path: "/datasets.json", user: "alice", ctype: projCT, body: proj}, 400, "invalid", "ETRS_1989_LAEA"},
		{"ErrBadRow", req{method: "POST", path: "/datasets.json", user: "alice", ctype: "text/csv", body: []byte("name,lat,lon\na,1,2\nb,north,3\n")}, 400, "invalid", "row 2"},
		{"ErrNoCoordinates", req{method: "POST", path: "/datasets.json", user: "alice", ctype: "text/csv", body: []byte("name,value\na,1\n")}, 400, "invalid", "no coordinate columns"},
		{"ErrMalformedJSON", req{method: "POST", path: "/datasets.json", user: "alice", ctype: "application/json", body: []byte(`{"title": "x",`)}, 400, "invalid", "JSON"},
		{"ErrURLScheme", req{method: "POST", path: "/datasets.json?url=ftp%3A%2F%2Fexample.com%2Fa.csv", user: "alice", ctype: "application/xml"}, 400, "invalid", "url: only http"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errorOf(t, ts.do(c.r), c.status, c.code, c.want)
		})
	}
	t.Run("NothingLeftBehind", func(t *testing.T) {
		// None of the failures above created a dataset or left an upload behind.
		errorOf(t, ts.get("/datasets/1.json", ""), 404, "not_found", "")
		left, _ := os.ReadDir(ts.tmp)
		if len(left) != 0 {
			t.Fatalf("temporary files left: %v", left)
		}
	})
}

func TestDatasetJSON(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createCSV("?title=Wells&tags=water%20wells&description=Test%20wells",
		"name,depth,rate,latitude,longitude\nalpha,10,1.5,35.1,-80.2\nbeta,20,2.5,35.2,-80.1\ngamma,,3.5,35.3,-80.0\n")
	t.Run("Golden", func(t *testing.T) {
		golden(t, "dataset.json", must(t, ts.get(path+".json?include_attributes=1", ""), 200))
	})
	t.Run("IncludeFeatures", func(t *testing.T) {
		doc := datasetDoc(t, ts, path, "")
		if doc["features"] != nil || doc["data_attributes"] != nil {
			t.Fatalf("features or attributes without asking: %v", doc)
		}
		doc = decode[map[string]any](t, must(t, ts.get(path+".json?include_features=1", ""), 200))
		feats := doc["features"].([]any)
		first := feats[0].(map[string]any)
		if len(feats) != 3 || first["name"] != "alpha" || first["depth"] != 10.0 || first["geometry"] != nil {
			t.Fatalf("features %v", feats)
		}
		if _, has := first["geometry"]; has {
			t.Fatal("geometry without include_geometry")
		}
		doc = decode[map[string]any](t, must(t, ts.get(path+".json?include_features=1&include_geometry=1", ""), 200))
		g := doc["features"].([]any)[1].(map[string]any)["geometry"].(map[string]any)
		if g["type"] != "Point" || fmt.Sprint(g["coordinates"]) != "[-80.1 35.2]" {
			t.Fatalf("geometry %v", g)
		}
		doc = decode[map[string]any](t, must(t, ts.get(path+".json?include_features=1&include_geometry=1&hex_geometry=1", ""), 200))
		if h := doc["features"].([]any)[0].(map[string]any)["geometry"]; h != "0101000000CDCCCCCCCC0C54C0CDCCCCCCCC8C4140" {
			t.Fatalf("hex geometry %v", h)
		}
		// hex_geometry alone asks for the geometry too.
		doc = decode[map[string]any](t, must(t, ts.get(path+".json?include_features=1&hex_geometry=1", ""), 200))
		if h := doc["features"].([]any)[0].(map[string]any)["geometry"]; h != "0101000000CDCCCCCCCC0C54C0CDCCCCCCCC8C4140" {
			t.Fatalf("hex_geometry=1 alone: geometry %v", h)
		}
		errorOf(t, ts.get(path+".json?include_features=maybe", ""), 400, "invalid", "include_features")
	})
}

func TestDatasetUpdate(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createCSV("?title=Original", "lat,lon\n1,2\n")
	updates := []struct {
		name  string
		r     req
		field string
		want  string
	}{
		{"QueryString", req{method: "PUT", path: path + ".json?title=changing%20title"}, "title", "changing title"},
		{"RubyOverlayQuery", req{method: "PUT", path: path + ".json?overlay%5Btitle%5D=Ruby%20title&overlay%5Bdescription%5D=d", ctype: "application/xml; charset=utf-8"}, "title", "Ruby title"},
		{"DotNetTags", req{method: "PUT", path: path + ".json?tags=a%20b%20c", ctype: "text/plain"}, "tags", "a, b, c"},
		{"PythonForm", req{method: "PUT", path: path + ".json?include_features=0", ctype: form,
			body: []byte("description=paging+test&data_type=Dataset&author=&feature_count=75&source=&state=complete&link=x&published=2011-03-05T14%3A07%3A21-05%3A00&contributor=admin&title=Renamed&tags=")}, "title", "Renamed"},
		{"JSON", req{method: "PUT", path: path + ".json", ctype: "application/json", body: []byte(`{"dataset":{"contact_name":"Jo"}}`)}, "contact_name", "Jo"},
	}
	for _, c := range updates {
		t.Run("OK"+c.name, func(t *testing.T) {
			c.r.user = "alice"
			w := ts.do(c.r)
			if body := must(t, w, 201); len(body) != 0 {
				t.Fatalf("update answered a body: %s", body)
			}
			if w.Header().Get("Status") != "201 Created" {
				t.Fatalf("Status header %q", w.Header().Get("Status"))
			}
			if got := datasetDoc(t, ts, path, "")[c.field]; got != c.want {
				t.Fatalf("%s = %v, want %q", c.field, got, c.want)
			}
		})
	}
	if d := datasetDoc(t, ts, path, ""); d["description"] != "paging test" || d["feature_count"] != 1.0 {
		t.Fatalf("read-only fields changed or description lost: %v", d)
	}
	t.Run("ErrNotOwner", func(t *testing.T) {
		errorOf(t, ts.do(req{method: "PUT", path: path + ".json?title=x", user: "bob"}), 403, "forbidden", "owner")
		errorOf(t, ts.do(req{method: "PUT", path: path + ".json?title=x"}), 401, "unauthorized", "")
		errorOf(t, ts.do(req{method: "PUT", path: "/datasets/9999.json?title=x", user: "alice"}), 404, "not_found", "9999")
		if got := datasetDoc(t, ts, path, "")["title"]; got != "Renamed" {
			t.Fatalf("a refused update changed the title to %v", got)
		}
	})
	t.Run("AdminMay", func(t *testing.T) {
		must(t, ts.do(req{method: "PUT", path: path + ".json?title=By%20admin", user: "admin"}), 201)
	})
	// Text that is not UTF-8, or holds a NUL byte, is refused alike by
	// every store (PostgreSQL cannot keep it), and nothing changes.
	t.Run("ErrNotText", func(t *testing.T) {
		for _, q := range []string{"title=a%00b", "description=%FF%FE", "tags=x%00", "contact_name=%C3"} {
			field, _, _ := strings.Cut(q, "=")
			errorOf(t, ts.do(req{method: "PUT", path: path + ".json?" + q, user: "alice"}), 400, "invalid", field)
			errorOf(t, ts.do(req{method: "POST", path: "/datasets.json?" + q, user: "alice", ctype: "text/csv", body: []byte("lat,lon\n1,2\n")}), 400, "invalid", field)
		}
		if got := datasetDoc(t, ts, path, "")["title"]; got != "By admin" {
			t.Fatalf("a refused update changed the title to %v", got)
		}
	})
}

func TestDatasetDelete(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createCSV("", "lat,lon\n1,2\n")
	errorOf(t, ts.do(req{method: "DELETE", path: path + ".json", user: "bob"}), 403, "forbidden", "")
	errorOf(t, ts.do(req{method: "DELETE", path: path + ".json"}), 401, "unauthorized", "")
	w := ts.do(req{method: "DELETE", path: path, user: "alice", ctype: "application/json"})
	if body := must(t, w, 204); len(body) != 0 || w.Header().Get("Status") != "204 No Content" {
		t.Fatalf("delete: %q, Status %q", body, w.Header().Get("Status"))
	}
	errorOf(t, ts.get(path+".json", ""), 404, "not_found", "")
	errorOf(t, ts.get(path+"/features.json", ""), 404, "not_found", "")
	errorOf(t, ts.do(req{method: "DELETE", path: path + ".json", user: "alice"}), 404, "not_found", "")
	other := ts.createCSV("", "lat,lon\n1,2\n")
	must(t, ts.do(req{method: "DELETE", path: other + ".json", user: "admin"}), 204)
}

func TestDatasetDownload(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	points := ts.createCSV("?title=Pts", "name,lat,lon\n\"a, b\",1.5,2.25\nc,-3,4\n")
	t.Run("CSVPoints", func(t *testing.T) {
		w := ts.get(points+".csv", "")
		body := string(must(t, w, 200))
		if body != "name,latitude,longitude,WKT\n\"a, b\",1.5,2.25,POINT (2.25 1.5)\nc,-3,4,POINT (4 -3)\n" {
			t.Fatalf("csv:\n%s", body)
		}
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
			t.Fatalf("Content-Type %q", ct)
		}
		if cd := w.Header().Get("Content-Disposition"); cd != `attachment; filename="Pts.csv"` {
			t.Fatalf("Content-Disposition %q", cd)
		}
	})
	t.Run("GeoJSON", func(t *testing.T) {
		fc := decode[map[string]any](t, must(t, ts.get(points+".geojson", ""), 200))
		feats := fc["features"].([]any)
		f := feats[0].(map[string]any)
		if fc["type"] != "FeatureCollection" || len(feats) != 2 || f["properties"].(map[string]any)["name"] != "a, b" ||
			fmt.Sprint(f["geometry"].(map[string]any)["coordinates"]) != "[2.25 1.5]" {
			t.Fatalf("geojson %v", fc)
		}
	})
	t.Run("CSVPolygons", func(t *testing.T) {
		body, ct := multipartBody(t, ncFiles("dataset"), nil)
		w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
		must(t, w, 201)
		path := strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
		lines := strings.Split(strings.TrimSpace(string(must(t, ts.get(path+".csv", ""), 200))), "\n")
		if len(lines) < 101 || !strings.HasSuffix(lines[0], ",WKT") || !strings.Contains(lines[1], "MULTIPOLYGON (((") && !strings.Contains(lines[1], "POLYGON ((") {
			t.Fatalf("polygon csv: %d lines, header %q, first %.100q", len(lines), lines[0], lines[1])
		}
	})
	t.Run("Aliases", func(t *testing.T) {
		// rss is the Atom feed; spatialite is the spec's name for sqlite.
		for alias, want := range map[string]string{"rss": "atom", "spatialite": "sqlite"} {
			a, b := ts.get(points+"."+alias, ""), ts.get(points+"."+want, "")
			must(t, a, 200)
			if a.Header().Get("Content-Type") != b.Header().Get("Content-Type") || !strings.HasSuffix(a.Header().Get("Content-Disposition"), "."+want+`"`) {
				t.Fatalf(".%s answers %q %q, .%s %q", alias, a.Header().Get("Content-Type"), a.Header().Get("Content-Disposition"), want, b.Header().Get("Content-Type"))
			}
		}
	})
	t.Run("ErrUnknownFormat", func(t *testing.T) {
		for _, f := range []string{"xml", "html"} {
			errorOf(t, ts.get(points+"."+f, ""), 404, "not_found", f)
		}
	})
}

func TestFeatures(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	var b strings.Builder
	b.WriteString("n,name,lat,lon\n")
	for i := 0; i < 75; i++ {
		fmt.Fprintf(&b, "%d,f%d,%d.5,%d.25\n", i, i, i%80, i)
	}
	path := ts.createCSV("", b.String())
	list := func(query string) []map[string]any {
		t.Helper()
		return decode[[]map[string]any](t, must(t, ts.get(path+"/features.json"+query, ""), 200))
	}
	t.Run("Golden", func(t *testing.T) {
		golden(t, "features.json", must(t, ts.get(path+"/features.json?limit=2", ""), 200))
		golden(t, "features.geojson", must(t, ts.get(path+"/features.json?limit=2&geojson=1", ""), 200))
	})
	t.Run("DefaultArrayHexWKB", func(t *testing.T) {
		feats := list("")
		if len(feats) != 30 {
			t.Fatalf("%d features by default", len(feats))
		}
		f := feats[3]
		if f["n"] != 3.0 || f["name"] != "f3" {
			t.Fatalf("feature %v", f)
		}
		raw, err := hex.DecodeString(f["geometry"].(string))
		if err != nil || strings.ToUpper(f["geometry"].(string)) != f["geometry"] {
			t.Fatalf("geometry %v is not upper-case hex", f["geometry"])
		}
		if x, y, ok := wkb.PointXY(raw); !ok || x != 3.25 || y != 3.5 || raw[0] != 1 || raw[1] != 1 || raw[4] != 0 {
			t.Fatalf("geometry decodes to %v %v %v (% x)", x, y, ok, raw)
		}
	})
	t.Run("PythonPaging", func(t *testing.T) {
		var got []map[string]any
		for start := 0; start < 75; start += 30 {
			limit := min(30, 75-start)
			got = append(got, list(fmt.Sprintf("?start=%d&limit=%d&hex_geometry=1", start, limit))...)
		}
		for i, f := range got {
			if f["n"] != float64(i) {
				t.Fatalf("feature %d is %v", i, f["n"])
			}
		}
		if len(got) != 75 {
			t.Fatalf("paged %d features", len(got))
		}
		if past := list("?start=75"); len(past) != 0 {
			t.Fatalf("past the end: %d", len(past))
		}
		if zero := list("?limit=0"); len(zero) != 0 {
			t.Fatalf("limit 0: %d", len(zero))
		}
		if all := list("?limit=100000"); len(all) != 75 {
			t.Fatalf("large limit: %d", len(all))
		}
	})
	t.Run("GeoJSON", func(t *testing.T) {
		for _, p := range []string{path + "/features.json?geojson=1&limit=2&start=1", "/overlays/" + strings.TrimPrefix(path, "/datasets/") + "/features.geojson?limit=2&start=1"} {
			fc := decode[map[string]any](t, must(t, ts.get(p, ""), 200))
			feats := fc["features"].([]any)
			if fc["type"] != "FeatureCollection" || len(feats) != 2 {
				t.Fatalf("%s: %v", p, fc)
			}
			f := feats[0].(map[string]any)
			if f["type"] != "Feature" || f["properties"].(map[string]any)["name"] != "f1" ||
				fmt.Sprint(f["geometry"].(map[string]any)["coordinates"]) != "[1.25 1.5]" {
				t.Fatalf("feature %v", f)
			}
		}
	})
	t.Run("GeoJSONGeometryObjects", func(t *testing.T) {
		f := list("?hex_geometry=0&limit=1")[0]
		if g, ok := f["geometry"].(map[string]any); !ok || g["type"] != "Point" {
			t.Fatalf("hex_geometry=0 geometry %v", f["geometry"])
		}
	})
	t.Run("JSONP", func(t *testing.T) {
		w := ts.get(path+"/features.json?geojson=1&limit=1&callback=GeoIQ_123._processFeatures", "")
		body := string(must(t, w, 200))
		if !strings.HasPrefix(body, "GeoIQ_123._processFeatures({") || !strings.HasSuffix(body, "});") {
			t.Fatalf("JSONP %s", body)
		}
	})
	t.Run("ErrBadParams", func(t *testing.T) {
		errorOf(t, ts.get(path+"/features.json?limit=ten", ""), 400, "invalid", "limit")
		errorOf(t, ts.get(path+"/features.json?start=-1", ""), 400, "invalid", "start")
		errorOf(t, ts.get(path+"/features.json?geojson=yes%21", ""), 400, "invalid", "geojson")
		errorOf(t, ts.get("/datasets/4242/features.json", ""), 404, "not_found", "4242")
	})
}
