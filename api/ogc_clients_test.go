package api_test

// Real OGC API Features clients against a real listener: GDAL's OAPIF
// driver (ogrinfo, ogr2ogr) and QGIS's OAPIF provider (headless, from
// python3). Their counts must be those of features.json for the same
// conditions.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/internal/gdaltest"
)

// listen serves ts on a real port of 127.0.0.1 (links name that address:
// the server has no base URL) and returns the OGC API's landing page URL.
func listen(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/ogc"
}

func noBaseURL(c *api.Config) { c.BaseURL = "" }

func TestOGCWithGDAL(t *testing.T) {
	t.Parallel()
	gdaltest.Need(t)
	ts := newServer(t, noBaseURL)
	id := uploadNC(t, ts, "")
	layer := "nc-" + id // GDAL names the layer by the collection's readable name
	ogc := "OAPIF:" + listen(t, ts.handler)

	out, err := exec.Command("ogrinfo", "-ro", "-q", ogc).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "1: "+layer+" (title: nc)") {
		t.Fatalf("ogrinfo does not list the collection: %v\n%s", err, out)
	}
	for _, c := range []struct {
		gdal []string
		gc   string
	}{
		{nil, ""},
		{[]string{"-spat", "-80", "35", "-78", "36"}, "bbox=-80,35,-78,36"},
		{[]string{"-where", "NAME = 'Ashe'"}, "filter[NAME][][equals]=Ashe"},
		{[]string{"-where", "CRESS_ID = 5"}, "filter[CRESS_ID][][equals]=5"},
	} {
		n, outp := gdaltest.Count(t, ogc, layer, c.gdal...)
		if want := featuresCount(t, ts, id, c.gc, ""); int(n) != want || want == 0 {
			t.Errorf("ogrinfo %v: %d features, features.json %d\n%s", c.gdal, n, want, outp)
		}
	}
	dir := t.TempDir()
	for i, c := range []struct {
		gdal []string
		gc   string
	}{
		{nil, ""},
		{[]string{"-spat", "-80", "35", "-78", "36"}, "bbox=-80,35,-78,36"},
		{[]string{"-where", "NAME = 'Ashe'"}, "filter[NAME][][equals]=Ashe"},
	} {
		dst := filepath.Join(dir, "out"+string(rune('a'+i))+".json")
		gdaltest.Ogr2ogr(t, append(append([]string{"-f", "GeoJSON", dst, ogc}, c.gdal...), layer)...)
		b, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		fc := decode[ogcFC](t, b)
		if want := featuresCount(t, ts, id, c.gc, ""); len(fc.Features) != want {
			t.Errorf("ogr2ogr %v: %d features, features.json %d", c.gdal, len(fc.Features), want)
		}
	}
}

func TestOGCWithGDALBasicAuth(t *testing.T) {
	t.Parallel()
	gdaltest.Need(t)
	ts := newServer(t, noBaseURL, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	id := uploadNC(t, ts, "") // private to alice
	ogc := "OAPIF:" + listen(t, ts.handler)
	n, out := gdaltest.Count(t, ogc, "nc-"+id, "--config", "GDAL_HTTP_USERPWD", "alice:secret1")
	if n != 100 {
		t.Errorf("alice: %d features\n%s", n, out)
	}
	// Bob may not see it: GDAL lists no collection.
	out2, _ := exec.Command("ogrinfo", "-ro", "-q", "--config", "GDAL_HTTP_USERPWD", "bob:secret1", ogc).CombinedOutput()
	if strings.Contains(string(out2), "title: nc") {
		t.Errorf("bob sees alice's dataset:\n%s", out2)
	}
}

// qgisPython returns a python3 that imports qgis.core, skipping the test
// when none does (unless MAPCOMMONS_REQUIRE_QGIS=1).
func qgisPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if p, err := exec.LookPath(py); err == nil && exec.Command(p, "-c", "import qgis.core").Run() == nil {
			return p
		}
	}
	if os.Getenv("MAPCOMMONS_REQUIRE_QGIS") == "1" {
		t.Fatal("python3 cannot import qgis.core (apt-get install python3-qgis) and MAPCOMMONS_REQUIRE_QGIS=1")
	}
	t.Skip("QGIS's python (qgis.core) is not installed")
	return ""
}

