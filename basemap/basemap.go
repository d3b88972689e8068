// Package basemap is the map drawn under every map when nothing else can
// be: countries and major places of Natural Earth (public domain,
// naturalearthdata.com), embedded in the binary, served as vector tiles
// and a MapLibre style by the server itself, so that a server on a closed
// network shows a real map with no setup. Raster basemaps of tile servers
// the server may reach (OpenStreetMap and the like) are configured beside
// it (raster.go); the style (style.go) picks one by name and falls back to
// the built-in one.
//
// The data is testdata/real's naturalearth_lowres (177 countries, 1:110m)
// and naturalearth_cities (243 places, capitals; a name, no population
// rank), written by the generator (gen/main.go, run by go generate) into
// naturalearth.bin.gz: our own compact form (codec.go), coordinates
// rounded to 1e-6 degree and delta-encoded, gzip-compressed. It is decoded
// once, on first use. There is no coastline file: the style draws the
// outlines of the country polygons, which are the coasts and the land
// borders together.
package basemap

//go:generate go run ./gen -out naturalearth.bin.gz ../testdata/real

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"sync"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/mvt"
)

//go:embed naturalearth.bin.gz
var embedded []byte

// Layer names of the built-in tiles (the style's source-layer values).
const (
	LayerCountries = "countries"
	LayerPlaces    = "places"
)

// MaxZoom is the deepest zoom worth making tiles of: the data is of scale
// 1:110,000,000, and past zoom 6 a client overzooms (the style's source
// says so). Deeper tiles are still served, for clients that ask.
const MaxZoom = 6

// Attribution is the credit the style gives the built-in data.
const Attribution = "Natural Earth (public domain)"

// Country is one country: its names and its polygons (each the rings of
// one polygon, exterior first, as flat lon/lat pairs).
type Country struct {
	Name, ISO, Continent string
	Polygons             [][][]float64
	geom                 []byte   // the polygons as a WKB MultiPolygon
	bounds               wkb.Rect // of all its polygons
}

// Place is one populated place.
type Place struct {
	Name     string
	Lon, Lat float64
}

// Data is the built-in basemap's data.
type Data struct {
	Countries []Country
	Places    []Place
}

// Load returns the embedded data, decoded on first call. The embedded
// file is checked by the package's tests: a failure here is a broken
// build, hence the panic.
var Load = sync.OnceValue(func() *Data {
	d, err := Decode(bytes.NewReader(embedded))
	if err != nil {
		panic("basemap: embedded data: " + err.Error())
	}
	for i := range d.Countries {
		d.Countries[i].prepare()
	}
	return d
})

// prepare makes the WKB and the bounds of c's polygons.
func (c *Country) prepare() {
	c.geom = wkb.AppendMultiPolygon(nil, c.Polygons)
	c.bounds = wkb.Rect{MinX: 180, MinY: 90, MaxX: -180, MaxY: -90}
	for _, p := range c.Polygons {
		xy := p[0]
		for i := 0; i+1 < len(xy); i += 2 {
			c.bounds = c.bounds.Extend(wkb.Rect{MinX: xy[i], MinY: xy[i+1], MaxX: xy[i], MaxY: xy[i+1]})
		}
	}
}

// Version is a tag of the embedded data and of the form of the tiles (a
// hash of the file and tileFormat): the same in every build that serves
// the same tiles, so caches keep them across restarts and upgrades.
var Version = sync.OnceValue(func() string {
	h := sha256.New()
	h.Write([]byte(tileFormat))
	h.Write(embedded)
	return hex.EncodeToString(h.Sum(nil)[:8])
})

// tileFormat names the tiles' layers and options: change it when they
// change, so that Version does.
const tileFormat = "mvt1:countries(name,iso_a3,continent);places(name);extent4096;buffer64;tolerance1"

// The attributes of each layer.
var (
	countryAttrs = []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString},
		{Name: "iso_a3", Type: mapcommons.AttrString}, {Name: "continent", Type: mapcommons.AttrString}}
	placeAttrs = []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}}
)

// tileOptions are mvt's defaults without thinning: 243 places are few
// enough to keep each with its name at every zoom.
func tileOptions() mvt.Options {
	o := mvt.DefaultOptions()
	o.ClusterCell = 0
	return o
}

// Tile encodes tile z/x/y (WebMercatorQuad, y from the north) of the
// built-in basemap: a countries layer (polygons; name, iso_a3, continent)
// and a places layer (points; name). Feature ids are positions from 1.
func Tile(z, x, y int) ([]byte, error) {
	d := Load()
	t, err := mvt.NewTile(z, x, y, tileOptions())
	if err != nil {
		return nil, err
	}
	b := t.Bounds()
	cl, err := t.AddLayer(LayerCountries, countryAttrs, nil)
	if err != nil {
		return nil, err
	}
	for i := range d.Countries {
		c := &d.Countries[i]
		if !overlaps(c.bounds, b) {
			continue
		}
		if err := cl.Add(uint64(i+1), c.geom, []any{c.Name, c.ISO, c.Continent}); err != nil {
			return nil, err
		}
	}
	pl, err := t.AddLayer(LayerPlaces, placeAttrs, nil)
	if err != nil {
		return nil, err
	}
	var pt []byte
	for i, p := range d.Places {
		if p.Lon < b.MinX || p.Lon > b.MaxX || p.Lat < b.MinY || p.Lat > b.MaxY {
			continue
		}
		pt = wkb.AppendPoint(pt[:0], p.Lon, p.Lat)
		if err := pl.Add(uint64(i+1), pt, []any{p.Name}); err != nil {
			return nil, err
		}
	}
	return t.Encode(), nil
}

// overlaps reports whether two boxes share a point.
func overlaps(a, b wkb.Rect) bool {
	return a.MinX <= b.MaxX && b.MinX <= a.MaxX && a.MinY <= b.MaxY && b.MinY <= a.MaxY
}

// The built-in basemap's colours, as its MapLibre style paints them
// (0xRRGGBB), for renderers that draw it themselves.
const (
	SeaColour    = 0xa8cce0
	LandColour   = 0xf2efe6
	BorderColour = 0x8c8c8c
)

// ScanCountries calls fn with each country whose bounds meet q's box (all
// of them without one) as a feature of no attributes: its polygons, as a
// WKB MultiPolygon, and its index as the id. It stops at fn's first error
// or when ctx ends.
func ScanCountries(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	var f mapcommons.Feature
	for i := range Load().Countries {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := &Load().Countries[i]
		if b := q.BBox; b != nil && !meets(b, c.bounds) {
			continue
		}
		f = mapcommons.Feature{ID: int64(i + 1), Geometry: c.geom}
		if err := fn(&f); err != nil {
			return err
		}
	}
	return nil
}

// meets reports whether box b (W > E: across the antimeridian) meets r.
func meets(b *mapcommons.BBox, r wkb.Rect) bool {
	if r.MinY > b.N || r.MaxY < b.S {
		return false
	}
	if b.W <= b.E {
		return r.MinX <= b.E && r.MaxX >= b.W
	}
	return r.MaxX >= b.W || r.MinX <= b.E
}
