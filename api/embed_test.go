package api_test

// Maps on other sites without a browser: the embed page's framing policy,
// oEmbed's answers, and the cards (Open Graph, Twitter) of a map's page;
// for a map that is not public each answers as for one that does not
// exist, byte for byte. TestEmbedInOtherSite (webapp_embed_test.go) frames
// the embed in a real browser.

import (
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// embedFixture is a server (an appliance whose new objects anyone may
// view and download, and whose datasets may be made private) with a
// public dataset, a public map of it, and their paths (/datasets/<id>,
// /maps/<id>).
func embedFixture(t *testing.T, title string) (*testServer, string, string) {
	t.Helper()
	ts := newServer(t, func(c *api.Config) {
		c.Mode = mapcommons.ModeAppliance
		c.DefaultShare = []mapcommons.Permission{{Group: mapcommons.GroupEveryone, View: true, Download: true}}
	})
	ds := ts.createCSV("?title=towns", "name,lat,lon\nAlpha,10,20\nBeta,11,21\n")
	mp := postMap(t, ts, "alice", map[string]any{"title": title, "basemap": "Acetate", "description": "Towns & <villages>",
		"layers": []any{map[string]any{"source": "finder:" + strings.TrimPrefix(ds, "/datasets/"), "title": "Towns"}}})
	return ts, ds, mp
}

// makePrivate takes everyone's rights away from a map or dataset (path
// /maps/<id> or /datasets/<id>), as an administrator.
func makePrivate(t *testing.T, ts *testServer, path string) {
	t.Helper()
	must(t, ts.do(req{method: "PUT", path: path + ".json", user: "admin", ctype: "application/json", body: []byte(`{"permissions":[]}`)}), 200)
}

// sameAnswer fails unless two answers are the same: status, headers and
// body, byte for byte.
func sameAnswer(t *testing.T, what string, a, b *httptest.ResponseRecorder) {
	t.Helper()
	if a.Code != b.Code || !maps.EqualFunc(a.Header(), b.Header(), slices.Equal) || a.Body.String() != b.Body.String() {
		t.Errorf("%s: the answers differ:\n%d %v\n%s\n---\n%d %v\n%s", what, a.Code, a.Header(), a.Body, b.Code, b.Header(), b.Body)
	}
}

// TestEmbedFraming: the embed of a public map is the one page another site
// may frame (frame-ancestors *, no X-Frame-Options), drawn alone with a
// link to the map's page in a new tab; every other page, the map's own
// included, keeps frame-ancestors 'none'. A map with a private layer is
// not embedded, for anyone.
func TestEmbedFraming(t *testing.T) {
	t.Parallel()
	ts, ds, mp := embedFixture(t, "Towns")
	embed := "/app" + mp + "/embed"
	for _, user := range []string{"", "alice", "bob"} {
		w := ts.get(embed, user)
		body := string(must(t, w, 200))
		h := w.Header()
		if csp := h.Get("Content-Security-Policy"); !strings.HasSuffix(csp, "; frame-ancestors *") || !strings.Contains(csp, "default-src 'self'") ||
			!strings.Contains(csp, "script-src 'self';") || !strings.Contains(csp, "connect-src 'self';") {
			t.Errorf("embed as %q: CSP %q", user, csp)
		}
		if _, ok := h["X-Frame-Options"]; ok || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-cache" {
			t.Errorf("embed as %q: headers %v", user, h)
		}
		if strings.Contains(body, "npm ci &amp;&amp; npm run build") {
			continue // not built: the page saying so, framed alike
		}
		for _, want := range []string{`<html lang="en" class="framed">`, `<div id="map"`, `<details class="embed-legend"`,
			`href="/app` + mp + `" target="_blank" rel="noopener">View on mapcommons</a>`, `<script type="module" src="/app/assets/embed-`} {
			if !strings.Contains(body, want) {
				t.Errorf("embed as %q lacks %s:\n%s", user, want, body)
			}
		}
		if strings.Contains(body, `<header class="site">`) || strings.Contains(body, "<nav") {
			t.Errorf("embed as %q has the site's header:\n%s", user, body)
		}
	}
	for _, p := range []string{"/app" + mp, "/app" + mp + "/edit", "/", "/app/search", "/app" + ds, "/app/editor"} {
		h := ts.get(p, "alice").Header()
		if csp := h.Get("Content-Security-Policy"); !strings.HasSuffix(csp, "; frame-ancestors 'none'") || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: CSP %q, X-Frame-Options %q", p, csp, h.Get("X-Frame-Options"))
		}
	}
	errorOf(t, ts.get(embed+".json", ""), 404, "not_found", "pages are HTML")
	errorOf(t, ts.do(req{method: "POST", path: embed, user: "alice"}), 405, "method_not_allowed", "POST")
	errorOf(t, ts.get("/app/maps/x/embed", ""), 404, "not_found", "no such page")

	// A layer whose dataset anyone may not download: the map is not
	// embedded, not for its owner either (an embed is what anyone sees).
	makePrivate(t, ts, ds)
	for _, user := range []string{"", "alice", "admin"} {
		errorOf(t, ts.get(embed, user), 404, "not_found", "not public")
	}
}

