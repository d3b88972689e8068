package api

// The basemap routes: the built-in basemap's vector tiles
// (/basemap/tiles/{z}/{y}/{x}, package basemap), the MapLibre style of a
// basemap (/basemap/style.json, the built-in one or a configured raster
// one by ?name=) and the list of basemaps (/basemaps, for a map page's
// picker). Anyone may read them: they hold nothing of any user.
//
// The PMTiles basemaps (--basemap-pmtiles, Config.PMTiles) have their
// tiles at /basemap/pmtiles/{name}/{z}/{x}/{y}.mvt, passed through as the
// archive holds them (gzip-encoded when it is), and their style at
// /basemap/pmtiles/{name}/style.json (package basemap composes it around
// @protomaps/basemaps' layers). A tile's ETag is the file's identity
// (basemap.PMTiles.Tag), cached a day.
//
// The built-in tiles never change within a build: their ETag is the
// data's version (basemap.Version, a hash of the embedded file and the
// tiles' form, the same in every process of the build) and they may be
// cached a day. The style and the list have the ETag of their bytes. Like every ETag of the server it is weak, since the same
// tile goes out plain or gzip-encoded.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/basemap"
	"mapcommons/basemap/pmtiles"
)

// basemapCacheControl lets any cache keep a basemap answer a day.
const basemapCacheControl = "public, max-age=86400"

// basemapRoutes registers the basemap routes.
func (s *Server) basemapRoutes(m *routeTable) {
	m.Handle("GET /basemap/tiles/{z}/{y}/{x}", s.handle(s.handleBasemapTile))
	m.Handle("GET /basemap/style", s.handle(s.handleBasemapStyle))
	m.Handle("GET /basemaps", s.handle(s.handleBasemaps))
	m.Handle("GET /basemap/fonts/{fontstack}/{range}", s.handle(s.handleBasemapGlyphs))
	m.Handle("GET /basemap/pmtiles/{name}/{z}/{x}/{y}", s.handle(s.handlePMTilesTile))
	m.Handle("GET /basemap/pmtiles/{name}/style", s.handle(s.handlePMTilesStyle))
	for _, p := range []string{"/basemap/tiles/{z}/{y}/{x}", "/basemap/style", "/basemaps", "/basemap/fonts/{fontstack}/{range}",
		"/basemap/pmtiles/{name}/{z}/{x}/{y}", "/basemap/pmtiles/{name}/style"} {
		m.Handle(p, s.handle(methodNotAllowed))
	}
}

// handleBasemapTile answers GET /basemap/tiles/{z}/{y}/{x}: a tile of
// the built-in basemap (layers countries and places), from the tile cache
// when it was made before.
func (s *Server) handleBasemapTile(w http.ResponseWriter, r *http.Request) error {
	z, y, x, err := tileAddress(r)
	if err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	if notModified(w, r, `W/"basemap-`+basemap.Version()+`"`, basemapCacheControl) {
		return nil
	}
	key := fmt.Sprintf("basemap/%s/%d/%d/%d", basemap.Version(), z, y, x)
	return s.writeTile(w, r, key, func() ([]byte, error) { return basemap.Tile(z, x, y) })
}

// glyphsType is the media type of a glyphs range.
const glyphsType = "application/x-protobuf"

// glyphsCacheControl lets any cache keep a glyphs range a week: the
// glyphs change only with the fonts, in another build.
const glyphsCacheControl = "public, max-age=604800"

// handleBasemapGlyphs answers GET /basemap/fonts/{fontstack}/{range}.pbf:
// the SDF glyphs of 256 code points (range "0-255" to "65280-65535") of
// the first font of the comma-separated stack that is served ("Go
// Regular", "Go Bold"), made on first request and kept in the tile cache
// (basemap.Glyphs). A stack of no served font, or a range not of that
// form, is not found.
func (s *Server) handleBasemapGlyphs(w http.ResponseWriter, r *http.Request) error {
	stack := r.PathValue("fontstack")
	font := basemap.FontStack(stack)
	if font == "" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "no font of the stack %q: the fonts are %q and %q", stack, basemap.FontRegular, basemap.FontBold)
	}
	start, ok := basemap.GlyphRange(r.PathValue("range"))
	if !ok || info(r).format != "json" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "no glyph range %q: a range is 256 code points, 0-255.pbf to 65280-65535.pbf", r.PathValue("range"))
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	v := basemap.GlyphsVersion()
	if notModified(w, r, `W/"glyphs-`+v+`"`, glyphsCacheControl) {
		return nil
	}
	key := fmt.Sprintf("glyphs/%s/%s/%d", v, font, start)
	return s.writeCached(w, r, key, glyphsType, func() ([]byte, error) { return basemap.Glyphs(font, start) })
}

// handleBasemapStyle answers GET /basemap/style.json: the MapLibre style
// of the basemap ?name= names among those configured (Config.Basemaps),
// or of the built-in basemap for no name, "builtin" or a name not
// configured (a map's basemap may name one this server lacks).
func (s *Server) handleBasemapStyle(w http.ResponseWriter, r *http.Request) error {
	if f := info(r).format; f != "json" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "a basemap style has no %s form: use .json", f)
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	style := basemap.Style(s.baseURL(r), basemap.Find(s.cfg.Basemaps, r.URL.Query().Get("name")))
	return s.writeBasemapDoc(w, r, style)
}

// pmtilesOf is the PMTiles basemap the request's {name} names.
func (s *Server) pmtilesOf(r *http.Request) (*basemap.PMTiles, error) {
	p := basemap.FindPMTiles(s.cfg.PMTiles, r.PathValue("name"))
	if p == nil {
		return nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "no PMTiles basemap named %q", r.PathValue("name"))
	}
	return p, nil
}