// runQGIS runs one of the QGIS scripts headless in a home of its own (QGIS
// keeps a profile and an authentication database there: runs sharing one
// race to create it, and a fresh install warns on stdout), and returns the
// last line it printed, the script's JSON answer.
func runQGIS(t *testing.T, py string, args ...string) []byte {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(py, args...)
	cmd.Env = append(os.Environ(), "QT_QPA_PLATFORM=offscreen", "HOME="+home,
		"XDG_RUNTIME_DIR="+filepath.Join(home, "run"), "XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	if err := os.Mkdir(filepath.Join(home, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("qgis: %v\n%s", err, out)
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if other := lines[:len(lines)-1]; len(other) > 0 {
		t.Logf("qgis also said: %s", bytes.Join(other, []byte("\n")))
	}
	return lines[len(lines)-1]
}

func TestOGCWithQGIS(t *testing.T) {
	t.Parallel()
	py := qgisPython(t)
	for _, mode := range []mapcommons.Mode{mapcommons.ModeHosted, mapcommons.ModeAppliance} {
		t.Run(string(mode), func(t *testing.T) {
			ts := newServer(t, noBaseURL, func(c *api.Config) { c.Mode = mode })
			id := uploadNC(t, ts, "")
			ds := decode[map[string]any](t, must(t, ts.get("/datasets/"+id+".json", "alice"), 200))
			ext := ds["extent"].([]any)
			args := []string{"testdata/ogc_qgis.py", listen(t, ts.handler), "nc-" + id} // its readable name
			if mode == mapcommons.ModeAppliance {
				args = append(args, "alice", "secret1")
			}
			out := runQGIS(t, py, args...)
			var got struct {
				Valid       bool
				Error       string
				Count, Read int
				Extent      []float64
				CRS         string
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("qgis said: %s", out)
			}
			if !got.Valid || got.Count != 100 || got.Read != 100 || got.CRS != "EPSG:4326" {
				t.Fatalf("qgis: %+v", got)
			}
			for i := range 4 {
				if d := got.Extent[i] - ext[i].(float64); d > 1e-6 || d < -1e-6 {
					t.Errorf("qgis extent %v, dataset's %v", got.Extent, ext)
				}
			}
		})
	}
}

// TestOGCDatetime: datetime selects on the first date attribute (a dBase
// date field, made by ogr2ogr): a date is a day, which an instant inside
// it or an interval meeting it selects, and a feature without a date is
// in every answer (/req/core/fc-time-response). The collection's temporal
// extent is that attribute's interval.
func TestOGCDatetime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "events.csv")
	if err := os.WriteFile(csvPath, []byte("name,day,lon,lat\na,2020-01-05,1,1\nb,2021-06-01,2,2\nc,2021-06-02,3,3\nd,2022-12-31,4,4\ne,,5,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shp := filepath.Join(dir, "events.shp")
	gdaltest.Ogr2ogr(t, "-f", "ESRI Shapefile", shp, csvPath, "-oo", "X_POSSIBLE_NAMES=lon", "-oo", "Y_POSSIBLE_NAMES=lat",
		"-oo", "AUTODETECT_TYPE=YES", "-a_srs", "EPSG:4326")
	ts := newServer(t)
	files := map[string]string{}
	for _, ext := range []string{"shp", "shx", "dbf", "prj"} {
		files["dataset["+ext+"]"] = filepath.Join(dir, "events."+ext)
	}
	body, ct := multipartBody(t, files, nil)
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
	id := strconvI(decode[struct{ ID int64 }](t, must(t, w, 201)).ID)
	ds := decode[struct {
		DataAttributes []struct {
			Name     string
			DataType string `json:"data_type"`
		} `json:"data_attributes"`
	}](t, must(t, ts.get("/datasets/"+id+".json?include_attributes=1", ""), 200))
	found := false
	for _, a := range ds.DataAttributes {
		found = found || (a.Name == "day" && a.DataType == "date")
	}
	if !found {
		t.Fatalf("no date attribute: %+v", ds.DataAttributes)
	}
	coll := decode[struct {
		Extent struct {
			Temporal struct{ Interval [][2]*string }
		}
	}](t, must(t, ts.get("/ogc/collections/"+id, ""), 200))
	if iv := coll.Extent.Temporal.Interval; len(iv) != 1 || iv[0][0] == nil || *iv[0][0] != "2020-01-05T00:00:00Z" || iv[0][1] == nil || *iv[0][1] != "2022-12-31T23:59:59Z" {
		t.Errorf("temporal extent %+v", coll.Extent.Temporal)
	}
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"2021-06-01", []string{"b", "e"}},
		{"2021-06-01/2021-06-02", []string{"b", "c", "e"}},
		{"../2021-06-01", []string{"a", "b", "e"}},
		{"2021-06-02/..", []string{"c", "d", "e"}},
		{"2019-01-01/2019-12-31", []string{"e"}},
		// Instants and intervals of date-times against the days.
		{"2021-06-01T00:00:00Z", []string{"b", "e"}},
		{"2021-06-01T23:59:59Z", []string{"b", "e"}},
		{"2021-06-01T12:00:00Z/..", []string{"b", "c", "d", "e"}},
		{"2021-06-02T00:00:00Z/..", []string{"c", "d", "e"}},
		{"../2021-06-01T00:00:00Z", []string{"a", "b", "e"}},
		{"2021-05-01T00:00:00Z/2021-06-01T00:00:00Z", []string{"b", "e"}},
		{"2021-06-01T08:00:00Z/2021-06-02T08:00:00Z", []string{"b", "c", "e"}},
	} {
		fc := items(t, ts, "/ogc/collections/"+id+"/items?sortby=name&datetime="+c.q, "")
		var names []string
		for _, f := range fc.Features {
			names = append(names, f.Properties["name"].(string))
		}
		if strings.Join(names, ",") != strings.Join(c.want, ",") || int(fc.NumberMatched) != len(c.want) {
			t.Errorf("datetime=%s: %v (%d), want %v", c.q, names, fc.NumberMatched, c.want)
		}
	}
	// With a filter: both hold.
	if fc := items(t, ts, "/ogc/collections/"+id+"/items?datetime=2021-06-01T10:00:00Z/..&filter=name%20%3C%3E%20%27c%27", ""); len(fc.Features) != 3 {
		t.Errorf("datetime and filter: %+v", fc.Features)
	}
	for _, bad := range []string{"2021-13-01", "../..", "soon/.."} {
		must(t, ts.get("/ogc/collections/"+id+"/items?datetime="+bad, ""), 400)
	}
	// The date attribute as a query parameter (a queryable, Part 3): a
	// date or a date-time, anything else a 400 naming it.
	if fc := items(t, ts, "/ogc/collections/"+id+"/items?day=2021-06-01", ""); len(fc.Features) != 1 || fc.Features[0].Properties["name"] != "b" {
		t.Errorf("day=2021-06-01: %+v", fc.Features)
	}
	for _, bad := range []string{"notadate", "2021-13-01", "2021-06-01&day=soon"} {
		m := decode[map[string]any](t, must(t, ts.get("/ogc/collections/"+id+"/items?day="+bad, ""), 400))
		if d, _ := m["description"].(string); !strings.Contains(d, "day") || m["code"] != mapcommons.EINVALID {
			t.Errorf("day=%s: %v", bad, m)
		}
	}
}

