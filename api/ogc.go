package api

// OGC API – Features (Part 1 Core, Part 2 CRS by reference) under /ogc:
// the same datasets, with the same permissions and authentication as the
// GeoCommons routes, as collections of features. The GeoCommons API owns
// /datasets, /maps and /search at the root, and OGC clients start from a
// landing page URL: the prefix keeps the two namespaces apart. Errors under
// /ogc are OGC exceptions (Server.Error writes them, see ogcPath).
//
// This file holds the documents about the service and its collections;
// ogc_items.go the features.

import (
	"encoding/json"
	"html/template"
	"mapcommons/cql2"
	"mapcommons/params"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/web"
)

// OGC media types and link relations.
const (
	ogcJSON          = "application/json"
	ogcGeoJSON       = "application/geo+json"
	ogcHTML          = "text/html"
	ogcSchema        = "application/schema+json"
	ogcOpenAPI       = "application/vnd.oai.openapi+json;version=3.0"
	relTilesets      = "http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector"
	relTilingSchemes = "http://www.opengis.net/def/rel/ogc/1.0/tiling-schemes"
	relQueryable     = "http://www.opengis.net/def/rel/ogc/1.0/queryables"
	relSchema        = "http://www.opengis.net/def/rel/ogc/1.0/schema"
	relConform       = "http://www.opengis.net/def/rel/ogc/1.0/conformance"
	relData          = "http://www.opengis.net/def/rel/ogc/1.0/data"
)

// CRSs of answers: CRS84 is the stored lon/lat.
const (
	crsCRS84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
	crs4326  = "http://www.opengis.net/def/crs/EPSG/0/4326"
	crs3857  = "http://www.opengis.net/def/crs/EPSG/0/3857"
)

// ogcCRSs are the CRSs every collection answers in.
var ogcCRSs = []string{crsCRS84, crs4326, crs3857}

// ogcConformance are the conformance classes of /ogc/conformance. The
// tiles classes are served by the tiles routes (/ogc/collections/{id}/tiles).
var ogcConformance = slices.Concat([]string{
	"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
	"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
	"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/html",
	"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
	"http://www.opengis.net/spec/ogcapi-features-2/1.0/conf/crs",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/core",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tileset",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tilesets-list",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/geodata-tilesets",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/mvt",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/png", // map tiles (ogcmaptiles.go)
	// OGC API – Maps Part 1 (20-058): a collection's map, as PNG, with
	// bgcolor and transparent.
	"http://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/core",
	"http://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/collection-map",
	"http://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/background",
	"http://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/png",
	// Tiles' OpenAPI 3.0 class: /api describes every tiles path with the
	// standard's parameter names and every status the routes answer (the
	// api tests check each answer against it).
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/oas30",
	"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables",
	"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables-query-parameters",
	"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter",
	"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter",
	// Part 4: POST, PUT and DELETE of items, and PATCH (ogc_edit.go).
	"http://www.opengis.net/spec/ogcapi-features-4/1.0/conf/create-replace-delete",
	"http://www.opengis.net/spec/ogcapi-features-4/1.0/conf/update",
	// OGC API Common Part 1 (19-072): the landing page links the API
	// definition (service-desc, service-doc), the conformance and the
	// collections (data); every document has its JSON and HTML forms; the
	// definition is OpenAPI 3.0 (/api).
	"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/core",
	"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/landing-page",
	"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/json",
	"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/html",
	"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/oas30",
	// Common Part 2 (20-024), Collections: /ogc/collections and
	// /ogc/collections/{id}. The published standard spells the URI with
	// https, clients (and pygeoapi) with http: both are declared.
	"http://www.opengis.net/spec/ogcapi-common-2/1.0/conf/collections",
	"https://www.opengis.net/spec/ogcapi-common-2/1.0/conf/collections",
	// Features Part 5 / Common Part 3, Schemas (23-058r2, published as
	// ogcapi-common-3): /ogc/collections/{id}/schema (returnables and
	// receivables) is such a schema, with the roles id, primary-geometry
	// and primary-instant (advanced property roles).
	"http://www.opengis.net/spec/ogcapi-common-3/1.0/conf/schemas",
	"http://www.opengis.net/spec/ogcapi-common-3/1.0/conf/advanced-property-roles",
	"http://www.opengis.net/spec/ogcapi-common-3/1.0/conf/returnables-and-receivables",
	// The same classes by the URIs of the Features Part 5 draft, which
	// pygeoapi declares and clients look for.
	"http://www.opengis.net/spec/ogcapi-features-5/1.0/conf/schemas",
	"http://www.opengis.net/spec/ogcapi-features-5/1.0/conf/core-roles-features",
	"http://www.opengis.net/spec/ogcapi-features-5/1.0/conf/returnables-and-receivables",
}, cql2.ConformanceClasses) // as package cql2 and the engine implement them

