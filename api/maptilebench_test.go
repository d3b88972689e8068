package api_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"mapcommons/api"
)

// BenchmarkMapTile draws (image and tile caches off) PNG map tiles of
// zooms 0 to 4 and 12 of 200,000 random points (tilePointsCSV) through
// the API, as BenchmarkTile makes their vector tiles.
func BenchmarkMapTile(b *testing.B) {
	ts := newServer(b, func(c *api.Config) { c.TileCache = -1; c.ResponseCache = -1 })
	id := strings.TrimPrefix(ts.createCSV("?title=points", tilePointsCSV(200_000)), "/datasets/")
	for _, tc := range []struct {
		name    string
		z, y, x int
	}{{"z0", 0, 0, 0}, {"z2", 2, 1, 2}, {"z4", 4, 5, 8}, {"z12", 12, tileRowOf(45.5, 12), tileColOf(10.5, 12)}} {
		b.Run(tc.name, func(b *testing.B) {
			p := fmt.Sprintf("/ogc/collections/%s/map/tiles/WebMercatorQuad/%d/%d/%d", id, tc.z, tc.y, tc.x)
			start := cpuTime()
			for b.Loop() {
				if w := ts.get(p, ""); w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's CPU time so far, user and system, in ns: the
// measure of a benchmark on a machine other work shares.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