func strconvI(n int64) string { return strconv.FormatInt(n, 10) }

// TestTilesWithQGIS: QGIS's vector tile layer, given the tile URL template
// of a collection, draws its polygons: a map of North Carolina rendered
// headless has the layer's colour where the counties are, and QGIS fetched
// the tiles from the server.
func TestTilesWithQGIS(t *testing.T) {
	t.Parallel()
	py := qgisPython(t)
	ts := newServer(t, noBaseURL)
	id := uploadNC(t, ts, "")
	var tiles atomic.Int64
	counting := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/tiles/WebMercatorQuad/") && !strings.HasSuffix(r.URL.Path, "tilejson") {
			tiles.Add(1)
		}
		ts.handler.ServeHTTP(w, r)
	})
	template := listen(t, counting) + "/collections/" + id + "/tiles/WebMercatorQuad/{z}/{y}/{x}"
	out := runQGIS(t, py, "testdata/tiles_qgis.py", template)
	var got struct {
		Valid          bool
		MinZoom        int `json:"min_zoom"`
		MaxZoom        int `json:"max_zoom"`
		Painted, Total int
		Outside        int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("qgis said: %s", out)
	}
	// The counties fill much of the state's box; the sea east of it and
	// the land west of it stay blank.
	if !got.Valid || got.Painted < got.Total/5 || got.Outside != 0 {
		t.Fatalf("qgis: %+v", got)
	}
	if tiles.Load() == 0 {
		t.Fatal("QGIS fetched no tile")
	}
	t.Logf("QGIS painted %d of %d pixels from %d tiles", got.Painted, got.Total, tiles.Load())
}

