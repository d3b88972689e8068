package api_test

// The faces around the application (issue 28): the OGC API's HTML pages
// with their map of the features, and the API description with its viewer
// (Swagger UI), which tries requests; both in headless Chromium under
// their Content-Security-Policy, whose refusals the console shows.

import (
	"bytes"
	"context"
	"image"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"mapcommons/api"
	"mapcommons/web"
)

// TestOGCHTMLMap checks the OGC pages of features without a browser: a
// map (hidden until its script shows it) reading the page's own JSON
// form, the table beside it, the widened policy on those pages only, and
// the JSON answers unchanged.
func TestOGCHTMLMap(t *testing.T) {
	t.Parallel()
	assets, err := web.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !assets.Built() {
		t.Skip("the web assets are not built: npm ci && npm run build")
	}
	ts := newServer(t)
	id := uploadNC(t, ts, "?title=counties")
	coll := "/ogc/collections/" + id
	for p, data := range map[string]string{
		coll + "/items?f=html&limit=5": "/items?f=json&limit=5",
		coll + "/items/3?f=html":       "/items/3?f=json",
		coll + "/items?f=html&limit=5&crs=http://www.opengis.net/def/crs/EPSG/0/3857": "/items?f=json&limit=5",
		coll + "?f=html": "/items?f=json&limit=100",
	} {
		w := ts.get(p, "")
		body := string(must(t, w, 200))
		csp := w.Header().Get("Content-Security-Policy")
		for _, want := range []string{"script-src 'self';", "style-src 'self';", "worker-src 'self' blob:", "img-src 'self' data: blob:;", "connect-src 'self';", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", p, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		m := regexp.MustCompile(`<div id="ogc-map" hidden data-geojson="([^"]+)"`).FindStringSubmatch(body)
		if m == nil {
			t.Errorf("%s: no map:\n%s", p, body)
			continue
		}
		if got := strings.ReplaceAll(m[1], "&amp;", "&"); !strings.HasSuffix(got, "/ogc/collections/counties-"+id+data) {
			t.Errorf("%s: the map reads %s, want the collection's …%s", p, got, data)
		}
		for _, want := range []string{`<script type="module" src="/app/assets/ogc-`, `<meta name="mc-worker" content="/app/assets/maplibre-gl-worker-`,
			`<link rel="icon" href="/app/assets/favicon.svg"`, "<table"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %s", p, want)
			}
		}
	}
	// The other documents keep the plain policy, no script, with the icon
	// and the documents' style sheet.
	w := ts.get("/ogc/conformance?f=html", "")
	body := string(must(t, w, 200))
	if csp := w.Header().Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'") || strings.Contains(csp, "script-src") ||
		!strings.Contains(csp, "style-src 'self';") || strings.Contains(csp, "unsafe") {
		t.Errorf("conformance: CSP %q", csp)
	}
	if strings.Contains(body, "ogc-map") || !strings.Contains(body, `href="/app/assets/favicon.svg"`) ||
		!strings.Contains(body, `<link rel="stylesheet" href="/app/assets/ogcdoc-`) || strings.Contains(body, "<script") {
		t.Errorf("conformance:\n%s", body)
	}
	// Every table scrolls in its own box, a named region the keyboard
	// reaches (the page never scrolls sideways on a phone).
	for _, p := range []string{"/ogc/conformance?f=html", "/ogc/collections?f=html", coll + "?f=html", coll + "/items?f=html&limit=5"} {
		body := string(must(t, ts.get(p, ""), 200))
		if !strings.Contains(body, `<div class="table-wrap" tabindex="0" role="region" aria-label="Table of `) {
			t.Errorf("%s: no box around its table:\n%s", p, body)
		}
	}
	// JSON is JSON still.
	for _, p := range []string{coll + "/items?f=json&limit=5", coll + "/items/3", coll} {
		w := ts.get(p, "")
		if body := must(t, w, 200); !strings.Contains(w.Header().Get("Content-Type"), "json") || bytes.Contains(body, []byte("ogc-map")) {
			t.Errorf("%s: %s", p, w.Header().Get("Content-Type"))
		}
	}
	// The API description: its viewer, under a strict policy.
	w = ts.get("/api.html", "")
	body = string(must(t, w, 200))
	csp := w.Header().Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self';", "connect-src 'self';", "frame-ancestors 'none'", "style-src 'self' 'sha256-"} {
		if !strings.Contains(csp, want) {
			t.Errorf("/api.html: CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") || strings.Contains(csp, "http") {
		t.Errorf("/api.html: CSP %q", csp)
	}
	for _, want := range []string{`<script type="module" src="/app/assets/apiview-`, `<div id="swagger-ui" data-spec="`, `<div id="description">`, `href="/app/assets/favicon.svg"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/api.html lacks %s", want)
		}
	}
}

// scripts switches the pages' scripts on or off (a visitor without
// JavaScript).
func scripts(b *browserTest, on bool) {
	b.t.Helper()
	b.do("scripts", func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on})
		return chromedp.Void{}, err
	})
}

// orangeShare is the share of an image in the features' orange fill.
func orangeShare(img image.Image) float64 {
	n, bounds := 0, img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 > g>>8+40 && r>>8 > bl>>8+60 {
				n++
			}
		}
	}
	return float64(n) / float64(bounds.Dx()*bounds.Dy())
}

// TestWebOGCMapInBrowser opens the OGC pages of the nc counties (a page of
// items, one item, the collection) and sees their features drawn on the
// map, as many as the table lists, with no console error (a refusal of
// the policy among them).
func TestWebOGCMapInBrowser(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	id := uploadNC(t, ts, "?title=North+Carolina+counties")
	b := browserOn(t, ts)
	coll := "/ogc/collections/" + id
	for _, c := range []struct {
		name, path string
		features   int
	}{
		{"ogc-items-100", coll + "/items?f=html&limit=100", 100},
		{"ogc-items", coll + "/items?f=html", 10},
		{"ogc-item", coll + "/items/7?f=html", 1},
		{"ogc-collection", coll + "?f=html", 100},
	} {
		b.load(c.name, chromedp.Navigate(b.url+c.path))
		b.wait(c.name+": the map drawn", `document.getElementById('ogc-map').dataset.state === 'idle'`)
		if got := eval[int](b, `Number(document.getElementById('ogc-map').dataset.features)`); got != c.features {
			t.Errorf("%s: %d features drawn, want %d", c.path, got, c.features)
		}
		if c.name != "ogc-collection" {
			// The table is there still, a row per feature.
			if got := eval[int](b, `document.querySelectorAll('table tr td:first-child a').length`); got != c.features {
				t.Errorf("%s: %d rows, want %d", c.path, got, c.features)
			}
		}
		share := orangeShare(canvasImageOf(b, "#ogc-map canvas", c.name+"-canvas"))
		if share < 0.05 {
			t.Errorf("%s: %.1f%% of the map is the features' fill, want at least 5%%", c.path, 100*share)
		}
		t.Logf("%s: the features fill %.1f%% of the map", c.path, 100*share)
		b.screenshot(c.name)
		for _, problem := range eval[[]string](b, a11yAudit) {
			t.Errorf("%s at 1280x800: %s", c.path, problem)
		}
	}
	// Without JavaScript the page is its table, the map's place hidden.
	scripts(b, false)
	b.load("the items without scripts", chromedp.Navigate(b.url+coll+"/items?f=html"))
	if got := eval[int](b, `document.querySelectorAll('table tr td:first-child a').length`); got != 10 {
		t.Errorf("without scripts: %d rows, want 10", got)
	}
	if !eval[bool](b, `document.getElementById('ogc-map').hidden && document.querySelector('#ogc-map canvas') === null`) {
		t.Error("without scripts the map's place is shown")
	}
	b.screenshot("ogc-items-noscript")
	scripts(b, true)

	// A click on a county, in the middle of the state, opens its page.
	b.load("the items again", chromedp.Navigate(b.url+coll+"/items?f=html&limit=100"))
	b.wait("the map drawn again", `document.getElementById('ogc-map').dataset.state === 'idle'`)
	rect := eval[[]float64](b, `(() => { const r = document.querySelector('#ogc-map canvas').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	b.do("click a county", chromedp.MouseClickXY(rect[0]+rect[2]/2, rect[1]+rect[3]/2))
	b.wait("the county's page", `/^\/ogc\/collections\/[^/]+\/items\/\d+$/.test(location.pathname) && location.search === '?f=html'`)
	b.wait("its map drawn", `document.getElementById('ogc-map').dataset.state === 'idle' && document.getElementById('ogc-map').dataset.features === '1'`)
	checkNoProblems(b)
}

// TestWebAPIViewerInBrowser opens /api.html: Swagger UI shows the server's
// own document, its operations listed, and a try-it-out of GET /search
// answers 200 from this server, all under the page's strict policy.
func TestWebAPIViewerInBrowser(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	uploadNC(t, ts, "?title=North+Carolina+counties")
	b := browserOn(t, ts)
	b.load("the API description", chromedp.Navigate(b.url+"/api.html"))
	b.wait("the viewer", `document.getElementById('swagger-ui').dataset.state === 'ready' && document.querySelectorAll('#swagger-ui .opblock').length > 20`)
	if !eval[bool](b, `document.getElementById('description').hidden`) {
		t.Error("the server's description is shown beside the viewer")
	}
	n := eval[int](b, `document.querySelectorAll('#swagger-ui .opblock').length`)
	t.Logf("%d operations listed", n)
	b.screenshot("api-viewer")
	for _, problem := range eval[[]string](b, a11yAudit) {
		t.Errorf("/api.html at 1280x800: %s", problem)
	}

	op := `document.getElementById('operations-Search-search')`
	b.wait("GET /search listed", op+` !== null`)
	b.do("open GET /search", chromedp.Evaluate[chromedp.Void](op+`.querySelector('.opblock-summary-control').click()`))
	b.wait("its try-it-out", op+`.querySelector('.try-out__btn') !== null`)
	b.do("try it out", chromedp.Evaluate[chromedp.Void](op+`.querySelector('.try-out__btn').click()`))
	b.wait("its execute", op+`.querySelector('.execute') !== null`)
	b.do("execute", chromedp.Evaluate[chromedp.Void](op+`.querySelector('.execute').click()`))
	b.wait("the answer", op+`.querySelector('.live-responses-table tr.response .response-col_status') !== null`)
	if got := strings.TrimSpace(eval[string](b, op+`.querySelector('.live-responses-table tr.response .response-col_status').textContent`)); got != "200" {
		t.Errorf("GET /search tried: status %q", got)
	}
	if got := eval[string](b, op+`.querySelector('.live-responses-table').textContent`); !strings.Contains(got, "North Carolina counties") {
		t.Errorf("GET /search tried: %q", got)
	}
	if got := eval[string](b, op+`.querySelector('.request-url pre')?.textContent ?? ''`); !strings.HasPrefix(strings.TrimSpace(got), b.url+"/search") {
		t.Errorf("GET /search tried at %q, not this server", got)
	}
	b.screenshot("api-viewer-try")

	// Without JavaScript the page is the server's own description.
	scripts(b, false)
	b.load("the API description without scripts", chromedp.Navigate(b.url+"/api.html"))
	if !eval[bool](b, `!document.getElementById('description').hidden && document.getElementById('swagger-ui').childElementCount === 0 && document.querySelectorAll('#description h2').length > 20`) {
		t.Error("without scripts the server's description is not the page")
	}
	scripts(b, true)
	checkNoProblems(b)
}
