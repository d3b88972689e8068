package api_test

import (
	"crypto/sha256"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"mapcommons/api"
)

// routeParam fills a route pattern's parameters (dataset and map 1, alice).
var routeParam = strings.NewReplacer("{id}", "1", "{featureId}", "1", "{fid}", "1", "{index}", "0", "{user}", "alice",
	"{login}", "alice", "{tms}", "WebMercatorQuad", "{z}", "0", "{x}", "0", "{y}", "0", "{ignored}", "1", "{$}", "",
	"{asset}", "x", "{collectionId}", "1", "{tileMatrix}", "0", "{tileRow}", "0", "{tileCol}", "0", "{style}", "0", "{styleId}", "1",
	"{fontstack}", "Go%20Regular", "{range}", "0-255.pbf", "{name}", "world")

// getPaths are the paths of every GET route of ts, their parameters
// filled by routeParam.
func getPaths(t *testing.T, ts *testServer) []string {
	t.Helper()
	param := regexp.MustCompile(`\{[^}]*\}`)
	var paths []string
	for _, p := range ts.handler.(*api.Server).Patterns() {
		method, path, ok := strings.Cut(p, " ")
		if !ok || method != "GET" {
			continue
		}
		path = routeParam.Replace(path)
		if param.MatchString(path) {
			t.Fatalf("pattern %s: a parameter the test does not fill", p)
		}
		if path == "" {
			path = "/"
		}
		paths = append(paths, path)
	}
	return paths
}

// TestHTMLSecurityHeaders: every HTML answer of every GET route (its .html
// suffix, f=html, a browser's Accept) carries a Content-Security-Policy
// with frame-ancestors 'none', nosniff and X-Frame-Options, but the embed
// of a public map (map 1), which any site may frame (frame-ancestors *,
// no X-Frame-Options); and the API description's inline style is the one
// its policy allows by hash.
func TestHTMLSecurityHeaders(t *testing.T) {
	ts := newServer(t)
	must(t, ts.do(req{method: "POST", path: "/datasets.json?title=Numbers", user: "alice", ctype: "text/csv", body: numbersCSV(3)}), 201)
	ts.createMap(t, "alice", "title=T&basemap=Acetate&layers[][source]=finder:1")
	html := map[string]bool{}
	for _, path := range getPaths(t, ts) {
		for _, r := range []req{
			{method: "GET", path: strings.TrimSuffix(path, "/") + ".html", user: "alice"},
			{method: "GET", path: path + "?f=html", user: "alice"},
			{method: "GET", path: path, user: "alice", header: map[string]string{"Accept": "text/html,*/*;q=0.8"}},
		} {
			w := ts.do(r)
			if !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
				continue
			}
			html[r.path] = true
			h := w.Header()
			ancestors, frameOptions := "frame-ancestors 'none'", "DENY"
			if strings.HasPrefix(r.path, "/app/maps/1/embed") {
				ancestors, frameOptions = "frame-ancestors *", ""
			}
			if csp := h.Get("Content-Security-Policy"); !strings.HasSuffix(csp, ancestors) || !strings.Contains(csp, "default-src") {
				t.Errorf("%s (%d): Content-Security-Policy %q", r.path, w.Code, csp)
			}
			if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != frameOptions {
				t.Errorf("%s (%d): X-Content-Type-Options %q, X-Frame-Options %q", r.path, w.Code, h.Get("X-Content-Type-Options"), h.Get("X-Frame-Options"))
			}
			// An inline style must be allowed by its hash, and nothing else inline.
			body := w.Body.String()
			for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(body, -1) {
				if !strings.Contains(tag, "src=") || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") {
					t.Errorf("%s: %s under %q", r.path, tag, h.Get("Content-Security-Policy"))
				}
			}
			if m := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(body); m != nil {
				sum := sha256.Sum256([]byte(m[1]))
				if want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(h.Get("Content-Security-Policy"), want) {
					t.Errorf("%s: its inline style (%s) is not allowed by %q", r.path, want, h.Get("Content-Security-Policy"))
				}
			}
		}
	}
	// The pages of the report, at least, are HTML.
	for _, p := range []string{"/search.html", "/datasets.html", "/api.html", "/ogc?f=html", "/ogc/conformance?f=html", "/ogc/collections?f=html",
		"/ogc/collections/1?f=html", "/ogc/collections/1/items?f=html", "/ogc/collections/1/items/1?f=html", "/app/search.html", "/app/maps/1/embed.html", "/app/setup.html"} {
		if !html[p] {
			t.Errorf("%s is not an HTML answer", p)
		}
	}
	t.Logf("%d HTML answers", len(html))
}
