// ogcmaptiles.go: each collection drawn by the server's renderer
// (mapimage.go) as an OGC API – Maps map (/ogc/collections/{id}/map) and
// as OGC API – Tiles map tilesets of PNG tiles of WebMercatorQuad: the
// images and raster tiles Leaflet, OpenLayers, QGIS and GDAL's OGCAPI
// driver take.
package api

import (
	"fmt"
	"image/color"
	"net/http"
	"strconv"

	"mapcommons"
	"mapcommons/params"
	"mapcommons/render"
	"mapcommons/style"
)

// relTilesetsMap is the link relation of a collection's map tilesets.
const relTilesetsMap = "http://www.opengis.net/def/rel/ogc/1.0/tilesets-map"

// mapTileRoutes registers the map tilesets of the collections.
func (s *Server) mapTileRoutes(m *routeTable) {
	const coll = "/ogc/collections/{id}/map/tiles"
	m.Handle("GET /ogc/collections/{id}/map", s.handle(s.bounded(s.handleOGCCollectionMap)))
	m.Handle("/ogc/collections/{id}/map", s.handle(methodNotAllowed))
	m.Handle("GET /ogc/styles/{styleId}/map", s.handle(s.bounded(s.handleOGCStyledMap)))
	m.Handle("/ogc/styles/{styleId}/map", s.handle(methodNotAllowed))
	m.Handle("GET "+coll, s.handle(s.handleMapTilesets))
	m.Handle("GET "+coll+"/{tms}", s.handle(s.handleMapTileset))
	m.Handle("GET "+coll+"/{tms}/{z}/{y}/{x}", s.handle(s.bounded(s.handleMapTile)))
	for _, p := range []string{coll, coll + "/{tms}", coll + "/{tms}/{z}/{y}/{x}"} {
		m.Handle(p, s.handle(methodNotAllowed))
	}
}

// mapTilesURL is the absolute URL of the asked collection's map tiles of
// WebMercatorQuad, under its id as asked.
func (s *Server) mapTilesURL(r *http.Request) string {
	return s.baseURL(r) + "/ogc/collections/" + layerName(r) + "/map/tiles/" + tmsID
}

// mapTilesetLinks are the links of a map tileset: itself, its tile matrix
// set, the PNG tile template and the collection.
func (s *Server) mapTilesetLinks(r *http.Request, ds *mapcommons.Dataset) []ogcLink {
	return s.tilesetLinksOf(r, ds, "self", s.mapTilesURL(r), pngType, "PNG map tiles")
}

// handleMapTilesets answers GET /ogc/collections/{id}/map/tiles: the one
// map tileset of a dataset.
func (s *Server) handleMapTilesets(w http.ResponseWriter, r *http.Request) error {
	return s.answerTilesets(w, r, "map-tilesets", "map", "map/tiles", func(ds *mapcommons.Dataset) []ogcLink {
		return s.mapTilesetLinks(r, ds)
	})
}

// handleMapTileset answers GET /ogc/collections/{id}/map/tiles/WebMercatorQuad:
// the map tileset's metadata, its limits those of the vector tiles.
func (s *Server) handleMapTileset(w http.ResponseWriter, r *http.Request) error {
	if err := checkTMS(r); err != nil {
		return err
	}
	ds, err := s.tileDataset(r)
	if err != nil {
		return err
	}
	return s.tileDoc(w, r, ds, "map-tileset", func() any {
		b := tileBounds(ds)
		lon, lat, cz := tileCenter(b)
		return map[string]any{
			"title": ds.Title, "description": ds.Description, "dataType": "map",
			"crs": crs3857, "tileMatrixSetURI": tmsURI,
			"links": s.mapTilesetLinks(r, ds),
			"boundingBox": map[string]any{"lowerLeft": []float64{b.MinX, b.MinY}, "upperRight": []float64{b.MaxX, b.MaxY},
				"crs": crsCRS84},
			"centerPoint":         map[string]any{"coordinates": []float64{lon, lat}, "tileMatrix": strconv.Itoa(cz), "crs": crsCRS84},
			"tileMatrixSetLimits": tileMatrixSetLimits(b),
		}
	})
}

