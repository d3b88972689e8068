package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"mapcommons"
	"mapcommons/api"
)

// rebuild replaces ts's handler with one on the same store whose Config
// and Services the test adjusts.
func (ts *testServer) rebuild(cfg func(*api.Config), svc func(*mapcommons.Services)) {
	c := api.Config{BaseURL: base, Mode: mapcommons.ModeHosted, Signup: true, MaxUpload: 64 << 20,
		TempDir: ts.tmp, BcryptCost: bcrypt.MinCost}
	if cfg != nil {
		cfg(&c)
	}
	s := ts.svc
	if svc != nil {
		svc(&s)
	}
	ts.handler = api.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), c, s)
}

// numbersCSV is a CSV dataset of n points with an integer "n" (the row
// number) and a float "x".
func numbersCSV(n int) []byte {
	var b strings.Builder
	b.WriteString("lat,lon,n,x\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%.4f,%.4f,%d,%g\n", float64(i%170)-85, float64(i%360)-180, i, float64(i*i%997)/7)
	}
	return []byte(b.String())
}

// timelessDatasets reads datasets without the request's deadline, so that
// a test sees the deadline end the feature scan itself.
type timelessDatasets struct{ mapcommons.DatasetService }

func (d timelessDatasets) FindDatasetByID(ctx context.Context, id int64) (*mapcommons.Dataset, error) {
	return d.DatasetService.FindDatasetByID(context.WithoutCancel(ctx), id)
}

// TestQueryTimeout: past Config.QueryTimeout (here 1 ns, so always) a
// feature query, a download, a map's classification and a search answer
// 503 with code "timeout"; other requests are not bounded.
func TestQueryTimeout(t *testing.T) {
	ts := newServer(t)
	must(t, ts.do(req{method: "POST", path: "/datasets.json?title=Numbers", user: "alice", ctype: "text/csv", body: numbersCSV(20000)}), 201)
	ts.createMap(t, "alice", "title=T&basemap=Acetate&layers[][source]=finder:1&layers[][styles][type]=CHOROPLETH"+
		"&layers[][styles][fill][selectedAttribute]=x&layers[][styles][fill][classificationType]=Jenks")
	for _, timeless := range []bool{false, true} {
		ts.rebuild(func(c *api.Config) { c.QueryTimeout = time.Nanosecond; c.ResponseCache = -1 }, func(s *mapcommons.Services) {
			if timeless {
				s.Datasets = timelessDatasets{s.Datasets}
			}
		})
		for _, path := range []string{
			"/datasets/1/features.json",
			"/datasets/1/features.json?limit=5000",
			"/datasets/1/features.json?filter[n][][min]=10",
			"/datasets/1/features.json?bbox=-10,-10,10,10",
			"/datasets/1/features.json?sort=x",
			"/datasets/1/features.json?group_by=n",
			"/datasets/1.csv",
			"/datasets/1.geojson",
			"/datasets/1.zip",
			"/datasets/1.json?include_features=1&limit=100",
			"/maps/1.json",
			"/maps/1/layers/0.json",
			"/maps/1/layers/0/features.json",
			"/search.json?q=numbers",
		} {
			if timeless && strings.HasPrefix(path, "/search") {
				continue
			}
			t.Run(fmt.Sprintf("%s/timeless=%v", path, timeless), func(t *testing.T) {
				w := ts.get(path, "alice")
				errorOf(t, w, http.StatusServiceUnavailable, "timeout", "--query-timeout")
				if w.Header().Get("Content-Disposition") != "" {
					t.Errorf("a failed download keeps Content-Disposition %q", w.Header().Get("Content-Disposition"))
				}
			})
		}
	}
	// Not bounded: reading a user, creating a dataset.
	must(t, ts.get("/users/alice.json", "alice"), 200)
	must(t, ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: "text/csv", body: numbersCSV(3)}), 201)
	// A generous bound changes nothing.
	ts.rebuild(func(c *api.Config) { c.QueryTimeout = time.Hour }, nil)
	must(t, ts.get("/datasets/1/features.json?filter[n][][min]=10", "alice"), 200)
	must(t, ts.get("/maps/1.json", "alice"), 200)
}