// ogcLink is a link of an OGC document.
type ogcLink struct {
	Href  string `json:"href"`
	Rel   string `json:"rel"`
	Type  string `json:"type,omitempty"`
	Title string `json:"title,omitempty"`
	// Templated marks an href with {placeholders} (OGC API Tiles).
	Templated bool `json:"templated,omitempty"`
}

// ogcRoutes registers the OGC API Features routes (called from routes).
func (s *Server) ogcRoutes(m *routeTable) {
	m.Handle("GET /ogc", s.handle(s.handleOGCLanding))
	m.Handle("GET /ogc/conformance", s.handle(s.handleOGCConformance))
	m.Handle("GET /ogc/functions", s.handle(s.handleOGCFunctions))
	m.Handle("GET /ogc/collections", s.handle(s.bounded(s.handleOGCCollections)))
	m.Handle("GET /ogc/collections/{id}", s.handle(s.bounded(s.handleOGCCollection)))
	m.Handle("GET /ogc/collections/{id}/queryables", s.handle(s.handleOGCQueryables))
	m.Handle("GET /ogc/collections/{id}/schema", s.handle(s.handleOGCSchema))
	m.Handle("GET /ogc/collections/{id}/items", s.handle(s.bounded(s.handleOGCItems)))
	m.Handle("GET /ogc/collections/{id}/items/{featureId}", s.handle(s.bounded(s.handleOGCItem)))
	// Part 4: create, replace, update and delete items (ogc_edit.go).
	m.Handle("POST /ogc/collections/{id}/items", s.handle(s.handleOGCItemCreate))
	m.Handle("PUT /ogc/collections/{id}/items/{featureId}", s.handle(s.handleOGCItemReplace))
	m.Handle("PATCH /ogc/collections/{id}/items/{featureId}", s.handle(s.handleOGCItemUpdate))
	m.Handle("DELETE /ogc/collections/{id}/items/{featureId}", s.handle(s.handleOGCItemDelete))
	for _, p := range []string{"/ogc", "/ogc/conformance", "/ogc/functions", "/ogc/collections", "/ogc/collections/{id}",
		"/ogc/collections/{id}/queryables", "/ogc/collections/{id}/schema", "/ogc/collections/{id}/items", "/ogc/collections/{id}/items/{featureId}"} {
		m.Handle(p, s.handle(methodNotAllowed))
	}
}

// ogcPath reports whether a request is one of the OGC API's, whose errors
// are OGC exceptions.
func ogcPath(r *http.Request) bool {
	return r.URL.Path == "/ogc" || strings.HasPrefix(r.URL.Path, "/ogc/")
}

// ogcBase is the absolute root of the OGC API's links.
func (s *Server) ogcBase(r *http.Request) string { return s.baseURL(r) + "/ogc" }

// ogcFormat decides between JSON ("json") and HTML ("html"): the f
// parameter first, then a format suffix of the path (items.html), then
// the Accept header (a browser's text/html first), else JSON.
func ogcFormat(r *http.Request) (string, error) {
	if f, ok := r.URL.Query()["f"]; ok {
		switch strings.ToLower(f[0]) {
		case "json", "geojson", "jsonschema":
			return "json", nil
		case "html":
			return "html", nil
		}
		return "", mapcommons.Errorf(mapcommons.EINVALID, "f: %q is not a format of this API (json, html)", f[0])
	}
	ri := info(r)
	if last := ri.path[strings.LastIndexByte(ri.path, '/')+1:]; strings.Contains(last, ".") {
		switch {
		case ri.format == "json", ri.format == "geojson" && strings.Contains(ri.path, "/items"):
			return "json", nil
		case ri.format == "html":
			return "html", nil
		}
		return "", mapcommons.Errorf(mapcommons.ENOTFOUND, "no %s form of %s (json, html)", ri.format, r.URL.Path)
	}
	if preferHTML(r.Header.Values("Accept")) {
		return "html", nil
	}
	return "json", nil
}

// preferHTML reports whether an Accept header ranks text/html above every
// JSON type (a browser's does; GDAL's, QGIS's and curl's do not).
func preferHTML(accept []string) bool {
	html, jsonQ := -1.0, -1.0
	for _, v := range accept {
		for part := range strings.SplitSeq(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if qs, ok := params["q"]; ok {
				if x, err := strconv.ParseFloat(qs, 64); err == nil {
					q = x
				}
			}
			switch {
			case mt == "text/html":
				html = max(html, q)
			case mt == "application/json" || strings.HasSuffix(mt, "+json"):
				jsonQ = max(jsonQ, q)
			}
		}
	}
	return html > 0 && html > jsonQ
}

