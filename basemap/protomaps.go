package basemap

// This file serves Protomaps basemaps from local PMTiles archives
// (--basemap-pmtiles FILE or DIRECTORY): OpenStreetMap's streets and
// labels as vector tiles, read by package pmtiles and styled with the
// layers of @protomaps/basemaps (the "light" flavor), which the web build
// writes into the embedded assets (web/build.mjs). The server fetches
// nothing: a team downloads a file once (Protomaps' builds at
// https://maps.protomaps.com/builds/, or a region of one cut with
// `pmtiles extract`).

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"mapcommons/basemap/pmtiles"
)

// ProtomapsAttribution is the credit of a Protomaps basemap.
const ProtomapsAttribution = "© OpenStreetMap contributors, Protomaps"

// PMTiles is a basemap of a PMTiles archive.
type PMTiles struct {
	Name string // the file's stem
	Path string
	// Tag identifies the file's content (its header, size and time of
	// modification): the tiles' ETag.
	Tag    string
	Reader *pmtiles.Reader
	file   *os.File
}

// Close closes the archive's file.
func (p *PMTiles) Close() error { return p.file.Close() }

// OpenPMTiles opens path: a .pmtiles file, or a directory whose *.pmtiles
// files are each a basemap named by the file's stem. Each must be a valid
// PMTiles version 3 archive of vector tiles (MVT); a name must be of
// letters, digits, '_', '.' and '-' and not "builtin".
func OpenPMTiles(path string) ([]*PMTiles, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if st.IsDir() {
		files, err = filepath.Glob(filepath.Join(path, "*.pmtiles"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no .pmtiles file in the directory", path)
		}
	}
	var out []*PMTiles
	fail := func(err error) ([]*PMTiles, error) {
		for _, p := range out {
			p.Close()
		}
		return nil, err
	}
	seen := map[string]bool{}
	for _, f := range files {
		p, err := openPMTiles(f)
		if err != nil {
			return fail(err)
		}
		out = append(out, p)
		if seen[strings.ToLower(p.Name)] {
			return fail(fmt.Errorf("%s: a second basemap named %s", f, p.Name))
		}
		seen[strings.ToLower(p.Name)] = true
	}
	return out, nil
}

func openPMTiles(path string) (*PMTiles, error) {
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if !rasterName.MatchString(name) || strings.EqualFold(name, Builtin) {
		return nil, fmt.Errorf("%s: the basemap's name %q (the file's stem) is not of letters, digits, '_', '.' and '-', or is %q", path, name, Builtin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file")
	}
	var r *pmtiles.Reader
	if err == nil {
		r, err = pmtiles.Open(f, st.Size())
	}
	if err == nil && r.Header().TileType != pmtiles.MVT {
		err = fmt.Errorf("tiles of type %d: only vector tiles (MVT) make a basemap", r.Header().TileType)
	}
	if c := pmtiles.UnknownCompression; err == nil {
		if c = r.Header().TileCompression; c != pmtiles.Gzip && c != pmtiles.NoCompression {
			err = fmt.Errorf("tile compression %d: only gzip or none is served", c)
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	h := sha256.New()
	hdr := make([]byte, pmtiles.HeaderLen)
	f.ReadAt(hdr, 0)
	h.Write(hdr)
	binary.Write(h, binary.LittleEndian, [2]int64{st.Size(), st.ModTime().UnixNano()})
	return &PMTiles{Name: name, Path: path, Tag: hex.EncodeToString(h.Sum(nil)[:8]), Reader: r, file: f}, nil
}

// FindPMTiles returns the basemap of ps named name (case-insensitively), or nil.
func FindPMTiles(ps []*PMTiles, name string) *PMTiles {
	for _, p := range ps {
		if strings.EqualFold(p.Name, name) {
			return p
		}
	}
	return nil
}

// ProtomapsStyle is the MapLibre style of p: its tiles at tiles (the
// server's absolute template with {z}, {x}, {y}), the glyphs at glyphs,
// and the layers of @protomaps/basemaps (layersJSON, a JSON array as the
// web build wrote it) with their fonts the server's: "Go Bold" where a
// layer asked for a bold or medium font, else "Go Regular". There is no
// sprite: the icons (icon-* properties) are dropped, and so are the
// layers that drew nothing else (one-way arrows, road shields). Without
// layers (a build without the web assets) the style is a background that
// says so in its name.
func ProtomapsStyle(p *PMTiles, tiles, glyphs string, layersJSON []byte) (map[string]any, error) {
	h := p.Reader.Header()
	src := map[string]any{
		"type": "vector", "tiles": []string{tiles},
		"minzoom": h.MinZoom, "maxzoom": h.MaxZoom,
		"bounds":      []float64{h.MinLon, h.MinLat, h.MaxLon, h.MaxLat},
		"attribution": ProtomapsAttribution,
	}
	style := map[string]any{
		"version": 8, "name": p.Name,
		"sources": map[string]any{"protomaps": src},
		"glyphs":  glyphs,
	}
	if len(layersJSON) == 0 {
		style["name"] = p.Name + " (no Protomaps style: the server was built without its web assets, npm run build)"
		style["layers"] = []any{map[string]any{"id": "background", "type": "background", "paint": map[string]any{"background-color": "#cccccc"}}}
		return style, nil
	}
	var layers []map[string]any
	if err := json.Unmarshal(layersJSON, &layers); err != nil {
		return nil, fmt.Errorf("basemap: the Protomaps layers: %w", err)
	}
	kept := make([]any, 0, len(layers))
	for _, l := range layers {
		layout, _ := l["layout"].(map[string]any)
		for k := range layout {
			if strings.HasPrefix(k, "icon-") {
				delete(layout, k)
			}
		}
		if id, _ := l["id"].(string); l["type"] == "symbol" && (layout["text-field"] == nil || strings.HasSuffix(id, "shields")) {
			continue
		}
		if tf, ok := layout["text-font"]; ok {
			layout["text-font"] = goFonts(tf)
		}
		kept = append(kept, l)
	}
	style["layers"] = kept
	return style, nil
}

// goFonts rewrites the font names of a text-font value (an array of
// names or an expression choosing among literal arrays) to the server's.
func goFonts(v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = goFonts(e)
		}
		return out
	case string:
		if !isFontName(v) {
			return v
		}
		if l := strings.ToLower(v); strings.Contains(l, "bold") || strings.Contains(l, "medium") || strings.Contains(l, "semibold") {
			return FontBold
		}
		return FontRegular
	}
	return v
}

// isFontName tells a font's name (words, the last its weight or style)
// from an expression's operator or a property's name.
func isFontName(s string) bool {
	for _, w := range []string{"Regular", "Italic", "Bold", "Medium", "Light", "Semibold", "SemiBold", "Black", "Thin"} {
		if strings.HasSuffix(s, " "+w) {
			return true
		}
	}
	return false
}
