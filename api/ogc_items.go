package api

// The features of an OGC API collection: /ogc/collections/{id}/items and
// /items/{featureId}. Every parameter maps onto a mapcommons.FeatureQuery
// (bbox → BBox, NAME=value → Filters, filter and datetime → Where, sortby
// → Sort, stable ids → IDs), answered by the FeatureService as features.json is.

import (
	"encoding/json"
	"fmt"
	"mapcommons/cql2"
	"mapcommons/params"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/format/geojson"
	"mapcommons/format/wkb"
	"mapcommons/proj"
)

// Page sizes of items.
const (
	ogcDefaultLimit = 10
	ogcMaxLimit     = mapcommons.MaxFeatureLimit
)

// webMercatorMaxLat is where Web Mercator's square world ends: answers in
// EPSG:3857 clamp latitudes to it (the poles have no finite y).
const webMercatorMaxLat = 85.05112877980659

// ogcItemParams are the parameters of items besides the attribute names.
var ogcItemParams = []string{"limit", "offset", "bbox", "bbox-crs", "crs", "datetime", "sortby", "filter", "filter-lang", "filter-crs"}

// outputCRS is the CRS of an answer: its URI and how the stored lon/lat
// geometry becomes it (nil: unchanged).
type outputCRS struct {
	uri       string
	transform func(g *wkb.Geom) error
}

// parseCRS reads a CRS as a URI or a (safe) CURIE: CRS84, EPSG:4326 and
// EPSG:3857.
func parseCRS(param, v string) (string, error) {
	s := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(v), "["), "]")
	switch strings.ToUpper(s) {
	case strings.ToUpper(crsCRS84), "OGC:CRS84", "CRS84":
		return crsCRS84, nil
	case strings.ToUpper(crs4326), "EPSG:4326":
		return crs4326, nil
	case strings.ToUpper(crs3857), "EPSG:3857":
		return crs3857, nil
	}
	return "", params.Invalid(param, "%q is not a CRS of this collection (%s)", v, strings.Join(ogcCRSs, ", "))
}

// outputFor is the transform of the answers in crs.
func outputFor(crs string) outputCRS {
	switch crs {
	case crs4326: // latitude first, as EPSG:4326 defines its axes
		return outputCRS{uri: crs, transform: func(g *wkb.Geom) error { walkCoords(g, swapXY); return nil }}
	case crs3857:
		return outputCRS{uri: crs, transform: func(g *wkb.Geom) error {
			walkCoords(g, func(xy []float64) {
				for i := 1; i < len(xy); i += 2 {
					xy[i] = max(-webMercatorMaxLat, min(webMercatorMaxLat, xy[i]))
				}
			})
			return proj.WebMercator.ProjectGeom(g)
		}}
	}
	return outputCRS{uri: crsCRS84}
}

// toCRS84 maps the coordinates of a filter in crs (filter-crs) onto
// longitude, latitude, as parseOGCBBox maps a bbox: EPSG:4326 has latitude
// first, EPSG:3857 is Web Mercator metres. Nil for CRS84.
func toCRS84(crs string) cql2.ToCRS84 {
	switch crs {
	case crs4326:
		return func(xy []float64) error { swapXY(xy); return nil }
	case crs3857:
		return func(xy []float64) error {
			for i := 0; i+1 < len(xy); i += 2 {
				lon, lat, err := proj.WebMercator.Forward(xy[i], xy[i+1])
				if err != nil {
					return mapcommons.Errorf(mapcommons.EINVALID, "(%g, %g) is not a point of EPSG:3857", xy[i], xy[i+1])
				}
				xy[i], xy[i+1] = lon, lat
			}
			return nil
		}
	}
	return nil
}

// swapXY swaps each x, y pair of a flat coordinate list.
func swapXY(xy []float64) {
	for i := 0; i+1 < len(xy); i += 2 {
		xy[i], xy[i+1] = xy[i+1], xy[i]
	}
}

// walkCoords calls fn on every coordinate list of g.
func walkCoords(g *wkb.Geom, fn func([]float64)) {
	fn(g.Coords)
	for _, r := range g.Rings {
		fn(r)
	}
	for i := range g.Parts {
		walkCoords(&g.Parts[i], fn)
	}
}

