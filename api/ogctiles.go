package api

// OGC API – Tiles for datasets: each dataset (an OGC collection, its id
// the dataset's) is a vector tileset of the WebMercatorQuad tile matrix
// set, its tiles Mapbox Vector Tiles made on request by package mvt from
// a bbox query of the features. Beside the OGC documents (tilesets,
// tileset, tile matrix sets) a TileJSON 3.0.0 document lets MapLibre,
// OpenLayers and QGIS use the tiles with nothing but its URL.
//
// The tiles follow the rules of features.json: the dataset must be
// downloadable by the caller (a private dataset is invisible, as on the
// GeoCommons routes), the ETag is the dataset's version, and an answer is
// gzip-encoded for a client that takes gzip. Each tile holds one layer
// named after the collection id (the dataset id, "7"), the layer name a
// MapLibre style's source-layer and a GDAL SQL query use. An empty tile is
// a 200 with a valid tile whose layer has no feature (a few bytes): OGC
// API – Tiles allows it, and unlike a 204 or an empty body any MVT reader
// takes it (GDAL's MVT driver opens no empty file; old Mapbox GL versions
// failed on an empty 200; MapLibre takes all three).

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/mvt"
)

// The identifiers of WebMercatorQuad and its CRSs in OGC documents.
const (
	tmsID           = "WebMercatorQuad"
	tmsURI          = "http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad"
	relTilingScheme = "http://www.opengis.net/def/rel/ogc/1.0/tiling-scheme"
	mvtType         = "application/vnd.mapbox-vector-tile"
)

// Zooms: tiles are served for every tile matrix of the set (0 to
// tmsMaxZoom, as OGC 17-083r4 defines WebMercatorQuad); tilesets advertise
// tileMinZoom to tileMaxZoom, past which clients overzoom.
const (
	tmsMaxZoom  = 24
	tileMinZoom = 0
	tileMaxZoom = 22
)

// DefaultMaxTileFeatures is Config.MaxTileFeatures when it is not set: a
// tile of that many features is several megabytes, more than a map
// client draws usefully (a deeper zoom, or a filter, is the answer).
const DefaultMaxTileFeatures = 200_000

// maxCachedTile is the largest tile the tile cache keeps (tiles of the
// lowest zooms are the ones worth keeping, and the largest).
const maxCachedTile = 2 << 20

// tileRoutes registers the OGC API – Tiles routes (the rest of /ogc is
// OGC API – Features).
func (s *Server) tileRoutes(m *routeTable) {
	const coll = "/ogc/collections/{id}/tiles"
	m.Handle("GET /ogc/tileMatrixSets", s.handle(s.handleTileMatrixSets))
	m.Handle("GET /ogc/tileMatrixSets/{tms}", s.handle(s.handleTileMatrixSet))
	m.Handle("GET "+coll, s.handle(s.handleTilesets))
	m.Handle("GET "+coll+"/{tms}", s.handle(s.handleTileset))
	m.Handle("GET "+coll+"/{tms}/tilejson", s.handle(s.handleTileJSON))
	m.Handle("GET "+coll+"/{tms}/{z}/{y}/{x}", s.handle(s.bounded(s.handleTile)))
	for _, p := range []string{"/ogc/tileMatrixSets", "/ogc/tileMatrixSets/{tms}", coll, coll + "/{tms}", coll + "/{tms}/tilejson", coll + "/{tms}/{z}/{y}/{x}"} {
		m.Handle(p, s.handle(methodNotAllowed))
	}
}

// checkTMS refuses a tile matrix set other than WebMercatorQuad, and a
// document format other than JSON.
func checkTMS(r *http.Request) error {
	if tms := r.PathValue("tms"); tms != "" && tms != tmsID {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "no tile matrix set %q: only %s", tms, tmsID)
	}
	if f := info(r).format; f != "json" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "tile documents have no %s form", f)
	}
	return nil
}

// tileDataset loads the {id} dataset for its tiles, refused as its
// features.json would be (a malformed JSON body too).
func (s *Server) tileDataset(r *http.Request) (*mapcommons.Dataset, error) {
	ds, err := s.findCollection(r)
	if err != nil {
		return nil, err
	}
	if err := s.policy.CanDownloadDataset(caller(r), ds); err != nil {
		return nil, err
	}
	// Authorized: a JSON body, which no GET here reads, must still parse.
	return ds, s.checkBody(r)
}

