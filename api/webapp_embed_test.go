package api_test

// The embed of a map in a real headless Chromium (see webapp_test.go): a
// page of another site frames it and the map draws in the frame; a
// private map's embed draws nothing there; the embed asks the API without
// the visitor's credentials.

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"mapcommons/api"
)

// screenImage is the browser's view (the frames of other sites in it
// included), kept as name.png among the artefacts.
func screenImage(b *browserTest, name string) image.Image {
	b.t.Helper()
	raw := b.screenshot(name)
	if raw == nil {
		b.t.FailNow()
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		b.t.Fatal(err)
	}
	return img
}

// TestEmbedInOtherSite: a page of another site (another server, at
// localhost while the map's is at 127.0.0.1) frames the embed of a public
// choropleth map: the frame says the map is drawn and its pixels are the
// classes' colours. The embed of a private map (its owner signed in
// meanwhile) draws nothing in the frame. Opened by its signed-in owner,
// the embed asks the API without the session's cookie.
func TestEmbedInOtherSite(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	body, ct := multipartBody(t, ncFiles("dataset"), map[string]string{"title": "North Carolina counties"})
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
	must(t, w, 201)
	ds := regexp.MustCompile(`/datasets/(\d+)\.json$`).FindStringSubmatch(w.Header().Get("Location"))[1]
	// The requests of the embed page's scripts (fetch: Sec-Fetch-Dest
	// empty, the page their referrer), with and without a cookie.
	var withCookie, without atomic.Int64
	inner := ts.handler
	ts.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Sec-Fetch-Dest") == "empty" && strings.Contains(r.Referer(), "/embed") {
			if r.Header.Get("Cookie") != "" || r.Header.Get("Authorization") != "" {
				withCookie.Add(1)
			} else {
				without.Add(1)
			}
		}
		inner.ServeHTTP(w, r)
	})
	b := browserOn(t, ts)
	public := createChoroplethMap(t, ts, "alice", ds)
	private := createChoroplethMap(t, ts, "alice", ds)
	makePrivate(t, ts, private)
	var colors []string
	for _, c := range apiClasses(t, ts, public, "alice", 0) {
		if c.Color != "#ffffff" { // the page's own background
			colors = append(colors, c.Color)
		}
	}

	// The other site: a page holding the embed of ?map= in a frame, which
	// records the frame's load and its message.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html lang="en"><head><title>Another site</title><link rel="icon" href="data:,"></head><body style="margin:0;background:#fff">
<iframe id="frame" title="A map" src="%[1]s/app%[2]s/embed" width="640" height="480" style="border:0;display:block"></iframe>
<script>
window.embed = null;
window.frameLoaded = false;
addEventListener('message', (e) => { if (e.origin === '%[1]s' && e.data && e.data.type === 'mapcommons:embed') window.embed = e.data; });
document.getElementById('frame').addEventListener('load', () => { window.frameLoaded = true; });
</script></body></html>`, b.url, r.URL.Query().Get("map"))
	}))
	t.Cleanup(other.Close)
	site := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)

	b.do("the other site, framing a public map", chromedp.Navigate(site+"/?map="+public))
	b.wait("the embed drawn", `window.frameLoaded && window.embed && window.embed.state === 'idle'`)
	if id := eval[int](b, `window.embed.id`); "/maps/"+fmt.Sprint(id) != public {
		t.Errorf("the frame says map %d is drawn, want %s", id, public)
	}
	img := screenImage(b, "embed-public")
	drawn := 0
	for _, n := range colorPixels(img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(0, 0, 640, 480)), colors) {
		drawn += n
	}
	if drawn < 20000 {
		t.Errorf("the framed map has %d pixels of its classes' colours %v", drawn, colors)
	}

	// Its owner signed in: a private map's embed is a 404 in the frame,
	// which draws nothing and says nothing.
	signInViaAPI(b, "alice", "secret1")
	b.do("the other site, framing a private map", chromedp.Navigate(site+"/?map="+private))
	b.wait("the frame loaded", `window.frameLoaded`)
	if got := eval[bool](b, `window.embed === null`); !got {
		t.Errorf("the private map's frame said %v", eval[any](b, `window.embed`))
	}
	img = screenImage(b, "embed-private")
	for c, n := range colorPixels(img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(0, 0, 640, 480)), colors) {
		if n > 0 {
			t.Errorf("the private map's frame has %d pixels of %s", n, c)
		}
	}

	// Opened by its signed-in owner, the embed asks without the cookie.
	withCookie.Store(0)
	without.Store(0)
	b.do("the embed, signed in", chromedp.Navigate(b.url+"/app"+public+"/embed"))
	waitMap(b)
	if withCookie.Load() != 0 || without.Load() == 0 {
		t.Errorf("the embed's requests: %d with the session's cookie, %d without", withCookie.Load(), without.Load())
	}
	if got := eval[string](b, `document.querySelector('a.embed-link').target + ' ' + document.querySelector('a.embed-link').rel`); got != "_blank noopener" {
		t.Errorf("the link to the map's page: %q", got)
	}
	b.consoleBarrier()
	checkNoProblems(b)
}
