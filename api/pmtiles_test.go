package api_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"mapcommons/api"
	"mapcommons/basemap"
	"mapcommons/basemap/pmtiles/pmtilestest"
)

// pmtilesWorld is the test basemap's tiles (zooms 0 to 3, earth and
// water), made once.
var pmtilesWorld = sync.OnceValues(func() ([]pmtilestest.Tile, error) { return pmtilestest.Basemap(3) })

// pmtilesDir writes a directory of two archives: world.pmtiles (the test
// basemap, its entries in leaves) and gaps.pmtiles (two tiles of zoom 2).
func pmtilesDir(t testing.TB) string {
	t.Helper()
	tiles, err := pmtilesWorld()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("world.pmtiles", pmtilestest.Write(tiles, pmtilestest.Options{LeafSize: 16}))
	write("gaps.pmtiles", pmtilestest.Write([]pmtilestest.Tile{{Z: 2, X: 1, Y: 1, Data: tiles[0].Data}, {Z: 2, X: 2, Y: 1, Data: tiles[0].Data}}, pmtilestest.Options{}))
	return dir
}

// withPMTiles configures a server with the archives of pmtilesDir, as
// --basemap-pmtiles DIR would, or with only the file of name of them
// (--basemap-pmtiles FILE).
func withPMTiles(t testing.TB, name ...string) func(*api.Config) {
	path := pmtilesDir(t)
	if len(name) > 0 {
		path = filepath.Join(path, name[0]+".pmtiles")
	}
	ps, err := basemap.OpenPMTiles(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range ps {
			p.Close()
		}
	})
	return func(c *api.Config) { c.PMTiles = ps }
}

