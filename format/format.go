// Package format is the one registry of the file formats mapcommons speaks:
// path suffix to content type, and upload content type to reader kind.
// The readers and writers themselves live in the sub-packages.
package format

import (
	"maps"
	"mime"
	"slices"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/format/wkb"
)

// contentTypes maps each known path suffix to the content type we answer with.
var contentTypes = map[string]string{
	"json":       "application/json; charset=utf-8",
	"xml":        "application/xml; charset=utf-8",
	"csv":        "text/csv; charset=utf-8",
	"geojson":    "application/geo+json",
	"kml":        "application/vnd.google-earth.kml+xml",
	"kmz":        "application/vnd.google-earth.kmz",
	"atom":       "application/atom+xml; charset=utf-8",
	"rss":        "application/rss+xml; charset=utf-8",
	"zip":        "application/zip",
	"sqlite":     "application/x-sqlite3",
	"spatialite": "application/x-sqlite3",
	"gpkg":       "application/geopackage+sqlite3",
	"html":       "text/html; charset=utf-8",
	"png":        "image/png",
}

// ContentType returns the content type of a path suffix (without the dot)
// and whether the suffix is a format at all.
func ContentType(ext string) (string, bool) {
	ct, ok := contentTypes[strings.ToLower(ext)]
	return ct, ok
}

// datasetDownloads maps each suffix a whole dataset downloads as (besides
// json) to the format written: spatialite is the spec's name for sqlite,
// and rss (the Python client's download()) gets the Atom feed.
var datasetDownloads = map[string]string{
	"csv": "csv", "geojson": "geojson", "kml": "kml", "kmz": "kmz", "atom": "atom", "rss": "atom",
	"zip": "zip", "sqlite": "sqlite", "spatialite": "sqlite", "gpkg": "gpkg",
}

// DatasetDownload returns the format a dataset download suffix names, and
// whether it names one.
func DatasetDownload(ext string) (string, bool) {
	f, ok := datasetDownloads[strings.ToLower(ext)]
	return f, ok
}

// MediaType is ContentType without its parameters ("application/atom+xml"),
// as links name types; "" when the suffix is not a format.
func MediaType(ext string) string {
	ct, _ := ContentType(ext)
	mt, _, _ := strings.Cut(ct, ";")
	return mt
}

// Upload kinds: what reader an uploaded file or body needs.
const (
	KindCSV     = "csv"
	KindShp     = "shp" // the .shp part of a shapefile; shx, dbf, prj, cpg go with it
	KindKML     = "kml"
	KindKMZ     = "kmz"
	KindAtom    = "atom" // Atom or RSS with GeoRSS
	KindZip     = "zip"  // a zipped shapefile
	KindGeoJSON = "geojson"
	KindGPKG    = "gpkg" // a GeoPackage: one feature table of it
)

// bodyKinds maps the content type of a raw upload body to its kind.
var bodyKinds = map[string]string{
	"text/csv":                             KindCSV,
	"text/comma-separated-values":          KindCSV,
	"application/csv":                      KindCSV,
	"application/vnd.google-earth.kml+xml": KindKML,
	"application/vnd.google-earth.kmz":     KindKMZ,
	"application/atom+xml":                 KindAtom,
	"application/rss+xml":                  KindAtom,
	"application/zip":                      KindZip,
	"application/x-zip-compressed":         KindZip,
	"application/geo+json":                 KindGeoJSON,
	"application/vnd.geo+json":             KindGeoJSON,
	"application/geopackage+sqlite3":       KindGPKG,
}

// BodyKind returns the upload kind of a raw body's content type ("" when
// we do not read that type).
func BodyKind(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	}
	return bodyKinds[mt]
}

// BodyTypes lists the content types of the raw bodies we read, sorted (the
// API's description lists them).
func BodyTypes() []string { return slices.Sorted(maps.Keys(bodyKinds)) }

// PartExtensions lists the extensions an upload part may name, the
// sidecars' included, sorted.
func PartExtensions() []string {
	return slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(partKinds)), Sidecars...)))
}

// partKinds maps the extension named in an upload part (dataset[<ext>]) to its kind.
var partKinds = map[string]string{
	"csv": KindCSV, "shp": KindShp, "kml": KindKML, "kmz": KindKMZ,
	"rss": KindAtom, "atom": KindAtom, "xml": KindAtom, "zip": KindZip,
	"geojson": KindGeoJSON, "json": KindGeoJSON, "gpkg": KindGPKG,
}

// PartKind returns the upload kind of a part named by extension ("" for
// sidecar files and unknown extensions).
func PartKind(ext string) string { return partKinds[strings.ToLower(ext)] }

// urlKinds maps the extension of a fetched URL's path to the kind it
// surely names; .json and .xml name no kind surely (a feed's body is
// sniffed then).
var urlKinds = map[string]string{
	"csv": KindCSV, "kml": KindKML, "kmz": KindKMZ, "zip": KindZip, "geojson": KindGeoJSON,
	"rss": KindAtom, "atom": KindAtom,
}

// URLKind returns the upload kind a fetched URL's extension names ("" when
// it names none surely).
func URLKind(ext string) string { return urlKinds[strings.ToLower(ext)] }

// Sidecars are the extensions of a shapefile's companion files.
var Sidecars = []string{"shx", "dbf", "prj", "cpg"}

// Sidecar reports whether ext is a shapefile's companion file.
func Sidecar(ext string) bool {
	return slices.Contains(Sidecars, strings.ToLower(ext))
}

// Meta describes a dataset to the writers of download formats.
type Meta struct {
	Name         string // a safe base name for files, tables and layers: [A-Za-z0-9_], not empty
	Title        string
	Description  string
	Author       string
	Link         string    // absolute URL of the dataset's JSON document
	Updated      time.Time // when the dataset last changed
	Attributes   []mapcommons.Attribute
	GeometryMask uint32    // bit 1<<t for each WKB type t present (wkb.Point …)
	Extent       *wkb.Rect // nil when no feature has a geometry
	Count        int64     // number of features
}

// Scan calls fn for each feature of a dataset in order, streaming; the
// *Feature is reused between calls. It returns fn's first error.
type Scan func(fn func(*mapcommons.Feature) error) error

// Sticky makes a feature reader's Next keep its first error: once next has
// failed (io.EOF included), every further call returns that error without
// calling next again. The readers keep one beside their state and write
// Next as s.Next(r.next). The zero value has no error.
type Sticky struct {
	err error
}

// Next returns next's feature, or the error next gave now or before (with
// a nil feature).
func (s *Sticky) Next(next func() (*mapcommons.Feature, error)) (*mapcommons.Feature, error) {
	if s.err != nil {
		return nil, s.err
	}
	f, err := next()
	if err != nil {
		s.err = err
		return nil, err
	}
	return f, nil
}