// handlePMTilesTile answers GET /basemap/pmtiles/{name}/{z}/{x}/{y}.mvt:
// a tile of a PMTiles basemap, its bytes as the archive holds them. A
// tile the archive lacks within its zooms is 204 No Content: an empty
// tile (a region's extract has none outside the region, an ocean's tiles
// may be left out), which MapLibre draws as nothing, where a 404 would be
// an error in the page's console for every such tile. A zoom outside the
// archive's, an address outside its zoom or an unknown name is a 404.
func (s *Server) handlePMTilesTile(w http.ResponseWriter, r *http.Request) error {
	p, err := s.pmtilesOf(r)
	if err != nil {
		return err
	}
	var zxy [3]uint64
	for i, k := range []string{"z", "x", "y"} {
		// y ends in .mvt (or .pbf): not a format of the server's, so the
		// segment keeps it (as tileAddress's x does).
		v, perr := strconv.ParseUint(strings.TrimSuffix(strings.TrimSuffix(r.PathValue(k), ".mvt"), ".pbf"), 10, 32)
		if perr != nil {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "%s: not a tile's number: %q", k, r.PathValue(k))
		}
		zxy[i] = v
	}
	h := p.Reader.Header()
	if zxy[0] < uint64(h.MinZoom) || zxy[0] > uint64(h.MaxZoom) || zxy[1] >= 1<<zxy[0] || zxy[2] >= 1<<zxy[0] {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "tile %d/%d/%d: the basemap %s has zooms %d to %d, at zoom z x and y 0 to 2^z-1",
			zxy[0], zxy[1], zxy[2], p.Name, h.MinZoom, h.MaxZoom)
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	if notModified(w, r, `W/"pmtiles-`+p.Tag+`"`, basemapCacheControl) {
		return nil
	}
	b, err := p.Reader.Tile(uint8(zxy[0]), uint32(zxy[1]), uint32(zxy[2]))
	if err != nil {
		return err
	}
	w.Header().Set("Vary", "Accept-Encoding")
	if len(b) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	w.Header().Set("Content-Type", mvtType)
	if h.TileCompression == pmtiles.Gzip {
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			w.Header().Set("Content-Encoding", "gzip")
		} else if b, err = gunzipTile(b); err != nil {
			return err
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, err = w.Write(b)
	return err
}

// gunzipTile decompresses a gzip-encoded tile for a client that takes no
// gzip, to at most pmtiles.MaxTile bytes.
func gunzipTile(b []byte) ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(z, pmtiles.MaxTile+1))
	if err == nil && len(out) > pmtiles.MaxTile {
		err = errors.New("pmtiles: a tile over its bound decompressed")
	}
	return out, err
}

// handlePMTilesStyle answers GET /basemap/pmtiles/{name}/style.json: the
// MapLibre style of a PMTiles basemap, its tiles and glyphs this
// server's absolute URLs.
func (s *Server) handlePMTilesStyle(w http.ResponseWriter, r *http.Request) error {
	if f := info(r).format; f != "json" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "a basemap style has no %s form: use .json", f)
	}
	p, err := s.pmtilesOf(r)
	if err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	base := s.baseURL(r)
	style, err := basemap.ProtomapsStyle(p, base+"/basemap/pmtiles/"+url.PathEscape(p.Name)+"/{z}/{x}/{y}.mvt",
		base+basemap.GlyphsPath, s.assets.ProtomapsLayers())
	if err != nil {
		return err
	}
	return s.writeBasemapDoc(w, r, style)
}

// basemapEntry is one basemap of /basemaps.
type basemapEntry struct {
	Name        string `json:"name"`
	Type        string `json:"type"`  // "vector" (built-in, PMTiles) or "raster"
	Style       string `json:"style"` // the URL of its MapLibre style
	Attribution string `json:"attribution"`
	PMTiles     bool   `json:"pmtiles,omitempty"` // a Protomaps basemap of a PMTiles file
}

// handleBasemaps answers GET /basemaps: the built-in basemap, then the
// configured raster ones, then the PMTiles ones (type "vector", with
// "pmtiles": true), each with the URL of its style.
func (s *Server) handleBasemaps(w http.ResponseWriter, r *http.Request) error {
	if f := info(r).format; f != "json" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "the basemap list has no %s form: use .json", f)
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	style := s.baseURL(r) + "/basemap/style.json"
	list := []basemapEntry{{Name: basemap.Builtin, Type: "vector", Style: style, Attribution: basemap.Attribution}}
	for _, b := range s.cfg.Basemaps {
		list = append(list, basemapEntry{Name: b.Name, Type: "raster", Style: style + "?name=" + b.Name, Attribution: b.Attribution})
	}
	for _, p := range s.cfg.PMTiles {
		list = append(list, basemapEntry{Name: p.Name, Type: "vector", PMTiles: true,
			Style:       s.baseURL(r) + "/basemap/pmtiles/" + url.PathEscape(p.Name) + "/style.json",
			Attribution: basemap.ProtomapsAttribution})
	}
	return s.writeBasemapDoc(w, r, list)
}

// writeBasemapDoc answers v as JSON with an ETag of its bytes (and of the
// JSONP callback, which wraps them): the answer depends on the request
// only through what it holds.
func (s *Server) writeBasemapDoc(w http.ResponseWriter, r *http.Request, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	h := fnv.New64a()
	h.Write(b)
	h.Write([]byte("\x00" + callbackOf(r)))
	// Revalidated on every use: the configured basemaps may change with a
	// restart.
	if notModified(w, r, fmt.Sprintf(`W/"basemap-%x"`, h.Sum64()), "public, max-age=0, must-revalidate") {
		return nil
	}
	writeBody(w, r, http.StatusOK, b)
	return nil
}
