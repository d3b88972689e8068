// Command gen writes the built-in basemap's embedded file,
// naturalearth.bin.gz, from Natural Earth data: the countries of
// testdata/real (naturalearth_lowres, 1:110m, shapefile) and the 1:10m
// layers of a directory of GeoJSON files given on the command line
// (ne_10m_land, ne_10m_minor_islands, ne_10m_lakes,
// ne_10m_rivers_lake_centerlines, ne_10m_admin_0_boundary_lines_land,
// ne_10m_populated_places_simple, ne_10m_admin_1_label_points, and of
// 1:50m ne_50m_urban_areas and ne_50m_admin_1_states_provinces_lines;
// where they come from is in package basemap's doc). It simplifies each layer for each zoom band
// (Douglas–Peucker) and keeps in each band the shapes shown there. Run by
// go generate in package basemap:
//
//	NATURALEARTH10M=/path/to/geojson go generate ./basemap
//	go run ./gen -out naturalearth.bin.gz ../testdata/real /path/to/geojson
package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"

	"mapcommons"
	"mapcommons/basemap"
	"mapcommons/format/shapefile"
	"mapcommons/format/wkb"
)

// The simplification of each band, in degrees (Douglas–Peucker), and the
// smallest box side, in degrees, of a ring kept: 10 km and 50 km for zooms
// 0–2 (a pixel of zoom 2 is 40 km), 1 km and 5 km for zooms 3–4, the
// 1:10m geometry unsimplified from zoom 5.
var (
	tolerance = [basemap.Bands]float64{0.1, 0.01, 0}
	minSide   = [basemap.Bands]float64{0.5, 0.05, 0}
	bandMax   = [basemap.Bands]int{basemap.BandMinZoom[1] - 1, basemap.BandMinZoom[2] - 1, 99}
)

