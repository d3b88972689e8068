package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/api"
)

func gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gzip stream: %v", err)
	}
	return out
}

// pointsCSV is n points with a few attributes.
func pointsCSV(n int) []byte {
	var b bytes.Buffer
	b.WriteString("id,lon,lat,name\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d,%.5f,%.5f,point number %d\n", i, -170+float64(i%340), -80+float64(i%160)/2, i)
	}
	return b.Bytes()
}

// TestGzipNegotiated: text answers are gzip-encoded when Accept-Encoding
// takes gzip, decode to the plain answer, carry Vary: Accept-Encoding and
// no stale Content-Length; not when gzip is not asked for, refused with
// q=0, or the answer is small or binary.
func TestGzipNegotiated(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=pts", string(pointsCSV(500)))
	get := func(path, ae string) *httptest.ResponseRecorder {
		h := map[string]string{}
		if ae != "" {
			h["Accept-Encoding"] = ae
		}
		return ts.do(req{method: "GET", path: path, header: h})
	}
	for _, path := range []string{ds + "/features.json?limit=500", ds + "/features.geojson?limit=500", ds + ".csv", ds + ".kml", ds + ".geojson", ds + ".atom", ds + ".json"} {
		plain := get(path, "")
		must(t, plain, 200)
		if plain.Header().Get("Content-Encoding") != "" {
			t.Fatalf("%s: encoded without Accept-Encoding", path)
		}
		if !strings.Contains(strings.Join(plain.Header().Values("Vary"), ","), "Accept-Encoding") {
			t.Fatalf("%s: no Vary: Accept-Encoding on the plain answer: %v", path, plain.Header())
		}
		if plain.Body.Len() < 1024 {
			continue
		}
		for _, ae := range []string{"gzip", "gzip, deflate, br", "deflate;q=0.6, gzip;q=1.0, identity;q=0.3", "*", "x-gzip"} {
			z := get(path, ae)
			must(t, z, 200)
			if z.Header().Get("Content-Encoding") != "gzip" {
				t.Fatalf("%s (%q): Content-Encoding %q", path, ae, z.Header().Get("Content-Encoding"))
			}
			if cl := z.Header().Get("Content-Length"); cl != "" && cl != strconv.Itoa(z.Body.Len()) {
				t.Fatalf("%s: Content-Length %s, %d bytes sent", path, cl, z.Body.Len())
			}
			if !strings.Contains(strings.Join(z.Header().Values("Vary"), ","), "Accept-Encoding") {
				t.Fatalf("%s: no Vary: Accept-Encoding", path)
			}
			if got := gunzip(t, z.Body.Bytes()); !bytes.Equal(got, plain.Body.Bytes()) {
				t.Fatalf("%s: decoded body differs from the plain one (%d vs %d bytes)", path, len(got), plain.Body.Len())
			}
			if z.Body.Len() >= plain.Body.Len() {
				t.Fatalf("%s: %d bytes compressed, %d plain", path, z.Body.Len(), plain.Body.Len())
			}
		}
		for _, ae := range []string{"gzip;q=0", "identity", "br, deflate", "*;q=0", "*, gzip;q=0", "gzip;q=0.000"} {
			if z := get(path, ae); z.Header().Get("Content-Encoding") != "" || !bytes.Equal(z.Body.Bytes(), plain.Body.Bytes()) {
				t.Fatalf("%s (%q): encoded %q", path, ae, z.Header().Get("Content-Encoding"))
			}
		}
	}
	// Binary and already compressed formats go as they are.
	for _, path := range []string{ds + ".kmz", ds + ".zip", ds + ".gpkg"} {
		z := get(path, "gzip")
		must(t, z, 200)
		if z.Header().Get("Content-Encoding") != "" {
			t.Fatalf("%s: encoded %q", path, z.Header().Get("Content-Encoding"))
		}
	}
	// A small answer of known length is not worth it.
	small := get(ds+"/features.json?limit=1", "gzip")
	must(t, small, 200)
	if small.Header().Get("Content-Encoding") != "" || small.Header().Get("Content-Length") == "" {
		t.Fatalf("small answer: %v", small.Header())
	}
	// HEAD says what GET would, without a body.
	head := ts.do(req{method: "HEAD", path: ds + ".geojson", header: map[string]string{"Accept-Encoding": "gzip"}})
	if head.Code != 200 || head.Header().Get("Content-Encoding") != "gzip" || head.Body.Len() != 0 {
		t.Fatalf("HEAD: %d %v %d bytes", head.Code, head.Header(), head.Body.Len())
	}
	// Errors are answers too: a large enough error body would be encoded,
	// a small one is not, and both stay readable.
	nf := get("/datasets/999.json", "gzip")
	if nf.Code != 404 || nf.Header().Get("Content-Encoding") != "" && !bytes.Contains(gunzip(t, nf.Body.Bytes()), []byte("error")) {
		t.Fatalf("404: %d %v", nf.Code, nf.Header())
	}
}

