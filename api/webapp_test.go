package api_test

// The web application: its routes without a browser (headers, formats, the
// API paths unchanged), then end to end in a real headless Chromium driven
// by chromedp — the pages drawn, the map's pixels read, the table paged
// and sorted, a popup opened. The browser test needs /usr/bin/chromium (or
// $MAPCOMMONS_CHROMIUM) and the built assets (npm ci && npm run build
// before go test); it skips without them unless MAPCOMMONS_REQUIRE_BROWSER=1.

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"mapcommons/api"
	"mapcommons/web"
)

// TestPageRoutes checks the pages' answers: HTML with the security
// headers, only as HTML, and the API's own paths unchanged beside them.
func TestPageRoutes(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=towns", "name,lat,lon\nAlpha,10,20\n")
	for _, p := range []string{"/", "/app/search", "/app/search.html", "/app/search?q=x", "/app/signin", "/app/signup", "/app/setup", ds, "/app" + ds, "/app" + ds + ".html"} {
		if strings.HasPrefix(p, "/datasets") {
			continue
		}
		w := ts.get(p, "")
		body := string(must(t, w, 200))
		h := w.Header()
		if !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Errorf("%s: Content-Type %q", p, h.Get("Content-Type"))
		}
		for _, want := range []string{"default-src 'self'", "script-src 'self';", "frame-ancestors 'none'", "worker-src 'self' blob:", "img-src 'self' data: blob:;", "connect-src 'self';"} {
			if !strings.Contains(h.Get("Content-Security-Policy"), want) {
				t.Errorf("%s: CSP %q lacks %q", p, h.Get("Content-Security-Policy"), want)
			}
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s: headers %v", p, h)
		}
		// Either the application (the placeholders: a style sheet, no
		// script) or the page saying how to build it.
		built := strings.Contains(body, `<script type="module" src="/app/assets/`) ||
			strings.Contains(p, "/sign") && strings.Contains(body, `<link rel="stylesheet" href="/app/assets/`)
		if !built && !strings.Contains(body, "npm ci &amp;&amp; npm run build") {
			t.Errorf("%s: neither the application nor how to build it:\n%s", p, body)
		}
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("%s: the page names another origin:\n%s", p, body)
		}
	}
	// The API answers as before: JSON at /search and /datasets/{id},
	// whatever a browser's Accept says.
	for _, p := range []string{"/search", "/search.json", ds, ds + ".json"} {
		w := ts.do(req{method: "GET", path: p, header: map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}})
		if must(t, w, 200); !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			t.Errorf("%s with a browser's Accept: %q", p, w.Header().Get("Content-Type"))
		}
	}
	errorOf(t, ts.get("/app/search.csv", ""), 404, "not_found", "pages are HTML")
	errorOf(t, ts.get("/app/search.json", ""), 404, "not_found", "pages are HTML")
	errorOf(t, ts.get("/app/datasets/x", ""), 404, "not_found", "no such page")
	errorOf(t, ts.get("/app/assets/nothing.js", ""), 404, "not_found", "no such asset")
	errorOf(t, ts.get("/app/assets/manifest.json", ""), 404, "not_found", "no such asset")
	errorOf(t, ts.do(req{method: "POST", path: "/app/search", user: "alice"}), 405, "method_not_allowed", "POST")
	errorOf(t, ts.do(req{method: "POST", path: "/", user: "alice"}), 405, "method_not_allowed", "POST")
	errorOf(t, ts.get("/nothing", ""), 404, "not_found", "/nothing")

	// A fixed file: revalidated by its ETag.
	w := ts.get("/app/assets/favicon.svg", "")
	must(t, w, 200)
	if w.Header().Get("Content-Type") != "image/svg+xml" || w.Header().Get("ETag") == "" || !strings.Contains(w.Header().Get("Cache-Control"), "max-age=0") {
		t.Errorf("favicon: %v", w.Header())
	}
	must(t, ts.do(req{method: "GET", path: "/app/assets/favicon.svg", header: map[string]string{"If-None-Match": w.Header().Get("ETag")}}), 304)

	// Built files: named by hash, cached a year, compressed.
	assets, err := web.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !assets.Built() {
		t.Log("the web assets are not built (npm run build): the built files are not checked")
		return
	}
	home := string(must(t, ts.get("/", ""), 200))
	i := strings.Index(home, `src="/app/assets/`)
	js := home[i+len(`src="`) : i+strings.Index(home[i:], `.js"`)+3]
	w = ts.do(req{method: "GET", path: js, header: map[string]string{"Accept-Encoding": "gzip"}})
	must(t, w, 200)
	if ct := w.Header().Get("Content-Type"); ct != "text/javascript; charset=utf-8" || w.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Errorf("%s: %v", js, w.Header())
	}
	ds2 := string(must(t, ts.get("/app"+ds, ""), 200))
	i = strings.Index(ds2, `<meta name="mc-worker" content="`)
	if i < 0 {
		t.Fatalf("the dataset page names no worker:\n%s", ds2)
	}
	worker := ds2[i+len(`<meta name="mc-worker" content="`):]
	worker = worker[:strings.IndexByte(worker, '"')]
	w = ts.do(req{method: "GET", path: worker, header: map[string]string{"Accept-Encoding": "gzip"}})
	if must(t, w, 200); w.Header().Get("Content-Encoding") != "gzip" {
		t.Errorf("%s not compressed: %v", worker, w.Header())
	}
}

