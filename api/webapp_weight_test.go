package api_test

// The weight of the pages: what a browser downloads to show a page, as it
// travels (gzip), counted by following the page's references — its
// scripts and the modules they import statically, its style sheets and
// the files they name, the icon and MapLibre's worker when the page names
// it. Issue 14 allows the landing page 1 MB compressed apart from the map
// library; the test holds every page, map library included, to that.

import (
	"compress/gzip"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"mapcommons/web"
)

// pageRefs are the asset references of a page (src and href) under
// /app/assets/; workerRef names MapLibre's worker, which a page loads
// only when it draws a map.
var (
	pageRefs  = regexp.MustCompile(`(?:src|href)="(/app/assets/[^"]+)"`)
	workerRef = regexp.MustCompile(`name="mc-worker" content="(/app/assets/[^"]+)"`)
)

// moduleImports are the static imports of a bundled module: `from"./x.js"`
// and `import"./x.js"` (esbuild's minified forms), not dynamic import().
var moduleImports = regexp.MustCompile(`(?:from|import)\s*"\./([^"]+)"`)

// cssRefs are the url(...) references of a style sheet to other files
// (data: URLs are inside the sheet already).
var cssRefs = regexp.MustCompile(`url\(["']?([^"')]+)["']?\)`)

// pageWeight returns the bytes a browser downloads for page p with gzip,
// and the plain size, by file.
func pageWeight(t *testing.T, ts *testServer, p string) (wire, plain int, files map[string]int) {
	t.Helper()
	files = map[string]int{}
	fetch := func(path string) []byte {
		w := ts.do(req{method: "GET", path: path, header: map[string]string{"Accept-Encoding": "gzip"}})
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body.String())
		}
		raw := w.Body.Bytes()
		body := raw
		if w.Header().Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(w.Body)
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		files[path] = len(raw)
		wire += len(raw)
		plain += len(body)
		return body
	}
	queue := []string{}
	html := string(fetch(p))
	for _, m := range pageRefs.FindAllStringSubmatch(html, -1) {
		queue = append(queue, m[1])
	}
	worker := workerRef.FindStringSubmatch(html)
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		if _, seen := files[a]; seen {
			continue
		}
		body := string(fetch(a))
		if worker != nil && strings.HasSuffix(a, ".js") && strings.Contains(body, "maplibregl-canvas") {
			// MapLibre is in the page (its canvas class): it loads its worker.
			queue = append(queue, worker[1])
			worker = nil
		}
		var refs [][]string
		switch {
		case strings.HasSuffix(a, ".js"):
			refs = moduleImports.FindAllStringSubmatch(body, -1)
		case strings.HasSuffix(a, ".css"):
			refs = cssRefs.FindAllStringSubmatch(body, -1)
		}
		for _, m := range refs {
			if !strings.HasPrefix(m[1], "data:") {
				queue = append(queue, "/app/assets/"+strings.TrimPrefix(m[1], "./"))
			}
		}
	}
	return wire, plain, files
}

// TestPageWeight holds each page, with everything it loads, to 1 MB on
// the wire.
func TestPageWeight(t *testing.T) {
	t.Parallel()
	assets, err := web.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !assets.Built() {
		if os.Getenv("MAPCOMMONS_REQUIRE_NPM") == "1" {
			t.Fatal("the web assets are not built (npm ci && npm run build) and MAPCOMMONS_REQUIRE_NPM=1")
		}
		t.Skip("the web assets are not built: npm ci && npm run build")
	}
	ts := newServer(t)
	ds := ts.createCSV("?title=towns", "name,lat,lon\nAlpha,10,20\n")
	// The documents the server renders that load scripts: the OGC pages
	// of features (their map) and the API description (its viewer).
	coll := "/ogc/collections/" + strings.TrimPrefix(ds, "/datasets/")
	for _, p := range []string{"/", "/app/search", "/app" + ds, "/app/maps/1", "/app/editor", "/app/upload", "/app/signin", "/app/setup",
		coll + "/items?f=html", coll + "/items/1?f=html", coll + "?f=html", "/api.html"} {
		wire, plain, files := pageWeight(t, ts, p)
		t.Logf("%s: %d bytes gzip (%d plain), %d files", p, wire, plain, len(files))
		if wire > 1<<20 {
			t.Errorf("%s weighs %d bytes compressed, over 1 MB: %v", p, wire, files)
		}
		if len(files) < 3 {
			t.Errorf("%s: only %v: the page's references were not followed", p, files)
		}
	}
}
