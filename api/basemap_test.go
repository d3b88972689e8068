package api_test

// Tests of the basemap routes: the built-in basemap's tiles (content,
// caching, gzip, GDAL's reading of them), its MapLibre style, the
// configured raster basemaps and the list.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mapcommons/api"
	"mapcommons/basemap"
	"mapcommons/internal/gdaltest"
)

// basemapTile gets tile z/y/x of the built-in basemap and decodes it,
// checking its layers (tileLayers, in order), extent 4096.
func basemapTile(t *testing.T, ts *testServer, z, y, x int) ([]byte, map[string][]tileFeature) {
	t.Helper()
	w := ts.get(fmt.Sprintf("/basemap/tiles/%d/%d/%d", z, y, x), "")
	body := must(t, w, 200)
	if ct := w.Header().Get("Content-Type"); ct != "application/vnd.mapbox-vector-tile" {
		t.Fatalf("Content-Type %q", ct)
	}
	layers := decodeMVT(t, body)
	byName := map[string][]tileFeature{}
	var got []string
	for _, l := range layers {
		got = append(got, l.name)
		byName[l.name] = l.features
		if l.extent != 4096 {
			t.Fatalf("tile %d/%d/%d: layer %s: extent %d", z, y, x, l.name, l.extent)
		}
	}
	if !slices.Equal(got, tileLayers) {
		t.Fatalf("tile %d/%d/%d: layers %v", z, y, x, got)
	}
	return body, byName
}

// tileLayers are the layers of every tile of the built-in basemap.
var tileLayers = []string{"land", "coastline", "lakes", "rivers", "borders", "urban", "divisions", "countries", "places", "regions"}

// names are the name properties of feats.
func names(feats []tileFeature) []string {
	var out []string
	for _, f := range feats {
		out = append(out, fmt.Sprint(f.props["name"]))
	}
	return out
}

func TestBasemapTiles(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	_, z0 := basemapTile(t, ts, 0, 0, 0)
	// 177 countries, a few of them too small to keep a ring at zoom 0;
	// the land, lakes and borders; the world's largest cities (of
	// Natural Earth's min_zoom below 2), Tokyo first.
	if n := len(z0["countries"]); n < 170 || n > 177 {
		t.Errorf("zoom 0: %d countries", n)
	}
	if n := len(z0["places"]); n < 10 || n > 30 || z0["places"][0].props["name"] != "Tokyo" {
		t.Errorf("zoom 0: %d places: %v", n, names(z0["places"]))
	}
	for _, l := range []string{"land", "lakes", "borders"} {
		if len(z0[l]) == 0 {
			t.Errorf("zoom 0: no %s", l)
		}
	}
	for _, f := range z0["countries"] {
		if f.typ != 3 || f.rings == 0 || f.props["name"] == "" || f.props["continent"] == nil {
			t.Fatalf("zoom 0: country %+v", f)
		}
	}
	// Zoom 4 over Paris: France and Paris, not Japan or Tokyo.
	z, y, x := 4, tileRowOf(48.86, 4), tileColOf(2.35, 4)
	_, fr := basemapTile(t, ts, z, y, x)
	countries, places := names(fr["countries"]), names(fr["places"])
	if !slices.Contains(countries, "France") || slices.Contains(countries, "Japan") || len(countries) > 30 {
		t.Errorf("tile 4/%d/%d: countries %v", y, x, countries)
	}
	if !slices.Contains(places, "Paris") || slices.Contains(places, "Tokyo") {
		t.Errorf("tile 4/%d/%d: places %v", y, x, places)
	}
	// Open sea (zoom 6, the South Pacific): a valid tile, its layers empty.
	if _, sea := basemapTile(t, ts, 6, tileRowOf(-40, 6), tileColOf(-130, 6)); len(sea["countries"])+len(sea["places"])+len(sea["land"])+len(sea["coastline"]) != 0 {
		t.Errorf("the South Pacific: %+v", sea)
	}
	// Zoom 9 over New York (the deepest zoom of the data): land, coast,
	// and the places of a city's scale.
	_, ny := basemapTile(t, ts, 9, tileRowOf(40.7, 9), tileColOf(-74, 9))
	if len(ny["land"]) == 0 || len(ny["coastline"]) == 0 || !slices.Contains(names(ny["places"]), "New York") {
		t.Errorf("tile 9 over New York: %d land, %d coast features, places %v", len(ny["land"]), len(ny["coastline"]), names(ny["places"]))
	}
	// Deep zooms are served (clients may overzoom less than the style says).
	basemapTile(t, ts, 12, tileRowOf(48.86, 12), tileColOf(2.35, 12))
	for _, p := range []string{"/basemap/tiles/0/0/1", "/basemap/tiles/25/0/0", "/basemap/tiles/a/0/0", "/basemap/tiles/1/-1/0"} {
		errorOf(t, ts.get(p, ""), 400, "invalid", "")
	}
	errorOf(t, ts.do(req{method: "POST", path: "/basemap/tiles/0/0/0"}), 405, "method_not_allowed", "POST")
	// .pbf and .mvt name the same tile.
	for _, p := range []string{"/basemap/tiles/0/0/0.pbf", "/basemap/tiles/0/0/0.mvt"} {
		if w := ts.get(p, ""); w.Code != 200 || len(decodeMVT(t, w.Body.Bytes())) != len(tileLayers) {
			t.Errorf("%s: %d", p, w.Code)
		}
	}
}