// tileDoc answers a JSON document about ds's tiles, with the dataset's
// validators (304 when the client has it).
func (s *Server) tileDoc(w http.ResponseWriter, r *http.Request, ds *mapcommons.Dataset, kind string, doc func() any) error {
	if notModified(w, r, s.datasetETag(r, ds, kind), cacheControl(r, s.policy.CanDownloadDataset(nil, ds) == nil)) {
		return nil
	}
	return s.writeJSON(w, r, http.StatusOK, doc())
}

// tilesURL is the absolute URL of the asked collection's tiles of
// WebMercatorQuad: under the collection id as asked, whose tiles' layer
// has that name (layerName).
func (s *Server) tilesURL(r *http.Request) string {
	return s.baseURL(r) + "/ogc/collections/" + layerName(r) + "/tiles/" + tmsID
}

// tilesetLinks are the links of the vector tileset: itself, its tile
// matrix set, the tile template and the TileJSON form.
func (s *Server) tilesetLinks(r *http.Request, ds *mapcommons.Dataset, self string) []ogcLink {
	u := s.tilesURL(r)
	return s.tilesetLinksOf(r, ds, self, u, mvtType, "Mapbox vector tiles",
		ogcLink{Rel: "alternate", Type: "application/json", Title: "TileJSON", Href: u + "/tilejson.json"})
}

// tilesetLinksOf are the links of the tileset at u (self the relation of
// its own): itself, its tile matrix set, the template of its tiles of
// type itemType, the extra links and the collection.
func (s *Server) tilesetLinksOf(r *http.Request, ds *mapcommons.Dataset, self, u, itemType, itemTitle string, extra ...ogcLink) []ogcLink {
	links := []ogcLink{
		{Rel: self, Type: "application/json", Title: "this tileset", Href: u},
		{Rel: relTilingScheme, Type: "application/json", Title: "the tile matrix set", Href: s.baseURL(r) + "/ogc/tileMatrixSets/" + tmsID},
		{Rel: "item", Type: itemType, Title: itemTitle, Href: u + "/{tileMatrix}/{tileRow}/{tileCol}", Templated: true},
	}
	links = append(links, extra...)
	return append(links, ogcLink{Rel: "collection", Type: "application/json", Title: "the collection", Href: s.ogcBase(r) + "/collections/" + ds.ReadableName()})
}

// answerTilesets answers the list of a collection's one tileset of
// dataType under its path's suffix (tiles, map/tiles), its document's
// links those links gives; kind names its ETag's part.
func (s *Server) answerTilesets(w http.ResponseWriter, r *http.Request, kind, dataType, suffix string, links func(*mapcommons.Dataset) []ogcLink) error {
	if err := checkTMS(r); err != nil {
		return err
	}
	ds, err := s.tileDataset(r)
	if err != nil {
		return err
	}
	return s.tileDoc(w, r, ds, kind, func() any {
		return map[string]any{
			"tilesets": []map[string]any{{
				"title": ds.Title, "dataType": dataType, "crs": crs3857, "tileMatrixSetURI": tmsURI,
				"links": links(ds),
			}},
			"links": []ogcLink{{Rel: "self", Type: "application/json", Href: s.baseURL(r) + "/ogc/collections/" + layerName(r) + "/" + suffix}},
		}
	})
}

// tileMatrixSetLimits are the limits of a tileset of box b, zoom by zoom.
func tileMatrixSetLimits(b wkb.Rect) []map[string]any {
	var limits []map[string]any
	for z := tileMinZoom; z <= tileMaxZoom; z++ {
		l := tileLimitsOf(b, z)
		limits = append(limits, map[string]any{"tileMatrix": strconv.Itoa(z),
			"minTileRow": l.minRow, "maxTileRow": l.maxRow, "minTileCol": l.minCol, "maxTileCol": l.maxCol})
	}
	return limits
}

// handleTilesets answers GET /ogc/collections/{id}/tiles: the one tileset
// of a dataset.
func (s *Server) handleTilesets(w http.ResponseWriter, r *http.Request) error {
	return s.answerTilesets(w, r, "tilesets", "vector", "tiles", func(ds *mapcommons.Dataset) []ogcLink {
		return s.tilesetLinks(r, ds, "self")
	})
}