// cancellingFeatures cancels the request (the client goes away) when the
// first scan of features starts, and counts the scans.
type cancellingFeatures struct {
	mapcommons.FeatureService
	cancel func()
	scans  atomic.Int32
}

func (f *cancellingFeatures) ScanFeatures(ctx context.Context, id int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	f.scans.Add(1)
	f.cancel()
	return f.FeatureService.ScanFeatures(ctx, id, q, fn)
}

// tenLayers is the form of a map of ten CHOROPLETH layers, each classing
// another way (no two share a cached classification).
func tenLayers(title string) string {
	form := "title=" + title + "&basemap=Acetate"
	for i := 0; i < 10; i++ {
		form += "&layers[][source]=finder:1&layers[][styles][type]=CHOROPLETH&layers[][styles][fill][selectedAttribute]=x" +
			"&layers[][styles][fill][classificationType]=" + url.QueryEscape("Natural Breaks") + fmt.Sprintf("&layers[][styles][fill][categories]=%d", 2+i%6)
	}
	return form
}

// TestMapClassifyCancelled: a client that goes away while a map create or
// update classifies its layers stops the classification, and the map is
// neither created nor changed.
func TestMapClassifyCancelled(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	must(t, ts.do(req{method: "POST", path: "/datasets.json?title=Numbers", user: "alice", ctype: "text/csv", body: numbersCSV(20000)}), 201)
	ts.createMap(t, "alice", "title=Before&basemap=Acetate")

	feats := &cancellingFeatures{}
	ts.rebuild(nil, func(s *mapcommons.Services) { feats.FeatureService = s.Features; s.Features = feats })
	send := func(method, path, form string) *httptest.ResponseRecorder {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		feats.cancel = cancel
		hr := httptest.NewRequest(method, base+path, strings.NewReader(form)).WithContext(ctx)
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		hr.SetBasicAuth("alice", "secret1")
		w := httptest.NewRecorder()
		ts.handler.ServeHTTP(w, hr)
		return w
	}
	t.Run("Create", func(t *testing.T) {
		w := send("POST", "/maps.json", tenLayers("Ten"))
		if w.Code == http.StatusCreated {
			t.Fatalf("created after the client went away: %s", w.Header().Get("Location"))
		}
		if n := feats.scans.Load(); n != 1 {
			t.Errorf("%d layers classified after the client went away, want 1 begun", n)
		}
		must(t, ts.get("/maps/2.json", "alice"), http.StatusNotFound)
	})
	t.Run("Update", func(t *testing.T) {
		feats.scans.Store(0)
		w := send("PUT", "/maps/1.json", tenLayers("After"))
		if w.Code == http.StatusOK {
			t.Fatal("updated after the client went away")
		}
		if n := feats.scans.Load(); n != 1 {
			t.Errorf("%d layers classified after the client went away, want 1 begun", n)
		}
		// Read through a server that cancels nothing.
		ts.rebuild(nil, nil)
		doc := mapDoc(t, ts, "/maps/1", "alice")
		if doc["title"] != "Before" || len(doc["layers"].([]any)) != 0 {
			t.Fatalf("the map changed: %v, %d layers", doc["title"], len(doc["layers"].([]any)))
		}
	})
	t.Run("OK", func(t *testing.T) {
		// The same requests, with the client staying, classify every layer.
		path := ts.createMap(t, "alice", tenLayers("Ten"))
		doc := mapDoc(t, ts, path, "alice")
		for i, l := range doc["layers"].([]any) {
			cls := l.(map[string]any)["styles"].(map[string]any)["fill"].(map[string]any)["classification"].(map[string]any)
			if cls["classified"] != 20000.0 || len(cls["counts"].([]any)) != 2+i%6 {
				t.Fatalf("layer %d: %v", i, cls)
			}
		}
		w := ts.do(req{method: "PUT", path: "/maps/1.json", user: "alice", ctype: "application/x-www-form-urlencoded", body: []byte(tenLayers("After"))})
		must(t, w, 200)
	})
}

