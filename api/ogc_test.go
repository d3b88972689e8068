package api_test

// Tests of the OGC API Features routes (/ogc): every document, the
// parameters of items against features.json's answers for the same
// conditions, CRSs, paging and permissions.

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/api"
)

// ogcLink is a link as documents carry it.
type ogcLink struct {
	Href, Rel, Type, Title string
}

// ogcFC is an items answer.
type ogcFC struct {
	Type           string
	NumberMatched  int64
	NumberReturned int64
	TimeStamp      string
	Links          []ogcLink
	Features       []struct {
		ID         int64
		Geometry   json.RawMessage
		Properties map[string]any
	}
}

// link returns the href of the first link with rel (and type, when not
// empty), or "".
func link(links []ogcLink, rel, typ string) string {
	for _, l := range links {
		if l.Rel == rel && (typ == "" || l.Type == typ) {
			return l.Href
		}
	}
	return ""
}

// pathOf turns an absolute link of the test server into a request path.
func pathOf(t *testing.T, href string) string {
	t.Helper()
	if !strings.HasPrefix(href, base) {
		t.Fatalf("link %q is not under %s", href, base)
	}
	return strings.TrimPrefix(href, base)
}

// uploadNC uploads the NC counties shapefile as alice and returns its id.
func uploadNC(t *testing.T, ts *testServer, query string) string {
	t.Helper()
	body, ct := multipartBody(t, ncFiles("dataset"), map[string]string{"tags": "nc, counties", "description": "NC counties"})
	w := ts.do(req{method: "POST", path: "/datasets.json" + query, user: "alice", ctype: ct, body: body})
	must(t, w, http.StatusCreated)
	return strconv.FormatInt(int64(decode[map[string]any](t, w.Body.Bytes())["id"].(float64)), 10)
}

// featuresCount is the number of features features.json answers for a
// dataset with the query (GeoCommons parameters).
func featuresCount(t *testing.T, ts *testServer, id, query, user string) int {
	t.Helper()
	return len(decode[[]any](t, must(t, ts.get("/datasets/"+id+"/features.json?limit=10000&"+query, user), 200)))
}