// tileBounds is the dataset's extent within WebMercatorQuad (the world
// when it has none).
func tileBounds(ds *mapcommons.Dataset) wkb.Rect {
	if ds.Extent == nil {
		return wkb.Rect{MinX: -180, MinY: -mvt.MaxLat, MaxX: 180, MaxY: mvt.MaxLat}
	}
	e := *ds.Extent
	clamp := func(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
	return wkb.Rect{MinX: clamp(e.MinX, -180, 180), MinY: clamp(e.MinY, -mvt.MaxLat, mvt.MaxLat),
		MaxX: clamp(e.MaxX, -180, 180), MaxY: clamp(e.MaxY, -mvt.MaxLat, mvt.MaxLat)}
}

// tileCenter is a center for the dataset: the middle of its extent at the
// zoom where the extent spans about a tile.
func tileCenter(b wkb.Rect) (lon, lat float64, z int) {
	w := math.Max(b.MaxX-b.MinX, b.MaxY-b.MinY)
	z = 14
	if w > 0 {
		z = int(math.Floor(math.Log2(360 / w)))
	}
	return (b.MinX + b.MaxX) / 2, (b.MinY + b.MaxY) / 2, max(tileMinZoom, min(z, 14))
}

// tileCol and tileRow are the column and row of the tile of zoom z that
// holds lon/lat.
func tileCol(lon float64, z int) int {
	n := 1 << z
	return max(0, min(n-1, int(math.Floor((lon+180)/360*float64(n)))))
}

func tileRow(lat float64, z int) int {
	n := 1 << z
	s := math.Sin(lat * math.Pi / 180)
	y := 0.5 - math.Log((1+s)/(1-s))/(4*math.Pi)
	return max(0, min(n-1, int(math.Floor(y*float64(n)))))
}

// tileLimits are the rows and columns of one tile matrix that a tileset
// covers: its tileMatrixSetLimits.
type tileLimits struct{ minRow, maxRow, minCol, maxCol int }

// tileLimitsOf are the limits of tile matrix z of the extent b.
func tileLimitsOf(b wkb.Rect, z int) tileLimits {
	return tileLimits{minRow: tileRow(b.MaxY, z), maxRow: tileRow(b.MinY, z), minCol: tileCol(b.MinX, z), maxCol: tileCol(b.MaxX, z)}
}

// checkTileLimits refuses a tile of WebMercatorQuad that is outside the
// dataset's tileset, its tileMatrixSetLimits (tile matrices tileMinZoom
// to tileMaxZoom, the rows and columns of its extent): an ENOTFOUND error
// (OGC API – Tiles /req/core/tc-error: 404).
func checkTileLimits(ds *mapcommons.Dataset, z, y, x int) error {
	if z < tileMinZoom || z > tileMaxZoom {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "tile %d/%d/%d: the tileset of collection %d has tile matrices %d to %d", z, y, x, ds.ID, tileMinZoom, tileMaxZoom)
	}
	l := tileLimitsOf(tileBounds(ds), z)
	if y < l.minRow || y > l.maxRow || x < l.minCol || x > l.maxCol {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "tile %d/%d/%d: outside the tileset of collection %d, whose tileMatrix %d has rows %d to %d and columns %d to %d",
			z, y, x, ds.ID, z, l.minRow, l.maxRow, l.minCol, l.maxCol)
	}
	return nil
}

// jsonSchemaType is the JSON Schema type of an attribute's values.
func jsonSchemaType(t mapcommons.AttrType) map[string]any {
	switch t {
	case mapcommons.AttrInteger:
		return map[string]any{"type": "integer"}
	case mapcommons.AttrFloat:
		return map[string]any{"type": "number"}
	case mapcommons.AttrBoolean:
		return map[string]any{"type": "boolean"}
	case mapcommons.AttrDate:
		return map[string]any{"type": "string", "format": "date-time"}
	}
	return map[string]any{"type": "string"}
}

// hasPoints reports whether ds holds points, which tiles may thin (and
// then give point_count).
func hasPoints(ds *mapcommons.Dataset) bool {
	for _, g := range ds.GeometryTypes {
		if g == "point" {
			return true
		}
	}
	return len(ds.GeometryTypes) == 0 && ds.FeatureCount > 0
}