// owslibPython returns a python3 for the Part 4 client: one that imports
// OWSLib's OGC API Features (Debian's python3-owslib) if any does, else
// any python3 (the script then reads with urllib too); it skips without
// python3, and with MAPCOMMONS_REQUIRE_OWSLIB=1 fails without OWSLib.
func owslibPython(t *testing.T) (py string, owslib bool) {
	t.Helper()
	var any string
	for _, name := range []string{"/usr/bin/python3", "python3"} {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if exec.Command(p, "-c", "import owslib.ogcapi.features").Run() == nil {
			return p, true
		}
		if any == "" {
			any = p
		}
	}
	required := os.Getenv("MAPCOMMONS_REQUIRE_OWSLIB") == "1"
	switch {
	case required:
		t.Fatal("no python3 imports owslib.ogcapi.features (apt-get install python3-owslib) and MAPCOMMONS_REQUIRE_OWSLIB=1")
	case any == "":
		t.Skip("no python3")
	}
	return any, false
}

// TestOGCEditWithPython: a Python client on a real listener adds an item
// (201, Location), patches it with If-Match (200, a new ETag, null
// clearing a property, the geometry kept), is refused a PUT with the old
// ETag (412), replaces it with the new one, reads it back (with OWSLib
// when installed), deletes it (204, then 404), and is refused anonymous
// (401).
func TestOGCEditWithPython(t *testing.T) {
	t.Parallel()
	py, owslib := owslibPython(t)
	ts := newServer(t, noBaseURL)
	path := ts.createCSV("?title=Towns", "n,name,lat,lon\n1,Durham,36.0,-78.9\n")
	id := strings.TrimPrefix(path, "/datasets/")
	landing := listen(t, ts.handler)
	out, err := exec.Command(py, "testdata/ogc_crud.py", landing, id, "alice", "secret1").Output()
	if err != nil {
		t.Fatalf("ogc_crud.py: %v\n%s", err, out)
	}
	var got struct {
		Error             string
		Steps             []string
		Conformance       []string
		Location          string
		Created, Patched  map[string]any
		Replaced, Read    map[string]any
		PatchedGeometry   map[string]any `json:"patched_geometry"`
		ReadGeometry      map[string]any `json:"read_geometry"`
		EtagMoved         bool           `json:"etag_moved"`
		StaleStatus       int            `json:"stale_status"`
		OWSLib            bool
		Listed            int
		DeleteStatus      int `json:"delete_status"`
		AfterDeleteStatus int `json:"after_delete_status"`
		AnonymousStatus   int `json:"anonymous_status"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &got); err != nil {
		t.Fatalf("ogc_crud.py said: %s", out)
	}
	t.Logf("steps: %s", strings.Join(got.Steps, "; "))
	if got.Error != "" {
		t.Fatalf("ogc_crud.py: %s", got.Error)
	}
	if len(got.Conformance) != 2 {
		t.Errorf("Part 4 classes: %v", got.Conformance)
	}
	if got.Location != landing+"/collections/"+id+"/items/2" || got.Created["name"] != "Raleigh" || got.Created["n"] != 7.0 {
		t.Errorf("created at %s: %v", got.Location, got.Created)
	}
	if got.Patched["name"] != "Raleigh, NC" || got.Patched["n"] != nil || fmt.Sprint(got.PatchedGeometry["coordinates"]) != "[-78.6 35.8]" || !got.EtagMoved {
		t.Errorf("patched: %v %v, ETag moved %v", got.Patched, got.PatchedGeometry, got.EtagMoved)
	}
	if got.StaleStatus != 412 {
		t.Errorf("PUT with a stale ETag: %d", got.StaleStatus)
	}
	if got.Replaced["name"] != "Charlotte" || got.Read["name"] != "Charlotte" || got.Read["n"] != nil ||
		fmt.Sprint(got.ReadGeometry["coordinates"]) != "[-80.8 35.2]" || got.Listed != 1 {
		t.Errorf("replaced %v, read back %v %v, listed %d", got.Replaced, got.Read, got.ReadGeometry, got.Listed)
	}
	if got.OWSLib != owslib {
		t.Errorf("read with OWSLib %v, installed %v", got.OWSLib, owslib)
	}
	if got.DeleteStatus != 204 || got.AfterDeleteStatus != 404 || got.AnonymousStatus != 401 {
		t.Errorf("DELETE %d, GET after %d, anonymous POST %d", got.DeleteStatus, got.AfterDeleteStatus, got.AnonymousStatus)
	}
	// The server's own reading agrees.
	if n := len(decode[[]any](t, must(t, ts.get(path+"/features.json", ""), 200))); n != 1 {
		t.Errorf("%d features left", n)
	}
}
