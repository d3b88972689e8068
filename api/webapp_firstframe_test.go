package api_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"mapcommons/api"
)

// BenchmarkMapFirstFrame measures a map page in headless Chromium as a
// first visit finds it (the browser's cache off): the time from the
// navigation to the map drawn whole (the page's performance mark
// mc-map-drawn, MapLibre idle with every layer; and to the first frame
// with the map's first layer loaded, mc-first-layer), for the choropleth of
// the 100 counties and for a map of a million points
// (MAPCOMMONS_BENCH_POINTS sets how many); and beside it, in the same
// run, the server's PNG of the same map at the size of the page's map
// (the image cache off), in wall time and in CPU.
//
//	go test -run '^$' -bench MapFirstFrame -benchtime 10x ./api/
func BenchmarkMapFirstFrame(b *testing.B) {
	ts := newServer(b, func(c *api.Config) { c.BaseURL = ""; c.TileCache = -1; c.ResponseCache = -1 })
	body, ct := multipartBody(b, ncFiles("dataset"), map[string]string{"title": "North Carolina counties"})
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
	must(b, w, 201)
	counties := regexp.MustCompile(`/datasets/(\d+)\.json$`).FindStringSubmatch(w.Header().Get("Location"))[1]
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("MAPCOMMONS_BENCH_POINTS")); err == nil && v > 0 {
		n = v
	}
	points := strings.TrimPrefix(ts.createCSV("?title=points", tilePointsCSV(n)), "/datasets/")
	maps := []struct{ name, path string }{
		{"counties", createChoroplethMap(b, ts, "alice", counties)},
		{fmt.Sprintf("points%dk", n/1000), postMap(b, ts, "alice", map[string]any{"title": "Points", "basemap": "Acetate",
			"layers": []any{map[string]any{"source": "finder:" + points, "title": "Points", "opacity": 1,
				"styles": map[string]any{"type": "POINT"}}}})},
	}
	br := browserOn(b, ts)
	br.do("the cache off", func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
			return chromedp.Void{}, err
		}
		_, err := cdp.Call(ctx, t, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true})
		return chromedp.Void{}, err
	})
	for _, m := range maps {
		b.Run(m.name, func(b *testing.B) {
			br.t = b
			var drawn, first []float64
			var width, height int
			for b.Loop() {
				br.load("the map page", chromedp.Navigate(br.url+"/app"+m.path))
				br.wait("the map drawn", `performance.getEntriesByName('mc-map-drawn').length > 0`)
				drawn = append(drawn, eval[float64](br, `performance.getEntriesByName('mc-map-drawn')[0].startTime`))
				first = append(first, eval[float64](br, `performance.getEntriesByName('mc-first-layer')[0].startTime`))
				size := eval[[]int](br, `(r => [Math.round(r.width), Math.round(r.height)])(document.getElementById('map').getBoundingClientRect())`)
				width, height = size[0], size[1]
			}
			b.ReportMetric(median(drawn), "browser-ms")
			b.ReportMetric(median(first), "first-layer-ms")
			// The server's image of the map at the page's size.
			var wall []float64
			start := cpuTime()
			for range 10 {
				t0 := time.Now()
				must(b, ts.get(fmt.Sprintf("%s.png?width=%d&height=%d", m.path, width, height), ""), 200)
				wall = append(wall, float64(time.Since(t0).Microseconds())/1000)
			}
			b.ReportMetric(median(wall), "server-ms")
			b.ReportMetric(float64(cpuTime()-start)/10/1e6, "server-cpu-ms")
		})
	}
}

// median is the middle of vs (the mean of the two middle ones).
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(vs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