// TestQueryParameterLimits: what one query may carry, each over the limit
// a 400 naming the parameter; NaN and infinities are not numbers.
func TestQueryParameterLimits(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	must(t, ts.do(req{method: "POST", path: "/datasets.json?title=Numbers", user: "alice", ctype: "text/csv", body: numbersCSV(2000)}), 201)
	list := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, ",")
	}
	ring := func(n int) string { // a closed ring of n vertices (the first repeated last)
		return list(n-1, func(i int) string { return fmt.Sprintf("%.6f,%.6f", float64(i)/float64(n), float64(i%2)) }) + ",0.000000,0.000000"
	}
	ins := func(n int) string {
		return url.QueryEscape(strings.ReplaceAll(list(n, func(i int) string { return fmt.Sprint(i) }), ",", "|"))
	}
	for _, tc := range []struct {
		name, query  string
		status       int
		param, words string
	}{
		{"InMax", "filter[n][][in]=" + ins(mapcommons.MaxInValues), 200, "", ""},
		{"InTooMany", "filter[n][][in]=" + ins(mapcommons.MaxInValues+1), 400, "filter[n][][in]", "at most 1000"},
		{"InHundredThousand", "filter[n][][in]=" + ins(100000), 400, "filter[n][][in]", "at most 1000"},
		{"PolygonMax", "polygon=" + ring(mapcommons.MaxNearVertices), 200, "", ""},
		{"PolygonTooMany", "polygon=" + ring(mapcommons.MaxNearVertices+1), 400, "polygon", "at most 10000"},
		{"LineTooMany", "radius=1&line=" + list(mapcommons.MaxNearVertices+1, func(i int) string { return fmt.Sprintf("%d,1", i%180) }), 400, "line", "at most 10000"},
		{"PointsTooMany", "radius=1&points=" + list(mapcommons.MaxNearVertices+1, func(i int) string { return "1,1" }), 400, "points", "at most 10000"},
		{"PointsMax", "radius=1&points=" + list(mapcommons.MaxNearVertices, func(i int) string { return "1,1" }), 200, "", ""},
		{"MinNaN", "filter[n][][min]=NaN", 400, "filter[n][][min]", "not a number"},
		{"MaxNaN", "filter[x][][max]=nan", 400, "filter[x][][max]", "not a number"},
		{"EqualsInf", "filter[x][][equals]=Inf", 400, "filter[x][][equals]", "not a number"},
		{"MinMinusInf", "filter[n][min]=-Inf", 400, "filter[n][][min]", "not a number"},
		{"InNaN", "filter[n][][in]=1|NaN", 400, "filter[n][][in]", "not a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := ts.get("/datasets/1/features.json?limit=1&"+tc.query, "")
			if tc.status == 200 {
				must(t, w, 200)
				return
			}
			body := errorOf(t, w, tc.status, "invalid", tc.words)
			if msg := body["error"].(string); !strings.HasPrefix(msg, tc.param+":") {
				t.Fatalf("error %q does not start with %s", msg, tc.param)
			}
		})
	}
}

// countingFeatures counts the scans and the groupings of features.
type countingFeatures struct {
	mapcommons.FeatureService
	scans, groups atomic.Int32
}

func (f *countingFeatures) ScanFeatures(ctx context.Context, id int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	f.scans.Add(1)
	return f.FeatureService.ScanFeatures(ctx, id, q, fn)
}

func (f *countingFeatures) GroupFeatures(ctx context.Context, id int64, q *mapcommons.FeatureQuery) ([]mapcommons.Group, error) {
	f.groups.Add(1)
	return f.FeatureService.GroupFeatures(ctx, id, q)
}

