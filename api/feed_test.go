package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/internal/pgtest"
	"mapcommons/storetest"
)

// remote is a web server the tests register URLs from; its answers can be
// changed between requests.
type remote struct {
	*httptest.Server
	mu    sync.Mutex
	pages map[string]remotePage
	hits  map[string]int
	// onHit, when set, is called at each request, with its path, before
	// the answer.
	onHit func(path string)
}

type remotePage struct {
	status int
	ctype  string
	body   string
}

func newRemote(t *testing.T) *remote {
	rm := &remote{pages: map[string]remotePage{}, hits: map[string]int{}}
	rm.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rm.mu.Lock()
		p, ok := rm.pages[r.URL.Path]
		rm.hits[r.URL.Path]++
		onHit := rm.onHit
		rm.mu.Unlock()
		if onHit != nil {
			onHit(r.URL.Path)
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		if p.ctype != "" {
			w.Header().Set("Content-Type", p.ctype)
		}
		if p.status != 0 {
			w.WriteHeader(p.status)
		}
		w.Write([]byte(p.body))
	}))
	t.Cleanup(rm.Close)
	return rm
}

func (rm *remote) set(path string, p remotePage) {
	rm.mu.Lock()
	rm.pages[path] = p
	rm.mu.Unlock()
}

func (rm *remote) count(path string) int {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.hits[path]
}

func allowPrivate(c *api.Config) { c.AllowPrivateFetch = true }

