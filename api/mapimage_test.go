package api_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/basemap"
	"mapcommons/style"
)

// decodePNG reads an image answer, which must be a 200.
func decodePNG(t *testing.T, w *httptest.ResponseRecorder) image.Image {
	t.Helper()
	must(t, w, 200)
	if ct := w.Header().Get("Content-Type"); ct != "image/png" {
		t.Fatalf("Content-Type %q: %.200s", ct, w.Body.String())
	}
	img, err := png.Decode(bytes.NewReader(w.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// colours counts the opaque colours of img.
func colours(img image.Image) map[color.RGBA]int {
	out := map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c.A == 255 {
				out[c]++
			}
		}
	}
	return out
}

// TestDatasetImage: GET /datasets/{id}.png draws the dataset with a new
// layer's styles, sized to its extent's shape unless told, with an ETag,
// and refuses what it cannot draw.
func TestDatasetImage(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "")
	w := ts.get("/datasets/"+id+".png", "")
	img := decodePNG(t, w)
	// North Carolina is wider than high: 512 wide, fewer high.
	if b := img.Bounds(); b.Dx() != 512 || b.Dy() >= 512 || b.Dy() < 100 {
		t.Errorf("default size %v", b)
	}
	// The counties are filled, at the default fill's colour over nothing
	// (with opacity) and outlined: much of the image is painted.
	painted := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if _, _, _, a := img.At(x, y).RGBA(); a > 0 {
				painted++
			}
		}
	}
	if painted < b.Dx()*b.Dy()/4 {
		t.Errorf("%d of %d pixels painted", painted, b.Dx()*b.Dy())
	}
	etag := w.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if got := ts.do(req{method: "GET", path: "/datasets/" + id + ".png", header: map[string]string{"If-None-Match": etag}}).Code; got != 304 {
		t.Errorf("If-None-Match: %d", got)
	}
	for _, c := range []struct {
		query string
		w, h  int
	}{
		{"width=100&height=50", 100, 50},
		{"width=100&height=50&scale=2", 200, 100},
		{"width=300&bbox=-80,35,-78,36", 300, 0},
		{"height=200&crs=EPSG:4326", 0, 200},
		{"width=64&height=64&bbox=-85,33,-75,37", 64, 64},
	} {
		img := decodePNG(t, ts.get("/datasets/"+id+".png?"+c.query, ""))
		if got := img.Bounds(); c.w > 0 && got.Dx() != c.w || c.h > 0 && got.Dy() != c.h || got.Dx() < 1 || got.Dy() < 1 {
			t.Errorf("%s: %v, want %dx%d", c.query, got, c.w, c.h)
		}
	}
	// A box that holds none of the counties: the built-in basemap's sea
	// (its countries are elsewhere), or nothing without the basemap.
	sea := decodePNG(t, ts.get("/datasets/"+id+".png?width=50&height=50&bbox=-40,10,-39,11", ""))
	if c := colours(sea); len(c) != 1 || c[color.RGBA{0xa8, 0xcc, 0xe0, 255}] != 50*50 {
		t.Errorf("an empty box over the sea: %v", c)
	}
	empty := decodePNG(t, ts.get("/datasets/"+id+".png?width=50&height=50&bbox=10,10,11,11&basemap=none", ""))
	if n := len(colours(empty)); n != 0 {
		t.Errorf("an empty box has %d colours", n)
	}
	// The basemap's land shows under and around the counties: Virginia,
	// north of them, is land coloured.
	va := decodePNG(t, ts.get("/datasets/"+id+".png?width=20&height=20&bbox=-79,37.5,-78.5,38", ""))
	if c := colours(va); c[color.RGBA{0xf2, 0xef, 0xe6, 255}] < 300 {
		t.Errorf("Virginia: %v", c)
	}
	for _, q := range []string{"width=0", "width=5000", "height=x", "scale=9", "scale=0.5", "bbox=1,2,3", "bbox=10,0,-10,5",
		"bbox=0,0,1,100", "crs=EPSG:1234", "width=4096&height=4096&scale=2", "basemap=osm"} {
		errorOf(t, ts.get("/datasets/"+id+".png?"+q, ""), 400, "invalid", "")
	}
	// No other form of a dataset is an image.
	must(t, ts.get("/datasets/"+id+"/features.png", ""), 404)
}

