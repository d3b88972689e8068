package api_test

import (
	"bytes"
	"fmt"
	"image"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// swatchColours are the colours of the legend's swatches, top to bottom:
// the colour at the middle of each run of rows whose pixel at x (inside
// the swatches' column) is neither white nor the outline's grey, and
// runs of 14 rows or more (a heading's letters, 12 pixels high, are shorter).
func swatchColours(img image.Image, x int) []string {
	var out []string
	b := img.Bounds()
	start := -1
	colourAt := func(y int) string {
		r, g, bl, _ := img.At(x, y).RGBA()
		return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, bl>>8)
	}
	for y := b.Min.Y; y <= b.Max.Y; y++ {
		c := "#ffffff"
		if y < b.Max.Y {
			c = colourAt(y)
		}
		in := c != "#ffffff" && c != "#999999"
		switch {
		case in && start < 0:
			start = y
		case !in && start >= 0:
			if y-start >= 14 {
				out = append(out, colourAt((start+y-1)/2))
			}
			start = -1
		}
	}
	return out
}

// TestMapLegend: /maps/{id}/legend.png shows a swatch per class in the
// classes' colours, scales for HiDPI, shows one layer when asked, and
// leaves out a layer whose dataset the caller may not download, as if it
// were not in the map.
func TestMapLegend(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	public := uploadNC(t, ts, "")
	must(t, ts.do(req{method: "PUT", path: "/datasets/" + public + ".json", user: "alice", ctype: "application/json",
		body: []byte(`{"permissions": [{"group_id": "everyone", "permissions": {"view": true, "download": true}}]}`)}), 200)
	private := uploadNC(t, ts, "")
	everyone := []any{map[string]any{"group_id": "everyone", "permissions": map[string]any{"view": true}}}
	choropleth := map[string]any{"source": "finder:" + public, "title": "Births", "opacity": 1,
		"styles": map[string]any{"type": "CHOROPLETH", "fill": map[string]any{"selectedAttribute": "BIR74", "classificationType": "Quantile", "categories": 5, "colors": "White-Red", "opacity": 1}}}
	outline := map[string]any{"source": "finder:" + private, "title": "Outline", "styles": map[string]any{"type": "PRIMITIVE", "fill": map[string]any{"color": "0x00ff00"}}}
	both := postMap(t, ts, "alice", map[string]any{"title": "both", "basemap": "Acetate", "permissions": everyone, "layers": []any{choropleth, outline}})
	one := postMap(t, ts, "alice", map[string]any{"title": "one", "basemap": "Acetate", "permissions": everyone, "layers": []any{choropleth}})
	classes := apiClasses(t, ts, one, "alice", 0)

	img := decodePNG(t, ts.get(one+"/legend.png", "bob"))
	got := swatchColours(img, 4+10)
	if len(got) != len(classes) {
		t.Fatalf("swatches %v, want the %d classes %+v", got, len(classes), classes)
	}
	for i, c := range classes {
		if got[i] != c.Color {
			t.Errorf("swatch %d %s, class colour %s", i, got[i], c.Color)
		}
	}
	hi := decodePNG(t, ts.get(one+"/legend.png?scale=2", "bob"))
	if hi.Bounds().Dy() < 2*img.Bounds().Dy()-4 || len(swatchColours(hi, 8+20)) != len(classes) {
		t.Errorf("scale=2: %v, at 1x %v", hi.Bounds(), img.Bounds())
	}
	// Alice sees both layers (under their titles), the outline's green last.
	all := swatchColours(decodePNG(t, ts.get(both+"/legend.png", "alice")), 4+10)
	if len(all) != len(classes)+1 || all[len(all)-1] != "#00ff00" {
		t.Errorf("alice's legend of both: %v", all)
	}
	if only := swatchColours(decodePNG(t, ts.get(both+"/legend.png?layer=1", "alice")), 4+10); len(only) != 1 || only[0] != "#00ff00" {
		t.Errorf("layer=1: %v", only)
	}
	// Bob's legend of both is the legend of the map without the outline.
	if a, b := ts.get(both+"/legend.png", "bob").Body.Bytes(), ts.get(one+"/legend.png", "bob").Body.Bytes(); !bytes.Equal(a, b) {
		t.Error("bob's legend of the map with the private layer differs from the one without it")
	}
	must(t, ts.get(both+"/legend.png?layer=1", "bob"), 404)
	must(t, ts.get(both+"/legend.png?layer=2", "alice"), 404)
	must(t, ts.get(one+"/legend.png?scale=9", "bob"), 400)
	must(t, ts.get(one+"/legend.png?swatch=0", "bob"), 400)
	must(t, ts.get(one+"/legend.json", "bob"), 404)
	w := ts.get(one+"/legend.png", "bob")
	must(t, ts.do(req{method: "GET", path: one + "/legend.png", user: "bob", header: map[string]string{"If-None-Match": w.Header().Get("ETag")}}), 304)
}
