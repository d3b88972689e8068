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
// dataset page and on a map of them, and the legend says so.
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
	b.consoleBarrier()
	b.checkNoProblems()
}
