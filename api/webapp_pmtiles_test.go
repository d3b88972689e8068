package api_test

import (
	"fmt"
	"image/color"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"mapcommons/api"
)

// statusRecorder keeps the status an answer was written with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// TestWebMapPMTiles opens, on a server with a PMTiles basemap
// (--basemap-pmtiles: the test archive of earth and water tiles with
// Protomaps' layer names), a map whose basemap the server lacks: the page
// draws the PMTiles basemap with @protomaps/basemaps' light style, its
// tiles asked of /basemap/pmtiles/…, land in the light flavor's earth
// colour, the sea in its water or background colour, and no errors (the
// console's, and no basemap answer of 400 or more: the console watch
// leaves /basemap/ URLs out).
func TestWebMapPMTiles(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" }, withPMTiles(t, "world"))
	var tiles atomic.Int64
	var mu sync.Mutex
	var failed []string
	inner := ts.handler
	ts.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/basemap") {
			inner.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/basemap/pmtiles/world/") && strings.HasSuffix(r.URL.Path, ".mvt") {
			tiles.Add(1)
		}
		sr := &statusRecorder{ResponseWriter: w, status: 200}
		inner.ServeHTTP(sr, r)
		if sr.status >= 400 {
			mu.Lock()
			failed = append(failed, fmt.Sprintf("%s %d", r.URL.Path, sr.status))
			mu.Unlock()
		}
	})
	b := browserOn(t, ts)
	if !builtAssets(t) {
		t.Fatal("the web assets are not built")
	}
	// The map's basemap is none the server has: the page takes its first
	// PMTiles basemap, not the built-in one.
	path := postMap(t, ts, "alice", map[string]any{"title": "Streets", "basemap": "Acetate", "extent": []float64{-40, 20, 20, 60}, "layers": []any{}})
	b.do("the map page", chromedp.Navigate(b.url+"/app"+path))
	waitMap(b)
	b.wait("the basemap loaded", `window.mcMap && window.mcMap.isStyleLoaded() && window.mcMap.areTilesLoaded()`)
	b.consoleBarrier()
	if got := eval[string](b, `JSON.stringify(window.mcMap.getStyle().sources.protomaps.tiles)`); got != `["`+b.url+`/basemap/pmtiles/world/{z}/{x}/{y}.mvt"]` {
		t.Errorf("the page's basemap source %s", got)
	}
	if n := eval[int](b, `window.mcMap.getStyle().layers.length`); n < 30 {
		t.Errorf("the page's style has %d layers: not Protomaps'", n)
	}
	if tiles.Load() == 0 {
		t.Error("the page asked for no PMTiles tile")
	}
	img := canvasImage(b, "map-pmtiles-canvas")
	b.screenshot("map-pmtiles")
	ratio := eval[float64](b, `window.devicePixelRatio`)
	near := func(c color.Color, hex uint32) bool {
		r, g, bl, _ := c.RGBA()
		d := func(a uint32, b uint32) bool { return int(a>>8)-int(b) <= 4 && int(b)-int(a>>8) <= 4 }
		return d(r, hex>>16&0xff) && d(g, hex>>8&0xff) && d(bl, hex&0xff)
	}
	const earth, water, background = 0xe2dfda, 0x80deea, 0xcccccc
	for _, p := range []struct {
		name     string
		lon, lat float64
		land     bool
	}{{"France", 2.5, 46.5, true}, {"Spain", -4, 40, true}, {"Algeria", 3, 30, true},
		{"the Atlantic", -30, 40, false}, {"the Atlantic off Africa", -30, 25, false}} {
		xy := eval[[]float64](b, fmt.Sprintf(`(p => [p.x, p.y])(window.mcMap.project([%g, %g]))`, p.lon, p.lat))
		c := img.At(int(xy[0]*ratio), int(xy[1]*ratio))
		if p.land && !near(c, earth) || !p.land && !near(c, water) && !near(c, background) {
			t.Errorf("%s (%g, %g) at %v: colour %v", p.name, p.lon, p.lat, xy, c)
		}
	}
	// A dataset's page draws the PMTiles basemap too.
	id := uploadNC(t, ts, "")
	before := tiles.Load()
	b.do("the dataset page", chromedp.Navigate(b.url+"/app/datasets/"+id))
	b.wait("the dataset's map drawn", `document.getElementById('map')?.dataset.state === 'idle' && window.mcMap && window.mcMap.areTilesLoaded()`)
	if got := eval[string](b, `JSON.stringify(window.mcMap.getStyle().sources.protomaps?.tiles ?? null)`); got != `["`+b.url+`/basemap/pmtiles/world/{z}/{x}/{y}.mvt"]` {
		t.Errorf("the dataset page's basemap source %s", got)
	}
	if tiles.Load() == before {
		t.Error("the dataset page asked for no PMTiles tile")
	}
	b.mu.Lock()
	if len(b.problems) > 0 {
		t.Errorf("console: %v", b.problems)
	}
	b.mu.Unlock()
	mu.Lock()
	if len(failed) > 0 {
		t.Errorf("basemap answers: %v", failed)
	}
	mu.Unlock()
}
