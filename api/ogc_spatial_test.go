package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"mapcommons/format/wkb"
)

// cql2SpatialCases are the spatial-function predicates of the abstract
// test suite of CQL2 (OGC 21-065, Annex A, the Spatial Functions and
// Basic Spatial Functions Plus classes:
// the whole world, the line (7 50, 10 51) and the point (7.02 49.92) of
// each function's test, and the test dataset's table of predicates and
// expected counts), on the three layers of its test GeoPackage; the
// counts are the suite's, which GEOS gives as well (ST_ functions in
// GDAL's SQLite dialect over the same file), except S_WITHIN of the whole
// world, 177 here where GEOS says 176: the countries that reach
// 180.00000000000006 are stored clamped to 180.
var cql2SpatialCases = []struct {
	layer string // countries, places or rivers
	op    string
	lit   string // WKT, or BBOX(w,s,e,n)
	want  int
}{
	{"countries", "S_INTERSECTS", "BBOX(-180,-90,180,90)", 177},
	{"countries", "S_INTERSECTS", "POLYGON((-180 -90,180 -90,180 90,-180 90,-180 -90))", 177},
	{"countries", "S_INTERSECTS", "LINESTRING(7 50,10 51)", 1},
	{"countries", "S_INTERSECTS", "POINT(7.02 49.92)", 1},
	{"countries", "S_DISJOINT", "BBOX(-180,-90,180,90)", 0},
	{"countries", "S_DISJOINT", "POLYGON((-180 -90,180 -90,180 90,-180 90,-180 -90))", 0},
	{"countries", "S_DISJOINT", "LINESTRING(7 50,10 51)", 176},
	{"countries", "S_DISJOINT", "POINT(7.02 49.92)", 176},
	{"countries", "S_EQUALS", "POLYGON((-180 -90,180 -90,180 90,-180 90,-180 -90))", 0},
	{"countries", "S_EQUALS", "LINESTRING(7 50,10 51)", 0},
	{"countries", "S_EQUALS", "POINT(7.02 49.92)", 0},
	{"countries", "S_WITHIN", "BBOX(-180,-90,180,90)", 177},
	{"countries", "S_WITHIN", "POLYGON((-180 -90,180 -90,180 90,-180 90,-180 -90))", 177},
	{"countries", "S_WITHIN", "LINESTRING(7 50,10 51)", 0},
	{"countries", "S_WITHIN", "MULTIPOINT((7 50),(10 51))", 0},
	{"countries", "S_CONTAINS", "BBOX(-180,-90,180,90)", 0},
	{"countries", "S_CONTAINS", "POLYGON((-180 -90,180 -90,180 90,-180 90,-180 -90))", 0},
	{"countries", "S_CONTAINS", "LINESTRING(7 50,10 51)", 1},
	{"countries", "S_CONTAINS", "MULTIPOINT((7 50),(10 51))", 1},
	{"countries", "S_OVERLAPS", "POLYGON((-180 -90,180 -90,180 90,-180 90,-180 -90))", 0},
	{"places", "S_OVERLAPS", "MULTIPOINT((7 50),(10 51))", 0},
	{"rivers", "S_OVERLAPS", "LINESTRING(7 50,10 51)", 0},
	// The test dataset's predicates and their expected results.
	{"countries", "S_INTERSECTS", "POLYGON((0 40,10 40,10 50,0 50,0 40))", 8},
	{"countries", "S_INTERSECTS", "LINESTRING(0 40,10 50)", 4},
	{"countries", "S_DISJOINT", "BBOX(0,40,10,50)", 169},
	{"countries", "S_DISJOINT", "POLYGON((0 40,10 40,10 50,0 50,0 40))", 169},
	{"countries", "S_DISJOINT", "LINESTRING(0 40,10 50)", 173},
	{"countries", "S_DISJOINT", "POINT(7.02 49.92)", 176},
	{"countries", "S_TOUCHES", "POLYGON((6.043073357781111 50.128051662794235,6.242751092156993 49.90222565367873,6.186320428094177 49.463802802114515,5.897759230176348 49.44266714130711,5.674051954784829 49.529483547557504,5.782417433300907 50.09032786722122,6.043073357781111 50.128051662794235))", 3},
	{"countries", "S_TOUCHES", "POINT(6.043073357781111 50.128051662794235)", 3},
	{"countries", "S_TOUCHES", "POINT(6.242751092156993 49.90222565367873)", 2},
	{"countries", "S_TOUCHES", "LINESTRING(6.043073357781111 50.128051662794235,6.242751092156993 49.90222565367873)", 3},
	{"countries", "S_WITHIN", "BBOX(-180,-90,0,90)", 44},
	{"countries", "S_CONTAINS", "BBOX(7,50,8,51)", 1},
	{"countries", "S_CONTAINS", "LINESTRING(7 50,8 51)", 1},
	{"countries", "S_CONTAINS", "POINT(7.02 49.92)", 1},
	{"countries", "S_OVERLAPS", "BBOX(-180,-90,0,90)", 11},
	{"places", "S_INTERSECTS", "POLYGON((0 40,10 40,10 50,0 50,0 40))", 7},
	{"places", "S_DISJOINT", "BBOX(0,40,10,50)", 236},
	{"places", "S_DISJOINT", "POLYGON((0 40,10 40,10 50,0 50,0 40))", 236},
	{"places", "S_EQUALS", "POINT(6.1300028 49.6116604)", 1},
	{"places", "S_WITHIN", "BBOX(-180,-90,0,90)", 74},
	{"rivers", "S_INTERSECTS", "LINESTRING(-60 -90,-60 90)", 2},
	{"rivers", "S_DISJOINT", "BBOX(-180,-90,0,90)", 9},
	{"rivers", "S_DISJOINT", "LINESTRING(-60 -90,-60 90)", 11},
	{"rivers", "S_CROSSES", "BBOX(0,40,10,50)", 1},
	{"rivers", "S_CROSSES", "LINESTRING(-60 -90,-60 90)", 2},
	{"rivers", "S_WITHIN", "BBOX(-180,-90,0,90)", 4},
	// Basic Spatial Functions Plus: S_INTERSECTS with every literal type,
	// the test dataset's predicates and expected results.
	{"countries", "S_INTERSECTS", "LINESTRING(-180 -45, 0 -45)", 2},
	{"countries", "S_INTERSECTS", "MULTILINESTRING((-180 -45, 0 -45), (0 45, 180 45))", 14},
	{"countries", "S_INTERSECTS", cql2Holed, 8},
	{"countries", "S_INTERSECTS", "MULTIPOLYGON(((-180 -90, -90 -90, -90 90, -180 90, -180 -90), (-120 -50, -100 -50, -100 -40, -120 -40, -120 -50)), ((0 0, 10 0, 10 10, 0 10, 0 0)))", 15},
	{"countries", "S_INTERSECTS", "GEOMETRYCOLLECTION(POINT(7.02 49.92), POLYGON((0 0, 10 0, 10 10, 0 10, 0 0)))", 8},
}

