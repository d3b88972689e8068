// Package basemap is the map drawn under every map when nothing else can
// be: the land, lakes, rivers, borders, populated places and first-order
// divisions' names of Natural Earth (public domain, naturalearthdata.com)
// at 1:10m, its urban areas and divisions' boundaries at 1:50m, embedded in the
// binary, served as vector tiles and a MapLibre style by the server
// itself, so that a server on a closed network shows a real map with no
// setup, right at city scale (Staten Island, Brooklyn and Olinda on land).
// Raster basemaps of tile servers the server may reach (OpenStreetMap and
// the like) are configured beside it (raster.go); the style (style.go)
// picks one by name and falls back to the built-in one.
//
// The data is written by the generator (gen/main.go, run by go generate)
// into naturalearth.bin.gz (5.1 MB): our own compact form (codec.go),
// coordinates rounded to 1e-5 degree and delta-encoded, gzip-compressed,
// each layer simplified for three zoom bands (zooms 0–2 to about 10 km,
// 3–4 to about 1 km, from 5 the 1:10m geometry). It is decoded once, on
// first use (about half a second; 40 MB of memory), and its polygons and
// lines cut into pieces of at most 512 points (pieces.go), so that a tile
// of zoom 9 reads a few pieces of a continent. The sources:
//
//   - testdata/real's naturalearth_lowres (177 countries, 1:110m, as
//     shipped by geopandas 0.12): the countries layer (names, ISO codes,
//     continents) and the server's own images (ScanCountries);
//   - Natural Earth 4.0 1:10m GeoJSON from the GitHub repository
//     martynafford/natural-earth-geojson, commit 0b9a6ceb0a7032713abd9460ac1e995a9c60cd1e:
//     10m/physical/ne_10m_land.7z, ne_10m_minor_islands.json,
//     ne_10m_lakes.7z, ne_10m_rivers_lake_centerlines.7z,
//     10m/cultural/ne_10m_admin_0_boundary_lines_land.json,
//     ne_10m_populated_places_simple.7z (7343 places, with scalerank,
//     pop_max, adm0cap and min_zoom) and ne_10m_admin_1_label_points.7z
//     (the divisions' names: a point in each part of each division),
//     and 50m/cultural/ne_50m_urban_areas.json and
//     ne_50m_admin_1_states_provinces_lines.json (the 1:10m files of
//     those are not in that repository: at 1:50m the boundaries are of
//     the United States, Canada, Brazil and Australia only), the .7z
//     archives extracted (7z x) into one directory of .json files.
//
// To regenerate: put those nine .json files in a directory and run
//
//	NATURALEARTH10M=/that/directory go generate ./basemap
//
// (TestGenerated checks the committed file is the generator's when
// NATURALEARTH10M is set.)
package basemap

//go:generate go run ./gen -out naturalearth.bin.gz ../testdata/real ${NATURALEARTH10M}

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
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
	LayerLand      = "land"
	LayerCoastline = "coastline"
	LayerLakes     = "lakes"
	LayerRivers    = "rivers"
	LayerBorders   = "borders"
	LayerCountries = "countries"
	LayerPlaces    = "places"
	LayerUrban     = "urban"
	LayerDivisions = "divisions"
	LayerRegions   = "regions"
)

// MaxZoom is the deepest zoom worth making tiles of. The data is of scale
// 1:10,000,000: its vertices are a few hundred metres apart, a few pixels
// at zoom 9 (300 m a pixel at 40° of latitude), and deeper tiles would
// only magnify them (a client overzooms past MaxZoom, the style's source
// says so). Deeper tiles are still served, for clients that ask.
const MaxZoom = 9

// Bands is the number of zoom bands the data is simplified for:
// band b serves zooms BandMinZoom[b] to BandMinZoom[b+1]-1 (the last, to
// MaxZoom and beyond).
const Bands = 3

// BandMinZoom is the shallowest zoom of each band: 0–2 draw geometry
// simplified to about 5 km (the detail of 1:110m), 3–4 to about 1 km (of
// 1:50m), and from 5 the 1:10m geometry itself.
var BandMinZoom = [Bands]int{0, 3, 5}

