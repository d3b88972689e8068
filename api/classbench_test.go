package api_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"

	"mapcommons/api"
)

// BenchmarkClassifyLayer measures one classification of a CHOROPLETH layer
// over a million features, end to end: each iteration changes the layer's
// range (so the cache does not answer), which reads the attribute of every
// feature, classifies them, stores the layer and answers with its classes.
//
//	go test -run X -bench ClassifyLayer -benchtime 5x ./api/
func BenchmarkClassifyLayer(b *testing.B) {
	ts := newServer(b, func(c *api.Config) { c.MaxUpload = 1 << 30 })
	var buf bytes.Buffer
	buf.WriteString("lon,lat,n,x\n")
	r := rand.New(rand.NewPCG(42, 1))
	for range 1_000_000 {
		fmt.Fprintf(&buf, "%.5f,%.5f,%d,%.6f\n", -180+360*r.Float64(), -85+170*r.Float64(), r.IntN(1000), math.Exp(r.NormFloat64()))
	}
	if w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: "text/csv", body: buf.Bytes()}); w.Code != 201 {
		b.Fatalf("ingest: %d %s", w.Code, w.Body.String())
	}
	id := "1"
	w := ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: "application/x-www-form-urlencoded",
		body: []byte("title=T&basemap=Acetate&layers[][source]=finder:" + id + "&layers[][styles][type]=CHOROPLETH" +
			"&layers[][styles][fill][selectedAttribute]=x&layers[][styles][fill][classificationType]=Quantile")})
	if w.Code != 201 {
		b.Fatalf("map: %d %s", w.Code, w.Body.String())
	}
	i := 0 // each request's range is new: the cache never answers
	for _, method := range []string{"Natural+Breaks", "Quantile", "Equal+Interval"} {
		for _, attr := range []string{"x", "n"} { // a million distinct values; a thousand
			b.Run(strings.ReplaceAll(method, "+", "")+"/"+attr, func(b *testing.B) {
				for b.Loop() {
					i++
					form := fmt.Sprintf("styles[fill][selectedAttribute]=%s&styles[fill][classificationType]=%s&styles[fill][categories]=7&styles[fill][range][]=-%d&styles[fill][range][]=1e9", attr, method, i)
					hr := httptest.NewRequest("PUT", base+"/maps/1/layers/0.json", strings.NewReader(form))
					hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					hr.SetBasicAuth("alice", "secret1")
					w := httptest.NewRecorder()
					ts.handler.ServeHTTP(w, hr)
					if w.Code != 200 || !strings.Contains(w.Body.String(), `"classified":1000000`) {
						b.Fatalf("%d %.300s", w.Code, w.Body.String())
					}
				}
			})
		}
	}
}