// browserTest is a headless Chromium on a real server holding the nc
// counties, and the place its screenshots go.
type browserTest struct {
	t         testing.TB
	ctx       context.Context
	url       string
	artefacts string
	mu        sync.Mutex
	problems  []string      // console errors and exceptions of the pages
	added     chan struct{} // a problem was added (consoleBarrier waits on it)
	tiles     atomic.Int64  // vector tiles the server was asked for
}

// parallelBrowsers are the tests that have asked to run in parallel.
var parallelBrowsers sync.Map

func newBrowserTest(t *testing.T) *browserTest {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	body, ct := multipartBody(t, ncFiles("dataset"), map[string]string{"title": "North Carolina counties", "tags": "nc, counties"})
	must(t, ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body}), 201)
	return browserOn(t, ts)
}

// browserOn starts a headless Chromium on test server ts (made with
// BaseURL ""), which is served over HTTP at b.url.
func browserOn(t testing.TB, ts *testServer) *browserTest {
	// Browser tests wait on pages more than they compute: they run beside
	// the others, each with its own Chromium (a test with two browsers
	// asks once).
	if tt, ok := t.(*testing.T); ok { // a benchmark runs alone
		if _, asked := parallelBrowsers.LoadOrStore(tt, true); !asked {
			tt.Parallel()
		}
	}
	required := os.Getenv("MAPCOMMONS_REQUIRE_BROWSER") == "1"
	skip := func(format string, args ...any) {
		t.Helper()
		if required {
			t.Fatalf(format+" and MAPCOMMONS_REQUIRE_BROWSER=1", args...)
		}
		t.Skipf(format, args...)
	}
	chromium := os.Getenv("MAPCOMMONS_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(chromium); err != nil {
		skip("no Chromium at %s (apt-get install chromium)", chromium)
	}
	assets, err := web.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !assets.Built() {
		skip("the web assets are not built: npm ci && npm run build")
	}
	b := &browserTest{t: t, added: make(chan struct{}, 1)}
	tile := regexp.MustCompile(`^/ogc/collections/\d+/tiles/WebMercatorQuad/\d+/\d+/\d+$`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tile.MatchString(r.URL.Path) {
			b.tiles.Add(1)
		}
		ts.handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	dir := os.Getenv("MAPCOMMONS_ARTEFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if dir, err = filepath.Abs(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // root in a container
		chromedp.Flag("headless", "new"),
		// WebGL without a GPU: ANGLE on SwiftShader.
		chromedp.Flag("use-gl", "angle"),
		chromedp.Flag("use-angle", "swiftshader"),
		chromedp.Flag("enable-unsafe-swiftshader", true),
		chromedp.WindowSize(1280, 800),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", chromium, err)
	}
	b.ctx, b.url, b.artefacts = ctx, srv.URL, dir
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			// The basemap is optional: its 404 is the plain background. A
			// visitor's GET /session.json is a 401 (asking who is signed in).
			if (m.Type == chromedp.ConsoleError || m.IsException()) && !strings.Contains(m.URL, "/basemap/") &&
				!(strings.HasSuffix(m.URL, "/session.json") && strings.Contains(m.Text, "401")) {
				b.mu.Lock()
				b.problems = append(b.problems, fmt.Sprintf("%s %s:%d %s", m.Type, m.URL, m.Line+1, m.Text))
				b.mu.Unlock()
				select {
				case b.added <- struct{}{}:
				default: // one pending is enough: the waiter reads them all
				}
			}
		}
	}()
	return b
}