// handleMapTile answers GET …/map/tiles/WebMercatorQuad/{z}/{y}/{x}
// (.png may end it): the tile drawn as the dataset's image is
// (datasetLayer), 256 pixels square, transparent where nothing is; from
// the tile cache when the same tile of the same version was drawn before.
// Outside WebMercatorQuad a 400, outside the tileset's limits a 404.
func (s *Server) handleMapTile(w http.ResponseWriter, r *http.Request) error {
	if !pngPath(r) {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "map tiles are PNG, not %s", info(r).format)
	}
	ds, z, y, x, err := s.tileOf(r)
	if err != nil {
		return err
	}
	if notModified(w, r, s.datasetETag(r, ds, "map-tile"), cacheControl(r, s.policy.CanDownloadDataset(nil, ds) == nil)) {
		return nil
	}
	req := render.TileRequest(z, x, y, 1, []render.Layer{datasetLayer(ds)})
	key := fmt.Sprintf("maptile/%d/%d/%d/%d/%d", ds.ID, ds.Version, z, y, x)
	return s.writeImage(w, r, key, req)
}

// relMap is the link relation of a collection's map (OGC API – Maps).
const relMap = "http://www.opengis.net/def/rel/ogc/1.0/map"

// ogcMapParams are the parameters of an OGC API – Maps map.
var ogcMapParams = []string{"bbox", "bbox-crs", "width", "height", "crs", "transparent", "bgcolor"}

// ogcMapRequest reads the parameters of a map (OGC API – Maps) of a box
// extent by default: bbox (and bbox-crs: CRS84, EPSG:4326, EPSG:3857;
// default the extent, widened to the image's shape), width and height
// (default: the longer side 512, the other following the box), crs (the
// image's: CRS84 or EPSG:4326 drawn as plate carrée, the default;
// EPSG:3857 Web Mercator), transparent (default true) and bgcolor
// (0xRRGGBB or #RRGGBB; default white, painted when transparent is false).
func ogcMapRequest(r *http.Request, extent [4]float64) (render.Request, error) {
	if err := onlyParams(r, ogcMapParams...); err != nil {
		return render.Request{}, err
	}
	q := r.URL.Query()
	if f := q.Get("f"); f != "" && f != "png" && f != pngType {
		return render.Request{}, params.Invalid("f", "maps are png, not %q", f)
	}
	req := render.Request{CRS: render.CRSLonLat, BBox: extent}
	if v := q.Get("crs"); v != "" {
		crs, err := parseCRS("crs", v)
		if err != nil {
			return req, err
		}
		if crs == crs3857 {
			req.CRS = render.CRSMercator
			req.BBox[1], req.BBox[3] = max(req.BBox[1], -maxMercatorLat), min(req.BBox[3], maxMercatorLat)
		}
	}
	b, err := parseOGCBBox(q)
	if err != nil {
		return req, err
	}
	if b != nil {
		if b.W >= b.E {
			return req, params.Invalid("bbox", "a map of a box across the antimeridian is not drawn (west %v, east %v)", b.W, b.E)
		}
		req.BBox = [4]float64{b.W, b.S, b.E, b.N}
	}
	for _, side := range []struct {
		name string
		v    *int
	}{{"width", &req.Width}, {"height", &req.Height}} {
		if v := q.Get(side.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > render.MaxSide {
				return req, params.Invalid(side.name, "a whole number of pixels from 1 to %d, not %q", render.MaxSide, v)
			}
			*side.v = n
		}
	}
	transparent := true
	if v := q.Get("transparent"); v != "" {
		if transparent, err = strconv.ParseBool(v); err != nil {
			return req, params.Invalid("transparent", "true or false, not %q", v)
		}
	}
	bg := color.RGBA{255, 255, 255, 255}
	if v := q.Get("bgcolor"); v != "" {
		c, ok := style.ParseColor(v)
		if !ok {
			return req, params.Invalid("bgcolor", "a colour as 0xRRGGBB or #RRGGBB, not %q", v)
		}
		bg = color.RGBA{uint8(c >> 16), uint8(c >> 8), uint8(c), 255}
	}
	if !transparent {
		req.Background = bg
	}
	fitImage(&req, b != nil)
	return req, nil
}

