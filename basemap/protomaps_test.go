package basemap_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mapcommons/basemap"
	"mapcommons/basemap/pmtiles/pmtilestest"
)

// TestProtomapsStyle: the fonts rewritten to the server's (in an array
// and in an expression's literals), the icons dropped with the layers
// that drew only them, and a background alone without layers.
func TestProtomapsStyle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "city.pmtiles")
	if err := os.WriteFile(path, pmtilestest.Write([]pmtilestest.Tile{{Z: 2, X: 1, Y: 1, Data: []byte("x")}}, pmtilestest.Options{}), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := basemap.OpenPMTiles(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ps[0].Close()
	if ps[0].Name != "city" || ps[0].Tag == "" {
		t.Fatalf("%+v", ps[0])
	}
	layers := `[{"id":"background","type":"background"},
	 {"id":"roads_oneway","type":"symbol","layout":{"icon-image":"arrow"}},
	 {"id":"roads_shields","type":"symbol","layout":{"icon-image":"x","text-field":"y","text-font":["Noto Sans Medium"]}},
	 {"id":"pois","type":"symbol","layout":{"icon-image":"x","icon-size":1,"text-field":"n","text-font":["Noto Sans Italic"]}},
	 {"id":"places","type":"symbol","layout":{"text-field":"n","text-font":["case",["<=",["get","min_zoom"],5],["literal",["Noto Sans Medium"]],["literal",["Noto Sans Regular"]]]}}]`
	style, err := basemap.ProtomapsStyle(ps[0], "T", "G", []byte(layers))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(style["layers"])
	want := `[{"id":"background","type":"background"},` +
		`{"id":"pois","layout":{"text-field":"n","text-font":["Go Regular"]},"type":"symbol"},` +
		`{"id":"places","layout":{"text-field":"n","text-font":["case",["\u003c=",["get","min_zoom"],5],["literal",["Go Bold"]],["literal",["Go Regular"]]]},"type":"symbol"}]`
	if string(b) != want {
		t.Errorf("layers\n%s\nwant\n%s", b, want)
	}
	src := style["sources"].(map[string]any)["protomaps"].(map[string]any)
	if style["glyphs"] != "G" || src["minzoom"] != uint8(2) || src["maxzoom"] != uint8(2) {
		t.Errorf("style %v", style)
	}
	bare, _ := basemap.ProtomapsStyle(ps[0], "T", "G", nil)
	if l := bare["layers"].([]any); len(l) != 1 || !strings.Contains(bare["name"].(string), "npm run build") {
		t.Errorf("without assets: %v", bare)
	}
	// A bad file, a directory without any, a bad name: errors.
	bad := filepath.Join(t.TempDir(), "x.pmtiles")
	os.WriteFile(bad, []byte("PMTiles\x03"), 0o644)
	for _, p := range []string{bad, t.TempDir(), filepath.Join(t.TempDir(), "none.pmtiles")} {
		if _, err := basemap.OpenPMTiles(p); err == nil {
			t.Errorf("%s: no error", p)
		}
	}
}