// tileAttributes are the attributes a request's properties parameter
// picks, in its order (nil: all of them; present and empty: none). An
// unknown name is an EINVALID error.
func tileAttributes(r *http.Request, ds *mapcommons.Dataset) ([]string, error) {
	vals, ok := r.URL.Query()["properties"]
	if !ok {
		return nil, nil
	}
	props := []string{}
	for _, v := range vals {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			i := mapcommons.AttrIndex(ds.Attributes, p)
			if i < 0 {
				return nil, mapcommons.Errorf(mapcommons.EINVALID, "properties: dataset %d has no attribute %q", ds.ID, p)
			}
			props = append(props, ds.Attributes[i].Name)
		}
	}
	return props, nil
}

// selectedAttributes are the attributes props names (all for nil).
func selectedAttributes(ds *mapcommons.Dataset, props []string) []mapcommons.Attribute {
	if props == nil {
		return ds.Attributes
	}
	out := make([]mapcommons.Attribute, 0, len(props))
	for _, p := range props {
		out = append(out, ds.Attributes[mapcommons.AttrIndex(ds.Attributes, p)])
	}
	return out
}

// layerName is the MVT layer of the asked collection's tiles: its id as
// the tile's path gives it (the number, or a readable name, found by
// findCollection), so that a style that names the layer as it names the
// tiles' URL keeps drawing when the dataset's title, and so its readable
// name, changes.
func layerName(r *http.Request) string { return r.PathValue("id") }

// geometryDimension is the OGC layer's geometryDimension (0 points, 1
// lines, 2 areas), or -1 when the dataset mixes them or has none.
func geometryDimension(ds *mapcommons.Dataset) int {
	if len(ds.GeometryTypes) != 1 {
		return -1
	}
	return map[string]int{"point": 0, "line": 1, "area": 2}[ds.GeometryTypes[0]]
}

// tilesetRequest reads what the tileset documents (OGC and TileJSON) take:
// the tile matrix set, the dataset (which the caller must be able to
// download) and the properties parameter.
func (s *Server) tilesetRequest(r *http.Request) (*mapcommons.Dataset, []string, error) {
	if err := checkTMS(r); err != nil {
		return nil, nil, err
	}
	ds, err := s.tileDataset(r)
	if err != nil {
		return nil, nil, err
	}
	props, err := tileAttributes(r, ds)
	return ds, props, err
}

// handleTileset answers GET /ogc/collections/{id}/tiles/WebMercatorQuad:
// the tileset's metadata (OGC 2DTMS tileset, with its one layer).
func (s *Server) handleTileset(w http.ResponseWriter, r *http.Request) error {
	ds, props, err := s.tilesetRequest(r)
	if err != nil {
		return err
	}
	return s.tileDoc(w, r, ds, "tileset", func() any {
		b := tileBounds(ds)
		lon, lat, cz := tileCenter(b)
		schema := map[string]any{}
		for _, a := range selectedAttributes(ds, props) {
			schema[a.Name] = jsonSchemaType(a.Type)
		}
		if hasPoints(ds) {
			schema[mvt.PointCount] = map[string]any{"type": "integer",
				"description": "on thinned points (zooms 0 to 8): how many points this one stands for"}
		}
		layer := map[string]any{
			"id": layerName(r), "title": ds.Title, "dataType": "vector",
			"minTileMatrix": strconv.Itoa(tileMinZoom), "maxTileMatrix": strconv.Itoa(tileMaxZoom),
			"propertiesSchema": map[string]any{"type": "object", "properties": schema},
		}
		if d := geometryDimension(ds); d >= 0 {
			layer["geometryDimension"] = d
		}
		return map[string]any{
			"title": ds.Title, "description": ds.Description, "dataType": "vector",
			"crs": crs3857, "tileMatrixSetURI": tmsURI,
			"links":  s.tilesetLinks(r, ds, "self"),
			"layers": []any{layer},
			"boundingBox": map[string]any{"lowerLeft": []float64{b.MinX, b.MinY}, "upperRight": []float64{b.MaxX, b.MaxY},
				"crs": crsCRS84},
			"centerPoint":         map[string]any{"coordinates": []float64{lon, lat}, "tileMatrix": strconv.Itoa(cz), "crs": crsCRS84},
			"tileMatrixSetLimits": tileMatrixSetLimits(b),
		}
	})
}