// ogcAnswer writes a JSON document v with its content type, or its HTML
// page.
func (s *Server) ogcAnswer(w http.ResponseWriter, r *http.Request, f, contentType string, v any, page *ogcPage) error {
	varyAccept(w)
	if f == "html" {
		return page.write(w, s.assets)
	}
	if callbackOf(r) != "" {
		return s.writeJSON(w, r, http.StatusOK, v)
	}
	out := startJSON(w, r)
	w.Header().Set("Content-Type", contentType)
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	out.buf = append(out.buf, b...)
	return out.Close()
}

// varyAccept says that the answer depends on Accept (JSON or HTML), once.
func varyAccept(w http.ResponseWriter) {
	for _, v := range w.Header().Values("Vary") {
		if strings.Contains(v, "Accept") && !strings.Contains(v, "Accept-") {
			return
		}
	}
	w.Header().Add("Vary", "Accept")
}

// selfLinks are a document's self link in format f and its alternate in
// the other format, for the document at path (under /ogc) with query q.
func (s *Server) selfLinks(r *http.Request, path string, q url.Values, f, jsonType string) []ogcLink {
	href := func(format string) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("f", format)
		return s.ogcBase(r) + path + "?" + v.Encode()
	}
	self, alt := ogcLink{Rel: "self", Type: jsonType, Title: "this document", Href: href("json")},
		ogcLink{Rel: "alternate", Type: ogcHTML, Title: "this document as HTML", Href: href("html")}
	if f == "html" {
		self, alt = ogcLink{Rel: "self", Type: ogcHTML, Title: "this document", Href: href("html")},
			ogcLink{Rel: "alternate", Type: jsonType, Title: "this document as JSON", Href: href("json")}
	}
	return []ogcLink{self, alt}
}

