package api

// Search (spec "Search", wire contract 5): GET /search.json|.atom|.kml|.html
// over datasets and maps, and the OpenSearch description document
// (/search.xml, /search/opensearch.xml) that names those URLs.

import (
	"encoding/xml"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/params"
)

// searchRequest is a parsed search: the filter for the store, and what the
// answer needs besides.
type searchRequest struct {
	filter  mapcommons.SearchFilter
	query   string // the query as sent
	page    int64  // 1-based
	nothing bool   // a model we keep nothing of (analyses): an empty answer
}

// parseSearch reads the parameters of a search. Bad values are EINVALID
// errors naming the parameter.
func parseSearch(p params.Params) (*searchRequest, error) {
	sr := &searchRequest{}
	f := &sr.filter
	if v, given := p.Get("query"); given && v != nil {
		s, ok := v.(string)
		if !ok {
			return nil, params.Invalid("query", "expected a single string")
		}
		sr.query = s
	}
	var err error
	if f.Terms, f.Users, err = mapcommons.ParseSearchQuery(sr.query); err != nil {
		return nil, err
	}

	if v, ok := p.String("bbox"); ok && strings.TrimSpace(v) == "" {
		// An empty bbox (an OpenSearch template's optional {geo:box?} left out) is none.
	} else if xy, given, err := p.Numbers("bbox"); err != nil {
		return nil, err
	} else if given {
		if len(xy) != 4 {
			return nil, params.Invalid("bbox", "expected west,south,east,north (4 numbers), got %d", len(xy))
		}
		b := &mapcommons.BBox{W: xy[0], S: xy[1], E: xy[2], N: xy[3]}
		if b.E-b.W >= 360 {
			b.W, b.E = -180, 180
		} else {
			b.W, b.E = wrapLon(b.W), wrapLon(b.E)
		}
		f.BBox = b
	}

	if v, ok := p.String("model"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "":
		case "overlay", "overlays", "dataset", "datasets":
			f.Model = mapcommons.ModelOverlay
		case "map", "maps":
			f.Model = mapcommons.ModelMap
		case "refinement", "refinementtype":
			sr.nothing = true // analyses: this server keeps none
		default:
			return nil, params.Invalid("model", "%q is not Overlay or Map", v)
		}
	}

	if v, ok := p.String("sort"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "", "relevance", "rank", "score":
			f.Sort = mapcommons.SortRelevance
		case "title", "name":
			f.Sort = mapcommons.SortTitle
		case "created", "created_at":
			f.Sort = mapcommons.SortCreated
		case "updated", "updated_at":
			f.Sort = mapcommons.SortUpdated
		case "feature_count":
			f.Sort = mapcommons.SortFeatureCount
		default:
			return nil, params.Invalid("sort", "%q is not one of relevance, title, created, updated, feature_count", v)
		}
	}
	if v, ok := p.String("order"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "", "ascending", "asc":
		case "descending", "desc":
			f.Descending = true
		default:
			return nil, params.Invalid("order", "%q is neither ascending nor descending", v)
		}
	}

	limit, err := p.Int("limit", mapcommons.DefaultSearchLimit)
	if err != nil {
		return nil, err
	}
	switch {
	case limit < 0:
		return nil, params.Invalid("limit", "must not be negative")
	case limit == 0:
		limit = mapcommons.DefaultSearchLimit
	case limit > mapcommons.MaxSearchLimit:
		limit = mapcommons.MaxSearchLimit
	}
	f.Limit = int(limit)
	// Pages are 1-based; 0 and below are the first (PY starts at 0).
	if sr.page, err = p.Int("page", 1); err != nil {
		return nil, err
	}
	if sr.page < 1 {
		sr.page = 1
	}
	if sr.page-1 > mapcommons.MaxSearchOffset/limit {
		return nil, params.Invalid("page", "%d is too large", sr.page)
	}
	f.Offset = (sr.page - 1) * limit
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return sr, nil
}