// parseOGCBBox reads bbox (4 numbers, or 6 whose heights are ignored) in
// bbox-crs: a lon/lat box, W > E crossing the antimeridian.
func parseOGCBBox(q url.Values) (*mapcommons.BBox, error) {
	raw := q.Get("bbox")
	if raw == "" {
		if q.Has("bbox-crs") {
			if _, err := parseCRS("bbox-crs", q.Get("bbox-crs")); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	var v []float64
	for part := range strings.SplitSeq(raw, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, params.Invalid("bbox", "%q is not a number", part)
		}
		v = append(v, x)
	}
	switch len(v) {
	case 4:
	case 6:
		v = []float64{v[0], v[1], v[3], v[4]}
	default:
		return nil, params.Invalid("bbox", "4 numbers (or 6 with heights), not %d", len(v))
	}
	crs := crsCRS84
	if q.Has("bbox-crs") {
		var err error
		if crs, err = parseCRS("bbox-crs", q.Get("bbox-crs")); err != nil {
			return nil, err
		}
	}
	if to := toCRS84(crs); to != nil { // the corners, as a filter's coordinates
		if err := to(v); err != nil {
			return nil, params.Invalid("bbox", "%s", mapcommons.ErrorMessage(err))
		}
		if crs == crs3857 {
			// The square's edges convert to ±180 (give or take a
			// rounding): keep the box's sides.
			const edge = 180 - 1e-9
			if v[0] >= edge {
				v[0] = -180
			}
			if v[2] <= -edge {
				v[2] = 180
			}
		}
	}
	return mapcommons.NewBBox("bbox", v[0], v[1], v[2], v[3])
}

// dateOnly reports whether s is a calendar date (YYYY-MM-DD).
func dateOnly(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// checkInstant refuses a value of the parameter param that is neither a
// date nor an RFC 3339 date-time.
func checkInstant(param, s string) error {
	if dateOnly(s) {
		return nil
	}
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
		return params.Invalid(param, "%q is neither a date (2024-05-01) nor a date-time (2024-05-01T12:00:00Z)", s)
	}
	return nil
}

// utcInstant is a checked instant (checkInstant) as uploads store it: a
// date as it is, a date-time in UTC with the fewest digits of a fraction.
func utcInstant(s string) string {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC().Format(time.RFC3339Nano)
	}
	return s
}

// parseDatetime maps datetime (an instant, or an interval a/b with ".."
// or "" for an open end) onto a condition of the attribute attr, whose
// values are dates (a day: from its midnight to the next) or date-times,
// compared as ISO 8601 text. A value meets the interval when it starts
// before its end and ends after its start: a date as the end takes in that
// whole day, and a date-time as the start takes in the date of its day.
// Features without a value are kept, as /req/core/fc-time-response asks
// of features without a temporal geometry.
func parseDatetime(v, attr string) (*mapcommons.Expr, error) {
	check := func(s string) error { return checkInstant("datetime", s) }
	cmp := func(op, kind, s string) *mapcommons.Expr {
		return &mapcommons.Expr{Op: op, Property: attr, Values: []mapcommons.Literal{{Kind: kind, Str: s}}}
	}
	lo, hi, interval := strings.Cut(v, "/")
	if !interval {
		hi = lo
	}
	var conds []*mapcommons.Expr
	if lo != ".." && lo != "" {
		if err := check(lo); err != nil {
			return nil, err
		}
		lo = utcInstant(lo)
		if dateOnly(lo) {
			conds = append(conds, cmp(mapcommons.ExprGe, mapcommons.LitDate, lo))
		} else { // after the instant, or the date of its day
			conds = append(conds, &mapcommons.Expr{Op: mapcommons.ExprOr, Args: []*mapcommons.Expr{
				cmp(mapcommons.ExprGe, mapcommons.LitTimestamp, lo), cmp(mapcommons.ExprEq, mapcommons.LitDate, lo[:len(time.DateOnly)])}})
		}
	}
	if hi != ".." && hi != "" {
		if err := check(hi); err != nil {
			return nil, err
		}
		hi = utcInstant(hi)
		if dateOnly(hi) {
			conds = append(conds, cmp(mapcommons.ExprLe, mapcommons.LitString, hi+"T99")) // after every time of that day
		} else {
			conds = append(conds, cmp(mapcommons.ExprLe, mapcommons.LitTimestamp, hi))
		}
	}
	if len(conds) == 0 {
		return nil, params.Invalid("datetime", "an interval needs at least one end")
	}
	meets := conds[0]
	if len(conds) > 1 {
		meets = &mapcommons.Expr{Op: mapcommons.ExprAnd, Args: conds}
	}
	return &mapcommons.Expr{Op: mapcommons.ExprOr, Args: []*mapcommons.Expr{{Op: mapcommons.ExprIsNull, Property: attr}, meets}}, nil
}

