package api_test

// Tests of the OGC documents about the service and its collections
// against abstract tests of the classes /ogc/conformance declares.

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/storetest"
)

// TestOGCLandingServiceDoc: /req/oas30/definition-1 wants the landing page
// to link the API definition (service-desc) and its HTML view
// (service-doc), and the service-doc link to answer HTML.
func TestOGCLandingServiceDoc(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	landing := decode[struct{ Links []ogcLink }](t, must(t, ts.get("/ogc", ""), 200))
	href := link(landing.Links, "service-doc", "text/html")
	if href != base+"/api.html" {
		t.Fatalf("service-doc link %q, want %s/api.html; links %+v", href, base, landing.Links)
	}
	w := ts.get(pathOf(t, href), "")
	if body := string(must(t, w, 200)); !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") || !strings.Contains(body, "<html") {
		t.Errorf("service-doc answered %s: %.200s", w.Header().Get("Content-Type"), body)
	}
}

// createDated creates a dataset of alice's with a point per value of its
// date attribute "when" (nil: no value), and returns its id.
func createDated(t *testing.T, ts *testServer, title string, values ...any) string {
	t.Helper()
	attrs := []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}, {Name: "when", Type: mapcommons.AttrDate}}
	var feats []mapcommons.Feature
	for i, v := range values {
		feats = append(feats, mapcommons.Feature{Values: []any{"f" + strconv.Itoa(i), v}, Geometry: wkb.AppendPoint(nil, float64(i), 1)})
	}
	return createOfAlice(t, ts, title, attrs, feats)
}