// band is the band of zoom z.
func band(z int) int {
	b := 0
	for i, m := range BandMinZoom {
		if z >= m {
			b = i
		}
	}
	return b
}

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

// Place is one populated place. MinZoom10 is the zoom, in tenths, from
// which the basemap shows it (from Natural Earth's min_zoom: the world's
// largest cities from zoom 0, towns from about 6); Rank is Natural
// Earth's scalerank (0 the most important, 10 the least).
type Place struct {
	Name       string
	Lon, Lat   float64
	MinZoom10  int
	Rank       int
	Population int64
	Capital    bool // a country's capital
}

// Shape is one polygon (Rings: exterior first, then holes) or one line
// (Rings: the one line) of a layer, as flat lon/lat pairs. MinZoom10 is
// the zoom, in tenths, from which the basemap shows it; Rank is Natural
// Earth's scalerank; Name is the lake's or river's.
type Shape struct {
	MinZoom10 int
	Rank      int
	Name      string
	Rings     [][]float64
}

// Layer is the shapes of one layer, in each zoom band.
type Layer [Bands][]Shape

// Data is the built-in basemap's data.
type Data struct {
	Countries []Country
	Places    []Place
	// Regions are the first-order divisions' labels (states, provinces,
	// départements): one point each, its Name, Rank (Natural Earth's
	// datarank) and MinZoom10 set; no population, no capital.
	Regions []Place
	// Land is the land polygons (Natural Earth's land, and its minor
	// islands from band 2), lakes the lake polygons, rivers the rivers'
	// and lakes' centre lines, borders the countries' land boundaries:
	// as decoded (Load's data has them only in pieces). Urban is the
	// urban areas' polygons, divisions the first-order divisions'
	// boundaries (lines).
	Land, Lakes, Rivers, Borders, Urban, Divisions Layer

	tiles map[string]*[Bands][]piece // the pieces tiles are made of, by layer
}

// shapeLayers are d's layers of shapes, in the file's order.
func (d *Data) shapeLayers() []*Layer {
	return []*Layer{&d.Land, &d.Lakes, &d.Rivers, &d.Borders, &d.Urban, &d.Divisions}
}

// piece is a small part of a shape, ready for tiles: at most pieceMax
// points, so that a tile of a deep zoom handles a few pieces of a
// continent and not all of it.
type piece struct {
	geom      []byte // WKB Polygon or LineString
	bounds    wkb.Rect
	minZoom10 int
	rank      int
	name      string
}

// pieceMax is the most points a piece has (but for a polygon that cannot
// be cut smaller than pieceMinSide).
const pieceMax = 512

// Load returns the embedded data, decoded on first call, its countries
// and places (its layers of shapes are in pieces, for tiles only). The embedded
// file is checked by the package's tests: a failure here is a broken
// build, hence the panic.
var Load = sync.OnceValue(func() *Data {
	d, err := Decode(bytes.NewReader(embedded))
	if err != nil {
		panic("basemap: embedded data: " + err.Error())
	}
	d.prepare()
	return d
})

// prepare makes the WKB and the bounds of the countries, and the pieces of
// the layers (the coastline's from the land's rings).
func (d *Data) prepare() {
	for i := range d.Countries {
		d.Countries[i].prepare()
	}
	d.tiles = map[string]*[Bands][]piece{}
	add := func(name string, l *Layer, polygons bool) {
		var ps [Bands][]piece
		for b, shapes := range l {
			for _, s := range shapes {
				if polygons {
					ps[b] = appendPolygonPieces(ps[b], s, s.Rings, ringsBounds(s.Rings))
				} else {
					ps[b] = appendLinePieces(ps[b], s, s.Rings[0])
				}
			}
		}
		d.tiles[name] = &ps
	}
	add(LayerLand, &d.Land, true)
	add(LayerLakes, &d.Lakes, true)
	add(LayerRivers, &d.Rivers, false)
	add(LayerBorders, &d.Borders, false)
	add(LayerUrban, &d.Urban, true)
	add(LayerDivisions, &d.Divisions, false)
	// No coastline in band 0: at zooms 0–2 the land's fill is its outline.
	var coast [Bands][]piece
	for b, shapes := range d.Land {
		if b == 0 {
			continue
		}
		for _, s := range shapes {
			for _, r := range s.Rings {
				for _, line := range coastLines(r) {
					coast[b] = appendLinePieces(coast[b], Shape{Rank: s.Rank}, line)
				}
			}
		}
	}
	d.tiles[LayerCoastline] = &coast
	// The pieces are all tiles need: the shapes they were cut from go
	// (half the memory of the decoded data, some 25 MB).
	for _, l := range d.shapeLayers() {
		*l = Layer{}
	}
}