// TestDatasetImagePermissions: an image shows a dataset's data, so it is
// answered as the features are: to who may download it.
func TestDatasetImagePermissions(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	id := uploadNC(t, ts, "") // private to alice on an appliance
	for _, who := range []string{"", "bob"} {
		want := ts.get("/datasets/"+id+"/features.json", who).Code
		if got := ts.get("/datasets/"+id+".png", who).Code; got != want || got == 200 {
			t.Errorf("%q: %d, features.json %d", who, got, want)
		}
		if got := ts.get("/datasets/999999.png", who).Code; got != want {
			t.Errorf("%q on a missing one: %d, features.json %d", who, got, want)
		}
	}
	decodePNG(t, ts.get("/datasets/"+id+".png", "alice"))
}

// TestMapImage: GET /maps/{id}.png draws the map's layers with their
// styles — a choropleth in the colours of its classes — and leaves out a
// layer whose dataset the caller may not download, as if it were not
// there.
func TestMapImage(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	public := uploadNC(t, ts, "")
	must(t, ts.do(req{method: "PUT", path: "/datasets/" + public + ".json", user: "alice", ctype: "application/json",
		body: []byte(`{"permissions": [{"group_id": "everyone", "permissions": {"view": true, "download": true}}]}`)}), 200)
	private := uploadNC(t, ts, "")
	form := "application/x-www-form-urlencoded"
	choropleth := "&layers[][source]=finder:" + public + "&layers[][styles][type]=CHOROPLETH" +
		"&layers[][styles][fill][selectedAttribute]=BIR74&layers[][styles][fill][classificationType]=Quantile&layers[][styles][fill][categories]=5"
	outline := "&layers[][source]=finder:" + private + "&layers[][styles][type]=PRIMITIVE&layers[][styles][stroke][color]=0xff0000&layers[][styles][stroke][weight]=4"
	newMap := func(layers string) string {
		m := decode[map[string]any](t, must(t, ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: form,
			body: []byte("title=m&basemap=Acetate&permissions[][group_id]=everyone&permissions[][permissions][view]=true" + layers)}), 201))
		return strconv.Itoa(int(m["id"].(float64)))
	}
	both, one := newMap(choropleth+outline), newMap(choropleth)
	get := func(m, who string) *httptest.ResponseRecorder {
		w := ts.get("/maps/"+m+".png?width=400&height=300&basemap=none", who)
		must(t, w, 200)
		return w
	}
	// The class colours of the choropleth, as the map's JSON gives them.
	doc := decode[struct {
		Layers []struct {
			Styles struct {
				Fill struct {
					Classification struct{ Colors []int }
				}
			}
		}
	}](t, must(t, ts.get("/maps/"+one+".json", "alice"), 200))
	classColours := doc.Layers[0].Styles.Fill.Classification.Colors
	if len(classColours) != 5 {
		t.Fatalf("classes %v", classColours)
	}
	// The fill is drawn at the layer's fill opacity over nothing: its
	// pixels have the class colour's hue at partial alpha. Each class
	// shows; in bob's image of both, the private outline (pure red) does not.
	hasClass := func(img image.Image, rgb int) bool {
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				// (Within the rounding of colours stored premultiplied.)
				near := func(v uint8, want int) bool { return abs(int(v)-want) <= 3 }
				if c.A > 32 && near(c.R, rgb>>16) && near(c.G, rgb>>8&0xff) && near(c.B, rgb&0xff) {
					return true
				}
			}
		}
		return false
	}
	red := 0xff0000
	anon := decodePNG(t, get(one, ""))
	for _, c := range classColours {
		if !hasClass(anon, c) {
			t.Errorf("class colour %06x not drawn", c)
		}
	}
	bobBoth := get(both, "bob")
	if img := decodePNG(t, bobBoth); hasClass(img, red) {
		t.Error("bob's image shows the private layer")
	}
	if !bytes.Equal(bobBoth.Body.Bytes(), get(one, "bob").Body.Bytes()) {
		t.Error("bob's image of the map with the private layer differs from the one without it")
	}
	aliceBoth := get(both, "alice")
	if img := decodePNG(t, aliceBoth); !hasClass(img, red) {
		t.Error("alice's image lacks her own layer")
	}
	if aliceBoth.Header().Get("ETag") == bobBoth.Header().Get("ETag") {
		t.Error("alice and bob have the same ETag for different images")
	}
	// A map the caller may not view answers as its JSON does.
	priv := decode[map[string]any](t, must(t, ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: form,
		body: []byte("title=p&basemap=Acetate" + choropleth)}), 201))
	pid := strconv.Itoa(int(priv["id"].(float64)))
	for _, who := range []string{"", "bob"} {
		if got, want := ts.get("/maps/"+pid+".png", who).Code, ts.get("/maps/"+pid+".json", who).Code; got != want || got == 200 {
			t.Errorf("%q: %d, the JSON %d", who, got, want)
		}
	}
}

