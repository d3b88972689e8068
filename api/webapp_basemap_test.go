package api_test

import (
	"fmt"
	"image"
	"math"
	"regexp"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"mapcommons/api"
)

// TestWebBasemapCityScale maps the five boroughs of New York (nybb, NYC
// Department of City Planning) and looks at the map page at city scale
// (zoom 11), the boroughs' layer hidden: the built-in basemap draws land,
// not sea, at nine in ten pixels well inside every borough (the 1:110m
// countries put much of Staten Island, Brooklyn and Queens in the sea;
// the 1:10m land does not), and sea in the harbour between them.
func TestWebBasemapCityScale(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	body, ct := multipartBody(t, map[string]string{"dataset[zip]": realData + "nybb_16a.zip"}, map[string]string{"title": "NYC boroughs"})
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
	must(t, w, 201)
	ds := regexp.MustCompile(`/datasets/(\d+)\.json$`).FindStringSubmatch(w.Header().Get("Location"))[1]
	b := browserOn(t, ts)
	path := postMap(t, ts, "alice", map[string]any{"title": "Boroughs", "basemap": "builtin",
		"layers": []any{map[string]any{"source": "finder:" + ds, "title": "Boroughs", "opacity": 1}}})
	b.do("the map page", chromedp.Navigate(b.url+"/app"+path))
	waitMap(b)
	fc := decode[geoJSONFeatures](t, must(t, ts.get("/datasets/"+ds+"/features.json?geojson=1&limit=10", ""), 200))
	if len(fc.Features) != 5 {
		t.Fatalf("%d boroughs", len(fc.Features))
	}
	land, sea, coast := [3]int{0xf2, 0xef, 0xe6}, [3]int{0xa8, 0xcc, 0xe0}, [3]int{0x86, 0xad, 0xc4}
	rgbAt := func(img image.Image, x, y int) [3]int {
		r, g, bl, _ := img.At(x, y).RGBA()
		return [3]int{int(r >> 8), int(g >> 8), int(bl >> 8)}
	}
	// Only the basemap, at zoom 11: over the harbour (Staten Island,
	// Brooklyn, lower Manhattan), then over the Bronx and Queens.
	b.do("hide the boroughs", chromedp.Evaluate[chromedp.Void](`(() => { const m = window.mcMap;
		for (const l of m.getStyle().layers) if (l.source && l.source !== 'basemap') m.setLayoutProperty(l.id, 'visibility', 'none'); })()`))
	checked := map[string]bool{}
	for i, center := range [][2]float64{{-74.03, 40.63}, {-73.87, 40.78}} {
		b.do("zoom in", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const m = window.mcMap;
			window.mcIdle = false; m.once('idle', () => { window.mcIdle = true });
			m.jumpTo({center: [%g, %g], zoom: 11}); })()`, center[0], center[1])))
		b.wait("the map idle at zoom 11", `window.mcIdle === true`)
		view := eval[struct {
			Bounds           [2][2]float64
			CanvasW, CanvasH int
		}](b, `(() => { const m = window.mcMap, c = m.getCanvas();
			return {Bounds: m.getBounds().toArray(), CanvasW: c.width, CanvasH: c.height}; })()`)
		shot := canvasImage(b, fmt.Sprintf("basemap-nyc-%d", i+1))
		b.screenshot(fmt.Sprintf("basemap-nyc-%d-page", i+1))
		west, south, east, north := view.Bounds[0][0], view.Bounds[0][1], view.Bounds[1][0], view.Bounds[1][1]
		mercY := func(lat float64) float64 { return math.Log(math.Tan(math.Pi/4 + lat*math.Pi/360)) }
		y0, y1 := mercY(south), mercY(north)
		cw, ch := float64(view.CanvasW), float64(view.CanvasH)
		pixel := func(lon, lat float64) [2]float64 {
			return [2]float64{(lon - west) / (east - west) * cw, (y1 - mercY(lat)) / (y1 - y0) * ch}
		}
		for _, f := range fc.Features {
			name := fmt.Sprint(f.Properties["BoroName"])
			var px [][][2]float64
			for _, r := range geoJSONRings(t, f.Geometry.Type, f.Geometry.Coordinates) {
				// The boroughs' rings have tens of thousands of points:
				// a point within 2 pixels of the last kept adds nothing
				// here.
				var pr [][2]float64
				for _, c := range r {
					p := pixel(c[0], c[1])
					if n := len(pr); n > 0 && math.Hypot(p[0]-pr[n-1][0], p[1]-pr[n-1][1]) < 2 {
						continue
					}
					pr = append(pr, p)
				}
				px = append(px, pr)
			}
			// Every 6th pixel 12 pixels (700 m) inside the borough at
			// least: nine in ten are land. (The coasts of 1:10m are a
			// generalisation: its East River and Harlem River are wider
			// than they are, a few pixels of the Bronx's and Manhattan's
			// shores in the water. The 1:110m countries had two in five
			// of Staten Island's in the sea, three in five of Brooklyn's.)
			pts := insidePixels(px, view.CanvasW, view.CanvasH, 6, 12)
			if len(pts) < 10 {
				continue // not on this view, or only its edge
			}
			checked[name] = true
			water := 0
			for _, pt := range pts {
				if got := rgbAt(shot, pt[0], pt[1]); !nearRGB(got, land, 8) && (nearRGB(got, sea, 24) || nearRGB(got, coast, 24)) {
					if water == 0 {
						t.Logf("view %d: %s at (%d,%d): #%02x%02x%02x", i+1, name, pt[0], pt[1], got[0], got[1], got[2])
					}
					water++
				}
			}
			t.Logf("view %d: %s: %d of %d pixels inside it are water", i+1, name, water, len(pts))
			if water > len(pts)/10 {
				t.Errorf("view %d: %s: %d of the %d pixels well inside it are the sea's colour, not the land's", i+1, name, water, len(pts))
			}
		}
		if i == 0 {
			// The Upper Bay, between Staten Island and Brooklyn, is sea.
			h := pixel(-74.045, 40.655)
			if got := rgbAt(shot, int(h[0]), int(h[1])); !nearRGB(got, sea, 8) {
				t.Errorf("the Upper Bay at (%.0f,%.0f): #%02x%02x%02x, not the sea's", h[0], h[1], got[0], got[1], got[2])
			}
		}
	}
	if len(checked) != 5 {
		t.Errorf("boroughs looked at: %v", checked)
	}
	// Over the southern United States at zoom 5 the divisions' names are
	// drawn (Texas among them), and their dashed boundaries; at zoom 7
	// over New York the urban area is drawn (the 1:50m urban areas).
	b.do("to Texas", chromedp.Evaluate[chromedp.Void](`(() => { const m = window.mcMap;
		window.mcIdle = false; m.once('idle', () => { window.mcIdle = true });
		m.jumpTo({center: [-97, 33], zoom: 5}); })()`))
	b.wait("the map idle at zoom 5", `window.mcIdle === true`)
	b.screenshot("basemap-regions-texas")
	drawn := eval[struct {
		Regions   []string
		Divisions int
	}](b, `(() => { const m = window.mcMap;
		return {Regions: m.queryRenderedFeatures({layers: ['region-labels']}).map((f) => f.properties.name),
			Divisions: m.queryRenderedFeatures({layers: ['divisions']}).length}; })()`)
	if !slices.Contains(drawn.Regions, "Texas") || drawn.Divisions == 0 {
		t.Errorf("zoom 5 over Texas: region labels %v, %d division lines drawn", drawn.Regions, drawn.Divisions)
		t.Log(eval[string](b, `JSON.stringify([window.mcMap.querySourceFeatures('basemap', {sourceLayer: 'regions'}).slice(0,5).map((f) => f.properties), window.mcMap.getLayer('region-labels') && window.mcMap.getLayoutProperty('region-labels', 'visibility'), window.mcMap.queryRenderedFeatures({layers: ['place-labels']}).length, window.mcMap.getZoom(), window.mcMap.getLayer('region-labels').minzoom])`))
	}
	b.do("to New York", chromedp.Evaluate[chromedp.Void](`(() => { const m = window.mcMap;
		window.mcIdle = false; m.once('idle', () => { window.mcIdle = true });
		m.jumpTo({center: [-73.95, 40.75], zoom: 7}); })()`))
	b.wait("the map idle at zoom 7", `window.mcIdle === true`)
	if n := eval[int](b, `window.mcMap.queryRenderedFeatures({layers: ['urban']}).length`); n == 0 {
		t.Error("zoom 7 over New York: no urban area drawn")
	}
	b.screenshot("basemap-urban-nyc")
	checkNoProblems(b)
}

// insidePixels are the pixels, every step pixels, of a w×h image whose
// centre is inside the rings (even-odd) and margin pixels at least from
// any of their edges and the image's.
func insidePixels(rings [][][2]float64, w, h, step int, margin float64) [][2]int {
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, r := range rings {
		for _, p := range r {
			minX, maxX = min(minX, p[0]), max(maxX, p[0])
			minY, maxY = min(minY, p[1]), max(maxY, p[1])
		}
	}
	var out [][2]int
	for y := max(0, int(minY)); y <= min(h-1, int(maxY)); y += step {
		for x := max(0, int(minX)); x <= min(w-1, int(maxX)); x += step {
			cx, cy := float64(x)+0.5, float64(y)+0.5
			if min(cx, cy, float64(w)-cx, float64(h)-cy) < margin {
				continue
			}
			inside, near := false, false
			for _, r := range rings {
				for i, j := 0, len(r)-1; i < len(r); j, i = i, i+1 {
					a, b := r[i], r[j]
					if (a[1] > cy) != (b[1] > cy) && cx < (b[0]-a[0])*(cy-a[1])/(b[1]-a[1])+a[0] {
						inside = !inside
					}
					if !near && segmentDistance(cx, cy, a, b) < margin {
						near = true
					}
				}
			}
			if inside && !near {
				out = append(out, [2]int{x, y})
			}
		}
	}
	return out
}