// do runs browser steps with a time limit, failing the test on an error.
func (b *browserTest) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.screenshot("failed-" + what)
		b.t.Fatalf("%s: %v", what, err)
	}
}

// load runs a step that opens another page and waits for it to load.
func (b *browserTest) load(what string, step chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.do(what, func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.WaitEvent(page.LoadEventFired, nil, step)(ctx, t)
		return chromedp.Void{}, err
	})
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](b *browserTest, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// wait polls a JavaScript condition until it holds, within a minute, in
// a loaded page (its scripts have run). It polls on across navigations,
// the page's own (a redirect to sign in, a form sent) included: an
// evaluation lost with its page, or failing in a page not yet ready, is
// tried again.
func (b *browserTest) wait(what, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.readyState === 'complete' && !!(`+cond+`)`))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.screenshot("failed-" + what)
			b.t.Fatalf("%s: %s did not hold within a minute (last error %v)", what, cond, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// barriers numbers the markers of consoleBarrier.
var barriers atomic.Int64

// consoleBarrier logs a marker as an error in the page's console and
// waits (five minutes at most: a bound on a hang) for it to come among the problems, then drops
// it: the console's messages come in their order, so whatever the page
// logged before the marker has arrived too.
func (b *browserTest) consoleBarrier() {
	b.t.Helper()
	marker := fmt.Sprintf("mapcommons-console-barrier-%d", barriers.Add(1))
	b.do("log "+marker, chromedp.Evaluate[chromedp.Void](`console.error('`+marker+`')`))
	limit := time.After(5 * time.Minute) // a bound on a hang, not a measure
	for {
		b.mu.Lock()
		i := slices.IndexFunc(b.problems, func(p string) bool { return strings.Contains(p, marker) })
		if i >= 0 {
			b.problems = slices.Delete(b.problems, i, i+1)
		}
		b.mu.Unlock()
		if i >= 0 {
			return
		}
		select {
		case <-b.added:
		case <-limit:
			b.t.Fatalf("%s logged in the page did not arrive within five minutes", marker)
		}
	}
}

// screenshot saves the whole page as name.png among the artefacts, and
// returns it (nil when it could not be taken).
func (b *browserTest) screenshot(name string) []byte {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return nil
	}
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == '?' || r == '=' || r == '&' {
			return '-'
		}
		return r
	}, name)
	if err := os.WriteFile(filepath.Join(b.artefacts, name+".png"), png, 0o644); err != nil {
		b.t.Error(err)
	}
	return png
}

// TestWebAppInBrowser opens the home page, searches, opens the dataset
// page of the nc counties, and checks what a person would see there.
func TestWebAppInBrowser(t *testing.T) {
	b := newBrowserTest(t)

	// Home: the recent datasets, the counties among them.
	b.do("home", chromedp.Navigate(b.url+"/"))
	b.wait("recent datasets", `document.querySelectorAll('#recent li.entry').length > 0`)
	if got := eval[string](b, `document.getElementById('recent').textContent`); !strings.Contains(got, "North Carolina counties") {
		t.Errorf("home: recent = %q", got)
	}
	b.screenshot("home")

	// Search from the home page's box.
	b.load("search", chromedp.SendKeys(chromedp.ID("q"), "counties\n"))
	b.wait("search results", `location.pathname === '/app/search' && document.querySelectorAll('#results li.entry').length > 0`)
	results := eval[string](b, `document.getElementById('results').textContent`)
	for _, want := range []string{"North Carolina counties", "Dataset", "alice", "counties", "100 features", "Extent W -84.3239"} {
		if !strings.Contains(results, want) {
			t.Errorf("search results lack %q: %q", want, results)
		}
	}
	if got := eval[string](b, `document.getElementById('results-status').textContent`); got != "Results 1–1 of 1" {
		t.Errorf("search status %q", got)
	}
	b.screenshot("search")

	// The dataset page: the map drawn, the table, a popup.
	b.load("open the dataset", chromedp.Click(chromedp.CSS("#results li.entry h3 a")))
	b.wait("the map idle", `document.getElementById('map') && document.getElementById('map').dataset.state === 'idle'`)
	if got := eval[string](b, `document.getElementById('title').textContent`); got != "North Carolina counties" {
		t.Errorf("dataset title %q", got)
	}
	b.checkMapPixels()
	if n := b.tiles.Load(); n != 0 {
		t.Errorf("100 counties drawn from %d vector tiles, want GeoJSON", n)
	}

	// The table: 100 rows over 5 pages, no row twice.
	b.wait("the table", `document.getElementById('table-status').textContent === 'Rows 1–20 of 100'`)
	names := map[string]bool{}
	for page := 1; page <= 5; page++ {
		if page > 1 {
			b.do("next rows", chromedp.Click(chromedp.ID("next")))
			b.wait("page "+fmt.Sprint(page), fmt.Sprintf(`document.getElementById('table-status').textContent.startsWith('Rows %d–')`, (page-1)*20+1))
		}
		for _, n := range eval[[]string](b, `[...document.querySelectorAll('#table tbody tr')].map(tr => tr.children[`+nameColumn+`].textContent)`) {
			names[n] = true
		}
	}
	if len(names) != 100 {
		t.Errorf("%d distinct counties over the pages, want 100", len(names))
	}
	if !eval[bool](b, `document.getElementById('next').disabled`) {
		t.Error("the last page's Next is enabled")
	}

	// Sorting by NAME: ascending, then descending.
	firstName := `document.querySelector('#table tbody tr').children[` + nameColumn + `].textContent`
	b.do("sort by NAME", chromedp.Click(chromedp.CSS(`#table th button[data-column="NAME"]`)))
	b.wait("sorted ascending", `document.querySelector('#table th[aria-sort="ascending"]') !== null`)
	if got := eval[string](b, firstName); got != "Alamance" {
		t.Errorf("first county by NAME ascending: %q", got)
	}
	b.do("sort by NAME descending", chromedp.Click(chromedp.CSS(`#table th button[data-column="NAME"]`)))
	b.wait("sorted descending", `document.querySelector('#table th[aria-sort="descending"]') !== null`)
	if got := eval[string](b, firstName); got != "Yancey" {
		t.Errorf("first county by NAME descending: %q", got)
	}

	// A click in the middle of the map, inside the state, opens a popup.
	b.do("scroll to the map", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	rect := eval[[]float64](b, `(() => { const r = document.querySelector('#map canvas').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	b.do("click a county", chromedp.MouseClickXY(rect[0]+rect[2]/2, rect[1]+rect[3]/2))
	b.wait("a popup", `document.querySelector('.maplibregl-popup') !== null`)
	if got := eval[string](b, `document.querySelector('.maplibregl-popup').textContent`); !strings.Contains(got, "NAME") || !strings.Contains(got, "FIPS") {
		t.Errorf("popup %q", got)
	}
	b.screenshot("dataset")

	// The same counties from the OGC vector tiles (what datasets over
	// 5,000 features use).
	b.do("the tiles", chromedp.Navigate(b.url+eval[string](b, `location.pathname`)+"?tiles=1"))
	b.wait("the tiled map idle", `document.getElementById('map') && document.getElementById('map').dataset.state === 'idle'`)
	if b.tiles.Load() == 0 {
		t.Error("?tiles=1: the server was asked for no vector tile")
	}
	b.checkMapPixels()
	b.screenshot("dataset-tiles")

	// At phone width the page does not scroll sideways.
	b.do("phone width", chromedp.EmulateViewport(390, 844))
	b.wait("the page laid out", `document.documentElement.scrollWidth <= window.innerWidth`)
	b.screenshot("dataset-phone")

	b.mu.Lock()
	problems := b.problems
	b.mu.Unlock()
	for _, p := range problems {
		t.Errorf("in the browser: %s", p)
	}

	// The Content-Security-Policy holds: an inline script does not run, and
	// the refusal is seen by the console check above.
	b.do("an inline script", chromedp.Evaluate[chromedp.Void](`(() => { const s = document.createElement('script'); s.textContent = 'window.inlineRan = true'; document.body.append(s); })()`))
	if eval[bool](b, `window.inlineRan === true`) {
		t.Error("an inline script ran despite the CSP")
	}
	deadline := time.Now().Add(60 * time.Second) // a bound on a hang: Chromium on a loaded machine
	for {
		b.mu.Lock()
		seen := len(b.problems) > len(problems) && strings.Contains(strings.Join(b.problems[len(problems):], " "), "Content Security Policy")
		b.mu.Unlock()
		if seen {
			break
		}
		if time.Now().After(deadline) {
			t.Error("the console showed no Content Security Policy refusal of the inline script")
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// nameColumn is the JavaScript index of the NAME column in the table.
const nameColumn = `[...document.querySelectorAll('#table thead th')].findIndex(th => th.querySelector('button').dataset.column === 'NAME')`

// checkMapPixels reads the map's canvas and checks the counties are drawn:
// the orange of their fill covers a good part of it, and the corners
// (outside the state at this zoom) are not orange.
func (b *browserTest) checkMapPixels() {
	b.t.Helper()
	img := canvasImage(b, "map-canvas")
	orange := func(x, y int) bool {
		r, g, bl, _ := img.At(x, y).RGBA()
		return r>>8 > g>>8+40 && r>>8 > bl>>8+60
	}
	bounds := img.Bounds()
	n := 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			if orange(x, y) {
				n++
			}
		}
	}
	share := float64(n) / float64(bounds.Dx()*bounds.Dy())
	if share < 0.15 {
		b.t.Errorf("%.1f%% of the map is the counties' fill, want at least 15%%", 100*share)
	}
	for _, c := range []image.Point{{bounds.Min.X + 2, bounds.Min.Y + 2}, {bounds.Max.X - 3, bounds.Max.Y - 3}} {
		if orange(c.X, c.Y) {
			b.t.Errorf("the corner %v of the map is filled", c)
		}
	}
	b.t.Logf("the counties fill %.1f%% of the %dx%d map", 100*share, bounds.Dx(), bounds.Dy())
}

// canvasImage reads the map's canvas and keeps it as name.png.
func canvasImage(b *browserTest, name string) image.Image {
	b.t.Helper()
	return canvasImageOf(b, "#map canvas", name)
}

// canvasImageOf reads the canvas a CSS selector names and keeps it as
// name.png.
func canvasImageOf(b *browserTest, selector, name string) image.Image {
	b.t.Helper()
	url := eval[string](b, fmt.Sprintf(`document.querySelector(%q).toDataURL('image/png')`, selector))
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(url, "data:image/png;base64,"))
	if err != nil {
		b.t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.artefacts, name+".png"), raw, 0o644); err != nil {
		b.t.Error(err)
	}
	return img
}
