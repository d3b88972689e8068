// The browser application's routes: its pages (appPages) and their files
// (/app/assets/{asset}). The pages are
// shells rendered from package web's templates; their scripts read the
// API from the browser, with the browser's credentials, so a page shows
// nothing its visitor could not read through the API (a dataset page is
// the same shell for every id; the API says whether the dataset exists).
// Pages live under /app/ so that no path of the API changes meaning:
// GET /search and GET /datasets/{id} answer JSON as before.

package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/basemap"
	"mapcommons/web"
)

// pageCSP is the Content-Security-Policy of the pages: everything from this
// server only, but the tiles of the configured basemaps (their origins, in
// img-src and connect-src: MapLibre fetches raster tiles); MapLibre's
// worker from here or a blob: it makes, images also from data: and blob:
// URLs; framed by the sites framers names ('none' but for the embed of a
// public map: *).
func pageCSP(basemaps []basemap.Raster, framers string) string {
	tiles := ""
	seen := map[string]bool{}
	for _, b := range basemaps {
		if _, err := basemap.ParseRaster(b.Name + "=" + b.URL); err != nil {
			continue // not a plain http(s) host: never a source of the policy
		}
		u, _ := url.Parse(b.URL)
		if o := u.Scheme + "://" + u.Host; !seen[o] {
			seen[o] = true
			tiles += " " + o
		}
	}
	return "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:" + tiles + "; " +
		"font-src 'self'; connect-src 'self'" + tiles + "; worker-src 'self' blob:; child-src 'self' blob:; object-src 'none'; " +
		"base-uri 'self'; form-action 'self'; frame-ancestors " + framers
}

// appPage is one page of the application: its path (a {id} wildcard, when
// it has one, is the page's dataset or map), its template and bundle, and
// its title.
type appPage struct {
	path, name, title string
}

// appPages are the pages. /app/editor edits a new map.
var appPages = []appPage{
	{"/{$}", "home", "Home"},
	{"/app/search", "search", "Search"},
	{"/app/datasets/{id}", "dataset", "Dataset"},
	{"/app/maps/{id}", "map", "Map"},
	{"/app/editor", "editor", "New map"},
	{"/app/maps/{id}/edit", "editor", "Map editor"},
	{"/app/maps/{id}/embed", "embed", "Map"},
	{"/app/upload", "upload", "Upload"},
	{"/app/signin", "signin", "Sign in"},
	{"/app/signup", "signup", "Sign up"},
	{"/app/account", "account", "Account"},
	{"/app/groups", "groups", "Groups"},
	{"/app/setup", "setup", "Set up"},
}

// pageRoutes registers the pages and their assets.
func (s *Server) pageRoutes(m *routeTable) {
	for _, p := range appPages {
		m.Handle("GET "+p.path, s.handle(s.page(p)))
		m.Handle(p.path, s.handle(methodNotAllowed))
	}
	m.Handle("GET /app/assets/{asset}", s.handle(s.handleAsset))
	m.Handle("/app/assets/{asset}", s.handle(methodNotAllowed))
}

// page answers a page: its HTML (also for the .html suffix; any other
// suffix is a 404) with the pages' security headers. A public map's page
// carries its cards (mapCards); the embed of a public map is the one page
// other sites may frame, and that of any other map is a 404 (publicMap).
func (s *Server) page(ap appPage) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := s.checkBody(r); err != nil {
			return err
		}
		if f := info(r).format; f != "html" && (f != "json" || strings.HasSuffix(strings.ToLower(info(r).path), ".json")) {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "no %s form of %s: pages are HTML", f, r.URL.Path)
		}
		p := web.Page{Name: ap.name, Title: ap.title}
		if strings.Contains(ap.path, "{id}") {
			id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
			if err != nil || id <= 0 {
				return mapcommons.Errorf(mapcommons.ENOTFOUND, "no such page: %s", info(r).path)
			}
			p.ID = id
			p.Title += " " + strconv.FormatInt(id, 10)
		}
		if ap.name == "search" {
			p.Query, p.TypeFilter = r.URL.Query().Get("q"), true
		}
		csp := s.csp
		if ap.name == "map" || ap.name == "embed" {
			m, err := s.publicMap(r, p.ID)
			switch {
			case err != nil:
				return err
			case ap.name == "map" && m != nil:
				s.mapCards(r, m, &p)
			case ap.name == "embed" && m == nil:
				return errNoPublicMap()
			case ap.name == "embed":
				p.Framed, csp = true, s.embedCSP
			}
		}
		var b bytes.Buffer
		if err := s.assets.Render(&b, p); err != nil {
			return err
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		// The page names its assets by hash: it is asked again each time.
		h.Set("Cache-Control", "no-cache")
		setPageSecurity(h, csp)
		if p.Framed {
			// frame-ancestors says who may frame it; X-Frame-Options
			// (no list of sites) would forbid them all.
			h.Del("X-Frame-Options")
		}
		_, err := w.Write(b.Bytes())
		return err
	}
}

// docCSP is the Content-Security-Policy of the HTML documents the server
// renders itself (the HTML forms of search, the OGC API and the API
// description): plain documents, which load nothing but the API
// description's inline style sheet, allowed by its hash.
var docCSP = func() string {
	sum := sha256.Sum256([]byte(openAPIStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; img-src 'self'; " +
		"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}()

// secureHTML gives an HTML answer that set no policy of its own the
// documents' security headers: every HTML answer goes through it
// (statusWriter), so that none is left out of them.
func secureHTML(h http.Header) {
	if ct := strings.ToLower(h.Get("Content-Type")); strings.HasPrefix(ct, "text/html") && h.Get("Content-Security-Policy") == "" {
		setPageSecurity(h, docCSP)
	}
}

// setPageSecurity sets the headers that keep a page to this server's own
// content and out of other sites' frames.
func setPageSecurity(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
}

// handleAsset answers GET /app/assets/{asset}, a file of the application:
// built files, named by their content's hash, are cached for a year; fixed
// ones are revalidated by their ETag.
func (s *Server) handleAsset(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkBody(r); err != nil {
		return err
	}
	name := r.PathValue("asset")
	data, hashed, ok := s.assets.File(name)
	if !ok || info(r).format != "json" || strings.HasSuffix(strings.ToLower(info(r).path), ".json") {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "no such asset: %s", info(r).path)
	}
	sum := sha256.Sum256(data)
	cc := "public, max-age=0, must-revalidate"
	if hashed {
		cc = "public, max-age=31536000, immutable"
	}
	if notModified(w, r, `"`+hex.EncodeToString(sum[:12])+`"`, cc) {
		return nil
	}
	h := w.Header()
	h.Set("Content-Type", web.ContentType(name))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(data)))
	_, err := w.Write(data)
	return err
}
