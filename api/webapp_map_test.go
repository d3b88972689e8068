package api_test

// The map page and the map editor in a real headless Chromium (see
// webapp_test.go): a choropleth of the North Carolina counties drawn with
// the API's classes (canvas pixels of each legend colour), its legend equal
// to GET /maps/{id}.json's classification, visibility toggles, popups from
// click templates, a temporal layer's slider, POINT and PROPORTIONAL
// layers; the editor making a map, changing its ramp and classes, reordering
// layers and saving through the API.

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/basemap"
)

// newMapBrowserTest starts a server holding the nc counties (uploaded by
// alice) and a Chromium on it; it returns the browser, the server and the
// counties' dataset id.
func newMapBrowserTest(t *testing.T) (*browserTest, *testServer, string) {
	t.Helper()
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	body, ct := multipartBody(t, ncFiles("dataset"), map[string]string{"title": "North Carolina counties", "tags": "nc, counties"})
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
	must(t, w, 201)
	id := regexp.MustCompile(`/datasets/(\d+)\.json$`).FindStringSubmatch(w.Header().Get("Location"))[1]
	return browserOn(t, ts), ts, id
}

// postMap creates a map as user from a JSON document and returns its path
// (/maps/<id>).
func postMap(t testing.TB, ts *testServer, user string, doc map[string]any) string {
	t.Helper()
	body, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	w := ts.do(req{method: "POST", path: "/maps.json", user: user, ctype: "application/json", body: body})
	must(t, w, 201)
	loc := w.Header().Get("Location")
	return "/maps/" + regexp.MustCompile(`/maps/(\d+)\.json$`).FindStringSubmatch(loc)[1]
}

// createChoroplethMap creates, as user, a map of one CHOROPLETH layer of
// dataset datasetID (the nc counties) classing BIR74 in 5 Quantile
// classes with the White-Red ramp, opaque so that the drawn pixels are the
// classes' colours, and a click template "County: $[NAME]". It returns the
// map's path (/maps/<id>).
func createChoroplethMap(t testing.TB, ts *testServer, user, datasetID string) string {
	t.Helper()
	return postMap(t, ts, user, map[string]any{"title": "Births 1974", "basemap": "Acetate", "description": "Births by county",
		"layers": []any{map[string]any{"source": "finder:" + datasetID, "title": "Births", "opacity": 1,
			"styles": map[string]any{"type": "CHOROPLETH", "click": "County: $[NAME]", "hover": "$[NAME]: $[BIR74] births",
				"stroke": map[string]any{"weight": 0.5, "color": "0x333333"},
				"fill": map[string]any{"selectedAttribute": "BIR74", "classificationType": "Quantile", "categories": 5,
					"colors": "White-Red", "opacity": 1}}}}})
}

// legendClass is one class of a layer's legend as the page shows it.
type legendClass struct {
	Lo, Hi float64
	Color  string
	Count  int64
}

// legendClasses reads the classes of layer i's legend on the map page (or
// the editor's preview): their breaks, colour (#rrggbb) and count.
func legendClasses(b *browserTest, i int) []legendClass {
	b.t.Helper()
	return eval[[]legendClass](b, fmt.Sprintf(`[...document.querySelectorAll('li.legend-layer[data-layer="%d"] li.class')].map(li => ({
		Lo: Number(li.dataset.lo), Hi: Number(li.dataset.hi), Color: li.dataset.color, Count: Number(li.dataset.count)}))`, i))
}

// apiClasses reads the classes GET /maps/{id}.json gives layer i, as
// legendClasses reads them.
func apiClasses(t *testing.T, ts *testServer, path, user string, i int) []legendClass {
	t.Helper()
	type classes struct {
		Classification *struct {
			Breaks []float64
			Counts []int64
			Colors []int
		}
	}
	doc := decode[struct {
		Layers []struct{ Styles struct{ Fill, Icon classes } }
	}](t, must(t, ts.get(path+".json", user), 200))
	cd := doc.Layers[i].Styles.Fill.Classification
	if cd == nil {
		cd = doc.Layers[i].Styles.Icon.Classification
	}
	if cd == nil {
		t.Fatalf("%s: layer %d has no classification", path, i)
	}
	var out []legendClass
	for k, n := range cd.Counts {
		out = append(out, legendClass{Lo: cd.Breaks[k], Hi: cd.Breaks[k+1], Color: fmt.Sprintf("#%06x", cd.Colors[k]), Count: n})
	}
	return out
}

