// mapimage.go: maps and datasets drawn as PNG images by the server's
// renderer (package render): GET /maps/{id}.png and GET /datasets/{id}.png,
// and the map tiles of a collection (ogcmaptiles.go).
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"net/http"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/basemap"
	"mapcommons/format/wkb"
	"mapcommons/params"
	"mapcommons/render"
	"mapcommons/style"
)

// pngType is the content type of a drawn image.
const pngType = "image/png"

// Defaults of an image.
const (
	defaultImageSide = 512 // CSS pixels of the longer side when neither width nor height is given
	maxMercatorLat   = 85.0511287798066
)

// imageRequest reads an image's parameters from r's query: width and
// height (CSS pixels), bbox (west,south,east,north in lon/lat), scale (1 to
// 4), crs (EPSG:3857 or EPSG:4326; def when not given) and basemap
// (builtin, the default: the request's first layer is the built-in
// basemap, its sea the background; none: nothing under the layers). extent is the
// box drawn when bbox is not given; it is then widened to the image's
// shape, so that the drawing keeps its proportions, and a side not given
// follows the other's and the box's shape. Given both sides and a bbox,
// the box fills the image exactly, as WMS draws it.
func imageRequest(r *http.Request, extent [4]float64, def string) (render.Request, error) {
	return imageRequestOf(r.URL.RawQuery, extent, def)
}

// imageRequestOf is imageRequest of a query string.
func imageRequestOf(query string, extent [4]float64, def string) (render.Request, error) {
	var p params.Params = params.Params{}
	if err := p.ParseQuery(query); err != nil {
		return render.Request{}, err
	}
	req := render.Request{CRS: def}
	if v, ok := p.String("basemap"); ok && v != "" && v != "builtin" {
		if v != "none" {
			return req, params.Invalid("basemap", "builtin (the default) or none, not %q", v)
		}
	} else {
		req.Background = rgb(basemap.SeaColour) // its layers once the box is known
	}
	if v, ok := p.String("crs"); ok && v != "" {
		switch strings.ToUpper(v) {
		case render.CRSMercator, mapcommons.ProjectionMercator, "EPSG:900913":
			req.CRS = render.CRSMercator
		case render.CRSLonLat, "CRS:84":
			req.CRS = render.CRSLonLat
		default:
			return req, mapcommons.Errorf(mapcommons.EINVALID, "crs: %q is neither EPSG:3857 nor EPSG:4326", v)
		}
	}
	side := func(name string) (int, error) {
		v, ok := p.String(name)
		if !ok || v == "" {
			return 0, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > render.MaxSide {
			return 0, mapcommons.Errorf(mapcommons.EINVALID, "%s: a whole number of pixels from 1 to %d, not %q", name, render.MaxSide, v)
		}
		return n, nil
	}
	var err error
	if req.Width, err = side("width"); err != nil {
		return req, err
	}
	if req.Height, err = side("height"); err != nil {
		return req, err
	}
	if v, ok := p.String("scale"); ok && v != "" {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f >= 1 && f <= render.MaxScale) {
			return req, mapcommons.Errorf(mapcommons.EINVALID, "scale: a number from 1 to %d, not %q", render.MaxScale, v)
		}
		req.Scale = f
	}
	box, given := extent, false
	if v, ok, err := p.Numbers("bbox"); err != nil {
		return req, err
	} else if ok {
		if len(v) != 4 {
			return req, params.Invalid("bbox", "west,south,east,north: four numbers, not %d", len(v))
		}
		b, err := mapcommons.NewBBox("bbox", v[0], v[1], v[2], v[3])
		if err != nil {
			return req, err
		}
		if b.W >= b.E {
			return req, mapcommons.Errorf(mapcommons.EINVALID, "bbox: an image of a box across the antimeridian is not drawn (west %v, east %v)", b.W, b.E)
		}
		box, given = [4]float64{b.W, b.S, b.E, b.N}, true
	}
	if req.CRS == render.CRSMercator {
		box[1], box[3] = max(box[1], -maxMercatorLat), min(box[3], maxMercatorLat)
	}
	if !(box[0] < box[2] && box[1] < box[3]) {
		return req, mapcommons.Errorf(mapcommons.EINVALID, "bbox: %v is empty", box)
	}
	req.BBox = box
	fitImage(&req, given)
	if req.Background != nil {
		req.Layers = basemapLayers(imageZoom(req))
	}
	return req, nil
}