func TestOGCDocuments(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "")
	name := "nc-" + id // its readable name (title nc)

	w := ts.get("/ogc", "")
	landing := decode[struct {
		Title string
		Links []ogcLink
	}](t, must(t, w, 200))
	for _, want := range []struct{ rel, href string }{
		{"self", base + "/ogc?f=json"}, {"conformance", base + "/ogc/conformance"}, {"data", base + "/ogc/collections"},
		{"service-desc", base + "/api"}, {"http://www.opengis.net/def/rel/ogc/1.0/tiling-schemes", base + "/ogc/tileMatrixSets"},
		{"alternate", base + "/ogc?f=html"},
	} {
		if got := link(landing.Links, want.rel, ""); got != want.href {
			t.Errorf("landing link %s = %q, want %q", want.rel, got, want.href)
		}
	}
	if got := link(landing.Links, "service-desc", "application/vnd.oai.openapi+json;version=3.0"); got == "" {
		t.Errorf("no service-desc of the OpenAPI type: %+v", landing.Links)
	}

	conf := decode[struct{ ConformsTo []string }](t, must(t, ts.get("/ogc/conformance", ""), 200))
	for _, c := range []string{"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core", "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/html", "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
		"http://www.opengis.net/spec/ogcapi-features-2/1.0/conf/crs", "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/core",
		"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tileset", "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tilesets-list",
		"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/geodata-tilesets", "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/mvt"} {
		if !slices.Contains(conf.ConformsTo, c) {
			t.Errorf("conformance lacks %s", c)
		}
	}
	for _, c := range []string{"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter", "http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
		"http://www.opengis.net/spec/cql2/1.0/conf/cql2-text", "http://www.opengis.net/spec/cql2/1.0/conf/cql2-json"} {
		if !slices.Contains(conf.ConformsTo, c) {
			t.Errorf("conformance lacks %s", c)
		}
	}

	type collection struct {
		ID, Title, Description, ItemType, StorageCrs string
		Keywords                                     []string
		Crs                                          []string
		NumberMatched                                int64
		Extent                                       struct {
			Spatial struct {
				BBox [][4]float64
				Crs  string
			}
		}
		Links []ogcLink
	}
	ds := decode[map[string]any](t, must(t, ts.get("/datasets/"+id+".json", ""), 200))
	ext := ds["extent"].([]any)
	colls := decode[struct{ Collections []collection }](t, must(t, ts.get("/ogc/collections", ""), 200)).Collections
	if len(colls) != 1 {
		t.Fatalf("%d collections, want 1", len(colls))
	}
	direct := decode[collection](t, must(t, ts.get("/ogc/collections/"+id, ""), 200))
	for _, c := range []collection{colls[0], direct} {
		if c.ID != name || c.Title != "nc" || c.Description != "NC counties" || !slices.Equal(c.Keywords, []string{"nc", "counties"}) ||
			c.ItemType != "feature" || c.StorageCrs != "http://www.opengis.net/def/crs/OGC/1.3/CRS84" || len(c.Crs) != 3 || c.NumberMatched != 100 {
			t.Errorf("collection %+v", c)
		}
		for i := range 4 {
			if c.Extent.Spatial.BBox[0][i] != ext[i].(float64) {
				t.Errorf("extent %v, dataset's %v", c.Extent.Spatial.BBox, ext)
			}
		}
		if got := link(c.Links, "http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector", "application/json"); got != base+"/ogc/collections/"+name+"/tiles" {
			t.Errorf("tilesets link %q", got)
		}
		if link(c.Links, "items", "application/geo+json") != base+"/ogc/collections/"+name+"/items" || link(c.Links, "items", "text/html") == "" ||
			link(c.Links, "http://www.opengis.net/def/rel/ogc/1.0/queryables", "") == "" {
			t.Errorf("links %+v", c.Links)
		}
	}

	w = ts.get("/ogc/collections/"+id+"/queryables", "")
	if ct := w.Header().Get("Content-Type"); ct != "application/schema+json" {
		t.Errorf("queryables Content-Type %q", ct)
	}
	q := decode[struct {
		Schema     string `json:"$schema"`
		ID         string `json:"$id"`
		Type       string
		Properties map[string]map[string]string
	}](t, must(t, w, 200))
	if q.Type != "object" || q.ID != base+"/ogc/collections/"+name+"/queryables" || !strings.Contains(q.Schema, "json-schema.org") ||
		q.Properties["NAME"]["type"] != "string" || q.Properties["BIR74"]["type"] != "number" || q.Properties["CRESS_ID"]["type"] != "integer" ||
		q.Properties["geometry"]["format"] != "geometry-any" {
		t.Errorf("queryables %+v", q)
	}

	// HTML: by f, by suffix, by a browser's Accept.
	for _, r := range []req{{method: "GET", path: "/ogc?f=html"}, {method: "GET", path: "/ogc/collections.html"},
		{method: "GET", path: "/ogc/collections/" + id + "/items", header: map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}}} {
		w := ts.do(r)
		if body := string(must(t, w, 200)); !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") || !strings.Contains(body, "<html lang=\"en\">") {
			t.Errorf("%s: %s %.200s", r.path, w.Header().Get("Content-Type"), body)
		}
	}
	if body := string(must(t, ts.get("/ogc/collections/"+id+"/items?f=html&NAME=Ashe", ""), 200)); !strings.Contains(body, "<td>Ashe</td>") {
		t.Errorf("the HTML items do not show Ashe: %.500s", body)
	}
	// Errors are OGC exceptions.
	for _, c := range []struct {
		path   string
		status int
	}{{"/ogc/nothing", 404}, {"/ogc/collections/999", 404}, {"/ogc/collections/" + id + "?f=xml", 400}, {"/ogc/conformance?x=1", 400}} {
		w := ts.get(c.path, "")
		m := decode[map[string]any](t, must(t, w, c.status))
		if _, ok := m["description"].(string); !ok || m["code"] == nil || m["error"] != nil {
			t.Errorf("%s: exception %v", c.path, m)
		}
	}
	// The GeoCommons errors stay as they were.
	errorOf(t, ts.get("/datasets/999.json", ""), 404, mapcommons.ENOTFOUND, "")
}