// TestClassCache: classifications are cached by dataset version, attribute,
// method, classes and range (and Manual's breaks, Critical Value's value);
// options a method ignores, and the default number of classes spelt out,
// do not make another entry.
func TestClassCache(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	must(t, ts.do(req{method: "POST", path: "/datasets.json?title=Numbers", user: "alice", ctype: "text/csv", body: numbersCSV(3000)}), 201)
	feats := &countingFeatures{}
	ts.rebuild(nil, func(s *mapcommons.Services) { feats.FeatureService = s.Features; s.Features = feats })
	layer := func(attr, extra string) string {
		return "&layers[][source]=finder:1&layers[][styles][type]=CHOROPLETH&layers[][styles][fill][selectedAttribute]=" + attr + extra
	}
	jenks := "&layers[][styles][fill][classificationType]=Jenks"
	path := ts.createMap(t, "alice", "title=T&basemap=Acetate"+
		layer("x", jenks)+
		layer("x", jenks+"&layers[][styles][fill][categories]=5")+
		layer("x", "&layers[][styles][fill][classificationType]=natural_breaks&layers[][styles][fill][classificationBreaks]=1,2,3")+
		layer("x", jenks+"&layers[][styles][fill][criticalValue]=7"))
	if n := feats.scans.Load(); n != 1 {
		t.Fatalf("four layers classing alike: %d classifications, want 1", n)
	}
	mapDoc(t, ts, path, "alice")
	if n := feats.scans.Load(); n != 1 {
		t.Fatalf("the map read again: %d classifications, want 1", n)
	}
	for i, extra := range []string{
		jenks + "&layers[][styles][fill][categories]=4",                                                            // classes
		"&layers[][styles][fill][classificationType]=Quantile",                                                     // method
		jenks + "&layers[][styles][fill][range][]=0&layers[][styles][fill][range][]=50",                            // range
		"&layers[][styles][fill][classificationType]=Manual&layers[][styles][fill][classificationBreaks]=0,10,200", // Manual's breaks
	} {
		ts.createMap(t, "alice", "title=T&basemap=Acetate"+layer("x", jenks)+layer("x", extra))
		if n := feats.scans.Load(); n != int32(2+i) {
			t.Fatalf("%s: %d classifications, want %d", extra, n, 2+i)
		}
	}
	ts.createMap(t, "alice", "title=T&basemap=Acetate"+layer("n", jenks)) // attribute
	if n := feats.scans.Load(); n != 6 {
		t.Fatalf("another attribute: %d classifications, want 6", n)
	}
	// A change of the data (a new version) classes again.
	must(t, ts.do(req{method: "POST", path: "/datasets/1/features.json", user: "alice", ctype: "application/json",
		body: []byte(`{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"n":1,"x":2}}`)}), 201)
	mapDoc(t, ts, path, "alice")
	if n := feats.scans.Load(); n != 7 {
		t.Fatalf("after a change of the data: %d classifications, want 7", n)
	}
}

// TestLikeLongValue: a CQL2 LIKE of a 30 KB pattern over a 900 KB value
// answers, rightly: its cost is about their lengths, not their product.
func TestLikeLongValue(t *testing.T) {
	ts := newServer(t)
	long := strings.Repeat("a", 900<<10) + "b"
	must(t, ts.do(req{method: "POST", path: "/datasets.json?title=Long", user: "alice", ctype: "text/csv",
		body: []byte("lat,lon,s\n1,2," + long + "\n3,4,ab\n")}), 201)
	a30 := strings.Repeat("a", 30<<10)
	for pat, want := range map[string]string{"%" + a30 + "b%": `"numberMatched":1`, "%" + a30 + "c%": `"numberMatched":0`, "%b": `"numberMatched":2`} {
		body := string(must(t, ts.get("/ogc/collections/1/items?limit=3&filter="+url.QueryEscape("s LIKE '"+pat+"'"), "alice"), 200))
		if !strings.Contains(body, want) {
			t.Errorf("LIKE %.12q…: %.300s, want %s", pat, body, want)
		}
	}
}
