// Command gen writes the built-in basemap's embedded file from the Natural
// Earth shapefiles of testdata/real (naturalearth_lowres, the countries;
// naturalearth_cities, the places). It is run by go generate in package
// basemap:
//
//	go run ./gen -out naturalearth.bin.gz ../testdata/real
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"

	"mapcommons"
	"mapcommons/basemap"
	"mapcommons/format/shapefile"
	"mapcommons/format/wkb"
)

func main() {
	out := flag.String("out", "naturalearth.bin.gz", "the file to write")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: gen -out FILE DIR (the directory of the Natural Earth shapefiles)")
	}
	dir := flag.Arg(0)
	d := &basemap.Data{}
	err := readShapefile(filepath.Join(dir, "naturalearth_lowres"), func(attrs []mapcommons.Attribute, f *mapcommons.Feature) error {
		g, err := wkb.Decode(f.Geometry)
		if err != nil {
			return err
		}
		c := basemap.Country{Name: str(attrs, f, "name"), ISO: str(attrs, f, "iso_a3"), Continent: str(attrs, f, "continent")}
		switch g.Type {
		case wkb.Polygon:
			c.Polygons = [][][]float64{unpinched(rounded(g.Rings), c.Name)}
		case wkb.MultiPolygon:
			for _, p := range g.Parts {
				c.Polygons = append(c.Polygons, unpinched(rounded(p.Rings), c.Name))
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
	err = readShapefile(filepath.Join(dir, "naturalearth_cities"), func(attrs []mapcommons.Attribute, f *mapcommons.Feature) error {
		x, y, ok := wkb.PointXY(f.Geometry)
		if !ok {
			return fmt.Errorf("a place that is not a point")
		}
		d.Places = append(d.Places, basemap.Place{Name: str(attrs, f, "name"), Lon: x, Lat: y})
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
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
}

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

// rounded copies rings rounded to the file's 1e-6 degree, without the
// points that rounding makes repeat the one before.
func rounded(rings [][]float64) [][]float64 {
	out := make([][]float64, 0, len(rings))
	for _, r := range rings {
		var q []float64
		for i := 0; i+1 < len(r); i += 2 {
			x, y := math.Round(r[i]*1e6)/1e6, math.Round(r[i+1]*1e6)/1e6
			if n := len(q); n >= 2 && q[n-2] == x && q[n-1] == y {
				continue
			}
			q = append(q, x, y)
		}
		out = append(out, q)
	}
	return out
}

// pinch is the least distance, in degrees (about 1 km), a vertex of the
// embedded rings keeps from the edges of its ring it does not end. The
// data is valid, but a vertex nearer an edge than the cell of a tile's
// grid crosses it once snapped to the grid: Sudan's outline comes within
// 14 m of itself near 23.89°E 8.62°N, and its tiles of zooms 0 to 4 were
// invalid polygons (self-intersections) before the vertex was dropped.
const pinch = 0.01

// unpinched drops from each ring, one at a time, the vertices nearer than
// pinch to an edge of the ring they do not end (logged: the generator
// says what it changed).
func unpinched(rings [][]float64, name string) [][]float64 {
	for k, r := range rings {
	again:
		n := len(r)/2 - 1 // vertices; the last repeats the first
		for i := 0; i < n && n > 4; i++ {
			x, y := r[2*i], r[2*i+1]
			for j := 0; j < n; j++ {
				if j == i || (j+1)%n == i {
					continue // an edge that ends at i
				}
				if segDist(x, y, r[2*j], r[2*j+1], r[2*j+2], r[2*j+3]) < pinch {
					log.Printf("%s: ring %d: vertex %.6f %.6f is %.0f m from an edge: dropped", name, k, x, y, segDist(x, y, r[2*j], r[2*j+1], r[2*j+2], r[2*j+3])*111e3)
					r = append(r[:2*i:2*i], r[2*i+2:]...)
					if i == 0 {
						r[len(r)-2], r[len(r)-1] = r[0], r[1]
					}
					goto again
				}
			}
		}
		rings[k] = r
	}
	return rings
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
