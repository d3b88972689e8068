package basemap

// This file reads the raster basemaps a server is configured with
// (--basemap NAME=URLTEMPLATE): tile servers a server that reaches them
// may put under its maps instead of the built-in basemap.

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Builtin is the name of the built-in basemap.
const Builtin = "builtin"

// Raster is a configured raster basemap: XYZ tiles of 256 pixels.
type Raster struct {
	Name string // what a map's basemap and the style's name parameter say
	// URL is the tile template, with {z}, {x} and {y}, as MapLibre takes
	// it (passed on unchanged).
	URL string
	// Attribution is the credit the style shows: "© OpenStreetMap
	// contributors" for OpenStreetMap's servers, else the tile host.
	Attribution string
}

// rasterName is the form of a basemap's name.
var rasterName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ParseRaster reads one NAME=URLTEMPLATE, for example
// osm=https://tile.openstreetmap.org/{z}/{x}/{y}.png. The template must
// be an absolute http or https URL with {z}, {x} and {y}.
func ParseRaster(spec string) (Raster, error) {
	name, tmpl, ok := strings.Cut(strings.TrimSpace(spec), "=")
	if !ok || !rasterName.MatchString(name) {
		return Raster{}, fmt.Errorf("basemap %q: want NAME=URLTEMPLATE, NAME of letters, digits, '_', '.' and '-'", spec)
	}
	if strings.EqualFold(name, Builtin) {
		return Raster{}, fmt.Errorf("basemap %q: %q is the built-in basemap's name", spec, Builtin)
	}
	u, err := url.Parse(tmpl)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Raster{}, fmt.Errorf("basemap %s: %q is not an http or https URL", name, tmpl)
	}
	// The host goes into the pages' Content-Security-Policy as a source:
	// a name of letters, digits and hyphens, or an address, never a
	// wildcard.
	if !tileHost.MatchString(u.Hostname()) {
		return Raster{}, fmt.Errorf("basemap %s: the host %q of %q is not a plain host name or address", name, u.Hostname(), tmpl)
	}
	for _, p := range []string{"{z}", "{x}", "{y}"} {
		if !strings.Contains(tmpl, p) {
			return Raster{}, fmt.Errorf("basemap %s: the template %q has no %s", name, tmpl, p)
		}
	}
	r := Raster{Name: name, URL: tmpl, Attribution: u.Hostname()}
	if h := u.Hostname(); h == "openstreetmap.org" || strings.HasSuffix(h, ".openstreetmap.org") {
		r.Attribution = "© OpenStreetMap contributors"
	}
	return r, nil
}

// ParseRasters reads the NAME=URLTEMPLATE items of s, separated by commas
// or spaces (the form of MAPCOMMONS_BASEMAP). A name given twice is an
// error.
func ParseRasters(s string) ([]Raster, error) {
	var out []Raster
	seen := map[string]bool{}
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		r, err := ParseRaster(item)
		if err != nil {
			return nil, err
		}
		if seen[strings.ToLower(r.Name)] {
			return nil, fmt.Errorf("basemap %s: named twice", r.Name)
		}
		seen[strings.ToLower(r.Name)] = true
		out = append(out, r)
	}
	return out, nil
}

// tileHost is a host a tile template may name: DNS labels of letters,
// digits and hyphens, an IPv4 address, or an IPv6 one (as url.Hostname
// gives it, without brackets).
var tileHost = regexp.MustCompile(`^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|[0-9A-Fa-f:.]+)$`)

// Find returns the raster basemap of rasters named name (any case), nil
// for the built-in one: for an empty name, "builtin" or a name not
// configured.
func Find(rasters []Raster, name string) *Raster {
	for i := range rasters {
		if strings.EqualFold(rasters[i].Name, name) {
			return &rasters[i]
		}
	}
	return nil
}