// waitMap waits until the map page (or the editor's preview) has drawn.
func waitMap(b *browserTest) {
	b.t.Helper()
	b.wait("the map drawn", `document.getElementById('map') && document.getElementById('map').dataset.state === 'idle'`)
}

// redrawn waits for the map to draw again after a change on the page.
func redrawn(b *browserTest) {
	b.t.Helper()
	b.do("redraw", chromedp.Evaluate[chromedp.Void](`window.mcIdle = false; window.mcMap.once('idle', () => { window.mcIdle = true }); window.mcMap.triggerRepaint()`))
	b.wait("the map idle again", `window.mcIdle === true`)
}

// colorPixels counts the pixels of img within 3 of each colour (#rrggbb).
func colorPixels(img image.Image, colors []string) map[string]int {
	type rgb struct{ r, g, b int }
	want := map[string]rgb{}
	for _, c := range colors {
		var r, g, bl int
		fmt.Sscanf(c, "#%02x%02x%02x", &r, &g, &bl)
		want[c] = rgb{r, g, bl}
	}
	out := map[string]int{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			for c, w := range want {
				if abs(int(r>>8)-w.r) <= 3 && abs(int(g>>8)-w.g) <= 3 && abs(int(bl>>8)-w.b) <= 3 {
					out[c]++
				}
			}
		}
	}
	return out
}