// wrapLon brings a longitude into -180..180.
func wrapLon(x float64) float64 {
	if x >= -180 && x <= 180 {
		return x
	}
	x = math.Mod(x+180, 360)
	if x < 0 {
		x += 360
	}
	return x - 180
}

// handleSearch answers GET /search in the format of its suffix.
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) error {
	return s.search(w, r, "/search")
}

// handleDatasetList answers GET /datasets.json: the datasets the caller
// may view, as search entries (the query, bbox, sort and paging parameters
// of search apply), newest first unless sorted otherwise.
func (s *Server) handleDatasetList(w http.ResponseWriter, r *http.Request) error {
	return s.search(w, r, "/datasets")
}

// search answers a search at path: /search, or /datasets for datasets
// only.
func (s *Server) search(w http.ResponseWriter, r *http.Request, path string) error {
	format := info(r).format
	switch format {
	case "xml":
		if path != "/search" {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "the list of datasets answers in json, atom, kml or html, not xml")
		}
		if err := s.checkBody(r); err != nil {
			return err
		}
		return s.writeOpenSearchDescription(w, r)
	case "json", "atom", "kml", "html":
	default:
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "search answers in json, atom, kml or html, not %s", format)
	}
	q, err := s.parseRequest(r)
	if err != nil {
		return err
	}
	defer q.Cleanup()
	sr, err := parseSearch(q.Params)
	if err != nil {
		return err
	}
	if path == "/datasets" {
		if sr.filter.Model == mapcommons.ModelMap || sr.nothing {
			return params.Invalid("model", "the list of datasets holds datasets only")
		}
		sr.filter.Model = mapcommons.ModelOverlay
		if _, sorted := q.Params.String("sort"); !sorted && len(sr.filter.Terms) == 0 && len(sr.filter.Users) == 0 {
			sr.filter.Sort, sr.filter.Descending = mapcommons.SortCreated, true
		}
	}
	// Authorize: the caller finds what the policy lets them view.
	sr.filter.Visibility = s.policy.SearchVisibility(caller(r))
	privateAnswer(w)
	if s.svc.Search == nil {
		return mapcommons.Errorf(mapcommons.ENOTIMPLEMENTED, "search is not available on this store")
	}
	results, total := []*mapcommons.SearchResult{}, int64(0)
	if !sr.nothing {
		if results, total, err = s.svc.Search.Search(r.Context(), sr.filter); err != nil {
			return err
		}
	}
	a := &searchAnswer{s: s, r: r, req: sr, results: results, total: total, base: s.baseURL(r), path: path}
	switch format {
	case "atom":
		return a.writeAtom(w)
	case "kml":
		return a.writeKML(w)
	case "html":
		return a.writeHTML(w)
	}
	return s.writeJSON(w, r, http.StatusOK, a.json())
}

// handleOpenSearch answers GET /search/opensearch.xml.
func (s *Server) handleOpenSearch(w http.ResponseWriter, r *http.Request) error {
	if f := info(r).format; f != "xml" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "the OpenSearch description is XML, not %s", f)
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	return s.writeOpenSearchDescription(w, r)
}

// searchAnswer is one search's results and what its encoders share.
type searchAnswer struct {
	s       *Server
	r       *http.Request
	req     *searchRequest
	results []*mapcommons.SearchResult
	total   int64
	base    string
	path    string // of the pages' links: "/search", or "/datasets" for the list of datasets
}

// pageURL is the absolute URL of this search in format at page, with the
// parameters as sent (page replaced); "," and ":" stay readable, as in the
// real answers.
func (a *searchAnswer) pageURL(format string, page int64) string {
	v := url.Values{}
	for k, vs := range a.r.URL.Query() {
		v[k] = vs
	}
	if page > 1 {
		v.Set("page", strconv.FormatInt(page, 10))
	} else {
		v.Del("page")
	}
	u := a.base + a.path + "." + format
	if enc := v.Encode(); enc != "" {
		u += "?" + strings.NewReplacer("%2C", ",", "%3A", ":").Replace(enc)
	}
	return u
}