// imageZoom is the zoom of Web Mercator tiles whose scale is nearest an
// image's (its box's width over its width in CSS pixels), 0 to 22.
func imageZoom(req render.Request) int {
	span := req.BBox[2] - req.BBox[0]
	if !(span > 0) || req.Width <= 0 {
		return 0
	}
	z := math.Round(math.Log2(360 * float64(req.Width) / (256 * span)))
	return int(max(0, min(22, z)))
}

// fitImage sizes req to the shape of its box: a side not given (0) follows
// the other's and the box's shape (the longer defaultImageSide when
// neither is); given both, a box not given (the default extent) is widened
// to the image's shape, a given one fills it exactly.
func fitImage(req *render.Request, given bool) {
	if given && req.Width > 0 && req.Height > 0 {
		return
	}
	box := req.BBox
	x0, y0 := project(req.CRS, box[0], box[1])
	x1, y1 := project(req.CRS, box[2], box[3])
	aspect := (y1 - y0) / (x1 - x0) // height over width
	switch {
	case req.Width == 0 && req.Height == 0:
		if aspect <= 1 {
			req.Width, req.Height = defaultImageSide, int(math.Round(defaultImageSide*aspect))
		} else {
			req.Width, req.Height = int(math.Round(defaultImageSide/aspect)), defaultImageSide
		}
	case req.Height == 0:
		req.Height = int(math.Round(float64(req.Width) * aspect))
	case req.Width == 0:
		req.Width = int(math.Round(float64(req.Height) / aspect))
	default: // both sides, the default box: widen the box to their shape
		want := float64(req.Height) / float64(req.Width)
		cx, cy := (x0+x1)/2, (y0+y1)/2
		if want > aspect { // taller: more y
			half := (x1 - x0) * want / 2
			y0, y1 = cy-half, cy+half
		} else {
			half := (y1 - y0) / want / 2
			x0, x1 = cx-half, cx+half
		}
		req.BBox = unproject(req.CRS, x0, y0, x1, y1)
	}
	req.Width, req.Height = min(max(req.Width, 1), render.MaxSide), min(max(req.Height, 1), render.MaxSide)
}

// project is lon, lat in crs: degrees for EPSG:4326, unit-sphere Mercator
// for EPSG:3857 (only the shape matters here).
func project(crs string, lon, lat float64) (float64, float64) {
	if crs == render.CRSLonLat {
		return lon, lat
	}
	return lon * math.Pi / 180, math.Log(math.Tan(math.Pi/4 + lat*math.Pi/360))
}

// unproject is the lon/lat box of a box of project's coordinates, clamped
// to the world of crs.
func unproject(crs string, x0, y0, x1, y1 float64) [4]float64 {
	if crs == render.CRSLonLat {
		return [4]float64{max(x0, -180), max(y0, -90), min(x1, 180), min(y1, 90)}
	}
	lat := func(y float64) float64 { return (2*math.Atan(math.Exp(y)) - math.Pi/2) * 180 / math.Pi }
	return [4]float64{max(x0*180/math.Pi, -180), max(lat(y0), -maxMercatorLat), min(x1*180/math.Pi, 180), min(lat(y1), maxMercatorLat)}
}