// parseOGCItems reads the parameters of items into a feature query (not
// paged) and the output CRS. Parameters that are neither the API's nor an
// attribute's name are refused (400), as OGC recommends.
func parseOGCItems(r *http.Request, ds *mapcommons.Dataset) (*mapcommons.FeatureQuery, outputCRS, error) {
	q := r.URL.Query()
	fq := &mapcommons.FeatureQuery{}
	out := outputFor(crsCRS84)
	if q.Has("filter") || q.Has("filter-lang") || q.Has("filter-crs") {
		crs := crsCRS84
		if q.Has("filter-crs") {
			var err error
			if crs, err = parseCRS("filter-crs", q.Get("filter-crs")); err != nil {
				return nil, out, err
			}
		}
		if !q.Has("filter") {
			return nil, out, params.Invalid("filter", "filter-lang and filter-crs need a filter")
		}
		where, err := cql2.ParseIn(q.Get("filter-lang"), q.Get("filter"), toCRS84(crs))
		if err != nil {
			return nil, out, err
		}
		fq.Where = where
	}
	if v := q.Get("crs"); q.Has("crs") {
		crs, err := parseCRS("crs", v)
		if err != nil {
			return nil, out, err
		}
		out = outputFor(crs)
	}
	var err error
	if fq.BBox, err = parseOGCBBox(q); err != nil {
		return nil, out, err
	}
	if v := q.Get("datetime"); v != "" {
		// A collection without a date attribute has no temporal
		// geometry: datetime does not apply to it and is ignored.
		if i := dateAttr(ds.Attributes); i >= 0 {
			e, err := parseDatetime(v, ds.Attributes[i].Name)
			if err != nil {
				return nil, out, err
			}
			if fq.Where != nil {
				e = &mapcommons.Expr{Op: mapcommons.ExprAnd, Args: []*mapcommons.Expr{fq.Where, e}}
			}
			fq.Where = e
		} else if _, err := parseDatetime(v, ""); err != nil {
			return nil, out, err
		}
	}
	if v := q.Get("sortby"); v != "" {
		keys := strings.Split(v, ",")
		if len(keys) > 1 {
			return nil, out, params.Invalid("sortby", "sorting by more than one property (%d given) is not supported", len(keys))
		}
		// A "+" arrives as a space when the client did not escape it.
		key := strings.TrimSpace(keys[0])
		if strings.HasPrefix(key, "-") {
			fq.Descending = true
		}
		key = strings.TrimLeft(key, "+-")
		i := mapcommons.AttrIndex(ds.Attributes, key)
		if i < 0 {
			return nil, out, params.Invalid("sortby", "no property %q", key)
		}
		fq.Sort = ds.Attributes[i].Name
	}
	for k, vs := range q {
		if k == "f" || k == "callback" || contains(ogcItemParams, k) {
			continue
		}
		i := mapcommons.AttrIndex(ds.Attributes, k)
		if i < 0 {
			return nil, out, params.Invalid(k, "unknown parameter (neither one of the API's nor a property of the collection)")
		}
		// A date column's queryable is a date (or date-time): other text
		// is refused, as a number is for a numeric column (Validate).
		if ds.Attributes[i].Type == mapcommons.AttrDate {
			for _, v := range vs {
				if err := checkInstant(k, v); err != nil {
					return nil, out, err
				}
			}
		}
		f := mapcommons.Filter{Attr: ds.Attributes[i].Name, Op: mapcommons.OpEquals, Values: vs[:1]}
		if len(vs) > 1 {
			f.Op, f.Values = mapcommons.OpIn, vs
		}
		fq.Filters = append(fq.Filters, f)
	}
	if err := fq.Validate(ds.Attributes); err != nil {
		return nil, out, err
	}
	return fq, out, nil
}

// ogcItemsDataset loads the {id} dataset for reading its features: the
// same refusals as features.json (view to know it, download to read it).
func (s *Server) ogcItemsDataset(r *http.Request) (*mapcommons.Dataset, error) {
	ds, err := s.ogcDataset(r)
	if err != nil {
		return nil, err
	}
	return ds, s.policy.CanDownloadDataset(caller(r), ds)
}