// abs is the absolute value of x.
func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestWebMapPage draws a choropleth map of the counties and checks its
// pixels, its legend against the API, the visibility toggle and the click
// popup; then a map the visitor may not view.
func TestWebMapPage(t *testing.T) {
	b, ts, ds := newMapBrowserTest(t)
	path := createChoroplethMap(t, ts, "alice", ds)
	b.do("the map page", chromedp.Navigate(b.url+"/app"+path))
	waitMap(b)
	if got := eval[string](b, `document.getElementById('title').textContent`); got != "Births 1974" {
		t.Errorf("title %q", got)
	}

	// The legend's classes are the API's.
	want := apiClasses(t, ts, path, "", 0)
	got := legendClasses(b, 0)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("legend classes\n%v\nthe API's\n%v", got, want)
	}
	if len(want) != 5 {
		t.Errorf("%d classes, want 5", len(want))
	}

	// Each class's colour is drawn: the counties fill the canvas with them.
	var colors []string
	for _, c := range got {
		colors = append(colors, c.Color)
	}
	img := canvasImage(b, "map-choropleth-canvas")
	px := colorPixels(img, colors)
	total := img.Bounds().Dx() * img.Bounds().Dy()
	drawn := 0
	for _, c := range colors {
		if px[c] >= 300 {
			drawn++
		}
	}
	if drawn < 4 {
		t.Errorf("%d of the 5 legend colours cover 300 pixels or more: %v", drawn, px)
	}
	t.Logf("legend colours' pixels of %d: %v", total, px)
	b.screenshot("map-choropleth")

	// Hiding the layer with its checkbox (from the keyboard) removes its colours.
	b.do("hide the layer", chromedp.Focus(chromedp.ID("layer-0-visible")), chromedp.KeyEvent(" "))
	if eval[bool](b, `document.getElementById('layer-0-visible').checked`) {
		t.Fatal("the checkbox is still checked after Space")
	}
	redrawn(b)
	hidden := colorPixels(canvasImage(b, "map-hidden-canvas"), colors)
	for c, n := range hidden {
		if n > 50 {
			t.Errorf("hidden layer: colour %s still on %d pixels", c, n)
		}
	}
	b.do("show the layer", chromedp.Click(chromedp.ID("layer-0-visible")))
	redrawn(b)

	// The click template: the county's name in a popup, as text.
	rect := eval[[]float64](b, `(() => { const r = document.querySelector('#map canvas').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	b.do("click a county", chromedp.MouseClickXY(rect[0]+rect[2]/2, rect[1]+rect[3]/2))
	b.wait("a popup", `document.querySelector('.maplibregl-popup .popup-text') !== null`)
	popup := eval[string](b, `document.querySelector('.maplibregl-popup:not(.hover-tip) .popup-text').textContent`)
	if !regexp.MustCompile(`^County: [A-Z][a-z]+`).MatchString(popup) {
		t.Errorf("popup %q, want County: <name>", popup)
	}
	b.screenshot("map-popup")

	// The hover template: the county and its births, as text, where the
	// pointer is.
	b.do("hover a county", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, rect[0]+rect[2]/2+40, rect[1]+rect[3]/2+10))
	b.wait("a hover tip", `document.querySelector('.hover-tip .popup-text') !== null`)
	if got := eval[string](b, `document.querySelector('.hover-tip .popup-text').textContent`); !regexp.MustCompile(`^[A-Z][a-z]+: \d+ births$`).MatchString(got) {
		t.Errorf("hover %q, want <county>: <births> births", got)
	}

	// The same map from the vector tiles (what datasets over 5,000
	// features use): the same colours.
	b.do("the tiled map", chromedp.Navigate(b.url+"/app"+path+"?tiles=1"))
	waitMap(b)
	if b.tiles.Load() == 0 {
		t.Error("?tiles=1: no vector tile asked for")
	}
	px = colorPixels(canvasImage(b, "map-tiles-canvas"), colors)
	drawn = 0
	for _, c := range colors {
		if px[c] >= 300 {
			drawn++
		}
	}
	if drawn < 4 {
		t.Errorf("from the tiles, %d of the 5 legend colours cover 300 pixels or more: %v", drawn, px)
	}
	checkNoProblems(b)

	// A map naming a configured basemap of another site (here another
	// port): the page's policy lets its tiles in, and they are drawn.
	var tileHits atomic.Int64
	tiles := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tileHits.Add(1)
		img := image.NewRGBA(image.Rect(0, 0, 256, 256))
		draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{0x7b, 0x2d, 0x8e, 0xff}}, image.Point{}, draw.Src)
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		png.Encode(w, img)
	}))
	t.Cleanup(tiles.Close)
	other, err := basemap.ParseRaster("other=" + tiles.URL + "/{z}/{x}/{y}.png")
	if err != nil {
		t.Fatal(err)
	}
	withOther := newServer(t, func(c *api.Config) { c.BaseURL = ""; c.Basemaps = []basemap.Raster{other} })
	if csp := withOther.get("/", "").Header().Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self' data: blob: "+tiles.URL+";") ||
		!strings.Contains(csp, "connect-src 'self' "+tiles.URL+";") {
		t.Errorf("the policy does not let the basemap's tiles in: %s", csp)
	}
	om := postMap(t, withOther, "alice", map[string]any{"title": "On other tiles", "basemap": "other"})
	b3 := browserOn(t, withOther)
	b3.do("a map on other tiles", chromedp.Navigate(b3.url+"/app"+om))
	waitMap(b3)
	if got := eval[string](b3, `document.getElementById('map-status').textContent`); got != "" {
		t.Errorf("map status %q", got)
	}
	if px := colorPixels(canvasImage(b3, "basemap-other-canvas"), []string{"#7b2d8e"}); px["#7b2d8e"] < 10000 || tileHits.Load() == 0 {
		t.Errorf("the other site's tiles: %d requests, %d pixels of their colour", tileHits.Load(), px["#7b2d8e"])
	}
	checkNoProblems(b3)

	// A private map (an appliance's): "not found", as the API answers.
	priv := newServer(t, func(c *api.Config) { c.BaseURL = ""; c.Mode = mapcommons.ModeAppliance })
	mp := postMap(t, priv, "alice", map[string]any{"title": "Secret", "basemap": "Acetate"})
	b2 := browserOn(t, priv)
	b2.do("a private map", chromedp.Navigate(b2.url+"/app"+mp))
	b2.wait("not found", `document.getElementById('title').textContent === 'Map not found'`)
	if got := eval[string](b2, `document.getElementById('map-status').textContent`); !strings.Contains(got, "not shared with you") {
		t.Errorf("private map status %q", got)
	}
	if eval[string](b2, `document.body.textContent`); strings.Contains(eval[string](b2, `document.body.textContent`), "Secret") {
		t.Error("the private map's title shows")
	}
	b2.screenshot("map-not-found")
}

// renderedNames are the "name" (or NAME) attributes of the features drawn
// on the map page, sorted and without repeats.
func renderedNames(b *browserTest) []string {
	b.t.Helper()
	return eval[[]string](b, `[...new Set(window.mcMap.queryRenderedFeatures().filter(f => f.layer.id.startsWith('mc')).map(f => f.properties.name || f.properties.NAME).filter(Boolean))].sort()`)
}

// TestWebMapLayerTypes draws a temporal POINT layer whose slider changes
// the drawn points, and a PROPORTIONAL layer of the counties' births.
func TestWebMapLayerTypes(t *testing.T) {
	b, ts, ds := newMapBrowserTest(t)
	places := strings.TrimPrefix(ts.createCSV("?title=Events", "name,when,pop,lat,lon\n"+
		"a,2010-01-01T00:00:00Z,10,35.5,-80\nb,2010-01-02T00:00:00Z,20,35.5,-79\nc,2010-01-03T00:00:00Z,30,35.5,-78\nd,2010-01-04T00:00:00Z,40,35.5,-77\n"), "/datasets/")
	path := postMap(t, ts, "alice", map[string]any{"title": "Events", "basemap": "Acetate", "extent": []float64{-81, 34.5, -76, 36.5},
		"layers": []any{map[string]any{"source": "finder:" + places, "title": "Events",
			"styles": map[string]any{"type": "POINT", "icon": map[string]any{"symbol": "square", "color": "0x00AA00", "size": 2},
				"temporal": map[string]any{"attributes": []string{"when"}}, "slider": 86400000,
				"timeline": map[string]any{"begin": "20100101T00:00:00Z", "end": "20100105T00:00:00Z"}}}}})
	b.do("the temporal map", chromedp.Navigate(b.url+"/app"+path))
	waitMap(b)
	// The slider starts at the timeline's end: the last day's point.
	if got := fmt.Sprint(renderedNames(b)); got != "[d]" {
		t.Errorf("at the end of the timeline: %s drawn, want [d]", got)
	}
	if n := colorPixels(canvasImage(b, "map-temporal-canvas"), []string{"#00aa00"})["#00aa00"]; n < 20 {
		t.Errorf("the point's square covers %d pixels", n)
	}
	b.screenshot("map-temporal")
	// Noon on the 2nd: the window (a day) holds b only.
	b.do("move the slider", chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('layer-0-time');
		s.value = String(Date.UTC(2010, 0, 2, 12)); s.dispatchEvent(new Event('input')); })()`))
	redrawn(b)
	if got := fmt.Sprint(renderedNames(b)); got != "[b]" {
		t.Errorf("on 2 January at noon: %s drawn, want [b]", got)
	}
	if got := eval[string](b, `document.querySelector('#legend .time-label').textContent`); got != "2010-01-02 12:00 UTC" {
		t.Errorf("slider label %q", got)
	}
	// From the keyboard: the slider is a labelled range.
	if got := eval[string](b, `document.querySelector('label[for="layer-0-time"]').textContent`); got == "" {
		t.Error("the time slider has no label")
	}

	// PROPORTIONAL: a circle on each county sized by its births.
	path = postMap(t, ts, "alice", map[string]any{"title": "Births", "basemap": "Acetate",
		"layers": []any{map[string]any{"source": "finder:" + ds, "title": "Births",
			"styles": map[string]any{"type": "PROPORTIONAL", "icon": map[string]any{"selectedAttribute": "BIR74", "color": "0x7700CC", "symbol": "propCircle"}}}}})
	b.do("the proportional map", chromedp.Navigate(b.url+"/app"+path))
	waitMap(b)
	if n := len(renderedNames(b)); n != 100 {
		t.Errorf("%d counties drawn, want 100", n)
	}
	if n := colorPixels(canvasImage(b, "map-proportional-canvas"), []string{"#7700cc"})["#7700cc"]; n < 500 {
		t.Errorf("the proportional circles cover %d pixels", n)
	}
	b.screenshot("map-proportional")

	// GRADUATED symbols coloured by class, and url: layers: one of this
	// server drawn, one of another site said to be not shown.
	path = postMap(t, ts, "alice", map[string]any{"title": "Sources", "basemap": "Acetate",
		"layers": []any{
			map[string]any{"source": "url:" + b.url + "/datasets/" + places + "/features.json?geojson=1", "title": "Events here",
				"styles": map[string]any{"type": "POINT", "icon": map[string]any{"symbol": "xPointIcon", "color": "0x0000FF", "size": 3}}},
			map[string]any{"source": "url:https://elsewhere.example/data.geojson", "title": "Elsewhere"},
			map[string]any{"source": "finder:" + ds, "title": "Graduated", "styles": map[string]any{"type": "GRADUATED",
				"fill": map[string]any{"selectedAttribute": "SID74", "colors": "White-Green", "categories": 3}}}}})
	b.do("the url: map", chromedp.Navigate(b.url+"/app"+path))
	waitMap(b)
	img := canvasImage(b, "map-sources-canvas")
	if n := colorPixels(img, []string{"#0000ff"})["#0000ff"]; n < 20 {
		t.Errorf("the url: layer's crosses cover %d pixels", n)
	}
	grad := legendClasses(b, 2)
	if fmt.Sprint(grad) != fmt.Sprint(apiClasses(t, ts, path, "", 2)) || len(grad) != 3 {
		t.Errorf("graduated legend %v", grad)
	}
	px := colorPixels(img, []string{grad[0].Color, grad[2].Color})
	if px[grad[0].Color] < 20 || px[grad[2].Color] < 20 {
		t.Errorf("the graduated symbols' class colours: %v", px)
	}
	if got := eval[string](b, `document.querySelector('li.legend-layer[data-layer="1"] .note').textContent`); !strings.Contains(got, "cannot be shown") || !strings.Contains(got, "elsewhere.example") {
		t.Errorf("the other site's layer: %q", got)
	}
	b.screenshot("map-sources")
	// At phone width the page does not scroll sideways.
	b.do("phone width", chromedp.EmulateViewport(390, 844))
	b.wait("the page laid out", `document.documentElement.scrollWidth <= window.innerWidth`)
	b.screenshot("map-phone")
	checkNoProblems(b)
}