// hasNext reports whether results follow this page.
func (a *searchAnswer) hasNext() bool {
	return a.req.filter.Offset+int64(len(a.results)) < a.total && len(a.results) > 0
}

// objectURL is the URL of a result without a suffix (its detail link) or
// with one.
func (a *searchAnswer) objectURL(res *mapcommons.SearchResult, suffix string) string {
	coll := "/datasets/"
	if res.Model == mapcommons.ModelMap {
		coll = "/maps/"
	}
	u := a.base + coll + strconv.FormatInt(res.ID, 10)
	if suffix != "" {
		u += "." + suffix
	}
	return u
}

// thumbSide is the side, in pixels, of the image a feed's entry links to.
const thumbSide = 256

// imageURL is the URL of a result's image (GET /datasets/{id}.png or
// /maps/{id}.png), thumbSide square. The link tells nothing the entry does
// not: the image is authorized when it is fetched (a dataset's needs the
// download right).
func (a *searchAnswer) imageURL(res *mapcommons.SearchResult) string {
	side := strconv.Itoa(thumbSide)
	return a.objectURL(res, "png") + "?width=" + side + "&height=" + side
}

func (a *searchAnswer) userURL(login string) string {
	return a.base + "/users/" + url.PathEscape(login)
}

func formatCoord(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// bboxString is an extent as the real answers wrote it: "s,w,n,e" for a
// dataset, "w,s,e,n" (longitude first) for a map (wire contract 5.1, 9).
func bboxString(res *mapcommons.SearchResult) *string {
	e := res.Extent
	if e == nil {
		return nil
	}
	parts := []float64{e.S, e.W, e.N, e.E}
	if res.Model == mapcommons.ModelMap {
		parts = []float64{e.W, e.S, e.E, e.N}
	}
	s := make([]string, len(parts))
	for i, v := range parts {
		s[i] = formatCoord(v)
	}
	out := strings.Join(s, ",")
	return &out
}

// searchDoc is the JSON answer (wire contract 5.1).
type searchDoc struct {
	TotalResults int64            `json:"totalResults"`
	ItemsPerPage int              `json:"itemsPerPage"`
	Next         string           `json:"next,omitempty"`
	Entries      []searchEntryDoc `json:"entries"`
}

// searchEntryDoc is one result: the keys of the 2011 answers, typed as the
// strict clients (NET) declare them.
type searchEntryDoc struct {
	ID                  string                  `json:"id"`
	PK                  int64                   `json:"pk"`
	Type                string                  `json:"type"`
	Title               string                  `json:"title"`
	Name                string                  `json:"name"`
	Description         *string                 `json:"description"`
	Tags                string                  `json:"tags"`
	BBox                *string                 `json:"bbox"`
	Author              personDoc               `json:"author"`
	Contributor         personDoc               `json:"contributor"`
	Link                string                  `json:"link"`
	DetailLink          string                  `json:"detail_link"`
	Created             string                  `json:"created"`
	Published           string                  `json:"published"`
	FeatureCount        int64                   `json:"feature_count"`
	Permissions         mapcommons.SearchRights `json:"permissions"`
	ShortClassification *string                 `json:"short_classification"`
	LayerSize           int64                   `json:"layer_size"`
	Source              *string                 `json:"source"`
	IconPath            *string                 `json:"icon_path"`
	Analyzable          bool                    `json:"analyzable"`
	DataType            string                  `json:"data_type"`
}

type personDoc struct {
	Name string  `json:"name"`
	URI  *string `json:"uri"`
}

// owner is the owner of a result as an author/contributor object.
func (a *searchAnswer) owner(res *mapcommons.SearchResult) personDoc {
	if res.Owner == "" {
		return personDoc{}
	}
	u := a.userURL(res.Owner)
	return personDoc{Name: res.Owner, URI: &u}
}

func (a *searchAnswer) json() *searchDoc {
	d := &searchDoc{TotalResults: a.total, ItemsPerPage: a.req.filter.Limit, Entries: make([]searchEntryDoc, 0, len(a.results))}
	if a.hasNext() {
		d.Next = a.pageURL("json", a.req.page+1)
	}
	who := caller(a.r)
	for _, res := range a.results {
		e := searchEntryDoc{
			ID: res.Model + ":" + strconv.FormatInt(res.ID, 10), PK: res.ID, Type: res.Model,
			Title: res.Title, Name: res.Title, Description: res.Description, Tags: res.Tags, BBox: bboxString(res),
			Contributor: a.owner(res), Link: a.objectURL(res, "json"), DetailLink: a.objectURL(res, ""),
			Created: isoTime(res.CreatedAt), Published: isoTime(res.CreatedAt), FeatureCount: res.FeatureCount,
			Permissions: a.s.policy.SearchRights(who, res), DataType: res.DataType,
		}
		if res.Model == mapcommons.ModelOverlay {
			// A dataset's author is its metadata's (wire contract 5.1), else
			// its owner; a map's is its owner.
			e.Author = personDoc{Name: res.Author}
			if res.Author == "" {
				e.Author = e.Contributor
			}
			e.Analyzable = res.FeatureCount > 0
			if res.Source != "" {
				e.Source = &res.Source
			}
		} else {
			e.Author, e.DataType = e.Contributor, "Map"
		}
		d.Entries = append(d.Entries, e)
	}
	return d
}

// XML namespaces of the answers.
const (
	nsAtom       = "http://www.w3.org/2005/Atom"
	nsOpenSearch = "http://a9.com/-/spec/opensearch/1.1/"
	nsGeoRSS     = "http://www.georss.org/georss"
	nsGeo        = "http://a9.com/-/opensearch/extensions/geo/1.0/"
	nsKML        = "http://www.opengis.net/kml/2.2"
)

// The content type of the OpenSearch description, which is not a format
// of the registry; the others are format.MediaType's.
const typeOpenSearch = "application/opensearchdescription+xml"

var (
	typeAtom = format.MediaType("atom")
	typeKML  = format.MediaType("kml")
)

type atomLink struct {
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomPerson struct {
	Name string `xml:"name"`
	URI  string `xml:"uri,omitempty"`
}

type atomText struct {
	Type string `xml:"type,attr"`
	Text string `xml:",chardata"`
}

type atomCategory struct {
	Scheme string `xml:"scheme,attr"`
	Term   string `xml:"term,attr"`
}

type osQuery struct {
	Role        string `xml:"role,attr"`
	SearchTerms string `xml:"searchTerms,attr"`
	StartPage   int64  `xml:"startPage,attr"`
	Count       int    `xml:"count,attr"`
	Box         string `xml:"geo:box,attr,omitempty"`
}

// atomFeed is the OpenSearch 1.1 Atom answer (wire contract 5.2).
type atomFeed struct {
	XMLName      xml.Name    `xml:"feed"`
	NS           string      `xml:"xmlns,attr"`
	NSOpenSearch string      `xml:"xmlns:opensearch,attr"`
	NSGeoRSS     string      `xml:"xmlns:georss,attr"`
	NSGeo        string      `xml:"xmlns:geo,attr"`
	Title        string      `xml:"title"`
	ID           string      `xml:"id"`
	Updated      string      `xml:"updated"`
	Author       atomPerson  `xml:"author"`
	Links        []atomLink  `xml:"link"`
	TotalResults int64       `xml:"opensearch:totalResults"`
	StartIndex   int64       `xml:"opensearch:startIndex"`
	ItemsPerPage int         `xml:"opensearch:itemsPerPage"`
	Query        osQuery     `xml:"opensearch:Query"`
	Entries      []atomEntry `xml:"entry"`
}

type atomEntry struct {
	Title      string         `xml:"title"`
	Links      []atomLink     `xml:"link"`
	ID         string         `xml:"id"`
	Published  string         `xml:"published"`
	Updated    string         `xml:"updated"`
	Author     atomPerson     `xml:"author"`
	Categories []atomCategory `xml:"category"`
	Box        string         `xml:"georss:box,omitempty"`
	Content    atomText       `xml:"content"`
}

// siteName names the server in titles.
const siteName = "mapcommons"

func (a *searchAnswer) writeXML(w http.ResponseWriter, contentType string, v any) error {
	b, err := xml.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(append([]byte(xml.Header), append(b, '\n')...))
	return err
}

func (a *searchAnswer) writeAtom(w http.ResponseWriter) error {
	f := a.req.filter
	feed := &atomFeed{
		NS: nsAtom, NSOpenSearch: nsOpenSearch, NSGeoRSS: nsGeoRSS, NSGeo: nsGeo,
		Title: siteName + " Search: " + a.req.query, ID: a.pageURL("atom", a.req.page),
		Author:       atomPerson{Name: siteName, URI: a.base},
		TotalResults: a.total, StartIndex: f.Offset + 1, ItemsPerPage: f.Limit,
		Query: osQuery{Role: "request", SearchTerms: a.req.query, StartPage: a.req.page, Count: f.Limit},
		Links: []atomLink{
			{Rel: "self", Type: typeAtom, Href: a.pageURL("atom", a.req.page)},
			{Rel: "alternate", Type: typeKML, Href: a.pageURL("kml", a.req.page)},
			{Rel: "alternate", Type: "text/html", Href: a.pageURL("html", a.req.page)},
			{Rel: "alternate", Type: "application/json", Href: a.pageURL("json", a.req.page)},
			{Rel: "search", Type: typeOpenSearch, Href: a.base + "/search.xml"},
		},
	}
	if b := f.BBox; b != nil {
		feed.Query.Box = strings.Join([]string{formatCoord(b.W), formatCoord(b.S), formatCoord(b.E), formatCoord(b.N)}, ",")
	}
	if a.hasNext() {
		feed.Links = append(feed.Links, atomLink{Rel: "next", Type: typeAtom, Href: a.pageURL("atom", a.req.page+1)})
	}
	if a.req.page > 1 {
		feed.Links = append(feed.Links, atomLink{Rel: "previous", Type: typeAtom, Href: a.pageURL("atom", a.req.page-1)})
	}
	var updated time.Time
	for _, res := range a.results {
		if res.UpdatedAt.After(updated) {
			updated = res.UpdatedAt
		}
		e := atomEntry{
			Title: res.Title, ID: a.objectURL(res, ""), Published: isoTime(res.CreatedAt), Updated: isoTime(res.UpdatedAt),
			Links: []atomLink{
				{Rel: "alternate", Type: "text/html", Href: a.objectURL(res, "")},
				{Rel: "alternate", Type: typeKML, Href: a.objectURL(res, "kml")},
				{Rel: "alternate", Type: "application/json", Href: a.objectURL(res, "json")},
			},
			Content: atomText{Type: "html"},
		}
		if res.Model == mapcommons.ModelOverlay {
			e.Links = append(e.Links, atomLink{Rel: "alternate", Type: typeAtom, Href: a.objectURL(res, "atom")})
		}
		// Its picture, after the links the clients read.
		e.Links = append(e.Links, atomLink{Rel: "enclosure", Type: pngType, Href: a.imageURL(res)})
		if res.Description != nil {
			e.Content.Text = *res.Description
		}
		if res.Owner != "" {
			e.Author = atomPerson{Name: res.Owner, URI: a.userURL(res.Owner)}
		} else {
			e.Author = atomPerson{Name: "unknown"}
		}
		for _, t := range splitTags(res.Tags) {
			e.Categories = append(e.Categories, atomCategory{Scheme: a.base + "/tags", Term: t})
		}
		if x := res.Extent; x != nil {
			e.Box = strings.Join([]string{formatCoord(x.S), formatCoord(x.W), formatCoord(x.N), formatCoord(x.E)}, " ")
		}
		feed.Entries = append(feed.Entries, e)
	}
	if updated.IsZero() {
		updated = time.Now()
	}
	feed.Updated = isoTime(updated)
	return a.writeXML(w, typeAtom+"; charset=utf-8", feed)
}

func splitTags(tags string) []string {
	var out []string
	for _, t := range strings.Split(tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// kmlDocument is the KML answer: a Placemark per result at the centre of
// its extent, with the extent as its Region.
type kmlDocument struct {
	XMLName  xml.Name `xml:"kml"`
	NS       string   `xml:"xmlns,attr"`
	NSAtom   string   `xml:"xmlns:atom,attr"`
	Document struct {
		Name        string         `xml:"name"`
		Links       []atomLink     `xml:"atom:link"`
		Description string         `xml:"description"`
		Placemarks  []kmlPlacemark `xml:"Placemark"`
	} `xml:"Document"`
}

type kmlPlacemark struct {
	ID          string     `xml:"id,attr"`
	Name        string     `xml:"name"`
	Link        atomLink   `xml:"atom:link"`
	Description string     `xml:"description"`
	Region      *kmlRegion `xml:"Region"`
	Point       *kmlPoint  `xml:"Point"`
}

type kmlRegion struct {
	Box struct {
		North float64 `xml:"north"`
		South float64 `xml:"south"`
		East  float64 `xml:"east"`
		West  float64 `xml:"west"`
	} `xml:"LatLonAltBox"`
}

type kmlPoint struct {
	Coordinates string `xml:"coordinates"`
}

// centre is the middle of an extent (across the antimeridian when it crosses it).
func centre(e *mapcommons.BBox) (lon, lat float64) {
	east := e.E
	if east < e.W {
		east += 360
	}
	return wrapLon((e.W + east) / 2), (e.S + e.N) / 2
}

func (a *searchAnswer) writeKML(w http.ResponseWriter) error {
	doc := &kmlDocument{NS: nsKML, NSAtom: nsAtom}
	d := &doc.Document
	d.Name = siteName + " Search: " + a.req.query
	d.Description = strconv.FormatInt(a.total, 10) + " results"
	d.Links = []atomLink{{Rel: "self", Href: a.pageURL("kml", a.req.page)}}
	if a.hasNext() {
		d.Links = append(d.Links, atomLink{Rel: "next", Href: a.pageURL("kml", a.req.page+1)})
	}
	for _, res := range a.results {
		p := kmlPlacemark{
			ID: strings.ToLower(res.Model) + "-" + strconv.FormatInt(res.ID, 10), Name: res.Title,
			Link: atomLink{Rel: "alternate", Href: a.objectURL(res, "")},
		}
		var desc strings.Builder
		if res.Description != nil && *res.Description != "" {
			desc.WriteString("<p>" + template.HTMLEscapeString(*res.Description) + "</p>")
		}
		desc.WriteString(`<p><a href="` + template.HTMLEscapeString(a.objectURL(res, "json")) + `">JSON</a> | <a href="` +
			template.HTMLEscapeString(a.objectURL(res, "kml")) + `">KML</a></p>`)
		// Its picture, after what the clients read.
		side := strconv.Itoa(thumbSide)
		desc.WriteString(`<p><img src="` + template.HTMLEscapeString(a.imageURL(res)) + `" width="` + side + `" height="` + side + `" alt=""></p>`)
		p.Description = desc.String()
		if x := res.Extent; x != nil {
			lon, lat := centre(x)
			p.Point = &kmlPoint{Coordinates: formatCoord(lon) + "," + formatCoord(lat)}
			p.Region = &kmlRegion{}
			p.Region.Box.North, p.Region.Box.South, p.Region.Box.East, p.Region.Box.West = x.N, x.S, x.E, x.W
		}
		d.Placemarks = append(d.Placemarks, p)
	}
	return a.writeXML(w, typeKML, doc)
}

var searchHTML = template.Must(template.New("search").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{.Title}}</title>
<link rel="search" type="application/opensearchdescription+xml" href="{{.Base}}/search.xml" title="mapcommons"></head>
<body><h1>{{.Title}}</h1><p>{{.Total}} results</p>
<ol start="{{.Start}}">{{range .Entries}}<li><a href="{{.DetailLink}}">{{.Title}}</a> ({{.Type}}{{with .Contributor.Name}}, by {{.}}{{end}})
{{with .Description}}<p>{{.}}</p>{{end}}</li>
{{end}}</ol>
{{with .Previous}}<a rel="prev" href="{{.}}">previous</a>{{end}} {{with .Next}}<a rel="next" href="{{.}}">next</a>{{end}}
</body></html>
`))

func (a *searchAnswer) writeHTML(w http.ResponseWriter) error {
	doc := a.json()
	data := struct {
		Title, Base, Next, Previous string
		Total, Start                int64
		Entries                     []searchEntryDoc
	}{Title: siteName + " Search: " + a.req.query, Base: a.base, Total: a.total, Start: a.req.filter.Offset + 1, Entries: doc.Entries}
	if a.hasNext() {
		data.Next = a.pageURL("html", a.req.page+1)
	}
	if a.req.page > 1 {
		data.Previous = a.pageURL("html", a.req.page-1)
	}
	var b strings.Builder
	if err := searchHTML.Execute(&b, data); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write([]byte(b.String()))
	return err
}

// openSearchDescription is the OpenSearch 1.1 description document.
type openSearchDescription struct {
	XMLName          xml.Name `xml:"OpenSearchDescription"`
	NS               string   `xml:"xmlns,attr"`
	NSGeo            string   `xml:"xmlns:geo,attr"`
	ShortName        string   `xml:"ShortName"`
	Description      string   `xml:"Description"`
	Tags             string   `xml:"Tags"`
	URLs             []osURL  `xml:"Url"`
	Query            osQuery  `xml:"Query"`
	SyndicationRight string   `xml:"SyndicationRight"`
	InputEncoding    string   `xml:"InputEncoding"`
	OutputEncoding   string   `xml:"OutputEncoding"`
}

type osURL struct {
	Type        string `xml:"type,attr"`
	Rel         string `xml:"rel,attr,omitempty"`
	Template    string `xml:"template,attr"`
	IndexOffset int    `xml:"indexOffset,attr,omitempty"`
	PageOffset  int    `xml:"pageOffset,attr,omitempty"`
}

func (s *Server) writeOpenSearchDescription(w http.ResponseWriter, r *http.Request) error {
	base := s.baseURL(r)
	params := "?query={searchTerms}&bbox={geo:box?}&page={startPage?}&limit={count?}"
	d := &openSearchDescription{
		NS: nsOpenSearch, NSGeo: nsGeo, ShortName: siteName,
		Description: "Search the datasets and maps of " + base + " by words, tags, owner and place.",
		Tags:        "datasets maps geospatial", SyndicationRight: "open",
		InputEncoding: "UTF-8", OutputEncoding: "UTF-8",
		URLs: []osURL{
			{Type: "application/json", Rel: "results", Template: base + "/search.json" + params, PageOffset: 1},
			{Type: typeAtom, Rel: "results", Template: base + "/search.atom" + params, PageOffset: 1},
			{Type: typeKML, Rel: "results", Template: base + "/search.kml" + params, PageOffset: 1},
			{Type: "text/html", Rel: "results", Template: base + "/search.html" + params, PageOffset: 1},
			{Type: typeOpenSearch, Rel: "self", Template: base + "/search.xml"},
		},
		Query: osQuery{Role: "example", SearchTerms: "tag:economics", StartPage: 1, Count: mapcommons.DefaultSearchLimit},
	}
	a := &searchAnswer{s: s, r: r}
	return a.writeXML(w, typeOpenSearch+"; charset=utf-8", d)
}
