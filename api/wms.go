// wms.go: a WMS 1.3.0 service at /wms over the server's renderer
// (mapimage.go): GetCapabilities lists the datasets the caller may download
// and the maps they may view as layers, GetMap draws them, GetFeatureInfo
// reads the features at a pixel, GetLegendGraphic (wmslegend.go) draws a
// layer's legend. Errors are ServiceExceptionReports (wmsException).
package api

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format/geojson"
	"mapcommons/format/wkb"
	"mapcommons/render"
	"mapcommons/style"
)

// Bounds and names of the WMS service.
const (
	wmsVersion         = "1.3.0"
	wmsMaxEntries      = 1000 // datasets, and maps, listed in the capabilities (the oldest first)
	wmsLayerLimit      = 50   // layers of one GetMap
	wmsMaxFeatureCount = 50   // FEATURE_COUNT at most
	wmsMapPrefix       = "map-"
	wmsDefaultStyle    = "default"
	wmsXMLType         = "text/xml; charset=utf-8"
	mercatorRadius     = 6378137.0
	mercatorHalf       = math.Pi * mercatorRadius // 20037508.34…: half the world's width in EPSG:3857
)

// WMS 1.3.0's exception codes.
const (
	wmsInvalidFormat    = "InvalidFormat"
	wmsInvalidCRS       = "InvalidCRS"
	wmsLayerNotDefined  = "LayerNotDefined"
	wmsStyleNotDefined  = "StyleNotDefined"
	wmsInvalidPoint     = "InvalidPoint"
	wmsOperationNotSupp = "OperationNotSupported"
)

// wmsError is a WMS service exception: its code (WMS 1.3.0's, or "" for
// a parameter missing or malformed, which WMS gives no code) and text.
type wmsError struct {
	code, text string
}

func (e *wmsError) Error() string { return e.text }

func wmsErr(code, format string, args ...any) error {
	return &wmsError{code: code, text: fmt.Sprintf(format, args...)}
}

// wmsParams are a request's parameters, their names upper-cased (WMS
// names are case-insensitive), the first value of each.
type wmsParams map[string]string

// parseWMSParams reads a query string: names case-insensitive, values as
// sent.
func parseWMSParams(raw string) (wmsParams, error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, wmsErr("", "the query string does not parse: %v", err)
	}
	p := wmsParams{}
	names := make([]string, 0, len(v))
	for k := range v {
		names = append(names, k)
	}
	sort.Strings(names) // a name sent in two cases: the same answer whatever the map's order
	for _, k := range names {
		if u := strings.ToUpper(k); len(v[k]) > 0 {
			if _, dup := p[u]; !dup {
				p[u] = v[k][0]
			}
		}
	}
	return p, nil
}

// handleWMS answers GET /wms: the WMS 1.3.0 operations by REQUEST, their
// errors as ServiceExceptionReports.
func (s *Server) handleWMS(w http.ResponseWriter, r *http.Request) error {
	if p := info(r).path; strings.Contains(p[strings.LastIndexByte(p, '/')+1:], ".") {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "no such resource: %s (the WMS is /wms)", p)
	}
	privateAnswer(w) // what the caller may see
	// Under the query deadline, as the other routes that draw and query;
	// its end (ETIMEOUT, from s.bounded) is a report too.
	err := s.bounded(s.wms)(w, r)
	if err == nil {
		return nil
	}
	if sw, ok := w.(*statusWriter); ok && sw.status != 0 {
		return err // the answer has begun: s.handle logs and cuts it
	}
	return s.wmsException(w, r, err)
}

func (s *Server) wms(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkBody(r); err != nil {
		return err
	}
	p, err := parseWMSParams(r.URL.RawQuery)
	if err != nil {
		return err
	}
	if sv, ok := p["SERVICE"]; ok && !strings.EqualFold(sv, "WMS") {
		return wmsErr("", "SERVICE: this is a WMS, not %q", sv)
	}
	switch op := p["REQUEST"]; strings.ToLower(op) {
	case "getcapabilities", "capabilities":
		return s.wmsCapabilities(w, r)
	case "getmap", "map":
		return s.wmsGetMap(w, r, p)
	case "getfeatureinfo", "feature_info":
		return s.wmsFeatureInfo(w, r, p)
	case "getlegendgraphic":
		return s.wmsLegend(w, r, p)
	case "":
		return wmsErr("", "REQUEST is missing: GetCapabilities, GetMap, GetFeatureInfo or GetLegendGraphic")
	default:
		return wmsErr(wmsOperationNotSupp, "REQUEST: %q is not an operation of this WMS (GetCapabilities, GetMap, GetFeatureInfo, GetLegendGraphic)", op)
	}
}