// TestMapEditorRoutes checks what the editor reads beside the map routes:
// the named colour ramps, and a layer's preview, which classes as the map
// would once saved and stores nothing.
func TestMapEditorRoutes(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ramps := decode[[]struct {
		Name  string
		Ramps [][]int
	}](t, must(t, ts.get("/ramps.json", ""), 200))
	if len(ramps) != 22 || ramps[0].Name != "Diverging" {
		t.Fatalf("%d ramp families, first %v", len(ramps), ramps[0])
	}
	for _, r := range ramps {
		for i, colors := range r.Ramps {
			if len(colors) != i+2 {
				t.Errorf("%s: ramp %d has %d colours", r.Name, i, len(colors))
			}
		}
		if r.Name == "White-Red" && fmt.Sprintf("%X", r.Ramps[3]) != "[FEE5D9 FCAE91 FB6A4A DE2D26 A50F15]" {
			t.Errorf("White-Red of 5: %X", r.Ramps[3])
		}
	}
	errorOf(t, ts.get("/ramps.csv", ""), 404, "not_found", "use .json")
	errorOf(t, ts.do(req{method: "POST", path: "/ramps.json", user: "alice"}), 405, "method_not_allowed", "POST")

	body, ct := multipartBody(t, ncFiles("dataset"), nil)
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
	must(t, w, 201)
	ds := regexp.MustCompile(`/datasets/(\d+)\.json$`).FindStringSubmatch(w.Header().Get("Location"))[1]
	path := postMap(t, ts, "alice", map[string]any{"title": "Preview", "basemap": "Acetate"})
	layer := map[string]any{"source": "finder:" + ds, "styles": map[string]any{"type": "CHOROPLETH",
		"fill": map[string]any{"selectedAttribute": "AREA", "classificationType": "Natural Breaks", "categories": 4, "colors": "Blue-White"}}}
	lb, _ := json.Marshal(layer)
	preview := func(user string, b []byte) *httptest.ResponseRecorder {
		return ts.do(req{method: "POST", path: path + "/preview.json", user: user, ctype: "application/json", body: b})
	}
	got := decode[map[string]any](t, must(t, preview("alice", lb), 200))
	fill := got["styles"].(map[string]any)["fill"].(map[string]any)
	if fill["ramp"] != "Blue-White" || len(fill["colors"].([]any)) != 4 || fill["classification"] == nil {
		t.Fatalf("preview fill %v", fill)
	}
	if doc := mapDoc(t, ts, path, "alice"); len(doc["layers"].([]any)) != 0 {
		t.Fatalf("the preview stored a layer: %v", doc["layers"])
	}
	// Saved, the layer has the classes the preview showed.
	mb, _ := json.Marshal(map[string]any{"layers": []any{layer}})
	must(t, ts.do(req{method: "PUT", path: path + ".json", user: "alice", ctype: "application/json", body: mb}), 200)
	saved := mapDoc(t, ts, path, "alice")["layers"].([]any)[0].(map[string]any)["styles"].(map[string]any)["fill"].(map[string]any)
	if fmt.Sprint(saved["classification"]) != fmt.Sprint(fill["classification"]) {
		t.Errorf("saved classes %v, previewed %v", saved["classification"], fill["classification"])
	}
	// Only those who may edit the map preview; a bad layer is a 400.
	errorOf(t, preview("", lb), 401, "unauthorized", "")
	if w := preview("bob", lb); w.Code != 403 && w.Code != 404 {
		t.Errorf("bob's preview: %d %s", w.Code, w.Body)
	}
	bad, _ := json.Marshal(map[string]any{"source": "finder:" + ds, "styles": map[string]any{"type": "CHOROPLETH", "fill": map[string]any{"selectedAttribute": "NAME"}}})
	errorOf(t, preview("alice", bad), 400, "invalid", "not numeric")
}