// items gets an items page and decodes it.
func items(t *testing.T, ts *testServer, path, user string) ogcFC {
	t.Helper()
	w := ts.get(path, user)
	fc := decode[ogcFC](t, must(t, w, 200))
	if ct := w.Header().Get("Content-Type"); ct != "application/geo+json" {
		t.Fatalf("items Content-Type %q", ct)
	}
	return fc
}

func TestOGCItems(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "")
	path := "/ogc/collections/" + id + "/items"

	t.Run("NumberMatchedWhereKnown", func(t *testing.T) {
		// Given without a count of its own: for a query without a
		// condition, and for a page that is not full (offset + returned);
		// a full page of a query with one leaves it out, and its next
		// link is there all the same.
		const box = "bbox=-80,35,-78,36"
		m := featuresCount(t, ts, id, box, "")
		if m < 5 {
			t.Fatalf("%d features in the box", m)
		}
		matched := func(q string) (int64, bool, ogcFC) {
			t.Helper()
			body := must(t, ts.get(path+"?"+q, ""), 200)
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(body, &raw); err != nil {
				t.Fatal(err)
			}
			fc := decode[ogcFC](t, body)
			_, ok := raw["numberMatched"]
			return fc.NumberMatched, ok, fc
		}
		for _, c := range []struct {
			q    string
			want int64 // -1: left out
		}{
			{"limit=2", 100},
			{"limit=2&" + box, -1},
			{"limit=1000&" + box, int64(m)},
			{fmt.Sprintf("limit=5&offset=%d&%s", m-1, box), int64(m)},
			{fmt.Sprintf("limit=5&offset=%d&%s", m+10, box), -1},
			{"limit=2&filter=" + url.QueryEscape("NAME = 'Ashe'"), 1},
		} {
			n, ok, _ := matched(c.q)
			if (c.want < 0) != !ok || (ok && n != c.want) {
				t.Errorf("%s: numberMatched %d (given %v), want %d", c.q, n, ok, c.want)
			}
		}
		seen, next := 0, path+"?limit=2&"+box
		for next != "" {
			fc := items(t, ts, next, "")
			seen += len(fc.Features)
			next = link(fc.Links, "next", "")
			if next != "" {
				next = pathOf(t, next)
			}
		}
		if seen != m {
			t.Errorf("the box's pages hold %d features, want %d", seen, m)
		}
	})

	t.Run("PagingWalksAll", func(t *testing.T) {
		seen := map[int64]bool{}
		next, pages := path+"?limit=7", 0
		for next != "" {
			fc := items(t, ts, next, "")
			if fc.NumberMatched != 100 || fc.NumberReturned != int64(len(fc.Features)) || fc.TimeStamp == "" || fc.Type != "FeatureCollection" {
				t.Fatalf("page %s: matched %d returned %d/%d", next, fc.NumberMatched, fc.NumberReturned, len(fc.Features))
			}
			if pages > 0 && link(fc.Links, "prev", "") == "" {
				t.Errorf("page %d has no prev link", pages)
			}
			for _, f := range fc.Features {
				if seen[f.ID] {
					t.Fatalf("feature %d twice", f.ID)
				}
				seen[f.ID] = true
			}
			next, pages = "", pages+1
			if h := link(fc.Links, "next", ""); h != "" {
				next = pathOf(t, h)
			}
		}
		if len(seen) != 100 || pages != 15 {
			t.Errorf("%d features in %d pages, want 100 in 15", len(seen), pages)
		}
		if fc := items(t, ts, path, ""); len(fc.Features) != 10 {
			t.Errorf("default page: %d features", len(fc.Features))
		}
		if fc := items(t, ts, path+"?limit=20000", ""); len(fc.Features) != 100 || link(fc.Links, "next", "") != "" {
			t.Errorf("limit above the maximum: %d features", len(fc.Features))
		}
	})

	t.Run("SameAsFeaturesJSON", func(t *testing.T) {
		// The box -80,35,-78,36 in Web Mercator metres: BBOX numbers and a
		// GeoJSON ring.
		merc := func(lon, lat float64) [2]float64 {
			const r = 6378137.0
			return [2]float64{r * lon * math.Pi / 180, r * math.Log(math.Tan(math.Pi/4+lat*math.Pi/360))}
		}
		num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
		sw, ne := merc(-80, 35), merc(-78, 36)
		mercBox := num(sw[0]) + "," + num(sw[1]) + "," + num(ne[0]) + "," + num(ne[1])
		var pts []string
		for _, p := range [][2]float64{sw, {ne[0], sw[1]}, ne, {sw[0], ne[1]}, sw} {
			pts = append(pts, "["+num(p[0])+","+num(p[1])+"]")
		}
		mercRing := "[" + strings.Join(pts, ",") + "]"
		const crs4326, crs3857 = "http://www.opengis.net/def/crs/EPSG/0/4326", "http://www.opengis.net/def/crs/EPSG/0/3857"
		for _, c := range []struct{ ogc, gc string }{
			{"bbox=-80,35,-78,36", "bbox=-80,35,-78,36"},
			{"NAME=Ashe", "filter[NAME][][equals]=Ashe"},
			{"CRESS_ID=5", "filter[CRESS_ID][][equals]=5"},
			{"bbox=35,-80,36,-78&bbox-crs=" + url.QueryEscape("http://www.opengis.net/def/crs/EPSG/0/4326"), "bbox=-80,35,-78,36"},
			// CQL2, text and JSON, against the same conditions in GeoCommons terms.
			{"filter=" + url.QueryEscape("BIR74 >= 5000 AND BIR74 <= 9000"), "filter[BIR74][][min]=5000&filter[BIR74][][max]=9000"},
			{"filter-lang=cql2-text&filter=" + url.QueryEscape("NAME IN ('Ashe', 'Wake', 'Nope')"), "filter[NAME][][in]=Ashe|Wake|Nope"},
			{"filter-lang=cql2-json&filter=" + url.QueryEscape(`{"op":"and","args":[{"op":">=","args":[{"property":"SID79"},10]},{"op":"s_intersects","args":[{"property":"geometry"},{"bbox":[-80,35,-78,36]}]}]}`),
				"filter[SID79][][min]=10&bbox=-80,35,-78,36"},
			{"filter=" + url.QueryEscape("S_INTERSECTS(geometry, BBOX(-80,35,-78,36))") + "&filter-crs=" + url.QueryEscape("http://www.opengis.net/def/crs/OGC/1.3/CRS84"), "bbox=-80,35,-78,36"},
			{"filter=" + url.QueryEscape("S_INTERSECTS(geometry, POLYGON((-80 35, -78 35, -78 36, -80 36, -80 35)))"), "bbox=-80,35,-78,36"},
			{"NAME=Wake&filter=" + url.QueryEscape("BIR74 > 100"), "filter[NAME][][equals]=Wake&filter[BIR74][][min]=101"},
			// filter-crs: every CRS of the collection; the literals are
			// mapped onto CRS84 (EPSG:4326 latitude first, EPSG:3857 metres).
			{"filter-crs=EPSG:4326&filter=" + url.QueryEscape("S_INTERSECTS(geometry, BBOX(35,-80,36,-78))"), "bbox=-80,35,-78,36"},
			{"filter-crs=" + url.QueryEscape(crs4326) + "&filter=" + url.QueryEscape("S_INTERSECTS(geometry, POLYGON((35 -80, 35 -78, 36 -78, 36 -80, 35 -80)))"), "bbox=-80,35,-78,36"},
			{"filter-crs=EPSG:4326&filter-lang=cql2-json&filter=" + url.QueryEscape(`{"op":"s_intersects","args":[{"property":"geometry"},{"bbox":[35,-80,36,-78]}]}`), "bbox=-80,35,-78,36"},
			{"filter-crs=EPSG:3857&filter=" + url.QueryEscape("S_INTERSECTS(geometry, BBOX("+mercBox+"))"), "bbox=-80,35,-78,36"},
			{"filter-crs=" + url.QueryEscape(crs3857) + "&filter-lang=cql2-json&filter=" + url.QueryEscape(`{"op":"s_intersects","args":[{"property":"geometry"},{"type":"Polygon","coordinates":[`+mercRing+`]}]}`), "bbox=-80,35,-78,36"},
			{"filter-crs=EPSG:3857&filter=" + url.QueryEscape("S_INTERSECTS(geometry, BBOX(-20037508.342789244,-20037508.342789244,20037508.342789244,20037508.342789244))"), ""},
		} {
			fc := items(t, ts, path+"?limit=1000&"+c.ogc, "")
			if want := featuresCount(t, ts, id, c.gc, ""); int(fc.NumberMatched) != want || len(fc.Features) != want || want == 0 {
				t.Errorf("%s: %d matched, %d returned; features.json %d", c.ogc, fc.NumberMatched, len(fc.Features), want)
			}
		}
	})

	t.Run("ItemByStableID", func(t *testing.T) {
		fc := items(t, ts, path+"?NAME=Ashe", "")
		fid := strconv.FormatInt(fc.Features[0].ID, 10)
		w := ts.get(path+"/"+fid, "")
		one := decode[struct {
			Type       string
			ID         int64
			Properties map[string]any
			Links      []ogcLink
		}](t, must(t, w, 200))
		if one.Type != "Feature" || one.Properties["NAME"] != "Ashe" || link(one.Links, "collection", "") != base+"/ogc/collections/nc-"+id || link(one.Links, "self", "") == "" {
			t.Errorf("item %+v", one)
		}
		m := decode[map[string]any](t, must(t, ts.get(path+"/100000", ""), 404))
		if m["code"] != mapcommons.ENOTFOUND || m["description"] == nil {
			t.Errorf("missing item: %v", m)
		}
		must(t, ts.get(path+"/abc", ""), 404)
	})

	t.Run("SortBy", func(t *testing.T) {
		ds := decode[map[string]any](t, must(t, ts.get("/datasets/"+id+".json", ""), 200))
		maxBirths := ds["stats"].(map[string]any)["BIR74"].(map[string]any)["max"].(float64)
		minBirths := ds["stats"].(map[string]any)["BIR74"].(map[string]any)["min"].(float64)
		for _, c := range []struct {
			q    string
			want float64
		}{{"sortby=-BIR74", maxBirths}, {"sortby=%2BBIR74", minBirths}, {"sortby=BIR74", minBirths}, {"sortby=+BIR74", minBirths}} {
			if fc := items(t, ts, path+"?limit=1&"+c.q, ""); fc.Features[0].Properties["BIR74"] != c.want {
				t.Errorf("%s: first BIR74 %v, want %v", c.q, fc.Features[0].Properties["BIR74"], c.want)
			}
		}
	})

	t.Run("Refused", func(t *testing.T) {
		for _, c := range []struct{ q, says string }{
			{"sortby=BIR74,-NAME", "sortby"}, {"sortby=NOPE", "sortby"}, {"nope=1", "nope"}, {"filter=NAME%3D", "filter"}, {"filter=NOPE%3D1", "NOPE"}, {"filter=NAME%3D1", "filter"},
			{"filter=NAME%3D%27Ashe%27&filter-crs=EPSG:2154", "filter-crs"}, {"filter=x&filter-lang=ecql", "filter-lang"},
			{"filter=" + url.QueryEscape("S_INTERSECTS(geometry, BBOX(95,0,96,1))") + "&filter-crs=EPSG:4326", "latitude"},
			{"filter=" + url.QueryEscape("S_INTERSECTS(geometry, POINT(1e300 0))") + "&filter-crs=EPSG:3857", "EPSG:3857"},
			{"filter-lang=cql2-text", "filter"}, {"limit=0", "limit"}, {"limit=x", "limit"}, {"offset=-1", "offset"},
			{"bbox=1,2,3", "bbox"}, {"bbox=0,10,1,5", "bbox"}, {"crs=EPSG:2154", "crs"}, {"bbox-crs=EPSG:1", "bbox-crs"},
			{"CRESS_ID=abc", "CRESS_ID"}, {"datetime=yesterday", "datetime"},
		} {
			m := decode[map[string]any](t, must(t, ts.get(path+"?"+c.q, ""), 400))
			if d, _ := m["description"].(string); !strings.Contains(d, c.says) || m["code"] != mapcommons.EINVALID {
				t.Errorf("%s: %v", c.q, m)
			}
		}
	})

	t.Run("CRS", func(t *testing.T) {
		type polygon struct{ Coordinates [][][]float64 }
		first := func(q string) ([]float64, string) {
			w := ts.get(path+"?NAME=Ashe&"+q, "")
			fc := decode[ogcFC](t, must(t, w, 200))
			return decode[polygon](t, fc.Features[0].Geometry).Coordinates[0][0], w.Header().Get("Content-Crs")
		}
		lonlat, h := first("")
		if h != "<http://www.opengis.net/def/crs/OGC/1.3/CRS84>" {
			t.Errorf("Content-Crs %q", h)
		}
		latlon, h := first("crs=" + url.QueryEscape("http://www.opengis.net/def/crs/EPSG/0/4326"))
		if h != "<http://www.opengis.net/def/crs/EPSG/0/4326>" || latlon[0] != lonlat[1] || latlon[1] != lonlat[0] {
			t.Errorf("EPSG:4326 %v (%s), CRS84 %v", latlon, h, lonlat)
		}
		merc, h := first("crs=EPSG:3857")
		const r = 6378137.0
		wantX, wantY := r*lonlat[0]*math.Pi/180, r*math.Log(math.Tan(math.Pi/4+lonlat[1]*math.Pi/360))
		if h != "<http://www.opengis.net/def/crs/EPSG/0/3857>" || math.Abs(merc[0]-wantX) > 1e-6 || math.Abs(merc[1]-wantY) > 1e-6 {
			t.Errorf("EPSG:3857 %v (%s), want (%v, %v)", merc, h, wantX, wantY)
		}
		// A bbox in EPSG:3857 selects as its lon/lat equivalent.
		x0, y0 := r*-80*math.Pi/180, r*math.Log(math.Tan(math.Pi/4+35*math.Pi/360))
		x1, y1 := r*-78*math.Pi/180, r*math.Log(math.Tan(math.Pi/4+36*math.Pi/360))
		bb := strconv.FormatFloat(x0, 'f', -1, 64) + "," + strconv.FormatFloat(y0, 'f', -1, 64) + "," + strconv.FormatFloat(x1, 'f', -1, 64) + "," + strconv.FormatFloat(y1, 'f', -1, 64)
		if fc := items(t, ts, path+"?limit=1000&bbox-crs=EPSG:3857&bbox="+bb, ""); int(fc.NumberMatched) != featuresCount(t, ts, id, "bbox=-80,35,-78,36", "") {
			t.Errorf("bbox in EPSG:3857: %d", fc.NumberMatched)
		}
		// The whole square of EPSG:3857: every feature, its west edge not
		// taken for the antimeridian's east side.
		const sq = "20037508.342789244"
		if fc := items(t, ts, path+"?limit=1000&bbox-crs=EPSG:3857&bbox=-"+sq+",-"+sq+","+sq+","+sq, ""); fc.NumberMatched != 100 {
			t.Errorf("the square of EPSG:3857: %d", fc.NumberMatched)
		}
		// A single item in EPSG:4326 too.
		fc := items(t, ts, path+"?NAME=Ashe", "")
		w := ts.get(path+"/"+strconv.FormatInt(fc.Features[0].ID, 10)+"?crs=EPSG:4326", "")
		if one := decode[struct{ Geometry polygon }](t, must(t, w, 200)); one.Geometry.Coordinates[0][0][0] != lonlat[1] {
			t.Errorf("item in EPSG:4326: %v", one.Geometry.Coordinates[0][0])
		}
	})

	t.Run("ETag", func(t *testing.T) {
		w := ts.get(path+"?limit=3", "")
		must(t, w, 200)
		tag := w.Header().Get("ETag")
		if tag == "" || !strings.Contains(w.Header().Get("Cache-Control"), "public") {
			t.Fatalf("ETag %q, Cache-Control %q", tag, w.Header().Get("Cache-Control"))
		}
		w = ts.do(req{method: "GET", path: path + "?limit=3", header: map[string]string{"If-None-Match": tag}})
		must(t, w, http.StatusNotModified)
		w = ts.do(req{method: "GET", path: "/ogc/collections/" + id, header: map[string]string{"If-None-Match": tag}})
		must(t, w, 200)
	})
}

