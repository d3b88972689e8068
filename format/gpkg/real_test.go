package gpkg

import (
	"io"
	"math"
	"os"
	"testing"

	"mapcommons/format/shapefile"
	"mapcommons/format/wkb"
	"mapcommons/internal/gdaltest"
)

// realDir holds real shapefiles nobody on this project made (see
// shared/testdata/README.md); CI checks the repository out beside shared/.
const realDir = "../../../shared/testdata/real/"

// readReal reads a real shapefile into a dataset.
func readReal(t *testing.T, base string) dataset {
	t.Helper()
	open := func(ext string) *os.File {
		f, err := os.Open(realDir + base + ext)
		if err != nil {
			t.Skipf("real data: %v", err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	shp, dbf, shx := open(".shp"), open(".dbf"), open(".shx")
	cpg, _ := os.ReadFile(realDir + base + ".cpg")
	r, err := shapefile.Open(shp, dbf, shx, shapefile.Options{CPG: string(cpg)})
	if err != nil {
		t.Fatal(err)
	}
	d := newDataset(t, base, r.Attributes(), nil, nil)
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		c := *f
		c.Values = append([]any(nil), f.Values...)
		c.Geometry = append([]byte(nil), f.Geometry...)
		if len(f.Geometry) > 0 {
			d.meta.GeometryMask |= 1 << f.Geometry[1]
		}
		d.feats = append(d.feats, &c)
		d.wkt = append(d.wkt, "")
	}
	d.meta.Count = int64(len(d.feats))
	return d
}

// coordsNear reports whether two geometries have the same structure and
// coordinates within a relative 1e-13 (GDAL prints WKT with 15 digits).
func coordsNear(a, b wkb.Geom) bool {
	if a.Type != b.Type || len(a.Coords) != len(b.Coords) || len(a.Rings) != len(b.Rings) || len(a.Parts) != len(b.Parts) {
		return false
	}
	near := func(x, y []float64) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Abs(x[i]-y[i]) > 1e-13*math.Max(1, math.Abs(x[i])) {
				return false
			}
		}
		return true
	}
	if !near(a.Coords, b.Coords) {
		return false
	}
	for i := range a.Rings {
		if !near(a.Rings[i], b.Rings[i]) {
			return false
		}
	}
	for i := range a.Parts {
		if !coordsNear(a.Parts[i], b.Parts[i]) {
			return false
		}
	}
	return true
}

func TestReal(t *testing.T) {
	gdaltest.Need(t)
	for _, base := range []string{"nc", "naturalearth_lowres", "naturalearth_cities"} {
		t.Run(base, func(t *testing.T) {
			d := readReal(t, base)
			path := writeDataset(t, d)
			info := gdaltest.Ogrinfo(t, path)
			if info.Driver != "GPKG" || len(info.Layers) != 1 {
				t.Fatalf("%s", info.Output)
			}
			l := info.Layers[0]
			e, _ := d.extent()
			if l.Count != int64(len(d.feats)) || !gdaltest.Near(l.Extent, [4]float64{e.MinX, e.MinY, e.MaxX, e.MaxY}, 1e-6) {
				t.Errorf("%d features, extent %v; want %d, %v", l.Count, l.Extent, len(d.feats), e)
			}
			if want := gdalTypes[GeometryTypeName(d.meta.GeometryMask)]; l.Geometry != want {
				t.Errorf("geometry %q, want %q", l.Geometry, want)
			}
			if n, _ := ogrCount(t, path, base, "-spat", ftoa(e.MinX), ftoa(e.MinY), ftoa(e.MaxX), ftoa(e.MaxY)); n != int64(len(d.feats)) {
				t.Errorf("spatial filter on the extent: %d features", n)
			}
			fs := ogrFeatures(t, path, "-sql", `SELECT fid, geom FROM `+quote(base)+` ORDER BY fid`)
			if len(fs) != len(d.feats) {
				t.Fatalf("%d features from GDAL", len(fs))
			}
			for i, f := range fs {
				b, err := wkb.ParseWKT(f.wkt)
				if err != nil {
					t.Fatalf("row %d: %v", i, err)
				}
				got, _ := wkb.Decode(b)
				want, _ := wkb.Decode(d.feats[i].Geometry)
				if !coordsNear(got, want) {
					t.Errorf("row %d: GDAL reads %.200s", i, f.wkt)
				}
			}
		})
	}
}

func ftoa(v float64) string { return string(wkb.AppendFloat(nil, v)) }