// TestBasemapTileCaching: the tiles' validator is the build's (the same
// after a restart), a day's public caching, a 304 for the tag, and gzip
// for a client that takes it, with or without the tile cache.
func TestBasemapTileCaching(t *testing.T) {
	t.Parallel()
	for _, cache := range []int64{0, -1} {
		ts := newServer(t, func(c *api.Config) { c.TileCache = cache })
		p := "/basemap/tiles/1/0/1"
		w := ts.get(p, "")
		plain := must(t, w, 200)
		tag := w.Header().Get("ETag")
		if tag != `W/"basemap-`+basemap.Version()+`"` || w.Header().Get("Cache-Control") != "public, max-age=86400" {
			t.Fatalf("ETag %q, Cache-Control %q", tag, w.Header().Get("Cache-Control"))
		}
		ts.restart()
		if w := ts.get(p, ""); w.Header().Get("ETag") != tag || !bytes.Equal(w.Body.Bytes(), plain) {
			t.Errorf("after a restart: ETag %q", w.Header().Get("ETag"))
		}
		w = ts.do(req{method: "GET", path: p, header: map[string]string{"If-None-Match": tag}})
		if w.Code != 304 || w.Body.Len() != 0 {
			t.Errorf("If-None-Match: %d", w.Code)
		}
		w = ts.do(req{method: "GET", path: p, header: map[string]string{"Accept-Encoding": "gzip"}})
		if must(t, w, 200); w.Header().Get("Content-Encoding") != "gzip" {
			t.Fatalf("cache %d: Content-Encoding %q", cache, w.Header().Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(w.Body)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, plain) {
			t.Errorf("cache %d: the gzip form is not the tile (%v)", cache, err)
		}
		if len(plain) < 10_000 {
			t.Errorf("tile 1/0/1: %d bytes", len(plain))
		}
	}
}

// TestBasemapTileGDAL reads tiles of zooms 0, 2, 4 and 9 with GDAL's MVT
// driver: every layer, as many features as decoded, every polygon valid
// (GEOS).
func TestBasemapTileGDAL(t *testing.T) {
	t.Parallel()
	bin := gdaltest.Need(t)
	ts := newServer(t)
	dir := t.TempDir()
	type tile struct{ z, y, x int }
	tiles := []tile{{0, 0, 0}, {4, tileRowOf(48.86, 4), tileColOf(2.35, 4)}, {4, tileRowOf(-15, 4), tileColOf(-60, 4)},
		{9, tileRowOf(40.7, 9), tileColOf(-74, 9)}, {9, tileRowOf(-8.01, 9), tileColOf(-34.85, 9)}}
	for y := 0; y < 4; y++ {
		for x := 0; x < 4; x++ {
			tiles = append(tiles, tile{2, y, x})
		}
	}
	for _, tc := range tiles {
		body, layers := basemapTile(t, ts, tc.z, tc.y, tc.x)
		if len(layers["countries"])+len(layers["places"]) == 0 {
			continue // GDAL opens no tile without a feature
		}
		path := filepath.Join(dir, strconv.Itoa(tc.z), strconv.Itoa(tc.x), strconv.Itoa(tc.y)+".pbf")
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		info := gdaltest.Ogrinfo(t, path)
		counts := map[string]int{}
		for _, l := range info.Layers {
			counts[l.Name] = int(l.Count)
		}
		for name, feats := range layers {
			if len(feats) > 0 && counts[name] != len(feats) {
				t.Fatalf("%s: layer %s: %d features decoded, GDAL says\n%s", path, name, len(feats), info.Output)
			}
		}
		for _, l := range []string{"countries", "land", "lakes"} {
			if len(layers[l]) == 0 {
				continue
			}
			out, err := exec.Command(bin, "-ro", "-q", "-oo", "CLIP=NO", "-dialect", "sqlite", "-sql",
				`SELECT mvt_id, ST_IsValidReason(GEOMETRY) AS reason FROM `+l, path).CombinedOutput()
			if err != nil {
				t.Fatalf("ogrinfo: %v\n%s", err, out)
			}
			reasons := regexp.MustCompile(`reason \(String\) = (.*)`).FindAllStringSubmatch(string(out), -1)
			if len(reasons) != len(layers[l]) {
				t.Fatalf("%s: %d rows for %d features of %s\n%s", path, len(reasons), len(layers[l]), l, out)
			}
			for _, r := range reasons {
				if r[1] != "Valid Geometry" {
					t.Errorf("%s: %s: %s", path, l, r[1])
				}
			}
		}
	}
}

// mapStyle is what the tests read of a MapLibre style.
type mapStyle struct {
	Version int                        `json:"version"`
	Name    string                     `json:"name"`
	Sources map[string]json.RawMessage `json:"sources"`
	Layers  []map[string]any           `json:"layers"`
	Glyphs  *string                    `json:"glyphs"`
	Sprite  any                        `json:"sprite"`
}

// styleSource is a style's source.
type styleSource struct {
	Type        string   `json:"type"`
	Tiles       []string `json:"tiles"`
	URL         string   `json:"url"`
	Attribution string   `json:"attribution"`
	TileSize    int      `json:"tileSize"`
	MinZoom     *int     `json:"minzoom"`
	MaxZoom     *int     `json:"maxzoom"`
}

// checkStyle checks the structure the MapLibre style specification asks
// of b (version 8, sources of a known type with tiles, layers of a known
// type with unique ids naming a source that exists and, for a vector
// source, a source-layer; paint properties of the layer's type) and
// returns it with its sources.
func checkStyle(t *testing.T, b []byte) (mapStyle, map[string]styleSource) {
	t.Helper()
	var s mapStyle
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("style: %v\n%s", err, b)
	}
	if s.Version != 8 || len(s.Sources) == 0 || len(s.Layers) == 0 {
		t.Fatalf("style: version %d, %d sources, %d layers", s.Version, len(s.Sources), len(s.Layers))
	}
	sources := map[string]styleSource{}
	for id, raw := range s.Sources {
		var src styleSource
		if err := json.Unmarshal(raw, &src); err != nil {
			t.Fatal(err)
		}
		if (src.Type != "vector" && src.Type != "raster") || len(src.Tiles) == 0 || src.Attribution == "" {
			t.Errorf("source %s: %+v", id, src)
		}
		for _, tmpl := range src.Tiles {
			for _, p := range []string{"{z}", "{x}", "{y}"} {
				if !strings.Contains(tmpl, p) {
					t.Errorf("source %s: template %s lacks %s", id, tmpl, p)
				}
			}
		}
		sources[id] = src
	}
	ids := map[string]bool{}
	for i, l := range s.Layers {
		id, _ := l["id"].(string)
		typ, _ := l["type"].(string)
		if id == "" || ids[id] {
			t.Errorf("layer %d: id %q", i, id)
		}
		ids[id] = true
		if !slices.Contains([]string{"background", "fill", "line", "symbol", "circle", "raster", "fill-extrusion", "heatmap", "hillshade"}, typ) {
			t.Errorf("layer %s: type %q", id, typ)
		}
		if typ == "background" {
			if i != 0 || l["source"] != nil {
				t.Errorf("background layer %s at %d", id, i)
			}
		} else {
			src, ok := sources[fmt.Sprint(l["source"])]
			if !ok {
				t.Errorf("layer %s: source %v", id, l["source"])
			}
			if sl, _ := l["source-layer"].(string); (src.Type == "vector") != (sl != "") {
				t.Errorf("layer %s: source-layer %q of a %s source", id, sl, src.Type)
			}
			if typ == "symbol" && s.Glyphs == nil {
				t.Errorf("layer %s: a symbol layer without glyphs", id)
			}
		}
		paint, _ := l["paint"].(map[string]any)
		for k := range paint {
			// A symbol layer's paint is of its text and icons.
			if !strings.HasPrefix(k, typ+"-") && (typ != "symbol" || !strings.HasPrefix(k, "text-") && !strings.HasPrefix(k, "icon-")) {
				t.Errorf("layer %s: paint %s of a %s layer", id, k, typ)
			}
		}
	}
	return s, sources
}