// countingWriter records the writes that reach the connection.
type countingWriter struct {
	*httptest.ResponseRecorder
	writes, largest int
	// read counts the features the store has handed out; readAtFirst is
	// its count at the first write.
	read        *atomic.Int64
	readAtFirst int64
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if w.writes == 0 && w.read != nil {
		w.readAtFirst = w.read.Load()
	}
	w.writes++
	w.largest = max(w.largest, len(b))
	return w.ResponseRecorder.Write(b)
}

// readCounter counts the features its scans hand out.
type readCounter struct {
	mapcommons.FeatureService
	n atomic.Int64
}

func (f *readCounter) ScanFeatures(ctx context.Context, id int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	return f.FeatureService.ScanFeatures(ctx, id, q, func(ft *mapcommons.Feature) error {
		f.n.Add(1)
		return fn(ft)
	})
}

// TestGzipStreams: a large download compressed on the way out still
// streams: the connection gets many bounded writes, the first before half
// the features are read (counted as the store hands them out, not timed),
// not one buffered answer.
func TestGzipStreams(t *testing.T) {
	ts := newServer(t)
	n := raceCut(200_000) // under the race detector, still 6 MB of GeoJSON
	ds := ts.createCSV("?title=big", string(pointsCSV(n)))
	feats := &readCounter{}
	ts.rebuild(nil, func(s *mapcommons.Services) { feats.FeatureService = s.Features; s.Features = feats })
	for _, path := range []string{ds + ".geojson", ds + "/features.json?limit=10000"} {
		hr := httptest.NewRequest("GET", base+path, nil)
		hr.Header.Set("Accept-Encoding", "gzip")
		feats.n.Store(0)
		w := &countingWriter{ResponseRecorder: httptest.NewRecorder(), read: &feats.n}
		start := time.Now()
		ts.handler.ServeHTTP(w, hr)
		end := time.Now()
		must(t, w.ResponseRecorder, 200)
		if w.Header().Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: not encoded", path)
		}
		plain := gunzip(t, w.Body.Bytes())
		want := n
		if strings.Contains(path, "limit=") {
			want = 10000
		}
		if c := bytes.Count(plain, []byte(`"point number `)); c != want {
			t.Fatalf("%s: %d features decoded, want %d", path, c, want)
		}
		if w.writes < 20 || w.largest > 256<<10 {
			t.Fatalf("%s: %d writes, the largest %d bytes: not streamed", path, w.writes, w.largest)
		}
		if read := feats.n.Load(); read < int64(want) || w.readAtFirst > read/2 {
			t.Fatalf("%s: first bytes after %d of the %d features read", path, w.readAtFirst, read)
		}
		t.Logf("%s: %d plain bytes, %d gzip, %d writes (the first after %d features read), %v", path, len(plain), w.Body.Len(), w.writes, w.readAtFirst, end.Sub(start))
	}
}

// TestGzipRealClient: a real client that asks for gzip gets it over a
// connection and decodes the whole answer.
func TestGzipRealClient(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=pts", string(pointsCSV(2000)))
	srv := httptest.NewServer(ts.handler)
	defer srv.Close()
	// Go's client asks for gzip and decodes it by itself.
	resp, err := http.Get(srv.URL + ds + ".geojson")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !resp.Uncompressed || !bytes.Contains(body, []byte(`"point number 1999"`)) {
		t.Fatalf("uncompressed=%v, %d bytes", resp.Uncompressed, len(body))
	}
}

// BenchmarkGeoJSONDownload: the GeoJSON download of 1,000,000 points,
// plain and gzip-encoded as served (the handler alone, no network), and
// the plain answer compressed at gzip's default level for comparison
// (the random points of benchServer):
// go test -run '^$' -bench GeoJSONDownload -benchtime 3x ./api/
func BenchmarkGeoJSONDownload(b *testing.B) {
	ts := newServer(b, func(c *api.Config) { c.ResponseCache = -1; c.MaxUpload = 1 << 30 })
	// The schema and random points of benchServer's data set.
	var csv bytes.Buffer
	csv.WriteString("id,lon,lat,n,x,cat,label,ts\n")
	rnd := rand.New(rand.NewPCG(42, 1))
	for i := 1; i <= 1_000_000; i++ {
		fmt.Fprintf(&csv, "%d,%.6f,%.6f,%d,%.6f,c%d,%s,2020-01-01T00:00:00Z\n", i, -180+360*rnd.Float64(), -85+170*rnd.Float64(),
			rnd.IntN(1000), 1000*rnd.Float64(), rnd.IntN(10), "abcdefgh")
	}
	if w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: "text/csv", body: csv.Bytes()}); w.Code != 201 {
		b.Fatalf("ingest: %d %s", w.Code, w.Body.String())
	}
	ds := "/datasets/1"
	var plain []byte
	for _, ae := range []string{"", "gzip"} {
		b.Run("ae="+ae, func(b *testing.B) {
			var n int
			for b.Loop() {
				hr := httptest.NewRequest("GET", base+ds+".geojson", nil)
				if ae != "" {
					hr.Header.Set("Accept-Encoding", ae)
				}
				w := httptest.NewRecorder()
				ts.handler.ServeHTTP(w, hr)
				if w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body.String())
				}
				n = w.Body.Len()
				if ae == "" {
					plain = w.Body.Bytes()
				}
			}
			b.ReportMetric(float64(n), "bytes/answer")
		})
	}
	b.Run("stdlib-default-level", func(b *testing.B) {
		var n int
		for b.Loop() {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(plain)
			zw.Close()
			n = buf.Len()
		}
		b.ReportMetric(float64(n), "bytes/answer")
	})
}