// onlyParams refuses any query parameter of r but the allowed ones (and
// the JSONP callback): an OGC server SHOULD say a parameter is unknown.
func onlyParams(r *http.Request, allowed ...string) error {
	for k := range r.URL.Query() {
		if k != "f" && k != "callback" && !contains(allowed, k) {
			return mapcommons.Errorf(mapcommons.EINVALID, "%s: unknown parameter", k)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ogcLandingDoc is the landing page.
type ogcLandingDoc struct {
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Links       []ogcLink `json:"links"`
}

// handleOGCLanding answers GET /ogc.
func (s *Server) handleOGCLanding(w http.ResponseWriter, r *http.Request) error {
	f, err := ogcFormat(r)
	if err != nil {
		return err
	}
	if err := onlyParams(r); err != nil {
		return err
	}
	base := s.ogcBase(r)
	d := ogcLandingDoc{Title: siteName, Description: "The datasets of this " + siteName + " server as OGC API Features collections (and vector tiles)."}
	d.Links = append(s.selfLinks(r, "", nil, f, ogcJSON),
		ogcLink{Href: s.baseURL(r) + "/api", Rel: "service-desc", Type: ogcOpenAPI, Title: "the API definition (OpenAPI 3.0)"},
		ogcLink{Href: s.baseURL(r) + "/api.html", Rel: "service-doc", Type: ogcHTML, Title: "the API documentation (HTML)"},
		ogcLink{Href: base + "/conformance", Rel: "conformance", Type: ogcJSON, Title: "conformance classes"},
		ogcLink{Href: base + "/conformance", Rel: relConform, Type: ogcJSON, Title: "conformance classes"},
		ogcLink{Href: base + "/collections", Rel: "data", Type: ogcJSON, Title: "the collections (datasets)"},
		ogcLink{Href: base + "/collections", Rel: relData, Type: ogcJSON, Title: "the collections (datasets)"},
		ogcLink{Href: base + "/tileMatrixSets", Rel: relTilingSchemes, Type: ogcJSON, Title: "tile matrix sets"},
		ogcLink{Href: base + "/functions", Rel: relFunctions, Type: ogcJSON, Title: "the functions a filter may call"})
	return s.ogcAnswer(w, r, f, ogcJSON, d, &ogcPage{Title: d.Title, Description: d.Description, Links: d.Links})
}

// handleOGCConformance answers GET /ogc/conformance.
func (s *Server) handleOGCConformance(w http.ResponseWriter, r *http.Request) error {
	f, err := ogcFormat(r)
	if err != nil {
		return err
	}
	if err := onlyParams(r); err != nil {
		return err
	}
	page := &ogcPage{Title: "Conformance", Columns: []string{"conformance class"}}
	for _, c := range ogcConformance {
		page.Rows = append(page.Rows, []string{c})
	}
	return s.ogcAnswer(w, r, f, ogcJSON, map[string][]string{"conformsTo": ogcConformance}, page)
}

// ogcCollectionDoc is a collection: one dataset.
type ogcCollectionDoc struct {
	ID          string     `json:"id"`
	Title       string     `json:"title"`
	Description string     `json:"description,omitempty"`
	Keywords    []string   `json:"keywords,omitempty"`
	Extent      *ogcExtent `json:"extent,omitempty"`
	ItemType    string     `json:"itemType"`
	CRS         []string   `json:"crs"`
	StorageCRS  string     `json:"storageCrs"`
	// NumberMatched is the dataset's feature count (an extension, cheap:
	// the dataset row holds it).
	NumberMatched int64     `json:"numberMatched"`
	Links         []ogcLink `json:"links"`
}

// ogcExtent is a collection's extent: its bounding box and, when it has a
// date attribute, the interval of its values.
type ogcExtent struct {
	Spatial  *ogcSpatial  `json:"spatial,omitempty"`
	Temporal *ogcTemporal `json:"temporal,omitempty"`
}

type ogcSpatial struct {
	BBox [][4]float64 `json:"bbox"`
	CRS  string       `json:"crs"`
}

type ogcTemporal struct {
	Interval [][2]*string `json:"interval"`
	TRS      string       `json:"trs"`
}

// collectionDoc is the collection of a dataset (as a search result holds
// it, or a whole dataset).
func (s *Server) collectionDoc(r *http.Request, id int64, title, description, tags string, extent *mapcommons.BBox, count int64) *ogcCollectionDoc {
	name := mapcommons.ReadableName(title, id)
	base := s.ogcBase(r) + "/collections/" + name
	d := &ogcCollectionDoc{ID: name, Title: title, Description: description, Keywords: splitTags(tags),
		ItemType: "feature", CRS: ogcCRSs, StorageCRS: crsCRS84, NumberMatched: count}
	if d.Title == "" {
		d.Title = "Dataset " + strconv.FormatInt(id, 10)
	}
	if extent != nil {
		d.Extent = &ogcExtent{Spatial: &ogcSpatial{BBox: [][4]float64{{extent.W, extent.S, extent.E, extent.N}}, CRS: crsCRS84}}
	}
	d.Links = []ogcLink{
		{Href: base, Rel: "self", Type: ogcJSON, Title: "this collection"},
		{Href: base + "?f=html", Rel: "alternate", Type: ogcHTML, Title: "this collection as HTML"},
		{Href: base + "/items", Rel: "items", Type: ogcGeoJSON, Title: "the features"},
		{Href: base + "/items?f=html", Rel: "items", Type: ogcHTML, Title: "the features as HTML"},
		{Href: base + "/queryables", Rel: relQueryable, Type: ogcSchema, Title: "the queryable properties"},
		{Href: base + "/schema", Rel: relSchema, Type: ogcSchema, Title: "the schema of the features"},
		{Href: base + "/tiles", Rel: relTilesets, Type: ogcJSON, Title: "vector tiles"},
		{Href: base + "/map/tiles", Rel: relTilesetsMap, Type: ogcJSON, Title: "map tiles (PNG)"},
		{Href: base + "/map", Rel: relMap, Type: pngType, Title: "the collection as a map (PNG)"},
		{Href: s.datasetLink(r, id), Rel: "describedby", Type: ogcJSON, Title: "the dataset in the GeoCommons API"},
	}
	return d
}

// firstLink is the first of links with rel, or nil.
func firstLink(links []ogcLink, rel string) *ogcLink {
	for i := range links {
		if links[i].Rel == rel {
			return &links[i]
		}
	}
	return nil
}

// firstLinkType is the first of links with relation rel and media type
// typ, or nil.
func firstLinkType(links []ogcLink, rel, typ string) *ogcLink {
	for i := range links {
		if links[i].Rel == rel && links[i].Type == typ {
			return &links[i]
		}
	}
	return nil
}

// ogcCollectionsLimit is the size of a page of /ogc/collections.
const ogcCollectionsLimit = mapcommons.MaxSearchLimit

// handleOGCCollections answers GET /ogc/collections: the datasets the
// caller may view (the visibility of /datasets.json and search), oldest
// first, by pages of limit (at most 100; offset and a next link).
func (s *Server) handleOGCCollections(w http.ResponseWriter, r *http.Request) error {
	privateAnswer(w) // the collections the caller may view
	f, err := ogcFormat(r)
	if err != nil {
		return err
	}
	if err := onlyParams(r, "limit", "offset"); err != nil {
		return err
	}
	limit, offset, err := ogcPaging(r, ogcCollectionsLimit, ogcCollectionsLimit)
	if err != nil {
		return err
	}
	if s.svc.Search == nil {
		return mapcommons.Errorf(mapcommons.ENOTIMPLEMENTED, "listing datasets is not available on this store")
	}
	filter := mapcommons.SearchFilter{Model: mapcommons.ModelOverlay, Sort: mapcommons.SortCreated,
		Offset: offset, Limit: int(limit), Visibility: s.policy.SearchVisibility(caller(r))}
	results, total, err := s.svc.Search.Search(r.Context(), filter)
	if err != nil {
		return err
	}
	doc := struct {
		Collections    []*ogcCollectionDoc `json:"collections"`
		Links          []ogcLink           `json:"links"`
		NumberMatched  int64               `json:"numberMatched"`
		NumberReturned int                 `json:"numberReturned"`
	}{Collections: []*ogcCollectionDoc{}, NumberMatched: total, NumberReturned: len(results)}
	page := &ogcPage{Title: "Collections", Columns: []string{"id", "title", "features", "description"}}
	for _, res := range results {
		// The entry of a collection is its document, /ogc/collections/{id}'s
		// (/req/core/sfc-md-success): made of the dataset, the same way; of the
		// search result when the dataset is gone since the search.
		var c *ogcCollectionDoc
		switch ds, err := s.svc.Datasets.FindDatasetByID(r.Context(), res.ID); {
		case err == nil:
			if c, err = s.ogcCollection(r, ds); err != nil {
				return err
			}
		case mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND:
			desc := ""
			if res.Description != nil {
				desc = *res.Description
			}
			c = s.collectionDoc(r, res.ID, res.Title, desc, res.Tags, res.Extent, res.FeatureCount)
		default:
			return err
		}
		doc.Collections = append(doc.Collections, c)
		page.Rows = append(page.Rows, []string{c.ID, c.Title, strconv.FormatInt(c.NumberMatched, 10), c.Description})
		page.RowLinks = append(page.RowLinks, s.ogcBase(r)+"/collections/"+c.ID+"?f=html")
	}
	doc.Links = append(s.selfLinks(r, "/collections", r.URL.Query(), f, ogcJSON), pageLinks(s.ogcBase(r)+"/collections", r.URL.Query(), f, ogcJSON, offset, limit, int64(len(results)), total)...)
	page.Links = doc.Links
	return s.ogcAnswer(w, r, f, ogcJSON, doc, page)
}

// ogcPaging reads limit (default def, clamped to most; below 1 is an
// error) and offset (from 0).
func ogcPaging(r *http.Request, def, most int64) (limit, offset int64, err error) {
	q := r.URL.Query()
	limit, offset = def, 0
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.ParseInt(v, 10, 64); err != nil || limit < 1 {
			return 0, 0, params.Invalid("limit", "%q is not a whole number from 1", v)
		}
	}
	limit = min(limit, most)
	if v := q.Get("offset"); v != "" {
		if offset, err = strconv.ParseInt(v, 10, 64); err != nil || offset < 0 || offset > mapcommons.MaxSearchOffset {
			return 0, 0, params.Invalid("offset", "%q is not a whole number from 0", v)
		}
	}
	return limit, offset, nil
}

// pageLinks are the next and prev links of a page at offset of limit
// items that returned n of total (total < 0: unknown, then a full page
// has a next one).
func pageLinks(href string, q url.Values, f, jsonType string, offset, limit, n, total int64) []ogcLink {
	typ := jsonType
	if f == "html" {
		typ = ogcHTML
	}
	at := func(off int64) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("offset", strconv.FormatInt(off, 10))
		v.Set("limit", strconv.FormatInt(limit, 10))
		return href + "?" + v.Encode()
	}
	var links []ogcLink
	if (total >= 0 && offset+n < total) || (total < 0 && n == limit) {
		links = append(links, ogcLink{Href: at(offset + n), Rel: "next", Type: typ, Title: "the next page"})
	}
	if offset > 0 {
		links = append(links, ogcLink{Href: at(max(0, offset-limit)), Rel: "prev", Type: typ, Title: "the previous page"})
	}
	return links
}

// ogcDataset loads the {id} dataset for a caller who may view it: the
// same 401 and 404 as GET /datasets/{id}.json.
func (s *Server) ogcDataset(r *http.Request) (*mapcommons.Dataset, error) {
	ds, err := s.findCollection(r)
	if err != nil {
		return nil, err
	}
	return ds, s.policy.CanViewDataset(caller(r), ds)
}

// findCollection loads the {id} collection's dataset: {id} is its number
// or its readable name (mapcommons.ReadableName; any title part with the
// right number, so that a name given out before a change of title still
// finds it). A missing one is refused as findDataset refuses it.
func (s *Server) findCollection(r *http.Request) (*mapcommons.Dataset, error) {
	raw := r.PathValue("id")
	id, ok := mapcommons.ParseReadableName(raw)
	if !ok {
		return nil, s.policy.NotFound(caller(r), mapcommons.ModelOverlay, mapcommons.Errorf(mapcommons.ENOTFOUND, "collection %q not found", raw))
	}
	ds, err := s.svc.Datasets.FindDatasetByID(r.Context(), id)
	return ds, s.policy.NotFound(caller(r), mapcommons.ModelOverlay, err)
}

// ogcCollectionRequest reads what a collection's documents take: the
// dataset (which the caller must be able to view), the format and no other
// parameter. done is true when a 304 has answered (ETag by kind).
func (s *Server) ogcCollectionRequest(w http.ResponseWriter, r *http.Request, kind string) (ds *mapcommons.Dataset, f string, done bool, err error) {
	if ds, err = s.ogcDataset(r); err != nil {
		return nil, "", false, err
	}
	if f, err = ogcFormat(r); err != nil {
		return nil, "", false, err
	}
	if err := onlyParams(r); err != nil {
		return nil, "", false, err
	}
	varyAccept(w)
	done = notModified(w, r, s.datasetETag(r, ds, kind+"."+s.ogcVariant(f)), cacheControl(r, s.policy.CanViewDataset(nil, ds) == nil))
	return ds, f, done, nil
}

// handleOGCCollection answers GET /ogc/collections/{id}; the temporal
// extent (min and max of the first date attribute) is data: shown to who
// may download the dataset.
func (s *Server) handleOGCCollection(w http.ResponseWriter, r *http.Request) error {
	ds, f, done, err := s.ogcCollectionRequest(w, r, "ogc-collection")
	if done || err != nil {
		return err
	}
	d, err := s.ogcCollection(r, ds)
	if err != nil {
		return err
	}
	// The queryables are linked in the header too, as Part 3 asks
	// (/req/queryables/get-queryables-uris), for GET and HEAD.
	if q := firstLink(d.Links, relQueryable); q != nil {
		w.Header().Add("Link", "<"+q.Href+`>; rel="`+q.Rel+`"; type="`+q.Type+`"`)
	}
	page := &ogcPage{Title: d.Title, Description: d.Description, Links: d.Links, Columns: []string{"attribute", "type"}}
	if items := firstLinkType(d.Links, "items", ogcGeoJSON); items != nil {
		// The map: the collection's first hundred features.
		page.Map = items.Href + "?f=json&limit=100"
	}
	for _, a := range ds.Attributes {
		page.Rows = append(page.Rows, []string{a.Name, string(a.Type)})
	}
	return s.ogcAnswer(w, r, f, ogcJSON, d, page)
}

// ogcCollection is the collection of ds, as /ogc/collections/{id} and the
// entries of /ogc/collections give it.
func (s *Server) ogcCollection(r *http.Request, ds *mapcommons.Dataset) (*ogcCollectionDoc, error) {
	var extent *mapcommons.BBox
	if e := ds.Extent; e != nil {
		extent = &mapcommons.BBox{W: e.MinX, S: e.MinY, E: e.MaxX, N: e.MaxY}
	}
	d := s.collectionDoc(r, ds.ID, ds.Metadata.Title, ds.Metadata.Description, ds.Metadata.Tags, extent, ds.FeatureCount)
	return d, s.addTemporal(r, d, ds)
}

// addTemporal sets the temporal extent of d, the collection of ds: the
// interval of the values of its first date attribute, for who may download
// ds (the extent is data). It is asked of the store once per version of
// the dataset (the response cache holds it), as /ogc/collections gives it
// for each collection of a page.
func (s *Server) addTemporal(r *http.Request, d *ogcCollectionDoc, ds *mapcommons.Dataset) error {
	i := dateAttr(ds.Attributes)
	if i < 0 || !s.policy.CanSeeDatasetStats(caller(r), ds) {
		return nil
	}
	name := ds.Attributes[i].Name
	var interval [2]*string
	key := featuresKey(ds, "ogc-temporal", name)
	if c, ok := s.cache.get(key); ok {
		if err := json.Unmarshal(c.body, &interval); err != nil {
			return err
		}
	} else {
		q := &mapcommons.FeatureQuery{Limit: -1, Aggregates: []mapcommons.Aggregate{{Name: name, Calc: mapcommons.CalcMin}, {Name: name, Calc: mapcommons.CalcMax}}}
		groups, err := s.svc.Features.GroupFeatures(r.Context(), ds.ID, q)
		if err != nil {
			return err
		}
		if len(groups) == 1 {
			lo, _ := groups[0].Aggregates[0].(string)
			hi, _ := groups[0].Aggregates[1].(string)
			interval = [2]*string{instant(lo, false), instant(hi, true)}
		}
		b, err := json.Marshal(interval)
		if err != nil {
			return err
		}
		s.cache.put(key, ogcJSON, b)
	}
	if interval[0] == nil && interval[1] == nil {
		return nil
	}
	if d.Extent == nil {
		d.Extent = &ogcExtent{}
	}
	d.Extent.Temporal = &ogcTemporal{Interval: [][2]*string{interval}, TRS: "http://www.opengis.net/def/uom/ISO-8601/0/Gregorian"}
	return nil
}

// instant is a value of a date attribute as an RFC 3339 date-time in UTC,
// as a temporal extent holds its ends, or nil when it is none. A date
// (2021-04-16) is a whole day: as a start, its first instant
// (2021-04-16T00:00:00Z); as an end, its last second (2021-04-16T23:59:59Z),
// so that the interval holds every feature of that day, as datetime takes
// a date as an upper bound. A date-time is converted to UTC; one without an
// offset (a GeoPackage DATETIME, SQLite's "2021-04-16 12:00:00") is taken
// as UTC already.
func instant(v string, end bool) *string {
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			t = t.Add(24*time.Hour - time.Second)
		}
		out := t.Format(time.RFC3339)
		return &out
	}
	if len(v) > 10 && v[10] == ' ' {
		v = v[:10] + "T" + v[11:]
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, v); err == nil {
			out := t.UTC().Format(time.RFC3339Nano)
			return &out
		}
	}
	return nil
}

