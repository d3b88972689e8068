// Package web is the browser application the server embeds: the pages'
// templates, a few fixed files (static/), and the scripts and styles that
// `npm run build` bundles into dist/ (web/build.mjs).
//
// The embedding follows one of Prometheus's patterns: dist/ always exists
// (its README is committed, the built files are not), so `go build` works
// without the assets; the pages then say how to build them. Built() tells
// which case this binary is.
package web

import (
	"embed"
	"encoding/json"
	"html/template"
	"io"
	"io/fs"
	"path"
	"strings"
)

//go:embed dist static templates
var files embed.FS

// Page is what a page's template shows.
type Page struct {
	Name       string // the template (templates/NAME.html) and the bundle (src/NAME.js), when there is one
	Title      string // the document's title, before " · mapcommons"
	Query      string // the search box's text
	TypeFilter bool   // whether the search form has the type filter
	ID         int64  // the page's dataset or map, or 0
	// Framed: a page for other sites' frames (the embed of a map), drawn
	// alone, without the site's header (the "framed" document).
	Framed bool
	// Head's extras: a public map's cards (Open Graph, Twitter) and its
	// oEmbed discovery link.
	Meta   []Meta
	OEmbed *Link
	// Filled by Assets.Render: the page's files under /app/assets/.
	Built  bool
	JS     string
	CSS    []string
	Worker string
}

// Meta is a <meta> of a page's head: property="…" (Open Graph) when
// Property is set, else name="…" (Twitter), with its content.
type Meta struct {
	Property, Name, Content string
}

// Link is a <link> of a page's head: its target and title.
type Link struct {
	Href, Title string
}

// manifest is dist/manifest.json: the files of each page.
type manifest struct {
	Pages map[string]struct {
		JS  string   `json:"js"`
		CSS []string `json:"css"`
	} `json:"pages"`
	Worker string `json:"worker"`
	// Protomaps is the file of @protomaps/basemaps' layers (the light
	// flavor), for the style of a PMTiles basemap.
	Protomaps string `json:"protomaps"`
}

// Assets are the embedded application: its pages and files.
type Assets struct {
	man    *manifest // nil when dist/ was not built
	tmpl   *template.Template
	hashed map[string]bool // dist files, named by their content's hash
}

// Load reads the embedded application. A missing manifest is no error:
// the binary was built without the assets (Built reports false).
func Load() (*Assets, error) {
	tmpl, err := template.ParseFS(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	a := &Assets{tmpl: tmpl, hashed: map[string]bool{}}
	b, err := files.ReadFile("dist/manifest.json")
	if err != nil {
		return a, nil
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	a.man = &m
	entries, err := fs.ReadDir(files, "dist")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if n := e.Name(); n != "manifest.json" && n != "README" && !e.IsDir() {
			a.hashed[n] = true
		}
	}
	return a, nil
}

// ProtomapsLayers returns the layers of the Protomaps basemap style
// (@protomaps/basemaps' light flavor, a JSON array the build wrote), or
// nil in a binary built without the assets.
func (a *Assets) ProtomapsLayers() []byte {
	if a.man == nil || a.man.Protomaps == "" {
		return nil
	}
	b, err := files.ReadFile(path.Join("dist", a.man.Protomaps))
	if err != nil {
		return nil
	}
	return b
}

// Built reports whether the binary holds the built scripts and styles.
func (a *Assets) Built() bool { return a.man != nil }

// Render writes page p, with its scripts and styles, or the page saying
// how to build them.
func (a *Assets) Render(w io.Writer, p Page) error {
	if a.man != nil {
		files, ok := a.man.Pages[p.Name]
		if !ok {
			// A page without a script of its own: the shared style sheet
			// (the home page's holds only it).
			files.CSS = a.man.Pages["home"].CSS
		}
		p.Built, p.JS, p.CSS = true, files.JS, files.CSS
		if files.JS != "" {
			// Any page may draw a map: MapLibre's worker is named by hash.
			p.Worker = a.man.Worker
		}
	}
	t, err := a.tmpl.Clone()
	if err != nil {
		return err
	}
	if _, err := t.New("content").Parse(`{{template "` + p.Name + `" .}}`); err != nil {
		return err
	}
	layout := "layout"
	if p.Framed {
		layout = "framed"
	}
	return t.ExecuteTemplate(w, layout, p)
}

// Bundle is a page's built files by its name (src/NAME.js): its script,
// its style sheets and MapLibre's worker, for the documents the server
// renders itself (the OGC API's HTML, the API description), which link
// them from /app/assets/. ok is false when the binary was built without
// the assets, or the page has no script.
func (a *Assets) Bundle(name string) (js string, css []string, worker string, ok bool) {
	if a == nil || a.man == nil {
		return "", nil, "", false
	}
	files, ok := a.man.Pages[name]
	if !ok || files.JS == "" {
		return "", nil, "", false
	}
	return files.JS, files.CSS, a.man.Worker, true
}

// File returns an asset by its name under /app/assets/: a built file
// (hashed true: its name changes with its content) or a fixed one.
func (a *Assets) File(name string) (data []byte, hashed, ok bool) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return nil, false, false
	}
	if a.hashed[name] {
		b, err := files.ReadFile(path.Join("dist", name))
		return b, true, err == nil
	}
	b, err := files.ReadFile(path.Join("static", name))
	return b, false, err == nil
}

// ContentType is the media type of an asset, by its extension.
func ContentType(name string) string {
	switch path.Ext(name) {
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".txt":
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}