// handleTileJSON answers GET …/tiles/WebMercatorQuad/tilejson(.json): the
// tileset as TileJSON 3.0.0, the source MapLibre GL and QGIS take. The
// properties parameter is carried into the tile template.
func (s *Server) handleTileJSON(w http.ResponseWriter, r *http.Request) error {
	ds, props, err := s.tilesetRequest(r)
	if err != nil {
		return err
	}
	return s.tileDoc(w, r, ds, "tilejson", func() any {
		b := tileBounds(ds)
		lon, lat, cz := tileCenter(b)
		fields := map[string]string{}
		for _, a := range selectedAttributes(ds, props) {
			switch a.Type {
			case mapcommons.AttrInteger, mapcommons.AttrFloat:
				fields[a.Name] = "Number"
			case mapcommons.AttrBoolean:
				fields[a.Name] = "Boolean"
			default:
				fields[a.Name] = "String"
			}
		}
		if hasPoints(ds) {
			fields[mvt.PointCount] = "Number"
		}
		// The template's placeholders are names: {z}/{y}/{x} is the
		// route's order (OGC tileMatrix/tileRow/tileCol).
		tmpl := s.tilesURL(r) + "/{z}/{y}/{x}"
		if props != nil {
			esc := make([]string, len(props))
			for i, p := range props {
				esc[i] = url.QueryEscape(p)
			}
			tmpl += "?properties=" + strings.Join(esc, ",")
		}
		doc := map[string]any{
			"tilejson": "3.0.0", "name": ds.Title, "description": ds.Description, "scheme": "xyz",
			"tiles":   []string{tmpl},
			"minzoom": tileMinZoom, "maxzoom": tileMaxZoom,
			"bounds": []float64{b.MinX, b.MinY, b.MaxX, b.MaxY},
			"center": []float64{lon, lat, float64(cz)},
			"vector_layers": []map[string]any{{"id": layerName(r), "description": ds.Title,
				"minzoom": tileMinZoom, "maxzoom": tileMaxZoom, "fields": fields}},
		}
		if ds.Author != "" {
			doc["attribution"] = ds.Author
		}
		return doc
	})
}

// tileAddress reads z/y/x of a tile route (x may end in .pbf or .mvt).
// A number that is not one, or a tile outside WebMercatorQuad, is an
// EINVALID error (OGC API – Tiles: 400).
func tileAddress(r *http.Request) (z, y, x int, err error) {
	xs := r.PathValue("x")
	for _, ext := range []string{".pbf", ".mvt"} {
		xs = strings.TrimSuffix(xs, ext)
	}
	parse := func(name, v string) int {
		n, perr := strconv.Atoi(v)
		if perr != nil && err == nil {
			err = mapcommons.Errorf(mapcommons.EINVALID, "%s: not an integer: %q", name, v)
		}
		return n
	}
	z, y, x = parse("tileMatrix", r.PathValue("z")), parse("tileRow", r.PathValue("y")), parse("tileCol", xs)
	if err != nil {
		return 0, 0, 0, err
	}
	if z < 0 || z > tmsMaxZoom {
		return 0, 0, 0, mapcommons.Errorf(mapcommons.EINVALID, "tileMatrix %d: %s has tile matrices 0 to %d", z, tmsID, tmsMaxZoom)
	}
	if !mvt.ValidTile(z, x, y) {
		return 0, 0, 0, mapcommons.Errorf(mapcommons.EINVALID, "tile %d/%d/%d: tileRow and tileCol of tileMatrix %d run from 0 to %d", z, y, x, z, 1<<z-1)
	}
	return z, y, x, nil
}

// handleTile answers GET …/tiles/WebMercatorQuad/{z}/{y}/{x}: one vector
// tile, from the tile cache when the same tile of the same version of the
// dataset was made before. A tile outside WebMercatorQuad is a 400, one
// outside the tileset's tileMatrixSetLimits a 404.
func (s *Server) handleTile(w http.ResponseWriter, r *http.Request) error {
	ds, z, y, x, err := s.tileOf(r)
	if err != nil {
		return err
	}
	props, err := tileAttributes(r, ds)
	if err != nil {
		return err
	}
	if notModified(w, r, s.datasetETag(r, ds, "mvt"), cacheControl(r, s.policy.CanDownloadDataset(nil, ds) == nil)) {
		return nil
	}
	sel := "*"
	if props != nil {
		sel = "=" + strings.Join(props, ",")
	}
	key := fmt.Sprintf("%d/%d/%d/%d/%d/%s/%s", ds.ID, ds.Version, z, y, x, sel, layerName(r))
	return s.writeTile(w, r, key, func() ([]byte, error) { return s.makeTile(r, ds, z, y, x, props) })
}