// dateAttr is the index of the dataset's first date attribute, the one
// datetime selects on, or -1.
func dateAttr(attrs []mapcommons.Attribute) int {
	for i, a := range attrs {
		if a.Type == mapcommons.AttrDate {
			return i
		}
	}
	return -1
}

// handleOGCQueryables answers GET /ogc/collections/{id}/queryables: the
// attributes as a JSON Schema (OGC API Features Part 3).
func (s *Server) handleOGCQueryables(w http.ResponseWriter, r *http.Request) error {
	ds, f, done, err := s.ogcCollectionRequest(w, r, "ogc-queryables")
	if done || err != nil {
		return err
	}
	self := s.ogcBase(r) + "/collections/" + ds.ReadableName() + "/queryables"
	props := map[string]any{"geometry": map[string]string{"format": "geometry-any", "title": "geometry"}}
	page := &ogcPage{Title: "Queryables of " + ds.Metadata.Title, Columns: []string{"property", "type"}}
	for _, a := range ds.Attributes {
		p, err := s.attrSchema(r, ds, a)
		if err != nil {
			return err
		}
		props[a.Name] = p
		page.Rows = append(page.Rows, []string{a.Name, p["type"]})
	}
	// additionalProperties is false: a filter, sortby or a NAME=value
	// naming a property that is none of these is refused (400).
	doc := map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": self, "type": "object",
		"title": ds.Metadata.Title, "properties": props, "additionalProperties": false}
	return s.ogcAnswer(w, r, f, ogcSchema, doc, page)
}

