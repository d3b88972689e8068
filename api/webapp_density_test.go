package api_test

// Browser tests of text on the map: the built-in basemap's place labels
// (the server's glyphs) and the clusters of a big point layer, numbered.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"mapcommons/api"
)

// glyphLoads are the glyph ranges the page loaded, with their HTTP
// statuses.
func glyphLoads(b *browserTest) []string {
	b.t.Helper()
	return eval[[]string](b, `performance.getEntriesByType('resource').filter(e => e.name.includes('/basemap/fonts/'))
		.map(e => decodeURIComponent(new URL(e.name).pathname) + ' ' + e.responseStatus)`)
}

// TestWebBasemapLabels: the built-in basemap names its places, in the
// server's glyphs; a small point layer is drawn as before, no clusters.
func TestWebBasemapLabels(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	ds := ts.createCSV("?title=two", "name,lat,lon\nParis,48.86,2.35\nNew York,40.71,-74.01\n")
	b := browserOn(t, ts)
	b.do("the dataset page", chromedp.Navigate(b.url+"/app"+ds))
	b.wait("the map drawn", `document.getElementById('map').dataset.state === 'idle' && window.mcMap`)
	labels := eval[[]string](b, `[...new Set(window.mcMap.queryRenderedFeatures({ layers: ['place-labels'] }).map(f => f.properties.name))].sort()`)
	if len(labels) < 5 {
		t.Errorf("place labels drawn: %v", labels)
	}
	t.Logf("%d place labels drawn: %v", len(labels), labels)
	loads := glyphLoads(b)
	if len(loads) == 0 {
		t.Error("no glyphs loaded")
	}
	for _, l := range loads {
		if !strings.HasPrefix(l, "/basemap/fonts/Go Regular/") || !strings.HasSuffix(l, " 200") {
			t.Errorf("glyphs: %s", l)
		}
	}
	if eval[bool](b, `!!window.mcMap.getLayer('data-cluster')`) || eval[string](b, `document.getElementById('map-legend').textContent`) != "" {
		t.Error("a small layer drawn as clusters")
	}
	b.screenshot("basemap-labels")
	b.consoleBarrier()
	b.checkNoProblems()
}