func main() {
	out := flag.String("out", "naturalearth.bin.gz", "the file to write")
	flag.Parse()
	if flag.NArg() != 2 || flag.Arg(1) == "" {
		log.Fatal("usage: gen -out FILE COUNTRIESDIR GEOJSONDIR (testdata/real, and the directory of the Natural Earth 1:10m GeoJSON files)")
	}
	dir, ne10 := flag.Arg(0), flag.Arg(1)
	d := &basemap.Data{}
	err := readShapefile(filepath.Join(dir, "naturalearth_lowres"), func(attrs []mapcommons.Attribute, f *mapcommons.Feature) error {
		g, err := wkb.Decode(f.Geometry)
		if err != nil {
			return err
		}
		c := basemap.Country{Name: str(attrs, f, "name"), ISO: str(attrs, f, "iso_a3"), Continent: str(attrs, f, "continent")}
		switch g.Type {
		case wkb.Polygon:
			c.Polygons = [][][]float64{rounded(g.Rings)}
		case wkb.MultiPolygon:
			for _, p := range g.Parts {
				// A sliver of North Korea's, 1 m wide, has but three
				// points left once rounded.
				if r := rounded(p.Rings); len(r) > 0 && len(r[0]) >= 8 {
					c.Polygons = append(c.Polygons, r)
				}
			}
		default:
			return fmt.Errorf("%s: a %s, not a polygon", c.Name, wkb.TypeName(g.Type))
		}
		d.Countries = append(d.Countries, c)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	read := func(name string) []feature {
		fs, err := readGeoJSON(filepath.Join(ne10, name+".json"))
		if err != nil {
			log.Fatal(err)
		}
		return fs
	}
	// Each layer's min zoom is Natural Earth's (meant for labels) a zoom
	// or two sooner: the basemap draws shapes and dots, not names.
	coast := coastIndex{}
	for _, f := range read("ne_10m_land") {
		addPolygons(&d.Land, f, min(max(0, f.num("min_zoom")-1), 5), 0)
		coast.addPolygons(f)
	}
	for _, f := range read("ne_10m_minor_islands") {
		addPolygons(&d.Land, f, 5, 2)
		coast.addPolygons(f)
	}
	for _, f := range read("ne_10m_lakes") {
		addPolygons(&d.Lakes, f, max(0, f.num("min_zoom")-1), 0)
	}
	for _, f := range read("ne_10m_rivers_lake_centerlines") {
		if f.str("featurecla") == "Lake Centerline" {
			continue // under its lake
		}
		addLines(&d.Rivers, f, max(0, f.num("min_zoom")-1), true)
	}
	for _, f := range read("ne_10m_admin_0_boundary_lines_land") {
		addLines(&d.Borders, f, max(0, f.num("min_zoom")-1), false)
	}
	for _, f := range read("ne_10m_populated_places_simple") {
		var c [][]float64
		if err := json.Unmarshal(f.Geometry.Coordinates, &c); err != nil || f.Geometry.Type != "Point" {
			var pt []float64
			if err := json.Unmarshal(f.Geometry.Coordinates, &pt); err != nil || len(pt) < 2 {
				log.Fatalf("a place that is not a point: %s", f.str("name"))
			}
			c = [][]float64{pt}
		}
		d.Places = append(d.Places, basemap.Place{Name: f.str("name"), Lon: round(c[0][0]), Lat: round(c[0][1]),
			MinZoom10: tenths(max(0, f.num("min_zoom")-2)), Rank: int(f.num("scalerank")),
			Population: int64(max(0, f.num("pop_max"))), Capital: f.num("adm0cap") == 1})
	}
	for _, f := range read("ne_50m_urban_areas") {
		// Natural Earth's min zoom (3.6 to 6) a zoom sooner, from zoom 4:
		// a town's patch is a pixel or two before.
		addPolygons(&d.Urban, f, max(4, f.num("min_zoom")-1), 1)
	}
	for _, f := range read("ne_50m_admin_1_states_provinces_lines") {
		addLines(&d.Divisions, f, max(2, f.num("min_zoom")), false)
	}
	d.Regions = regions(read("ne_10m_admin_1_label_points"), coast)
	// The places in their order of importance: by min zoom, then the most
	// populous first.
	slices.SortStableFunc(d.Places, func(a, b basemap.Place) int {
		return cmp.Or(cmp.Compare(a.MinZoom10, b.MinZoom10), cmp.Compare(b.Population, a.Population), cmp.Compare(a.Name, b.Name))
	})
	w, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := basemap.Encode(w, d); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	for _, l := range []struct {
		name string
		l    *basemap.Layer
	}{{"land", &d.Land}, {"lakes", &d.Lakes}, {"rivers", &d.Rivers}, {"borders", &d.Borders}, {"urban", &d.Urban},
		{"divisions", &d.Divisions}} {
		for b, shapes := range l.l {
			n := 0
			for _, s := range shapes {
				for _, r := range s.Rings {
					n += len(r) / 2
				}
			}
			log.Printf("%s: band %d: %d shapes, %d points", l.name, b, len(shapes), n)
		}
	}
	log.Printf("%d places, %d regions", len(d.Places), len(d.Regions))
}

// regions are the labels of the first-order divisions: one point for
// each division of ne_10m_admin_1_label_points, which has a point in each
// part of a division (each island of Hawaii's, each of Nunavut's 288,
// Texas's barrier islands), that of its points farthest from the coast
// (the mainland's, the Big Island's: the label of the largest part),
// shown from a zoom of its datarank (1, the states of the largest
// countries, from zoom 3; 11, the smallest, from 8); the aggregations of
// small islands and the minor islands have no label. In their order of
// importance: by min zoom, then by name.
func regions(fs []feature, coast coastIndex) []basemap.Place {
	parts := map[string][][2]float64{}
	first := map[string]feature{}
	var codes []string
	for _, f := range fs {
		if f.str("featurecla") != "Admin-1 scale rank" || f.str("name") == "" {
			continue
		}
		var pt []float64
		if err := json.Unmarshal(f.Geometry.Coordinates, &pt); err != nil || f.Geometry.Type != "Point" || len(pt) < 2 {
			log.Fatalf("a label point that is not a point: %s", f.str("name"))
		}
		code := f.str("adm1_code")
		if _, ok := first[code]; !ok {
			first[code] = f
			codes = append(codes, code)
		}
		parts[code] = append(parts[code], [2]float64{pt[0], pt[1]})
	}
	var out []basemap.Place
	for _, code := range codes {
		pts := parts[code]
		best, far := pts[0], -1.0
		for _, p := range pts {
			if len(pts) == 1 {
				break
			}
			if dd := coast.distance(p); dd > far {
				best, far = p, dd
			}
		}
		f := first[code]
		rank := int(f.num("datarank"))
		out = append(out, basemap.Place{Name: f.str("name"), Lon: round(best[0]), Lat: round(best[1]),
			MinZoom10: tenths(min(8, max(3, 2.5+float64(rank)/2))), Rank: rank})
	}
	slices.SortStableFunc(out, func(a, b basemap.Place) int {
		return cmp.Or(cmp.Compare(a.MinZoom10, b.MinZoom10), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// feature is a GeoJSON feature.
type feature struct {
	Properties map[string]any `json:"properties"`
	Geometry   struct {
		Type        string          `json:"type"`
		Coordinates json.RawMessage `json:"coordinates"`
	} `json:"geometry"`
}

func (f *feature) num(name string) float64 {
	v, _ := f.Properties[name].(float64)
	return v
}

func (f *feature) str(name string) string {
	v, _ := f.Properties[name].(string)
	return v
}

// readGeoJSON reads the features of a GeoJSON FeatureCollection.
func readGeoJSON(path string) ([]feature, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var fc struct {
		Features []feature `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// A few features have no geometry (a river of ne_10m_rivers_lake_centerlines).
	return slices.DeleteFunc(fc.Features, func(f feature) bool { return f.Geometry.Type == "" }), nil
}

// tenths is a zoom in tenths.
func tenths(z float64) int { return int(math.Round(z * 10)) }

// polygons are the polygons of a Polygon or MultiPolygon feature.
func (f *feature) polygons() [][][][2]float64 {
	var ps [][][][2]float64
	var err error
	switch f.Geometry.Type {
	case "Polygon":
		var p [][][2]float64
		err = json.Unmarshal(f.Geometry.Coordinates, &p)
		ps = [][][][2]float64{p}
	case "MultiPolygon":
		err = json.Unmarshal(f.Geometry.Coordinates, &ps)
	default:
		err = errors.New("a " + f.Geometry.Type)
	}
	if err != nil {
		log.Fatalf("a polygon feature: %v", err)
	}
	return ps
}

// lines are the lines of a LineString or MultiLineString feature.
func (f *feature) lines() [][][2]float64 {
	var ls [][][2]float64
	var err error
	switch f.Geometry.Type {
	case "LineString":
		var l [][2]float64
		err = json.Unmarshal(f.Geometry.Coordinates, &l)
		ls = [][][2]float64{l}
	case "MultiLineString":
		err = json.Unmarshal(f.Geometry.Coordinates, &ls)
	default:
		err = errors.New("a " + f.Geometry.Type)
	}
	if err != nil {
		log.Fatalf("a line feature: %v", err)
	}
	return ls
}

// addPolygons adds f's polygons to l, simplified for each band from
// firstBand on that shows them (from minZoom).
func addPolygons(l *basemap.Layer, f feature, minZoom float64, firstBand int) {
	for _, p := range f.polygons() {
		for b := firstBand; b < basemap.Bands; b++ {
			if tenths(minZoom) > 10*bandMax[b] {
				continue
			}
			var rings [][]float64
			for i, r := range p {
				q := simplified(flat(r), tolerance[b], true)
				if len(q) < 8 || side(q) < minSide[b] {
					if i == 0 {
						break
					}
					continue
				}
				rings = append(rings, q)
			}
			if len(rings) > 0 {
				l[b] = append(l[b], basemap.Shape{MinZoom10: tenths(minZoom), Rank: int(f.num("scalerank")), Name: f.str("name"), Rings: rings})
			}
		}
	}
}

// addLines adds f's lines to l, simplified for each band that shows them;
// dropShort drops from the simplified bands the lines shorter than half
// their minSide (a brook: not a border, whose lines are cut short where
// they meet, and would leave gaps).
func addLines(l *basemap.Layer, f feature, minZoom float64, dropShort bool) {
	for _, line := range joined(f.lines()) {
		for b := range basemap.Bands {
			if tenths(minZoom) > 10*bandMax[b] {
				continue
			}
			q := simplified(flat(line), tolerance[b], false)
			if len(q) < 4 || (dropShort && side(q) < minSide[b]/2) {
				continue
			}
			l[b] = append(l[b], basemap.Shape{MinZoom10: tenths(minZoom), Rank: int(f.num("scalerank")), Name: f.str("name"), Rings: [][]float64{q}})
		}
	}
}

// joined are lines with each line that starts where another ends joined
// to it: the borders of Natural Earth come in thousands of short parts,
// which simplified one by one would keep every end and leave gaps.
func joined(lines [][][2]float64) [][][2]float64 {
	byStart := map[[2]float64]int{}
	for i, l := range lines {
		if len(l) > 0 {
			byStart[l[0]] = i
		}
	}
	used := make([]bool, len(lines))
	// A line is a start when no other line ends where it starts.
	ends := map[[2]float64]bool{}
	for _, l := range lines {
		if len(l) > 0 {
			ends[l[len(l)-1]] = true
		}
	}
	var out [][][2]float64
	chain := func(i int) {
		cur := append([][2]float64(nil), lines[i]...)
		used[i] = true
		for {
			j, ok := byStart[cur[len(cur)-1]]
			if !ok || used[j] {
				break
			}
			used[j] = true
			cur = append(cur, lines[j][1:]...)
		}
		out = append(out, cur)
	}
	for i, l := range lines {
		if !used[i] && len(l) > 0 && !ends[l[0]] {
			chain(i)
		}
	}
	for i, l := range lines {
		if !used[i] && len(l) > 0 {
			chain(i) // the rest: loops
		}
	}
	return out
}

// flat is the points as flat x,y pairs.
func flat(pts [][2]float64) []float64 {
	out := make([]float64, 0, 2*len(pts))
	for _, p := range pts {
		out = append(out, p[0], p[1])
	}
	return out
}

// side is the longer side of the box of xy.
func side(xy []float64) float64 {
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for i := 0; i+1 < len(xy); i += 2 {
		x0, x1 = math.Min(x0, xy[i]), math.Max(x1, xy[i])
		y0, y1 = math.Min(y0, xy[i+1]), math.Max(y1, xy[i+1])
	}
	return math.Max(x1-x0, y1-y0)
}

// simplified is xy rounded to the file's 1e-5 degree, without repeated
// points, simplified by Douglas–Peucker within tol degrees (none for 0).
// A ring keeps its closing point.
func simplified(xy []float64, tol float64, ring bool) []float64 {
	var q []float64
	for i := 0; i+1 < len(xy); i += 2 {
		x, y := round(xy[i]), round(xy[i+1])
		if n := len(q); n >= 2 && q[n-2] == x && q[n-1] == y {
			continue
		}
		q = append(q, x, y)
	}
	if ring && len(q) >= 2 && (q[0] != q[len(q)-2] || q[1] != q[len(q)-1]) {
		q = append(q, q[0], q[1])
	}
	if tol == 0 || len(q) <= 4 {
		return q
	}
	n := len(q) / 2
	keep := make([]bool, n)
	keep[0], keep[n-1] = true, true
	if ring {
		// A closed ring: split at its farthest point from the first, so
		// that neither half is degenerate.
		far, fd := 0, -1.0
		for i := 1; i < n-1; i++ {
			if dd := math.Hypot(q[2*i]-q[0], q[2*i+1]-q[1]); dd > fd {
				far, fd = i, dd
			}
		}
		keep[far] = true
		dp(q, 0, far, tol, keep)
		dp(q, far, n-1, tol, keep)
	} else {
		dp(q, 0, n-1, tol, keep)
	}
	out := make([]float64, 0, len(q))
	for i := range n {
		if keep[i] {
			out = append(out, q[2*i], q[2*i+1])
		}
	}
	return out
}

// dp marks the points of q between a and b that Douglas–Peucker keeps.
func dp(q []float64, a, b int, tol float64, keep []bool) {
	for b > a+1 {
		far, fd := -1, tol
		for i := a + 1; i < b; i++ {
			if dd := segDist(q[2*i], q[2*i+1], q[2*a], q[2*a+1], q[2*b], q[2*b+1]); dd > fd {
				far, fd = i, dd
			}
		}
		if far < 0 {
			return
		}
		keep[far] = true
		dp(q, a, far, tol, keep)
		a = far
	}
}

// round is v rounded to the file's 1e-5 degree.
func round(v float64) float64 { return math.Round(v*1e5) / 1e5 }

// readShapefile calls fn with each feature of the shapefile base (.shp,
// .dbf, .shx, .cpg and .prj beside it).
func readShapefile(base string, fn func([]mapcommons.Attribute, *mapcommons.Feature) error) error {
	var files []*os.File
	for _, ext := range []string{".shp", ".dbf", ".shx"} {
		f, err := os.Open(base + ext)
		if err != nil {
			return err
		}
		defer f.Close()
		files = append(files, f)
	}
	cpg, _ := os.ReadFile(base + ".cpg")
	prj, _ := os.ReadFile(base + ".prj")
	r, err := shapefile.Open(files[0], files[1], files[2], shapefile.Options{CPG: string(cpg), PRJ: string(prj)})
	if err != nil {
		return err
	}
	for {
		f, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := fn(r.Attributes(), f); err != nil {
			return fmt.Errorf("%s: %w", base, err)
		}
	}
}

// str is the string value of the attribute name ("" when absent).
func str(attrs []mapcommons.Attribute, f *mapcommons.Feature, name string) string {
	if i := mapcommons.AttrIndex(attrs, name); i >= 0 {
		if s, ok := f.Values[i].(string); ok {
			return s
		}
	}
	return ""
}

// rounded copies rings rounded to the file's 1e-5 degree, without the
// points that rounding makes repeat the one before.
func rounded(rings [][]float64) [][]float64 {
	out := make([][]float64, 0, len(rings))
	for _, r := range rings {
		var q []float64
		for i := 0; i+1 < len(r); i += 2 {
			x, y := round(r[i]), round(r[i+1])
			if n := len(q); n >= 2 && q[n-2] == x && q[n-1] == y {
				continue
			}
			q = append(q, x, y)
		}
		out = append(out, q)
	}
	return out
}

// segDist is the distance from x,y to the segment ax,ay–bx,by.
func segDist(x, y, ax, ay, bx, by float64) float64 {
	dx, dy := bx-ax, by-ay
	t := 0.0
	if l := dx*dx + dy*dy; l > 0 {
		t = math.Max(0, math.Min(1, ((x-ax)*dx+(y-ay)*dy)/l))
	}
	return math.Hypot(x-ax-t*dx, y-ay-t*dy)
}

// coastIndex holds the vertices of the land's rings in cells of a degree,
// to find how far a point is from the coast.
type coastIndex map[[2]int][][2]float64

func cellOf(p [2]float64) [2]int { return [2]int{int(math.Floor(p[0])), int(math.Floor(p[1]))} }

// addPolygons adds the vertices of the rings of a polygon feature.
func (c coastIndex) addPolygons(f feature) {
	for _, poly := range f.polygons() {
		for _, r := range poly {
			for _, p := range r {
				k := cellOf(p)
				c[k] = append(c[k], p)
			}
		}
	}
}

// distance is about how far p is from the nearest vertex, in degrees of
// latitude (a degree of longitude counted as its cosine): the cells
// around p's, ring by ring, until a ring can hold nothing nearer than
// what was found (or 20 degrees out: the middle of a continent).
func (c coastIndex) distance(p [2]float64) float64 {
	k := cellOf(p)
	kx := math.Cos(p[1] * math.Pi / 180)
	best := math.Inf(1)
	for r := 0; r <= 20; r++ {
		if float64(r-1)*kx > best {
			break
		}
		for x := k[0] - r; x <= k[0]+r; x++ {
			for y := k[1] - r; y <= k[1]+r; y++ {
				if max(abs(x-k[0]), abs(y-k[1])) != r {
					continue
				}
				for _, q := range c[[2]int{x, y}] {
					best = min(best, math.Hypot((q[0]-p[0])*kx, q[1]-p[1]))
				}
			}
		}
	}
	return best
}

func abs(v int) int { return max(v, -v) }