// prepare makes the WKB and the bounds of c's polygons.
func (c *Country) prepare() {
	c.geom = wkb.AppendMultiPolygon(nil, c.Polygons)
	c.bounds = wkb.Rect{MinX: 180, MinY: 90, MaxX: -180, MaxY: -90}
	for _, p := range c.Polygons {
		c.bounds = c.bounds.Extend(ringsBounds(p[:1]))
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
const tileFormat = "mvt3:land;coastline;lakes(name);rivers(name,rank);borders(rank);urban;divisions(rank);" +
	"countries(name,iso_a3,continent);places(name,rank,population,capital);regions(name,rank);bands0,3,5;pieces512;extent4096;buffer64;tolerance1"

// The attributes of each layer.
var (
	countryAttrs = []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString},
		{Name: "iso_a3", Type: mapcommons.AttrString}, {Name: "continent", Type: mapcommons.AttrString}}
	placeAttrs = []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}, {Name: "rank", Type: mapcommons.AttrInteger},
		{Name: "population", Type: mapcommons.AttrInteger}, {Name: "capital", Type: mapcommons.AttrBoolean}}
	nameAttrs   = []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}}
	regionAttrs = []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}, {Name: "rank", Type: mapcommons.AttrInteger}}
	riverAttrs  = []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}, {Name: "rank", Type: mapcommons.AttrInteger}}
	rankAttrs   = []mapcommons.Attribute{{Name: "rank", Type: mapcommons.AttrInteger}}
)

// tileOptions are mvt's defaults without thinning: the places of a tile
// are already few, by their min zoom.
func tileOptions() mvt.Options {
	o := mvt.DefaultOptions()
	o.ClusterCell = 0
	return o
}