// basemapLayers are the built-in basemap drawn under an image of zoom z
// (its sea is the image's background), as its MapLibre style paints it:
// its land (the pieces of the zoom's band, filled as one), its urban areas
// (from zoom 4) a shade darker, its first-order divisions' boundaries as
// thin dashes, then its borders and coasts (ScanLines) as lines of its
// border colour.
func basemapLayers(z int) []render.Layer {
	type scan = func(context.Context, *mapcommons.FeatureQuery, func(*mapcommons.Feature) error) error
	// fill fills the polygons of a scan in a colour, without outlines (the
	// pieces' cut edges are no coast).
	fill := func(colour int, sc scan) render.Layer {
		l := style.NewLayer()
		l.Styles.Type = mapcommons.LayerPrimitive
		l.Styles.Fill.Color, l.Styles.Fill.Opacity, l.Styles.Stroke.Alpha = &colour, 1, 0
		return render.Layer{Layer: l, Dataset: &mapcommons.Dataset{GeometryMask: 1 << wkb.MultiPolygon}, Scan: sc}
	}
	// lines strokes the lines of a scan.
	lines := func(colour int, weight float64, lineStyle string, sc scan) render.Layer {
		l := style.NewLayer()
		l.Styles.Type = mapcommons.LayerPrimitive
		l.Styles.Stroke.Color, l.Styles.Stroke.Weight, l.Styles.Stroke.Alpha = &colour, &weight, 1
		l.Styles.Icon.LineStyle = lineStyle
		return render.Layer{Layer: l, Dataset: &mapcommons.Dataset{GeometryMask: 1 << wkb.LineString}, Scan: sc}
	}
	return []render.Layer{
		fill(basemap.LandColour, basemap.ScanLand(z)),
		fill(basemap.UrbanColour, basemap.ScanUrban(z)),
		lines(basemap.DivisionColour, 0.4, "dashedThin", basemap.ScanDivisions(z)),
		lines(basemap.BorderColour, 0.5, "", basemap.ScanLines(z)),
	}
}

// rgb is an opaque colour of 0xRRGGBB.
func rgb(c int) color.RGBA { return color.RGBA{uint8(c >> 16), uint8(c >> 8), uint8(c), 255} }

// datasetExtent is the box a dataset's image shows by default: its extent
// with a margin of a twentieth each side (a hundredth of a degree at the
// least, so that one point shows), or the world.
func datasetExtent(ds *mapcommons.Dataset) [4]float64 {
	if ds == nil || ds.Extent == nil {
		return [4]float64{-180, -90, 180, 90}
	}
	e := ds.Extent
	mx, my := max((e.MaxX-e.MinX)/20, 0.01), max((e.MaxY-e.MinY)/20, 0.01)
	return [4]float64{max(e.MinX-mx, -180), max(e.MinY-my, -90), min(e.MaxX+mx, 180), min(e.MaxY+my, 90)}
}

// datasetLayer is the layer a dataset is drawn as on its own: a new
// layer's defaults, of the dataset's default type.
func datasetLayer(ds *mapcommons.Dataset) render.Layer {
	l := style.NewLayer()
	l.Source = "finder:" + strconv.FormatInt(ds.ID, 10)
	l.Title = ds.Title
	l.Styles.Type = style.DefaultType(ds)
	return render.Layer{Layer: l, Dataset: ds}
}

// writeDatasetImage answers GET /datasets/{id}.png: the dataset drawn
// with a new layer's styles, to who may download it (an image shows its
// data).
func (s *Server) writeDatasetImage(w http.ResponseWriter, r *http.Request, ds *mapcommons.Dataset) error {
	if err := s.policy.CanDownloadDataset(caller(r), ds); err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	req, err := imageRequest(r, datasetExtent(ds), render.CRSMercator)
	if err != nil {
		return err
	}
	if notModified(w, r, s.datasetETag(r, ds, pngType), cacheControl(r, s.policy.CanDownloadDataset(nil, ds) == nil)) {
		return nil
	}
	req.Layers = append(req.Layers, datasetLayer(ds))
	return s.writeImage(w, r, datasetImageKey(ds, req), req)
}