// setContentCRS says the CRS an OGC map is drawn in.
func setContentCRS(w http.ResponseWriter, req render.Request) {
	w.Header().Set("Content-Crs", "<"+map[string]string{render.CRSLonLat: crsCRS84, render.CRSMercator: crs3857}[req.CRS]+">")
}

// handleOGCCollectionMap answers GET /ogc/collections/{id}/map: the
// collection drawn as one PNG (OGC API – Maps), as its dataset's image is,
// with the parameters ogcMapRequest reads.
func (s *Server) handleOGCCollectionMap(w http.ResponseWriter, r *http.Request) error {
	if !pngPath(r) {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "maps are PNG, not %s", info(r).format)
	}
	ds, err := s.tileDataset(r)
	if err != nil {
		return err
	}
	req, err := ogcMapRequest(r, datasetExtent(ds))
	if err != nil {
		return err
	}
	if notModified(w, r, s.datasetETag(r, ds, "ogc-map"), cacheControl(r, s.policy.CanDownloadDataset(nil, ds) == nil)) {
		return nil
	}
	setContentCRS(w, req)
	req.Layers = []render.Layer{datasetLayer(ds)}
	key := fmt.Sprintf("ogcmap/%d/%d/%s/%v", ds.ID, ds.Version, imageKey(req), req.Background)
	return s.writeImage(w, r, key, req)
}

// findOGCStyle is the map {styleId} names (its number, or its readable
// name: mapcommons.ReadableName of its title and number), if the caller
// may view it; a missing one is refused as a private one would be.
func (s *Server) findOGCStyle(r *http.Request) (*mapcommons.Map, error) {
	raw := r.PathValue("styleId")
	id, ok := mapcommons.ParseReadableName(raw)
	if !ok {
		return nil, s.policy.NotFound(caller(r), mapcommons.ModelMap, mapcommons.Errorf(mapcommons.ENOTFOUND, "no style %q", raw))
	}
	m, err := s.svc.Maps.FindMapByID(r.Context(), id)
	if err != nil {
		return nil, s.policy.NotFound(caller(r), mapcommons.ModelMap, err)
	}
	if err := s.policy.CanViewMap(caller(r), m); err != nil {
		return nil, err
	}
	if raw != strconv.FormatInt(m.ID, 10) && raw != mapcommons.ReadableName(m.Title, m.ID) {
		return nil, s.policy.NotFound(caller(r), mapcommons.ModelMap, mapcommons.Errorf(mapcommons.ENOTFOUND, "no style %q", raw))
	}
	return m, nil
}

// handleOGCStyledMap answers GET /ogc/styles/{styleId}/map (OGC API –
// Maps, styled map): a map (mapcommons.Map: a style over the collections
// of its layers) drawn as its image is, with the parameters
// ogcMapRequest reads, its box by default the map's (mapExtent); a layer
// whose dataset the caller may not download is left out.
func (s *Server) handleOGCStyledMap(w http.ResponseWriter, r *http.Request) error {
	if !pngPath(r) {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "maps are PNG, not %s", info(r).format)
	}
	m, err := findNoBody(s, r, s.findOGCStyle)
	if err != nil {
		return err
	}
	layers, drawn := s.mapLayers(r.Context(), caller(r), m)
	req, err := ogcMapRequest(r, mapExtent(m, layers))
	if err != nil {
		return err
	}
	etag := s.mapETag(r, m, "ogc-styled-map"+drawn)
	if notModified(w, r, etag, cacheControl(r, s.mapPublic(r, m, true))) {
		return nil
	}
	setContentCRS(w, req)
	req.Layers = layers
	if etag == "" {
		return s.writeImage(w, r, "", req)
	}
	return s.writeImage(w, r, "ogc"+mapImageKey(m, req)+fmt.Sprint(req.Background), req)
}