func TestDatasetFromURL(t *testing.T) {
	t.Parallel()
	ts := newServer(t, allowPrivate, func(c *api.Config) { c.EagerThumbnails = true })
	rm := newRemote(t)
	rm.set("/stations.csv", remotePage{ctype: "text/csv", body: "name,lat,lon\na,1,2\nb,3,4\n"})
	rm.set("/data", remotePage{ctype: "application/octet-stream", body: "name,lat,lon\nc,5,6\n"})
	rm.set("/broken", remotePage{status: 500, body: "oops"})
	rm.set("/garbage.csv", remotePage{ctype: "text/csv", body: "name,lat,lon\na,north,2\n"})
	rm.set("/big.csv", remotePage{ctype: "text/csv", body: "name,lat,lon\n" + strings.Repeat("a,1,2\n", 200)})
	enc := url.QueryEscape

	var feedPath string
	t.Run("OK", func(t *testing.T) {
		w := ts.do(req{method: "POST", path: "/datasets.json?type=csv&title=Stations&url=" + enc(rm.URL+"/stations.csv"), user: "alice", ctype: "application/xml"})
		must(t, w, http.StatusCreated)
		feedPath = strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
		doc := decode[map[string]any](t, must(t, ts.get(feedPath+".json", ""), 200))
		if doc["title"] != "Stations" || doc["data_type"] != "Data Feed" || doc["url"] != rm.URL+"/stations.csv" ||
			doc["url_type"] != "csv" || doc["feature_count"] != 2.0 || doc["state"] != "complete" || doc["last_fetch_error"] != nil {
			t.Fatalf("dataset: %v", doc)
		}
		feats := decode[[]map[string]any](t, must(t, ts.get(feedPath+"/features.json", ""), 200))
		if len(feats) != 2 || feats[1]["name"] != "b" {
			t.Fatalf("features: %v", feats)
		}
	})
	t.Run("OKRegisteredOnce", func(t *testing.T) {
		before := rm.count("/stations.csv")
		w := ts.do(req{method: "POST", path: "/datasets.json?url=" + enc(rm.URL+"/stations.csv"), user: "bob"})
		must(t, w, http.StatusOK)
		if loc := w.Header().Get("Location"); loc != base+feedPath+".json" {
			t.Fatalf("Location %q, want the existing %s", loc, feedPath)
		}
		if rm.count("/stations.csv") != before {
			t.Error("a registered URL was fetched again")
		}
	})
	t.Run("OKRegisteredOnceWhateverTheSpelling", func(t *testing.T) {
		before := rm.count("/stations.csv")
		host := strings.TrimPrefix(rm.URL, "http://")
		for _, link := range []string{
			rm.URL + "/stations.csv?", rm.URL + "/stations.csv#x", rm.URL + "//stations.csv", rm.URL + "/./stations.csv",
			rm.URL + "/%73tations.csv", rm.URL + "/x/../stations.csv", "HTTP://" + strings.ToUpper(host) + "/stations.csv",
		} {
			w := ts.do(req{method: "POST", path: "/datasets.json?url=" + enc(link), user: "bob"})
			must(t, w, http.StatusOK)
			if loc := w.Header().Get("Location"); loc != base+feedPath+".json" {
				t.Errorf("%s: Location %q, want the existing %s", link, loc, feedPath)
			}
		}
		if rm.count("/stations.csv") != before {
			t.Error("a registered URL was fetched again")
		}
	})
	t.Run("OKGuessedAndJSONBody", func(t *testing.T) {
		// OGP sends a JSON body; the remote says octet-stream and the path
		// has no extension: the content decides.
		body := `{"url": "` + rm.URL + `/data", "title": "Guessed", "tags": "a b"}`
		w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: "application/json", body: []byte(body)})
		must(t, w, http.StatusCreated)
		doc := decode[map[string]any](t, must(t, ts.get(strings.TrimPrefix(w.Header().Get("Location"), base), ""), 200))
		if doc["url_type"] != "csv" || doc["feature_count"] != 1.0 || doc["title"] != "Guessed" {
			t.Fatalf("dataset: %v", doc)
		}
	})
	t.Run("OKServiceWithoutFeatures", func(t *testing.T) {
		for typ, dataType := range map[string]string{"wms": "WMS", "tile": "Tiles"} {
			w := ts.do(req{method: "POST", path: "/datasets.json?type=" + typ + "&url=" + enc("http://tiles.invalid/"+typ+"/{Z}/{X}/{Y}.png"), user: "alice"})
			must(t, w, http.StatusCreated)
			doc := decode[map[string]any](t, must(t, ts.get(strings.TrimPrefix(w.Header().Get("Location"), base), ""), 200))
			if doc["data_type"] != dataType || doc["feature_count"] != 0.0 || doc["title"] != "Untitled" {
				t.Fatalf("%s: %v", typ, doc)
			}
		}
	})
	t.Run("OKRefetch", func(t *testing.T) {
		rm.set("/stations.csv", remotePage{ctype: "text/csv", body: "name,lat,lon,height\nx,1,2,10\ny,3,4,20\nz,5,6,30\n"})
		for _, method := range []string{"PUT", "GET"} {
			doc := decode[map[string]any](t, must(t, ts.do(req{method: method, path: feedPath + "/fetch.json", user: "alice"}), 200))
			if doc["feature_count"] != 3.0 || doc["state"] != "complete" {
				t.Fatalf("%s fetch: %v", method, doc)
			}
		}
		feats := decode[[]map[string]any](t, must(t, ts.get(feedPath+"/features.json", ""), 200))
		if len(feats) != 3 || feats[2]["height"] != 30.0 {
			t.Fatalf("features after refetch: %v", feats)
		}
		// A page's GET (a map's url: layer naming this URL, say) refetches
		// nothing, even with the owner's saved Basic credentials and from
		// this server's own pages; a typed address (none) still does.
		rm.set("/stations.csv", remotePage{ctype: "text/csv", body: "name,lat,lon,height\nx,1,2,10\n"})
		for site, msg := range map[string]string{"same-origin": "not made from a page", "same-site": "cross-site", "cross-site": "cross-site"} {
			errorOf(t, ts.do(req{method: "GET", path: feedPath + "/fetch.json", user: "alice", header: map[string]string{"Sec-Fetch-Site": site}}),
				403, "forbidden", msg)
		}
		if doc := datasetDoc(t, ts, feedPath, "alice"); doc["feature_count"] != 3.0 {
			t.Fatalf("a page's GET refetched: %v features", doc["feature_count"])
		}
		must(t, ts.do(req{method: "GET", path: feedPath + "/fetch.json", user: "alice", header: map[string]string{"Sec-Fetch-Site": "none"}}), 200)
		rm.set("/stations.csv", remotePage{ctype: "text/csv", body: "name,lat,lon,height\nx,1,2,10\ny,3,4,20\nz,5,6,30\n"})
		must(t, ts.do(req{method: "GET", path: feedPath + "/fetch.json", user: "alice"}), 200)
	})
	t.Run("ErrRefetchFailsKeepsData", func(t *testing.T) {
		rm.set("/stations.csv", remotePage{status: 503, body: "down"})
		errorOf(t, ts.do(req{method: "PUT", path: feedPath + "/fetch.json", user: "alice"}), 502, "upstream", "503")
		doc := decode[map[string]any](t, must(t, ts.get(feedPath+".json", ""), 200))
		if doc["state"] != "fetch_failed" || !strings.Contains(doc["last_fetch_error"].(string), "503") || doc["feature_count"] != 3.0 {
			t.Fatalf("after a failed refetch: %v", doc)
		}
		if n := len(decode[[]map[string]any](t, must(t, ts.get(feedPath+"/features.json", ""), 200))); n != 3 {
			t.Fatalf("%d features after a failed refetch", n)
		}
		rm.set("/stations.csv", remotePage{ctype: "text/csv", body: "name,lat,lon\nbad,north,2\n"})
		errorOf(t, ts.do(req{method: "PUT", path: feedPath + "/fetch.json", user: "alice"}), 502, "upstream", "row 1")
		// A good refetch clears the error.
		rm.set("/stations.csv", remotePage{ctype: "text/csv", body: "name,lat,lon\nok,1,2\n"})
		doc = decode[map[string]any](t, must(t, ts.do(req{method: "PUT", path: feedPath + "/fetch.json", user: "admin"}), 200))
		if doc["state"] != "complete" || doc["last_fetch_error"] != nil || doc["feature_count"] != 1.0 {
			t.Fatalf("after a good refetch: %v", doc)
		}
	})
	t.Run("ErrRefetchNotAllowed", func(t *testing.T) {
		errorOf(t, ts.do(req{method: "PUT", path: feedPath + "/fetch.json"}), 401, "unauthorized", "")
		errorOf(t, ts.do(req{method: "PUT", path: feedPath + "/fetch.json", user: "bob"}), 403, "forbidden", "")
		upload := ts.createCSV("", "lat,lon\n1,2\n")
		errorOf(t, ts.do(req{method: "PUT", path: upload + "/fetch.json", user: "alice"}), 400, "invalid", "not registered from a URL")
	})
	t.Run("RefreshFeeds", func(t *testing.T) {
		rm.set("/stations.csv", remotePage{ctype: "text/csv", body: "name,lat,lon\nr1,1,2\nr2,1,2\nr3,1,2\nr4,1,2\n"})
		// An hour later, by a refresh every hour.
		ts.store.setNow(func() time.Time { return time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC) })
		ts.handler.(*api.Server).RefreshFeeds(t.Context(), time.Hour)
		doc := decode[map[string]any](t, must(t, ts.get(feedPath+".json", ""), 200))
		if doc["feature_count"] != 4.0 {
			t.Fatalf("after RefreshFeeds: %v", doc)
		}
		// Its thumbnail drawn after the refresh, as after a request.
		srv := ts.handler.(*api.Server)
		srv.WaitThumbnails()
		before := srv.Draws()
		decodePNG(t, ts.get(feedPath+".png?width=120&height=90", ""))
		if d := srv.Draws() - before; d != 0 {
			t.Errorf("the refreshed feed's thumbnail drew %d images when asked", d)
		}
	})
	for _, c := range []struct {
		name, query string
		status      int
		code, want  string
	}{
		{"ErrRemoteError", "url=" + enc(rm.URL+"/broken"), 502, "upstream", "500"},
		{"ErrRemoteMissing", "url=" + enc(rm.URL+"/nothing.csv"), 502, "upstream", "404"},
		{"ErrRemoteBadData", "url=" + enc(rm.URL+"/garbage.csv"), 502, "upstream", "row 1"},
		{"ErrBadType", "type=pdf&url=" + enc(rm.URL+"/stations.csv"), 400, "invalid", "type"},
		{"ErrScheme", "url=" + enc("file:///etc/passwd"), 400, "invalid", "only http"},
		{"ErrEmpty", "url=", 400, "invalid", "url"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, before := countDatasets(t, ts)
			errorOf(t, ts.do(req{method: "POST", path: "/datasets.json?" + c.query, user: "alice"}), c.status, c.code, c.want)
			if _, after := countDatasets(t, ts); after != before {
				t.Fatalf("a failed registration left a dataset (%d, was %d)", after, before)
			}
		})
	}
	t.Run("ErrTooLarge", func(t *testing.T) {
		small := newServer(t, allowPrivate, func(c *api.Config) { c.MaxUpload = 500 })
		errorOf(t, small.do(req{method: "POST", path: "/datasets.json?url=" + enc(rm.URL+"/big.csv"), user: "alice"}), 413, "too_large", "limit")
	})
	t.Run("ErrPrivateRefused", func(t *testing.T) {
		strict := newServer(t)
		errorOf(t, strict.do(req{method: "POST", path: "/datasets.json?url=" + enc(rm.URL+"/stations.csv"), user: "alice"}), 400, "invalid", "private")
		if _, n := countDatasets(t, strict); n != 0 {
			t.Fatalf("%d datasets", n)
		}
	})
}