// datasetImageKey is the tile cache's key of an image of ds alone.
func datasetImageKey(ds *mapcommons.Dataset, req render.Request) string {
	return fmt.Sprintf("png/d%d/%d/%s", ds.ID, ds.Version, imageKey(req))
}

// writeMapImage answers GET /maps/{id}.png: the map's layers drawn with
// their styles, those whose dataset the caller may not download left out
// (as nothing: the image does not tell they are there).
func (s *Server) writeMapImage(w http.ResponseWriter, r *http.Request, m *mapcommons.Map) error {
	layers, drawn := s.mapLayers(r.Context(), caller(r), m)
	req, err := mapImageRequest(r.URL.RawQuery, m, layers)
	if err != nil {
		return err
	}
	etag := s.mapETag(r, m, pngType+drawn)
	if notModified(w, r, etag, cacheControl(r, s.mapPublic(r, m, true))) {
		return nil
	}
	if etag == "" { // a body took part: nothing is cached
		return s.writeImage(w, r, "", req)
	}
	return s.writeImage(w, r, mapImageKey(m, req), req)
}

// mapImageRequest is the image of m that query asks, with layers (m's,
// as mapLayers gives them) over what the query puts under them: the
// box, when the query gives none, mapExtent.
func mapImageRequest(query string, m *mapcommons.Map, layers []render.Layer) (render.Request, error) {
	req, err := imageRequestOf(query, mapExtent(m, layers), render.CRSOf(m))
	if err != nil {
		return req, err
	}
	req.Layers = append(req.Layers, layers...)
	return req, nil
}

// mapExtent is a map's box: its extent, else the union of its drawn
// layers' (nothing of a layer left out widens it), else the world.
func mapExtent(m *mapcommons.Map, layers []render.Layer) [4]float64 {
	if m.Extent != nil {
		return *m.Extent
	}
	return layersExtent(m, func(source string) *mapcommons.Dataset {
		for _, l := range layers {
			if l.Layer.Source == source {
				return l.Dataset
			}
		}
		return nil
	})
}

// mapImageKey is the tile cache's key of an image of m: mapDrawn's and
// the image's, not who asks. Two callers who may see the same layers share
// the image, and one made for the owner (warmImages) serves everyone who
// sees what the owner sees.
func mapImageKey(m *mapcommons.Map, req render.Request) string {
	return fmt.Sprintf("png/m%d/%s/%s", m.ID, mapDrawn(m, req.Layers), imageKey(req))
}

// mapDrawn sums up what an image of m with layers draws: the map, and
// of each layer its dataset's version, or that it is left out.
func mapDrawn(m *mapcommons.Map, layers []render.Layer) string {
	b, _ := json.Marshal(m)
	for _, l := range layers {
		b = appendLayerVersion(b, l.Dataset)
	}
	return strconv.FormatUint(fnv64a(b), 16)
}

// viewableLayers are m's layers with the datasets me may download, those
// of the others nil; seen keeps the datasets found, by id (nil for one
// left out), across calls.
func (s *Server) viewableLayers(ctx context.Context, me *mapcommons.User, m *mapcommons.Map, seen map[int64]*mapcommons.Dataset) []render.Layer {
	return render.LayersOf(m, func(id int64) *mapcommons.Dataset {
		if ds, ok := seen[id]; ok {
			return ds
		}
		ds, err := s.svc.Datasets.FindDatasetByID(ctx, id)
		if err != nil || s.policy.CanDownloadDataset(me, ds) != nil {
			ds = nil
		}
		seen[id] = ds
		return ds
	})
}