func TestOGCAntimeridianAndCSV(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	loc := ts.createCSV("?title=Dateline", "name,lat,lon\nwest,0,179.5\neast,1,-179.5\nzero,0,0\nfar,50,170\n")
	id := strings.TrimPrefix(loc, "/datasets/")
	fc := items(t, ts, "/ogc/collections/"+id+"/items?bbox=179,-10,-179,10", "")
	var names []string
	for _, f := range fc.Features {
		names = append(names, f.Properties["name"].(string))
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"east", "west"}) || fc.NumberMatched != 2 {
		t.Errorf("across the antimeridian: %v (%d)", names, fc.NumberMatched)
	}
	if n := featuresCount(t, ts, id, "bbox=179,-10,-179,10", ""); n != 2 {
		t.Errorf("features.json across the antimeridian: %d", n)
	}
	// Natural Earth's countries: Fiji and Russia cross the antimeridian.
	files := map[string]string{}
	for _, ext := range []string{"shp", "shx", "dbf", "prj"} {
		files["dataset["+ext+"]"] = realData + "naturalearth_lowres." + ext
	}
	body, ct := multipartBody(t, files, nil)
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
	ne := strconv.FormatInt(int64(decode[map[string]any](t, must(t, w, 201))["id"].(float64)), 10)
	fc = items(t, ts, "/ogc/collections/"+ne+"/items?limit=1000&bbox=175,-25,-175,75", "")
	names = nil
	for _, f := range fc.Features {
		names = append(names, f.Properties["name"].(string))
	}
	if want := featuresCount(t, ts, ne, "bbox=175,-25,-175,75", ""); len(names) != want || !slices.Contains(names, "Fiji") || !slices.Contains(names, "Russia") ||
		slices.Contains(names, "Brazil") {
		t.Errorf("countries across the antimeridian: %v; features.json %d", names, want)
	}
	// No date attribute: datetime does not apply (ignored), but must parse.
	if fc := items(t, ts, "/ogc/collections/"+id+"/items?datetime=2020-01-01/..", ""); fc.NumberMatched != 4 {
		t.Errorf("datetime without a date attribute: %d", fc.NumberMatched)
	}
	// A point in EPSG:4326: latitude first.
	one := items(t, ts, "/ogc/collections/"+id+"/items?name=far&crs=EPSG:4326", "")
	if g := decode[struct{ Coordinates []float64 }](t, one.Features[0].Geometry); !slices.Equal(g.Coordinates, []float64{50, 170}) {
		t.Errorf("EPSG:4326 point %v", g.Coordinates)
	}
}