// TestWebPointDensity: 20,000 points, drawn from the tiles, show as
// clusters sized and numbered by the points they stand for, on the
// dataset page and on a map of them, and the legend says so; a map whose
// layer asks for a heatmap draws one (coloured where the points are
// dense, giving way to the points close to), a small layer asking for
// clusters is clustered, and one asking for every point has no clusters.
func TestWebPointDensity(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	ds := ts.createCSV("?title=many", tilePointsCSV(20000))
	b := browserOn(t, ts)
	const note = "Clustered: circle size and number show how many points."
	type clusters struct {
		Clusters, Counts, Lone int
		Max                    float64
		Numbers                []string
	}
	read := func(layer string) clusters {
		return eval[clusters](b, fmt.Sprintf(`(() => {
			const m = window.mcMap, ids = m.getStyle().layers.map(l => l.id);
			const q = (suffix) => m.queryRenderedFeatures({ layers: ids.filter(l => l.startsWith('%[1]s') && l.endsWith(suffix)) });
			const c = q('-cluster'), n = q('-cluster-count');
			return { Clusters: c.length, Counts: n.length, Lone: q('-point').length,
				Max: Math.max(0, ...c.map(f => Number(f.properties.point_count))),
				Numbers: n.slice(0, 5).map(f => String(f.layer.layout['text-field'] ? f.properties.point_count : '')) };
		})()`, layer))
	}
	check := func(where string, c clusters) {
		t.Helper()
		// Random points over the world and a fifth of them in one square
		// degree: at the world's zoom, clusters of a few and one of
		// thousands.
		if c.Clusters < 50 || c.Counts == 0 || c.Max < 1000 {
			t.Errorf("%s: %+v", where, c)
		}
		t.Logf("%s: %d clusters (the largest %v points), %d numbers, %d lone points", where, c.Clusters, c.Max, c.Counts, c.Lone)
	}

	b.do("the dataset page", chromedp.Navigate(b.url+"/app"+ds))
	b.wait("the map drawn", `document.getElementById('map').dataset.state === 'idle' && window.mcMap`)
	check("dataset page", read("data"))
	if got := eval[string](b, `document.getElementById('map-legend').textContent`); got != note {
		t.Errorf("dataset page: legend %q", got)
	}
	if loads := glyphLoads(b); !strings.Contains(strings.Join(loads, ";"), "/basemap/fonts/Go Bold/0-255.pbf 200") {
		t.Errorf("the numbers' glyphs: %v", loads)
	}
	b.screenshot("density-dataset")

	id := strings.TrimPrefix(ds, "/datasets/")
	path := postMap(t, ts, "alice", map[string]any{"title": "Many points", "basemap": "builtin",
		"layers": []any{map[string]any{"source": "finder:" + id, "title": "Points", "opacity": 1,
			"styles": map[string]any{"type": "POINT", "icon": map[string]any{"color": "0x2b8cbe"}}}}})
	b.do("the map page", chromedp.Navigate(b.url+"/app"+path))
	waitMap(b)
	check("map page", read("mc"))
	if got := eval[string](b, `document.querySelector('li.legend-layer[data-layer="0"] .density')?.textContent || ''`); got != note {
		t.Errorf("map page: legend %q", got)
	}
	b.screenshot("density-map")

	// The same points as a heatmap (density: heatmap in any case), and a
	// small GeoJSON layer of 300 points asked to be clustered: MapLibre
	// clusters them.
	few := strings.TrimPrefix(ts.createCSV("?title=few", nearPointsCSV(300, -60, -20)), "/datasets/")
	const heatNote = "Heatmap: colour shows where points are dense."
	path = postMap(t, ts, "alice", map[string]any{"title": "Heat", "basemap": "builtin",
		"layers": []any{
			map[string]any{"source": "finder:" + id, "title": "Points", "opacity": 1,
				"styles": map[string]any{"type": "POINT", "density": "Heatmap", "icon": map[string]any{"color": "0x2b8cbe"}}},
			map[string]any{"source": "finder:" + few, "title": "Few", "opacity": 1,
				"styles": map[string]any{"type": "POINT", "density": "clusters", "icon": map[string]any{"color": "0x31a354"}}}}})
	b.do("the heatmap's page", chromedp.Navigate(b.url+"/app"+path))
	waitMap(b)
	type heat struct {
		Heatmaps, Heat, Points, FewClusters, FewMax int
		Dense                                       [2]float64
		Notes                                       []string
	}
	readHeat := func() heat {
		return eval[heat](b, `(() => {
			const m = window.mcMap, layers = m.getStyle().layers.filter(l => l.id.startsWith('mc'));
			const q = (f) => m.queryRenderedFeatures({ layers: layers.filter(f).map(l => l.id) });
			const heat = layers.filter(l => l.type === 'heatmap');
			const few = q(l => l.id.startsWith('mc1') && l.id.endsWith('-cluster'));
			const c = m.getCanvas(), k = c.width / c.clientWidth, p = m.project([10.5, 45.5]);
			return { Heatmaps: heat.length, Heat: heat.length ? q(l => l.id === heat[0].id).length : 0,
				Points: q(l => l.id.startsWith('mc0') && l.id.endsWith('-point')).length,
				FewClusters: few.length, FewMax: Math.max(0, ...few.map(f => Number(f.properties.point_count))),
				Dense: [p.x * k, p.y * k],
				Notes: [...document.querySelectorAll('li.legend-layer .density')].map(e => e.textContent) };
		})()`)
	}
	h := readHeat()
	t.Logf("heatmap page: %+v", h)
	if h.Heatmaps != 1 || h.Heat == 0 || h.Points != 0 {
		t.Errorf("the heatmap: %d heatmap layers drawing %d points, %d points drawn as symbols at the world's zoom", h.Heatmaps, h.Heat, h.Points)
	}
	if fmt.Sprint(h.Notes) != fmt.Sprint([]string{heatNote, note}) {
		t.Errorf("legend notes %q", h.Notes)
	}
	if h.FewClusters == 0 || h.FewMax < 10 {
		t.Errorf("the small layer's clusters: %d, the largest of %d points", h.FewClusters, h.FewMax)
	}
	// The dense square is coloured the heatmap's densest blue (the
	// layer's colour darkened); the land far from it is not.
	img := canvasImage(b, "density-heatmap-canvas")
	at := func(x, y float64) [3]int {
		r, g, bl, _ := img.At(int(x), int(y)).RGBA()
		return [3]int{int(r >> 8), int(g >> 8), int(bl >> 8)}
	}
	blue := func(c [3]int) bool { return c[2] > c[0]+40 && c[2] > 60 }
	dense := at(h.Dense[0], h.Dense[1])
	if !nearRGB(dense, [3]int{31, 85, 111}, 40) {
		t.Errorf("the dense square is %v, not the heatmap's densest colour", dense)
	}
	var around, coloured int
	for dy := -12.0; dy <= 12; dy += 2 {
		for dx := -12.0; dx <= 12; dx += 2 {
			around++
			if blue(at(h.Dense[0]+dx, h.Dense[1]+dy)) {
				coloured++
			}
		}
	}
	if coloured < around/3 {
		t.Errorf("%d of %d pixels around the dense square coloured by the heatmap", coloured, around)
	}
	b.screenshot("density-heatmap")
	// Close to, the heatmap has given way to the points' own symbols.
	b.do("zoom in", chromedp.Evaluate[chromedp.Void](`(() => { const m = window.mcMap;
		window.mcIdle = false; m.once('idle', () => { window.mcIdle = true }); m.jumpTo({center: [10.5, 45.5], zoom: 13.5}); })()`))
	b.wait("the map idle at zoom 13.5", `window.mcIdle === true`)
	if h := readHeat(); h.Heat != 0 || h.Points == 0 {
		t.Errorf("at zoom 13.5: %d points in the heatmap, %d symbols", h.Heat, h.Points)
	}
	b.screenshot("density-heatmap-close")

	// Every point: no clusters past 5,000, no heatmap, no note.
	path = postMap(t, ts, "alice", map[string]any{"title": "Every point", "basemap": "builtin",
		"layers": []any{map[string]any{"source": "finder:" + id, "title": "Points", "opacity": 1,
			"styles": map[string]any{"type": "POINT", "density": "none"}}}})
	b.do("the every-point page", chromedp.Navigate(b.url+"/app"+path))
	waitMap(b)
	c := read("mc")
	types := eval[[]string](b, `window.mcMap.getStyle().layers.filter(l => l.id.startsWith('mc')).map(l => l.type)`)
	if c.Clusters != 0 || c.Lone < 50 || strings.Contains(fmt.Sprint(types), "heatmap") {
		t.Errorf("every point: %+v, layers %v", c, types)
	}
	if n := eval[int](b, `document.querySelectorAll('li.legend-layer .density').length`); n != 0 {
		t.Errorf("every point: %d density notes", n)
	}
	b.consoleBarrier()
	b.checkNoProblems()
}

// nearPointsCSV is n points within a tenth of a degree of (lon, lat).
func nearPointsCSV(n int, lon, lat float64) string {
	var b strings.Builder
	b.WriteString("lon,lat,n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%.5f,%.5f,%d\n", lon+float64(i%17)/170, lat+float64(i%23)/230, i)
	}
	return b.String()
}