// countDatasets returns the datasets in the store and how many there are.
func countDatasets(t *testing.T, ts *testServer) ([]*mapcommons.Dataset, int) {
	t.Helper()
	list, total, err := ts.svc.Datasets.FindDatasets(t.Context(), mapcommons.DatasetFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return list, total
}

// TestFeedFormats registers URLs serving KML, KMZ, Atom, RSS, GeoJSON and a
// zipped shapefile, typed or guessed, and refetches an Atom feed that
// changed.
func TestFeedFormats(t *testing.T) {
	t.Parallel()
	ts := newServer(t, allowPrivate)
	rm := newRemote(t)
	kmlDoc := `<kml xmlns="http://www.opengis.net/kml/2.2"><Document><Placemark><name>a</name><Point><coordinates>1,2</coordinates></Point></Placemark>` +
		`<Placemark><name>b</name><Point><coordinates>3,4</coordinates></Point></Placemark></Document></kml>`
	entry := func(title, point string) string {
		return `<entry><title>` + title + `</title><id>` + title + `</id><updated>2011-03-10T15:33:00Z</updated><georss:point>` + point + `</georss:point></entry>`
	}
	atomDoc := func(entries ...string) string {
		return `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" xmlns:georss="http://www.georss.org/georss"><title>Quakes</title>` +
			strings.Join(entries, "") + `</feed>`
	}
	rss := `<rss version="2.0" xmlns:geo="http://www.w3.org/2003/01/geo/wgs84_pos#"><channel><title>t</title>` +
		`<item><title>x</title><geo:lat>10</geo:lat><geo:long>20</geo:long></item></channel></rss>`
	shp := map[string][]byte{}
	for _, ext := range []string{"shp", "shx", "dbf", "prj"} {
		b, err := os.ReadFile(realData + "nc." + ext)
		if err != nil {
			t.Fatal(err)
		}
		shp["nc."+ext] = b
	}
	rm.set("/places.kml", remotePage{ctype: "application/vnd.google-earth.kml+xml", body: kmlDoc})
	rm.set("/places", remotePage{ctype: "text/xml", body: kmlDoc})
	rm.set("/places.kmz", remotePage{ctype: "application/octet-stream", body: string(zipOf(t, map[string][]byte{"doc.kml": []byte(kmlDoc)}))})
	rm.set("/quakes", remotePage{ctype: "application/atom+xml", body: atomDoc(entry("q1", "1 2"), entry("q2", "3 4"))})
	rm.set("/news.rss", remotePage{ctype: "text/xml", body: rss})
	rm.set("/pts.json", remotePage{ctype: "application/json", body: `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"a":1},"geometry":{"type":"Point","coordinates":[1,2]}}]}`})
	rm.set("/counties.zip", remotePage{ctype: "application/zip", body: string(zipOf(t, shp))})
	for _, c := range []struct {
		path, typ, wantType string
		count               float64
	}{
		{"/places.kml", "", "kml", 2}, {"/places", "kml", "kml", 2}, {"/places.kmz", "", "kmz", 2},
		{"/quakes", "", "atom", 2}, {"/news.rss", "rss", "atom", 1}, {"/pts.json", "", "geojson", 1},
		{"/counties.zip", "", "shp", 100},
	} {
		t.Run(strings.TrimPrefix(c.path, "/"), func(t *testing.T) {
			q := "/datasets.json?url=" + url.QueryEscape(rm.URL+c.path)
			if c.typ != "" {
				q += "&type=" + c.typ
			}
			w := ts.do(req{method: "POST", path: q, user: "alice"})
			must(t, w, http.StatusCreated)
			doc := decode[map[string]any](t, must(t, ts.get(strings.TrimPrefix(w.Header().Get("Location"), base), ""), 200))
			if doc["feature_count"] != c.count || doc["url_type"] != c.wantType || doc["data_type"] != "Data Feed" {
				t.Fatalf("dataset %v", doc)
			}
		})
	}
	t.Run("RefetchAtom", func(t *testing.T) {
		w := ts.do(req{method: "POST", path: "/datasets.json?url=" + url.QueryEscape(rm.URL+"/quakes"), user: "alice"})
		path := strings.TrimSuffix(strings.TrimPrefix(must2(t, w, http.StatusOK), base), ".json")
		rm.set("/quakes", remotePage{ctype: "application/atom+xml", body: atomDoc(entry("q1", "1 2"), entry("q2", "3 4"), entry("q3", "5 6"))})
		must(t, ts.do(req{method: "PUT", path: path + "/fetch.json", user: "alice"}), http.StatusOK)
		if doc := decode[map[string]any](t, must(t, ts.get(path+".json", ""), 200)); doc["feature_count"] != 3.0 {
			t.Fatalf("after refetch %v", doc)
		}
	})
}

// must2 asserts the status of w and returns its Location.
func must2(t *testing.T, w *httptest.ResponseRecorder, status int) string {
	t.Helper()
	must(t, w, status)
	return w.Header().Get("Location")
}

// TestFeedAppliance: on an appliance a feed is private like any dataset: a
// second registration of its URL by someone it is not shared with learns
// only that the URL is taken; the owner refetches, a group with edit too.
func TestFeedAppliance(t *testing.T) {
	t.Parallel()
	ts := newServer(t, allowPrivate, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	rm := newRemote(t)
	rm.set("/s.csv", remotePage{ctype: "text/csv", body: "name,lat,lon\na,1,2\n"})
	link := "/datasets.json?url=" + url.QueryEscape(rm.URL+"/s.csv")
	w := ts.do(req{method: "POST", path: link, user: "alice"})
	must(t, w, http.StatusCreated)
	path := strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
	w = ts.do(req{method: "POST", path: link, user: "bob"})
	errorOf(t, w, http.StatusConflict, "conflict", "registered already")
	if w.Header().Get("Location") != "" || strings.Contains(w.Body.String(), path) {
		t.Fatalf("the private feed shows itself: %v %s", w.Header(), w.Body.String())
	}
	must(t, ts.do(req{method: "POST", path: link, user: "admin"}), http.StatusOK)
	errorOf(t, ts.do(req{method: "PUT", path: path + "/fetch.json", user: "bob"}), 404, "not_found", "dataset")
	must(t, ts.do(req{method: "PUT", path: path + "/fetch.json", user: "alice"}), 200)
	g := ts.createGroup(t, form, "name=feeders")
	must(t, ts.do(req{method: "POST", path: "/groups/" + itoa(g) + "/users.json", user: "admin", ctype: form, body: []byte("bob")}), 200)
	must(t, ts.do(req{method: "PUT", path: path + ".json", user: "alice", ctype: "application/json",
		body: []byte(`{"permissions":[{"group_id":` + itoa(g) + `,"permissions":{"edit":true}}]}`)}), 200)
	must(t, ts.do(req{method: "PUT", path: path + "/fetch.json", user: "bob"}), 200)
	must(t, ts.do(req{method: "POST", path: link, user: "bob"}), http.StatusOK)
}

// TestRefreshFeedsEveryInterval: called every interval, as cmd's ticker
// does, by one server, or two sharing the store at once or half an interval
// apart, RefreshFeeds fetches each feed once per interval between them,
// though a fetch takes a twentieth of the interval, and one a quarter every
// other pass (a feed due an interval after its refresh, or after its
// claim, would wait a second interval); a feed whose remote
// fails is tried once per interval, not again and again in one pass.
// passGate holds the first fetch of a pass until the other server's.
type passGate struct {
	arrived atomic.Int32
	both    chan struct{}
}

func TestRefreshFeedsEveryInterval(t *testing.T) {
	t.Parallel()
	// Shorter than a claim's lease (10 minutes at least): a claim left
	// to run out would hold past the next call.
	const interval = 2 * time.Minute
	for _, c := range []struct {
		name  string
		phase time.Duration // of the second server's calls after the first's; -1 for none
	}{{"Alone", -1}, {"Together", 0}, {"HalfApart", interval / 2}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ts := newServer(t, allowPrivate)
			t0 := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
			clock := storetest.NewClock(t0)
			ts.store.setNow(clock.Now)
			rm := newRemote(t)
			paths := []string{"/a.csv", "/b.csv", "/c.csv", "/d.csv", "/e.csv"}
			for _, p := range paths {
				rm.set(p, remotePage{ctype: "text/csv", body: "name,lat,lon\nx,1,2\n"})
				must(t, ts.do(req{method: "POST", path: "/datasets.json?url=" + url.QueryEscape(rm.URL+p), user: "alice"}), http.StatusCreated)
			}
			rm.set("/e.csv", remotePage{status: 500, body: "down"})
			rm.mu.Lock()
			var slow atomic.Bool
			// Together, the servers' passes start at the same time: each
			// one's first fetch of a pass waits for the other's before the
			// remote's time passes, as two servers' tickers firing at once
			// would claim (else one whose goroutine ran late would start
			// its pass, and count its interval, from a clock the other's
			// fetches had moved on).
			var gate atomic.Pointer[passGate]
			rm.onHit = func(path string) {
				if g := gate.Load(); g != nil {
					if g.arrived.Add(1) == 2 {
						close(g.both)
					}
					<-g.both
				}
				if path == "/a.csv" && slow.Load() {
					clock.Advance(interval / 4) // a slow remote
				} else {
					clock.Advance(interval / 20)
				}
			}
			rm.mu.Unlock()
			// The other server has a store of its own on PostgreSQL, as a
			// second process would; the embedded store is one process's.
			svc := ts.svc
			if ts.store.pg != nil {
				db := pgtest.OpenURL(t, ts.store.url)
				db.Now = clock.Now
				svc = db.Services()
			}
			servers := []*api.Server{ts.handler.(*api.Server), api.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), ts.cfg, svc)}
			for k := 1; k <= 5; k++ {
				tick := t0.Add(time.Duration(k) * interval)
				slow.Store(k%2 == 1) // so the feeds after it come earlier in the next pass
				switch c.phase {
				case -1:
					clock.Set(tick)
					servers[0].RefreshFeeds(t.Context(), interval)
				case 0:
					clock.Set(tick)
					gate.Store(&passGate{both: make(chan struct{})})
					var wg sync.WaitGroup
					for _, s := range servers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							s.RefreshFeeds(t.Context(), interval)
						}()
					}
					wg.Wait()
				default:
					clock.Set(tick)
					servers[0].RefreshFeeds(t.Context(), interval)
					clock.Set(tick.Add(c.phase))
					servers[1].RefreshFeeds(t.Context(), interval)
				}
				for _, p := range paths {
					if n := rm.count(p); n != 1+k {
						t.Fatalf("after %d intervals, %s fetched %d times: once to register, then once an interval", k, p, n)
					}
				}
			}
		})
	}
}