func TestOGCPermissions(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	id := uploadNC(t, ts, "") // private to alice on an appliance
	for _, who := range []string{"", "bob"} {
		colls := decode[struct{ Collections []any }](t, must(t, ts.get("/ogc/collections", who), 200))
		if len(colls.Collections) != 0 {
			t.Errorf("%q sees %d collections", who, len(colls.Collections))
		}
		// The same refusal as the GeoCommons routes: 401 anonymous, 404 bob.
		gc := ts.get("/datasets/"+id+".json", who).Code
		gcf := ts.get("/datasets/"+id+"/features.json", who).Code
		if gc == 200 || gcf == 200 {
			t.Fatalf("the GeoCommons routes let %q in", who)
		}
		for _, p := range []string{"", "/queryables", "/schema", "/items", "/items/1"} {
			if got := ts.get("/ogc/collections/"+id+p, who).Code; got != gc {
				t.Errorf("%q on %s: %d, GeoCommons %d", who, p, got, gc)
			}
			// And for an id that does not exist: the same.
			if got := ts.get("/ogc/collections/9999"+p, who).Code; got != gc {
				t.Errorf("%q on missing %s: %d, GeoCommons %d", who, p, got, gc)
			}
		}
	}
	for _, who := range []string{"alice", "admin"} {
		colls := decode[struct{ Collections []any }](t, must(t, ts.get("/ogc/collections", who), 200))
		if len(colls.Collections) != 1 {
			t.Errorf("%s sees %d collections", who, len(colls.Collections))
		}
		fc := items(t, ts, "/ogc/collections/"+id+"/items?limit=1000", who)
		if fc.NumberMatched != 100 {
			t.Errorf("%s: %d features", who, fc.NumberMatched)
		}
		if cc := ts.get("/ogc/collections/"+id+"/items", who).Header().Get("Cache-Control"); !strings.HasPrefix(cc, "private") {
			t.Errorf("Cache-Control %q for %s", cc, who)
		}
	}
	// Shared for view only: the collection shows, its items are refused as features.json's are.
	must(t, ts.do(req{method: "PUT", path: "/datasets/" + id + ".json?permissions[][group_id]=everyone&permissions[][permissions][view]=1", user: "alice"}), 200)
	must(t, ts.get("/ogc/collections/"+id, "bob"), 200)
	if got, want := ts.get("/ogc/collections/"+id+"/items", "bob").Code, ts.get("/datasets/"+id+"/features.json", "bob").Code; got != want || got == 200 {
		t.Errorf("view only: items %d, features.json %d", got, want)
	}
}