// createOfAlice creates, straight in the store, a dataset of alice's with
// these attributes (normalised as an upload's are) and features, and
// returns its id.
func createOfAlice(t *testing.T, ts *testServer, title string, attrs []mapcommons.Attribute, feats []mapcommons.Feature) string {
	t.Helper()
	alice, err := ts.svc.Users.FindUserByLogin(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := mapcommons.NormalizeAttributes(attrs); err != nil {
		t.Fatal(err)
	}
	ds := &mapcommons.Dataset{OwnerID: alice.ID, Type: "csv", Metadata: mapcommons.Metadata{Title: title}}
	if err := ts.svc.Datasets.CreateDataset(t.Context(), ds, &storetest.SliceSource{Attrs: attrs, Features: feats}); err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(ds.ID, 10)
}

// temporalOf is the temporal interval of a collection's document.
func temporalOf(t *testing.T, body []byte) [][2]*string {
	t.Helper()
	return decode[struct {
		Extent struct {
			Temporal struct{ Interval [][2]*string }
		}
	}](t, body).Extent.Temporal.Interval
}

// TestOGCTemporalExtentDateTimes: /req/core/sfc-md-op wants the ends of a
// temporal interval as RFC 3339 date-times (or null). A date column's
// interval runs from the first instant of its first day to the last second
// of its last day; timestamps are given in UTC.
func TestOGCTemporalExtentDateTimes(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	for _, c := range []struct {
		name   string
		values []any
		lo, hi string
	}{
		{"dates", []any{"2021-06-01", "2021-04-16", nil, "2022-12-31"}, "2021-04-16T00:00:00Z", "2022-12-31T23:59:59Z"},
		{"timestamps", []any{"2021-04-16T08:30:00Z", "2021-05-01T10:00:00.5Z"}, "2021-04-16T08:30:00Z", "2021-05-01T10:00:00.5Z"},
		{"offsets", []any{"2021-04-16T08:30:00+02:00", "2021-04-16T09:00:00+02:00"}, "2021-04-16T06:30:00Z", "2021-04-16T07:00:00Z"},
		{"sqlite", []any{"2021-04-16 08:30:00", "2021-04-17 09:00:00"}, "2021-04-16T08:30:00Z", "2021-04-17T09:00:00Z"},
	} {
		id := createDated(t, ts, c.name, c.values...)
		iv := temporalOf(t, must(t, ts.get("/ogc/collections/"+id, "alice"), 200))
		if len(iv) != 1 || iv[0][0] == nil || *iv[0][0] != c.lo || iv[0][1] == nil || *iv[0][1] != c.hi {
			t.Errorf("%s: interval %s, want [%s, %s]", c.name, jsonOf(iv), c.lo, c.hi)
			continue
		}
		for _, end := range iv[0] {
			if _, err := time.Parse(time.RFC3339Nano, *end); err != nil {
				t.Errorf("%s: %q is not an RFC 3339 date-time", c.name, *end)
			}
		}
	}
	// Text that is no time is no end (null, as an open end).
	id := createDated(t, ts, "text", "2021-04-16", "soon")
	if iv := temporalOf(t, must(t, ts.get("/ogc/collections/"+id, "alice"), 200)); len(iv) != 1 || iv[0][0] == nil || *iv[0][0] != "2021-04-16T00:00:00Z" || iv[0][1] != nil {
		t.Errorf("text: interval %s", jsonOf(iv))
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestOGCCollectionsEntries: /req/core/sfc-md-success wants each entry of
// /ogc/collections to be the collection's own document,
// /ogc/collections/{id}, temporal extent included, for every caller.
func TestOGCCollectionsEntries(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	uploadNC(t, ts, "")
	createDated(t, ts, "dates", "2021-06-01", "2021-04-16")
	createDated(t, ts, "timestamps", "2021-04-16T08:30:00Z", nil)
	createDated(t, ts, "no values", nil, nil)
	dated := 0
	for _, user := range []string{"", "alice", "bob"} {
		colls := decode[struct{ Collections []map[string]any }](t, must(t, ts.get("/ogc/collections", user), 200)).Collections
		if len(colls) != 4 {
			t.Fatalf("%q: %d collections, want 4", user, len(colls))
		}
		for _, entry := range colls {
			id, _ := entry["id"].(string)
			doc := decode[map[string]any](t, must(t, ts.get("/ogc/collections/"+id, user), 200))
			if got, want := jsonOf(entry), jsonOf(doc); got != want {
				t.Errorf("%q: the entry of collection %s\n%s\nis not its document\n%s", user, id, got, want)
			}
			if ext, _ := doc["extent"].(map[string]any); ext["temporal"] != nil {
				dated++
			}
		}
	}
	if dated < 2 { // alice's, at least
		t.Errorf("%d collections with a temporal extent", dated)
	}
}

// TestOGCQueryablesLinkHeader: Part 3's get-queryables-uris wants GET and
// HEAD of a collection to link its queryables in a Link header; the JSON
// links keep the same link.
func TestOGCQueryablesLinkHeader(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "")
	href := base + "/ogc/collections/nc-" + id + "/queryables"
	want := "<" + href + `>; rel="http://www.opengis.net/def/rel/ogc/1.0/queryables"; type="application/schema+json"`
	for _, r := range []req{{method: "GET", path: "/ogc/collections/" + id}, {method: "HEAD", path: "/ogc/collections/" + id},
		{method: "GET", path: "/ogc/collections/" + id + "?f=html"}} {
		w := ts.do(r)
		must(t, w, 200)
		if got := w.Header().Values("Link"); !slices.Contains(got, want) {
			t.Errorf("%s %s: Link %q, want %s", r.method, r.path, got, want)
		}
	}
	doc := decode[struct{ Links []ogcLink }](t, must(t, ts.get("/ogc/collections/"+id, ""), 200))
	if got := link(doc.Links, "http://www.opengis.net/def/rel/ogc/1.0/queryables", "application/schema+json"); got != href {
		t.Errorf("queryables link %q, want %s", got, href)
	}
	must(t, ts.get(pathOf(t, href), ""), 200)
}

// TestOGCQueryablesSchema: Part 3's get-queryables wants a JSON Schema
// 2020-12 document that says whether properties other than the queryables
// are taken (additionalProperties: false, as filters naming one are
// refused), and the formats of temporal properties: "date" for a column
// of dates, "date-time" for one of date-times (a GeoPackage DATETIME's
// midnights are dates), none for one holding other text.
func TestOGCQueryablesSchema(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	for _, c := range []struct {
		name   string
		values []any
		format string
	}{
		{"dates", []any{"2021-06-01", nil, "2021-04-16"}, "date"},
		{"timestamps", []any{"2021-04-16T08:30:00Z", "2021-05-01T10:00:00.5Z"}, "date-time"},
		{"datetime", []any{"2021-04-16", "2021-04-16T08:30:00Z"}, "date-time"},
		{"text", []any{"2021-04-16", "soon"}, ""},
	} {
		id := createDated(t, ts, c.name, c.values...)
		w := ts.get("/ogc/collections/"+id+"/queryables", "")
		q := decode[struct {
			Schema     string `json:"$schema"`
			Additional *bool  `json:"additionalProperties"`
			Properties map[string]map[string]string
		}](t, must(t, w, 200))
		if q.Schema != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema %q", c.name, q.Schema)
		}
		if q.Additional == nil || *q.Additional {
			t.Errorf("%s: additionalProperties %v, want false", c.name, q.Additional)
		}
		when, ok := q.Properties["when"]
		if !ok || when["type"] != "string" || when["format"] != c.format {
			t.Errorf("%s: when %v, want a string of format %q", c.name, when, c.format)
		}
		if _, ok := when["format"]; c.format == "" && ok {
			t.Errorf("%s: when %v has a format", c.name, when)
		}
		// The claim of additionalProperties: a property that is no
		// queryable is refused wherever a request names one.
		for _, query := range []string{"filter=" + url.QueryEscape("nope = 1"), "nope=1", "sortby=nope",
			"filter-lang=cql2-json&filter=" + url.QueryEscape(`{"op":"=","args":[{"property":"nope"},1]}`)} {
			must(t, ts.get("/ogc/collections/"+id+"/items?"+query, ""), 400)
		}
	}
}

// TestOGCDateMetadataOnce: the temporal extent and the format of a date
// attribute, which read the features, are read once per version of the
// dataset, however many collections pages, collection documents and
// queryables ask; a change of the features reads them again.
func TestOGCDateMetadataOnce(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := createDated(t, ts, "dates", "2021-06-01", "2021-04-16")
	reads := &countingFeatures{}
	ts.rebuild(nil, func(s *mapcommons.Services) { reads.FeatureService = s.Features; s.Features = reads })
	ask := func() (interval [][2]*string, format string) {
		t.Helper()
		for range 2 {
			must(t, ts.get("/ogc/collections", "alice"), 200)
			interval = temporalOf(t, must(t, ts.get("/ogc/collections/"+id, "alice"), 200))
			format = decode[struct{ Properties map[string]map[string]string }](t, must(t, ts.get("/ogc/collections/"+id+"/queryables", "alice"), 200)).Properties["when"]["format"]
		}
		return interval, format
	}
	iv, format := ask()
	if n := reads.scans.Load() + reads.groups.Load(); n != 2 { // the interval, and the one test of the values (all dates)
		t.Errorf("%d reads of the store, want 2", n)
	}
	if jsonOf(iv) != `[["2021-04-16T00:00:00Z","2021-06-01T23:59:59Z"]]` || format != "date" {
		t.Errorf("interval %s, format %q", jsonOf(iv), format)
	}
	n, _ := strconv.ParseInt(id, 10, 64)
	src := &storetest.SliceSource{Attrs: []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}, {Name: "when", Type: mapcommons.AttrDate}},
		Features: []mapcommons.Feature{{Values: []any{"late", "2021-07-01T12:00:00Z"}, Geometry: wkb.AppendPoint(nil, 3, 1)}}}
	if _, err := ts.svc.Features.AddFeatures(t.Context(), n, src); err != nil {
		t.Fatal(err)
	}
	reads.scans.Store(0)
	reads.groups.Store(0)
	iv, format = ask()
	if n := reads.scans.Load() + reads.groups.Load(); n != 3 { // the interval, and two tests of the values (not all dates; all dates or date-times)
		t.Errorf("after a change: %d reads of the store, want 3", n)
	}
	if jsonOf(iv) != `[["2021-04-16T00:00:00Z","2021-07-01T12:00:00Z"]]` || format != "date-time" {
		t.Errorf("after a change: interval %s, format %q", jsonOf(iv), format)
	}
}