// tileOf reads a tile's request: the dataset (for who may download it),
// then the tile of WebMercatorQuad within the tileset's limits.
func (s *Server) tileOf(r *http.Request) (ds *mapcommons.Dataset, z, y, x int, err error) {
	if tms := r.PathValue("tms"); tms != tmsID {
		return nil, 0, 0, 0, mapcommons.Errorf(mapcommons.ENOTFOUND, "no tile matrix set %q: only %s", tms, tmsID)
	}
	if ds, err = s.tileDataset(r); err != nil {
		return nil, 0, 0, 0, err
	}
	if z, y, x, err = tileAddress(r); err != nil {
		return nil, 0, 0, 0, err
	}
	return ds, z, y, x, checkTileLimits(ds, z, y, x)
}

// writeTile answers with the vector tile cached under key, or makes it,
// caches it (compressed once) and answers with it.
func (s *Server) writeTile(w http.ResponseWriter, r *http.Request, key string, build func() ([]byte, error)) error {
	return s.writeCached(w, r, key, mvtType, build)
}

// writeCached answers with the body of type ctype the tile cache holds
// under key, or builds it, caches it and answers with it; key "" is never
// cached.
func (s *Server) writeCached(w http.ResponseWriter, r *http.Request, key, ctype string, build func() ([]byte, error)) error {
	if key != "" {
		if c, ok := s.tiles.get(key); ok {
			return c.write(w, r)
		}
	}
	body, err := build()
	if err != nil {
		return err
	}
	if key != "" {
		s.tiles.put(key, ctype, body)
		if c, ok := s.tiles.get(key); ok {
			return c.write(w, r) // its gzip form, compressed once by put
		}
	}
	w.Header().Set("Content-Type", ctype) // too large for the cache
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, err = w.Write(body)
	return err
}

// tileOptions are mvt's defaults with points thinned on 64-pixel cells
// (8 screen pixels of a 512-pixel tile) instead of 32: a thinned point
// alone in its cell keeps its attributes, and on 32-pixel cells a zoom 3
// tile of a million points of eight attributes holds 15,000 such points
// (680 KB); on 64-pixel cells it is 4,400 cells, nearly all clusters.
func tileOptions() mvt.Options {
	o := mvt.DefaultOptions()
	o.ClusterCell = 64
	return o
}

