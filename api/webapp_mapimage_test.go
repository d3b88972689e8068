package api_test

// The same map drawn twice: by MapLibre on the web application's map page
// (headless Chromium, see webapp_test.go) and by the server's renderer
// (GET /maps/{id}.png over the box the page shows, at its size), compared
// county by county at a point well inside each.

import (
	"fmt"
	"image/color"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// imageTolerance is how far (per 8-bit channel) the server's pixel may be
// from the browser's inside a county. Both draw the class colour opaque
// (layer and fill opacity 1) with no antialiasing inside a polygon, so the
// colours should be equal; 2 allows for a GPU's rounding of a colour
// through floats (SwiftShader here), not for another colour: the nearest
// two classes of the White-Red ramp differ by far more.
const imageTolerance = 2

// insideMargin is how many pixels from every edge of its county a sampled
// point must be: the 0.5-pixel outline and the antialiased edge stay away.
const insideMargin = 4.0

// TestWebMapImageMatchesBrowser draws the choropleth of the nc counties on
// the map page and asks the server for the same box at the page's size:
// at a point well inside every county big enough at that zoom, both show
// the colour of the county's class.
func TestWebMapImageMatchesBrowser(t *testing.T) {
	b, ts, ds := newMapBrowserTest(t)
	// Layer and fill opacity 1: the fills hide the basemap in both.
	path := createChoroplethMap(t, ts, "alice", ds)
	b.do("the map page", chromedp.Navigate(b.url+"/app"+path))
	waitMap(b)
	compareWithServer(t, b, ts, path, ds, "map-vs-server")
	// On a HiDPI screen: the server's image at scale 2.
	b.do("HiDPI", chromedp.EmulateViewport(1280, 800, chromedp.EmulateScale(2)), chromedp.Navigate(b.url+"/app"+path))
	waitMap(b)
	compareWithServer(t, b, ts, path, ds, "map-vs-server-2x")
	checkNoProblems(b)
}

// compareWithServer compares the map the page shows (map path, of the
// counties of dataset ds) with the server's image of the same box at the
// same size and pixel ratio, inside every county; name names the images
// kept among the artefacts.
func compareWithServer(t *testing.T, b *browserTest, ts *testServer, path, ds, name string) {
	t.Helper()
	// What the page shows: the box, its size in CSS pixels, the pixel ratio.
	view := eval[struct {
		Bounds        [2][2]float64
		Width, Height int
		Ratio         float64
		CanvasW       int
		CanvasH       int
	}](b, `(() => { const m = window.mcMap, c = m.getCanvas();
		return {Bounds: m.getBounds().toArray(), Width: c.clientWidth, Height: c.clientHeight, Ratio: window.devicePixelRatio,
			CanvasW: c.width, CanvasH: c.height}; })()`)
	shot := canvasImage(b, name+"-browser")
	if sb := shot.Bounds(); sb.Dx() != view.CanvasW || sb.Dy() != view.CanvasH {
		t.Fatalf("canvas %v, page says %dx%d", sb, view.CanvasW, view.CanvasH)
	}
	west, south, east, north := view.Bounds[0][0], view.Bounds[0][1], view.Bounds[1][0], view.Bounds[1][1]
	q := url.Values{
		"bbox":   {fmt.Sprintf("%.10f,%.10f,%.10f,%.10f", west, south, east, north)},
		"width":  {strconv.Itoa(view.Width)},
		"height": {strconv.Itoa(view.Height)},
		"crs":    {"EPSG:3857"},
	}
	if view.Ratio != 1 {
		q.Set("scale", strconv.FormatFloat(view.Ratio, 'g', -1, 64))
	}
	w := ts.get(path+".png?"+q.Encode(), "")
	server := decodePNG(t, w)
	if err := os.WriteFile(filepath.Join(b.artefacts, name+"-server.png"), w.Body.Bytes(), 0o644); err != nil {
		t.Error(err)
	}
	if sb, bb := server.Bounds(), shot.Bounds(); sb != bb {
		t.Fatalf("the server's image is %v, the browser's canvas %v", sb, bb)
	}
	cw, ch := float64(view.CanvasW), float64(view.CanvasH)
	mercY := func(lat float64) float64 { return math.Log(math.Tan(math.Pi/4 + lat*math.Pi/360)) }
	y0, y1 := mercY(south), mercY(north)
	pixel := func(lon, lat float64) (float64, float64) {
		return (lon - west) / (east - west) * cw, (y1 - mercY(lat)) / (y1 - y0) * ch
	}

	// The classes, and each county's value.
	classes := apiClasses(t, ts, path, "", 0)
	fc := decode[geoJSONFeatures](t, must(t, ts.get("/datasets/"+ds+"/features.json?geojson=1&limit=1000", ""), 200))
	if len(fc.Features) != 100 {
		t.Fatalf("%d counties", len(fc.Features))
	}

	compared, skipped, maxDiff, shallowest := 0, 0, [3]int{}, math.Inf(1)
	for _, f := range fc.Features {
		name, _ := f.Properties["NAME"].(string)
		rings := geoJSONRings(t, f.Geometry.Type, f.Geometry.Coordinates)
		var px [][][2]float64
		for _, r := range rings {
			var pr [][2]float64
			for _, c := range r {
				x, y := pixel(c[0], c[1])
				pr = append(pr, [2]float64{x, y})
			}
			px = append(px, pr)
		}
		x, y, d := innermostPixel(px, view.CanvasW, view.CanvasH)
		if d < insideMargin*view.Ratio {
			skipped++
			continue
		}
		shallowest = min(shallowest, d)
		compared++
		br, bg, bb, _ := shot.At(x, y).RGBA()
		browser := [3]int{int(br >> 8), int(bg >> 8), int(bb >> 8)}
		sc := color.NRGBAModel.Convert(server.At(x, y)).(color.NRGBA)
		got := [3]int{int(sc.R), int(sc.G), int(sc.B)}
		if sc.A < 253 {
			t.Errorf("%s at (%d,%d): the server's fill is not opaque (alpha %d)", name, x, y, sc.A)
		}
		for c := range 3 {
			maxDiff[c] = max(maxDiff[c], abs(got[c]-browser[c]))
		}
		if !nearRGB(got, browser, imageTolerance) {
			t.Errorf("%s at (%d,%d): the server draws #%02x%02x%02x, the browser #%02x%02x%02x", name, x, y,
				got[0], got[1], got[2], browser[0], browser[1], browser[2])
		}
		// Both are the colour of the county's class (a value on a break
		// may be in either class beside it).
		v, _ := f.Properties["BIR74"].(float64)
		ok := false
		for _, cl := range classes {
			if v >= cl.Lo && v <= cl.Hi && nearRGB(browser, hexRGB(cl.Color), imageTolerance) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s (BIR74 %v) at (%d,%d): the browser draws #%02x%02x%02x, no colour of its class %v", name, v, x, y,
				browser[0], browser[1], browser[2], classes)
		}
	}
	t.Logf("%s: %d counties compared (at %.1f device pixels from their edges at least), %d too small at this zoom (%dx%d, ratio %g); largest difference per channel (r, g, b): %v",
		name, compared, shallowest, skipped, view.Width, view.Height, view.Ratio, maxDiff)
	if compared < 60 {
		t.Errorf("%s: only %d of the 100 counties compared", name, compared)
	}
}