// attrSchema is the JSON Schema of the values of attribute a of ds, as
// the queryables and the schema give it: its JSON type, the format of a
// date attribute (dateFormat), its title and description.
func (s *Server) attrSchema(r *http.Request, ds *mapcommons.Dataset, a mapcommons.Attribute) (map[string]string, error) {
	p := map[string]string{"title": a.Name}
	switch a.Type {
	case mapcommons.AttrInteger:
		p["type"] = "integer"
	case mapcommons.AttrFloat:
		p["type"] = "number"
	case mapcommons.AttrBoolean:
		p["type"] = "boolean"
	case mapcommons.AttrDate:
		p["type"] = "string"
		format, err := s.dateFormat(r, ds, a.Name)
		if err != nil {
			return nil, err
		}
		if format != "" {
			p["format"] = format
		}
	default:
		p["type"] = "string"
	}
	if a.Description != "" {
		p["description"] = a.Description
	}
	return p, nil
}

// dateFormat is the JSON Schema format of the values of the date attribute
// name: "date" when every value is a date (YYYY-MM-DD: a dBase date, a
// GeoPackage DATE), "date-time" when every value is a date or a date-time
// (YYYY-MM-DDT…: a GeoPackage DATETIME, whose midnights are read as
// dates), else "" (text that is neither: no format). Dates and date-times
// are told by their shape (LIKE), as the store holds them, once per
// version of the dataset (the response cache holds the answer).
func (s *Server) dateFormat(r *http.Request, ds *mapcommons.Dataset, name string) (string, error) {
	key := featuresKey(ds, "ogc-date-format", name)
	if c, ok := s.cache.get(key); ok {
		return string(c.body), nil
	}
	not := func(pattern string) *mapcommons.Expr {
		return &mapcommons.Expr{Op: mapcommons.ExprNot, Args: []*mapcommons.Expr{{Op: mapcommons.ExprLike, Property: name,
			Values: []mapcommons.Literal{{Kind: mapcommons.LitString, Str: pattern}}}}}
	}
	// some reports whether a value matches none of the patterns.
	some := func(patterns ...string) (bool, error) {
		where := &mapcommons.Expr{Op: mapcommons.ExprAnd, Args: []*mapcommons.Expr{
			{Op: mapcommons.ExprNot, Args: []*mapcommons.Expr{{Op: mapcommons.ExprIsNull, Property: name}}}}}
		for _, p := range patterns {
			where.Args = append(where.Args, not(p))
		}
		found := false
		err := s.svc.Features.ScanFeatures(r.Context(), ds.ID, &mapcommons.FeatureQuery{Where: where, Limit: 1}, func(*mapcommons.Feature) error {
			found = true
			return nil
		})
		return found, err
	}
	format := "date"
	if other, err := some("____-__-__"); err != nil {
		return "", err
	} else if other {
		format = "date-time"
		if other, err := some("____-__-__", "____-__-__T%"); err != nil {
			return "", err
		} else if other {
			format = ""
		}
	}
	s.cache.put(key, "text/plain", []byte(format))
	return format, nil
}