// TestOGCTransport: /ogc answers are gzip-encoded when asked, and follow
// --cors-origins as the rest of the API.
func TestOGCTransport(t *testing.T) {
	t.Parallel()
	app := "https://app.example.org"
	ts := newServer(t, func(c *api.Config) { c.CORSOrigins = []string{app} })
	id := uploadNC(t, ts, "")
	path := "/ogc/collections/" + id + "/items?limit=50"
	plain := ts.get(path, "")
	z := ts.do(req{method: "GET", path: path, header: map[string]string{"Accept-Encoding": "gzip"}})
	must(t, z, 200)
	if z.Header().Get("Content-Encoding") != "gzip" || plain.Header().Get("Content-Encoding") != "" || z.Body.Len() >= plain.Body.Len() {
		t.Errorf("gzip: %q, %d bytes against %d", z.Header().Get("Content-Encoding"), z.Body.Len(), plain.Body.Len())
	}
	w := ts.do(req{method: "GET", path: path, user: "alice", header: map[string]string{"Origin": app}})
	must(t, w, 200)
	if h := w.Header(); h.Get("Access-Control-Allow-Origin") != app || h.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("CORS: %v", h)
	}
	w = ts.do(req{method: "GET", path: path, header: map[string]string{"Origin": "https://evil.example"}})
	if h := w.Header(); h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS for an unlisted origin: %v", h)
	}
	// Other methods: 405, as an OGC exception.
	m := decode[map[string]any](t, must(t, ts.do(req{method: "DELETE", path: "/ogc/collections/" + id, user: "alice"}), 405))
	if m["description"] == nil {
		t.Errorf("405 body %v", m)
	}
}

// TestOGCBounded: items (count and scan) run under --query-timeout.
func TestOGCBounded(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "")
	ts.cfg.QueryTimeout = time.Nanosecond
	ts.restart()
	for _, p := range []string{"/items", "/items/1"} {
		w := ts.get("/ogc/collections/"+id+p+"?f=json", "")
		m := decode[map[string]any](t, must(t, w, http.StatusServiceUnavailable))
		if m["code"] != mapcommons.ETIMEOUT {
			t.Errorf("%s: %v", p, m)
		}
	}
}