// nearRGB tells whether colours a and b are within tol on every channel.
func nearRGB(a, b [3]int, tol int) bool {
	return abs(a[0]-b[0]) <= tol && abs(a[1]-b[1]) <= tol && abs(a[2]-b[2]) <= tol
}

// hexRGB reads #rrggbb.
func hexRGB(s string) [3]int {
	var c [3]int
	fmt.Sscanf(s, "#%02x%02x%02x", &c[0], &c[1], &c[2])
	return c
}

// geoJSONRings are the rings of a GeoJSON Polygon or MultiPolygon, every
// part's, as lon/lat pairs.
func geoJSONRings(t *testing.T, typ string, coords any) [][][2]float64 {
	t.Helper()
	ring := func(v any) [][2]float64 {
		var r [][2]float64
		for _, p := range v.([]any) {
			xy := p.([]any)
			r = append(r, [2]float64{xy[0].(float64), xy[1].(float64)})
		}
		return r
	}
	var out [][][2]float64
	switch typ {
	case "Polygon":
		for _, r := range coords.([]any) {
			out = append(out, ring(r))
		}
	case "MultiPolygon":
		for _, p := range coords.([]any) {
			for _, r := range p.([]any) {
				out = append(out, ring(r))
			}
		}
	default:
		t.Fatalf("a county of type %s", typ)
	}
	return out
}

// innermostPixel is the pixel of a w×h image whose centre is inside the
// rings (even-odd) and farthest from any of their edges (a pole of
// inaccessibility on the pixel grid), and that distance (0 when no pixel
// centre is inside).
func innermostPixel(rings [][][2]float64, w, h int) (int, int, float64) {
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, r := range rings {
		for _, p := range r {
			minX, maxX = min(minX, p[0]), max(maxX, p[0])
			minY, maxY = min(minY, p[1]), max(maxY, p[1])
		}
	}
	bx, by, best := 0, 0, 0.0
	for y := max(0, int(minY)); y <= min(h-1, int(maxY)); y++ {
		for x := max(0, int(minX)); x <= min(w-1, int(maxX)); x++ {
			cx, cy := float64(x)+0.5, float64(y)+0.5
			// Away from the image's edges too.
			d := min(cx, cy, float64(w)-cx, float64(h)-cy)
			if d <= best {
				continue
			}
			inside := false
			for _, r := range rings {
				for i, j := 0, len(r)-1; i < len(r); j, i = i, i+1 {
					a, b := r[i], r[j]
					if (a[1] > cy) != (b[1] > cy) && cx < (b[0]-a[0])*(cy-a[1])/(b[1]-a[1])+a[0] {
						inside = !inside
					}
					d = min(d, segmentDistance(cx, cy, a, b))
				}
			}
			if inside && d > best {
				bx, by, best = x, y, d
			}
		}
	}
	return bx, by, best
}

// segmentDistance is the distance from (x, y) to the segment a–b.
func segmentDistance(x, y float64, a, b [2]float64) float64 {
	dx, dy := b[0]-a[0], b[1]-a[1]
	t := 0.0
	if l := dx*dx + dy*dy; l > 0 {
		t = max(0, min(1, ((x-a[0])*dx+(y-a[1])*dy)/l))
	}
	return math.Hypot(x-a[0]-t*dx, y-a[1]-t*dy)
}

// geoJSONFeatures is a GeoJSON answer as the pixel tests read it: each
// feature's properties and geometry.
type geoJSONFeatures struct {
	Features []struct {
		Properties map[string]any
		Geometry   struct {
			Type        string
			Coordinates any
		}
	}
}