// mapLayers are m's layers with the datasets me may download (a layer of
// another is drawn as nothing), and which are drawn, as a string of + and
// - that the answers' tags take in.
func (s *Server) mapLayers(ctx context.Context, me *mapcommons.User, m *mapcommons.Map) ([]render.Layer, string) {
	layers := s.viewableLayers(ctx, me, m, map[int64]*mapcommons.Dataset{})
	var drawn strings.Builder
	for _, l := range layers {
		if l.Dataset != nil {
			drawn.WriteByte('+')
		} else {
			drawn.WriteByte('-')
		}
	}
	return layers, drawn.String()
}

// handleMapTileXYZ answers GET /maps/{id}/tiles/{z}/{x}/{y}.png: tile x, y
// of zoom z (the XYZ order Leaflet and OpenLayers take; rows from the
// north) of the map drawn as /maps/{id}.png draws it, 256 pixels square
// in Web Mercator, transparent where nothing is.
func (s *Server) handleMapTileXYZ(w http.ResponseWriter, r *http.Request) error {
	m, err := findNoBody(s, r, s.findMap)
	if err != nil {
		return err
	}
	if !pngPath(r) {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "map tiles are PNG, not %s", info(r).format)
	}
	var zxy [3]int
	for i, name := range []string{"z", "x", "y"} {
		n, err := strconv.Atoi(r.PathValue(name))
		if err != nil {
			return params.Invalid(name, "not an integer: %q", r.PathValue(name))
		}
		zxy[i] = n
	}
	z, x, y := zxy[0], zxy[1], zxy[2]
	if z < 0 || z > tileMaxZoom || x < 0 || y < 0 || x >= 1<<z || y >= 1<<z {
		return mapcommons.Errorf(mapcommons.EINVALID, "tile %d/%d/%d: zoom 0 to %d, x and y 0 to 2^zoom-1", z, x, y, tileMaxZoom)
	}
	if err := onlyParams(r, "scale"); err != nil {
		return err
	}
	scale := 1.0
	if v := r.URL.Query().Get("scale"); v != "" {
		if scale, err = strconv.ParseFloat(v, 64); err != nil || !(scale >= 1 && scale <= render.MaxScale) {
			return params.Invalid("scale", "a number from 1 to %d, not %q", render.MaxScale, v)
		}
	}
	layers, drawn := s.mapLayers(r.Context(), caller(r), m)
	etag := s.mapETag(r, m, "map-tile"+drawn)
	if notModified(w, r, etag, cacheControl(r, s.mapPublic(r, m, true))) {
		return nil
	}
	req := render.TileRequest(z, x, y, scale, layers)
	key := ""
	if etag != "" {
		key = mapImageKey(m, req)
	}
	return s.writeImage(w, r, key, req)
}

// imageKey is what, beside the data, makes an image what it is.
func imageKey(req render.Request) string {
	bm := len(req.Layers) > 0 && req.Layers[0].Scan != nil
	return fmt.Sprintf("%s/%v/%dx%d@%g/%v/%v", req.CRS, req.BBox, req.Width, req.Height, req.Scale, bm, req.Background)
}

// writeImage answers with the image cached under key (in the tile cache),
// or draws it, caches it and answers with it; key "" is never cached.
func (s *Server) writeImage(w http.ResponseWriter, r *http.Request, key string, req render.Request) error {
	return s.writeCached(w, r, key, pngType, func() ([]byte, error) { return s.drawPNG(r.Context(), req) })
}

// drawPNG draws req and encodes it as a PNG.
func (s *Server) drawPNG(ctx context.Context, req render.Request) ([]byte, error) {
	s.draws.Add(1)
	res, err := render.Draw(ctx, s.svc.Features, s.classes, req)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := render.EncodePNG(&b, res.Image); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// pngPath reports whether r's path ends in .png or in no suffix.
func pngPath(r *http.Request) bool {
	ri := info(r)
	last := ri.path[strings.LastIndexByte(ri.path, '/')+1:]
	return ri.format == "png" || ri.format == "json" && !strings.Contains(last, ".")
}