// TestEmbedPrivateSameAsMissing: to an anonymous caller, a private map's
// embed, oEmbed and page are the same answers, byte for byte, as those of
// a map that does not exist (the same id, before and after its deletion),
// and none of them names the map.
func TestEmbedPrivateSameAsMissing(t *testing.T) {
	t.Parallel()
	ts, _, mp := embedFixture(t, "Secret plans")
	makePrivate(t, ts, mp)
	paths := []string{"/app" + mp + "/embed", "/app" + mp, "/app" + mp + ".html",
		"/oembed?format=json&url=" + url.QueryEscape(base+"/app"+mp), "/oembed?url=" + url.QueryEscape(base+"/app"+mp+"/embed")}
	private := map[string]*httptest.ResponseRecorder{}
	for _, p := range paths {
		w := ts.get(p, "")
		private[p] = w
		if strings.Contains(w.Body.String(), "Secret") || strings.Contains(w.Body.String(), "og:") {
			t.Errorf("%s tells of the private map:\n%s", p, w.Body)
		}
	}
	errorOf(t, private[paths[0]], 404, "not_found", "not public")
	errorOf(t, private[paths[3]], 404, "not_found", "not public")
	must(t, ts.do(req{method: "DELETE", path: mp + ".json", user: "alice"}), 204)
	for _, p := range paths {
		sameAnswer(t, p, private[p], ts.get(p, ""))
	}
}

// TestOEmbed: GET /oembed for a public map's page (or its embed): the rich
// type, an iframe of the embed page within maxwidth and maxheight, the
// map's image as the thumbnail (which the server draws at that size); a
// 404 for any other URL, a 501 for XML, a 400 for a bad parameter.
func TestOEmbed(t *testing.T) {
	t.Parallel()
	ts, ds, mp := embedFixture(t, `Towns "<b>&</b>"`)
	page := base + "/app" + mp
	oembed := func(q string) *httptest.ResponseRecorder { return ts.get("/oembed?"+q, "") }
	read := func(q string) map[string]any {
		t.Helper()
		return decode[map[string]any](t, must(t, oembed(q), 200))
	}
	doc := read("url=" + url.QueryEscape(page) + "&format=json")
	frame := `<iframe src="` + page + `/embed" width="800" height="600" style="border:0" loading="lazy" allowfullscreen title="Towns &#34;&lt;b&gt;&amp;&lt;/b&gt;&#34;"></iframe>`
	want := map[string]any{"version": "1.0", "type": "rich", "provider_name": "mapcommons", "provider_url": base + "/",
		"title": `Towns "<b>&</b>"`, "html": frame, "width": 800.0, "height": 600.0,
		"thumbnail_url": base + mp + ".png?width=800&height=600", "thumbnail_width": 800.0, "thumbnail_height": 600.0}
	if !maps.Equal(doc, want) {
		t.Errorf("oEmbed:\n%v\nwant\n%v", doc, want)
	}
	// The same for the embed's URL, without format, and bounded.
	for q, size := range map[string][2]int{
		"url=" + url.QueryEscape(page+"/embed"):                                            {800, 600},
		"url=" + url.QueryEscape(page) + "&maxwidth=400":                                   {400, 600},
		"url=" + url.QueryEscape(page) + "&maxwidth=320&maxheight=180":                     {320, 180},
		"url=" + url.QueryEscape(page) + "&maxwidth=5000&maxheight=4000":                   {800, 600},
		"url=" + url.QueryEscape(strings.ToUpper(base)+"/app"+mp) + "&maxheight=%20240%20": {800, 240},
	} {
		d := read(q)
		w, h := fmt.Sprint(size[0]), fmt.Sprint(size[1])
		if d["width"] != float64(size[0]) || d["height"] != float64(size[1]) || d["thumbnail_width"] != float64(size[0]) ||
			d["thumbnail_height"] != float64(size[1]) || !strings.Contains(d["html"].(string), `width="`+w+`" height="`+h+`"`) ||
			d["thumbnail_url"] != base+mp+".png?width="+w+"&height="+h {
			t.Errorf("%s: %v", q, d)
		}
	}
	// The thumbnail is an image the server draws at that size.
	thumb, _ := url.Parse(read("url=" + url.QueryEscape(page) + "&maxwidth=320&maxheight=180")["thumbnail_url"].(string))
	if img := decodePNG(t, ts.get(thumb.RequestURI(), "")); img.Bounds().Dx() != 320 || img.Bounds().Dy() != 180 {
		t.Errorf("thumbnail %v", img.Bounds())
	}

	for _, u := range []string{"https://elsewhere.example/app" + mp, "https://mapcommons.test/app" + mp, base + "/app" + ds,
		base + mp + ".json", base + "/app" + mp + "/edit", base + "/app/maps/999/embed", base + "/app/maps/0", base + "/"} {
		errorOf(t, oembed("url="+url.QueryEscape(u)), 404, "not_found", "")
	}
	errorOf(t, oembed("url="+url.QueryEscape(page)+"&format=xml"), 501, "not_implemented", "json only")
	errorOf(t, ts.get("/oembed.xml?url="+url.QueryEscape(page), ""), 404, "not_found", "json only")
	errorOf(t, oembed("url="+url.QueryEscape(page)+"&format=yaml"), 400, "invalid", "format")
	errorOf(t, oembed(""), 400, "invalid", "url")
	errorOf(t, oembed("url="), 400, "invalid", "url")
	for _, bad := range []string{"maxwidth=0", "maxwidth=-5", "maxheight=abc", "maxheight=1.5"} {
		errorOf(t, oembed("url="+url.QueryEscape(page)+"&"+bad), 400, "invalid", strings.Split(bad, "=")[0])
	}
	errorOf(t, ts.do(req{method: "POST", path: "/oembed?url=" + url.QueryEscape(page), user: "alice"}), 405, "method_not_allowed", "POST")

	// A map not public, for whoever asks: a 404.
	makePrivate(t, ts, mp)
	for _, user := range []string{"", "alice", "admin"} {
		errorOf(t, ts.get("/oembed?url="+url.QueryEscape(page), user), 404, "not_found", "not public")
	}
}