// TestOGCConformanceCommon: /ogc/conformance declares OGC API Common
// Part 1 (core, landing-page, json, html, oas30), Common Part 2's
// collections and Part 5's schemas, and the landing page and the
// conformance hold what those classes ask: links to the API definition
// (service-desc, OpenAPI 3.0; service-doc), the conformance and the
// collections (data), and JSON and HTML forms.
func TestOGCConformanceCommon(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	conf := decode[struct{ ConformsTo []string }](t, must(t, ts.get("/ogc/conformance", ""), 200))
	for _, c := range []string{
		"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/core",
		"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/landing-page",
		"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/json",
		"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/html",
		"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/oas30",
		"http://www.opengis.net/spec/ogcapi-common-2/1.0/conf/collections",
		"https://www.opengis.net/spec/ogcapi-common-2/1.0/conf/collections",
		"http://www.opengis.net/spec/ogcapi-common-3/1.0/conf/schemas",
		"http://www.opengis.net/spec/ogcapi-common-3/1.0/conf/advanced-property-roles",
		"http://www.opengis.net/spec/ogcapi-common-3/1.0/conf/returnables-and-receivables",
		"http://www.opengis.net/spec/ogcapi-features-5/1.0/conf/schemas",
		"http://www.opengis.net/spec/ogcapi-features-5/1.0/conf/core-roles-features",
	} {
		if !slices.Contains(conf.ConformsTo, c) {
			t.Errorf("conformance lacks %s", c)
		}
	}
	landing := decode[struct{ Links []ogcLink }](t, must(t, ts.get("/ogc", ""), 200))
	for _, l := range []struct{ rel, typ, href string }{
		{"service-desc", "application/vnd.oai.openapi+json;version=3.0", base + "/api"},
		{"service-doc", "text/html", base + "/api.html"},
		{"conformance", "application/json", base + "/ogc/conformance"},
		{"data", "application/json", base + "/ogc/collections"},
	} {
		if got := link(landing.Links, l.rel, l.typ); got != l.href {
			t.Errorf("landing link %s (%s) %q, want %s", l.rel, l.typ, got, l.href)
		}
	}
	for _, p := range []string{"/ogc", "/ogc/conformance", "/ogc/collections"} {
		if w := ts.get(p+"?f=html", ""); !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Errorf("%s?f=html: %d %s", p, w.Code, w.Header().Get("Content-Type"))
		}
		if w := ts.get(p+"?f=json", ""); !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			t.Errorf("%s?f=json: %d %s", p, w.Code, w.Header().Get("Content-Type"))
		}
	}
	var api struct{ OpenAPI string }
	if err := json.Unmarshal(must(t, ts.get("/api", ""), 200), &api); err != nil || !strings.HasPrefix(api.OpenAPI, "3.0") {
		t.Errorf("/api: openapi %q (%v)", api.OpenAPI, err)
	}
}