// makeTile encodes tile z/y/x of ds: the features a bbox query of the
// tile's bounds (its buffer included) finds, each with its stable id.
// The work is bounded by the query deadline (the route runs bounded) and
// the tile by Config.MaxTileFeatures; thinning bounds the points of a
// low-zoom tile by its grid.
func (s *Server) makeTile(r *http.Request, ds *mapcommons.Dataset, z, y, x int, props []string) ([]byte, error) {
	t, err := mvt.NewTile(z, x, y, tileOptions())
	if err != nil {
		return nil, err
	}
	l, err := t.AddLayer(layerName(r), ds.Attributes, props)
	if err != nil {
		return nil, err
	}
	if ds.FeatureCount == 0 {
		return t.Encode(), nil
	}
	q := &mapcommons.FeatureQuery{Limit: -1, Lazy: true}
	valued := false
	if ds.OnlyPoints() && l.Thinned() {
		// Points alone, thinned: the tile is the same in any order (mvt
		// says how), so the store may skip ordering them; and it shows
		// the values of the points alone in their cells only, so they
		// are read after, in the same snapshot, for those alone.
		q.AnyOrder, q.NoValues = true, true
		q.Then = func() (*mapcommons.FeatureQuery, func(*mapcommons.Feature) error) {
			alone := l.Alone()
			if len(alone) == 0 || valued {
				return nil, nil
			}
			ids := make([]int64, len(alone))
			for i, id := range alone {
				ids[i] = int64(id)
			}
			return &mapcommons.FeatureQuery{IDs: ids, Limit: -1, Lazy: true}, func(f *mapcommons.Feature) error {
				l.SetValues(uint64(f.ID), f)
				return nil
			}
		}
	}
	if b := t.Bounds(); !mapcommons.ScanBeatsIndex(b, ds.Extent) {
		q.BBox = &mapcommons.BBox{W: b.MinX, S: b.MinY, E: b.MaxX, N: b.MaxY}
	}
	err = s.svc.Features.ScanFeatures(r.Context(), ds.ID, q, func(f *mapcommons.Feature) error {
		valued = valued || f.Values != nil || f.Row != nil // a store that read them anyway
		id := f.ID
		if id <= 0 {
			id = f.Position + 1
		}
		if err := l.AddFeature(uint64(id), f); err != nil {
			return err
		}
		if max := s.cfg.MaxTileFeatures; max > 0 && l.Len() > max {
			return mapcommons.Errorf(mapcommons.ETOOLARGE, "tile %d/%d/%d holds more than %d features (the server's limit): use a deeper zoom", z, y, x, max)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t.Encode(), nil
}

// earthRadius is the radius of the sphere of Web Mercator (EPSG:3857).
const earthRadius = 6378137.0

// tileMatrixSetDoc is the OGC 2DTMS (17-083r4) JSON definition of
// WebMercatorQuad, computed: 256-pixel tiles, 2^z of them a side at tile
// matrix z, the cell size the Earth's circumference over the pixels, and
// the scale denominator that cell size over the standard 0.28 mm pixel.
//
// It also carries the members of the TMS 1.0 JSON encoding (17-083r2:
// identifier, supportedCRS, topLeftCorner, lowerCorner and upperCorner)
// beside their 2.0 names: GDAL before 3.7 (Debian 12 has 3.6) reads only
// those, and takes a document without "identifier" for the name of a
// file, failing the OGC API tiles of every server that answers in 2.0
// alone. The 2.0 schema allows the extra members.
func tileMatrixSetDoc() map[string]any {
	origin := math.Pi * earthRadius
	var matrices []map[string]any
	for z := 0; z <= tmsMaxZoom; z++ {
		n := 1 << z
		cell := 2 * origin / 256 / float64(n)
		matrices = append(matrices, map[string]any{
			"id": strconv.Itoa(z), "scaleDenominator": cell / 0.00028, "cellSize": cell,
			"cornerOfOrigin": "topLeft", "pointOfOrigin": []float64{-origin, origin},
			"tileWidth": 256, "tileHeight": 256, "matrixWidth": n, "matrixHeight": n,
			"identifier": strconv.Itoa(z), "topLeftCorner": []float64{-origin, origin}, // 1.0
		})
	}
	return map[string]any{
		"id": tmsID, "title": "Google Maps Compatible for the World", "uri": tmsURI,
		"crs": crs3857, "orderedAxes": []string{"X", "Y"},
		"wellKnownScaleSet": "http://www.opengis.net/def/wkss/OGC/1.0/GoogleMapsCompatible",
		"boundingBox": map[string]any{"lowerLeft": []float64{-origin, -origin}, "upperRight": []float64{origin, origin}, "crs": crs3857,
			"lowerCorner": []float64{-origin, -origin}, "upperCorner": []float64{origin, origin}}, // 1.0
		"tileMatrices": matrices,
		"identifier":   tmsID, "supportedCRS": crs3857, // 1.0
	}
}

// handleTileMatrixSets answers GET /ogc/tileMatrixSets: the one set.
func (s *Server) handleTileMatrixSets(w http.ResponseWriter, r *http.Request) error {
	if err := checkTMS(r); err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	self := s.baseURL(r) + "/ogc/tileMatrixSets"
	return s.writeJSON(w, r, http.StatusOK, map[string]any{
		"tileMatrixSets": []map[string]any{{"id": tmsID, "title": "Google Maps Compatible for the World", "uri": tmsURI, "crs": crs3857,
			"links": []ogcLink{{Rel: "self", Type: "application/json", Href: self + "/" + tmsID}}}},
		"links": []ogcLink{{Rel: "self", Type: "application/json", Href: self}},
	})
}

// handleTileMatrixSet answers GET /ogc/tileMatrixSets/{tms}: the one set,
// WebMercatorQuad.
func (s *Server) handleTileMatrixSet(w http.ResponseWriter, r *http.Request) error {
	if err := checkTMS(r); err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	doc := tileMatrixSetDoc()
	doc["links"] = []ogcLink{{Rel: "self", Type: "application/json", Href: s.baseURL(r) + "/ogc/tileMatrixSets/" + tmsID}}
	return s.writeJSON(w, r, http.StatusOK, doc)
}