// ogcPage is the HTML form of an OGC document: a title, a description, its
// links and a table (in a box of its own that scrolls sideways, the page
// never does); and, for the pages of features (a collection, its
// items, one item), a map of them.
type ogcPage struct {
	Title, Description string
	Links              []ogcLink
	Columns            []string
	Rows               [][]string
	RowLinks           []string // the page of each row, when rows have one
	// Map is the GeoJSON of the features the page shows (its own JSON
	// form, or its collection's first items), "" for no map. The ogc
	// bundle (web/src/ogc.js) draws them over the basemap when the binary
	// holds it; without JavaScript the page is the table still.
	Map string
	// Set by write from the built assets when the page has a map.
	JS     string
	CSS    []string
	Worker string
}

var ogcPageTemplate = template.Must(template.New("ogc").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/app/assets/favicon.svg" type="image/svg+xml">
{{range .CSS}}<link rel="stylesheet" href="/app/assets/{{.}}">
{{end}}{{if .JS}}<meta name="mc-worker" content="/app/assets/{{.Worker}}">
<script type="module" src="/app/assets/{{.JS}}"></script>
{{end}}</head>
<body><main><h1>{{.Title}}</h1>
{{if .Description}}<p>{{.Description}}</p>{{end}}
{{if .JS}}<div id="ogc-map" hidden data-geojson="{{.Map}}" role="region" aria-label="Map of the features"></div><p id="ogc-map-status"></p>
{{end}}{{if .Links}}<ul class="links">{{range .Links}}<li><a href="{{.Href}}" rel="{{.Rel}}">{{if .Title}}{{.Title}}{{else}}{{.Rel}}{{end}}</a> <span class="rel">({{.Rel}}{{if .Type}}, {{.Type}}{{end}})</span></li>{{end}}</ul>{{end}}
{{if .Columns}}<div class="table-wrap" tabindex="0" role="region" aria-label="Table of {{.Title}}"><table><tr>{{range .Columns}}<th scope="col">{{.}}</th>{{end}}</tr>
{{$links := .RowLinks}}{{range $i, $row := .Rows}}<tr>{{range $j, $c := $row}}<td>{{if and (eq $j 0) (lt $i (len $links))}}<a href="{{index $links $i}}">{{$c}}</a>{{else}}{{$c}}{{end}}</td>{{end}}</tr>
{{end}}</table></div>{{end}}
</main></body></html>
`))

// ogcMapCSP is the Content-Security-Policy of an OGC page with a map: the
// documents' (docCSP) widened only as far as the map needs, to this
// server's own script, style sheets, GeoJSON and basemap (connect-src) and
// MapLibre's worker (from here or a blob: it makes), images also from
// data: and blob: URLs; nothing inline, no eval.
const ogcMapCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; font-src 'self'; " +
	"connect-src 'self'; worker-src 'self' blob:; child-src 'self' blob:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ogcDocCSP is the Content-Security-Policy of an OGC page without a map:
// the documents' (docCSP), its style sheet from this server (the ogcdoc
// bundle's), no script.
const ogcDocCSP = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ogcVariant is what an answer in format f is told by in its ETag: the
// format, and for HTML the bundles it names, the map's and the style
// sheet's (a new build is another page: a browser's copy would name files
// no longer served).
func (s *Server) ogcVariant(f string) string {
	if f == "html" {
		if js, css, _, ok := s.assets.Bundle("ogc"); ok {
			f += "." + js + "." + strings.Join(css, ".")
		}
		if _, css, _, ok := s.assets.Bundle("ogcdoc"); ok {
			f += "." + strings.Join(css, ".")
		}
	}
	return f
}

// write writes the page, with its style sheet, and its map when it has
// one and the binary holds the ogc bundle.
func (p *ogcPage) write(w http.ResponseWriter, assets *web.Assets) error {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	if js, css, worker, ok := assets.Bundle("ogc"); ok && p.Map != "" {
		p.JS, p.CSS, p.Worker = js, css, worker
		setPageSecurity(h, ogcMapCSP)
	} else if _, css, _, ok := assets.Bundle("ogcdoc"); ok {
		p.CSS = css
		setPageSecurity(h, ogcDocCSP)
	}
	return ogcPageTemplate.Execute(w, p)
}