// Tile encodes tile z/x/y (WebMercatorQuad, y from the north) of the
// built-in basemap, of the geometry of z's band, the shapes and places
// whose min zoom z reaches:
//
//   - land: polygons, no attributes (cut in pieces: draw no outline)
//   - coastline: lines, the land's outlines (from zoom 3)
//   - lakes: polygons; name
//   - rivers: lines; name, rank
//   - borders: lines, the countries' land boundaries; rank
//   - urban: polygons, the urban areas (from zoom 4; no attributes)
//   - divisions: lines, the first-order divisions' boundaries; rank
//   - countries: polygons of 1:110m; name, iso_a3, continent
//   - places: points; name, rank, population, capital
//   - regions: points, the first-order divisions' labels; name, rank
//
// Feature ids are positions from 1 (of a piece within its layer and band).
func Tile(z, x, y int) ([]byte, error) {
	d := Load()
	t, err := mvt.NewTile(z, x, y, tileOptions())
	if err != nil {
		return nil, err
	}
	b := t.Bounds()
	bd := band(z)
	for _, l := range []struct {
		name  string
		attrs []mapcommons.Attribute
	}{{LayerLand, nil}, {LayerCoastline, nil}, {LayerLakes, nameAttrs}, {LayerRivers, riverAttrs}, {LayerBorders, rankAttrs},
		{LayerUrban, nil}, {LayerDivisions, rankAttrs}} {
		tl, err := t.AddLayer(l.name, l.attrs, nil)
		if err != nil {
			return nil, err
		}
		for i, p := range d.tiles[l.name][bd] {
			if p.minZoom10 > 10*z || !overlaps(p.bounds, b) {
				continue
			}
			var vals []any
			switch l.name {
			case LayerLakes:
				vals = []any{p.name}
			case LayerRivers:
				vals = []any{p.name, int64(p.rank)}
			case LayerBorders, LayerDivisions:
				vals = []any{int64(p.rank)}
			}
			if err := tl.Add(uint64(i+1), p.geom, vals); err != nil {
				return nil, err
			}
		}
	}
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
		if p.MinZoom10 > 10*z || p.Lon < b.MinX || p.Lon > b.MaxX || p.Lat < b.MinY || p.Lat > b.MaxY {
			continue
		}
		pt = wkb.AppendPoint(pt[:0], p.Lon, p.Lat)
		if err := pl.Add(uint64(i+1), pt, []any{p.Name, int64(p.Rank), p.Population, p.Capital}); err != nil {
			return nil, err
		}
	}
	rl, err := t.AddLayer(LayerRegions, regionAttrs, nil)
	if err != nil {
		return nil, err
	}
	for i, p := range d.Regions {
		if p.MinZoom10 > 10*z || p.Lon < b.MinX || p.Lon > b.MaxX || p.Lat < b.MinY || p.Lat > b.MaxY {
			continue
		}
		pt = wkb.AppendPoint(pt[:0], p.Lon, p.Lat)
		if err := rl.Add(uint64(i+1), pt, []any{p.Name, int64(p.Rank)}); err != nil {
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
	SeaColour      = 0xa8cce0
	LandColour     = 0xf2efe6
	BorderColour   = 0x8c8c8c
	UrbanColour    = 0xe6dfcf
	DivisionColour = 0xa39e96
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

// ScanLand gives, for an image of zoom z drawn by a renderer, the land
// meeting q's box (all of it without one) as one feature: the pieces of
// the zoom's band (Tile's), as one WKB MultiPolygon, so that a renderer
// fills them in one pass and their shared edges leave no seam. It is
// drawn without an outline: ScanLines gives the coasts and the borders.
func ScanLand(z int) func(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	return scanFill(LayerLand, z)
}

// ScanUrban gives the urban areas as ScanLand gives the land (none
// before zoom 4, as in the tiles).
func ScanUrban(z int) func(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	return scanFill(LayerUrban, z)
}

// scanFill gives the polygon pieces of a layer, for zoom z, as one
// MultiPolygon.
func scanFill(layer string, z int) func(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	return func(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
		var parts [][]byte
		n := 0
		for i, p := range Load().tiles[layer][band(z)] {
			if i%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if p.minZoom10 > 10*z || (q.BBox != nil && !meets(q.BBox, p.bounds)) {
				continue
			}
			parts = append(parts, p.geom)
			n += len(p.geom)
		}
		if len(parts) == 0 {
			return nil
		}
		// A MultiPolygon: its header, then each part's Polygon as is.
		g := make([]byte, 0, 9+n)
		g = append(g, 1, byte(wkb.MultiPolygon), 0, 0, 0)
		g = binary.LittleEndian.AppendUint32(g, uint32(len(parts)))
		for _, p := range parts {
			g = append(g, p...)
		}
		return fn(&mapcommons.Feature{ID: 1, Geometry: g})
	}
}

// ScanLines gives, for an image of zoom z, the countries' land borders and
// (from the coastline's first zoom) the coasts meeting q's box, each
// piece a feature of no attributes, as Tile's.
func ScanLines(z int) func(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	layers := []string{LayerBorders}
	if z >= BandMinZoom[1] {
		layers = append(layers, LayerCoastline)
	}
	return scanLines(layers, z)
}

// ScanDivisions gives the first-order divisions' boundaries as ScanLines
// gives the borders (none before zoom 2, as in the tiles).
func ScanDivisions(z int) func(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	return scanLines([]string{LayerDivisions}, z)
}

// scanLines gives the line pieces of layers, for zoom z, one feature
// each.
func scanLines(layers []string, z int) func(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	return func(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
		var f mapcommons.Feature
		id := int64(0)
		for _, name := range layers {
			for _, p := range Load().tiles[name][band(z)] {
				id++
				if id%256 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				if p.minZoom10 > 10*z || (q.BBox != nil && !meets(q.BBox, p.bounds)) {
					continue
				}
				f = mapcommons.Feature{ID: id, Geometry: p.geom}
				if err := fn(&f); err != nil {
					return err
				}
			}
		}
		return nil
	}
}