// failingFeatures fails a scan after some features.
type failingFeatures struct {
	mapcommons.FeatureService
	after int
}

func (f failingFeatures) ScanFeatures(ctx context.Context, id int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	n := 0
	return f.FeatureService.ScanFeatures(ctx, id, q, func(ft *mapcommons.Feature) error {
		if n++; n > f.after {
			return errors.New("disk on fire")
		}
		return fn(ft)
	})
}

// TestGzipCutShort: a compressed download that fails after it began is
// cut (the adapter aborts) and its gzip stream is left unfinished, so the
// client's decoder reports the truncation instead of a short file.
func TestGzipCutShort(t *testing.T) {
	ts := newServer(t)
	ds := ts.createCSV("?title=big", string(pointsCSV(50_000)))
	ts.rebuild(nil, func(s *mapcommons.Services) { s.Features = failingFeatures{s.Features, 40_000} })
	hr := httptest.NewRequest("GET", base+ds+".geojson", nil)
	hr.Header.Set("Accept-Encoding", "gzip")
	w := httptest.NewRecorder()
	func() {
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Fatalf("panic %v, want ErrAbortHandler", v)
			}
		}()
		ts.handler.ServeHTTP(w, hr)
	}()
	if w.Code != 200 || w.Header().Get("Content-Encoding") != "gzip" || w.Body.Len() == 0 {
		t.Fatalf("%d %v, %d bytes", w.Code, w.Header(), w.Body.Len())
	}
	zr, err := gzip.NewReader(bytes.NewReader(w.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("decoding the cut answer: %v, want unexpected EOF", err)
	}
	if !bytes.HasPrefix(got, []byte(`{"type":"FeatureCollection"`)) {
		t.Fatalf("decoded %.60q", got)
	}
}

// BenchmarkCachedFeatureAnswer: a feature answer served from the response
// cache (about 55 KB of JSON, under what streams), plain and gzip-encoded on the way out: what
// keeping only the plain form in the cache costs a client that takes gzip.
// go test -run '^$' -bench CachedFeatureAnswer ./api/
func BenchmarkCachedFeatureAnswer(b *testing.B) {
	ts := newServer(b)
	ds := ts.createCSV("?title=pts", string(pointsCSV(2000)))
	for _, ae := range []string{"", "gzip"} {
		b.Run("ae="+ae, func(b *testing.B) {
			var n int
			for b.Loop() {
				hr := httptest.NewRequest("GET", base+ds+"/features.json?limit=600", nil)
				if ae != "" {
					hr.Header.Set("Accept-Encoding", ae)
				}
				w := httptest.NewRecorder()
				ts.handler.ServeHTTP(w, hr)
				if w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body.String())
				}
				n = w.Body.Len()
			}
			b.ReportMetric(float64(n), "bytes/answer")
		})
	}
}

// TestGzipFromCache: a repeated feature query served from the response
// cache goes to a client that takes gzip in the gzip form kept with it,
// with its Content-Length, decoding to the plain answer; others get the
// plain form.
func TestGzipFromCache(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=pts", string(pointsCSV(500)))
	path := ds + "/features.json?limit=400"
	gz := map[string]string{"Accept-Encoding": "gzip"}
	first := ts.do(req{method: "GET", path: path, header: gz}) // runs the query, fills the cache
	must(t, first, 200)
	if first.Header().Get("Content-Length") != "" {
		t.Fatalf("first answer (compressed as it streams) has a length: %v", first.Header())
	}
	hit := ts.do(req{method: "GET", path: path, header: gz})
	must(t, hit, 200)
	if hit.Header().Get("Content-Encoding") != "gzip" || hit.Header().Get("Content-Length") != strconv.Itoa(hit.Body.Len()) ||
		!strings.Contains(strings.Join(hit.Header().Values("Vary"), ","), "Accept-Encoding") {
		t.Fatalf("cached gzip answer: %v, %d bytes", hit.Header(), hit.Body.Len())
	}
	plain := ts.get(path, "")
	must(t, plain, 200)
	if plain.Header().Get("Content-Encoding") != "" || plain.Header().Get("Content-Length") != strconv.Itoa(plain.Body.Len()) {
		t.Fatalf("cached plain answer: %v", plain.Header())
	}
	if !bytes.Equal(gunzip(t, hit.Body.Bytes()), plain.Body.Bytes()) || !bytes.Equal(gunzip(t, first.Body.Bytes()), plain.Body.Bytes()) {
		t.Fatal("the gzip forms do not decode to the plain answer")
	}
}