// cql2Holed is the suite's polygon with a hole.
const cql2Holed = "POLYGON((-180 -90, -90 -90, -90 90, -180 90, -180 -90), (-120 -50, -100 -50, -100 -40, -120 -40, -120 -50))"

// cql2JSONLiteral is a literal of cql2SpatialCases in cql2-json: a bbox
// object or a GeoJSON geometry.
func cql2JSONLiteral(t *testing.T, lit string) string {
	t.Helper()
	if s, ok := strings.CutPrefix(lit, "BBOX("); ok {
		return `{"bbox":[` + strings.TrimSuffix(s, ")") + `]}`
	}
	g, err := wkb.ParseWKT(lit)
	if err != nil {
		t.Fatalf("%s: %v", lit, err)
	}
	j, err := wkb.ToGeoJSON(nil, g)
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

// TestOGCCQL2SpatialFunctions runs the spatial-function predicates of
// CQL2's abstract test suite over its test data (the three layers of
// testdata/ogc/ne110m4cql2.gpkg uploaded as datasets), in both encodings
// and with the literal first, through /ogc/collections/{id}/items, and
// checks the conformance classes declared.
func TestOGCCQL2SpatialFunctions(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ids := map[string]string{}
	for name, layer := range map[string]string{"countries": "ne_110m_admin_0_countries", "places": "ne_110m_populated_places_simple", "rivers": "ne_110m_rivers_lake_centerlines"} {
		ids[name] = uploadCQL2Layer(t, ts, layer)
	}
	count := func(layer, query string) int { t.Helper(); return filteredCount(t, ts, ids[layer], query) }
	converse := map[string]string{"S_WITHIN": "S_CONTAINS", "S_CONTAINS": "S_WITHIN"}
	for _, c := range cql2SpatialCases {
		text := fmt.Sprintf("%s(geom,%s)", c.op, c.lit)
		if n := count(c.layer, "filter="+url.QueryEscape(text)); n != c.want {
			t.Errorf("%s %s: %d features, want %d", c.layer, text, n, c.want)
		}
		js := fmt.Sprintf(`{"op":%q,"args":[{"property":"geom"},%s]}`, strings.ToLower(c.op), cql2JSONLiteral(t, c.lit))
		if n := count(c.layer, "filter-lang=cql2-json&filter="+url.QueryEscape(js)); n != c.want {
			t.Errorf("%s %s: %d features, want %d", c.layer, js, n, c.want)
		}
		// The literal first: the converse predicate.
		op := c.op
		if o, ok := converse[op]; ok {
			op = o
		}
		first := fmt.Sprintf("%s(%s,geom)", op, c.lit)
		if n := count(c.layer, "filter="+url.QueryEscape(first)); n != c.want {
			t.Errorf("%s %s: %d features, want %d", c.layer, first, n, c.want)
		}
	}
	// The suite's combinations of them (Basic Spatial Functions Plus).
	for _, c := range []struct {
		text, json string
		want       int
	}{
		{"S_INTERSECTS(geom," + cql2Holed + ") or S_INTERSECTS(geom,POLYGON((0 0, 10 0, 10 10, 0 10, 0 0)))",
			`{"op":"or","args":[{"op":"s_intersects","args":[{"property":"geom"},` + cql2JSONLiteral(t, cql2Holed) + `]},{"op":"s_intersects","args":[{"property":"geom"},` + cql2JSONLiteral(t, "POLYGON((0 0, 10 0, 10 10, 0 10, 0 0))") + `]}]}`, 15},
		{"S_INTERSECTS(geom," + cql2Holed + ") and not S_INTERSECTS(geom,POLYGON((-130 0, 0 0, 0 50, -130 50, -130 0)))",
			`{"op":"and","args":[{"op":"s_intersects","args":[{"property":"geom"},` + cql2JSONLiteral(t, cql2Holed) + `]},{"op":"not","args":[{"op":"s_intersects","args":[{"property":"geom"},` + cql2JSONLiteral(t, "POLYGON((-130 0, 0 0, 0 50, -130 50, -130 0))") + `]}]}]}`, 3},
	} {
		if n := count("countries", "filter="+url.QueryEscape(c.text)); n != c.want {
			t.Errorf("countries %s: %d features, want %d", c.text, n, c.want)
		}
		if n := count("countries", "filter-lang=cql2-json&filter="+url.QueryEscape(c.json)); n != c.want {
			t.Errorf("countries %s: %d features, want %d", c.json, n, c.want)
		}
	}
	// S_DISJOINT is NOT S_INTERSECTS, feature by feature.
	for _, lit := range []string{"LINESTRING(7 50,10 51)", "POINT(7.02 49.92)", "BBOX(0,40,10,50)"} {
		a := count("countries", "filter="+url.QueryEscape("S_DISJOINT(geom,"+lit+")"))
		b := count("countries", "filter="+url.QueryEscape("NOT S_INTERSECTS(geom,"+lit+")"))
		both := count("countries", "filter="+url.QueryEscape("S_DISJOINT(geom,"+lit+") AND S_INTERSECTS(geom,"+lit+")"))
		if a != b || both != 0 {
			t.Errorf("%s: %d disjoint, %d not intersecting, %d both", lit, a, b, both)
		}
	}
	// An invalid coordinate (the suite's POINT(90 180)), a property that
	// is not the geometry and a wrong arity are 400s saying why.
	for _, c := range []struct{ filter, want string }{
		{"S_INTERSECTS(geom,POINT(90 180))", "position 90 180 is not a longitude, latitude"},
		{"S_DISJOINT(geom,POINT(90 180))", "position 90 180 is not a longitude, latitude"},
		{"S_WITHIN(NAME,POINT(7 50))", `s_within: \"NAME\" is not the geometry`},
		{"S_TOUCHES(geom)", "S_TOUCHES takes two arguments"},
	} {
		w := ts.get("/ogc/collections/"+ids["countries"]+"/items?filter="+url.QueryEscape(c.filter), "alice")
		if body := string(must(t, w, 400)); !strings.Contains(body, `"code":"invalid"`) || !strings.Contains(body, c.want) {
			t.Errorf("%s: %s, want it to say %s", c.filter, body, c.want)
		}
	}
	conf := string(must(t, ts.get("/ogc/conformance", ""), 200))
	for _, c := range []string{"basic-spatial-functions-plus", "spatial-functions"} {
		if !strings.Contains(conf, `"http://www.opengis.net/spec/cql2/1.0/conf/`+c+`"`) {
			t.Errorf("conformance does not declare %s: %s", c, conf)
		}
	}
}

// uploadCQL2Layer uploads a layer of the CQL2 suite's test data
// (testdata/ogc/ne110m4cql2.gpkg) as alice and returns the dataset's id.
func uploadCQL2Layer(t *testing.T, ts *testServer, layer string) string {
	t.Helper()
	gp, err := os.ReadFile("../testdata/ogc/ne110m4cql2.gpkg")
	if err != nil {
		t.Fatal(err)
	}
	w := ts.do(req{method: "POST", path: "/datasets.json?layer=" + layer, user: "alice", ctype: "application/geopackage+sqlite3", body: gp})
	must(t, w, http.StatusCreated)
	return strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base+"/datasets/"), ".json")
}

// filteredCount is the number of features of collection id that a page
// of /ogc/collections/{id}/items?query gives alice (at most 1,000),
// which must be its numberMatched.
func filteredCount(t *testing.T, ts *testServer, id, query string) int {
	t.Helper()
	fc := items(t, ts, "/ogc/collections/"+id+"/items?limit=1000&"+query, "alice")
	if fc.NumberMatched != int64(len(fc.Features)) {
		t.Errorf("%s: numberMatched %d, %d features", query, fc.NumberMatched, len(fc.Features))
	}
	return len(fc.Features)
}
