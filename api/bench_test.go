package api_test

import (
	"bytes"
	"fmt"
	"mapcommons/api"
	"math/rand/v2"
	"net/http/httptest"
	"testing"
)

// benchServer is a server with n random points (the schema of the
// benchmark data set), shared by the benchmarks of one run.
func benchServer(b *testing.B, n int) (*testServer, string) {
	b.Helper()
	ts := newServer(b, func(c *api.Config) { c.ResponseCache = -1 }) // measure the queries, not the cache
	var buf bytes.Buffer
	buf.WriteString("id,lon,lat,n,x,cat,label,ts\n")
	r := rand.New(rand.NewPCG(42, 1))
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&buf, "%d,%.6f,%.6f,%d,%.6f,c%d,%s,2020-01-01T00:00:00Z\n", i, -180+360*r.Float64(), -85+170*r.Float64(),
			r.IntN(1000), 1000*r.Float64(), r.IntN(10), "abcdefgh")
	}
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: "text/csv", body: buf.Bytes()})
	if w.Code != 201 {
		b.Fatalf("ingest: %d %s", w.Code, w.Body.String())
	}
	return ts, "/datasets/1"
}

// BenchmarkFeatureQueries measures the handler alone (no network) on
// 200,000 points: go test -bench FeatureQueries -benchmem ./api/
func BenchmarkFeatureQueries(b *testing.B) {
	ts, ds := benchServer(b, 200000)
	for _, q := range []struct{ name, path string }{
		{"BBoxPage", "/features.json?bbox=5,40,15,50&limit=30"},
		{"BBoxPageGeoJSON", "/features.json?bbox=5,40,15,50&limit=30&geojson=1"},
		{"Radius100km", "/features.json?lat=45&lon=10&radius=100&with_distance=1&limit=30"},
		{"FilterEquals", "/features.json?filter[cat][][equals]=c3&limit=30"},
		{"GroupByInBBox", "/features.json?group_by[]=cat&aggregates[][name]=x&aggregates[][calc]=average&bbox=5,40,15,50"},
		{"OneByID", "/features.json?filter[id][][equals]=123456"},
		{"OneByPosition", "/features.json?start=100000&limit=1"},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				hr := httptest.NewRequest("GET", base+ds+q.path, nil)
				w := httptest.NewRecorder()
				ts.handler.ServeHTTP(w, hr)
				if w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body.String())
				}
			}
		})
	}
}