// TestMapTilesXYZ: /maps/{id}/tiles/{z}/{x}/{y}.png are the map's PNG
// tiles in XYZ order, drawn where its layers are, a layer the caller may
// not download left out, with ETags; what is no tile is a 400.
func TestMapTilesXYZ(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	private := uploadNC(t, ts, "")
	form := "application/x-www-form-urlencoded"
	m := decode[map[string]any](t, must(t, ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: form,
		body: []byte("title=m&basemap=Acetate&permissions[][group_id]=everyone&permissions[][permissions][view]=true" +
			"&layers[][source]=finder:" + private + "&layers[][styles][type]=PRIMITIVE")}), 201))
	id := strconv.Itoa(int(m["id"].(float64)))
	// Zoom 6: North Carolina is in tiles x 17 and 18, y 25.
	tile := "/maps/" + id + "/tiles/6/17/25.png"
	w := ts.get(tile, "alice")
	if n := opaqueish(decodePNG(t, w)); n < 1000 {
		t.Errorf("alice's tile paints %d pixels", n)
	}
	if got := ts.do(req{method: "GET", path: tile, user: "alice", header: map[string]string{"If-None-Match": w.Header().Get("ETag")}}).Code; got != 304 {
		t.Errorf("If-None-Match: %d", got)
	}
	if b := decodePNG(t, ts.get("/maps/"+id+"/tiles/6/17/25.png?scale=2", "alice")).Bounds(); b.Dx() != 512 {
		t.Errorf("scale 2: %v", b)
	}
	// Bob may view the map, not download the dataset: an empty tile.
	if n := len(colours(decodePNG(t, ts.get(tile, "bob")))); n != 0 {
		t.Errorf("bob's tile has %d colours", n)
	}
	// Far from the counties: nothing.
	if n := len(colours(decodePNG(t, ts.get("/maps/"+id+"/tiles/6/0/0.png", "alice")))); n != 0 {
		t.Errorf("a far tile has %d colours", n)
	}
	for _, p := range []string{"/tiles/6/64/0.png", "/tiles/23/0/0.png", "/tiles/-1/0/0.png", "/tiles/6/a/0.png", "/tiles/6/17/25.png?scale=9", "/tiles/6/17/25.png?x=1"} {
		errorOf(t, ts.get("/maps/"+id+p, "alice"), 400, "invalid", "")
	}
	must(t, ts.get("/maps/"+id+"/tiles/6/17/25.json", "alice"), 404)
}