// appendOGCFeature appends a GeoJSON Feature whose id is the feature's
// stable id, its geometry in out's CRS, and extra members (links) when
// not empty.
func appendOGCFeature(dst []byte, keys [][]byte, attrs []mapcommons.Attribute, f *mapcommons.Feature, out outputCRS, extra []byte) ([]byte, error) {
	dst = append(dst, `{"type":"Feature","id":`...)
	dst = strconv.AppendInt(dst, f.ID, 10)
	dst = append(dst, `,"geometry":`...)
	var err error
	switch {
	case out.transform == nil || len(f.Geometry) == 0:
		dst, err = wkb.ToGeoJSON(dst, f.Geometry)
	default:
		var g wkb.Geom
		if g, err = wkb.Decode(f.Geometry); err == nil {
			if err = out.transform(&g); err == nil {
				dst = g.AppendGeoJSON(dst)
			}
		}
	}
	if err != nil {
		return dst, err
	}
	dst = append(dst, `,"properties":{`...)
	dst = geojson.AppendFeatureMembers(dst, keys, attrs, f)
	dst = append(dst, '}')
	dst = append(dst, extra...)
	return append(dst, '}'), nil
}

// countMatches counts the features fq selects (its paging aside), as one
// group of a grouped query: bounded by the query deadline like the scan.
func (s *Server) countMatches(r *http.Request, ds *mapcommons.Dataset, fq *mapcommons.FeatureQuery) (int64, error) {
	if !fq.Selective() {
		return ds.FeatureCount, nil // everything: the dataset's row knows
	}
	cq := *fq
	cq.Offset, cq.Limit, cq.Sort, cq.Descending = 0, -1, "", false
	groups, err := s.svc.Features.GroupFeatures(r.Context(), ds.ID, &cq)
	if err != nil || len(groups) == 0 {
		return 0, err
	}
	return groups[0].Count, nil
}

// handleOGCItems answers GET /ogc/collections/{id}/items: a GeoJSON
// FeatureCollection with numberReturned, timeStamp, numberMatched (where
// known without a count of its own: see below) and the
// self, alternate, collection, next and prev links; or its HTML table.
func (s *Server) handleOGCItems(w http.ResponseWriter, r *http.Request) error {
	ds, err := s.ogcItemsDataset(r)
	if err != nil {
		return err
	}
	f, err := ogcFormat(r)
	if err != nil {
		return err
	}
	fq, out, err := parseOGCItems(r, ds)
	if err != nil {
		return err
	}
	limit, offset, err := ogcPaging(r, ogcDefaultLimit, ogcMaxLimit)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Crs", "<"+out.uri+">")
	varyAccept(w)
	if notModified(w, r, s.datasetETag(r, ds, "ogc-items."+s.ogcVariant(f)), cacheControl(r, s.policy.CanDownloadDataset(nil, ds) == nil)) {
		return nil
	}
	// A repeated query on the same version, as the native path keeps it;
	// the key has the base of the links too.
	key, cacheable := s.ogcCacheKey(r, ds, "ogc-items."+f)
	if c, ok := s.cache.get(key); ok && cacheable {
		return c.write(w, r)
	}
	fq.Offset, fq.Limit = offset, limit
	coll := s.ogcBase(r) + "/collections/" + ds.ReadableName()
	// The links of the page of n features among total (-1: not counted).
	links := func(total, n int64) []ogcLink {
		links := append(s.selfLinks(r, "/collections/"+ds.ReadableName()+"/items", r.URL.Query(), f, ogcGeoJSON),
			ogcLink{Href: coll, Rel: "collection", Type: ogcJSON, Title: "the collection"})
		return append(links, pageLinks(coll+"/items", r.URL.Query(), f, ogcGeoJSON, offset, limit, n, total)...)
	}
	if f == "html" {
		total, err := s.countMatches(r, ds, fq)
		if err != nil {
			return err
		}
		return s.ogcItemsHTML(w, r, ds, fq, links(total, min(limit, max(0, total-offset))), total)
	}
	// numberMatched is given where it costs no count of its own: the
	// dataset's count for a query without a condition (from the page's
	// read: FeatureQuery.Count), and offset + numberReturned for a page
	// that is not full, the last. A full page of a query with a condition
	// leaves it out, as OGC allows: counting would read every match, where
	// the page reads about its own (the first 30 points of a box of 1,627
	// on PostgreSQL: 0.25 ms against 1.2 ms with the count). The links
	// come after the features, when the page says whether there is a next.
	total := int64(-1)
	if !fq.Selective() {
		fq.Count = &total
	}
	var o *jsonOut
	var buf []byte
	started := false
	start := func() error {
		started = true
		o = startJSON(w, r)
		if cacheable {
			o.complete = func(ct string, body []byte) { s.cache.put(key, ct, body) }
		}
		if callbackOf(r) == "" {
			w.Header().Set("Content-Type", ogcGeoJSON)
		}
		buf = fmt.Appendf(nil, `{"type":"FeatureCollection","timeStamp":"%s",`, s.cfg.Now().UTC().Format(time.RFC3339))
		if total >= 0 {
			buf = fmt.Appendf(buf, `"numberMatched":%d,`, total)
		}
		buf = append(buf, `"features":[`...)
		return nil
	}
	keys := geojson.Keys(ds.Attributes)
	returned := 0
	fq.Lazy = true
	err = s.svc.Features.ScanFeatures(r.Context(), ds.ID, fq, func(ft *mapcommons.Feature) error {
		if !started {
			if err := start(); err != nil {
				return err
			}
		}
		if returned > 0 {
			buf = append(buf, ',')
		}
		returned++
		var err error
		if buf, err = appendOGCFeature(buf, keys, ds.Attributes, ft, out, nil); err != nil {
			return err
		}
		if len(buf) >= 64<<10 {
			_, err = o.Write(buf)
			buf = buf[:0]
		}
		return err
	})
	if err != nil {
		return err
	}
	if !started {
		if err := start(); err != nil {
			return err
		}
	}
	buf = fmt.Appendf(buf, `],"numberReturned":%d`, returned)
	if n := int64(returned); total < 0 && n < limit && (n > 0 || offset == 0) {
		total = offset + n
		buf = fmt.Appendf(buf, `,"numberMatched":%d`, total)
	}
	buf = append(buf, ',')
	if buf, err = jsonMember(buf, "links", links(total, int64(returned))); err != nil {
		return err
	}
	buf = append(buf, '}')
	if _, err := o.Write(buf); err != nil {
		return err
	}
	return o.Close()
}