// metaTags reads a page's <meta property|name=… content=…> tags.
func metaTags(body string) map[string]string {
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`<meta (?:property|name)="([^"]+)" content="([^"]*)">`).FindAllStringSubmatch(body, -1) {
		out[m[1]] = html.UnescapeString(m[2])
	}
	return out
}

// TestOpenGraphCards: a public map's page carries its Open Graph and
// Twitter cards and its oEmbed link, escaped (a hostile title stays text);
// a private map's page carries none of them and does not name the map.
func TestOpenGraphCards(t *testing.T) {
	t.Parallel()
	hostile := `Births "><script>alert(1)</script> & more`
	ts, _, mp := embedFixture(t, hostile)
	page := base + "/app" + mp
	body := string(must(t, ts.get("/app"+mp, ""), 200))
	if strings.Contains(body, "npm ci &amp;&amp; npm run build") {
		t.Log("the web assets are not built: the cards are checked on the page saying so")
	}
	image := base + mp + ".png?width=1200&height=630"
	want := map[string]string{"og:type": "website", "og:site_name": "mapcommons", "og:title": hostile, "og:description": "Towns & <villages>",
		"og:url": page, "og:image": image, "og:image:width": "1200", "og:image:height": "630",
		"twitter:card": "summary_large_image", "twitter:title": hostile, "twitter:description": "Towns & <villages>", "twitter:image": image}
	got := metaTags(body)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if strings.Contains(body, "<script>alert") || strings.Contains(body, `"><script`) || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the title is not escaped:\n%s", body)
	}
	link := regexp.MustCompile(`<link rel="alternate" type="application/json\+oembed" href="([^"]+)"`).FindStringSubmatch(body)
	if link == nil {
		t.Fatalf("no oEmbed link:\n%s", body)
	}
	u, err := url.Parse(html.UnescapeString(link[1]))
	if err != nil || u.Query().Get("url") != page || u.Query().Get("format") != "json" {
		t.Fatalf("oEmbed link %q", link[1])
	}
	var doc map[string]any
	if err := json.Unmarshal(must(t, ts.get(u.RequestURI(), ""), 200), &doc); err != nil || doc["title"] != hostile {
		t.Errorf("the link's oEmbed: %v %v", doc, err)
	}
	// The cards are the same for the signed-in (decided as for anyone).
	if got := metaTags(string(must(t, ts.get("/app"+mp, "alice"), 200))); !maps.Equal(got, metaTags(body)) {
		t.Errorf("alice's cards %v", got)
	}

	makePrivate(t, ts, mp)
	for _, user := range []string{"", "alice", "admin"} {
		priv := string(must(t, ts.get("/app"+mp, user), 200))
		if tags := metaTags(priv); tags["viewport"] == "" || strings.Contains(priv, "og:") ||
			strings.Contains(priv, "twitter:") || strings.Contains(priv, "json+oembed") || strings.Contains(priv, "Births") || strings.Contains(priv, "alert") {
			t.Errorf("the private map's page as %q: %v\n%s", user, tags, priv)
		}
	}
}