// TestImageBasemapCityScale: a server-drawn image at city scale over New
// York draws the built-in basemap's 1:10m land under the boroughs and sea
// in the bays (the 1:110m countries had Staten Island and Brooklyn in the
// sea), its land filled without seams where its pieces meet.
func TestImageBasemapCityScale(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "") // elsewhere: only the basemap is drawn here
	const w, h = 600, 600
	box := [4]float64{-74.30, 40.45, -73.70, 40.90}
	img := decodePNG(t, ts.get(fmt.Sprintf("/datasets/%s.png?bbox=%g,%g,%g,%g&width=%d&height=%d", id, box[0], box[1], box[2], box[3], w, h), ""))
	merc := func(lat float64) float64 { return math.Log(math.Tan(math.Pi/4 + lat*math.Pi/360)) }
	at := func(lon, lat float64) color.RGBA {
		x := (lon - box[0]) / (box[2] - box[0]) * w
		y := (merc(box[3]) - merc(lat)) / (merc(box[3]) - merc(box[1])) * h
		return color.RGBAModel.Convert(img.At(int(x), int(y))).(color.RGBA)
	}
	land, urban, sea := rgbOf(basemap.LandColour), rgbOf(basemap.UrbanColour), rgbOf(basemap.SeaColour)
	// Land is the land's colour or the urban areas', or a blend of the two
	// (where an urban area's edge is smoothed).
	onLand := func(c color.RGBA) bool {
		within := func(v, a, b uint8) bool { return min(a, b) <= v && v <= max(a, b) }
		return within(c.R, land.R, urban.R) && within(c.G, land.G, urban.G) && within(c.B, land.B, urban.B) && c.A == 255
	}
	for _, p := range []struct {
		name     string
		lon, lat float64
		want     color.RGBA
	}{
		// Land at 1:10m, sea at 1:110m:
		{"Staten Island", -74.12, 40.58, land}, {"Staten Island, east", -74.10, 40.60, land},
		{"Brooklyn, Sunset Park", -74.00, 40.64, land}, {"Brooklyn", -73.98, 40.66, land},
		// Sea at 1:10m, land at 1:110m:
		{"the Upper Bay", -74.08, 40.66, sea},
		// Both:
		{"Staten Island, centre", -74.15, 40.585, land}, {"Queens", -73.80, 40.72, land},
		{"the Bronx", -73.87, 40.85, land}, {"the Lower Bay", -74.05, 40.52, sea},
	} {
		if got := at(p.lon, p.lat); (p.want == land && !onLand(got)) || (p.want != land && got != p.want) {
			t.Errorf("%s (%g, %g): %v, want %v", p.name, p.lon, p.lat, got, p.want)
		}
	}
	// New York is an urban area (1:50m), the middle of Staten Island's
	// greenbelt is not.
	if got := at(-73.98, 40.66); got != urban {
		t.Errorf("Brooklyn: %v, not the urban areas' %v", got, urban)
	}
	// No seam: across the land, no pixel of the sea's colour between two
	// of the land's, along a row through Brooklyn and Queens (their urban
	// area is drawn over the land: no seam through it either).
	y := int((merc(box[3]) - merc(40.70)) / (merc(box[3]) - merc(box[1])) * h)
	x0, x1 := int((-73.92-box[0])/(box[2]-box[0])*w), int((-73.75-box[0])/(box[2]-box[0])*w)
	for x := x0; x < x1; x++ {
		if c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA); !onLand(c) {
			t.Errorf("pixel %d,%d inside Queens is %v, not the land's %v nor the urban areas' %v", x, y, c, land, urban)
			break
		}
	}
}

// rgbOf is the opaque colour of 0xRRGGBB.
func rgbOf(c int) color.RGBA { return color.RGBA{uint8(c >> 16), uint8(c >> 8), uint8(c), 255} }

// TestMapImageHeatmap: a map's image draws a layer whose styles ask for a
// heatmap as one (the web application's colours: the densest place in the
// darkest of the layer's ramp), and its points' symbols when they ask for
// every point.
func TestMapImageHeatmap(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := strings.TrimPrefix(ts.createCSV("?title=few", nearPointsCSV(300, -60, -20)), "/datasets/")
	draw := func(density string) color.NRGBA {
		t.Helper()
		path := postMap(t, ts, "alice", map[string]any{"title": density, "basemap": "builtin",
			"layers": []any{map[string]any{"source": "finder:" + id, "opacity": 1,
				"styles": map[string]any{"type": "POINT", "density": density, "icon": map[string]any{"color": "0x2b8cbe"}}}}})
		// 0.1° a pixel: the points' tenth of a degree within a pixel or two.
		img := decodePNG(t, ts.get(path+".png?width=100&height=100&bbox=-65,-25,-55,-15&crs=EPSG:4326&basemap=none", "alice"))
		return color.NRGBAModel.Convert(img.At(50, 49)).(color.NRGBA)
	}
	densest := style.HeatRamp(0x2b8cbe)[4]
	want := [3]int{densest.Color >> 16, densest.Color >> 8 & 0xff, densest.Color & 0xff}
	if c := draw("heatmap"); !nearRGB([3]int{int(c.R), int(c.G), int(c.B)}, want, 3) || c.A < 230 {
		t.Errorf("the heatmap's densest pixel is %v, want %v", c, want)
	}
	if c := draw("none"); c != (color.NRGBA{0x2b, 0x8c, 0xbe, 0xff}) {
		t.Errorf("every point: the points' pixel is %v, want the icon's colour", c)
	}
}