// jsonMember appends "name":<v as JSON> to dst.
func jsonMember(dst []byte, name string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	dst = geojson.AppendString(dst, name)
	dst = append(dst, ':')
	return append(dst, b...), nil
}

// ogcItemsHTML writes a page of features as an HTML table: id, each
// attribute, and the geometry's type.
func (s *Server) ogcItemsHTML(w http.ResponseWriter, r *http.Request, ds *mapcommons.Dataset, fq *mapcommons.FeatureQuery, links []ogcLink, total int64) error {
	page := &ogcPage{Title: ds.Metadata.Title, Description: fmt.Sprintf("%d features match; from %d.", total, fq.Offset+1), Links: links,
		Columns: []string{"id"}}
	for _, a := range ds.Attributes {
		page.Columns = append(page.Columns, a.Name)
	}
	page.Columns = append(page.Columns, "geometry")
	if alt := firstLinkType(links, "alternate", ogcGeoJSON); alt != nil {
		// The map: the same features, the page's own JSON form, in CRS84
		// (MapLibre's) and plain JSON (no JSONP callback).
		page.Map = alt.Href
		if u, err := url.Parse(alt.Href); err == nil {
			q := u.Query()
			q.Del("crs")
			q.Del("callback")
			u.RawQuery = q.Encode()
			page.Map = u.String()
		}
	}
	coll := s.ogcBase(r) + "/collections/" + ds.ReadableName()
	err := s.svc.Features.ScanFeatures(r.Context(), ds.ID, fq, func(ft *mapcommons.Feature) error {
		row := []string{strconv.FormatInt(ft.ID, 10)}
		for _, v := range ft.Values {
			if v == nil {
				row = append(row, "")
			} else {
				row = append(row, fmt.Sprint(v))
			}
		}
		geom := ""
		if g, err := wkb.Decode(ft.Geometry); err == nil && len(ft.Geometry) > 0 {
			geom = wkb.TypeName(g.Type)
		}
		page.Rows = append(page.Rows, append(row, geom))
		page.RowLinks = append(page.RowLinks, coll+"/items/"+row[0]+"?f=html")
		return nil
	})
	if err != nil {
		return err
	}
	return page.write(w, s.assets)
}

