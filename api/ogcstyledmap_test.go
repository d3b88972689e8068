package api_test

import (
	"bytes"
	"image"
	"image/color"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// hasColour reports whether img has a pixel of colour rgb (within the
// rounding of colours stored premultiplied), not nearly transparent.
func hasColour(img image.Image, rgb int) bool {
	b := img.Bounds()
	near := func(v uint8, want int) bool { return abs(int(v)-want) <= 3 }
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if c.A > 32 && near(c.R, rgb>>16) && near(c.G, rgb>>8&0xff) && near(c.B, rgb&0xff) {
				return true
			}
		}
	}
	return false
}

// TestOGCStyledMap: /ogc/styles/{styleId}/map (OGC API – Maps, a styled
// map) draws a map by its number or readable name, with the Maps
// parameters, leaving out a layer whose dataset the caller may not
// download as if it were not there; a map the caller may not view is not
// found.
func TestOGCStyledMap(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	public := uploadNC(t, ts, "")
	must(t, ts.do(req{method: "PUT", path: "/datasets/" + public + ".json", user: "alice", ctype: "application/json",
		body: []byte(`{"permissions": [{"group_id": "everyone", "permissions": {"view": true, "download": true}}]}`)}), 200)
	private := uploadNC(t, ts, "")
	everyone := []any{map[string]any{"group_id": "everyone", "permissions": map[string]any{"view": true}}}
	choropleth := map[string]any{"source": "finder:" + public, "title": "Births", "opacity": 1,
		"styles": map[string]any{"type": "CHOROPLETH", "fill": map[string]any{"selectedAttribute": "BIR74", "classificationType": "Quantile", "categories": 5, "colors": "White-Red", "opacity": 1}}}
	outline := map[string]any{"source": "finder:" + private, "styles": map[string]any{"type": "PRIMITIVE", "fill": map[string]any{"opacity": 0},
		"stroke": map[string]any{"color": "0xff0000", "weight": 4, "alpha": 1}}}
	both := postMap(t, ts, "alice", map[string]any{"title": "Births and outline", "basemap": "Acetate", "permissions": everyone, "layers": []any{choropleth, outline}})
	one := postMap(t, ts, "alice", map[string]any{"title": "Births", "basemap": "Acetate", "permissions": everyone, "layers": []any{choropleth}})
	hidden := postMap(t, ts, "alice", map[string]any{"title": "Mine", "basemap": "Acetate", "layers": []any{choropleth}})
	num := func(m string) string { return strings.TrimPrefix(m, "/maps/") }
	classes := apiClasses(t, ts, one, "alice", 0)

	get := func(path, who string) []byte {
		t.Helper()
		w := ts.get(path, who)
		img := decodePNG(t, w)
		if img.Bounds().Dx() != 400 || img.Bounds().Dy() != 300 {
			t.Errorf("%s: %v", path, img.Bounds())
		}
		if crs := w.Header().Get("Content-Crs"); crs != "<http://www.opengis.net/def/crs/OGC/1.3/CRS84>" {
			t.Errorf("%s: Content-Crs %q", path, crs)
		}
		return w.Body.Bytes()
	}
	const size = "/map?width=400&height=300"
	anon := get("/ogc/styles/"+num(one)+size, "")
	img, _, err := image.Decode(bytes.NewReader(anon))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range classes {
		var rgb int
		for _, h := range c.Color[1:] {
			rgb = rgb<<4 | int(strings.IndexRune("0123456789abcdef", h))
		}
		if !hasColour(img, rgb) {
			t.Errorf("class colour %s not drawn", c.Color)
		}
	}
	if !bytes.Equal(get("/ogc/styles/births-"+num(one)+size, ""), anon) {
		t.Error("the map by its readable name differs from the map by its number")
	}
	bobs := get("/ogc/styles/"+num(both)+size, "bob")
	if !bytes.Equal(bobs, get("/ogc/styles/"+num(one)+size, "bob")) {
		t.Error("bob's map with the private layer differs from the one without it")
	}
	if img, _, _ := image.Decode(bytes.NewReader(bobs)); hasColour(img, 0xff0000) {
		t.Error("bob's map shows the private outline")
	}
	if img, _, _ := image.Decode(bytes.NewReader(get("/ogc/styles/"+num(both)+size, "alice"))); !hasColour(img, 0xff0000) {
		t.Error("alice's map lacks her outline")
	}
	opaque, _, _ := image.Decode(bytes.NewReader(get("/ogc/styles/"+num(one)+size+"&transparent=false&bgcolor=0x0000ff", "")))
	if c := color.NRGBAModel.Convert(opaque.At(0, 0)).(color.NRGBA); c != (color.NRGBA{0, 0, 255, 255}) {
		t.Errorf("bgcolor: corner %v", c)
	}
	w := ts.get("/ogc/styles/"+num(one)+"/map?crs=EPSG:3857&width=100", "")
	decodePNG(t, w)
	if crs := w.Header().Get("Content-Crs"); crs != "<http://www.opengis.net/def/crs/EPSG/0/3857>" {
		t.Errorf("crs=EPSG:3857: Content-Crs %q", crs)
	}
	for _, c := range []struct {
		path, who string
		want      int
	}{
		{"/ogc/styles/" + num(hidden) + "/map", "bob", 404},
		{"/ogc/styles/" + num(hidden) + "/map", "alice", 200},
		{"/ogc/styles/999999/map", "bob", 404},
		{"/ogc/styles/other-" + num(one) + "/map", "bob", 404}, // a name that is not the map's: none
		{"/ogc/styles/999999/map", "", 401},                    // on an appliance, a missing map asks who calls
		{"/ogc/styles/other-" + num(one) + "/map", "", 401},
		{"/ogc/styles/" + num(one) + "/map?width=0", "", 400},
		{"/ogc/styles/" + num(one) + "/map?bbox=10,0,5,1", "", 400},
		{"/ogc/styles/" + num(one) + "/map?style=x", "", 400},
		{"/ogc/styles/" + num(one) + "/map.json", "", 404},
	} {
		if got := ts.get(c.path, c.who).Code; got != c.want {
			t.Errorf("%s as %q: %d, want %d", c.path, c.who, got, c.want)
		}
	}
	etag := ts.get("/ogc/styles/"+num(one)+size, "bob").Header().Get("ETag")
	must(t, ts.do(req{method: "GET", path: "/ogc/styles/" + num(one) + size, user: "bob", header: map[string]string{"If-None-Match": etag}}), 304)
}