// editorIdle waits until the editor has previewed and drawn its last change.
func editorIdle(b *browserTest) {
	b.t.Helper()
	b.wait("the editor idle", `!document.getElementById('editor').dataset.busy && document.getElementById('map').dataset.state === 'idle'`)
}

// TestWebMapEditor makes a map in the editor: a choropleth layer found by
// search, its ramp and number of classes changed with the preview's legend
// the API's, saved; then a second layer, the order changed and saved.
func TestWebMapEditor(t *testing.T) {
	b, ts, ds := newMapBrowserTest(t)
	places := strings.TrimPrefix(ts.createCSV("?title=Towns&tags=towns", "name,pop,lat,lon\na,10,35.5,-80\nb,20,35.9,-79\n"), "/datasets/")
	b.do("the editor", chromedp.Navigate(b.url+"/app/editor"))
	b.wait("signed out", `document.getElementById('editor-status').textContent.includes('Sign in')`)
	signInViaAPI(b, "alice", "secret1")
	b.do("the editor", chromedp.Navigate(b.url+"/app/editor"))
	b.wait("the form", `!document.getElementById('editor').hidden && document.getElementById('map-basemap').options.length > 0`)
	b.screenshot("editor-new")

	// A new map.
	b.do("create", chromedp.SendKeys(chromedp.ID("map-title"), "Made in the editor"),
		chromedp.SendKeys(chromedp.ID("map-description"), "Births by county"),
		chromedp.Click(chromedp.ID("save")))
	b.wait("the map made", `/^\/app\/maps\/\d+\/edit$/.test(location.pathname) && document.getElementById('map').dataset.state === 'idle'`)
	path := strings.TrimSuffix(strings.TrimPrefix(eval[string](b, `location.pathname`), "/app"), "/edit")
	if doc := mapDoc(t, ts, path, "alice"); doc["title"] != "Made in the editor" || doc["description"] != "Births by county" || doc["basemap"] != "builtin" {
		t.Errorf("the map made: %v %v %v", doc["title"], doc["description"], doc["basemap"])
	}

	// A layer found by search, styled as a choropleth of BIR74.
	b.do("search", chromedp.SendKeys(chromedp.ID("add-q"), "counties\n"))
	b.wait("found", `document.querySelector('#add-results button[data-dataset="`+ds+`"]') !== null`)
	b.do("add", chromedp.Click(chromedp.CSS(`#add-results button[data-dataset="`+ds+`"]`)))
	b.wait("the layer added", `document.querySelectorAll('#legend li.legend-layer').length === 1 && document.getElementById('style-attribute') !== null`)
	editorIdle(b)
	setField(b, "#style-type", "CHOROPLETH")
	editorIdle(b)
	setField(b, "#style-attribute", "BIR74")
	editorIdle(b)
	b.wait("classes", `document.querySelectorAll('#legend li.class').length === 5`)
	// The ramp and the number of classes.
	b.do("pick White-Red", chromedp.Click(chromedp.CSS(`input[name=ramp][value="White-Red"]`)))
	editorIdle(b)
	setField(b, "#style-classes", "4")
	editorIdle(b)
	b.wait("four red classes", `document.querySelectorAll('#legend li.class').length === 4 && document.querySelector('#legend li.class').dataset.color === '#fee5d9'`)
	setField(b, "#style-method", "Quantile")
	editorIdle(b)
	setField(b, "#style-fill-opacity", "1")
	editorIdle(b)
	// Manual breaks, previewed, then back to quantiles.
	setField(b, "#style-method", "Manual")
	editorIdle(b)
	setField(b, "#style-breaks", "0, 2000, 5000, 30000")
	editorIdle(b)
	if got := fmt.Sprint(legendClasses(b, 0)); !strings.HasPrefix(got, "[{0 2000 #fee0d2 ") || !strings.Contains(got, "{5000 30000 #de2d26 ") {
		t.Errorf("manual classes %s", got)
	}
	setField(b, "#style-method", "Quantile")
	editorIdle(b)
	setField(b, "#style-classes", "4")
	editorIdle(b)
	b.wait("quantiles", `document.querySelector('#legend li.class').dataset.count === '25'`)
	// Every control of the editor has a label.
	if n := eval[int](b, `[...document.querySelectorAll('#editor input, #editor select, #editor textarea')].filter(c => !c.labels || c.labels.length === 0).length`); n != 0 {
		t.Errorf("%d controls without a label", n)
	}
	preview := legendClasses(b, 0)
	b.screenshot("editor-choropleth")
	b.do("save", chromedp.Click(chromedp.ID("save")))
	b.wait("saved", `document.getElementById('editor-status').textContent === 'Saved.'`)

	// The API holds the settings, and its classes are the preview's.
	doc := mapDoc(t, ts, path, "alice")
	l0 := doc["layers"].([]any)[0].(map[string]any)
	fill := l0["styles"].(map[string]any)["fill"].(map[string]any)
	if l0["source"] != "finder:"+ds || fill["ramp"] != "White-Red" || fill["categories"] != 4.0 || fill["selectedAttribute"] != "BIR74" || fill["classificationType"] != "Quantile" {
		t.Errorf("saved layer %v fill %v", l0["source"], fill)
	}
	if want := apiClasses(t, ts, path, "alice", 0); fmt.Sprint(preview) != fmt.Sprint(want) || fmt.Sprint(legendClasses(b, 0)) != fmt.Sprint(want) {
		t.Errorf("preview legend %v, after saving %v, the API's %v", preview, legendClasses(b, 0), want)
	}
	img := canvasImage(b, "editor-canvas")
	px := colorPixels(img, []string{preview[0].Color, preview[3].Color})
	if px[preview[0].Color] < 300 || px[preview[3].Color] < 300 {
		t.Errorf("the preview draws the classes' colours on few pixels: %v", px)
	}

	// A second layer, on top; moved below the counties; saved.
	b.do("search towns", chromedp.Evaluate[chromedp.Void](`document.getElementById('add-q').value = ''`),
		chromedp.SendKeys(chromedp.ID("add-q"), "towns\n"))
	b.wait("towns found", `document.querySelector('#add-results button[data-dataset="`+places+`"]') !== null`)
	b.do("add towns", chromedp.Click(chromedp.CSS(`#add-results button[data-dataset="`+places+`"]`)))
	b.wait("two layers", `document.querySelectorAll('#legend li.legend-layer').length === 2`)
	// The towns are points: their density may be chosen (the counties'
	// could not), labelled; a heatmap is previewed with its legend's note.
	b.wait("the towns' density", `document.getElementById('style-density') !== null`)
	if got := eval[string](b, `document.getElementById('style-density').labels[0]?.textContent + ': ' + [...document.getElementById('style-density').options].map(o => o.textContent).join(', ')`); got != "Point density: Automatic, Clusters, Heatmap, Every point" {
		t.Errorf("the density control: %q", got)
	}
	setField(b, "#style-density", "heatmap")
	editorIdle(b)
	b.wait("the heatmap previewed", `document.querySelector('#legend li.legend-layer[data-layer="0"] .density')?.textContent === 'Heatmap: colour shows where points are dense.' &&
		window.mcMap.getStyle().layers.some(l => l.type === 'heatmap')`)
	if got := eval[string](b, `document.querySelector('#layers li').dataset.source`); got != "finder:"+places {
		t.Errorf("the new layer is %s, want it first", got)
	}
	// From the keyboard: focus the first layer's Down button and press Enter.
	b.do("move down", chromedp.Focus(chromedp.ID("layer-0-down")), chromedp.KeyEvent("\r"))
	b.wait("moved", `document.querySelector('#layers li').dataset.source === 'finder:`+ds+`'`)
	if got := eval[string](b, `document.activeElement.id`); got != "layer-1-up" {
		t.Errorf("after the move the focus is on %q, want layer-1-up", got)
	}
	b.do("save", chromedp.Click(chromedp.ID("save")))
	b.wait("saved", `document.getElementById('editor-status').textContent === 'Saved.'`)
	var sources []string
	for _, l := range mapDoc(t, ts, path, "alice")["layers"].([]any) {
		sources = append(sources, l.(map[string]any)["source"].(string))
	}
	if fmt.Sprint(sources) != fmt.Sprint([]string{"finder:" + ds, "finder:" + places}) {
		t.Errorf("saved order %v", sources)
	}
	if d := mapDoc(t, ts, path, "alice")["layers"].([]any)[1].(map[string]any)["styles"].(map[string]any)["density"]; d != "heatmap" {
		t.Errorf("the towns' density saved: %v", d)
	}
	if fill := mapDoc(t, ts, path, "alice")["layers"].([]any)[0].(map[string]any)["styles"].(map[string]any)["fill"].(map[string]any); fill["ramp"] != "White-Red" {
		t.Errorf("after the reorder the counties' ramp is %v", fill["ramp"])
	}
	b.screenshot("editor-two-layers")
	b.do("phone width", chromedp.EmulateViewport(390, 844))
	b.wait("the editor laid out", `document.documentElement.scrollWidth <= window.innerWidth`)
	b.screenshot("editor-phone")
	b.do("desktop width", chromedp.EmulateViewport(1280, 800))

	// The map page shows what was saved.
	b.do("the map page", chromedp.Navigate(b.url+"/app"+path))
	waitMap(b)
	if got := legendClasses(b, 0); fmt.Sprint(got) != fmt.Sprint(apiClasses(t, ts, path, "", 0)) {
		t.Errorf("map page legend %v", got)
	}
	b.screenshot("editor-result-map")
	checkNoProblems(b)
}

// checkBasemapDrawn checks the built-in basemap is drawn: the map's canvas
// holds more than one colour.
func (b *browserTest) checkBasemapDrawn() {
	b.t.Helper()
	img := canvasImage(b, "basemap-canvas")
	seen := map[[3]uint32]bool{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 7 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	if len(seen) < 3 {
		b.t.Errorf("the basemap draws %d colours", len(seen))
	}
}