// handleOGCItem answers GET /ogc/collections/{id}/items/{featureId}: the
// feature with that stable id, 404 when there is none.
func (s *Server) handleOGCItem(w http.ResponseWriter, r *http.Request) error {
	ds, err := s.ogcItemsDataset(r)
	if err != nil {
		return err
	}
	f, err := ogcFormat(r)
	if err != nil {
		return err
	}
	if err := onlyParams(r, "crs"); err != nil {
		return err
	}
	_, out, err := parseOGCItems(r, ds)
	if err != nil {
		return err
	}
	raw := r.PathValue("featureId")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "feature %q not found in collection %d", raw, ds.ID)
	}
	w.Header().Set("Content-Crs", "<"+out.uri+">")
	varyAccept(w)
	if notModified(w, r, s.datasetETag(r, ds, "ogc-item."+s.ogcVariant(f)), cacheControl(r, s.policy.CanDownloadDataset(nil, ds) == nil)) {
		return nil
	}
	links := s.ogcItemLinks(r, ds, raw, r.URL.Query(), f)
	fq := &mapcommons.FeatureQuery{IDs: []int64{id}, Limit: 1}
	if f == "html" {
		var found bool
		err := s.svc.Features.ScanFeatures(r.Context(), ds.ID, fq, func(*mapcommons.Feature) error { found = true; return nil })
		if err != nil {
			return err
		}
		if !found {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "feature %d not found in collection %d", id, ds.ID)
		}
		return s.ogcItemsHTML(w, r, ds, fq, links, 1)
	}
	key, cacheable := s.ogcCacheKey(r, ds, "ogc-item."+f)
	if c, ok := s.cache.get(key); ok && cacheable {
		return c.write(w, r)
	}
	body, err := s.ogcItemJSON(r, ds, id, out, links)
	if err != nil {
		return err
	}
	o := startJSON(w, r)
	if callbackOf(r) == "" {
		w.Header().Set("Content-Type", ogcGeoJSON)
	}
	if cacheable {
		o.complete = func(ct string, body []byte) { s.cache.put(key, ct, body) }
	}
	o.buf = append(o.buf, body...)
	return o.Close()
}

// ogcItemLinks are the links of the item fid (its path segment) of ds in
// format f, asked with the query q: self, alternate and collection.
func (s *Server) ogcItemLinks(r *http.Request, ds *mapcommons.Dataset, fid string, q url.Values, f string) []ogcLink {
	coll := s.ogcBase(r) + "/collections/" + ds.ReadableName()
	return append(s.selfLinks(r, "/collections/"+ds.ReadableName()+"/items/"+fid, q, f, ogcGeoJSON),
		ogcLink{Href: coll, Rel: "collection", Type: ogcJSON, Title: "the collection"})
}

// ogcItemJSON is the feature id of ds as items/{featureId} answers it in
// JSON, in out's CRS and with links; ENOTFOUND when ds has none.
func (s *Server) ogcItemJSON(r *http.Request, ds *mapcommons.Dataset, id int64, out outputCRS, links []ogcLink) ([]byte, error) {
	extra, err := jsonMember([]byte{','}, "links", links)
	if err != nil {
		return nil, err
	}
	var body []byte
	fq := &mapcommons.FeatureQuery{IDs: []int64{id}, Limit: 1, Lazy: true}
	err = s.svc.Features.ScanFeatures(r.Context(), ds.ID, fq, func(ft *mapcommons.Feature) error {
		var err error
		body, err = appendOGCFeature(nil, geojson.Keys(ds.Attributes), ds.Attributes, ft, out, extra)
		return err
	})
	if err != nil {
		return nil, err
	}
	if body == nil {
		return nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "feature %d not found in collection %d", id, ds.ID)
	}
	return body, nil
}

// ogcCacheKey is the response cache's key of an OGC answer of kind (with
// its format) on ds: its version, the base of its links and the query;
// cacheable is false for a request with a body, which the key does not
// hold.
func (s *Server) ogcCacheKey(r *http.Request, ds *mapcommons.Dataset, kind string) (key string, cacheable bool) {
	return fmt.Sprintf("%d/%d/%s/%s%s?%s", ds.ID, ds.Version, kind, s.ogcBase(r), r.URL.Path, r.URL.RawQuery),
		r.ContentLength == 0 && len(r.TransferEncoding) == 0
}