// urlsIn are the strings of a JSON document that hold a URL.
func urlsIn(t *testing.T, b []byte) []string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if strings.Contains(v, "://") || strings.HasPrefix(v, "//") || strings.HasPrefix(v, "/") {
				out = append(out, v)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

func TestBasemapStyle(t *testing.T) {
	t.Parallel()
	const osm = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
	ts := newServer(t, func(c *api.Config) {
		c.Basemaps = []basemap.Raster{{Name: "osm", URL: osm, Attribution: "© OpenStreetMap contributors"},
			{Name: "topo", URL: "https://tiles.example.org/{z}/{x}/{y}.png", Attribution: "tiles.example.org"}}
	})
	// The built-in style, by each name that means it.
	var builtin []byte
	for _, p := range []string{"/basemap/style.json", "/basemap/style", "/basemap/style.json?name=builtin", "/basemap/style.json?name=nosuch", "/basemap/style.json?name="} {
		w := ts.get(p, "")
		b := must(t, w, 200)
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q", p, ct)
		}
		if builtin == nil {
			builtin = b
		} else if !bytes.Equal(b, builtin) {
			t.Errorf("%s: not the built-in style\n%s", p, b)
		}
	}
	s, sources := checkStyle(t, builtin)
	src := sources["basemap"]
	if len(sources) != 1 || src.Type != "vector" || len(src.Tiles) != 1 || src.Tiles[0] != base+"/basemap/tiles/{z}/{y}/{x}" ||
		src.MaxZoom == nil || *src.MaxZoom != basemap.MaxZoom {
		t.Fatalf("built-in sources %+v", sources)
	}
	// Its glyphs are this server's; it has no sprite.
	if s.Glyphs == nil || *s.Glyphs != base+"/basemap/fonts/{fontstack}/{range}.pbf" || s.Sprite != nil {
		t.Errorf("built-in style: glyphs %v, sprite %v", s.Glyphs, s.Sprite)
	}
	var kinds []string
	for _, l := range s.Layers {
		kinds = append(kinds, fmt.Sprint(l["type"], ":", l["source-layer"]))
	}
	if strings.Join(kinds, " ") != "background:<nil> fill:land fill:lakes line:coastline fill:urban line:rivers line:divisions line:borders circle:places symbol:places symbol:regions" {
		t.Errorf("built-in layers %v", kinds)
	}
	// Nothing of the built-in style leaves the server.
	urls := urlsIn(t, builtin)
	if len(urls) == 0 {
		t.Fatal("no URL found in the built-in style")
	}
	for _, u := range urls {
		if !strings.HasPrefix(u, base+"/") {
			t.Errorf("built-in style: %s is not this server's", u)
		}
	}
	// Its tiles are the tiles route's.
	tile := strings.NewReplacer("{z}", "3", "{y}", "2", "{x}", "4").Replace(strings.TrimPrefix(src.Tiles[0], base))
	if w := ts.get(tile, ""); w.Code != 200 || len(decodeMVT(t, w.Body.Bytes())) != len(tileLayers) {
		t.Errorf("%s: %d", tile, w.Code)
	}
	// The base URL is the request's without --base-url.
	w := httptest.NewRecorder()
	newServer(t, func(c *api.Config) { c.BaseURL = "" }).handler.ServeHTTP(w, httptest.NewRequest("GET", "http://gis.example.net:8081/basemap/style.json", nil))
	if b := must(t, w, 200); !strings.Contains(string(b), `"http://gis.example.net:8081/basemap/tiles/{z}/{y}/{x}"`) {
		t.Errorf("style without --base-url: %s", b)
	}

	// A configured raster basemap, by name (any case).
	for _, name := range []string{"osm", "OSM"} {
		b := must(t, ts.get("/basemap/style.json?name="+name, ""), 200)
		s, sources := checkStyle(t, b)
		src := sources["osm"]
		if len(sources) != 1 || src.Type != "raster" || src.TileSize != 256 || len(src.Tiles) != 1 || src.Tiles[0] != osm ||
			src.Attribution != "© OpenStreetMap contributors" || s.Layers[len(s.Layers)-1]["source"] != "osm" {
			t.Errorf("?name=%s: %s", name, b)
		}
	}
	// Validators, formats, methods.
	w = ts.get("/basemap/style.json?name=osm", "")
	tag := w.Header().Get("ETag")
	if tag == "" || tag == ts.get("/basemap/style.json", "").Header().Get("ETag") {
		t.Errorf("ETag %q, the same as the built-in style's", tag)
	}
	if w := ts.do(req{method: "GET", path: "/basemap/style.json?name=osm", header: map[string]string{"If-None-Match": tag}}); w.Code != 304 {
		t.Errorf("If-None-Match: %d", w.Code)
	}
	if b := string(must(t, ts.get("/basemap/style.json?callback=cb", ""), 200)); !strings.HasPrefix(b, "cb(") && !strings.HasPrefix(b, "/**/cb(") {
		t.Errorf("JSONP: %.40s", b)
	}
	errorOf(t, ts.get("/basemap/style.csv", ""), 404, "not_found", ".json")
	errorOf(t, ts.do(req{method: "PUT", path: "/basemap/style.json"}), 405, "method_not_allowed", "PUT")

	// The list: builtin first, then the configured ones, each with its style.
	list := decode[[]map[string]string](t, must(t, ts.get("/basemaps.json", ""), 200))
	want := []map[string]string{
		{"name": "builtin", "type": "vector", "style": base + "/basemap/style.json", "attribution": basemap.Attribution},
		{"name": "osm", "type": "raster", "style": base + "/basemap/style.json?name=osm", "attribution": "© OpenStreetMap contributors"},
		{"name": "topo", "type": "raster", "style": base + "/basemap/style.json?name=topo", "attribution": "tiles.example.org"},
	}
	if fmt.Sprint(list) != fmt.Sprint(want) {
		t.Errorf("/basemaps: %v", list)
	}
	if list := decode[[]map[string]string](t, must(t, newServer(t).get("/basemaps", ""), 200)); len(list) != 1 || list[0]["name"] != "builtin" {
		t.Errorf("/basemaps with none configured: %v", list)
	}
	errorOf(t, ts.do(req{method: "DELETE", path: "/basemaps"}), 405, "method_not_allowed", "DELETE")
}

// BenchmarkBasemapTile makes tiles of the built-in basemap through the API,
// the tile cache off: zoom 0 (the world), zoom 5 over Europe and zoom 9
// over New York. The data is decoded before (once a process, not per
// tile).
func BenchmarkBasemapTile(b *testing.B) {
	ts := newServer(b, func(c *api.Config) { c.TileCache = -1 })
	basemap.Load()
	for _, tc := range []struct {
		name    string
		z, y, x int
	}{{"z0", 0, 0, 0}, {"z5", 5, tileRowOf(48.86, 5), tileColOf(2.35, 5)}, {"z9", 9, tileRowOf(40.7, 9), tileColOf(-74, 9)}} {
		b.Run(tc.name, func(b *testing.B) {
			p := fmt.Sprintf("/basemap/tiles/%d/%d/%d", tc.z, tc.y, tc.x)
			size := 0
			for b.Loop() {
				w := ts.get(p, "")
				if w.Code != 200 {
					b.Fatal(w.Code)
				}
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size)/1024, "KB")
		})
	}
}