// wmsException writes err as a ServiceExceptionReport. A WMS exception
// (a request the service cannot answer as asked) is a 200, as WMS servers
// answer them and as GDAL and QGIS read them: they show the exception's
// text from a 200 XML answer, and only an HTTP status from a 400. What is
// no WMS matter keeps its status: a caller to authenticate (401 with its
// Basic challenge), a deadline passed (503), an internal error (500, its
// detail logged, not shown).
func (s *Server) wmsException(w http.ResponseWriter, r *http.Request, err error) error {
	status, code, text := http.StatusOK, "", ""
	var we *wmsError
	switch {
	case errors.As(err, &we):
		code, text = we.code, we.text
	case mapcommons.ErrorCode(err) == mapcommons.EINVALID:
		text = mapcommons.ErrorMessage(err)
	default:
		ec := mapcommons.ErrorCode(err)
		st, ok := codeStatus[ec]
		if !ok {
			st = http.StatusInternalServerError
		}
		status, text = st, mapcommons.ErrorMessage(err)
		if ec == mapcommons.EINTERNAL || !ok {
			s.logger.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", r.URL.Path, "err", err)
			text = "internal error"
		}
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="mapcommons"`)
		}
		if me := (*mapcommons.Error)(nil); errors.As(err, &me) && me.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(me.RetryAfter)))
		}
	}
	doc := wmsExceptionReport{Version: wmsVersion, XMLNS: "http://www.opengis.net/ogc",
		Exception: wmsServiceException{Code: code, Text: text}}
	b, _ := xml.MarshalIndent(doc, "", "  ")
	h := w.Header()
	h.Del("Content-Length")
	h.Del("ETag")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", wmsXMLType)
	w.WriteHeader(status)
	_, werr := w.Write(append([]byte(xml.Header), b...))
	return werr
}

type wmsExceptionReport struct {
	XMLName   xml.Name            `xml:"ServiceExceptionReport"`
	Version   string              `xml:"version,attr"`
	XMLNS     string              `xml:"xmlns,attr"`
	Exception wmsServiceException `xml:"ServiceException"`
}

type wmsServiceException struct {
	Code string `xml:"code,attr,omitempty"`
	Text string `xml:",chardata"`
}

// wmsLayer is one layer a WMS request names, found and allowed: a
// dataset drawn alone (datasetLayer) or a map's layers.
type wmsLayer struct {
	name   string
	title  string
	layers []render.Layer // those whose dataset the caller may not download hold none
	extent [4]float64
	key    string // of the tile cache: what is drawn (the dataset's version, or mapDrawn's)
	public bool   // anyone may have its image
}

// wmsMapName is the layer name of a map: map-<readable name of its title>.
func wmsMapName(m *mapcommons.Map) string {
	return wmsMapPrefix + mapcommons.ReadableName(m.Title, m.ID)
}

// parseWMSName reads a layer name: a map's (map-<title>-<id>: two dashes,
// which a dataset's readable name never has) or a dataset's readable name
// or number.
func parseWMSName(name string) (id int64, isMap, ok bool) {
	if rest, found := strings.CutPrefix(name, wmsMapPrefix); found && strings.Contains(rest, "-") {
		id, ok = mapcommons.ParseReadableName(rest)
		return id, true, ok
	}
	id, ok = mapcommons.ParseReadableName(name)
	return id, false, ok
}

// wmsFindLayer finds a layer by name for the caller: a missing one and one
// they may not see are the same LayerNotDefined (or the same request to
// sign in, as everywhere else, for an anonymous caller where the policy
// asks it).
func (s *Server) wmsFindLayer(r *http.Request, name string) (*wmsLayer, error) {
	me := caller(r)
	notDefined := func(model string) error {
		if err := s.policy.NotFound(me, model, mapcommons.Errorf(mapcommons.ENOTFOUND, "no layer")); mapcommons.ErrorCode(err) == mapcommons.EUNAUTHORIZED {
			return err
		}
		return wmsErr(wmsLayerNotDefined, "no layer %q", name)
	}
	id, isMap, ok := parseWMSName(name)
	if !isMap {
		if !ok {
			return nil, notDefined(mapcommons.ModelOverlay)
		}
		ds, err := s.svc.Datasets.FindDatasetByID(r.Context(), id)
		if err != nil && mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
			return nil, err
		}
		if err != nil || s.policy.CanDownloadDataset(me, ds) != nil {
			return nil, notDefined(mapcommons.ModelOverlay)
		}
		return &wmsLayer{name: name, title: ds.Title, layers: []render.Layer{datasetLayer(ds)}, extent: datasetExtent(ds),
			key: fmt.Sprintf("d%d.%d", ds.ID, ds.Version), public: s.policy.CanDownloadDataset(nil, ds) == nil}, nil
	}
	if !ok || s.svc.Maps == nil {
		return nil, notDefined(mapcommons.ModelMap)
	}
	m, err := s.svc.Maps.FindMapByID(r.Context(), id)
	if err != nil && mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
		return nil, err
	}
	if err != nil || s.policy.CanViewMap(me, m) != nil {
		return nil, notDefined(mapcommons.ModelMap)
	}
	layers := s.viewableLayers(r.Context(), me, m, map[int64]*mapcommons.Dataset{})
	return &wmsLayer{name: name, title: m.Title, layers: layers, extent: mapExtent(m, layers),
		key: "m" + strconv.FormatInt(m.ID, 10) + "." + mapDrawn(m, layers), public: s.mapPublic(r, m, true)}, nil
}

// wmsView is the box and size of a GetMap (and of a GetFeatureInfo's
// map): the box in the CRS's own units (x, y: longitude and latitude for
// CRS:84 and EPSG:4326, metres for EPSG:3857).
type wmsView struct {
	crs            string // render's CRS
	x0, y0, x1, y1 float64
	width, height  int
}

// parseWMSView reads CRS (SRS before 1.3.0), BBOX, WIDTH and HEIGHT.
func parseWMSView(p wmsParams) (*wmsView, error) {
	v := &wmsView{}
	version := p["VERSION"]
	old := version != "" && version != wmsVersion && strings.HasPrefix(version, "1.") && version < wmsVersion
	crsName := p["CRS"]
	if old && p["SRS"] != "" {
		crsName = p["SRS"]
	}
	if crsName == "" {
		return nil, wmsErr("", "CRS is missing: CRS:84, EPSG:4326 or EPSG:3857")
	}
	latFirst := false
	switch strings.ToUpper(crsName) {
	case "CRS:84":
		v.crs = render.CRSLonLat
	case "EPSG:4326":
		v.crs, latFirst = render.CRSLonLat, !old // WMS 1.3.0: EPSG:4326's axes are latitude, longitude
	case "EPSG:3857", "EPSG:900913", "EPSG:3785", "EPSG:102100", "EPSG:102113":
		v.crs = render.CRSMercator
	default:
		return nil, wmsErr(wmsInvalidCRS, "CRS: %q is not one of this WMS (CRS:84, EPSG:4326, EPSG:3857)", crsName)
	}
	raw, ok := p["BBOX"]
	if !ok || raw == "" {
		return nil, wmsErr("", "BBOX is missing: minx,miny,maxx,maxy in the CRS's axis order")
	}
	parts := strings.Split(raw, ",")
	if len(parts) != 4 {
		return nil, wmsErr("", "BBOX: four numbers, not %q", raw)
	}
	var b [4]float64
	for i, s := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, wmsErr("", "BBOX: %q is not a number", s)
		}
		b[i] = f
	}
	if latFirst {
		b = [4]float64{b[1], b[0], b[3], b[2]}
	}
	if !(b[0] < b[2] && b[1] < b[3]) || math.IsInf(b[2]-b[0], 0) || math.IsInf(b[3]-b[1], 0) {
		return nil, wmsErr("", "BBOX: %q is not a box (minx < maxx and miny < maxy)", raw)
	}
	v.x0, v.y0, v.x1, v.y1 = b[0], b[1], b[2], b[3]
	side := func(name string) (int, error) {
		s, ok := p[name]
		if !ok || s == "" {
			return 0, wmsErr("", "%s is missing", name)
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > render.MaxSide {
			return 0, wmsErr("", "%s: a whole number of pixels from 1 to %d, not %q", name, render.MaxSide, s)
		}
		return n, nil
	}
	var err error
	if v.width, err = side("WIDTH"); err != nil {
		return nil, err
	}
	if v.height, err = side("HEIGHT"); err != nil {
		return nil, err
	}
	if v.width*v.height > render.MaxPixels {
		return nil, wmsErr("", "%d×%d pixels: at most %d in all", v.width, v.height, render.MaxPixels)
	}
	return v, nil
}

// world is the CRS's world in its own units.
func (v *wmsView) world() [4]float64 {
	if v.crs == render.CRSLonLat {
		return [4]float64{-180, -90, 180, 90}
	}
	return [4]float64{-mercatorHalf, -mercatorHalf, mercatorHalf, mercatorHalf}
}

// lonLat is a point of the CRS's units in longitude and latitude.
func (v *wmsView) lonLat(x, y float64) (float64, float64) {
	if v.crs == render.CRSLonLat {
		return x, y
	}
	return x / mercatorRadius * 180 / math.Pi, math.Atan(math.Sinh(y/mercatorRadius)) * 180 / math.Pi
}

// fromLonLat is lonLat's inverse.
func fromLonLat(crs string, lon, lat float64) (float64, float64) {
	if crs == render.CRSLonLat {
		return lon, lat
	}
	lat = max(-maxMercatorLat, min(maxMercatorLat, lat))
	return lon * math.Pi / 180 * mercatorRadius, math.Log(math.Tan(math.Pi/4+lat*math.Pi/360)) * mercatorRadius
}

// drawn is the part of the image that shows the world: its pixels (x0,
// y0, x1, y1, y down) and their box in lon/lat; false when the box is
// outside the world. A box within the world is the whole image.
func (v *wmsView) drawn() (image.Rectangle, [4]float64, bool) {
	w := v.world()
	kx, ky := float64(v.width)/(v.x1-v.x0), float64(v.height)/(v.y1-v.y0)
	// The world's edges in pixels, rounded: a box past the edge by less
	// than half a pixel (a client's rounding of ±180 or of Mercator's
	// edge) is the whole image.
	edge := func(px float64, n int) int { return max(0, min(n, int(math.Round(px)))) }
	px0, px1, py0, py1 := 0, v.width, 0, v.height
	if v.x0 < w[0] {
		px0 = edge((w[0]-v.x0)*kx, v.width)
	}
	if v.x1 > w[2] {
		px1 = edge((w[2]-v.x0)*kx, v.width)
	}
	if v.y1 > w[3] {
		py0 = edge((v.y1-w[3])*ky, v.height)
	}
	if v.y0 < w[1] {
		py1 = edge((v.y1-w[1])*ky, v.height)
	}
	x0, x1 := v.x0+float64(px0)/kx, v.x0+float64(px1)/kx
	y1, y0 := v.y1-float64(py0)/ky, v.y1-float64(py1)/ky
	if px1-px0 < 1 || py1-py0 < 1 {
		return image.Rectangle{}, [4]float64{}, false
	}
	// Rounded to whole pixels, the box may pass the edge by a fraction
	// of a pixel: the edge it is.
	x0, y0, x1, y1 = max(x0, w[0]), max(y0, w[1]), min(x1, w[2]), min(y1, w[3])
	lon0, lat0 := v.lonLat(x0, y0)
	lon1, lat1 := v.lonLat(x1, y1)
	box := [4]float64{max(lon0, -180), max(lat0, -90), min(lon1, 180), min(lat1, 90)}
	if v.crs == render.CRSMercator {
		box[1], box[3] = max(box[1], -maxMercatorLat), min(box[3], maxMercatorLat)
	}
	if !(box[0] < box[2] && box[1] < box[3]) {
		return image.Rectangle{}, [4]float64{}, false
	}
	return image.Rect(px0, py0, px1, py1), box, true
}

// wmsLayers reads a list of layer names (LAYERS, QUERY_LAYERS) and their
// STYLES: each "" or "default".
func (s *Server) wmsLayers(r *http.Request, param, names, styles string) ([]*wmsLayer, error) {
	if strings.TrimSpace(names) == "" {
		return nil, wmsErr(wmsLayerNotDefined, "%s is missing: the names of the layers", param)
	}
	list := strings.Split(names, ",")
	if len(list) > wmsLayerLimit {
		return nil, wmsErr("", "%s: at most %d layers, not %d", param, wmsLayerLimit, len(list))
	}
	var st []string
	if styles != "" {
		st = strings.Split(styles, ",")
		if len(st) != len(list) {
			return nil, wmsErr(wmsStyleNotDefined, "STYLES: %d styles for %d layers", len(st), len(list))
		}
	}
	var out []*wmsLayer
	for i, name := range list {
		name = strings.TrimSpace(name)
		l, err := s.wmsFindLayer(r, name)
		if err != nil {
			return nil, err
		}
		if st != nil {
			if err := checkWMSStyle(name, st[i]); err != nil {
				return nil, err
			}
		}
		out = append(out, l)
	}
	return out, nil
}

func checkWMSStyle(layer, style string) error {
	if style = strings.TrimSpace(style); style != "" && !strings.EqualFold(style, wmsDefaultStyle) {
		return wmsErr(wmsStyleNotDefined, "layer %q has no style %q (only %q)", layer, style, wmsDefaultStyle)
	}
	return nil
}

// jpegType is GetMap's other format: GDAL's WMS driver asks for it when
// the URL names none (as the subdatasets it lists do not).
const jpegType = "image/jpeg"

// wmsGetMap answers GetMap: the layers drawn in order over BBOX, filling
// WIDTH×HEIGHT exactly; where the box passes the world's edge nothing is
// drawn (the background). PNG, or JPEG (never transparent: on BGCOLOR).
func (s *Server) wmsGetMap(w http.ResponseWriter, r *http.Request, p wmsParams) error {
	ctype := pngType
	switch f := strings.ToLower(strings.TrimSpace(p["FORMAT"])); {
	case strings.HasPrefix(f, pngType):
	case f == jpegType || f == "image/jpg":
		ctype = jpegType
	case f == "":
		return wmsErr(wmsInvalidFormat, "FORMAT is missing: image/png or image/jpeg")
	default:
		return wmsErr(wmsInvalidFormat, "FORMAT: %q is not one of this WMS (image/png, image/jpeg)", p["FORMAT"])
	}
	v, err := parseWMSView(p)
	if err != nil {
		return err
	}
	layers, err := s.wmsLayers(r, "LAYERS", p["LAYERS"], p["STYLES"])
	if err != nil {
		return err
	}
	var bg color.Color
	transparent := false
	if t := p["TRANSPARENT"]; t != "" {
		switch strings.ToUpper(t) {
		case "TRUE":
			transparent = true
		case "FALSE":
		default:
			return wmsErr("", "TRANSPARENT: TRUE or FALSE, not %q", t)
		}
	}
	rgb := 0xffffff
	if c := p["BGCOLOR"]; c != "" {
		var ok bool
		if rgb, ok = style.ParseColor(c); !ok {
			return wmsErr("", "BGCOLOR: a colour as 0xRRGGBB, not %q", c)
		}
	}
	if !transparent || ctype == jpegType {
		bg = color.RGBA{uint8(rgb >> 16), uint8(rgb >> 8), uint8(rgb), 255}
	}
	rect, box, ok := v.drawn()
	req := render.Request{BBox: box, Width: rect.Dx(), Height: rect.Dy(), CRS: v.crs, Background: bg}
	// Cached, and tagged, by what is drawn: the datasets' versions, the
	// maps' mapDrawn.
	keys := make([]string, 0, len(layers))
	public := true
	for _, l := range layers {
		req.Layers = append(req.Layers, l.layers...)
		keys = append(keys, l.key)
		public = public && l.public
	}
	key := fmt.Sprintf("wms/%s/%s/%s/%dx%d/%v/%v", ctype, strings.Join(keys, ","), imageKey(req), v.width, v.height, rect, bg)
	etag := `W/"wms-` + strconv.FormatUint(fnv64a([]byte(processTag+key)), 16) + `"`
	if notModified(w, r, etag, cacheControl(r, public)) {
		return nil
	}
	return s.writeCached(w, r, key, ctype, func() ([]byte, error) {
		var img image.Image
		if ok && rect == image.Rect(0, 0, v.width, v.height) {
			res, err := render.Draw(r.Context(), s.svc.Features, s.classes, req)
			if err != nil {
				return nil, err
			}
			img = res.Image
		} else {
			// Part of the image, or none, shows the world: drawn into its place.
			all := image.NewRGBA(image.Rect(0, 0, v.width, v.height))
			if bg != nil {
				draw.Draw(all, all.Bounds(), image.NewUniform(bg), image.Point{}, draw.Src)
			}
			if ok {
				res, err := render.Draw(r.Context(), s.svc.Features, s.classes, req)
				if err != nil {
					return nil, err
				}
				draw.Draw(all, rect, res.Image, image.Point{}, draw.Src)
			}
			img = all
		}
		var b bytes.Buffer
		if ctype == jpegType {
			err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 90})
		} else {
			err = render.EncodePNG(&b, img)
		}
		return b.Bytes(), err
	})
}

// wmsInfoFormats are GetFeatureInfo's formats.
var wmsInfoFormats = []string{"application/json", "text/html", "text/plain"}

// wmsFeatureInfo answers GetFeatureInfo: the features of each of
// QUERY_LAYERS at pixel I, J of the map GetMap would draw — those within a
// box of a pixel about it (a few pixels for points, lines) — at most
// FEATURE_COUNT (default 1, at most 50) per layer; of a map, its layers'
// from the top, none of one whose dataset the caller may not download.
func (s *Server) wmsFeatureInfo(w http.ResponseWriter, r *http.Request, p wmsParams) error {
	format := strings.ToLower(strings.TrimSpace(p["INFO_FORMAT"]))
	switch format {
	case "":
		format = "text/plain"
	case "application/geo+json", "application/json", "text/html", "text/plain":
	default:
		return wmsErr(wmsInvalidFormat, "INFO_FORMAT: %q is not one of this WMS (%s)", p["INFO_FORMAT"], strings.Join(wmsInfoFormats, ", "))
	}
	v, err := parseWMSView(p)
	if err != nil {
		return err
	}
	layers, err := s.wmsLayers(r, "LAYERS", p["LAYERS"], p["STYLES"])
	if err != nil {
		return err
	}
	queried, err := s.wmsLayers(r, "QUERY_LAYERS", p["QUERY_LAYERS"], "")
	if err != nil {
		return err
	}
	for _, q := range queried {
		found := false
		for _, l := range layers {
			found = found || l.name == q.name
		}
		if !found {
			return wmsErr(wmsLayerNotDefined, "QUERY_LAYERS: %q is not one of LAYERS", q.name)
		}
	}
	iName, jName := "I", "J"
	if p["I"] == "" && p["X"] != "" {
		iName, jName = "X", "Y"
	}
	pixel := func(name string, n int) (int, error) {
		s, ok := p[name]
		if !ok || s == "" {
			return 0, wmsErr(wmsInvalidPoint, "%s is missing: the pixel's column (I) and row (J)", name)
		}
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 0 || k >= n {
			return 0, wmsErr(wmsInvalidPoint, "%s: a pixel from 0 to %d, not %q", name, n-1, s)
		}
		return k, nil
	}
	i, err := pixel(iName, v.width)
	if err != nil {
		return err
	}
	j, err := pixel(jName, v.height)
	if err != nil {
		return err
	}
	count := 1
	if c := p["FEATURE_COUNT"]; c != "" {
		if count, err = strconv.Atoi(strings.TrimSpace(c)); err != nil || count < 1 {
			return wmsErr("", "FEATURE_COUNT: a whole number from 1, not %q", c)
		}
		count = min(count, wmsMaxFeatureCount)
	}
	// The pixel's centre, and the size of a pixel, in the CRS's units.
	dx, dy := (v.x1-v.x0)/float64(v.width), (v.y1-v.y0)/float64(v.height)
	cx, cy := v.x0+(float64(i)+0.5)*dx, v.y1-(float64(j)+0.5)*dy
	var answers []wmsLayerFeatures
	for _, q := range queried {
		a := wmsLayerFeatures{name: q.name, title: q.title}
		for k := len(q.layers) - 1; k >= 0; k-- { // a map's top layer first
			ds := q.layers[k].Dataset
			if ds == nil || len(a.features) >= count {
				continue
			}
			half := wmsReach(ds)
			x0, y0 := v.lonLat(cx-half*dx, cy-half*dy)
			x1, y1 := v.lonLat(cx+half*dx, cy+half*dy)
			box := &mapcommons.BBox{W: max(x0, -180), S: max(y0, -90), E: min(x1, 180), N: min(y1, 90)}
			if !(box.W <= box.E && box.S <= box.N) {
				continue
			}
			err := s.svc.Features.ScanFeatures(r.Context(), ds.ID, &mapcommons.FeatureQuery{BBox: box, Limit: int64(count - len(a.features))},
				func(f *mapcommons.Feature) error {
					c := *f
					c.Values = append([]any(nil), f.Values...)
					c.Geometry = append([]byte(nil), f.Geometry...)
					a.features = append(a.features, wmsFeature{ds: ds, f: &c})
					return nil
				})
			if err != nil {
				return err
			}
		}
		answers = append(answers, a)
	}
	switch format {
	case "text/html":
		return writeWMSInfoHTML(w, answers)
	case "text/plain":
		return writeWMSInfoText(w, answers)
	}
	return writeWMSInfoJSON(w, format, answers)
}

// wmsReach is how far about a pixel, in pixels, GetFeatureInfo finds a
// dataset's features: half a pixel for polygons, 3 pixels for lines, 5
// for points (a symbol's reach).
func wmsReach(ds *mapcommons.Dataset) float64 {
	const points, polygons = 1<<1 | 1<<4, 1<<3 | 1<<6
	switch {
	case ds.GeometryMask&^points == 0:
		return 5
	case ds.GeometryMask&polygons == 0:
		return 3
	}
	return 0.5
}

type wmsFeature struct {
	ds *mapcommons.Dataset
	f  *mapcommons.Feature
}

type wmsLayerFeatures struct {
	name, title string
	features    []wmsFeature
}

func writeWMSInfoJSON(w http.ResponseWriter, ctype string, answers []wmsLayerFeatures) error {
	b := []byte(`{"type":"FeatureCollection","features":[`)
	n := 0
	for _, a := range answers {
		for _, f := range a.features {
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, `{"type":"Feature","id":`...)
			b = strconv.AppendInt(b, f.f.ID, 10)
			b = append(b, `,"layer":`...)
			b = geojson.AppendString(b, a.name)
			b = append(b, `,"geometry":`...)
			var err error
			if b, err = wkb.ToGeoJSON(b, f.f.Geometry); err != nil {
				return err
			}
			b = append(b, `,"properties":{`...)
			b = geojson.AppendFeatureMembers(b, geojson.Keys(f.ds.Attributes), f.ds.Attributes, f.f)
			b = append(b, "}}"...)
		}
	}
	b = append(b, "]}"...)
	w.Header().Set("Content-Type", ctype)
	_, err := w.Write(b)
	return err
}

func wmsValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func writeWMSInfoHTML(w http.ResponseWriter, answers []wmsLayerFeatures) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Features</title></head><body>\n")
	for _, a := range answers {
		fmt.Fprintf(&b, "<h2>%s</h2>\n", html.EscapeString(a.title))
		if len(a.features) == 0 {
			b.WriteString("<p>No feature here.</p>\n")
			continue
		}
		var ds *mapcommons.Dataset
		for _, f := range a.features {
			if f.ds != ds {
				if ds != nil {
					b.WriteString("</table>\n")
				}
				ds = f.ds
				b.WriteString("<table>\n<tr><th>id</th>")
				for _, at := range ds.Attributes {
					fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(at.Name))
				}
				b.WriteString("</tr>\n")
			}
			fmt.Fprintf(&b, "<tr><td>%d</td>", f.f.ID)
			for k := range ds.Attributes {
				val := ""
				if k < len(f.f.Values) {
					val = wmsValue(f.f.Values[k])
				}
				fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(val))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table>\n")
	}
	b.WriteString("</body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, err := w.Write([]byte(b.String()))
	return err
}

func writeWMSInfoText(w http.ResponseWriter, answers []wmsLayerFeatures) error {
	var b strings.Builder
	for _, a := range answers {
		fmt.Fprintf(&b, "Layer '%s'\n", a.name)
		for _, f := range a.features {
			fmt.Fprintf(&b, "  Feature %d:\n", f.f.ID)
			for k, at := range f.ds.Attributes {
				val := ""
				if k < len(f.f.Values) {
					val = wmsValue(f.f.Values[k])
				}
				fmt.Fprintf(&b, "    %s = %s\n", at.Name, strings.NewReplacer("\n", " ", "\r", " ").Replace(val))
			}
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, err := w.Write([]byte(b.String()))
	return err
}