// TestBasemapPMTiles: the tiles of a PMTiles basemap as the archive holds
// them (gzip-encoded, or decompressed for a client without gzip), their
// ETag and 304, a 204 for a tile the archive lacks, 404s; its style (the
// source, glyphs, the Go fonts, no icons) and its place in /basemaps.
func TestBasemapPMTiles(t *testing.T) {
	t.Parallel()
	ts := newServer(t, withPMTiles(t))
	tiles, _ := pmtilesWorld()
	var want []byte
	for _, tl := range tiles {
		if tl.Z == 1 && tl.X == 1 && tl.Y == 0 {
			want = tl.Data
		}
	}
	w := ts.do(req{method: "GET", path: "/basemap/pmtiles/world/1/1/0.mvt", header: map[string]string{"Accept-Encoding": "gzip"}})
	if body := must(t, w, 200); !bytes.Equal(body, want) {
		t.Errorf("tile 1/1/0: %d bytes, want the archive's %d", len(body), len(want))
	}
	h := w.Header()
	if h.Get("Content-Type") != "application/vnd.mapbox-vector-tile" || h.Get("Content-Encoding") != "gzip" ||
		h.Get("Cache-Control") != "public, max-age=86400" || !strings.HasPrefix(h.Get("ETag"), `W/"pmtiles-`) {
		t.Errorf("tile headers %v", h)
	}
	must(t, ts.do(req{method: "GET", path: "/basemap/pmtiles/world/1/1/0.mvt", header: map[string]string{"If-None-Match": h.Get("ETag")}}), 304)
	// Without gzip: the tile decompressed.
	w = ts.do(req{method: "GET", path: "/basemap/pmtiles/World/1/1/0.mvt", header: map[string]string{"Accept-Encoding": "identity"}})
	z, err := gzip.NewReader(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(z)
	if body := must(t, w, 200); !bytes.Equal(body, plain) || w.Header().Get("Content-Encoding") != "" {
		t.Errorf("tile without gzip: %d bytes (%q), want %d", len(body), w.Header().Get("Content-Encoding"), len(plain))
	}
	// The archive lacks it: an empty tile.
	if w := ts.get("/basemap/pmtiles/gaps/2/0/0.mvt", ""); w.Code != 204 || w.Body.Len() != 0 {
		t.Errorf("a tile the archive lacks: %d, %d bytes", w.Code, w.Body.Len())
	}
	must(t, ts.get("/basemap/pmtiles/gaps/2/1/1.mvt", ""), 200)
	for _, p := range []string{"/basemap/pmtiles/world/4/0/0.mvt", "/basemap/pmtiles/world/1/2/0.mvt", "/basemap/pmtiles/nowhere/0/0/0.mvt",
		"/basemap/pmtiles/world/0/0/x.mvt", "/basemap/pmtiles/nowhere/style.json"} {
		errorOf(t, ts.get(p, ""), 404, "not_found", "")
	}

	var style struct {
		Version int
		Glyphs  string
		Sources map[string]struct {
			Type, Attribution string
			Tiles             []string
			MinZoom, MaxZoom  int
			Bounds            []float64
		}
		Layers []struct {
			ID, Type string
			Source   string
			Layout   map[string]any
		}
	}
	if err := json.Unmarshal(must(t, ts.get("/basemap/pmtiles/world/style.json", ""), 200), &style); err != nil {
		t.Fatal(err)
	}
	src := style.Sources["protomaps"]
	if style.Version != 8 || style.Glyphs != base+"/basemap/fonts/{fontstack}/{range}.pbf" || src.Type != "vector" ||
		len(src.Tiles) != 1 || src.Tiles[0] != base+"/basemap/pmtiles/world/{z}/{x}/{y}.mvt" || src.MaxZoom != 3 ||
		src.Attribution != "© OpenStreetMap contributors, Protomaps" || len(src.Bounds) != 4 {
		t.Errorf("style %+v", style)
	}
	if !builtAssets(t) {
		return
	}
	ids, fonts := map[string]bool{}, map[string]bool{}
	for _, l := range style.Layers {
		ids[l.ID] = true
		for k := range l.Layout {
			if strings.HasPrefix(k, "icon-") {
				t.Errorf("layer %s: %s without a sprite", l.ID, k)
			}
		}
		if tf, ok := l.Layout["text-font"]; ok {
			b, _ := json.Marshal(tf)
			for _, f := range []string{"Noto", "Italic", "Medium"} {
				if strings.Contains(string(b), f) {
					t.Errorf("layer %s: text-font %s", l.ID, b)
				}
			}
			fonts[string(b)] = true
		}
	}
	for _, id := range []string{"background", "earth", "water", "roads_major", "places_country"} {
		if !ids[id] {
			t.Errorf("no layer %s among %d", id, len(style.Layers))
		}
	}
	if ids["roads_oneway"] || ids["roads_shields"] {
		t.Error("the icon layers are kept")
	}
	if !fonts[`["Go Regular"]`] || !fonts[`["Go Bold"]`] {
		t.Errorf("fonts %v", fonts)
	}

	var list []map[string]any
	if err := json.Unmarshal(must(t, ts.get("/basemaps.json", ""), 200), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[1]["name"] != "gaps" || list[2]["name"] != "world" || list[2]["pmtiles"] != true ||
		list[2]["style"] != base+"/basemap/pmtiles/world/style.json" || list[0]["pmtiles"] != nil {
		t.Errorf("basemaps %v", list)
	}
}

// builtAssets says whether the binary has the web build (the Protomaps
// layers among them): a skip without it, unless MAPCOMMONS_REQUIRE_NPM=1.
func builtAssets(t *testing.T) bool {
	if _, err := os.Stat(filepath.Join("..", "web", "dist", "manifest.json")); err != nil {
		if os.Getenv("MAPCOMMONS_REQUIRE_NPM") == "1" {
			t.Fatal("web/dist is not built (npm run build) and MAPCOMMONS_REQUIRE_NPM=1")
		}
		t.Log("web/dist is not built: the style's layers are not checked")
		return false
	}
	return true
}

// TestPMTilesStyleValidMapLibre: the style of a PMTiles basemap (the
// Protomaps layers with our fonts, without icons) and the built-in style
// (its urban areas, divisions and their names) are valid by MapLibre's
// own style specification (testdata/maplibre_validate.mjs).
func TestPMTilesStyleValidMapLibre(t *testing.T) {
	t.Parallel()
	needStyleSpec(t)
	if !builtAssets(t) {
		return
	}
	ts := newServer(t, withPMTiles(t, "world"))
	for _, p := range []string{"/basemap/pmtiles/world/style.json", "/basemap/style.json"} {
		if errs := mapLibreErrors(t, must(t, ts.get(p, ""), 200)); len(errs) > 0 {
			t.Errorf("the style of %s is invalid: %v", p, errs)
		}
	}
}
